/* test_tools.c -- "tracewriter cat", "merge", "slice" and "stats"
 * (tools/cat.c, merge.c, slice.c, stats.c on tools/tracein.c)
 *
 * Every output is read back with the strict checker and compared field
 * by field with what was written: a rotated run joined by cat holds each
 * event exactly once, in order, and its names once; merge keeps every
 * event of two traces once, remaps a colliding pid with its names and
 * puts the second trace on the first one's clock from their clock
 * records (written by hand with a known offset), or by --offset; slice
 * keeps exactly the events its rules keep, computed here from the
 * events; stats counts what was written.  Every command reads a cut file
 * and a .json.gz, and writes .json.gz; hostile inputs (empty, not a
 * trace, a directory, a FIFO, random bytes, a truncated .gz) give exit
 * status 1 and a message naming the file, at once.  Every option of
 * each command's table (cat, merge, slice, stats, split, repair,
 * snapshot, demo) is in its --help and taken by its parser.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mkfifo */
#endif

#include "testutil.h"
#include "tooltest.h"

#include <ctype.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <unistd.h>

#include "command.h"
#include "repair.h"
#include "snapshot.h"

typedef int (*main_fn)(int, char **);

/* ============================================================ helpers */

/* Write a trace by hand: "[", the records one a line, "]". */
static void write_records(const char *path, char *const *recs, size_t n)
{
  FILE *f = fopen(path, "w");

  assert_non_null(f);
  fputs("[\n", f);
  for (size_t i = 0; i < n; i++)
    fprintf(f, "%s%s", i ? ",\n" : "", recs[i]);
  fputs("\n]\n", f);
  assert_int_equal(fclose(f), 0);
}

/* A growing list of records written by hand. */
typedef struct recs {
  char **v;
  size_t n;
} recs;

TWT_CLI_PRINTF(2, 3)
static void add(recs *r, const char *fmt, ...)
{
  va_list ap;
  char *s;

  va_start(ap, fmt);
  assert_true(vasprintf(&s, fmt, ap) >= 0);
  va_end(ap);
  r->v = realloc(r->v, (r->n + 1) * sizeof *r->v);
  assert_non_null(r->v);
  r->v[r->n++] = s;
}

static void recs_free(recs *r)
{
  for (size_t i = 0; i < r->n; i++)
    free(r->v[i]);
  free(r->v);
  r->v = NULL;
  r->n = 0;
}

/* An integer member of an event's args, or -1. */
static int64_t arg_int(const jc_doc *d, jc_val ev, const char *key)
{
  int64_t v;

  if (jc_int64(d, jc_get(d, jc_get(d, ev, "args"), key), &v) != 0)
    return -1;
  return v;
}

static int64_t get_int(const jc_doc *d, jc_val ev, const char *key)
{
  int64_t v = 0;

  assert_int_equal(jc_int64(d, jc_get(d, ev, key), &v), 0);
  return v;
}

/* ts in ns (which must be there). */
static int64_t get_ts(const jc_doc *d, jc_val ev)
{
  uint64_t ns = 0;

  assert_int_equal(jc_us_to_ns(d, jc_get(d, ev, "ts"), &ns), 0);
  return (int64_t)ns;
}

static int is_ph(const jc_doc *d, jc_val ev, const char *ph)
{
  return jc_streq(d, jc_get(d, ev, "ph"), ph);
}

/* The text of a file contains s. */
static int file_has(const char *path, const char *s)
{
  char *buf = tu_read_file(path, NULL);
  int yes = strstr(buf, s) != NULL;

  free(buf);
  return yes;
}

/* Compress the file in to out (one gzip member). */
static void gzip_file(const char *in, const char *out)
{
  size_t len, gzlen;
  char *buf = tu_read_file(in, &len);
  unsigned char *gz = tt_gz_member(buf, len, &gzlen);

  tt_write_bytes(out, gz, gzlen);
  free(gz);
  free(buf);
}

/* ================================================================ cat */

#define CAT_N 600

static tw_writer *open_rotating(const char *path)
{
  tw_options o;
  char err[256];
  int rc = 0;
  tw_writer *w;

  tw_options_init(&o);
  o.process_name = "rotating";
  assert_int_equal(tw_options_parse(&o, "rotate=4k,buffer=4k", err,
                                    sizeof err), 0);
  w = tw_open(path, &o, &rc);
  assert_non_null(w);
  return w;
}

/* cat's output at out holds the X events i = 0 .. CAT_N - 1, each once,
 * in order. */
static void assert_each_step_once(const char *out)
{
  jc_doc *d = tt_load_file(out);
  jc_val v;
  int64_t next = 0;

  for (v = jc_first(d, tu_events(d)); v >= 0; v = jc_next(d, v))
    if (is_ph(d, v, "X"))
      assert_int_equal(arg_int(d, v, "i"), next++);
  assert_int_equal(next, CAT_N);
  jc_free(d);
}

/* A rotated run: cat of its live path holds each event once, in order,
 * one process_name, one thread_name, one clock record. */
