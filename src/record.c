/* record.c -- events staged as binary entries, formatted later
 *
 * The producer's half (tw__rec_encode) decides whether an event can wait
 * and copies it; the committer's half (tw__rec_render) turns entries back
 * into records with the formatter.  record.h has the layout and the
 * rules.
 *
 * What the producer proves before it defers an event -- each a check of
 * the formatter's that would otherwise decide the call's return value or
 * a count of the stats:
 *
 *  - a common shape: phase X, B, E, i or I; no fields but name, cat, ts,
 *    dur, pid, tid and the instant's scope; at most TW__REC_MAX_ARGS
 *    args; a name unless 'E'; a scope 'g', 'p', 't' or none;
 *  - numbers in range: ts and ts + dur below 2^63, a given pid and tid
 *    within 32 bits;
 *  - every string (name, cat, keys, string values) within max_string and
 *    valid UTF-8, so that nothing is cut, replaced or refused;
 *  - every arg of a known type; a double finite unless nonfinite=null;
 *    raw JSON valid (tw__json_validate, the formatter's own check);
 *  - the record, at its largest once escaped, within limit.
 *
 * Anything else is formatted by the producer at once, as without
 * deferral.
 */
#include "internal.h"
#include "record.h"

#include <math.h>
#include <string.h>

/* The fixed part of an arg, then its key (with a NUL) and its value's
 * bytes (strings and raw JSON). */
typedef struct rec_arg {
  uint64_t value;          /* the bits of an int, uint, double or bool */
  uint64_t len;            /* bytes of a string or raw JSON value */
  uint32_t key_n;          /* bytes of the key with its NUL */
  uint32_t type;           /* tw_arg.type, with REC_NULL_VALUE */
} rec_arg;

/* A string or raw JSON arg whose value is NULL (written null). */
#define REC_NULL_VALUE 0x100u

/* The largest an arg makes a record besides its key's escaped text (a
 * number, bool or null and the punctuation); the head's is
 * TW__REC_BOUND_HEAD. */
#define BOUND_ARG 64u

/* 1 if s[0..n) is valid UTF-8 as the formatter reads it: ASCII here,
 * 8 bytes at a time, every other sequence by the formatter's own rule
 * (tw__utf8_sequence). */
static int utf8_valid(const unsigned char *s, size_t n)
{
  size_t i = 0;

  for (;;) {
    while (n - i >= 8) {
      uint64_t w;
      memcpy(&w, s + i, 8);
      if (w & UINT64_C(0x8080808080808080))
        break;
      i += 8;
    }
    while (i < n && s[i] < 0x80)
      i++;
    if (i >= n)
      return 1;
    int k = tw__utf8_sequence(s + i, n - i);
    if (k < 0)
      return 0;
    i += (size_t)k;
  }
}

/* 1 if a string of n bytes at s is written as it is: within max_string,
 * valid UTF-8. */
static inline int string_plain(const char *s, size_t n,
                               const tw__fmt_config *cfg)
{
  return n <= cfg->max_string && utf8_valid((const unsigned char *)s, n);
}

/* The phases deferred: X, B, E, i, I, as bits from 'B'. */
#define REC_PHASES ((UINT64_C(1) << ('X' - 'B')) | \
                    (UINT64_C(1) << ('B' - 'B')) | \
                    (UINT64_C(1) << ('E' - 'B')) | \
                    (UINT64_C(1) << ('i' - 'B')) | \
                    (UINT64_C(1) << ('I' - 'B')))
#define REC_HAS (TW_HAS_TS | TW_HAS_PID | TW_HAS_TID)
#define ID32_MAX UINT64_C(4294967295)

/* The length of an arg's string or raw JSON value. */
static inline size_t value_len(const tw_arg *a)
{
  return a->len == TW_NUL_TERMINATED ? strlen(a->v.s) : a->len;
}

/* Check arg a as record.c's header says; add its entry bytes to *size
 * and its largest record text to *bound.  Returns 1 if it can wait. */
static int arg_plain(const tw_arg *a, const tw__fmt_config *cfg,
                     size_t *size, size_t *bound)
{
  size_t kn, vn;

  if (!a->name || !string_plain(a->name, kn = strlen(a->name), cfg))
    return 0;
  *size += sizeof(rec_arg) + kn + 1;
  *bound += 6 * kn + BOUND_ARG;
  switch (a->type) {
  case TW_ARG_INT: case TW_ARG_UINT: case TW_ARG_BOOL: case TW_ARG_NULL:
    return 1;
  case TW_ARG_DOUBLE:
    return isfinite(a->v.d) || !(cfg->flags & TW_OPT_REJECT_NONFINITE);
  case TW_ARG_STRING:
    if (!a->v.s)
      return 1;
    vn = value_len(a);
    if (!string_plain(a->v.s, vn, cfg))
      return 0;
    *size += vn;
    *bound += 6 * vn;
    return 1;
  case TW_ARG_JSON:
    if (!a->v.s)
      return 1;
    vn = value_len(a);
    if (tw__json_validate(a->v.s, vn) != 0)
      return 0;
    *size += vn;
    *bound += vn;
    return 1;
  default:
    return 0;
  }
}

