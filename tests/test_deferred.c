/* test_deferred.c -- formatting on the committer (formatter=committer)
 *
 * With a background committer and formatter=committer, producers copy
 * most events into their slots unformatted and the commit formats them
 * (src/record.h).  Every
 * test here writes the same events twice, with formatting on the
 * committer and with formatter=producer, and requires the same return
 * value from every call, the same counters, and the same file: every
 * record byte for byte (only the clock record, read at open, differs),
 * and, read back through the strict checker, every event field by field.
 *
 * The events: every phase, args of every type, escapes, valid and
 * invalid UTF-8 under utf8=replace and utf8=reject, NaN and infinities
 * under nonfinite=null and =reject, strings past max_string cut or
 * refused, bad events of every kind, records larger than a slot and
 * records that grow six times once escaped (more than the committer's
 * buffer holds at once), a tiny buffer, threads, rotation by size, gzip,
 * and crash=commit from a signal (the handler formats what is staged).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* fork, glob */
#endif

#include "testutil.h"
#include "gunzip.h"

#include <glob.h>
#include <math.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define TS0 UINT64_C(1000000000)

/* ------------------------------------------------------------ helpers */

/* The records of a trace: its lines without the clock record, a
 * record's separating comma dropped. */
typedef struct records {
  char **line;
  size_t n;
  char *buf;               /* owns the lines */
} records;

static records records_of(char *buf, size_t len)
{
  records r = { NULL, 0, buf };
  size_t cap = 0;
  char *p = buf, *end = buf + len;

  while (p < end) {
    char *nl = memchr(p, '\n', (size_t)(end - p));
    char *e = nl ? nl : end;
    *e = '\0';
    if (e > p && e[-1] == ',')
      e[-1] = '\0';
    if (!strstr(p, "\"clock_sync\"")) {
      if (r.n == cap) {
        cap = cap ? 2 * cap : 256;
        r.line = realloc(r.line, cap * sizeof *r.line);
        assert_non_null(r.line);
      }
      r.line[r.n++] = p;
    }
    p = e + 1;
  }
  return r;
}

static void records_free(records *r)
{
  free(r->line);
  free(r->buf);
}

static void assert_same_records(const records *a, const records *b,
                                const char *what)
{
  for (size_t i = 0; i < a->n && i < b->n; i++)
    if (strcmp(a->line[i], b->line[i]) != 0)
      fail_msg("%s: record %zu differs:\n  committer: %s\n  producer:  %s",
               what, i, a->line[i], b->line[i]);
  if (a->n != b->n)
    fail_msg("%s: %zu records with formatting on the committer, %zu on "
             "the producer", what, a->n, b->n);
}

/* Both traces, read through the strict checker, event by event and
 * member by member: the same keys in the same order, the same values. */
static void assert_same_fields(const char *a, size_t alen, const char *b,
                               size_t blen, const char *what)
{
  jc_doc *da = tu_load_mem(a, alen), *db = tu_load_mem(b, blen);
  jc_val ea = jc_first(da, tu_events(da)), eb = jc_first(db, tu_events(db));
  size_t i = 0;

  for (; ea >= 0 && eb >= 0; ea = jc_next(da, ea), eb = jc_next(db, eb)) {
    jc_val ma = jc_first(da, ea), mb = jc_first(db, eb);
    for (; ma >= 0 && mb >= 0; ma = jc_next(da, ma), mb = jc_next(db, mb)) {
      size_t ka, kb, va, vb;
      const char *key_a = jc_key_raw(da, ma, &ka);
      const char *key_b = jc_key_raw(db, mb, &kb);
      const char *val_a = jc_raw(da, ma, &va), *val_b = jc_raw(db, mb, &vb);
      if (ka != kb || memcmp(key_a, key_b, ka) != 0 || va != vb ||
          memcmp(val_a, val_b, va) != 0)
        fail_msg("%s: event %zu: %.*s:%.*s against %.*s:%.*s", what, i,
                 (int)ka, key_a, (int)va, val_a, (int)kb, key_b, (int)vb,
                 val_b);
    }
    if (ma >= 0 || mb >= 0)
      fail_msg("%s: event %zu: not the same members", what, i);
    i++;
  }
  if (ea >= 0 || eb >= 0)
    fail_msg("%s: not the same number of events", what);
  jc_free(da);
  jc_free(db);
}

/* Write every "pid":N and "tid":N of buf[0..*len) as "pid":0 and
 * "tid":0 (a crashed child's records against the parent's). */
static void zero_pids(char *buf, size_t *len)
{
  char *p = buf, *end = buf + *len, *d = buf;

  while (p < end) {
    if (end - p > 6 && (memcmp(p, "\"pid\":", 6) == 0 ||
                        memcmp(p, "\"tid\":", 6) == 0)) {
      memmove(d, p, 6);
      d[6] = '0';
      d += 7;
      p += 6;
      while (p < end && *p >= '0' && *p <= '9')
        p++;
    } else {
      *d++ = *p++;
    }
  }
  *len = (size_t)(d - buf);
}

/* The file at path, gunzipped if gz: strict JSON (asserted by the
 * callers through assert_same_fields). */
static char *read_trace(const char *path, int gz, size_t *len)
{
  size_t n;
  char *buf = tu_read_file(path, &n), *json;

  if (!gz) {
    *len = n;
    return buf;
  }
  json = tu_gunzip(buf, n, len);
  if (!json)
    fail_msg("%s: not one complete gzip member", path);
  free(buf);
  return json;
}

static tw_writer *open_with(const char *path, const char *opts,
                            const char *formatter)
{
  char all[512], err[200];
  tw_options o;
  tw_writer *w;
  int rc = 0;

  snprintf(all, sizeof all, "%s,formatter=%s", opts, formatter);
  tw_options_init(&o);
  o.process_name = "deferred";
  if (tw_options_parse(&o, all, err, sizeof err) != 0)
    fail_msg("%s: %s", all, err);
  w = tw_open(path, &o, &rc);
  if (!w)
    fail_msg("tw_open(%s): %s", all, tw_strerror(rc));
  return w;
}