static void test_cat_rotated(void **state)
{
  char *dir = tt_make_fast_dir();
  char *live = tt_in_dir(dir, "run.json"), *out = tt_in_dir(dir, "all.json");
  char *err = tt_in_dir(dir, "err.txt");
  char *argv[] = { "cat", "-o", out, live, NULL };
  tw_stats st;
  tw_writer *w = open_rotating(live);
  jc_doc *d;
  jc_val ev, v;
  int64_t next = 0;
  int procs = 0, threads = 0, clocks = 0;
  (void)state;

  assert_int_equal(tw_thread_name(w, "main-t"), 0);
  for (int64_t i = 0; i < CAT_N; i++) {
    tw_arg a = tw_arg_int("i", i);
    assert_int_equal(tw_complete(w, "cat", "step", 1000000 + (uint64_t)i *
                                 1000, 500, &a, 1), 0);
  }
  assert_int_equal(tw_get_stats(w, &st), 0);
  assert_int_equal(tw_close(w), 0);
  assert_true(st.rotations >= 3);
  assert_int_equal(tt_run_argv(twt_tool_cat_main, argv, NULL, err), 0);
  d = tt_load_file(out);
  ev = tu_events(d);
  for (v = jc_first(d, ev); v >= 0; v = jc_next(d, v)) {
    if (is_ph(d, v, "M")) {
      procs += jc_streq(d, jc_get(d, v, "name"), "process_name");
      threads += jc_streq(d, jc_get(d, v, "name"), "thread_name");
    } else if (is_ph(d, v, "c")) {
      clocks++;
    } else {
      assert_true(is_ph(d, v, "X"));
      assert_int_equal(arg_int(d, v, "i"), next);   /* once, in order */
      assert_int_equal(get_ts(d, v), 1000000 + next * 1000);
      next++;
    }
  }
  assert_int_equal(next, CAT_N);
  assert_int_equal(procs, 1);
  assert_int_equal(threads, 1);
  assert_int_equal(clocks, 1);
  jc_free(d);
  /* Killed inside a rotation, between its link and its rename: the live
   * file has its numbered name too.  Read once. */
  {
    char name[64];
    char *linked;
    snprintf(name, sizeof name, "run.%06llu.json",
             (unsigned long long)st.rotations + 1);
    linked = tt_in_dir(dir, name);
    assert_int_equal(link(live, linked), 0);
    assert_int_equal(tt_run_argv(twt_tool_cat_main, argv, NULL, err), 0);
    assert_each_step_once(out);
    /* And with no hard links, for an instant no live file at all. */
    assert_int_equal(unlink(live), 0);
    assert_int_equal(tt_run_argv(twt_tool_cat_main, argv, NULL, err), 0);
    assert_each_step_once(out);
    assert_int_equal(rename(linked, live), 0);
    free(linked);
  }
  /* --no-parts: the live file alone, a part of the events. */
  {
    char *a2[] = { "cat", "--no-parts", "-o", out, live, NULL };
    assert_int_equal(tt_run_argv(twt_tool_cat_main, a2, NULL, err), 0);
    d = tt_load_file(out);
    assert_true(jc_len(d, tu_events(d)) < CAT_N);
    jc_free(d);
  }
  free(live);
  free(out);
  free(err);
  tt_remove_dir(dir);
}

/* ============================================================== merge */

#define CLOCK_REC "{\"ph\":\"c\",\"name\":\"clock_sync\",\"ts\":%s," \
  "\"pid\":%d,\"tid\":%d,\"args\":{\"sync_id\":\"tracewriter.realtime\"," \
  "\"monotonic_ns\":%" PRId64 ",\"realtime_ns\":%" PRId64 "}}"

/* A trace of process pid named name, with a clock record pairing mono
 * with real (unless mono < 0), and n X events from ts0 (ns) every step,
 * args.i = base + k. */
static void write_process(const char *path, int pid, const char *name,
                          int64_t mono, int64_t real, int64_t ts0,
                          int64_t step, int n, int base)
{
  recs r = { NULL, 0 };
  char ts[TWT_REC_US_MAX + 1];

  add(&r, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"tid\":%d,"
      "\"args\":{\"name\":\"%s\"}}", pid, pid, name);
  if (mono >= 0) {
    ts[twt_rec_us_text(mono, ts)] = '\0';
    add(&r, CLOCK_REC, ts, pid, pid, mono, real);
  }
  for (int k = 0; k < n; k++) {
    ts[twt_rec_us_text(ts0 + k * step, ts)] = '\0';
    add(&r, "{\"ph\":\"X\",\"name\":\"work\",\"cat\":\"m\",\"ts\":%s,"
        "\"dur\":1.000,\"pid\":%d,\"tid\":%d,\"args\":{\"i\":%d}}", ts, pid,
        pid + 1, base + k);
  }
  write_records(path, r.v, r.n);
  recs_free(&r);
}

#define MERGE_N 200
#define SEC ((int64_t)1000000000)

/* Check a merged output: every event of a (i < MERGE_N) and b (i >=
 * MERGE_N) once; a's pid kept, b's remapped (with its name); ts in
 * order; b's moved by shift_b. */
static void check_merge(const char *out, int64_t shift_b, int clocks)
{
  jc_doc *d = tt_load_file(out);
  jc_val ev = tu_events(d), v;
  int seen[2 * MERGE_N] = { 0 }, names = 0, nclocks = 0;
  int64_t last = INT64_MIN, bpid = -1;

  for (v = jc_first(d, ev); v >= 0; v = jc_next(d, v)) {
    int64_t pid = get_int(d, v, "pid"), i;
    if (is_ph(d, v, "M")) {
      jc_val nm = jc_get(d, jc_get(d, v, "args"), "name");
      names++;
      if (jc_streq(d, nm, "alpha"))
        assert_int_equal(pid, 7);
      else if (jc_streq(d, nm, "beta"))
        bpid = bpid < 0 ? pid : bpid;
      else
        fail_msg("an unknown process name");
      continue;
    }
    if (is_ph(d, v, "c")) {
      nclocks++;
      continue;
    }
    i = arg_int(d, v, "i");
    assert_true(i >= 0 && i < 2 * MERGE_N);
    assert_int_equal(seen[i]++, 0);
    assert_true(get_ts(d, v) >= last);               /* in ts order */
    last = get_ts(d, v);
    if (i < MERGE_N) {
      assert_int_equal(pid, 7);
      assert_int_equal(get_ts(d, v), 10 * SEC + i * 1000000);
    } else {
      assert_int_not_equal(pid, 7);                  /* remapped */
      assert_int_equal(pid, bpid);                   /* with its name */
      assert_int_equal(get_int(d, v, "tid"), 8);
      assert_int_equal(get_ts(d, v), 20 * SEC + (i - MERGE_N) * 1000000 +
                       500000 + shift_b);
    }
  }
  for (int i = 0; i < 2 * MERGE_N; i++)
    assert_int_equal(seen[i], 1);
  assert_int_equal(names, 2);
  assert_int_equal(nclocks, clocks);
  jc_free(d);
}