/* Copy arg a's entry to d; returns its end. */
static char *arg_put(char *d, const tw_arg *a)
{
  rec_arg r;
  size_t kn = strlen(a->name);

  memset(&r, 0, sizeof r);
  r.type = (uint32_t)a->type;
  r.key_n = (uint32_t)(kn + 1);
  switch (a->type) {
  case TW_ARG_INT:
    memcpy(&r.value, &a->v.i, sizeof a->v.i);
    break;
  case TW_ARG_UINT:
    r.value = a->v.u;
    break;
  case TW_ARG_DOUBLE:
    memcpy(&r.value, &a->v.d, sizeof a->v.d);
    break;
  case TW_ARG_BOOL:
    r.value = a->v.b != 0;
    break;
  case TW_ARG_STRING: case TW_ARG_JSON:
    if (!a->v.s)
      r.type |= REC_NULL_VALUE;
    else
      r.len = value_len(a);
    break;
  default:
    break;
  }
  memcpy(d, &r, sizeof r);
  d += sizeof r;
  memcpy(d, a->name, kn + 1);
  d += kn + 1;
  if (r.len) {
    memcpy(d, a->v.s, r.len);
    d += r.len;
  }
  return d;
}

/* The encoding of ev, of a common shape (the phase and the has bits
 * checked, nothing else in it but what record.h's entry holds), as
 * tw__rec_encode: the checks of its name, scope, numbers, strings and
 * args, then the copy.  Inlined into both of its callers, so that the
 * checks a constant phase settles go. */
static inline __attribute__((always_inline)) int
encode_common(const tw_event *ev, const tw__fmt_defaults *def,
              const tw__fmt_config *cfg, size_t limit, char *buf,
              size_t cap, size_t *len)
{
  unsigned has = ev->has;
  const char *name = ev->name, *cat = ev->cat;
  size_t nn = 0, cn = 0, nargs = ev->nargs, size, bound;
  uint64_t ts, dur;
  int64_t pid, tid;
  char *d, *d0;

  if ((!name && ev->ph != 'E') || (nargs && !ev->args) ||
      nargs > TW__REC_MAX_ARGS)
    return 1;
  if ((ev->ph == 'i' || ev->ph == 'I') && ev->instant_scope &&
      ev->instant_scope != 'g' && ev->instant_scope != 'p' &&
      ev->instant_scope != 't')
    return 1;
  ts = (has & TW_HAS_TS) ? ev->ts : def->ts;
  dur = ev->dur;
  pid = (has & TW_HAS_PID) ? ev->pid : def->pid;
  tid = (has & TW_HAS_TID) ? ev->tid : def->tid;
  if (ts >= TW__REC_TIME_END || (ev->ph == 'X' && dur >= TW__REC_TIME_END - ts) ||
      (TW__UNLIKELY(has & (TW_HAS_PID | TW_HAS_TID)) &&
       (((has & TW_HAS_PID) && (uint64_t)pid > ID32_MAX) ||
        ((has & TW_HAS_TID) && (uint64_t)tid > ID32_MAX))))
    return 1;

  /* The strings, and the sizes: entries take a multiple of 8 bytes. */
  nn = name ? strlen(name) : 0;
  cn = cat ? strlen(cat) : 0;
  if (nn > cfg->max_string || cn > cfg->max_string)
    return 1;
  size = sizeof(tw__rec_head) + sizeof(tw__rec_event) +
         (name ? nn + 1 : 0) + (cat ? cn + 1 : 0);
  bound = TW__REC_BOUND_HEAD + 6 * (nn + cn);
  for (size_t i = 0; i < nargs; i++)
    if (!arg_plain(&ev->args[i], cfg, &size, &bound) || bound > limit)
      return 1;
  size = (size + 7) & ~(size_t)7;
  if (bound > limit || size > UINT32_MAX)
    return 1;
  *len = size;
  if (size > cap)
    return TW__ENOROOM;

  /* The copy: the padding zeroed first, then the fields, in place (buf
   * is 8-aligned: slots are malloc'ed and every entry takes a multiple
   * of 8 bytes). */
  memset(buf + size - 8, 0, 8);
  tw__rec_put_fields(buf, size, ev->ph, ev->instant_scope, has, nargs,
                     name ? nn + 1 : 0, cat ? cn + 1 : 0, ts, dur, pid, tid);
  d = d0 = buf + sizeof(tw__rec_head) + sizeof(tw__rec_event);
  if (name) {
    tw__rec_copy(d, name, nn + 1);
    d += nn + 1;
  }
  if (cat) {
    tw__rec_copy(d, cat, cn + 1);
    d += cn + 1;
  }
  /* Name and cat: plain ASCII (checked 8 bytes at a time, over the copy
   * and its zeroed padding) or else valid UTF-8. */
  if ((nargs ? 1 : tw__rec_high_bits(d0, (size_t)(buf + size - d0))) &&
      ((name && !utf8_valid((const unsigned char *)name, nn)) ||
       (cat && !utf8_valid((const unsigned char *)cat, cn))))
    return 1;
  for (size_t i = 0; i < nargs; i++)
    d = arg_put(d, &ev->args[i]);
  return 0;
}