/* What one run gave: every call's return value, the counters, the
 * trace. */
typedef struct run_result {
  int rc[8192];
  size_t nrc;
  tw_stats stats;
  char *trace;
  size_t len;
} run_result;

typedef void (*emitter)(tw_writer *w, run_result *r);

static void run(const char *opts, const char *formatter, int gz, emitter fn,
                run_result *r)
{
  char *path = tu_tmppath(gz ? ".json.gz" : ".json");
  tw_writer *w = open_with(path, opts, formatter);

  r->nrc = 0;
  fn(w, r);
  assert_int_equal(tw_flush(w), 0);
  assert_int_equal(tw_get_stats(w, &r->stats), 0);
  assert_int_equal(tw_close(w), 0);
  r->trace = read_trace(path, gz, &r->len);
  tu_cleanup(path);
}

/* The events of fn through both formatters: *a on the committer, *b on
 * the producer (free both, and their traces). */
static void run_both(const char *opts, int gz, emitter fn, run_result **a,
                     run_result **b)
{
  *a = calloc(1, sizeof **a);
  *b = calloc(1, sizeof **b);
  assert_non_null(*a);
  assert_non_null(*b);
  run(opts, "committer", gz, fn, *a);
  run(opts, "producer", gz, fn, *b);
}

/* Write every "ts":T of buf[0..*len) as "ts":0 (the events of tw_begin,
 * tw_end and tw_instant are at the time of the call). */
static void zero_ts(char *buf, size_t *len)
{
  char *p = buf, *end = buf + *len, *d = buf;

  while (p < end) {
    if (end - p > 5 && memcmp(p, "\"ts\":", 5) == 0) {
      memmove(d, p, 5);
      d[5] = '0';
      d += 6;
      p += 5;
      while (p < end && ((*p >= '0' && *p <= '9') || *p == '.'))
        p++;
    } else {
      *d++ = *p++;
    }
  }
  *len = (size_t)(d - buf);
}

static void compare_results(const char *opts, run_result *a,
                            run_result *b);

/* The same events through both formatters: the same results. */
static void compare_runs(const char *opts, int gz, emitter fn)
{
  run_result *a, *b;

  run_both(opts, gz, fn, &a, &b);
  compare_results(opts, a, b);
}

/* The same, every ts made 0 first. */
static void compare_runs_any_ts(const char *opts, emitter fn)
{
  run_result *a, *b;

  run_both(opts, 0, fn, &a, &b);
  zero_ts(a->trace, &a->len);
  zero_ts(b->trace, &b->len);
  compare_results(opts, a, b);
}

/* The results of a and b (freed) the same. */
static void compare_results(const char *opts, run_result *a, run_result *b)
{
  records ra, rb;

  assert_int_equal(a->nrc, b->nrc);
  for (size_t i = 0; i < a->nrc; i++)
    if (a->rc[i] != b->rc[i])
      fail_msg("%s: call %zu returned %s on the committer, %s on the "
               "producer", opts, i, tw_err_name(a->rc[i]),
               tw_err_name(b->rc[i]));
  assert_int_equal(a->stats.events, b->stats.events);
  assert_int_equal(a->stats.bytes, b->stats.bytes);
  assert_int_equal(a->stats.rejected, b->stats.rejected);
  assert_int_equal(a->stats.strings_truncated, b->stats.strings_truncated);
  assert_int_equal(a->stats.utf8_replaced, b->stats.utf8_replaced);
  assert_int_equal(a->stats.error, 0);
  assert_same_fields(a->trace, a->len, b->trace, b->len, opts);
  ra = records_of(a->trace, a->len);
  rb = records_of(b->trace, b->len);
  assert_same_records(&ra, &rb, opts);
  records_free(&ra);
  records_free(&rb);
  free(a);
  free(b);
}

/* --------------------------------------------------------- the events */

static void put_rc(run_result *r, int rc)
{
  assert_true(r->nrc < sizeof r->rc / sizeof r->rc[0]);
  r->rc[r->nrc++] = rc;
}

/* An event of phase ph at TS0 + i us, given ts. */
static tw_event ev_at(char ph, const char *cat, const char *name,
                      uint64_t i)
{
  tw_event ev;

  memset(&ev, 0, sizeof ev);
  ev.ph = ph;
  ev.cat = cat;
  ev.name = name;
  ev.has = TW_HAS_TS;
  ev.ts = TS0 + i * 1000;
  ev.dur = 1500 + i;
  return ev;
}

static int emit_args(tw_writer *w, char ph, const char *name, uint64_t i,
                     const tw_arg *args, size_t nargs)
{
  tw_event ev = ev_at(ph, "cat", name, i);

  ev.args = args;
  ev.nargs = nargs;
  return tw_emit(w, &ev);
}

/* Names and cats for the helpers' own paths (tw_complete straight to
 * an entry or a record): every length the copy treats apart, around 4,
 * 8 and 16 bytes with the NUL, escapes, valid and invalid UTF-8, and
 * longer than max_string (64 in some runs). */
static const char *const helper_strings[] = {
  "", "a", "ab", "abc", "abcd", "abcdefg", "abcdefgh", "abcdefghijklmno",
  "abcdefghijklmnop", "abcdefghijklmnopq", "matmul", "bench",
  "q\"b\\s\n", "\x01\x1f", "gr\xc3\xb6\xc3\x9f" "e", "\xe6\xb3\xa8",
  "\xff\xfe", "cut \xe2\x82", "ok \xc3",
  "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn",
  "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn",
  "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
  "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
  "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
  "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9Z",
};
#define NHELPER (sizeof helper_strings / sizeof *helper_strings)

/* tw_complete with no args and with one, every name against every cat
 * (and NULL), times at their limits; events from TS0 + i us. */