/* Two processes with the same pid, on clocks 10 s apart: b's events are
 * moved onto a's clock by the difference of their clock records. */
static void test_merge(void **state)
{
  char *dir = tt_make_dir();
  char *a = tt_in_dir(dir, "a.json"), *b = tt_in_dir(dir, "b.json");
  char *c = tt_in_dir(dir, "c.json"), *out = tt_in_dir(dir, "m.json");
  char *err = tt_in_dir(dir, "err.txt");
  char off[600];
  (void)state;

  /* a: realtime - mono = 1000 s; b: 990 s (b's monotonic clock is 10 s
   * ahead): b's ts 20 s + x is wall 1010 s + x, a's 10 s + x. */
  write_process(a, 7, "alpha", 9 * SEC, 1009 * SEC, 10 * SEC, 1000000,
                MERGE_N, 0);
  write_process(b, 7, "beta", 19 * SEC, 1009 * SEC, 20 * SEC + 500000,
                1000000, MERGE_N, MERGE_N);
  {
    char *argv[] = { "merge", "-o", out, a, b, NULL };
    assert_int_equal(tt_run_argv(twt_tool_merge_main, argv, NULL, err), 0);
    check_merge(out, -10 * SEC, 1);
  }
  /* --offset overrides the clock records. */
  snprintf(off, sizeof off, "%s=-9.5s", b);
  {
    char *argv[] = { "merge", "--offset", off, "-o", out, a, b, NULL };
    assert_int_equal(tt_run_argv(twt_tool_merge_main, argv, NULL, err), 0);
    check_merge(out, -9 * SEC - SEC / 2, 1);
  }
  /* Without a clock record: merged as it is, with a warning. */
  write_process(c, 7, "beta", -1, 0, 20 * SEC + 500000, 1000000, MERGE_N,
                MERGE_N);
  {
    char *argv[] = { "merge", "-o", out, a, c, NULL };
    assert_int_equal(tt_run_argv(twt_tool_merge_main, argv, NULL, err), 0);
    check_merge(out, 0, 1);
    assert_true(file_has(err, "no clock record"));
  }
  /* A window too small to hold the disorder: still every event once. */
  {
    char *argv[] = { "merge", "--window", "4k", "-o", out, a, b, NULL };
    assert_int_equal(tt_run_argv(twt_tool_merge_main, argv, NULL, err), 0);
    check_merge(out, -10 * SEC, 1);
  }
  free(a);
  free(b);
  free(c);
  free(out);
  free(err);
  tt_remove_dir(dir);
}

/* ============================================================== slice */

#define SL_N 100
#define MS ((int64_t)1000000)

/* A trace whose start is 1 ms: X events every ms from 1 ms, 0.5 ms long
 * (i = k), instants between them (i = 1000 + k), on pid 1 tid 2 and
 * every third on tid 3; a B/E pair from 5 to 15 ms; async spans whose
 * end is written before its begin; flows. */
static void write_slice_input(const char *path)
{
  recs r = { NULL, 0 };

  add(&r, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"tid\":1,"
      "\"args\":{\"name\":\"sl\"}}");
  add(&r, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":2,"
      "\"args\":{\"name\":\"two\"}}");
  add(&r, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":3,"
      "\"args\":{\"name\":\"three\"}}");
  add(&r, CLOCK_REC, "1000.000", 1, 1, (int64_t)1000000,
      (int64_t)1000000 + 5 * SEC);
  add(&r, "{\"ph\":\"B\",\"name\":\"outer\",\"ts\":5000.000,\"pid\":1,"
      "\"tid\":2,\"args\":{\"i\":2000}}");
  for (int k = 0; k < SL_N; k++) {
    add(&r, "{\"ph\":\"X\",\"name\":\"x%d\",\"cat\":\"%s\",\"ts\":%d.000,"
        "\"dur\":500.000,\"pid\":1,\"tid\":%d,\"args\":{\"i\":%d}}", k,
        k % 2 ? "odd" : "even,all", 1000 + k * 1000, k % 3 ? 2 : 3, k);
    add(&r, "{\"ph\":\"i\",\"name\":\"tick\",\"s\":\"t\",\"ts\":%d.000,"
        "\"pid\":1,\"tid\":2,\"args\":{\"i\":%d}}", 1700 + k * 1000,
        1000 + k);
    if (k == 14)
      add(&r, "{\"ph\":\"E\",\"ts\":15000.000,\"pid\":1,\"tid\":2,"
          "\"args\":{\"i\":2001}}");
  }
  /* Async spans, the end first: 2 to 9 ms (i 3000/3001), 12 to 13 ms
   * (3002/3003), 30 to 40 ms (3004/3005). */
  add(&r, "{\"ph\":\"e\",\"name\":\"a\",\"cat\":\"q\",\"id\":\"0x1\","
      "\"ts\":9000.000,\"pid\":1,\"tid\":3,\"args\":{\"i\":3001}}");
  add(&r, "{\"ph\":\"b\",\"name\":\"a\",\"cat\":\"q\",\"id\":\"0x1\","
      "\"ts\":2000.000,\"pid\":1,\"tid\":2,\"args\":{\"i\":3000}}");
  add(&r, "{\"ph\":\"e\",\"name\":\"a\",\"cat\":\"q\",\"id\":\"0x2\","
      "\"ts\":13000.000,\"pid\":1,\"tid\":3,\"args\":{\"i\":3003}}");
  add(&r, "{\"ph\":\"b\",\"name\":\"a\",\"cat\":\"q\",\"id\":\"0x2\","
      "\"ts\":12000.000,\"pid\":1,\"tid\":2,\"args\":{\"i\":3002}}");
  add(&r, "{\"ph\":\"b\",\"name\":\"a\",\"cat\":\"q\",\"id\":\"0x3\","
      "\"ts\":30000.000,\"pid\":1,\"tid\":2,\"args\":{\"i\":3004}}");
  add(&r, "{\"ph\":\"e\",\"name\":\"a\",\"cat\":\"q\",\"id\":\"0x3\","
      "\"ts\":40000.000,\"pid\":1,\"tid\":3,\"args\":{\"i\":3005}}");
  /* Flows: 11 to 12 ms (4000/4001, the f first), 12 to 25 ms
   * (4002/4003). */
  add(&r, "{\"ph\":\"f\",\"name\":\"fl\",\"cat\":\"q\",\"id\":\"0x9\","
      "\"ts\":12000.000,\"pid\":1,\"tid\":3,\"args\":{\"i\":4001}}");
  add(&r, "{\"ph\":\"s\",\"name\":\"fl\",\"cat\":\"q\",\"id\":\"0x9\","
      "\"ts\":11000.000,\"pid\":1,\"tid\":2,\"args\":{\"i\":4000}}");
  add(&r, "{\"ph\":\"s\",\"name\":\"fl\",\"cat\":\"q\",\"id\":\"0xa\","
      "\"ts\":12000.000,\"pid\":1,\"tid\":2,\"args\":{\"i\":4002}}");
  add(&r, "{\"ph\":\"f\",\"name\":\"fl\",\"cat\":\"q\",\"id\":\"0xa\","
      "\"ts\":25000.000,\"pid\":1,\"tid\":3,\"args\":{\"i\":4003}}");
  write_records(path, r.v, r.n);
  recs_free(&r);
}

