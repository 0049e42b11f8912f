/* format.c -- one tw_event to the bytes of one JSON record
 *
 * The record: its head (ph, name, cat, times, pid, tid), its other
 * fields, its args, every check of an event, and the entry points (the
 * head's writer and the common shapes' core are in format_record.h,
 * inline, so that the emit fast path in stage.c has them without a
 * call).  The values in it are written by the numbers
 * (format_number.[ch]: integers, microseconds, doubles) and the strings
 * (format_string.[ch]: escaping, UTF-8), each file one job with its own
 * tests.
 *
 * Pure code: no I/O, no locks, no allocation, no stdio, no locale (doubles
 * are written by code of our own): async-signal-safe, so the crash hook
 * may format.  A record is formatted into a caller's buffer; when the
 * buffer is too small the formatter keeps counting so the caller learns
 * how much room to give it next time.  Everything is checked while
 * formatting, and nothing is written to the trace unless the whole record
 * formatted, so bad input never leaves half a record.
 *
 * Two paths, the same bytes.  The common shapes (X, B, E, i/I events with
 * a few plain args and nothing else: common_core) are written straight
 * into the buffer: once the lengths of name and cat are known, one check
 * of room covers the whole head, then one per arg; strings are copied 16
 * bytes at a time (SSE2; else 8) while they are plain ASCII and only a
 * byte that needs it takes the slow path; numbers are written two digits
 * at a time without counting their digits first, the fraction of a time
 * from a table; short decimals without the digit search; pid/tid come
 * from a per-thread cache.  Everything else, and every error, goes
 * through the cursor (format_general): the head by the same writer
 * (head_fast), measured first when the room may be short
 * (head_measured), then the other fields and the args one by one, each
 * checking its room.  tw__format_event_reference takes that path for
 * everything, every head measured (test_format_fast holds the fast paths
 * to it, byte for byte).
 */
#include "internal.h"
#include "format_number.h"
#include "format_string.h"
#include "format_record.h"

#include <math.h>
#include <string.h>

/* The output cursor.  Once something does not fit, nothing more is
 * written (end is pulled back to p, so every later room() fails on one
 * compare) but need keeps counting: it is then an upper bound of the room
 * the record needs. */
typedef struct cursor {
  char *p;                 /* next byte to write */
  char *end;               /* end of the buffer (p, once over) */
  char *start;             /* the buffer */
  size_t need;             /* once over: bytes needed in all */
  int over;                /* 1 once something did not fit */
} cursor;

/* Room for n bytes at o->p; returns where to write, or NULL (counted). */
static inline char *room(cursor *o, size_t n)
{
  if (TW__LIKELY((size_t)(o->end - o->p) >= n))
    return o->p;
  if (!o->over) {
    o->over = 1;
    o->need = (size_t)(o->p - o->start);
    o->end = o->p;
  }
  o->need += n;
  return NULL;
}

/* Take k bytes of the room just granted. */
static inline void advance(cursor *o, size_t k)
{
  o->p += k;
}

static inline void put(cursor *o, const char *s, size_t n)
{
  char *d = room(o, n);
  if (d) {
    memcpy(d, s, n);
    advance(o, n);
  }
}

#define PUTLIT(o, lit) put((o), (lit), sizeof(lit) - 1)

/* ---------------------------------------------------------------- numbers
 * (their text: format_number.h) */

static void put_u64(cursor *o, uint64_t v)
{
  char *d = room(o, 20);
  if (d)
    advance(o, u64_to_dec(v, d));
}

static void put_i64(cursor *o, int64_t v)
{
  char *d = room(o, 21);
  if (d)
    advance(o, i64_to_dec(v, d));
}

/* The per-thread caches of format_record.h. */
TW__THREAD tw__fmt_thread_cache tw__fmt_pid_tid;
TW__THREAD tw__fmt_thread_cache tw__fmt_own_pid_tid;

/* Emptied first and filled last: a signal handler that formats (the
 * crash hook) and lands inside a refresh finds no entry rather than a
 * half-written one.  The handler keeps what it found and puts it back
 * (tw__format_cache_save), so the refresh it interrupted, or a copy
 * out of the entry, goes on over the entry it began with. */
