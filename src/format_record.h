/* format_record.h -- the record's head and the common shapes, always
 * inlined
 *
 * The head of every record (head_fast: head_names, head_numbers) and
 * the core of the common shapes (common_core: X, B, E, i/I events with
 * a few plain args), inline so that both of format.c's paths write a
 * head the same way, and so that the emit fast path (stage.c) writes a
 * helper's record with no call between them (format_helper_event).
 * The rest of the record, every error and the entry points are in
 * format.c.  Pure, no allocation, async-signal-safe.
 */
#ifndef TW_FORMAT_RECORD_H
#define TW_FORMAT_RECORD_H

#include "internal.h"
#include "format_number.h"
#include "format_string.h"
#include "record.h"          /* TW__REC_BOUND_HEAD */

#include <math.h>
#include <stdint.h>
#include <string.h>

#define HOT_INLINE TW__HOT_INLINE

/* ,"pid":P,"tid":T -- the same for every event of a thread, so each
 * thread keeps its last one formatted (tw__fmt_thread_cache, in
 * internal.h for the crash hook). */
#define PIDTID_MAX TW__PIDTID_MAX
extern TW__THREAD tw__fmt_thread_cache tw__fmt_pid_tid;

/* Fills tw__fmt_pid_tid with pid and tid (format.c). */
void tw__fmt_pid_tid_refresh(int64_t pid, int64_t tid);

/* The text at d, which has PIDTID_MAX bytes of room (all of them are
 * written: one copy of constant size); returns its length. */
HOT_INLINE size_t pid_tid_text(char *d, int64_t pid, int64_t tid)
{
  if (TW__UNLIKELY(tw__fmt_pid_tid.len == 0 || tw__fmt_pid_tid.pid != pid ||
                   tw__fmt_pid_tid.tid != tid))
    tw__fmt_pid_tid_refresh(pid, tid);
  memcpy(d, tw__fmt_pid_tid.text, PIDTID_MAX);
  return tw__fmt_pid_tid.len;
}

/* The same text for the calling thread's own pid and tid (tw__pid,
 * tw__tid), kept apart from tw__fmt_pid_tid (which the events with a
 * pid or tid of their own, and the committer's records, change): made
 * at the thread's first use, emptied in a child after fork
 * (tw__format_forked).  Filled as tw__fmt_pid_tid is; a handler that
 * formats does not use it. */
extern TW__THREAD tw__fmt_thread_cache tw__fmt_own_pid_tid;

/* Fills tw__fmt_own_pid_tid (format.c). */
void tw__fmt_own_pid_tid_refresh(void);

/* The calling thread's ,"pid":P,"tid":T at d (PIDTID_MAX bytes of room,
 * all written); returns its length. */
HOT_INLINE size_t own_pid_tid_text(char *d)
{
  if (TW__UNLIKELY(tw__fmt_own_pid_tid.len == 0))
    tw__fmt_own_pid_tid_refresh();
  memcpy(d, tw__fmt_own_pid_tid.text, PIDTID_MAX);
  return tw__fmt_own_pid_tid.len;
}

/* What each phase requires. */
#define NEED_NAME 0x1u
#define NEED_ID   0x2u
#define COUNTER   0x4u
#define INSTANT   0x8u
#define KNOWN     0x10u

/* ------------------------------------------------------------ the head
 *
 * The head of a record, every field up to "s", has one writer: head_fast
 * (head_names, then head_numbers), which checks no room on its way.  Every
 * path comes to it with the lengths of name and cat known and within
 * max_string (the common shapes' core, common_core, takes no other;
 * format_general cuts them first: head_cut), and with the room it needs;
 * format_general, whose room may be short, measures the head first
 * (head_measured). */

/* The fields of the common shapes (format_common). */
#define COMMON_HAS (TW_HAS_TS | TW_HAS_PID | TW_HAS_TID)

/* The most head_numbers writes (ts, dur, tts, tdur, pid and tid, s). */
#define HEAD_NUMBERS_MAX ((6 + US_MAX) + (7 + US_MAX) + (7 + US_MAX) + \
                          (8 + US_MAX) + PIDTID_MAX + 9)

/* The most room head_fast asks for besides its strings' escaped text
 * (at most 6 bytes per input byte). */
#define HEAD_MAX (11 + (8 + 2) + (7 + 2) + HEAD_NUMBERS_MAX)
_Static_assert(HEAD_MAX <= TW__REC_BOUND_HEAD,
               "a deferred record's bound holds the head");