/* What slice keeps of the events above for the window [from, to) (ns,
 * absolute), tid (0: any), name and category globs as used below. */
static int slice_keeps(int i, int64_t from, int64_t to, int tid,
                       int only_odd, int only_x1)
{
  if (i < SL_N) {
    int64_t ts = 1 * MS + i * MS;
    int t = i % 3 ? 2 : 3;
    if (tid && t != tid)
      return 0;
    if (only_odd && i % 2 == 0)
      return 0;
    if (only_x1 && !(i == 1 || (i >= 10 && i <= 19)))
      return 0;
    return ts < to && ts + MS / 2 >= from;
  }
  if (only_odd || only_x1)
    return 0;
  if (i < 2000) {                               /* ticks, on tid 2 */
    int64_t ts = 1 * MS + 700000 + (i - 1000) * MS;
    return (!tid || tid == 2) && ts >= from && ts < to;
  }
  /* A pair's end is judged as its begin (on tid 2); a flow's events
   * each by their own: its f is on tid 3. */
  if (tid && (tid != 2 || i >= 4000))
    return 0;
  switch (i) {
  case 2000: case 2001:
    return 5 * MS < to && 15 * MS >= from;
  case 3000: case 3001:
    return 2 * MS < to && 9 * MS >= from;
  case 3002: case 3003:
    return 12 * MS < to && 13 * MS >= from;
  case 3004: case 3005:
    return 30 * MS < to && 40 * MS >= from;
  case 4000: case 4001:
    return 11 * MS >= from && 12 * MS < to;
  case 4002: case 4003:
    return 12 * MS >= from && 25 * MS < to;
  default:
    return 0;
  }
}

static void check_slice(const char *out, int64_t from, int64_t to, int tid,
                        int only_odd, int only_x1)
{
  static const int extra[] = { 2000, 2001, 3000, 3001, 3002, 3003, 3004,
                               3005, 4000, 4001, 4002, 4003 };
  jc_doc *d = tt_load_file(out);
  jc_val ev = tu_events(d), v;
  int seen[5000] = { 0 }, names = 0;

  for (v = jc_first(d, ev); v >= 0; v = jc_next(d, v)) {
    int64_t i;
    if (is_ph(d, v, "M")) {
      names++;
      continue;
    }
    if (is_ph(d, v, "c"))
      continue;
    i = arg_int(d, v, "i");
    assert_true(i >= 0 && i < 5000);
    seen[i]++;
  }
  for (int i = 0; i < SL_N; i++) {
    if (seen[i] != slice_keeps(i, from, to, tid, only_odd, only_x1))
      fail_msg("event %d: kept %d times", i, seen[i]);
    if (seen[1000 + i] != slice_keeps(1000 + i, from, to, tid, only_odd,
                                      only_x1))
      fail_msg("tick %d: kept %d times", i, seen[1000 + i]);
  }
  for (size_t k = 0; k < sizeof extra / sizeof extra[0]; k++)
    if (seen[extra[k]] != slice_keeps(extra[k], from, to, tid, only_odd,
                                      only_x1))
      fail_msg("event %d: kept %d times", extra[k], seen[extra[k]]);
  assert_true(names >= 1);                       /* the process name */
  jc_free(d);
}