void tw__fmt_pid_tid_refresh(int64_t pid, int64_t tid)
{
  char *text = tw__fmt_pid_tid.text;
  cursor c = { text, text + PIDTID_MAX, text, 0, 0 };

  tw__fmt_pid_tid.len = 0;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  PUTLIT(&c, ",\"pid\":");
  put_i64(&c, pid);
  PUTLIT(&c, ",\"tid\":");
  put_i64(&c, tid);
  tw__fmt_pid_tid.pid = pid;
  tw__fmt_pid_tid.tid = tid;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  tw__fmt_pid_tid.len = (unsigned char)(c.p - c.start);
}

void tw__format_cache_save(tw__fmt_thread_cache *saved)
{
  memcpy(saved, &tw__fmt_pid_tid, sizeof *saved);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

void tw__format_cache_restore(const tw__fmt_thread_cache *saved)
{
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  memcpy(&tw__fmt_pid_tid, saved, sizeof *saved);
}

/* As tw__fmt_pid_tid_refresh, with the calling thread's own. */
__attribute__((noinline)) void tw__fmt_own_pid_tid_refresh(void)
{
  char *text = tw__fmt_own_pid_tid.text;
  cursor c = { text, text + PIDTID_MAX, text, 0, 0 };

  tw__fmt_own_pid_tid.len = 0;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  PUTLIT(&c, ",\"pid\":");
  put_i64(&c, tw__pid());
  PUTLIT(&c, ",\"tid\":");
  put_i64(&c, tw__tid());
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  tw__fmt_own_pid_tid.len = (unsigned char)(c.p - c.start);
}

void tw__format_forked(void)
{
  tw__fmt_own_pid_tid.len = 0;
}

/* An id as a quoted lowercase hex string: "0x1a". */
static void put_hex_id(cursor *o, uint64_t v)
{
  static const char hex[] = "0123456789abcdef";
  char tmp[16];
  char *d = room(o, 20);
  int n = 0;

  if (!d)
    return;
  do {
    tmp[n++] = hex[v & 15];
    v >>= 4;
  } while (v);
  d[0] = '"';
  d[1] = '0';
  d[2] = 'x';
  for (int i = 0; i < n; i++)
    d[3 + i] = tmp[n - 1 - i];
  d[3 + n] = '"';
  advance(o, (size_t)n + 4);
}

/* --------------------------------------------------------------- doubles */

/* A double; NaN and infinities become null or TW_ENONFINITE. */
static int put_double(cursor *o, double v, const tw__fmt_config *cfg)
{
  char *d;

  if (!isfinite(v)) {
    if (cfg->flags & TW_OPT_REJECT_NONFINITE)
      return TW_ENONFINITE;
    PUTLIT(o, "null");
    return 0;
  }
  if (WHOLE_DOUBLE(v)) {
    put_i64(o, (int64_t)v);
    return 0;
  }
  /* The widest a number asks for (the bound of ENOROOM). */
  d = room(o, TW__FMT_ASK_MAX);
  if (d) {
    char text[TW__DOUBLE_MAX];
    size_t n = tw__format_double(v, text);
    memcpy(d, text, n);
    advance(o, n);
  }
  return 0;
}

/* ---------------------------------------------------------------- strings
 * (their text: format_string.h) */

/* A string of *n bytes at s (or NULL, of 0) cut to max_string on a UTF-8
 * boundary, counted in notes->truncated; or TW_ETOOLONG under
 * TW_OPT_REJECT_LONG_STRINGS.  The one rule for every string of a record
 * (put_string, head_cut). */
static int cut_string(const char *s, size_t *n, const tw__fmt_config *cfg,
                      tw__fmt_notes *notes)
{
  if (*n > cfg->max_string) {
    if (cfg->flags & TW_OPT_REJECT_LONG_STRINGS)
      return TW_ETOOLONG;
    *n = tw__utf8_cut((const unsigned char *)s, cfg->max_string);
    notes->truncated++;
  }
  return 0;
}

/* A JSON string: quoted, escaped, UTF-8 checked, cut to max_string. */
static int put_string(cursor *o, const char *str, size_t n,
                      const tw__fmt_config *cfg, tw__fmt_notes *notes)
{
  const unsigned char *p = (const unsigned char *)str;
  char *d;
  int rc;

  if (n == TW_NUL_TERMINATED)
    n = strlen(str);
  if ((rc = cut_string(str, &n, cfg, notes)) != 0)
    return rc;
  /* Worst case: every byte becomes \u00XX.  When that much room is not
   * there, count exactly, so a long string that fits is not refused.
   * Without room the string is checked all the same: the first fault in
   * the record decides the return, whatever the room (tw_emit(3)), and a
   * producer's slot and the committer's buffer have different room. */
  if (o->over || (size_t)(o->end - o->p) < n * 6 + 2) {
    int invalid = 0;
    if (!room(o, tw__escaped_len(p, n, &invalid) + 2))
      return invalid && (cfg->flags & TW_OPT_REJECT_INVALID_UTF8) ? TW_EUTF8
                                                                  : 0;
  }
  d = o->p;
  *d++ = '"';
  if (!(d = escape(d, p, n, cfg->flags, &notes->replaced)))
    return TW_EUTF8;
  *d++ = '"';
  advance(o, (size_t)(d - o->p));
  return 0;
}

/* ------------------------------------------------------------- raw JSON */

/* The raw JSON grammar is the project's one (src/json.c):
 * tw__json_validate. */

/* Raw JSON, checked, with its whitespace newlines turned into spaces so the
 * record stays on one line (a valid document has no raw newline inside a
 * string, so every newline is whitespace). */
static int put_json(cursor *o, const char *json, size_t n)
{
  char *d;

  if (n == TW_NUL_TERMINATED)
    n = strlen(json);
  if (tw__json_validate(json, n))
    return TW_EJSON;
  d = room(o, n);
  if (!d)
    return 0;
  for (size_t i = 0; i < n; i++) {
    char c = json[i];
    d[i] = (c == '\n' || c == '\r') ? ' ' : c;
  }
  advance(o, n);
  return 0;
}

/* ----------------------------------------------------------------- events */

/* The bits tw_event.has and tw_event.flags may hold. */
#define KNOWN_HAS (TW_HAS_TS | TW_HAS_PID | TW_HAS_TID | TW_HAS_TTS | \
                   TW_HAS_TDUR | TW_HAS_ID | TW_HAS_BIND_ID)
