/* internal.h -- declarations shared by the library's source files
 *
 * Everything here is tw__-prefixed and hidden (-fvisibility=hidden): only
 * the tw_* names of tracewriter.h are exported.
 */
#ifndef TW_INTERNAL_H
#define TW_INTERNAL_H

/* config.h defines _GNU_SOURCE (AC_USE_SYSTEM_EXTENSIONS): it must come
 * before any system header, so every source file includes this one first. */
#ifdef HAVE_CONFIG_H
# include <config.h>
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "tracewriter.h"
#include "json.h"        /* the JSON grammar, the UTF-8 rule */

#define TW__LIKELY(x) __builtin_expect(!!(x), 1)
#define TW__UNLIKELY(x) __builtin_expect(!!(x), 0)

/* TW__ASSERT(c): with TW_DEBUG (configure --enable-debug or
 * --enable-sanitizers), c is checked and, false, tw__assert_fail says
 * where on stderr and aborts; otherwise c is not evaluated.  For the
 * concurrency contract (writer.h): what a function needs held. */
#ifdef TW_DEBUG
# define TW__ASSERT(c) \
    (TW__LIKELY(c) ? (void)0 : tw__assert_fail(#c, __FILE__, __LINE__))
void tw__assert_fail(const char *what, const char *file, int line)
  __attribute__((noreturn));
#else
# define TW__ASSERT(c) ((void)0)
#endif

/* Thread-local variables of the hot path: the initial-exec model makes
 * each access one load instead of a call to __tls_get_addr.  The library
 * keeps about a hundred bytes of them, well within the static TLS that
 * glibc reserves for libraries loaded with dlopen. */
#define TW__THREAD __thread __attribute__((tls_model("initial-exec")))

/* clock.c ---------------------------------------------------------------- */

/* The caches behind tw__pid and tw__tid (0: not yet known), and what
 * fills them.  Only clock.c writes them. */
extern int64_t tw__cached_pid;
extern TW__THREAD int64_t tw__cached_tid;
int64_t tw__pid_slow(void);
int64_t tw__tid_slow(void);

/* The process id, cached (refreshed in a child after fork).  Inline: the
 * hot path asks for it with every event. */
static inline int64_t tw__pid(void)
{
  int64_t pid = __atomic_load_n(&tw__cached_pid, __ATOMIC_RELAXED);
  return TW__LIKELY(pid != 0) ? pid : tw__pid_slow();
}

/* The calling thread's kernel thread id, cached per thread. */
static inline int64_t tw__tid(void)
{
  int64_t tid = tw__cached_tid;
  return TW__LIKELY(tid != 0) ? tid : tw__tid_slow();
}

/* Incremented in every child after fork: a writer opened under another
 * generation belongs to an ancestor process. */
unsigned tw__fork_generation(void);
/* Install the fork handler that bumps the generation (once; writers call
 * it at open, before reading their generation). */
void tw__install_fork_handler(void);
/* The program's short name, for the first record. */
const char *tw__program_name(void);

/* A decimal number 0..TW_RANK_AUTO - 1 from the environment variable
 * name (RANK, WORLD_SIZE), or -1: unset, empty or not such a number. */
long tw__env_number(const char *name);

/* stage.c ---------------------------------------------------------------- */

/* An event of phase ph at now on the calling thread (the helpers').
 * The first 16 bytes (the padding in them too) in one store, the rest
 * field by field, not one memset of the whole event: the compiler then
 * writes the zeros with a few 16-byte stores instead of a string
 * instruction of 18 steps (about 20 instructions less per event). */
static inline __attribute__((always_inline)) tw_event
tw__event(char ph, const char *cat, const char *name, const tw_arg *args,
          size_t nargs)
{
  tw_event ev;

  memset(&ev, 0, offsetof(tw_event, name));
  ev.ph = ph;
  ev.name = name;
  ev.cat = cat;
  ev.ts = 0;
  ev.dur = 0;
  ev.tts = 0;
  ev.tdur = 0;
  ev.pid = 0;
  ev.tid = 0;
  ev.id = 0;
  ev.bind_id = 0;
  ev.id_scope = NULL;
  ev.cname = NULL;
  ev.args = args;
  ev.nargs = nargs;
  ev.reserved[0] = NULL;
  ev.reserved[1] = NULL;
  return ev;
}

/* The shape of a helper's event (tw_complete, tw_begin, tw_end,
 * tw_instant, the spans), in one word: its phase (X, B, E, i or I), its
 * instant scope, and TW__SHAPE_TS if the caller gave the ts. */
#define TW__SHAPE_TS 0x10000u
#define TW__SHAPE(ph, scope) ((unsigned)(unsigned char)(ph) | \
                              (unsigned)(unsigned char)(scope) << 8)

/* At *ev, the fields of a helper's event of shape at ts that the fast
 * path's checks, formatter and encoder read (ph, instant_scope, has,
 * name, cat, ts, dur, args, nargs); no other field is written. */
static inline __attribute__((always_inline)) void
tw__event_fast_fields(tw_event *ev, unsigned shape, const char *cat,
                      const char *name, uint64_t ts, uint64_t dur,
                      const tw_arg *args, size_t nargs)
{
  ev->ph = (char)(shape & 0xff);
  ev->instant_scope = (char)(shape >> 8 & 0xff);
  ev->has = TW_HAS_TS;
  ev->name = name;
  ev->cat = cat;
  ev->ts = ts;
  ev->dur = dur;
  ev->args = args;
  ev->nargs = nargs;
}

/* A helper's event (tw_complete, tw_begin, tw_end, tw_instant, the
 * spans), pid and tid the calling thread's: by the fast path, the one
 * way of most events, straight into the thread's active slot --
 * formatted, or encoded for the committer (record.h) -- when nothing
 * but that is to do; else built whole and given to the general path
 * (tw_emit).  Two entries to the one path, so that each helper reaches
 * it by a jump: tw__emit_complete, an 'X' event at ts for dur;
 * tw__emit_now, an event of shape (B, E, i or I, its scope; no
 * TW__SHAPE_TS) at the library's clock.  Return as tw_emit.  w is not
 * NULL. */
int tw__emit_complete(tw_writer *w, const char *cat, const char *name,
                      uint64_t ts, uint64_t dur, const tw_arg *args,
                      size_t nargs);
int tw__emit_now(tw_writer *w, unsigned shape, const char *cat,
                 const char *name, const tw_arg *args, size_t nargs);

/* format.c --------------------------------------------------------------- */

/* What the formatter needs from the writer's options. */
typedef struct tw__fmt_config {
  unsigned flags;          /* TW_OPT_* */
  size_t max_string;       /* longest string, in input bytes */
} tw__fmt_config;

/* What formatting one event replaced on the way, for the stats. */
typedef struct tw__fmt_notes {
  unsigned truncated;      /* strings cut to max_string */
  unsigned replaced;       /* strings whose invalid UTF-8 became U+FFFD */
} tw__fmt_notes;

/* The values of the fields an event leaves to the library. */
typedef struct tw__fmt_defaults {
  uint64_t ts;             /* without TW_HAS_TS */
  int64_t pid;             /* without TW_HAS_PID */
  int64_t tid;             /* without TW_HAS_TID */
} tw__fmt_defaults;

/* tw__utf8_sequence, the one UTF-8 rule (json.h, included above): the
 * formatter's, record.c's checks before formatting, the JSON checker's. */

/* The formatter's per-thread cache of ,"pid":P,"tid":T.  A signal
 * handler that formats (the crash hook) saves it first and puts it back
 * before it returns, so the code it interrupted finds it as it was. */
#define TW__PIDTID_MAX 64
typedef struct tw__fmt_thread_cache {
  int64_t pid, tid;
  unsigned char len;            /* 0: nothing cached */
  char text[TW__PIDTID_MAX];    /* at most 54 used, the rest zeros */
} tw__fmt_thread_cache;
void tw__format_cache_save(tw__fmt_thread_cache *saved);
/* In a child after fork (stage.c's handler): forget the calling
 * thread's own pid and tid text, which the fast path keeps. */
void tw__format_forked(void);
void tw__format_cache_restore(const tw__fmt_thread_cache *saved);

/* Format ev as one record ",\n{...}" into buf[0..cap).  Returns 0 and the
 * record's length in *len; TW__ENOROOM when cap was too small, with *len an
 * upper bound of the room needed; or a TW_E* code for bad input.  Any byte
 * of buf[0..cap) may be written (scratch past the record, a partial record
 * on failure): only buf[0..*len) after a 0 return is the record.  Pure: no
 * I/O, no locks, no allocation.
 *
 * The bound is the sum of what each field asked for, a number its widest
 * (at most TW__FMT_ASK_MAX bytes), a string or a head its exact length:
 * so TW__ENOROOM with cap >= n + TW__FMT_ASK_MAX proves the record longer
 * than n, and a cap of the bound always suffices. */
#define TW__ENOROOM (-1999)
#define TW__FMT_ASK_MAX 32
int tw__format_event(const tw_event *ev, const tw__fmt_defaults *def,
                     const tw__fmt_config *cfg, char *buf, size_t cap,
                     size_t *len, tw__fmt_notes *notes);

/* Where tw__format_common writes: buf[0..cap) given; len, and replaced
 * increased by the strings whose invalid UTF-8 became U+FFFD, returned. */
typedef struct tw__fmt_out {
  char *buf;
  size_t cap;
  size_t len;
  unsigned replaced;
} tw__fmt_out;

/* The inline-JSON entry of the fast path: a helper's event of shape
 * (TW__SHAPE; ph X, B, E, i or I) at ts, pid and tid the calling
 * thread's, into out->buf[0..out->cap).  Returns 0 with
 * out->len, out->replaced increased by the strings whose invalid UTF-8
 * became U+FFFD; or 1: the event needs tw__format_event (a check may
 * refuse it, a string may be cut, the room may be short), and nothing
 * was counted.  The bytes are tw__format_event's.  The emit fast path
 * (emit_fast in stage.c) has it inlined (format_helper_event,
 * format_record.h); this copy is for fast_aside and the tests. */
int tw__format_common(const tw__fmt_config *cfg, tw__fmt_out *out,
                      unsigned shape, const char *cat, const char *name,
                      uint64_t ts, uint64_t dur, const tw_arg *args,
                      size_t nargs);

/* The same as tw__format_event, by the general path only, none of the
 * fast paths: every field through the cursor, checking its room, the
 * head measured before it is written (format.c, head_measured).  For
 * the tests (test_format_fast): every fast path must write what this
 * writes, byte for byte, and return the same. */
int tw__format_event_reference(const tw_event *ev,
                               const tw__fmt_defaults *def,
                               const tw__fmt_config *cfg, char *buf,
                               size_t cap, size_t *len,
                               tw__fmt_notes *notes);

/* A finite double as the formatter writes it (the shortest of %.15g and
 * %.17g that reads back as v, in the C locale; %.16e where %.17g would
 * write more than 19 digits after the point), at buf, which has room for
 * TW__DOUBLE_MAX bytes, any of which may be written; returns the length
 * of the text, at most TW__DOUBLE_TEXT_MAX.  No printf, no locale, no
 * allocation: async-signal-safe. */
#define TW__DOUBLE_TEXT_MAX 24
#define TW__DOUBLE_MAX 40
size_t tw__format_double(double v, char *buf);

/* Check that json[0..len) is one strict RFC 8259 value at most
 * TW_MAX_JSON_DEPTH deep.  Returns 0 or TW_EJSON. */
int tw__json_validate(const char *json, size_t len);


/* options.c -------------------------------------------------------------- */

/* Copy the caller's options (of the caller's struct_size) over the
 * defaults into *out and check them.  Returns 0, TW_EVERSION or TW_EOPTION. */
int tw__options_import(tw_options *out, const tw_options *in);

/* Parse s[0..n), a decimal number of bytes with an optional unit in any
 * case -- k, kb, kib; m, mb, mib; g, gb, gib, all powers of 1024 -- into
 * *out.  No blanks, no sign.  Returns 0, or -1 (bad syntax or more than
 * UINT64_MAX bytes; *out untouched). */
int tw__parse_size(const char *s, size_t n, uint64_t *out);

/* Parse s[0..n), a decimal number and a unit in any case -- ns, us, ms,
 * s, m (minutes), h -- into nanoseconds in *out.  Returns 0 or -1. */
int tw__parse_duration(const char *s, size_t n, uint64_t *out);

/* The keys of the options string: one table drives the defaults of
 * tw_options_init, tw_options_parse, the range check of
 * tw__options_import, and (tests/test_options_docs checks it) the key
 * lists of tw_options_init(3), README.md and tracewriter.h. */
enum tw__key_kind {
  TW__KEY_SIZE,         /* bytes: tw__parse_size */
  TW__KEY_DURATION,     /* nanoseconds: tw__parse_duration */
  TW__KEY_NUMBER,       /* a plain decimal number */
  TW__KEY_WORD,         /* one of words only (an enum) */
  TW__KEY_FLAG,         /* words[0] clears flag in flags, words[1] sets it */
  TW__KEY_ALIAS         /* a bare word only, the same as the item bare */
};

/* How a key's field is stored in tw_options. */
enum tw__field_type { TW__FIELD_NONE, TW__FIELD_INT, TW__FIELD_UNSIGNED,
                      TW__FIELD_SIZE, TW__FIELD_U64 };

typedef struct tw__key_word {
  const char *word;       /* as written in the string (case-sensitive) */
  uint64_t value;         /* the field's value (FLAG: 0 clear, 1 set) */
} tw__key_word;

typedef struct tw__option_key {
  const char *name;       /* the key */
  int kind;               /* enum tw__key_kind */
  const char *arg;        /* numbers: the value's name in the docs
                             ("SIZE", "N"); NULL for words only */
  const char *field;      /* the tw_options field set; NULL for ALIAS */
  size_t offset;          /* of the field */
  int type;               /* enum tw__field_type of the field */
  unsigned flag;          /* FLAG: the TW_OPT_* bit of flags */
  const char *flag_name;  /* FLAG: "TW_OPT_..." */
  uint64_t min, max;      /* numbers: the range; words are outside it */
  uint64_t def;           /* the default, as stored (FLAG: 0 or 1) */
  const tw__key_word *words; /* words taken, ended by a NULL word */
  const char *bare;       /* the key alone is this item ("sink=mmap"), or
                             NULL: the key needs a value */
  const char *also;       /* an item applied first, or NULL ("sink=gzip"
                             for gzip=LEVEL) */
  const char *doc;        /* what it does, one plain line for the docs */
} tw__option_key;

extern const tw__option_key tw__option_keys[];
extern const size_t tw__option_nkeys;

/* The largest value k's field can hold: a max as large is no bound. */
uint64_t tw__option_field_max(const tw__option_key *k);

#endif /* TW_INTERNAL_H */