static void test_slice(void **state)
{
  char *dir = tt_make_dir();
  char *in = tt_in_dir(dir, "in.json"), *out = tt_in_dir(dir, "s.json");
  char *err = tt_in_dir(dir, "err.txt");
  (void)state;

  write_slice_input(in);
  {
    /* Relative to the start (the clock record's ts, 1 ms). */
    char *argv[] = { "slice", "--from", "9.5ms", "--to", "12ms", "-o", out,
                     in, NULL };
    assert_int_equal(tt_run_argv(twt_tool_slice_main, argv, NULL, err), 0);
    check_slice(out, 10500000, 13 * MS, 0, 0, 0);
  }
  {
    char *argv[] = { "slice", "--from", "@10.5ms", "--to", "@27000us",
                     "-o", out, in, NULL };
    assert_int_equal(tt_run_argv(twt_tool_slice_main, argv, NULL, err), 0);
    check_slice(out, 10500000, 27 * MS, 0, 0, 0);
  }
  {
    char *argv[] = { "slice", "--to", "0.010s", "-o", out, in, NULL };
    assert_int_equal(tt_run_argv(twt_tool_slice_main, argv, NULL, err), 0);
    check_slice(out, INT64_MIN / 2, 11 * MS, 0, 0, 0);
  }
  {
    char *argv[] = { "slice", "--from", "5ms", "--tid", "2", "-o", out,
                     in, NULL };
    assert_int_equal(tt_run_argv(twt_tool_slice_main, argv, NULL, err), 0);
    check_slice(out, 6 * MS, INT64_MAX / 2, 2, 0, 0);
    assert_false(file_has(out, "\"three\""));   /* tid 3's name left out */
    assert_true(file_has(out, "\"two\""));
  }
  {
    char *argv[] = { "slice", "--cat", "odd", "-o", out, in, NULL };
    assert_int_equal(tt_run_argv(twt_tool_slice_main, argv, NULL, err), 0);
    check_slice(out, INT64_MIN / 2, INT64_MAX / 2, 0, 1, 0);
  }
  {
    char *argv[] = { "slice", "--name", "x1*", "-o", out, in, NULL };
    assert_int_equal(tt_run_argv(twt_tool_slice_main, argv, NULL, err), 0);
    check_slice(out, INT64_MIN / 2, INT64_MAX / 2, 0, 0, 1);
  }
  {
    char *argv[] = { "slice", "--from", "5ms", "--to", "2ms", in, NULL };
    assert_int_equal(tt_run_argv(twt_tool_slice_main, argv, NULL, err), 2);
  }
  {
    char *argv[] = { "slice", "--from", "5 parsecs", in, NULL };
    assert_int_equal(tt_run_argv(twt_tool_slice_main, argv, NULL, err), 2);
  }
  free(in);
  free(out);
  free(err);
  tt_remove_dir(dir);
}

/* ============================================================== stats */

static jc_val find_named(const jc_doc *d, jc_val arr, const char *name)
{
  for (jc_val v = jc_first(d, arr); v >= 0; v = jc_next(d, v))
    if (jc_streq(d, jc_get(d, v, "name"), name))
      return v;
  fail_msg("no row named %s", name);
  return -1;
}

static void assert_us(const jc_doc *d, jc_val row, const char *key,
                      int64_t ns)
{
  uint64_t got = 0;

  assert_int_equal(jc_us_to_ns(d, jc_get(d, row, key), &got), 0);
  assert_int_equal((int64_t)got, ns);
}

/* Counts, spans' total and self time, counters: all known here. */
static void test_stats(void **state)
{
  char *dir = tt_make_dir();
  char *in = tt_in_dir(dir, "in.json"), *out = tt_in_dir(dir, "st.json");
  char *err = tt_in_dir(dir, "err.txt");
  char *argv[] = { "stats", "--json", "-o", out, in, NULL };
  recs r = { NULL, 0 };
  jc_doc *d;
  jc_val root, row;
  (void)state;

  add(&r, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"tid\":1,"
      "\"args\":{\"name\":\"st\"}}");
  add(&r, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":2,"
      "\"args\":{\"name\":\"worker\"}}");
  /* On tid 2, 10 times: parent X [0, 100) us with children X [10, 30)
   * and B/E [40, 60) holding X [45, 50): parent self 60, B/E self 15. */
  for (int k = 0; k < 10; k++) {
    int t = 1000 * k;
    add(&r, "{\"ph\":\"X\",\"name\":\"child\",\"ts\":%d.000,\"dur\":20.000,"
        "\"pid\":1,\"tid\":2}", t + 10);
    add(&r, "{\"ph\":\"B\",\"name\":\"be\",\"ts\":%d.000,\"pid\":1,"
        "\"tid\":2}", t + 40);
    add(&r, "{\"ph\":\"X\",\"name\":\"leaf\",\"ts\":%d.000,\"dur\":5.000,"
        "\"pid\":1,\"tid\":2}", t + 45);
    add(&r, "{\"ph\":\"E\",\"ts\":%d.000,\"pid\":1,\"tid\":2}", t + 60);
    add(&r, "{\"ph\":\"X\",\"name\":\"parent\",\"ts\":%d.000,\"dur\":"
        "100.000,\"pid\":1,\"tid\":2}", t);
    add(&r, "{\"ph\":\"C\",\"name\":\"load\",\"ts\":%d.000,\"pid\":1,"
        "\"tid\":3,\"args\":{\"cpu\":%d,\"mem\":%d.5}}", t + 500,
        (k * 7) % 10, 100 - k);
  }
  write_records(in, r.v, r.n);
  recs_free(&r);
  assert_int_equal(tt_run_argv(twt_tool_stats_main, argv, NULL, err), 0);
  d = tt_load_file(out);
  root = jc_root(d);
  assert_int_equal(get_int(d, root, "records"), 62);
  assert_int_equal(get_int(d, root, "events"), 60);
  assert_int_equal(get_int(d, root, "metadata"), 2);
  assert_int_equal(get_int(d, jc_get(d, root, "phases"), "X"), 30);
  assert_int_equal(get_int(d, jc_get(d, root, "phases"), "B"), 10);
  assert_int_equal(get_int(d, jc_get(d, root, "phases"), "C"), 10);
  assert_int_equal(get_int(d, jc_get(d, root, "phases"), "M"), 2);
  assert_us(d, jc_get(d, root, "time"), "span_us", 9500 * 1000);
  row = find_named(d, jc_get(d, root, "names"), "child");
  assert_int_equal(get_int(d, row, "events"), 10);
  row = find_named(d, jc_get(d, root, "threads"), "worker");
  assert_int_equal(get_int(d, row, "events"), 50);
  assert_int_equal(get_int(d, row, "tid"), 2);
  row = find_named(d, jc_get(d, root, "top_spans_by_total"), "parent");
  assert_us(d, row, "total_us", 10 * 100000);
  assert_us(d, row, "self_us", 10 * 60000);
  row = find_named(d, jc_get(d, root, "top_spans_by_self"), "be");
  assert_int_equal(get_int(d, row, "spans"), 10);
  assert_us(d, row, "total_us", 10 * 20000);
  assert_us(d, row, "self_us", 10 * 15000);
  row = find_named(d, jc_get(d, root, "top_spans_by_self"), "leaf");
  assert_us(d, row, "self_us", 10 * 5000);
  row = jc_first(d, jc_get(d, root, "counters"));
  assert_true(jc_streq(d, jc_get(d, row, "series"), "cpu"));
  assert_int_equal(get_int(d, row, "samples"), 10);
  assert_int_equal(jc_num(d, jc_get(d, row, "min")), 0);
  assert_int_equal(jc_num(d, jc_get(d, row, "max")), 9);
  assert_int_equal(jc_num(d, jc_get(d, row, "last")), 3);
  row = jc_next(d, row);
  assert_true(jc_streq(d, jc_get(d, row, "series"), "mem"));
  assert_true(jc_num(d, jc_get(d, row, "min")) == 91.5);
  assert_true(jc_get(d, root, "self_time_approximate") >= 0);
  assert_true(jc_type(d, jc_get(d, root, "self_time_approximate")) ==
              JC_FALSE);
  assert_true(jc_streq(d, jc_get(d, jc_get(d, root, "open"),
                                 "perfetto_ui"), "opens"));
  jc_free(d);
  /* The table: the names are there. */
  {
    char *a2[] = { "stats", "-o", out, in, NULL };
    assert_int_equal(tt_run_argv(twt_tool_stats_main, a2, NULL, err), 0);
    assert_true(file_has(out, "parent"));
    assert_true(file_has(out, "worker"));
  }
  free(in);
  free(out);
  free(err);
  tt_remove_dir(dir);
}