#define KNOWN_FLAGS (TW_EV_ID2_LOCAL | TW_EV_ID2_GLOBAL | TW_EV_FLOW_IN | \
                     TW_EV_FLOW_OUT | TW_EV_BP_ENCLOSING)


static unsigned phase_rules(char ph)
{
  switch (ph) {
  case 'X': case 'B': case 'R': case 'M': case 'c':
    return KNOWN | NEED_NAME;
  case 'E':
    return KNOWN;
  case 'I': case 'i':
    return KNOWN | NEED_NAME | INSTANT;
  case 'C':
    return KNOWN | NEED_NAME | COUNTER;
  case 'b': case 'n': case 'e': case 's': case 't': case 'f':
  case 'N': case 'O': case 'D':
    return KNOWN | NEED_NAME | NEED_ID;
  default:
    return 0;
  }
}

static int put_arg(cursor *o, const tw_arg *a, const tw__fmt_config *cfg,
                   tw__fmt_notes *notes)
{
  switch (a->type) {
  case TW_ARG_INT:
    put_i64(o, a->v.i);
    return 0;
  case TW_ARG_UINT:
    /* Perfetto reads an integer of 2^63 or more as a negative number
     * (2^64 less): such a value is written as the nearest double, in
     * exponent form, which every viewer reads as positive.  Only a
     * string keeps all 64 bits. */
    if (a->v.u > (uint64_t)INT64_MAX)
      return put_double(o, (double)a->v.u, cfg);
    put_u64(o, a->v.u);
    return 0;
  case TW_ARG_DOUBLE:
    return put_double(o, a->v.d, cfg);
  case TW_ARG_BOOL:
    if (a->v.b)
      PUTLIT(o, "true");
    else
      PUTLIT(o, "false");
    return 0;
  case TW_ARG_NULL:
    PUTLIT(o, "null");
    return 0;
  case TW_ARG_STRING:
    if (!a->v.s) {
      PUTLIT(o, "null");
      return 0;
    }
    return put_string(o, a->v.s, a->len, cfg, notes);
  case TW_ARG_JSON:
    if (!a->v.s) {
      PUTLIT(o, "null");
      return 0;
    }
    return put_json(o, a->v.s, a->len);
  default:
    return TW_EEVENT;
  }
}