static void emit_helper_strings(tw_writer *w, run_result *r, uint64_t i)
{
  tw_arg one = tw_arg_int("n", 1);

  for (size_t a = 0; a < NHELPER; a++) {
    for (size_t b = 0; b <= NHELPER; b++) {
      const char *cat = b < NHELPER ? helper_strings[b] : NULL;
      put_rc(r, tw_complete(w, cat, helper_strings[a], TS0 + i * 1000,
                            500 + i, NULL, 0));
      i++;
    }
    put_rc(r, tw_complete(w, "cat", helper_strings[a], TS0 + i * 1000, 7,
                          &one, 1));
    put_rc(r, tw_complete(w, helper_strings[a], "args NULL", TS0 + i * 1000,
                          7, NULL, 0));
    i++;
  }
  put_rc(r, tw_complete(w, "cat", NULL, TS0, 1, NULL, 0));
  put_rc(r, tw_complete(w, "cat", "late", UINT64_C(1) << 63, 0, NULL, 0));
  put_rc(r, tw_complete(w, "cat", "last", (UINT64_C(1) << 63) - 1, 0, NULL,
                        0));
  put_rc(r, tw_complete(w, "cat", "long dur", TS0,
                        (UINT64_C(1) << 63) - TS0, NULL, 0));
  put_rc(r, tw_complete(w, "cat", "longest dur", TS0,
                        (UINT64_C(1) << 63) - TS0 - 1, NULL, 0));
  put_rc(r, tw_complete(w, "cat", "huge dur", TS0, UINT64_MAX, NULL, 0));
}

