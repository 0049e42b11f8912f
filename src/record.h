/* record.h -- the staged entries of a deferred writer
 *
 * With formatting on the committer (writer.h, w->defer_limit), a slot
 * holds entries, each a header followed by its body:
 *
 *   TEXT   a record the producer formatted itself (the shapes the
 *          committer does not take, 'M' events): its JSON bytes
 *   EVENT  an event copied as it came, for the committer to format: the
 *          fields, then the bytes of its strings and args
 *
 * The producer encodes an event only when it has proved that the
 * formatter will take it as it is (no error, nothing cut or replaced, no
 * more than the writer's limit once formatted); anything else it formats
 * itself, so the call that caused an error returns it and every count of
 * the stats is the same.  The committer (commit.c) and the crash hook
 * (crash.c) render entries back into records with tw__format_event: the
 * same function on the same fields, so the same bytes.
 *
 * Entries take a multiple of 8 bytes (fields are read with memcpy all
 * the same); a slot's published length always falls between two
 * entries.
 */
#ifndef TW_RECORD_H
#define TW_RECORD_H

#include "internal.h"

#include <string.h>

/* The header of an entry. */
typedef struct tw__rec_head {
  uint32_t size;           /* bytes of the entry, this header and the
                              padding to a multiple of 8 included */
  uint32_t kind;           /* TW__REC_TEXT or TW__REC_EVENT; a TEXT
                              entry's padding (0..7 bytes) << 8 */
} tw__rec_head;

/* The fixed part of an EVENT entry, after its header; then the bytes of
 * name and cat, each with its NUL, then the args (record.c). */
typedef struct tw__rec_event {
  uint64_t ts;             /* the event's ts, or the default */
  uint64_t dur;
  int64_t pid;             /* the event's, or the default */
  int64_t tid;
  uint32_t name_n;         /* bytes of name with its NUL; 0: NULL */
  uint32_t cat_n;          /* the same for cat */
  unsigned char ph, scope, has, nargs;
  uint32_t spare;          /* 0: the strings start 8-aligned */
} tw__rec_event;

_Static_assert(sizeof(tw__rec_head) + sizeof(tw__rec_event) == 56,
               "the strings of an entry start 8-aligned");

/* The largest a record gets besides its strings' escaped text and its
 * args: ph, ts, dur, pid, tid, s and the punctuation (the formatter's
 * HEAD_MAX, 227, is less: format.c checks it). */
#define TW__REC_BOUND_HEAD 256u

/* Times from 2^63 ns on are refused (format.c). */
#define TW__REC_TIME_END (UINT64_C(1) << 63)

#define TW__REC_TEXT 1u
#define TW__REC_EVENT 2u

/* Args an EVENT entry holds at most: more go to the producer's
 * formatter. */
#define TW__REC_MAX_ARGS 16

/* Encode ev (def: the values of the fields it leaves to the library) as
 * an EVENT entry at buf[0..cap).  limit: the most bytes its record may
 * take once formatted (the writer's max_event, and what the committer's
 * buffer holds).  Returns 0 with *len the entry's size; TW__ENOROOM with
 * *len the size it needs; or 1: the event is not one to defer (a shape
 * the committer does not take, or one that formatting could refuse, cut
 * or replace), format it now.  No allocation, no lock. */
int tw__rec_encode(const tw_event *ev, const tw__fmt_defaults *def,
                   const tw__fmt_config *cfg, size_t limit, char *buf,
                   size_t cap, size_t *len);

/* The same for an event of a common shape by construction (the helpers
 * of tw_complete, tw_begin, tw_end, tw_instant: the fast path), which
 * only its fields ph, instant_scope, has, name, cat, ts, dur, pid and
 * tid (with their has bits), args and nargs are read: ph is X, B, E, i
 * or I and has holds no bit but TW_HAS_TS, TW_HAS_PID and TW_HAS_TID.
 * The other checks and the result are tw__rec_encode's. */
int tw__rec_encode_common(const tw_event *ev, const tw__fmt_defaults *def,
                          const tw__fmt_config *cfg, size_t limit,
                          char *buf, size_t cap, size_t *len);

/* Render the entries of data[*from..to) (whole entries) as records into
 * out[0..cap): a TEXT entry copied, an EVENT entry formatted.  Stops
 * before the first that does not fit.  Returns the bytes written, with
 * *from past the entries rendered and *formatted increased by the bytes
 * of the EVENT entries' records.  whole: out is the whole buffer, which
 * holds any entry; then an entry that does not fit anyway is skipped,
 * like one that the formatter refuses (neither should happen: the
 * producer checked).  Pure: no allocation, no lock, no stdio:
 * async-signal-safe. */