static int put_args(cursor *o, const tw_event *ev, unsigned rules,
                    const tw__fmt_config *cfg, tw__fmt_notes *notes)
{
  int rc;

  PUTLIT(o, ",\"args\":{");
  for (size_t i = 0; i < ev->nargs; i++) {
    const tw_arg *a = &ev->args[i];
    if (!a->name)
      return TW_EEVENT;
    if ((rules & COUNTER) && a->type != TW_ARG_INT &&
        a->type != TW_ARG_UINT && a->type != TW_ARG_DOUBLE)
      return TW_EEVENT;
    if (i)
      PUTLIT(o, ",");
    if ((rc = put_string(o, a->name, TW_NUL_TERMINATED, cfg, notes)) != 0)
      return rc;
    PUTLIT(o, ":");
    if ((rc = put_arg(o, a, cfg, notes)) != 0)
      return rc;
  }
  PUTLIT(o, "}");
  return 0;
}

/* Name and cat, of *nn and *cn bytes, cut as every string is
 * (cut_string), their faults in the order the record holds them: a name
 * refused for its UTF-8 before a cat refused for its length.  Returns 0
 * or the error. */
static int head_cut(const tw_event *ev, size_t *nn, size_t *cn,
                    const tw__fmt_config *cfg, tw__fmt_notes *notes)
{
  int rc, invalid = 0;

  if ((rc = cut_string(ev->name, nn, cfg, notes)) != 0)
    return rc;
  if ((rc = cut_string(ev->cat, cn, cfg, notes)) != 0 && ev->name &&
      (cfg->flags & TW_OPT_REJECT_INVALID_UTF8)) {
    tw__escaped_len((const unsigned char *)ev->name, *nn, &invalid);
    if (invalid)
      return TW_EUTF8;
  }
  return rc;
}

/* The head through o when its room may be short: its exact length first
 * (the strings measured, the numbers written aside), only counted when
 * it does not fit (put_string's rule: a long string that fits is not
 * refused, and one that does not is checked all the same), else written
 * by head_fast's parts.  Returns 0 or TW_EUTF8. */
static int head_measured(cursor *o, const tw_event *ev, unsigned rules,
                         const tw__fmt_defaults *def, unsigned flags,
                         size_t nn, size_t cn, tw__fmt_notes *notes)
{
  char numbers[HEAD_NUMBERS_MAX];
  int invalid = 0;
  size_t len = 11, k;
  char *d;

  if (ev->name)
    len += 10 + tw__escaped_len((const unsigned char *)ev->name, nn,
                                &invalid);
  if (ev->cat)
    len += 9 + tw__escaped_len((const unsigned char *)ev->cat, cn,
                               &invalid);
  if (invalid && (flags & TW_OPT_REJECT_INVALID_UTF8))
    return TW_EUTF8;
  k = (size_t)(head_numbers(numbers, ev, rules, def, 0) - numbers);
  /* (The 9 bytes head_names may write past a head without a name fall
   * within the numbers, at least ,"pid":0,"tid":0.) */
  if (!(d = room(o, len + k)))
    return 0;
  d = head_names(d, ev, rules, flags, nn, cn, notes);
  memcpy(d, numbers, k);
  advance(o, len + k);
  return 0;
}

/* A bit of tw__fmt_config.flags, beside the TW_OPT_* ones, that only
 * tw__format_event_reference sets: every head measured (head_measured),
 * so that its references hold head_fast in place to the measured way. */
#define REFERENCE_ONLY 0x80000000u

/* The head through o, of any event format_general takes.  Returns 0 or
 * the error of a string. */
static int head_general(cursor *o, const tw_event *ev, unsigned rules,
                        const tw__fmt_defaults *def,
                        const tw__fmt_config *cfg, tw__fmt_notes *notes)
{
  size_t nn = ev->name ? strlen(ev->name) : 0;
  size_t cn = ev->cat ? strlen(ev->cat) : 0;
  size_t left = (size_t)(o->end - o->p);
  int rc;

  if (TW__UNLIKELY((nn | cn) > cfg->max_string) &&
      (rc = head_cut(ev, &nn, &cn, cfg, notes)) != 0)
    return rc;
  if (TW__UNLIKELY((cfg->flags & REFERENCE_ONLY) || left < HEAD_MAX ||
                   (left - HEAD_MAX) / 6 < nn + cn))
    return head_measured(o, ev, rules, def, cfg->flags, nn, cn, notes);
  if (!(o->p = head_fast(o->p, ev, rules, def, cfg->flags, nn, cn, notes,
                         0)))
    return TW_EUTF8;
  return 0;
}

