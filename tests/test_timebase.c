/* test_timebase.c -- traces that line up with the PyTorch profiler's
 *
 *  - timebase=kineto: every ts is microseconds of the wall clock since
 *    the base that the PyTorch profiler (Kineto) floors the wall clock to,
 *    a multiple of 7889238 s; the object form carries it as
 *    baseTimeNanoseconds, with schemaVersion and displayTimeUnit before
 *    traceEvents.  An event written now and a Kineto-shaped event that
 *    the test writes itself from the same wall-clock instant agree within
 *    1 ms;
 *  - rank=N (or RANK and WORLD_SIZE from the environment, as torchrun
 *    sets them): "distributedInfo": {"rank": N, "world_size": W} in the
 *    object form, which Holistic Trace Analysis requires, and the
 *    process's label and sort index in either form, in every rotated
 *    file too.
 * Every file goes through the strict checker, field by field.
 */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <time.h>
#include <unistd.h>

static uint64_t realtime_ns(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Kineto's base for the wall-clock instant real_ns. */
static uint64_t kineto_base(uint64_t real_ns)
{
  uint64_t period = (uint64_t)7889238u * 1000000000u;
  return real_ns / period * period;
}

static tw_writer *open_with(const char *path, const char *optstr)
{
  char err[200];
  tw_options o;
  tw_writer *w;
  int rc;

  assert_int_equal(tw_options_init(&o), 0);
  if (tw_options_parse(&o, optstr, err, sizeof err) != 0)
    fail_msg("%s: %s", optstr, err);
  if (!(w = tw_open(path, &o, &rc)))
    fail_msg("%s: %s", optstr, tw_strerror(rc));
  return w;
}

/* The member key of object obj as an unsigned integer. */
static uint64_t get_u64(const jc_doc *d, jc_val obj, const char *key)
{
  int64_t v = -1;

  if (jc_int64(d, jc_get(d, obj, key), &v) != 0 || v < 0)
    fail_msg("%s: not a non-negative integer", key);
  return (uint64_t)v;
}

static void test_kineto_timebase(void **state)
{
  char *path = tu_tmppath(".json");
  uint64_t before, after, mono, base, got_ns, kineto_ns;
  tw_writer *w;
  jc_doc *d;
  jc_val root, ev, e;
  int seen = 0;

  (void)state;
  unsetenv("RANK");
  w = open_with(path, "timebase=kineto,format=object");
  /* The instant of the event, on both clocks, read side by side. */
  before = realtime_ns();
  mono = tw_now_ns();
  after = realtime_ns();
  assert_int_equal(tw_complete(w, "gpu", "step", mono, 1000, NULL, 0), 0);
  assert_int_equal(tw_close(w), 0);

  d = tu_load(path);
  root = jc_root(d);
  assert_int_equal(get_u64(d, root, "schemaVersion"), 1);
  tu_assert_str(d, root, "displayTimeUnit", "ms");
  base = get_u64(d, root, "baseTimeNanoseconds");
  assert_int_equal(base, kineto_base(before));
  tu_assert_absent(d, root, "distributedInfo");
  ev = tu_events(d);
  for (e = jc_first(d, ev); e >= 0; e = jc_next(d, e)) {
    if (!jc_streq(d, jc_get(d, e, "name"), "step"))
      continue;
    seen++;
    tu_assert_str(d, e, "ph", "X");
    tu_assert_us(d, e, "dur", 1000);
    assert_int_equal(jc_us_to_ns(d, jc_get(d, e, "ts"), &got_ns), 0);
    /* What the PyTorch profiler writes for the same instant: its own
     * ts, microseconds since the base, from the wall clock read beside
     * ours.  Within 1 ms of each other. */
    kineto_ns = (before + after) / 2 - base;
    if (got_ns + 1000000u < kineto_ns || got_ns > kineto_ns + 1000000u)
      fail_msg("ts %llu ns, the profiler's %llu ns: more than 1 ms apart",
               (unsigned long long)got_ns, (unsigned long long)kineto_ns);
  }
  assert_int_equal(seen, 1);
  jc_free(d);
  tu_cleanup(path);
}

/* The clock record of a kineto trace says its base, and its own ts is on
 * the same timeline (merge places the file by it). */
static void test_kineto_clock_record(void **state)
{
  char *path = tu_tmppath(".json");
  uint64_t base, real, ts_ns;
  tw_writer *w;
  jc_doc *d;
  jc_val e, args;
  char err[256];
  size_t len;
  char *text;

  (void)state;
  w = open_with(path, "timebase=kineto");
  assert_int_equal(tw_close(w), 0);
  text = tu_read_file(path, &len);
  assert_non_null(d = jc_parse(text, len, err, sizeof err));
  e = jc_next(d, jc_first(d, jc_root(d)));            /* the second record */
  tu_assert_str(d, e, "ph", "c");
  tu_assert_str(d, e, "name", "clock_sync");
  args = jc_get(d, e, "args");
  real = get_u64(d, args, "realtime_ns");
  base = get_u64(d, args, "kineto_base_ns");
  assert_int_equal(base, kineto_base(real));
  assert_int_equal(jc_us_to_ns(d, jc_get(d, e, "ts"), &ts_ns), 0);
  /* ts and realtime_ns - base were read microseconds apart. */
  assert_true(ts_ns + 1000000u >= real - base && ts_ns <= real - base + 1000000u);
  jc_free(d);
  free(text);
  tu_cleanup(path);
}

/* The process's label and sort index, right after the clock record. */
static void assert_rank_records(const jc_doc *d, jc_val ev, int64_t rank)
{
  char label[32];
  jc_val e = jc_first(d, ev);
  int labels = 0, sorts = 0;

  snprintf(label, sizeof label, "rank %lld", (long long)rank);
  for (; e >= 0; e = jc_next(d, e)) {
    if (jc_streq(d, jc_get(d, e, "name"), "process_labels")) {
      tu_assert_str(d, e, "ph", "M");
      tu_assert_int(d, e, "pid", getpid());
      tu_assert_str(d, jc_get(d, e, "args"), "labels", label);
      labels++;
    } else if (jc_streq(d, jc_get(d, e, "name"), "process_sort_index")) {
      tu_assert_str(d, e, "ph", "M");
      tu_assert_int(d, jc_get(d, e, "args"), "sort_index", rank);
      sorts++;
    }
  }
  assert_int_equal(labels, 1);
  assert_int_equal(sorts, 1);
}

static void test_rank_option_and_environment(void **state)
{
  char *path = tu_tmppath(".json");
  tw_writer *w;
  jc_doc *d;
  jc_val info;

  (void)state;
  /* From RANK and WORLD_SIZE, in the object form. */
  setenv("RANK", "3", 1);
  setenv("WORLD_SIZE", "8", 1);
  w = open_with(path, "format=object");
  assert_int_equal(tw_close(w), 0);
  d = tu_load(path);
  info = jc_get(d, jc_root(d), "distributedInfo");
  assert_int_equal(get_u64(d, info, "rank"), 3);
  assert_int_equal(get_u64(d, info, "world_size"), 8);
  assert_int_equal(jc_len(d, info), 2);
  tu_assert_absent(d, jc_root(d), "baseTimeNanoseconds");
  assert_rank_records(d, tu_events(d), 3);
  jc_free(d);

  /* rank=N wins over RANK; the array form has the records only. */
  w = open_with(path, "rank=5");
  assert_int_equal(tw_close(w), 0);
  d = tu_load(path);
  assert_rank_records(d, tu_events(d), 5);
  jc_free(d);

  /* Neither: no rank anywhere, the fixed head. */
  unsetenv("RANK");
  unsetenv("WORLD_SIZE");
  w = open_with(path, "format=object");
  assert_int_equal(tw_close(w), 0);
  {
    size_t len;
    char *text = tu_read_file(path, &len);
    assert_memory_equal(text, "{\"traceEvents\":[\n", 17);
    assert_null(strstr(text, "process_labels"));
    free(text);
  }
  /* A RANK that is not a number is no rank. */
  setenv("RANK", "x", 1);
  w = open_with(path, "format=object");
  assert_int_equal(tw_close(w), 0);
  d = tu_load(path);
  tu_assert_absent(d, jc_root(d), "distributedInfo");
  jc_free(d);
  unsetenv("RANK");
  tu_cleanup(path);
}

/* Each rotated file begins with the head's keys and the rank's records. */
static void test_rank_in_every_rotated_file(void **state)
{
  char dir[] = "/tmp/twtimebase-XXXXXX", path[64], part[80];
  tw_writer *w;
  int files = 0;

  (void)state;
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/t.json", dir);
  w = open_with(path, "rank=7,timebase=kineto,format=object,rotate=4KiB,"
                      "buffer=4KiB");
  for (int i = 0; i < 400; i++)
    assert_int_equal(tw_instant(w, "c", "tick", 't', NULL, 0), 0);
  assert_int_equal(tw_close(w), 0);
  for (int n = 0;; n++) {
    jc_doc *d;
    jc_val root;

    if (n == 0)
      snprintf(part, sizeof part, "%s", path);
    else
      snprintf(part, sizeof part, "%s/t.%06d.json", dir, n);
    if (access(part, F_OK) != 0)
      break;
    d = tu_load(part);
    root = jc_root(d);
    assert_int_equal(get_u64(d, jc_get(d, root, "distributedInfo"), "rank"),
                     7);
    assert_true(get_u64(d, root, "baseTimeNanoseconds") > 0);
    assert_rank_records(d, tu_events(d), 7);
    jc_free(d);
    unlink(part);
    files++;
  }
  assert_true(files > 2);
  assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_kineto_timebase),
    cmocka_unit_test(test_kineto_clock_record),
    cmocka_unit_test(test_rank_option_and_environment),
    cmocka_unit_test(test_rank_in_every_rotated_file),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