/* ================================================ cut files, gzip */

/* A nesting of complete events on several threads, random: each span
 * [start, start + dur) holds children that do not overlap, some touching
 * its edges; the names are few, so that one name's self time adds up
 * over parents and children. */
#define SELF_NAMES 5
static unsigned self_rng;

static uint64_t xs_rand(void)
{
  self_rng = self_rng * 1103515245u + 12345u;
  return (self_rng >> 8) & 0xffffff;
}

struct xs {
  int64_t start, dur;      /* us */
  int tid, name;
};

static void gen_spans(struct xs **v, size_t *n, int tid, int64_t start,
                      int64_t dur, int depth, int64_t self[SELF_NAMES])
{
  int name = (int)(xs_rand() % SELF_NAMES);
  int64_t at = start, kids = 0;
  size_t me = *n;

  *v = realloc(*v, (*n + 1) * sizeof **v);
  assert_non_null(*v);
  (*v)[(*n)++] = (struct xs){ start, dur, tid, name };
  while (depth < 6 && dur >= 8 && xs_rand() % 4 != 0) {
    int64_t gap = (int64_t)(xs_rand() % 3) * (int64_t)(xs_rand() % 4);
    int64_t left = start + dur - at - gap, len;
    if (left < 2)
      break;
    len = 1 + (int64_t)(xs_rand() % (uint64_t)(left / 2 + 1));
    if (len >= dur)
      len = dur - 1;
    gen_spans(v, n, tid, at + gap, len, depth + 1, self);
    kids += len;
    at += gap + len;
  }
  (void)me;
  self[name] += dur - kids;
}

static int by_start(const void *a, const void *b)
{
  const struct xs *x = a, *y = b;

  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  return x->dur > y->dur ? -1 : x->dur < y->dur;  /* the parent first */
}

static int by_end(const void *a, const void *b)
{
  const struct xs *x = a, *y = b;
  int64_t ex = x->start + x->dur, ey = y->start + y->dur;

  if (ex != ey)
    return ex < ey ? -1 : 1;
  return x->dur < y->dur ? -1 : x->dur > y->dur;  /* the child first */
}

/* stats' self time is exact whatever the order the complete events come
 * in: a parent before its children (the PyTorch profiler and Chrome
 * write their events by start time: a parent 0-10 us before its child
 * 2-5 us), or after them (the library writes an X when it ends); the
 * threads interleaved.  self_time_approximate stays false. */
static void test_stats_self_order(void **state)
{
  char *dir = tt_make_dir(), *in = tt_in_dir(dir, "self.json");
  char *out = tt_in_dir(dir, "stats.json");
  (void)state;

  self_rng = tt_seed();
  for (int order = 0; order < 2; order++)
    for (int round = 0; round < 20; round++) {
      int64_t self[SELF_NAMES] = { 0 };
      struct xs *v = NULL;
      size_t n = 0;
      recs r = { NULL, 0 };
      jc_doc *d;
      jc_val rows;

      for (int tid = 1; tid <= 3; tid++)
        for (int64_t at = 0; at < 3000; at += 1000)
          gen_spans(&v, &n, tid, at + tid, 900, 0, self);
      qsort(v, n, sizeof *v, order ? by_end : by_start);
      for (size_t i = 0; i < n; i++)
        add(&r, "{\"ph\":\"X\",\"name\":\"n%d\",\"ts\":%" PRId64 ","
            "\"dur\":%" PRId64 ",\"pid\":1,\"tid\":%d}", v[i].name,
            v[i].start, v[i].dur, v[i].tid);
      write_records(in, r.v, r.n);
      recs_free(&r);
      free(v);
      {
        char *argv[] = { "stats", "--json", "--top", "1000", "-o", out, in,
                         NULL };
        assert_int_equal(tt_run_argv(twt_tool_stats_main, argv, NULL,
                                     NULL), 0);
      }
      d = tt_load_file(out);
      assert_true(jc_type(d, jc_get(d, jc_root(d),
                                    "self_time_approximate")) == JC_FALSE);
      rows = jc_get(d, jc_root(d), "top_spans_by_self");
      for (int k = 0; k < SELF_NAMES; k++) {
        char name[8];
        jc_val row;
        snprintf(name, sizeof name, "n%d", k);
        if (!self[k])
          continue;
        row = find_named(d, rows, name);
        assert_true(row >= 0);
        if (jc_num(d, jc_get(d, row, "self_us")) != (double)self[k])
          fail_msg("order %d round %d: %s self %.3f us, want %" PRId64,
                   order, round, name,
                   jc_num(d, jc_get(d, row, "self_us")), self[k]);
      }
      jc_free(d);
    }
  free(in);
  free(out);
  tt_remove_dir(dir);
}