/* The fields after the head but the args, all rare: ids, scope, bp,
 * bind_id, flow_in/out, cname.  Returns 0 or the error of a string. */
#define TAIL_HAS (TW_HAS_ID | TW_HAS_BIND_ID)

static int put_tail(cursor *o, const tw_event *ev, const tw__fmt_config *cfg,
                    tw__fmt_notes *notes)
{
  unsigned has = ev->has, flags = ev->flags;
  int rc;

  if (has & TW_HAS_ID) {
    if (flags & TW_EV_ID2_LOCAL) {
      PUTLIT(o, ",\"id2\":{\"local\":");
      put_hex_id(o, ev->id);
      PUTLIT(o, "}");
    } else if (flags & TW_EV_ID2_GLOBAL) {
      PUTLIT(o, ",\"id2\":{\"global\":");
      put_hex_id(o, ev->id);
      PUTLIT(o, "}");
    } else {
      PUTLIT(o, ",\"id\":");
      put_hex_id(o, ev->id);
    }
  }
  if (ev->id_scope) {
    PUTLIT(o, ",\"scope\":");
    if ((rc = put_string(o, ev->id_scope, TW_NUL_TERMINATED, cfg, notes)) != 0)
      return rc;
  }
  if (flags & TW_EV_BP_ENCLOSING)
    PUTLIT(o, ",\"bp\":\"e\"");
  if (has & TW_HAS_BIND_ID) {
    PUTLIT(o, ",\"bind_id\":");
    put_hex_id(o, ev->bind_id);
  }
  if (flags & TW_EV_FLOW_IN)
    PUTLIT(o, ",\"flow_in\":true");
  if (flags & TW_EV_FLOW_OUT)
    PUTLIT(o, ",\"flow_out\":true");
  if (ev->cname) {
    PUTLIT(o, ",\"cname\":");
    if ((rc = put_string(o, ev->cname, TW_NUL_TERMINATED, cfg, notes)) != 0)
      return rc;
  }
  return 0;
}

/* 1 unless ev is a sort index metadata event whose numeric "sort_index"
 * lies outside int32_t (NaN and infinities go by the nonfinite rule). */
static int sort_index_fits(const tw_event *ev)
{
  if (!ev->name || (strcmp(ev->name, "process_sort_index") != 0 &&
                    strcmp(ev->name, "thread_sort_index") != 0))
    return 1;
  for (size_t i = 0; i < ev->nargs; i++) {
    const tw_arg *a = &ev->args[i];
    if (!a->name || strcmp(a->name, "sort_index") != 0)
      continue;
    if ((a->type == TW_ARG_INT &&
         (a->v.i < INT32_MIN || a->v.i > INT32_MAX)) ||
        (a->type == TW_ARG_UINT && a->v.u > INT32_MAX) ||
        (a->type == TW_ARG_DOUBLE && isfinite(a->v.d) &&
         (a->v.d < INT32_MIN || a->v.d > INT32_MAX)))
      return 0;
  }
  return 1;
}

/* The category of an async event ('b', 'n', 'e') given without one. */
#define TW__ASYNC_DEFAULT_CAT "default"

/* The color names chrome://tracing knows (Catapult's
 * base/color_scheme.html, reservedColorsByName, its spelling kept): it
 * fails the whole import on any other cname.  Perfetto and DevTools
 * ignore cname. */
static const char *const reserved_colors[] = {
  "thread_state_uninterruptible", "thread_state_iowait",
  "thread_state_running", "thread_state_runnable", "thread_state_sleeping",
  "thread_state_unknown", "background_memory_dump", "light_memory_dump",
  "detailed_memory_dump", "vsync_highlight_color", "generic_work", "good",
  "bad", "terrible", "black", "grey", "white", "yellow", "olive",
  "rail_response", "rail_animation", "rail_idle", "rail_load", "startup",
  "heap_dump_stack_frame", "heap_dump_object_type",
  "heap_dump_child_node_arrow", "cq_build_running", "cq_build_passed",
  "cq_build_failed", "cq_build_abandoned", "cq_build_attempt_runnig",
  "cq_build_attempt_passed", "cq_build_attempt_failed",
};