size_t tw__rec_render(const tw__fmt_config *cfg, const char *data,
                      size_t *from, size_t to, char *out, size_t cap,
                      int whole, uint64_t *formatted);

/* 0 if the n bytes at s (n a multiple of 8) are all ASCII. */
static inline uint64_t tw__rec_high_bits(const char *s, size_t n)
{
  uint64_t any = 0;

  for (size_t i = 0; i < n; i += 8) {
    uint64_t w;
    memcpy(&w, s + i, 8);
    any |= w;
  }
  return any & UINT64_C(0x8080808080808080);
}

/* Copy n bytes from s to d, short runs (a name and its NUL) with two
 * overlapping loads instead of a call.  Returns 0 if they are all
 * ASCII, else nonzero (or, past 16 bytes, nonzero: unchecked). */
static inline __attribute__((always_inline)) uint64_t
tw__rec_copy(char *d, const char *s, size_t n)
{
  if (n >= 8 && n <= 16) {
    uint64_t a, b;
    memcpy(&a, s, 8);
    memcpy(&b, s + n - 8, 8);
    memcpy(d, &a, 8);
    memcpy(d + n - 8, &b, 8);
    return (a | b) & UINT64_C(0x8080808080808080);
  } else if (n >= 4 && n < 8) {
    uint32_t a, b;
    memcpy(&a, s, 4);
    memcpy(&b, s + n - 4, 4);
    memcpy(d, &a, 4);
    memcpy(d + n - 4, &b, 4);
    return (a | b) & UINT32_C(0x80808080);
  }
  memcpy(d, s, n);
  return 1;
}

/* The header and fixed fields of an EVENT entry of size bytes at buf
 * (name_n, cat_n: the bytes of name and cat with their NULs, 0 for
 * NULL). */
static inline __attribute__((always_inline)) void
tw__rec_put_fields(char *buf, size_t size, char ph, char scope,
                   unsigned has, size_t nargs, size_t name_n, size_t cat_n,
                   uint64_t ts, uint64_t dur, int64_t pid, int64_t tid)
{
  tw__rec_head *head = (tw__rec_head *)(void *)buf;
  tw__rec_event *r = (tw__rec_event *)(void *)(buf + sizeof *head);

  head->size = (uint32_t)size;
  head->kind = TW__REC_EVENT;
  r->ts = ts;
  r->dur = dur;
  r->pid = pid;
  r->tid = tid;
  r->name_n = (uint32_t)name_n;
  r->cat_n = (uint32_t)cat_n;
  r->ph = (unsigned char)ph;
  r->scope = (unsigned char)scope;
  r->has = (unsigned char)has;
  r->nargs = (unsigned char)nargs;
  r->spare = 0;
}

/* An EVENT entry of phase ph (has: TW_HAS_* bits of those given) with
 * no args, its name and cat plain ASCII of nn and cn bytes (neither
 * NULL), at buf[0..cap) (8-aligned): the path of tw_complete's events
 * with no args.  The caller has checked the rest of tw__rec_encode's
 * rules: the times and the lengths, and that the record fits limit.
 * Returns the entry's size, or 0 (nothing published): it does not fit,
 * or a string is not plain ASCII; the caller takes tw__rec_encode's
 * path then. */
static inline __attribute__((always_inline)) size_t
tw__rec_put_bare(char *buf, size_t cap, char ph, unsigned has,
                 const char *name, size_t nn, const char *cat, size_t cn,
                 uint64_t ts, uint64_t dur, int64_t pid, int64_t tid)
{
  size_t size = (sizeof(tw__rec_head) + sizeof(tw__rec_event) + nn + cn +
                 2 + 7) & ~(size_t)7;
  char *d = buf + sizeof(tw__rec_head) + sizeof(tw__rec_event);

  if (size > cap)
    return 0;
  memset(buf + size - 8, 0, 8);
  if (tw__rec_copy(d, name, nn + 1) | tw__rec_copy(d + nn + 1, cat, cn + 1))
    return 0;
  tw__rec_put_fields(buf, size, ph, 0, has, 0, nn + 1, cn + 1, ts, dur, pid,
                     tid);
  return size;
}

#endif /* TW_RECORD_H */