/* Every kind of event, good and bad; each call's value recorded. */
static void emit_catalogue(tw_writer *w, run_result *r)
{
  static const char json[] = "{\"a\":[1,2.5,{\"b\":null}],\n\"c\":\"\\u00e9\"}";
  char big_ctl[201], long_name[101], long_utf8[201];
  tw_arg all[16], many[20], one;
  tw_event ev;
  uint64_t i = 0;

  memset(big_ctl, 1, 200);
  big_ctl[200] = '\0';
  memset(long_name, 'n', 100);
  long_name[100] = '\0';
  for (int k = 0; k < 200; k += 2)
    memcpy(long_utf8 + k, "\xc3\xa9", 2);          /* e-acute, cut inside */
  long_utf8[200] = '\0';

  /* The common phases. */
  ev = ev_at('X', "cat", "complete", i++);
  put_rc(r, tw_emit(w, &ev));
  ev = ev_at('B', "cat", "begin", i++);
  put_rc(r, tw_emit(w, &ev));
  ev = ev_at('E', NULL, NULL, i++);
  put_rc(r, tw_emit(w, &ev));
  ev = ev_at('E', "cat", "end", i++);
  put_rc(r, tw_emit(w, &ev));
  static const char scopes[] = { 'g', 'p', 't', 0 };
  for (int k = 0; k < 4; k++) {
    ev = ev_at(k % 2 ? 'I' : 'i', "cat", "instant", i++);
    ev.instant_scope = scopes[k];
    put_rc(r, tw_emit(w, &ev));
  }
  ev = ev_at('X', NULL, "no cat", i++);
  put_rc(r, tw_emit(w, &ev));

  /* Args of every type. */
  all[0] = tw_arg_int("int", -5);
  all[1] = tw_arg_int("int_min", INT64_MIN);
  all[2] = tw_arg_uint("uint", 7);
  all[3] = tw_arg_uint("uint_max", UINT64_MAX);
  all[4] = tw_arg_double("tenth", 0.1);
  all[5] = tw_arg_double("huge", 1e300);
  all[6] = tw_arg_double("negzero", -0.0);
  all[7] = tw_arg_double("subnormal", 5e-324);
  all[8] = tw_arg_double("whole", 2.0);
  all[9] = tw_arg_bool("yes", 1);
  all[10] = tw_arg_bool("no", 0);
  all[11] = tw_arg_null("null");
  all[12] = tw_arg_str("str", "text");
  all[13] = tw_arg_str("nullstr", NULL);
  all[14] = tw_arg_json("json", json);
  all[15] = tw_arg_json("nulljson", NULL);
  put_rc(r, emit_args(w, 'X', "all types", i++, all, 16));
  put_rc(r, emit_args(w, 'B', "all types", i++, all, 16));
  one = tw_arg_strn("nul inside", "a\0b\x01", 4);
  put_rc(r, emit_args(w, 'i', "strn", i++, &one, 1));
  one = tw_arg_double("nan", NAN);
  put_rc(r, emit_args(w, 'X', "nan", i++, &one, 1));
  one = tw_arg_double("inf", -INFINITY);
  put_rc(r, emit_args(w, 'X', "inf", i++, &one, 1));
  one = tw_arg_json("bad json", "{\"a\":}");
  put_rc(r, emit_args(w, 'X', "bad json", i++, &one, 1));
  one = tw_arg_json("two values", "1 2");
  put_rc(r, emit_args(w, 'X', "bad json", i++, &one, 1));

  /* Escapes and UTF-8, valid and not. */
  ev = ev_at('X', "c\r\b\f\\", "q\"b\\s\n\t\x01\x1f/\x7f", i++);
  put_rc(r, tw_emit(w, &ev));
  ev = ev_at('X', "\xc3\xa9\xe2\x82\xac", "\xf0\x9f\x98\x80 \xe2\x80\xa8", i++);
  put_rc(r, tw_emit(w, &ev));
  static const char *const bad_utf8[] = {
    "\xff\xfe", "over\xc0\xaflong", "surrogate \xed\xa0\x80",
    "cut \xe2\x82", "above \xf4\x90\x80\x80", "lone \x80 continuation",
    "\xe0\x80\x80", "ok \xc3"
  };
  for (size_t k = 0; k < sizeof bad_utf8 / sizeof *bad_utf8; k++) {
    ev = ev_at('X', "cat", bad_utf8[k], i++);
    put_rc(r, tw_emit(w, &ev));
    ev = ev_at('B', bad_utf8[k], "bad cat", i++);
    put_rc(r, tw_emit(w, &ev));
    one = tw_arg_str("s", bad_utf8[k]);
    put_rc(r, emit_args(w, 'X', "bad value", i++, &one, 1));
    one = tw_arg_int(bad_utf8[k], 1);
    put_rc(r, emit_args(w, 'X', "bad key", i++, &one, 1));
  }
  one = tw_arg_str("control", big_ctl);
  put_rc(r, emit_args(w, 'X', "escaped six times", i++, &one, 1));

  /* Longer than max_string (in the runs that set it to 64). */
  ev = ev_at('X', "cat", long_name, i++);
  put_rc(r, tw_emit(w, &ev));
  one = tw_arg_str("long", long_utf8);
  put_rc(r, emit_args(w, 'X', "long value", i++, &one, 1));
  one = tw_arg_int(long_name, 3);
  put_rc(r, emit_args(w, 'X', "long key", i++, &one, 1));

  /* Bad events. */
  ev = ev_at('X', "cat", NULL, i++);
  put_rc(r, tw_emit(w, &ev));                      /* no name */
  ev = ev_at('i', "cat", "scope", i++);
  ev.instant_scope = 'x';
  put_rc(r, tw_emit(w, &ev));
  ev = ev_at('X', "cat", "late", i++);
  ev.ts = UINT64_C(1) << 63;
  put_rc(r, tw_emit(w, &ev));
  ev = ev_at('X', "cat", "long dur", i++);
  ev.dur = (UINT64_C(1) << 63) - ev.ts;
  put_rc(r, tw_emit(w, &ev));
  ev = ev_at('X', "cat", "big pid", i++);
  ev.has |= TW_HAS_PID;
  ev.pid = INT64_C(1) << 40;
  put_rc(r, tw_emit(w, &ev));
  ev = ev_at('X', "cat", "big tid", i++);
  ev.has |= TW_HAS_TID;
  ev.tid = -1;
  put_rc(r, tw_emit(w, &ev));
  ev = ev_at('X', "cat", "given pid tid", i++);
  ev.has |= TW_HAS_PID | TW_HAS_TID;
  ev.pid = 42;
  ev.tid = 43;
  put_rc(r, tw_emit(w, &ev));
  one = tw_arg_int("x", 1);
  one.type = 99;
  put_rc(r, emit_args(w, 'X', "bad type", i++, &one, 1));
  one = tw_arg_int(NULL, 1);
  put_rc(r, emit_args(w, 'X', "no key", i++, &one, 1));
  ev = ev_at('X', "cat", "args NULL", i++);
  ev.nargs = 1;
  put_rc(r, tw_emit(w, &ev));
  ev = ev_at('Q', "cat", "no such phase", i++);
  put_rc(r, tw_emit(w, &ev));
  ev = ev_at('X', "cat", "reserved", i++);
  ev.reserved[0] = &ev;
  put_rc(r, tw_emit(w, &ev));
  ev = ev_at('X', "cat", "unknown has", i++);
  ev.has |= 0x80;
  put_rc(r, tw_emit(w, &ev));
  ev = ev_at('X', "cat", "unknown flag", i++);
  ev.flags = 0x80;
  put_rc(r, tw_emit(w, &ev));

  /* More args than an entry holds, and the other phases and fields (the
   * producer formats them). */
  for (int k = 0; k < 20; k++)
    many[k] = tw_arg_int("k", k);
  put_rc(r, emit_args(w, 'X', "twenty args", i++, many, 20));
  put_rc(r, emit_args(w, 'C', "counter", i++, all, 3));
  put_rc(r, emit_args(w, 'C', "counter of strings", i++, all + 12, 1));
  static const char async_ph[] = { 'b', 'n', 'e', 's', 't', 'f', 'N', 'O',
                                   'D' };
  for (size_t k = 0; k < sizeof async_ph; k++) {
    ev = ev_at(async_ph[k], k % 2 ? "cat" : NULL, "with id", i++);
    ev.has |= TW_HAS_ID;
    ev.id = 0xabc0 + k;
    ev.flags = async_ph[k] == 'f' ? TW_EV_BP_ENCLOSING : 0;
    put_rc(r, tw_emit(w, &ev));
    ev.has &= ~TW_HAS_ID;
    put_rc(r, tw_emit(w, &ev));                    /* no id */
  }
  ev = ev_at('M', NULL, "thread_name", i++);
  one = tw_arg_str("name", "deferred thread");
  ev.args = &one;
  ev.nargs = 1;
  put_rc(r, tw_emit(w, &ev));
  ev = ev_at('X', "cat", "thread times", i++);
  ev.has |= TW_HAS_TTS | TW_HAS_TDUR;
  ev.tts = 5000;
  ev.tdur = 700;
  put_rc(r, tw_emit(w, &ev));
  ev = ev_at('X', "cat", "flows", i++);
  ev.has |= TW_HAS_ID | TW_HAS_BIND_ID;
  ev.id = 7;
  ev.bind_id = 9;
  ev.flags = TW_EV_ID2_LOCAL | TW_EV_FLOW_IN | TW_EV_FLOW_OUT;
  put_rc(r, tw_emit(w, &ev));
  ev = ev_at('X', "cat", "good color", i++);
  ev.cname = "good";
  put_rc(r, tw_emit(w, &ev));
  ev.cname = "no such color";
  put_rc(r, tw_emit(w, &ev));
  ev = ev_at('b', "cat", "scoped", i++);
  ev.has |= TW_HAS_ID;
  ev.id = 3;
  ev.id_scope = "scope \"q\"";
  put_rc(r, tw_emit(w, &ev));
  ev = ev_at('R', "cat", "mark", i++);
  put_rc(r, tw_emit(w, &ev));
  one = tw_arg_str("sync_id", "abc");
  put_rc(r, emit_args(w, 'c', "clock_sync", i++, &one, 1));
  put_rc(r, emit_args(w, 'c', "clock_sync", i++, NULL, 0));

  /* The helpers. */
  put_rc(r, tw_complete(w, "cat", "helper", TS0, 10, NULL, 0));
  put_rc(r, tw_complete(w, "cat", "helper args", TS0, 10, all, 16));
  emit_helper_strings(w, r, i);
}