static int reserved_color(const char *name)
{
  for (size_t i = 0; i < sizeof reserved_colors / sizeof *reserved_colors;
       i++)
    if (strcmp(name, reserved_colors[i]) == 0)
      return 1;
  return 0;
}

/* 1 if ev has an argument named key. */
static int has_arg(const tw_event *ev, const char *key)
{
  for (size_t i = 0; i < ev->nargs; i++)
    if (ev->args[i].name && strcmp(ev->args[i].name, key) == 0)
      return 1;
  return 0;
}

/* Shapes that make chrome://tracing fail the whole import (Catapult's
 * trace_event_importer.html): a cname outside its list; a clock sync 'c'
 * without args.sync_id (none at all throws; without the key it is
 * ignored); an 'f' with neither cat nor bp (reading the cat of an 'f'
 * without bp throws). */
static int breaks_catapult(const tw_event *ev)
{
  return (ev->cname && !reserved_color(ev->cname)) ||
         (ev->ph == 'c' && !has_arg(ev, "sync_id")) ||
         (ev->ph == 'f' && !ev->cat && !(ev->flags & TW_EV_BP_ENCLOSING));
}

/* ------------------------------------------------------ the common shapes
 *
 * What most events are: a complete, begin, end or instant event, its
 * head (ph, name, cat, ts, dur, pid, tid, s), at most COMMON_ARGS plain
 * args (numbers, bools, null, strings), nothing else; every string within
 * max_string.  format_common writes them straight, with one check of room
 * per arg and no cursor; anything else (a string to cut, a byte refused, a
 * NaN, raw JSON, a buffer that may be too small, an error of any kind) it
 * leaves to the general path, which then formats the event from the start
 * (the same bytes; the errors, notes and room counted there). */

static int format_general(const tw_event *ev, const tw__fmt_defaults *def,
                          const tw__fmt_config *cfg, char *buf, size_t cap,
                          size_t *len, tw__fmt_notes *notes);

/* The phases it takes: X, B, E, i and I, as bits from 'B'. */
#define COMMON_PHASES ((UINT64_C(1) << ('X' - 'B')) | \
                       (UINT64_C(1) << ('B' - 'B')) | \
                       (UINT64_C(1) << ('E' - 'B')) | \
                       (UINT64_C(1) << ('i' - 'B')) | \
                       (UINT64_C(1) << ('I' - 'B')))

/* 1 if ev has one of the common shapes (the checks format_common does not
 * repeat). */
static inline int common_shape(const tw_event *ev)
{
  unsigned k = (unsigned)((unsigned char)ev->ph - 'B');

  return k < 64 && (COMMON_PHASES >> k & 1) &&
         !((ev->has & ~COMMON_HAS) | ev->flags) &&
         !ev->reserved[0] && !ev->reserved[1] && !ev->id_scope &&
         !ev->cname && ev->nargs <= COMMON_ARGS && (ev->args || !ev->nargs);
}

/* ev, of a common shape, at buf[0..cap), as tw__format_event; what it
 * leaves goes to format_general. */
static __attribute__((noinline)) int
format_common(const tw_event *ev, const tw__fmt_defaults *def,
              const tw__fmt_config *cfg, char *buf, size_t cap, size_t *len,
              tw__fmt_notes *notes)
{
  if (TW__LIKELY(common_core(ev, def, cfg, buf, cap, len,
                             &notes->replaced, 0) == 0))
    return 0;
  return format_general(ev, def, cfg, buf, cap, len, notes);
}

int tw__format_common(const tw__fmt_config *cfg, tw__fmt_out *out,
                      unsigned shape, const char *cat, const char *name,
                      uint64_t ts, uint64_t dur, const tw_arg *args,
                      size_t nargs)
{
  return format_helper_event(cfg, out, shape, cat, name, ts, dur, args,
                             nargs);
}