/* Each command on a cut file (a warning, every complete record) and on
 * its .json.gz, writing .json.gz. */
static void test_cut_and_gzip(void **state)
{
  char *dir = tt_make_dir();
  char *full = tt_in_dir(dir, "full.json"), *cut = tt_in_dir(dir, "cut.json");
  char *gz = tt_in_dir(dir, "cut.json.gz"), *out = tt_in_dir(dir, "o.json");
  char *outgz = tt_in_dir(dir, "o.json.gz");
  char *err = tt_in_dir(dir, "err.txt"), *st = tt_in_dir(dir, "st.json");
  size_t len, glen;
  char *buf;
  unsigned char *raw;

  (void)state;

  write_process(full, 3, "cut", SEC, 2 * SEC, 2 * SEC, 1000, 50, 0);
  buf = tu_read_file(full, &len);
  /* Cut in the middle of the 40th event's line (line 42: the head,
   * the process name and the clock record come first). */
  {
    char *p = buf;
    for (int k = 0; k < 42; k++)
      p = strchr(p, '\n') + 1;
    tt_write_bytes(cut, buf, (size_t)(p - buf) + 30);
  }
  gzip_file(cut, gz);
  for (int g = 0; g < 2; g++) {
    const char *input = g ? gz : cut;
    main_fn fns[3] = { twt_tool_cat_main, twt_tool_merge_main,
                       twt_tool_slice_main };
    const char *names[3] = { "cat", "merge", "slice" };
    for (int c = 0; c < 3; c++) {
      char *argv[] = { (char *)names[c], "-o", outgz, (char *)input, NULL };
      jc_doc *d;
      jc_val v;
      int n = 0;
      assert_int_equal(tt_run_argv(fns[c], argv, NULL, err), 0);
      assert_true(file_has(err, "dropped"));
      assert_true(file_has(err, input));
      raw = (unsigned char *)tu_read_file(outgz, &glen);
      {
        int complete = 0;
        size_t tlen;
        char *text = tt_gz_inflate(raw, glen, &tlen, &complete);
        assert_true(complete);
        d = tt_load_raw(text, tlen);
        free(text);
      }
      free(raw);
      for (v = jc_first(d, tu_events(d)); v >= 0; v = jc_next(d, v))
        if (is_ph(d, v, "X"))
          assert_int_equal(arg_int(d, v, "i"), n++);
      assert_int_equal(n, 39);                  /* the complete ones */
      jc_free(d);
    }
    {
      char *argv[] = { "stats", "--json", "-o", st, (char *)input, NULL };
      jc_doc *d;
      assert_int_equal(tt_run_argv(twt_tool_stats_main, argv, NULL, err), 0);
      assert_true(file_has(err, "dropped"));
      d = tt_load_file(st);
      assert_int_equal(get_int(d, jc_get(d, jc_root(d), "phases"), "X"),
                       39);
      assert_int_equal(get_int(d, jc_root(d), "dropped_records"), 1);
      jc_free(d);
    }
  }
  free(buf);
  free(full);
  free(cut);
  free(gz);
  free(out);
  free(outgz);
  free(err);
  free(st);
  tt_remove_dir(dir);
}

/* ===================================================== hostile inputs */

static void test_hostile(void **state)
{
  char *dir = tt_make_dir();
  char *empty = tt_in_dir(dir, "empty.json"), *text = tt_in_dir(dir, "t.json");
  char *fifo = tt_in_dir(dir, "fifo.json"), *rnd = tt_in_dir(dir, "r.json");
  char *tgz = tt_in_dir(dir, "t.json.gz"), *good = tt_in_dir(dir, "g.json");
  char *out = tt_in_dir(dir, "o.json"), *err = tt_in_dir(dir, "err.txt");
  const char *bad[6];
  main_fn fns[4] = { twt_tool_cat_main, twt_tool_merge_main,
                     twt_tool_slice_main, twt_tool_stats_main };
  const char *names[4] = { "cat", "merge", "slice", "stats" };
  unsigned seed = tt_seed();
  unsigned char junk[4096], *gz;
  size_t glen, len;
  char *buf;
  (void)state;

  tt_write_bytes(empty, "", 0);
  tt_write_bytes(text, "hello, world\n", 13);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  srand(seed);
  for (size_t i = 0; i < sizeof junk; i++)
    junk[i] = (unsigned char)(rand() >> 7);
  junk[0] = 'x';                  /* not gzip's magic, not a '[' */
  tt_write_bytes(rnd, junk, sizeof junk);
  write_process(good, 3, "g", SEC, 2 * SEC, 2 * SEC, 1000, 20, 0);
  buf = tu_read_file(good, &len);
  gz = tt_gz_member(buf, len, &glen);
  tt_write_bytes(tgz, gz, 24);    /* the header and a few bytes */
  free(gz);
  free(buf);
  bad[0] = empty;
  bad[1] = text;
  bad[2] = dir;
  bad[3] = fifo;
  bad[4] = rnd;
  bad[5] = tgz;
  for (int c = 0; c < 4; c++)
    for (int b = 0; b < 6; b++) {
      char *argv[] = { (char *)names[c], "-o", out, (char *)bad[b], NULL };
      unsigned left = tt_guard_begin(5, "a command on a hostile input");
      int rc = tt_run_argv(fns[c], argv, NULL, err);
      tt_guard_end(left);
      if (rc != 1)
        fail_msg("%s %s: exit %d", names[c], bad[b], rc);
      assert_true(file_has(err, bad[b]));       /* the file named */
      assert_int_equal(access(out, F_OK), -1);  /* no output left */
    }
  /* Usage errors: exit 2. */
  for (int c = 0; c < 4; c++) {
    char *a1[] = { (char *)names[c], NULL };
    char *a2[] = { (char *)names[c], "--bogus", good, NULL };
    assert_int_equal(tt_run_argv(fns[c], a1, NULL, err), 2);
    assert_int_equal(tt_run_argv(fns[c], a2, NULL, err), 2);
  }
  free(empty);
  free(text);
  free(fifo);
  free(rnd);
  free(tgz);
  free(good);
  free(out);
  free(err);
  tt_remove_dir(dir);
}