/* The catalogue under each option that changes what a check decides. */
static void test_catalogue(void **state)
{
  static const char *const opts[] = {
    "commit=background",
    "commit=background,utf8=reject",
    "commit=background,nonfinite=reject",
    "commit=background,max_string=64",
    "commit=background,max_string=64,long=reject",
    "commit=background,utf8=reject,nonfinite=reject,long=reject",
    "commit=background,buffer=256",
    "commit=background,format=object,flush=1ms",
    "commit=background,max_event=4KiB",
  };
  (void)state;

  for (size_t k = 0; k < sizeof opts / sizeof *opts; k++)
    compare_runs(opts[k], 0, emit_catalogue);
  compare_runs("sink=gzip", 1, emit_catalogue);
  compare_runs("sink=gzip,utf8=reject,buffer=1KiB", 1, emit_catalogue);
}

/* ------------------------------------------------- random hostile events */

/* The seed of the hostile events, the same for both writers. */
static unsigned hostile_seed;

static uint64_t hostile_next(uint64_t *x)
{
  *x ^= *x << 13;
  *x ^= *x >> 7;
  *x ^= *x << 17;
  return *x;
}

/* Strings with no fault and with one: invalid UTF-8, control bytes,
 * escapes, longer than max_string=64 (once escaped or as bytes), cut
 * inside a character past the limit. */
static const char *const hostile_strings[] = {
  "ok", "", "q\"b\\s\n\t", "\x01\x1f", "gr\xc3\xb6\xc3\x9f" "e",
  "\xff", "bad \xc3", "\xed\xa0\x80", "\xc0\xaf", "\xf4\x90\x80\x80",
  "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn",
  "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
  "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
  "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
  "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xff",
  "long and bad \xfe nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn",
};
#define NHOSTILE_STR (sizeof hostile_strings / sizeof *hostile_strings)

/* Raw JSON: valid, invalid, invalid UTF-8 inside a valid shape, long. */
static const char *const hostile_json[] = {
  "1", "{\"a\":[1,2.5,null]}", "\"\xc3\xa9\"", "[1,,2]", "{\"a\":}",
  "\"\xff\"", "[\"\xc3\"", "tru", "\"nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"
  "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn\"", "\"\x01\"", "",
};
#define NHOSTILE_JSON (sizeof hostile_json / sizeof *hostile_json)

/* One arg drawn from x: any type, faults among them. */
static tw_arg hostile_arg(uint64_t *x)
{
  static const double dbl[] = { 0.5, -1e300, 5e-324, NAN, INFINITY,
                                -INFINITY };
  uint64_t r = hostile_next(x);
  const char *name = hostile_strings[(r >> 8) % NHOSTILE_STR];

  switch (r % 6) {
  case 0:
    return tw_arg_int(name, (int64_t)(r >> 16));
  case 1:
    return tw_arg_double(name, dbl[(r >> 16) % 6]);
  case 2:
    return tw_arg_bool(name, (int)(r >> 16) & 1);
  case 3:
    return tw_arg_json(name, hostile_json[(r >> 16) % NHOSTILE_JSON]);
  case 4:
    return tw_arg_null(name);
  default:
    return tw_arg_str(name, hostile_strings[(r >> 16) % NHOSTILE_STR]);
  }
}

/* 2,000 random hostile events (seeded: hostile_seed), most with two or
 * more faults among name, cat and args; each call's value recorded. */
static void emit_hostile(tw_writer *w, run_result *r)
{
  static const char phases[] = { 'X', 'B', 'E', 'i', 'C', 'b', 'e', 'n',
                                 's', 't', 'f', 'M', 'O', 'N', 'D', 'P' };
  uint64_t x = 0x9e3779b97f4a7c15ull ^ hostile_seed;
  tw_arg args[6];

  for (uint64_t i = 0; i < 2000; i++) {
    uint64_t k = hostile_next(&x);
    tw_event ev = ev_at(phases[k % sizeof phases],
                        k >> 8 & 1 ? hostile_strings[(k >> 9) % NHOSTILE_STR]
                                   : NULL,
                        hostile_strings[(k >> 16) % NHOSTILE_STR], i);
    size_t nargs = (k >> 24) % 7;

    for (size_t a = 0; a < nargs; a++)
      args[a] = hostile_arg(&x);
    ev.args = args;
    ev.nargs = nargs;
    if (ev.ph == 'C' || ev.ph == 'b' || ev.ph == 'e' || ev.ph == 'n' ||
        ev.ph == 's' || ev.ph == 't' || ev.ph == 'f') {
      ev.has |= TW_HAS_ID;
      ev.id = k >> 40;
    }
    put_rc(r, tw_emit(w, &ev));
  }
}

/* The same random hostile events through both formatters, strictest
 * options and default ones: the same value from every call (the order
 * of checks is one rule, tw_emit(3)), the same counters, the same
 * file. */
static void test_hostile(void **state)
{
  static const char *const opts[] = {
    "commit=background,utf8=reject,nonfinite=reject,long=reject,"
    "max_string=64",
    "commit=background,utf8=reject,nonfinite=reject,long=reject,"
    "max_string=64,buffer=256",
    "commit=background,utf8=reject,nonfinite=reject,max_string=64,"
    "buffer=256",
    "commit=background,utf8=reject,long=reject,max_string=64,buffer=256",
    "commit=background,nonfinite=reject,long=reject,max_string=64,"
    "buffer=256",
    "commit=background,max_string=64",
  };
  (void)state;

  hostile_seed = tu_seed("hostile events");
  for (size_t k = 0; k < sizeof opts / sizeof *opts; k++)
    compare_runs(opts[k], 0, emit_hostile);
}

/* tw_begin, tw_end and tw_instant (the time of the call) with the
 * helpers' strings, every scope and a bad one. */
static void emit_helper_phases(tw_writer *w, run_result *r)
{
  static const char scopes[] = { 0, 'g', 'p', 't', 'x' };
  tw_arg one = tw_arg_str("s", "v");

  for (size_t a = 0; a < NHELPER; a++) {
    const char *s = helper_strings[a], *t = helper_strings[NHELPER - 1 - a];
    put_rc(r, tw_begin(w, t, s, NULL, 0));
    put_rc(r, tw_begin(w, "cat", s, &one, 1));
    put_rc(r, tw_end(w, t, s, NULL, 0));
    put_rc(r, tw_end(w, NULL, NULL, NULL, 0));
    put_rc(r, tw_instant(w, s, t, scopes[a % 5], NULL, 0));
    put_rc(r, tw_instant(w, NULL, s, scopes[(a + 1) % 5], &one, 1));
  }
  put_rc(r, tw_begin(w, "cat", NULL, NULL, 0));
}