int tw__rec_encode(const tw_event *ev, const tw__fmt_defaults *def,
                   const tw__fmt_config *cfg, size_t limit, char *buf,
                   size_t cap, size_t *len)
{
  unsigned k = (unsigned)((unsigned char)ev->ph - 'B');

  /* The shape: the rest of the rules are encode_common's. */
  if (!(k < 64 && (REC_PHASES >> k & 1)) || (ev->has & ~REC_HAS) ||
      ev->flags || ev->reserved[0] || ev->reserved[1] || ev->id_scope ||
      ev->cname)
    return 1;
  return encode_common(ev, def, cfg, limit, buf, cap, len);
}

int tw__rec_encode_common(const tw_event *ev, const tw__fmt_defaults *def,
                          const tw__fmt_config *cfg, size_t limit,
                          char *buf, size_t cap, size_t *len)
{
  return encode_common(ev, def, cfg, limit, buf, cap, len);
}

/* Format the EVENT entry body[0..n) into out[0..cap), as
 * tw__format_event. */
static int render_event(const tw__fmt_config *cfg, const char *body,
                        size_t n, char *out, size_t cap, size_t *len)
{
  tw_arg args[TW__REC_MAX_ARGS];
  tw__fmt_defaults def;
  tw__fmt_notes notes = { 0, 0 };
  const char *p = body + sizeof(tw__rec_event), *end = body + n;
  tw__rec_event r;
  tw_event ev;

  if (n < sizeof r)
    return TW_EEVENT;
  memcpy(&r, body, sizeof r);
  if (r.nargs > TW__REC_MAX_ARGS ||
      (size_t)(end - p) < (size_t)r.name_n + r.cat_n)
    return TW_EEVENT;
  memset(&ev, 0, sizeof ev);
  ev.ph = (char)r.ph;
  ev.instant_scope = (char)r.scope;
  ev.has = r.has;
  ev.ts = def.ts = r.ts;
  ev.dur = r.dur;
  ev.pid = def.pid = r.pid;
  ev.tid = def.tid = r.tid;
  if (r.name_n) {
    ev.name = p;
    p += r.name_n;
  }
  if (r.cat_n) {
    ev.cat = p;
    p += r.cat_n;
  }
  for (unsigned i = 0; i < r.nargs; i++) {
    rec_arg ra;
    tw_arg *a = &args[i];

    if ((size_t)(end - p) < sizeof ra)
      return TW_EEVENT;
    memcpy(&ra, p, sizeof ra);
    p += sizeof ra;
    if ((size_t)(end - p) < ra.key_n || (size_t)(end - p) - ra.key_n < ra.len)
      return TW_EEVENT;
    a->name = p;
    p += ra.key_n;
    a->type = (int)(ra.type & ~REC_NULL_VALUE);
    a->len = 0;
    switch (a->type) {
    case TW_ARG_INT:
      memcpy(&a->v.i, &ra.value, sizeof a->v.i);
      break;
    case TW_ARG_UINT:
      a->v.u = ra.value;
      break;
    case TW_ARG_DOUBLE:
      memcpy(&a->v.d, &ra.value, sizeof a->v.d);
      break;
    case TW_ARG_BOOL:
      a->v.b = (int)ra.value;
      break;
    case TW_ARG_STRING: case TW_ARG_JSON:
      a->v.s = (ra.type & REC_NULL_VALUE) ? NULL : p;
      a->len = (size_t)ra.len;
      p += ra.len;
      break;
    default:
      a->v.s = NULL;
      break;
    }
  }
  ev.args = r.nargs ? args : NULL;
  ev.nargs = r.nargs;
  return tw__format_event(&ev, &def, cfg, out, cap, len, &notes);
}

size_t tw__rec_render(const tw__fmt_config *cfg, const char *data,
                      size_t *from, size_t to, char *out, size_t cap,
                      int whole, uint64_t *formatted)
{
  size_t at = *from, n = 0;

  while (at < to) {
    tw__rec_head h;
    const char *body;
    size_t blen, len;
    int rc;

    memcpy(&h, data + at, sizeof h);
    if (h.size < sizeof h || h.size > to - at) {
      at = to;                         /* not an entry: stop there */
      break;
    }
    body = data + at + sizeof h;
    blen = h.size - sizeof h;
    if ((h.kind & 0xff) == TW__REC_TEXT) {
      blen -= h.kind >> 8 & 7;                /* the padding */
      if (blen > cap - n) {
        if (n || !whole)
          break;
      } else {
        memcpy(out + n, body, blen);
        n += blen;
      }
    } else {
      rc = render_event(cfg, body, blen, out + n, cap - n, &len);
      if (rc == TW__ENOROOM && (n || !whole))
        break;
      if (rc == 0) {
        n += len;
        *formatted += len;
      }
    }
    at += h.size;
  }
  *from = at;
  return n;
}