/* ,\n{"ph":"P","name":"N","cat":"C" at d, for a name and a cat of nn and
 * cn bytes (0 when NULL): exactly that, but that a head without a name
 * has 9 bytes more written past it (a copy of constant size).  Returns
 * the end, or NULL for a string refused for its invalid UTF-8. */
HOT_INLINE char *head_names(char *d, const tw_event *ev, unsigned rules,
                            unsigned flags, size_t nn, size_t cn,
                            tw__fmt_notes *notes)
{
  /* DevTools' trace engine draws only the uppercase instant. */
  memcpy(d, ",\n{\"ph\":\"?\",\"name\":\"", 20);
  d[9] = (rules & INSTANT) ? 'I' : ev->ph;
  if (ev->name) {
    d = escape(d + 20, (const unsigned char *)ev->name, nn, flags,
               &notes->replaced);
    if (!d)
      return NULL;
    *d++ = '"';
  } else {
    d += 11;
  }
  if (ev->cat) {
    memcpy(d, ",\"cat\":\"", 8);
    d = escape(d + 8, (const unsigned char *)ev->cat, cn, flags,
               &notes->replaced);
    if (!d)
      return NULL;
    *d++ = '"';
  }
  return d;
}

/* The rest of the head at d, which has HEAD_NUMBERS_MAX bytes of room
 * (fixed fragments are copied with constant sizes, and may write past
 * the head, within that room).  Returns the end. */
HOT_INLINE char *head_numbers(char *d, const tw_event *ev, unsigned rules,
                              const tw__fmt_defaults *def, int common)
{
  /* common (a constant where it is inlined): ev has a common shape, so
   * neither 'M' nor tts or tdur, and those checks go; 2: and its pid and
   * tid are the calling thread's own (own_pid_tid_text). */
  unsigned has = common ? ev->has & COMMON_HAS : ev->has;
  char ph = common ? 'X' : ev->ph;            /* only compared with 'M' */

  if (ph != 'M' || (has & TW_HAS_TS)) {
    memcpy(d, ",\"ts\":", 6);
    d += 6;
    d += us_text(d, (has & TW_HAS_TS) ? ev->ts : def->ts);
  }
  if (ev->ph == 'X') {
    memcpy(d, ",\"dur\":", 7);
    d += 7;
    d += us_text(d, ev->dur);
  }
  if (TW__UNLIKELY(has & (TW_HAS_TTS | TW_HAS_TDUR))) {
    if (has & TW_HAS_TTS) {
      memcpy(d, ",\"tts\":", 7);
      d += 7;
      d += us_text(d, ev->tts);
    }
    if (has & TW_HAS_TDUR) {
      memcpy(d, ",\"tdur\":", 8);
      d += 8;
      d += us_text(d, ev->tdur);
    }
  }
  if (common == 2)
    d += own_pid_tid_text(d);
  else
    d += pid_tid_text(d, (has & TW_HAS_PID) ? ev->pid : def->pid,
                      (has & TW_HAS_TID) ? ev->tid : def->tid);
  if (rules & INSTANT) {
    memcpy(d, ",\"s\":\"", 6);
    d[6] = ev->instant_scope ? ev->instant_scope : 't';
    d[7] = '"';
    d += 8;
  }
  return d;
}

/* The head at d, which has room for HEAD_MAX bytes and the escaped text
 * of name and cat (6 * (nn + cn) is always enough), for a name and a cat
 * of nn and cn bytes (0 when NULL), neither longer than max_string.  No
 * check of room on the way (and fixed fragments may write past the head,
 * within that room).  Returns the end of the head, or NULL for a string
 * refused for its invalid UTF-8. */
HOT_INLINE char *head_fast(char *d, const tw_event *ev, unsigned rules,
                           const tw__fmt_defaults *def, unsigned flags,
                           size_t nn, size_t cn, tw__fmt_notes *notes,
                           int common)
{
  d = head_names(d, ev, rules, flags, nn, cn, notes);
  return d ? head_numbers(d, ev, rules, def, common) : NULL;
}

/* Numbers Perfetto cannot read right are refused (see tracewriter(7),
 * WHAT EACH VIEWER SHOWS).  It turns microseconds into nanoseconds in an
 * int64_t, so a time from 2^63 ns on overflows (an event dropped or
 * misplaced); it keeps pid and tid as uint32_t and reads any other value
 * as 0; it casts a sort index to int32_t. */