static void test_helper_phases(void **state)
{
  static const char *const opts[] = {
    "commit=background",
    "commit=background,utf8=reject",
    "commit=background,max_string=64,long=reject",
    "commit=background,buffer=256",
  };
  (void)state;

  for (size_t k = 0; k < sizeof opts / sizeof *opts; k++)
    compare_runs_any_ts(opts[k], emit_helper_phases);
}

/* The catalogue's first events, field by field against what was given:
 * the deferred path writes what the caller emitted. */
static void test_fields(void **state)
{
  char *path = tu_tmppath(".json");
  tw_writer *w = open_with(path, "commit=background", "committer");
  run_result *r = calloc(1, sizeof *r);
  jc_doc *d;
  jc_val e, args;
  int64_t v;

  (void)state;
  assert_non_null(r);
  emit_catalogue(w, r);
  assert_int_equal(tw_close(w), 0);
  d = tu_load(path);
  e = jc_first(d, tu_events(d));
  tu_assert_str(d, e, "name", "process_name");
  e = jc_next(d, e);
  tu_assert_str(d, e, "ph", "X");
  tu_assert_str(d, e, "name", "complete");
  tu_assert_str(d, e, "cat", "cat");
  tu_assert_us(d, e, "ts", TS0);
  tu_assert_us(d, e, "dur", 1500);
  tu_assert_int(d, e, "pid", (int64_t)getpid());
  e = jc_next(d, e);
  tu_assert_str(d, e, "ph", "B");
  tu_assert_us(d, e, "ts", TS0 + 1000);
  tu_assert_absent(d, e, "dur");
  e = jc_next(d, e);
  tu_assert_str(d, e, "ph", "E");
  tu_assert_absent(d, e, "name");
  e = jc_next(d, e);
  tu_assert_str(d, e, "name", "end");
  for (int k = 0; k < 4; k++) {
    static const char *const s[] = { "g", "p", "t", "t" };
    e = jc_next(d, e);
    tu_assert_str(d, e, "ph", "I");
    tu_assert_str(d, e, "s", s[k]);
  }
  e = jc_next(d, e);
  tu_assert_absent(d, e, "cat");
  e = jc_next(d, e);
  tu_assert_str(d, e, "name", "all types");
  args = jc_get(d, e, "args");
  assert_int_equal(jc_int64(d, jc_get(d, args, "int"), &v), 0);
  assert_int_equal(v, -5);
  assert_int_equal(jc_int64(d, jc_get(d, args, "int_min"), &v), 0);
  assert_true(v == INT64_MIN);
  assert_true(jc_num(d, jc_get(d, args, "uint_max")) == (double)UINT64_MAX);
  assert_true(jc_num(d, jc_get(d, args, "tenth")) == 0.1);
  assert_true(jc_num(d, jc_get(d, args, "huge")) == 1e300);
  assert_true(jc_num(d, jc_get(d, args, "subnormal")) == 5e-324);
  assert_int_equal(jc_type(d, jc_get(d, args, "yes")), JC_TRUE);
  assert_int_equal(jc_type(d, jc_get(d, args, "no")), JC_FALSE);
  assert_int_equal(jc_type(d, jc_get(d, args, "null")), JC_NULL);
  tu_assert_str(d, args, "str", "text");
  assert_int_equal(jc_type(d, jc_get(d, args, "nullstr")), JC_NULL);
  assert_int_equal(jc_type(d, jc_get(d, args, "json")), JC_OBJECT);
  assert_int_equal(jc_type(d, jc_get(d, args, "nulljson")), JC_NULL);
  jc_free(d);
  free(r);
  tu_cleanup(path);
}

/* Records of every size: larger than a slot (committed at once), within
 * a slot but too large to defer (formatted by the producer), and small
 * ones that grow six times once escaped, past what the committer's
 * buffer holds at once. */
static void emit_sizes(tw_writer *w, run_result *r)
{
  static char text[40000];

  for (size_t k = 0; k < sizeof text - 1; k++)
    text[k] = k % 7 == 0 ? '\x02' : k % 5 == 0 ? '"' : (char)('a' + k % 26);
  for (uint64_t i = 0; i < 600; i++) {
    static const size_t sizes[] = { 0, 10, 700, 1500, 3000, 5000, 9000,
                                    20000, 39000, 100 };
    size_t n = sizes[i % 10] - (i % 3);
    tw_arg arg = tw_arg_strn("s", text + i % 11, n > 40000 ? 0 : n);
    tw_arg num = tw_arg_uint("i", i);
    tw_arg args[2] = { num, arg };
    put_rc(r, emit_args(w, i % 2 ? 'X' : 'B', "sized", i, args, 2));
  }
}

static void test_sizes(void **state)
{
  (void)state;
  compare_runs("commit=background,buffer=4KiB,max_string=64KiB", 0,
               emit_sizes);
  compare_runs("commit=background,buffer=64KiB,buffers=2,max_string=64KiB",
               0, emit_sizes);
  compare_runs("sink=gzip,buffer=16KiB,max_string=64KiB", 1, emit_sizes);
}

/* The counters of a deferred event: its bytes count once it is
 * formatted, at the commit; before, only the event.  (With the producer
 * formatting, at once.)  This also shows that the path is taken. */
static void test_stats_when_formatted(void **state)
{
  char *path = tu_tmppath(".json");
  const char *fmt[] = { "committer", "producer" };
  (void)state;

  uint64_t bytes[2];

  for (int k = 0; k < 2; k++) {
    tw_writer *w = open_with(path, "commit=background", fmt[k]);
    tw_stats before, staged, after;
    assert_int_equal(tw_get_stats(w, &before), 0);
    assert_int_equal(tw_complete(w, "cat", "one", TS0, 5, NULL, 0), 0);
    assert_int_equal(tw_get_stats(w, &staged), 0);
    assert_int_equal(staged.events, before.events + 1);
    if (k == 0)
      assert_int_equal(staged.bytes, before.bytes);
    else
      assert_true(staged.bytes > before.bytes);
    assert_int_equal(tw_flush(w), 0);
    assert_int_equal(tw_get_stats(w, &after), 0);
    assert_true(after.bytes > before.bytes);
    bytes[k] = after.bytes;
    assert_int_equal(tw_close(w), 0);
  }
  assert_int_equal(bytes[0], bytes[1]);
  tu_cleanup(path);
}