/* ====================================================== option tables */

/* Run command with args (NULL-terminated, after the name); its stderr
 * read back (malloc'ed).  Returns the exit status. */
static int run_options(main_fn fn, const char *command, char **args,
                       const char *out, const char *err, char **err_text)
{
  char *argv[5] = { (char *)command, NULL, NULL, NULL, NULL };
  size_t len;
  int status;

  for (size_t i = 0; args[i]; i++)
    argv[1 + i] = args[i];
  status = tt_run_argv(fn, argv, out, err);
  *err_text = tu_read_file(err, &len);
  return status;
}

/* Every option of a command's table is in its --help, at the start of a
 * line ("  -x, --name ARG" or "      --name ARG"), and its parser takes it,
 * long and short; an option not in the table is a usage error. */
static void test_option_tables(void **state)
{
  static const struct {
    const char *name;
    main_fn fn;
    const struct twt_cmd_opt *opts;
    int runs_without_file;          /* then an argument stops it */
  } commands[] = {
    { "cat", twt_tool_cat_main, twt_tool_cat_options, 0 },
    { "merge", twt_tool_merge_main, twt_tool_merge_options, 0 },
    { "slice", twt_tool_slice_main, twt_tool_slice_options, 0 },
    { "stats", twt_tool_stats_main, twt_tool_stats_options, 0 },
    { "split", twt_tool_split_main, twt_tool_split_options, 0 },
    { "repair", twt_tool_repair_main, twt_tool_repair_options, 0 },
    { "snapshot", twt_tool_snapshot_main, twt_tool_snapshot_options, 0 },
    { "demo", twt_tool_demo_main, twt_tool_demo_options, 1 },
  };
  char *dir = tt_make_dir();
  char *out = tt_in_dir(dir, "out.txt"), *err = tt_in_dir(dir, "err.txt");
  (void)state;

  for (size_t k = 0; k < sizeof commands / sizeof commands[0]; k++) {
    char *help_args[] = { "--help", NULL }, *help, *text;
    char shorts[128] = "";
    size_t len;

    assert_int_equal(run_options(commands[k].fn, commands[k].name,
                                 help_args, out, err, &text), 0);
    free(text);
    help = tu_read_file(out, &len);
    for (const struct twt_cmd_opt *e = commands[k].opts; e->name || e->val;
         e++) {
      struct twt_cmd_opt o = twt_cmd_opt_resolve(e);
      char line[128], long_form[64], short_form[3] = "";
      char *args[4] = { long_form, NULL, NULL, NULL };
      char value[] = "x", extra[] = "extra";

      if (o.val < 0x100) {
        snprintf(short_form, sizeof short_form, "-%c", o.val);
        shorts[o.val] = 1;
      }
      snprintf(line, sizeof line, "\n  %s%s--%s%s%s", o.val < 0x100 ?
               short_form : "  ", o.val < 0x100 ? ", " : "  ", o.name,
               o.arg ? " " : "", o.arg ? o.arg : "");
      if (!strstr(help, line))
        fail_msg("%s --help lacks '%s'", commands[k].name, line + 1);
      if (o.val == 'h')
        continue;
      snprintf(long_form, sizeof long_form, "--%s", o.name);
      args[1] = o.arg ? value : NULL;
      if (commands[k].runs_without_file)
        args[o.arg ? 2 : 1] = extra;
      for (int form = 0; form < 2; form++) {
        if (form == 1) {
          if (o.val >= 0x100)
            break;
          args[0] = short_form;
        }
        run_options(commands[k].fn, commands[k].name, args, out, err,
                    &text);
        if (strstr(text, "unknown option") || strstr(text, "needs a value"))
          fail_msg("%s refuses %s: %s", commands[k].name, args[0], text);
        free(text);
      }
    }
    free(help);
    {
      char *bogus[] = { "--no-such-option", NULL }, bad[3];
      char *bad_args[] = { bad, NULL };
      assert_int_equal(run_options(commands[k].fn, commands[k].name, bogus,
                                   out, err, &text), TWT_CLI_USAGE);
      assert_non_null(strstr(text, "unknown option '--no-such-option'"));
      free(text);
      for (int c = 'A'; c <= 'z'; c++)
        if (isalpha(c) && !shorts[c]) {   /* the first letter not taken */
          snprintf(bad, sizeof bad, "-%c", c);
          break;
        }
      assert_int_equal(run_options(commands[k].fn, commands[k].name,
                                   bad_args, out, err, &text),
                       TWT_CLI_USAGE);
      assert_non_null(strstr(text, "unknown option"));
      free(text);
    }
  }
  free(out);
  free(err);
  tt_remove_dir(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_cat_rotated),
    cmocka_unit_test(test_merge),
    cmocka_unit_test(test_slice),
    cmocka_unit_test(test_stats),
    cmocka_unit_test(test_stats_self_order),
    cmocka_unit_test(test_cut_and_gzip),
    cmocka_unit_test(test_hostile),
    cmocka_unit_test(test_option_tables),
  };

  tt_deadline("test_tools");
  return cmocka_run_group_tests(tests, NULL, NULL);
}