#define TIME_END (UINT64_C(1) << 63)
#define ID32_MAX UINT64_C(4294967295)

/* 1 if ts, ts + dur, tts, tts + tdur, pid and tid of ev are in range. */
static inline int numbers_fit(const tw_event *ev, const tw__fmt_defaults *def)
{
  unsigned has = ev->has;
  uint64_t ts = (has & TW_HAS_TS) ? ev->ts : def->ts;
  uint64_t tts = (has & TW_HAS_TTS) ? ev->tts : 0;

  if (ts >= TIME_END || (ev->ph == 'X' && ev->dur >= TIME_END - ts))
    return 0;
  if (TW__UNLIKELY(has & (TW_HAS_TTS | TW_HAS_TDUR | TW_HAS_PID |
                          TW_HAS_TID)))
    return tts < TIME_END &&
           (!(has & TW_HAS_TDUR) || ev->tdur < TIME_END - tts) &&
           (!(has & TW_HAS_PID) || (uint64_t)ev->pid <= ID32_MAX) &&
           (!(has & TW_HAS_TID) || (uint64_t)ev->tid <= ID32_MAX);
  return 1;
}

/* The most args of a common shape. */
#define COMMON_ARGS 16

/* "key": of an arg at d (6 kn + 3 bytes of room); NULL if refused. */
HOT_INLINE char *key_text(char *d, const char *key, size_t kn,
                          unsigned flags, unsigned *replaced)
{
  *d++ = '"';
  d = escape(d, (const unsigned char *)key, kn, flags, replaced);
  if (d) {
    d[0] = '"';
    d[1] = ':';
    d += 2;
  }
  return d;
}

/* The room an arg's value may take besides a string's text. */
#define VALUE_MAX (TW__DOUBLE_MAX > 21 ? TW__DOUBLE_MAX : 21)

/* ,"args":{...} of ev's nargs (at least one) plain args at d, the room
 * up to end checked arg by arg.  Returns the end, or NULL: the general
 * path's. */
HOT_INLINE char *common_args(char *d, const char *end, const tw_event *ev,
                             size_t max, unsigned flags, unsigned *replaced)
{
  size_t nargs = ev->nargs;

  /* Room for the opening and closing of args and of the record. */
  if ((size_t)(end - d) < 11)
    return NULL;
  memcpy(d, ",\"args\":{", 9);
  d += 9;
  for (size_t i = 0; i < nargs; i++) {
    const tw_arg *a = &ev->args[i];
    size_t kn, vn;
    double v;

    if (!a->name || (kn = str_len(a->name)) > max)
      return NULL;
    /* The key, a comma, the value and the two closing braces. */
    if ((size_t)(end - d) < 6 * kn + VALUE_MAX + 10)
      return NULL;
    if (i)
      *d++ = ',';
    if (!(d = key_text(d, a->name, kn, flags, replaced)))
      return NULL;
    switch (a->type) {
    case TW_ARG_INT:
      d += i64_to_dec(a->v.i, d);
      break;
    case TW_ARG_UINT:
      if (a->v.u > (uint64_t)INT64_MAX) {     /* as put_arg: a double */
        d += tw__format_double((double)a->v.u, d);
        break;
      }
      d += u64_to_dec(a->v.u, d);
      break;
    case TW_ARG_DOUBLE:
      v = a->v.d;
      if (WHOLE_DOUBLE(v))
        d += i64_to_dec((int64_t)v, d);
      else if (isfinite(v))
        d += tw__format_double(v, d);
      else
        return NULL;
      break;
    case TW_ARG_BOOL:
      memcpy(d, a->v.b ? "true" : "false", 5);
      d += a->v.b ? 4 : 5;
      break;
    case TW_ARG_NULL:
      memcpy(d, "null", 4);
      d += 4;
      break;
    case TW_ARG_STRING:
      if (!a->v.s) {
        memcpy(d, "null", 4);
        d += 4;
        break;
      }
      vn = a->len == TW_NUL_TERMINATED ? str_len(a->v.s) : a->len;
      if (vn > max || (size_t)(end - d) < 6 * vn + 6)
        return NULL;
      *d++ = '"';
      if (!(d = escape(d, (const unsigned char *)a->v.s, vn, flags,
                       replaced)))
        return NULL;
      *d++ = '"';
      break;
    default:                                  /* raw JSON, or bad */
      return NULL;
    }
  }
  *d++ = '}';
  return d;
}