/* Without a committer thread (commit=inline, the mmap sink) the option
 * changes nothing: producers format, the bytes count at once. */
static void test_no_committer(void **state)
{
  static const char *const opts[] = { "commit=inline", "sink=mmap" };
  (void)state;

  for (size_t k = 0; k < sizeof opts / sizeof *opts; k++) {
    char *path = tu_tmppath(".json");
    tw_writer *w = open_with(path, opts[k], "committer");
    tw_stats before, after;
    jc_doc *d;
    jc_val e;
    assert_int_equal(tw_get_stats(w, &before), 0);
    assert_int_equal(tw_complete(w, "cat", "one", TS0, 5, NULL, 0), 0);
    assert_int_equal(tw_get_stats(w, &after), 0);
    assert_int_equal(after.events, before.events + 1);
    assert_true(after.bytes > before.bytes);
    assert_int_equal(tw_close(w), 0);
    d = tu_load(path);
    e = jc_next(d, jc_first(d, tu_events(d)));
    tu_assert_str(d, e, "name", "one");
    tu_assert_us(d, e, "dur", 5);
    jc_free(d);
    tu_cleanup(path);
  }
}

/* --------------------------------------------------------- threads */

#define NTHREADS 4
#define PER_THREAD 3000

typedef struct thread_arg {
  tw_writer *w;
  int t;
  int failed;
} thread_arg;

static void *thread_main(void *p)
{
  thread_arg *a = p;
  char s[64];

  for (uint64_t i = 0; i < PER_THREAD; i++) {
    tw_event ev = ev_at(i % 3 ? 'X' : 'i', "thr", "ev", i);
    tw_arg args[2];
    snprintf(s, sizeof s, "t%d \"%llu\"\n", a->t, (unsigned long long)i);
    args[0] = tw_arg_int("i", (int64_t)i);
    args[1] = tw_arg_str("s", s);
    ev.has |= TW_HAS_TID;
    ev.tid = 1000 + a->t;
    ev.args = args;
    ev.nargs = 2;
    if (tw_emit(a->w, &ev) != 0)
      a->failed = 1;
  }
  return NULL;
}

static void emit_threads(tw_writer *w, run_result *r)
{
  pthread_t th[NTHREADS];
  thread_arg a[NTHREADS];

  for (int t = 0; t < NTHREADS; t++) {
    a[t] = (thread_arg){ w, t, 0 };
    assert_int_equal(pthread_create(&th[t], NULL, thread_main, &a[t]), 0);
  }
  for (int t = 0; t < NTHREADS; t++) {
    assert_int_equal(pthread_join(th[t], NULL), 0);
    put_rc(r, a[t].failed);
  }
}

/* One thread's records, in their order. */
static records thread_records(const records *all, int t)
{
  records r = { NULL, 0, NULL };
  char tid[32];

  snprintf(tid, sizeof tid, "\"tid\":%d", 1000 + t);
  r.line = calloc(all->n + 1, sizeof *r.line);
  assert_non_null(r.line);
  for (size_t i = 0; i < all->n; i++)
    if (strstr(all->line[i], tid))
      r.line[r.n++] = all->line[i];
  return r;
}

static void compare_threads(const char *opts, int gz)
{
  run_result *a, *b;
  records ra, rb;

  run_both(opts, gz, emit_threads, &a, &b);
  for (size_t i = 0; i < a->nrc; i++)
    assert_int_equal(a->rc[i], 0);
  assert_int_equal(a->stats.events, b->stats.events);
  assert_int_equal(a->stats.bytes, b->stats.bytes);
  jc_free(tu_load_mem(a->trace, a->len));      /* strict JSON */
  jc_free(tu_load_mem(b->trace, b->len));
  ra = records_of(a->trace, a->len);
  rb = records_of(b->trace, b->len);
  assert_int_equal(ra.n, rb.n);
  for (int t = 0; t < NTHREADS; t++) {
    records ta = thread_records(&ra, t), tb = thread_records(&rb, t);
    assert_int_equal(ta.n, PER_THREAD);
    assert_same_records(&ta, &tb, opts);
    free(ta.line);
    free(tb.line);
  }
  records_free(&ra);
  records_free(&rb);
  free(a);
  free(b);
}

static void test_threads(void **state)
{
  (void)state;
  compare_threads("commit=background,buffer=4KiB,buffers=2", 0);
  compare_threads("commit=background,buffer=64KiB,flush=1ms", 0);
  compare_threads("sink=gzip,buffer=8KiB", 1);
}

/* -------------------------------------------------------- rotation */

/* Every file of a rotated trace at path (the finished ones in order,
 * then the live one), strict JSON each, as one list of records without
 * each file's metadata; finished files hold at least rotate bytes. */
static records rotated_records(const char *path, size_t rotate, int gz,
                               unsigned *files)
{
  char pattern[4096], *all = NULL;
  size_t total = 0;
  glob_t g;
  records r;

  snprintf(pattern, sizeof pattern, "%.*s.[0-9][0-9][0-9][0-9][0-9][0-9]%s",
           (int)(strlen(path) - (gz ? 8 : 5)), path, gz ? ".json.gz" : ".json");
  assert_int_equal(glob(pattern, 0, NULL, &g), 0);
  *files = (unsigned)g.gl_pathc + 1;
  for (size_t k = 0; k <= g.gl_pathc; k++) {
    const char *f = k < g.gl_pathc ? g.gl_pathv[k] : path;
    struct stat st;
    size_t len;
    char *t = read_trace(f, gz, &len);
    jc_free(tu_load_mem(t, len));
    assert_int_equal(stat(f, &st), 0);
    if (k < g.gl_pathc)
      assert_true((size_t)st.st_size >= rotate);
    all = realloc(all, total + len + 1);
    assert_non_null(all);
    memcpy(all + total, t, len);
    total += len;
    all[total++] = '\n';
    free(t);
    if (k < g.gl_pathc)
      unlink(f);
  }
  globfree(&g);
  r = records_of(all, total);
  /* Keep only the events: drop heads, tails and metadata. */
  size_t n = 0;
  for (size_t i = 0; i < r.n; i++)
    if (r.line[i][0] == '{' && !strstr(r.line[i], "\"ph\":\"M\""))
      r.line[n++] = r.line[i];
  r.n = n;
  return r;
}