/* Any event: every check, every error, the room counted when buf is too
 * small (the head by head_general, the rest field by field). */
/* The order of checks, one rule for every path (tw_emit(3), ERRORS):
 * the event's shape; then its strings and values in the order the record
 * holds them, the first fault deciding, with room or without (put_string
 * checks a string it has no room for); then chrome://tracing's rules;
 * the caller adds TW_ETOOBIG.  The common shapes' path (common_core) and
 * a deferring producer (record.c) return no error of their own: an event
 * with any fault comes here. */
static __attribute__((noinline)) int
format_general(const tw_event *ev, const tw__fmt_defaults *def,
               const tw__fmt_config *cfg, char *buf, size_t cap, size_t *len,
               tw__fmt_notes *notes)
{
  cursor o;
  unsigned rules;
  unsigned has = ev->has, flags = ev->flags;
  unsigned id2 = flags & (TW_EV_ID2_LOCAL | TW_EV_ID2_GLOBAL);
  int rc;

  o = (cursor){ buf, buf + cap, buf, 0, 0 };
  rules = phase_rules(ev->ph);
  if (!rules || (has & ~KNOWN_HAS) || (flags & ~KNOWN_FLAGS) ||
      ev->reserved[0] || ev->reserved[1])
    return TW_EEVENT;
  if ((rules & NEED_NAME) && !ev->name)
    return TW_EEVENT;
  /* An id2 form needs an id, and only one form. */
  if (id2 && (!(has & TW_HAS_ID) || (id2 & (id2 - 1))))
    return TW_EEVENT;
  if ((rules & NEED_ID) && !(has & TW_HAS_ID))
    return TW_EEVENT;
  if ((rules & INSTANT) && ev->instant_scope &&
      ev->instant_scope != 'g' && ev->instant_scope != 'p' &&
      ev->instant_scope != 't')
    return TW_EEVENT;
  if ((rules & COUNTER) && ev->nargs == 0)
    return TW_EEVENT;
  if (ev->nargs > TW_MAX_ARGS)
    return TW_ETOOMANY;
  if (ev->nargs && !ev->args)
    return TW_EEVENT;
  if (!numbers_fit(ev, def) || (ev->ph == 'M' && !sort_index_fits(ev)))
    return TW_EEVENT;
  /* chrome://tracing drops an async event without a category. */
  if (TW__UNLIKELY(!ev->cat && (ev->ph == 'b' || ev->ph == 'n' ||
                                ev->ph == 'e'))) {
    tw_event with_cat = *ev;
    with_cat.cat = TW__ASYNC_DEFAULT_CAT;
    return format_general(&with_cat, def, cfg, buf, cap, len, notes);
  }

  if ((rc = head_general(&o, ev, rules, def, cfg, notes)) != 0)
    return rc;
  if (TW__UNLIKELY((has & TAIL_HAS) || flags || ev->id_scope || ev->cname) &&
      (rc = put_tail(&o, ev, cfg, notes)) != 0)
    return rc;
  if (ev->nargs && (rc = put_args(&o, ev, rules, cfg, notes)) != 0)
    return rc;
  PUTLIT(&o, "}");
  /* After the strings, so that their own errors come first. */
  if (TW__UNLIKELY(ev->cname || ev->ph == 'c' || ev->ph == 'f') &&
      breaks_catapult(ev))
    return TW_EEVENT;

  *len = o.over ? o.need : (size_t)(o.p - buf);
  return o.over ? TW__ENOROOM : 0;
}

int tw__format_event(const tw_event *ev, const tw__fmt_defaults *def,
                     const tw__fmt_config *cfg, char *buf, size_t cap,
                     size_t *len, tw__fmt_notes *notes)
{
  if (TW__LIKELY(common_shape(ev)))
    return format_common(ev, def, cfg, buf, cap, len, notes);
  return format_general(ev, def, cfg, buf, cap, len, notes);
}

int tw__format_event_reference(const tw_event *ev,
                               const tw__fmt_defaults *def,
                               const tw__fmt_config *cfg, char *buf,
                               size_t cap, size_t *len, tw__fmt_notes *notes)
{
  tw__fmt_config ref = *cfg;

  ref.flags |= REFERENCE_ONLY;
  return format_general(ev, def, &ref, buf, cap, len, notes);
}