/* 1 if ev, of a common shape, at ts, passes the checks of the general
 * path that these shapes need.  The times: ts and ts + dur below 2^63
 * (TIME_END) is ts, dur and ts + dur below it (no overflow, both being
 * below it).  own: a helper's event, which has no pid or tid of its
 * own (and only the fields tw__event_fast_fields writes). */
HOT_INLINE int common_checks(const tw_event *ev, const tw__fmt_defaults *def,
                             uint64_t ts, int own)
{
  char ph = ev->ph, scope = ev->instant_scope;
  int instant = ph == 'i' || ph == 'I';
  uint64_t dur = ev->dur;

  return !((!ev->name && ph != 'E') || ev->nargs > COMMON_ARGS ||
           (ev->nargs && !ev->args) ||
           (instant && scope && scope != 'g' && scope != 'p' &&
            scope != 't') ||
           ((ts | (ph == 'X' ? dur | (ts + dur) : 0)) & TIME_END) ||
           (!own && TW__UNLIKELY(ev->has & (TW_HAS_PID | TW_HAS_TID)) &&
            !numbers_fit(ev, def)));
}

/* ev, of a common shape, at buf[0..cap), as tw__format_event: returns 0
 * with *len and *replaced increased by the strings whose invalid UTF-8
 * became U+FFFD, or 1 (nothing counted): the general path's.  Inlined
 * into format_common (tw__format_event's) and, own: pid and tid the
 * calling thread's, from tw__fmt_own_pid_tid, into format_helper_event
 * (the emit fast path's). */
HOT_INLINE int common_core(const tw_event *ev, const tw__fmt_defaults *def,
                           const tw__fmt_config *cfg, char *buf, size_t cap,
                           size_t *len, unsigned *replaced, int own)
{
  int instant = ev->ph == 'i' || ev->ph == 'I';
  unsigned flags = cfg->flags;
  const char *name = ev->name, *cat = ev->cat;
  size_t max = cfg->max_string, nn, cn;
  uint64_t ts = (ev->has & TW_HAS_TS) ? ev->ts : def->ts;
  tw__fmt_notes mine = { 0, 0 };
  char *d;

  if (!common_checks(ev, def, ts, own))
    return 1;
  nn = name ? str_len(name) : 0;
  cn = cat ? str_len(cat) : 0;
  /* (Lengths of strings in memory: 6 times them cannot overflow.)  nn |
   * cn is at least the longer of them (and is more only near max, where
   * the general path is right too). */
  if ((nn | cn) > max || cap < HEAD_MAX + 6 * (nn + cn))
    return 1;
  if (!(d = head_fast(buf, ev, instant ? INSTANT : 0, def, flags, nn, cn,
                      &mine, own ? 2 : 1)))
    return 1;
  if (ev->nargs &&
      !(d = common_args(d, buf + cap, ev, max, flags, &mine.replaced)))
    return 1;
  *d++ = '}';
  *len = (size_t)(d - buf);
  *replaced += mine.replaced;
  return 0;
}

/* tw__format_common (internal.h), always inlined: into it and into
 * the emit fast path (stage.c), so that no call stands between a
 * helper and its record. */
HOT_INLINE int format_helper_event(const tw__fmt_config *cfg, tw__fmt_out *out,
                                   unsigned shape, const char *cat,
                                   const char *name, uint64_t ts,
                                   uint64_t dur, const tw_arg *args,
                                   size_t nargs)
{
  /* The event, with only the fields common_core reads, which the
   * compiler keeps in registers (the struct never leaves this
   * function); pid and tid the calling thread's own (own=1): no
   * defaults are read. */
  static const tw__fmt_defaults none;
  tw_event ev;

  /* The complete event, the most common, by a copy of the core of its
   * own: its constant phase settles the phase's checks. */
  if (TW__LIKELY((shape & 0xff) == 'X')) {
    tw__event_fast_fields(&ev, TW__SHAPE('X', 0), cat, name, ts, dur, args,
                          nargs);
    return common_core(&ev, &none, cfg, out->buf, out->cap, &out->len,
                       &out->replaced, 1);
  }
  tw__event_fast_fields(&ev, shape, cat, name, ts, dur, args, nargs);
  return common_core(&ev, &none, cfg, out->buf, out->cap, &out->len,
                     &out->replaced, 1);
}

#endif