static void emit_many(tw_writer *w, run_result *r)
{
  for (uint64_t i = 0; i < 3000; i++) {
    tw_arg arg = tw_arg_str("s", i % 4 ? "plain" : "esc\x01\x02\x03\"");
    put_rc(r, emit_args(w, 'X', "rot", i, &arg, 1));
  }
}

static void test_rotation(void **state)
{
  static const struct { const char *opts; int gz; } cfg[] = {
    { "commit=background,buffer=1KiB,rotate=4KiB", 0 },
    { "commit=background,buffer=16KiB,rotate=32KiB", 0 },
    { "sink=gzip,buffer=4KiB,rotate=4KiB", 1 },
  };
  (void)state;

  for (size_t c = 0; c < sizeof cfg / sizeof *cfg; c++) {
    records rec[2];
    unsigned files[2];
    for (int k = 0; k < 2; k++) {
      char *path = tu_tmppath(cfg[c].gz ? ".json.gz" : ".json");
      tw_writer *w = open_with(path, cfg[c].opts,
                               k ? "producer" : "committer");
      run_result *r = calloc(1, sizeof *r);
      tw_stats st;
      assert_non_null(r);
      emit_many(w, r);
      for (size_t i = 0; i < r->nrc; i++)
        assert_int_equal(r->rc[i], 0);
      assert_int_equal(tw_get_stats(w, &st), 0);
      assert_int_equal(tw_close(w), 0);
      rec[k] = rotated_records(path, cfg[c].gz ? 1 : 4096, cfg[c].gz,
                               &files[k]);
      assert_true(files[k] >= 3);
      assert_true(st.rotations >= 2);
      free(r);
      tu_cleanup(path);
    }
    assert_int_equal(rec[0].n, 3000);
    assert_same_records(&rec[0], &rec[1], cfg[c].opts);
    records_free(&rec[0]);
    records_free(&rec[1]);
  }
}

/* ----------------------------------------------------------- crash */

static void emit_crash_load(tw_writer *w, run_result *r)
{
  char s[400];

  memset(s, '\x03', sizeof s - 1);
  s[sizeof s - 1] = '\0';
  emit_catalogue(w, r);
  for (uint64_t i = 0; i < 4000; i++) {
    tw_arg args[2] = { tw_arg_uint("i", i), tw_arg_str("s", s + i % 300) };
    put_rc(r, emit_args(w, 'X', "staged", i, args, 2));
  }
}

/* The child: write, then die by sig without closing. */
static void crash_child(const char *path, const char *opts, int sig)
{
  static const int hooked[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT,
                                SIGTERM };
  static run_result r;
  struct rlimit no_core = { 0, 0 };
  char all[256];
  tw_writer *w;

  for (size_t k = 0; k < sizeof hooked / sizeof *hooked; k++)
    signal(hooked[k], SIG_DFL);
  (void)setrlimit(RLIMIT_CORE, &no_core);
  snprintf(all, sizeof all, "%s,crash=commit", opts);
  w = open_with(path, all, "committer");
  emit_crash_load(w, &r);
  if (sig == SIGSEGV) {
    volatile char *page = mmap(NULL, 4096, PROT_NONE,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHILD_CHECK(page != MAP_FAILED);
    page[0] = 1;                            /* a real fault */
  }
  raise(sig);
  _exit(3);
}

static void test_crash(void **state)
{
  static const struct { const char *opts; int gz; int sig; } cfg[] = {
    { "commit=background,buffer=1MiB", 0, SIGSEGV },
    { "commit=background,buffer=1MiB", 0, SIGTERM },
    { "commit=background,buffer=64KiB,buffers=8", 0, SIGABRT },
    { "sink=gzip,buffer=1MiB", 1, SIGSEGV },
  };
  (void)state;

  for (size_t c = 0; c < sizeof cfg / sizeof *cfg; c++) {
    char *path = tu_tmppath(cfg[c].gz ? ".json.gz" : ".json");
    run_result *ref = calloc(1, sizeof *ref);
    records rc, rr;
    size_t len;
    char *trace;
    int status;
    pid_t pid;

    assert_non_null(ref);
    fflush(NULL);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
      crash_child(path, cfg[c].opts, cfg[c].sig);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != cfg[c].sig)
      fail_msg("%s: child status %#x, expected death by signal %d",
               cfg[c].opts, status, cfg[c].sig);
    trace = read_trace(path, cfg[c].gz, &len);
    tu_cleanup(path);
    run(cfg[c].opts, "producer", cfg[c].gz, emit_crash_load, ref);
    zero_pids(trace, &len);
    zero_pids(ref->trace, &ref->len);
    assert_same_fields(trace, len, ref->trace, ref->len, cfg[c].opts);
    rc = records_of(trace, len);
    rr = records_of(ref->trace, ref->len);
    assert_same_records(&rc, &rr, cfg[c].opts);
    records_free(&rc);
    records_free(&rr);
    free(ref);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_catalogue),
    cmocka_unit_test(test_hostile),
    cmocka_unit_test(test_helper_phases),
    cmocka_unit_test(test_fields),
    cmocka_unit_test(test_sizes),
    cmocka_unit_test(test_stats_when_formatted),
    cmocka_unit_test(test_no_committer),
    cmocka_unit_test(test_threads),
    cmocka_unit_test(test_rotation),
    cmocka_unit_test(test_crash),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
