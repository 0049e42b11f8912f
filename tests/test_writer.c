/* test_writer.c -- the writer: commits, sinks, errors, stats, fork
 *
 * Every file a test writes is read back with the strict checker and its
 * events compared field by field: a commit must leave exactly the events
 * emitted before it, followed by the tail and nothing else.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* gettid, program_invocation_short_name */
#endif
#include "numbered.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PNAME "writer-test"
#define FMT_ARRAY TW_FORMAT_ARRAY
#define FMT_OBJECT TW_FORMAT_OBJECT

/* ------------------------------------------------------------- helpers */

/* When nonzero, every big_every-th event (from big_every / 2 on) gets a
 * 3000-byte pad: a record larger than a small buffer. */
static int big_every;

/* The pad length of event i: varies, at most 119 so that every record
 * fits a 256-byte buffer, unless big_every asks for big ones. */
static size_t pad_of(int i)
{
  if (big_every && i % big_every == big_every / 2)
    return 3000;
  return (size_t)(i * 37) % 120;
}

/* The events of these tests (numbered.h).  A test whose events come from
 * another process sets W.pid and W.tid. */
static tu_family W = { "test", PNAME, pad_of, 0, 0, 0 };

/* Every test starts here: it also resets what an earlier, failed test
 * may have left set. */
static tw_options make_opts(size_t buffer_size, int format)
{
  tw_options o;
  big_every = 0;
  W.pid = W.tid = 0;
  assert_int_equal(tw_options_init(&o), 0);
  o.buffer_size = buffer_size;
  o.format = format;
  o.process_name = PNAME;
  return o;
}

/* The first record: the process_name metadata event, named pname. */
static void check_pname(const jc_doc *d, jc_val e, const char *pname)
{
  tu_family named = W;

  named.pname = pname;
  tu_check_pname(&named, d, e);
}

static tw_stats get_stats(tw_writer *w)
{
  tw_stats s;
  assert_int_equal(tw_get_stats(w, &s), 0);
  return s;
}

static off_t file_size(const char *path)
{
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  return st.st_size;
}

/* ------------------------------------------------------ commit semantics */

/* Emit events one by one into a small buffer; after every emit the file
 * must hold exactly the events committed so far (none of a half-filled
 * buffer), after a buffer overflow the events before the one that did
 * not fit, after a flush every event. */
static void commit_run(size_t buffer_size, int format)
{
  enum { N = 80 };
  char *path = tu_tmppath(".json");
  tw_options o = make_opts(buffer_size, format);
  tw_writer *w;
  tw_stats s;
  uint64_t prev_commits;
  int err = 12345, committed = 0, overflow_commits = 0, flushes = 0;

  w = tw_open(path, &o, &err);
  assert_non_null(w);
  /* Before any flush: head and process_name record, already valid. */
  tu_check_file(&W, path, 0, format, 0);
  s = get_stats(w);
  assert_int_equal(s.events, 2);
  assert_int_equal(s.commits, 1);
  prev_commits = s.commits;

  for (int i = 0; i < N; i++) {
    assert_int_equal(tu_emit(&W, w, i), 0);
    s = get_stats(w);
    assert_true(s.commits == prev_commits || s.commits == prev_commits + 1);
    if (s.commits > prev_commits) {
      /* The buffer overflowed: what it held (events before i) is
       * committed, event i waits in the buffer. */
      committed = i;
      overflow_commits++;
    }
    prev_commits = s.commits;
    tu_check_file(&W, path, 0, format, committed);

    if (i % 7 == 6) {
      assert_int_equal(tw_flush(w), 0);
      s = get_stats(w);
      assert_int_equal(s.commits, prev_commits + 1);
      prev_commits = s.commits;
      committed = i + 1;
      flushes++;
      tu_check_file(&W, path, 0, format, committed);
      /* A flush with nothing buffered still leaves the same file. */
      assert_int_equal(tw_flush(w), 0);
      prev_commits = get_stats(w).commits;
      tu_check_file(&W, path, 0, format, committed);
    }
  }
  assert_true(overflow_commits > 0);
  assert_true(flushes > 0);
  s = get_stats(w);
  assert_int_equal(s.events, N + 2);
  assert_int_equal(tw_close(w), 0);
  tu_check_file(&W, path, 0, format, N);
  tu_cleanup(path);
}

static void test_commit_array_256(void **state)
{
  (void)state;
  commit_run(256, FMT_ARRAY);
}

static void test_commit_array_1024(void **state)
{
  (void)state;
  commit_run(1024, FMT_ARRAY);
}

static void test_commit_object_256(void **state)
{
  (void)state;
  commit_run(256, FMT_OBJECT);
}

static void test_commit_object_1024(void **state)
{
  (void)state;
  commit_run(1024, FMT_OBJECT);
}

/* A background committer: full buffers are written by another thread, so
 * between flushes the file is not read (a commit may be under way); after
 * every tw_flush it holds exactly the events emitted so far. */
static void background_run(size_t buffer_size, unsigned nbufs, int format)
{
  enum { N = 400 };
  char *path = tu_tmppath(".json");
  tw_options o = make_opts(buffer_size, format);
  tw_writer *w;
  tw_stats s;
  int err = 0;

  o.commit = TW_COMMIT_BACKGROUND;
  o.buffer_count = nbufs;
  /* Records larger than a whole buffer, between small ones. */
  big_every = buffer_size < 4096 ? 50 : 0;
  w = tw_open(path, &o, &err);
  assert_non_null(w);
  tu_check_file(&W, path, 0, format, 0);
  for (int i = 0; i < N; i++) {
    assert_int_equal(tu_emit(&W, w, i), 0);
    if (i % 37 == 36 || i == 3) {
      assert_int_equal(tw_flush(w), 0);
      tu_check_file(&W, path, 0, format, i + 1);
      s = get_stats(w);
      assert_int_equal(s.events, (uint64_t)i + 3);
      assert_int_equal(s.bytes,
                       file_size(path) - (off_t)strlen(TU_TAIL(format)));
    }
  }
  s = get_stats(w);
  assert_true(s.commits > 10);
  assert_int_equal(tw_close(w), 0);
  tu_check_file(&W, path, 0, format, N);
  big_every = 0;
  tu_cleanup(path);
}

static void test_commit_background(void **state)
{
  (void)state;
  background_run(256, 2, FMT_ARRAY);
  background_run(1024, 4, FMT_ARRAY);
  background_run(1024, TW_MAX_BUFFER_COUNT, FMT_OBJECT);
  background_run(TW_DEFAULT_BUFFER_SIZE, 2, FMT_ARRAY);
}

/* How long test_flush_interval waits for the timer's commit: far past
 * any interval it sets, so that only a timer that never fires fails. */
#define TIMER_DEADLINE_NS (30ull * 1000000000ull)

/* Read the file, without a tw_flush, until it holds the process_name
 * record and exactly events 0..n-1, and the writer has counted a commit
 * past `before`: the commit of the flush timer.  A read can catch a
 * commit half-written (not strict JSON yet), or written but not yet
 * counted (the count follows the write): read again. */
static void wait_for_timer_commit(tw_writer *w, const char *path, int n,
                                  uint64_t before)
{
  uint64_t deadline = tw_now_ns() + TIMER_DEADLINE_NS;
  struct timespec poll = { 0, 1000000 };   /* 1 ms */

  for (;;) {
    char err[200];
    size_t len;
    char *buf = tu_read_file(path, &len);
    jc_doc *d = tu_parse_trace(buf, len, err, sizeof err);  /* no clock */

    if (d) {
      jc_val ev = jc_trace_events(d);
      size_t have = ev >= 0 ? jc_len(d, ev) : 0;
      jc_free(d);
      if (have == (size_t)n + 1 && get_stats(w).commits > before) {
        tu_check_mem(&W, buf, len, 0, FMT_ARRAY, n);
        free(buf);
        return;
      }
    }
    free(buf);
    if (tw_now_ns() > deadline)
      fail_msg("the flush timer did not commit %d events in %llu s", n,
               (unsigned long long)(TIMER_DEADLINE_NS / 1000000000u));
    nanosleep(&poll, NULL);
  }
}

/* A flush interval adds a committer that commits on a timer: events
 * emitted and left alone, in a buffer far from full, reach the file with
 * no tw_flush, and again after more; and whatever the timer does and
 * whenever, every tw_flush still leaves exactly the events emitted so
 * far, and tw_close all of them. */
static void test_flush_interval(void **state)
{
  static const int commits[] = { TW_COMMIT_INLINE, TW_COMMIT_BACKGROUND };

  (void)state;
  for (size_t k = 0; k < 2; k++) {
    char *path = tu_tmppath(".json");
    tw_options o = make_opts(TW_DEFAULT_BUFFER_SIZE, FMT_ARRAY);
    uint64_t before;
    tw_writer *w;
    int err = 0;

    print_message("  commit=%s\n", k ? "background" : "inline");
    o.commit = commits[k];
    o.flush_interval_ns = 2000000;          /* 2 ms */
    w = tw_open(path, &o, &err);
    assert_non_null(w);
    /* A few records, far from filling the 64 KiB buffer: only the timer
     * can commit them. */
    before = get_stats(w).commits;
    for (int i = 0; i < 3; i++)
      assert_int_equal(tu_emit(&W, w, i), 0);
    wait_for_timer_commit(w, path, 3, before);
    before = get_stats(w).commits;
    for (int i = 3; i < 5; i++)
      assert_int_equal(tu_emit(&W, w, i), 0);
    wait_for_timer_commit(w, path, 5, before);

    /* A timer far shorter than a flush, racing the flushes. */
    assert_int_equal(tw_close(w), 0);
    o = make_opts(1024, FMT_ARRAY);
    o.commit = commits[k];
    o.flush_interval_ns = 100000;           /* 100 us */
    w = tw_open(path, &o, &err);
    assert_non_null(w);
    for (int i = 0; i < 300; i++) {
      assert_int_equal(tu_emit(&W, w, i), 0);
      if (i % 100 == 99) {
        assert_int_equal(tw_flush(w), 0);
        tu_check_file(&W, path, 0, FMT_ARRAY, i + 1);
      }
    }
    for (int i = 300; i < 350; i++)
      assert_int_equal(tu_emit(&W, w, i), 0);
    assert_int_equal(tw_close(w), 0);
    tu_check_file(&W, path, 0, FMT_ARRAY, 350);
    tu_cleanup(path);
  }
}

/* The default process_name is the program's short name. */
static void test_default_process_name(void **state)
{
  char *path = tu_tmppath(".json");
  tw_writer *w;
  jc_doc *d;
  jc_val ev;
  int err = 0;

  (void)state;
  w = tw_open(path, NULL, &err);
  assert_non_null(w);
  assert_int_equal(err, 0);
  assert_int_equal(tw_close(w), 0);
  tu_assert_tail(path, 0);
  d = tu_load(path);
  ev = tu_events(d);
  assert_int_equal(jc_len(d, ev), 1);
  check_pname(d, jc_first(d, ev), program_invocation_short_name);
  jc_free(d);
  tu_cleanup(path);
}

/* A record larger than the whole buffer is written and committed at once;
 * the events before it keep their place. */
static void test_record_larger_than_buffer(void **state)
{
  char *path = tu_tmppath(".json");
  tw_options o = make_opts(256, FMT_ARRAY);
  tw_writer *w;
  tw_stats s;
  jc_doc *d;
  jc_val ev, e;
  int err = 0;

  (void)state;
  w = tw_open(path, &o, &err);
  assert_non_null(w);
  assert_int_equal(tu_emit_pad(&W, w, 0, 10), 0);
  assert_int_equal(tu_emit_pad(&W, w, 1, 2000), 0);
  /* Both are in the file now: the big record could not wait in the
   * buffer. */
  s = get_stats(w);
  assert_int_equal(s.events, 4);
  assert_true(s.commits >= 2);
  tu_assert_tail(path, 0);
  d = tu_load(path);
  ev = tu_events(d);
  assert_int_equal(jc_len(d, ev), 3);
  e = jc_first(d, ev);
  tu_check_pname(&W, d, e);
  tu_check_event_pad(&W, d, e = jc_next(d, e), 0, 10);
  tu_check_event_pad(&W, d, e = jc_next(d, e), 1, 2000);
  jc_free(d);

  assert_int_equal(tu_emit_pad(&W, w, 2, 5), 0);
  assert_int_equal(tu_emit_pad(&W, w, 3, 3000), 0);
  assert_int_equal(tu_emit_pad(&W, w, 4, 5), 0);
  assert_int_equal(tw_close(w), 0);
  tu_assert_tail(path, 0);
  d = tu_load(path);
  ev = tu_events(d);
  assert_int_equal(jc_len(d, ev), 6);
  e = jc_first(d, ev);
  tu_check_pname(&W, d, e);
  tu_check_event_pad(&W, d, e = jc_next(d, e), 0, 10);
  tu_check_event_pad(&W, d, e = jc_next(d, e), 1, 2000);
  tu_check_event_pad(&W, d, e = jc_next(d, e), 2, 5);
  tu_check_event_pad(&W, d, e = jc_next(d, e), 3, 3000);
  tu_check_event_pad(&W, d, e = jc_next(d, e), 4, 5);
  jc_free(d);
  tu_cleanup(path);
}

/* The first record is a record like any other: a process_name longer than
 * the buffer must not make tw_open fail (buffer_size only bounds what
 * waits between commits; max_event bounds records). */
static void test_process_name_larger_than_buffer(void **state)
{
  char *path = tu_tmppath(".json");
  tw_options o = make_opts(256, FMT_ARRAY);
  char name[601];
  tw_writer *w;
  jc_doc *d;
  jc_val ev;
  int err = 0;

  (void)state;
  memset(name, 'n', sizeof name - 1);
  name[sizeof name - 1] = '\0';
  o.process_name = name;
  w = tw_open(path, &o, &err);
  if (!w)
    fail_msg("tw_open with buffer_size 256 and a 600-byte process_name: "
             "NULL, error %d (%s)", err, tw_err_name(err));
  assert_int_equal(tw_close(w), 0);
  tu_assert_tail(path, 0);
  d = tu_load(path);
  ev = tu_events(d);
  assert_int_equal(jc_len(d, ev), 1);
  check_pname(d, jc_first(d, ev), name);
  jc_free(d);
  tu_cleanup(path);
}

/* The first record is formatted on the stack: a process_name of about
 * 3.5 KiB is written whole; one of 5000 bytes is TW_ETOOBIG (documented
 * limit), and the open fails cleanly. */
static void test_process_name_limit(void **state)
{
  char *path = tu_tmppath(".json");
  tw_options o = make_opts(TW_DEFAULT_BUFFER_SIZE, FMT_ARRAY);
  static char name[5001];
  tw_writer *w;
  jc_doc *d;
  jc_val ev;
  int err = 0;

  (void)state;
  memset(name, 'n', 3500);
  name[3500] = '\0';
  o.process_name = name;
  w = tw_open(path, &o, &err);
  assert_non_null(w);
  assert_int_equal(tw_close(w), 0);
  tu_assert_tail(path, 0);
  d = tu_load(path);
  ev = tu_events(d);
  assert_int_equal(jc_len(d, ev), 1);
  check_pname(d, jc_first(d, ev), name);
  jc_free(d);

  memset(name, 'n', sizeof name - 1);
  name[sizeof name - 1] = '\0';
  err = 0;
  assert_null(tw_open(path, &o, &err));
  assert_int_equal(err, TW_ETOOBIG);
  assert_null(tw_open(path, &o, NULL));
  tu_cleanup(path);
}

/* The big event of test_max_event_whatever_the_slot: BIG_ARGS integer
 * args (each asks for a number's widest room, and takes one byte), and a
 * name of namelen 'n's. */
#define BIG_ARGS 150
static int emit_big(tw_writer *w, size_t namelen)
{
  static char keys[BIG_ARGS][8], name[8192];
  tw_arg args[BIG_ARGS];
  tw_event ev = { 0 };

  for (int k = 0; k < BIG_ARGS; k++) {
    snprintf(keys[k], sizeof keys[k], "k%03d", k);
    args[k] = tw_arg_int(keys[k], 1);
  }
  assert_true(namelen < sizeof name);
  memset(name, 'n', namelen);
  name[namelen] = '\0';
  ev.ph = 'X';
  ev.name = name;
  ev.has = TW_HAS_TS;
  ev.ts = 5;
  ev.dur = 1;
  ev.args = args;
  ev.nargs = BIG_ARGS;
  return tw_emit(w, &ev);
}

/* The record's length of the big event with an empty name: ",\n" and its
 * line, read back from a file. */
static size_t big_record_base(const char *options)
{
  char *path = tu_tmppath(".json"), *line = NULL, err[128];
  size_t cap = 0, base = 0;
  ssize_t n;
  tw_options o;
  tw_writer *w;
  FILE *f;
  int rc;

  assert_int_equal(tw_options_init(&o), 0);
  assert_int_equal(tw_options_parse(&o, options, err, sizeof err), 0);
  o.max_event = 1u << 20;
  assert_non_null(w = tw_open(path, &o, &rc));
  assert_int_equal(emit_big(w, 0), 0);
  assert_int_equal(tw_close(w), 0);
  assert_non_null(f = fopen(path, "r"));
  while ((n = getline(&line, &cap, f)) > 0)
    if (strstr(line, "\"k149\""))
      base = (size_t)n - 1 + 2;      /* less its '\n', plus ",\n" */
  free(line);
  fclose(f);
  jc_free(tu_load(path));            /* strict JSON, as every file */
  tu_cleanup(path);
  assert_true(base > 0);
  return base;
}

/* Whether an event is refused for max_event depends on its record's
 * length only, never on how full the thread's slot is (tw_emit(3)): after
 * 0..250 small events, an event of exactly max_event bytes is written,
 * one byte more is TW_ETOOBIG.  Its integer args ask for more room than
 * they take, so a slot with less room than that used to refuse it. */
static void test_max_event_whatever_the_slot(void **state)
{
  static const char *const writers[] = {
    "max_event=4KiB,buffer=64KiB",
    "max_event=4KiB,buffer=64KiB,sink=mmap",
    "max_event=4KiB,buffer=64KiB,commit=background,formatter=committer",
  };
  (void)state;
  for (size_t k = 0; k < sizeof writers / sizeof writers[0]; k++) {
    size_t exact = 4096 - big_record_base(writers[k]);
    for (int fill = 0; fill <= 250; fill += 5) {
      char *path = tu_tmppath(".json"), err[128];
      tw_options o;
      tw_writer *w;
      jc_doc *d;
      jc_val ev, big = -1;
      int rc, events = 0;

      assert_int_equal(tw_options_init(&o), 0);
      assert_int_equal(tw_options_parse(&o, writers[k], err, sizeof err), 0);
      assert_non_null(w = tw_open(path, &o, &rc));
      for (int i = 0; i < fill; i++)
        assert_int_equal(tw_complete(w, "c", "small", 100 + i, 1, NULL, 0),
                         0);
      if ((rc = emit_big(w, exact)) != 0)
        fail_msg("%s: after %d events, a record of max_event bytes: %s",
                 writers[k], fill, tw_err_name(rc));
      assert_int_equal(emit_big(w, exact + 1), TW_ETOOBIG);
      assert_int_equal(tw_close(w), 0);
      d = tu_load(path);
      for (ev = jc_first(d, tu_events(d)); ev >= 0; ev = jc_next(d, ev)) {
        size_t len;
        if (jc_streq(d, jc_get(d, ev, "ph"), "M"))
          continue;
        events++;
        jc_str(d, jc_get(d, ev, "name"), &len);
        if (len == exact)
          big = ev;
        else
          tu_assert_str(d, ev, "name", "small");
      }
      assert_int_equal(events, fill + 1);
      assert_true(big >= 0);
      tu_assert_us(d, big, "ts", 5);
      tu_assert_us(d, big, "dur", 1);
      for (int a = 0; a < BIG_ARGS; a++) {
        char key[8];
        snprintf(key, sizeof key, "k%03d", a);
        tu_assert_int(d, jc_get(d, big, "args"), key, 1);
      }
      jc_free(d);
      tu_cleanup(path);
    }
  }
}

/* max_event bounds the formatted record: with the defaults (max_string
 * 64 KiB, max_event 1 MiB), sixteen plain ASCII strings of 60000 bytes (a
 * record of about 960 KB) are accepted and written whole. */
static void test_many_long_args_under_max_event(void **state)
{
  enum { NARGS = 16, LEN = 60000 };
  char *path = tu_tmppath(".json");
  tw_options o = make_opts(TW_DEFAULT_BUFFER_SIZE, FMT_ARRAY);
  static char text[LEN + 1];
  char names[NARGS][4];
  tw_arg args[NARGS];
  tw_writer *w;
  jc_doc *d;
  jc_val ev, e;
  int err = 0, rc;

  (void)state;
  memset(text, 't', LEN);
  for (int k = 0; k < NARGS; k++) {
    snprintf(names[k], sizeof names[k], "a%d", k);
    args[k] = tw_arg_str(names[k], text);
  }
  w = tw_open(path, &o, &err);
  assert_non_null(w);
  rc = tw_complete(w, "test", "wide", 1, 1, args, NARGS);
  if (rc != 0) {
    tw_close(w);
    tu_cleanup(path);
    fail_msg("an event of %d ASCII strings of %d bytes (about %d KB "
             "formatted, max_event %zu): %d (%s), expected 0", NARGS, LEN,
             NARGS * LEN / 1000, o.max_event, rc, tw_err_name(rc));
  }
  assert_int_equal(tw_close(w), 0);
  tu_assert_tail(path, 0);
  d = tu_load(path);
  ev = tu_events(d);
  assert_int_equal(jc_len(d, ev), 2);
  e = jc_next(d, jc_first(d, ev));
  tu_assert_str(d, e, "name", "wide");
  assert_int_equal(jc_len(d, jc_get(d, e, "args")), NARGS);
  for (int k = 0; k < NARGS; k++)
    tu_assert_str(d, jc_get(d, e, "args"), names[k], text);
  jc_free(d);
  tu_cleanup(path);
}

/* The process_name is copied at open: the caller's string may change. */
static void test_process_name_copied(void **state)
{
  char *path = tu_tmppath(".json");
  tw_options o = make_opts(1024, FMT_ARRAY);
  char name[16] = PNAME;
  tw_writer *w;
  int err = 0;

  (void)state;
  o.process_name = name;
  w = tw_open(path, &o, &err);
  assert_non_null(w);
  memset(name, 'x', sizeof name - 1);
  assert_int_equal(tw_close(w), 0);
  tu_check_file(&W, path, 0, FMT_ARRAY, 0);
  tu_cleanup(path);
}

/* file_mode gives the new file's permissions (before the umask). */
static void test_file_mode(void **state)
{
  char *path = tu_tmppath(".json");
  tw_options o = make_opts(1024, FMT_ARRAY);
  struct stat st;
  mode_t old;
  tw_writer *w;
  int err = 0;

  (void)state;
  assert_int_equal(unlink(path), 0);
  o.file_mode = 0640;
  old = umask(022);
  w = tw_open(path, &o, &err);
  umask(old);
  assert_non_null(w);
  assert_int_equal(stat(path, &st), 0);
  assert_int_equal(st.st_mode & 07777, 0640);
  assert_int_equal(tw_close(w), 0);
  tu_check_file(&W, path, 0, FMT_ARRAY, 0);
  tu_cleanup(path);
}

/* tw_open truncates an existing file. */
static void test_open_truncates(void **state)
{
  char *path = tu_tmppath(".json");
  tw_options o = make_opts(1024, FMT_ARRAY);
  FILE *f = fopen(path, "w");
  tw_writer *w;
  int err = 0;

  (void)state;
  assert_non_null(f);
  for (int k = 0; k < 1000; k++)
    fputs("old content that must go\n", f);
  assert_int_equal(fclose(f), 0);
  w = tw_open(path, &o, &err);
  assert_non_null(w);
  tu_check_file(&W, path, 0, FMT_ARRAY, 0);
  assert_int_equal(tu_emit(&W, w, 0), 0);
  assert_int_equal(tw_close(w), 0);
  tu_check_file(&W, path, 0, FMT_ARRAY, 1);
  tu_cleanup(path);
}

/* ------------------------------------------------------------ tw_open_fd */

/* A seekable fd: the trace starts at the current offset, the bytes before
 * it stay, the bytes after it go, and the fd stays the caller's. */
static void test_open_fd_offset(void **state)
{
  char *path = tu_tmppath(".json");
  tw_options o = make_opts(1024, FMT_ARRAY);
  tw_writer *w;
  char *buf;
  size_t len;
  int fd, err = 0;

  (void)state;
  fd = open(path, O_RDWR);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, "PREFIX", 6), 6);
  for (int k = 0; k < 500; k++)
    assert_int_equal(write(fd, "GARBAGE-GARBAGE\n", 16), 16);
  assert_int_equal(lseek(fd, 6, SEEK_SET), 6);

  w = tw_open_fd(fd, &o, &err);
  assert_non_null(w);
  buf = tu_read_file(path, &len);
  assert_true(len > 6);
  assert_memory_equal(buf, "PREFIX", 6);
  assert_null(strstr(buf, "GARBAGE"));
  tu_check_mem(&W, buf + 6, len - 6, 0, FMT_ARRAY, 0);
  free(buf);

  for (int i = 0; i < 20; i++)
    assert_int_equal(tu_emit(&W, w, i), 0);
  assert_int_equal(tw_flush(w), 0);
  buf = tu_read_file(path, &len);
  assert_memory_equal(buf, "PREFIX", 6);
  tu_check_mem(&W, buf + 6, len - 6, 0, FMT_ARRAY, 20);
  free(buf);

  for (int i = 20; i < 30; i++)
    assert_int_equal(tu_emit(&W, w, i), 0);
  assert_int_equal(tw_close(w), 0);
  /* The fd is still open and still ours. */
  assert_true(fcntl(fd, F_GETFD) != -1);
  buf = tu_read_file(path, &len);
  assert_memory_equal(buf, "PREFIX", 6);
  assert_null(strstr(buf, "GARBAGE"));
  tu_check_mem(&W, buf + 6, len - 6, 0, FMT_ARRAY, 30);
  free(buf);
  tu_assert_tail(path, 0);
  assert_int_equal(close(fd), 0);
  tu_cleanup(path);
}

/* An O_APPEND fd cannot be rewritten: records stream, the tail comes only
 * at close. */
static void append_run(int format)
{
  char *path = tu_tmppath(".json");
  tw_options o = make_opts(1024, format);
  const char *tail = TU_TAIL(format == FMT_OBJECT);
  tw_writer *w;
  char *buf;
  size_t len;
  int fd, err = 0;

  fd = open(path, O_WRONLY | O_APPEND);
  assert_true(fd >= 0);
  w = tw_open_fd(fd, &o, &err);
  assert_non_null(w);
  for (int i = 0; i < 40; i++)
    assert_int_equal(tu_emit(&W, w, i), 0);
  assert_int_equal(tw_flush(w), 0);

  /* Streamed so far: every event, but no tail yet. */
  buf = tu_read_file(path, &len);
  assert_true(len > 0);
  assert_int_not_equal(buf[len - 1], '\n');
  buf = realloc(buf, len + strlen(tail) + 1);
  assert_non_null(buf);
  memcpy(buf + len, tail, strlen(tail) + 1);
  tu_check_mem(&W, buf, len + strlen(tail), 0, format, 40);
  free(buf);

  assert_int_equal(tw_close(w), 0);
  assert_true(fcntl(fd, F_GETFD) != -1);
  tu_check_file(&W, path, 0, format, 40);
  assert_int_equal(close(fd), 0);
  tu_cleanup(path);
}

static void test_open_fd_append(void **state)
{
  (void)state;
  append_run(FMT_ARRAY);
  append_run(FMT_OBJECT);
}

/* A pipe: a reader thread collects everything; valid after close. */
static void pipe_run(int format, size_t buffer_size, int n)
{
  tw_options o = make_opts(buffer_size, format);
  tu_pipe_reader r;
  tw_writer *w;
  size_t len;
  char *buf;
  int p[2], err = 0;

  assert_int_equal(pipe(p), 0);
  tu_pipe_reader_start(&r, p[0]);
  w = tw_open_fd(p[1], &o, &err);
  assert_non_null(w);
  for (int i = 0; i < n; i++) {
    assert_int_equal(tu_emit(&W, w, i), 0);
    if (i % 500 == 0)
      assert_int_equal(tw_flush(w), 0);
  }
  assert_int_equal(tw_close(w), 0);
  assert_true(fcntl(p[1], F_GETFD) != -1);
  assert_int_equal(close(p[1]), 0);
  buf = tu_pipe_reader_join(&r, &len);
  tu_check_mem(&W, buf, len, 0, format, n);
  free(buf);
  assert_int_equal(close(p[0]), 0);
}

static void test_open_fd_pipe(void **state)
{
  (void)state;
  pipe_run(FMT_ARRAY, TW_DEFAULT_BUFFER_SIZE, 3000);
  pipe_run(FMT_ARRAY, 256, 3000);
  pipe_run(FMT_OBJECT, 1024, 500);
}

/* ---------------------------------------------------------- tw_open_stream */

static void test_open_stream_tmpfile(void **state)
{
  tw_options o = make_opts(1024, FMT_ARRAY);
  tw_writer *w;
  FILE *f = tmpfile();
  char *buf;
  long size;
  int err = 0;

  (void)state;
  assert_non_null(f);
  w = tw_open_stream(f, &o, &err);
  assert_non_null(w);
  for (int i = 0; i < 50; i++)
    assert_int_equal(tu_emit(&W, w, i), 0);
  assert_int_equal(tw_flush(w), 0);

  /* Flushed to the file, but streaming: no tail before close. */
  {
    struct stat st;
    ssize_t k;
    assert_int_equal(fstat(fileno(f), &st), 0);
    assert_true(st.st_size > 0);
    buf = malloc((size_t)st.st_size + 8);
    assert_non_null(buf);
    k = pread(fileno(f), buf, (size_t)st.st_size, 0);
    assert_int_equal(k, st.st_size);
    assert_int_not_equal(buf[k - 1], ']');
    assert_int_not_equal(buf[k - 1], '\n');
    memcpy(buf + k, TU_TAIL(0), strlen(TU_TAIL(0)));
    tu_check_mem(&W, buf, (size_t)k + strlen(TU_TAIL(0)), 0, FMT_ARRAY, 50);
    free(buf);
  }

  for (int i = 50; i < 70; i++)
    assert_int_equal(tu_emit(&W, w, i), 0);
  assert_int_equal(tw_close(w), 0);
  /* The stream is still open and usable. */
  assert_int_equal(ferror(f), 0);
  assert_int_equal(fflush(f), 0);
  assert_int_equal(fseek(f, 0, SEEK_END), 0);
  size = ftell(f);
  assert_true(size > 0);
  rewind(f);
  buf = malloc((size_t)size);
  assert_non_null(buf);
  assert_int_equal(fread(buf, 1, (size_t)size, f), (size_t)size);
  tu_check_mem(&W, buf, (size_t)size, 0, FMT_ARRAY, 70);
  free(buf);
  assert_int_equal(fclose(f), 0);
}

static void test_open_stream_fopen(void **state)
{
  char *path = tu_tmppath(".json");
  tw_options o = make_opts(256, FMT_OBJECT);
  tw_writer *w;
  FILE *f;
  int err = 0;

  (void)state;
  f = fopen(path, "w");
  assert_non_null(f);
  w = tw_open_stream(f, &o, &err);
  assert_non_null(w);
  for (int i = 0; i < 200; i++)
    assert_int_equal(tu_emit(&W, w, i), 0);
  assert_int_equal(tw_close(w), 0);
  /* Not closed by tw_close: we can still write through it. */
  assert_int_equal(ferror(f), 0);
  assert_int_equal(fclose(f), 0);
  tu_check_file(&W, path, 0, FMT_OBJECT, 200);
  tu_cleanup(path);
}

/* ------------------------------------------------------ on_full=drop */

/* Check a streamed trace with drops: the events whose emit returned 0
 * (accepted[i]) appear once each, in order, the others never.  Returns
 * the sum of the drop reports ("tracewriter: events dropped", a global
 * instant) and their number in *reports. */
static uint64_t check_drops(const char *buf, size_t len, const int *accepted,
                            int n, int *reports_out)
{
  uint64_t reported = 0, count;
  int next = 0, reports = 0;
  jc_doc *d = tu_load_mem(buf, len);
  jc_val ev = tu_events(d), e;

  assert_true(len >= strlen(TU_TAIL(0)));
  assert_memory_equal(buf + len - strlen(TU_TAIL(0)), TU_TAIL(0),
                      strlen(TU_TAIL(0)));
  e = jc_first(d, ev);
  tu_check_pname(&W, d, e);
  for (e = jc_next(d, e); e >= 0; e = jc_next(d, e)) {
    if (jc_streq(d, jc_get(d, e, "name"), "tracewriter: events dropped")) {
      tu_assert_str(d, e, "ph", "I");
      tu_assert_str(d, e, "s", "g");
      tu_assert_str(d, e, "cat", "tracewriter");
      assert_int_equal(jc_uint64(d, jc_get(d, jc_get(d, e, "args"),
                                           "dropped"), &count), 0);
      assert_true(count > 0);
      reported += count;
      reports++;
      continue;
    }
    while (next < n && !accepted[next])
      next++;
    assert_true(next < n);
    tu_check_event_pad(&W, d, e, next, pad_of(next));
    next++;
  }
  while (next < n && !accepted[next])
    next++;
  assert_int_equal(next, n);               /* every accepted one is there */
  jc_free(d);
  *reports_out = reports;
  return reported;
}

/* A background committer blocked on a full pipe makes on_full=drop drop,
 * deterministically: nobody reads until the first TW_EDROPPED.  Then a
 * reader drains the pipe; flush_first: tw_flush and a few more events
 * before tw_close, else tw_close at once. */
static void drop_run(int flush_first)
{
  /* Room to fill a pipe of the default 64 KiB too, should F_SETPIPE_SZ
   * fail. */
  enum { N = 2000 };
  tw_options o = make_opts(256, FMT_ARRAY);
  static int accepted[N];
  tw_stats s;
  uint64_t drops = 0, reported;
  tw_writer *w;
  tu_pipe_reader r;
  size_t len;
  char *buf;
  int p[2], err = 0, i, first_drop = -1, reports;

  o.commit = TW_COMMIT_BACKGROUND;
  o.buffer_count = 2;
  o.on_full = TW_ON_FULL_DROP;
  assert_int_equal(pipe(p), 0);
  (void)fcntl(p[1], F_SETPIPE_SZ, 4096);    /* fills sooner; may fail */
  w = tw_open_fd(p[1], &o, &err);
  assert_non_null(w);
  memset(accepted, 0, sizeof accepted);
  /* Until the pipe is full and the committer stuck: then drops. */
  for (i = 0; i < N - 100; i++) {
    int rc = tu_emit(&W, w, i);
    if (rc == TW_EDROPPED) {
      drops++;
      if (first_drop < 0)
        first_drop = i;
    } else {
      assert_int_equal(rc, 0);
      accepted[i] = 1;
    }
    if (first_drop >= 0 && i >= first_drop + 20)
      break;
  }
  assert_true(first_drop >= 0);
  s = get_stats(w);
  assert_int_equal(s.dropped, drops);
  assert_int_equal(s.error, 0);

  /* Drain; go on. */
  tu_pipe_reader_start(&r, p[0]);
  if (flush_first) {
    assert_int_equal(tw_flush(w), 0);
    for (i++; i < N; i++) {
      int rc = tu_emit(&W, w, i);
      if (rc == TW_EDROPPED)
        drops++;
      else {
        assert_int_equal(rc, 0);
        accepted[i] = 1;
      }
    }
    assert_int_equal(tw_flush(w), 0);
  } else {
    i++;
  }
  s = get_stats(w);
  assert_int_equal(s.dropped, drops);
  assert_int_equal(tw_close(w), 0);
  assert_int_equal(close(p[1]), 0);
  buf = tu_pipe_reader_join(&r, &len);
  assert_int_equal(close(p[0]), 0);
  reported = check_drops(buf, len, accepted, i, &reports);
  free(buf);
  if (reported != drops)
    fail_msg("%llu events dropped, the file's %d drop reports count %llu",
             (unsigned long long)drops, reports,
             (unsigned long long)reported);
}

static void test_drop_when_full(void **state)
{
  (void)state;
  drop_run(1);
}

/* Drops just before tw_close: the last commit must carry their report. */
static void test_drop_report_at_close(void **state)
{
  (void)state;
  drop_run(0);
}

/* ------------------------------------------------------------ I/O errors */

/* /dev/full: the head is committed at open, so the open itself fails with
 * -ENOSPC; if a later version defers it, the first flush must fail with
 * -ENOSPC and stay failed. */
static void check_dev_full_writer(tw_writer *w, int err)
{
  if (!w) {
    assert_int_equal(err, -ENOSPC);
    return;
  }
  assert_int_equal(tu_emit(&W, w, 0), 0);
  assert_int_equal(tw_flush(w), -ENOSPC);
  assert_int_equal(tw_errcode(w), -ENOSPC);
  assert_int_equal(tu_emit(&W, w, 1), -ENOSPC);
  assert_int_equal(tw_flush(w), -ENOSPC);
  assert_int_equal(tw_close(w), -ENOSPC);
}

static void test_dev_full(void **state)
{
  tw_options o = make_opts(1024, FMT_ARRAY);
  tw_writer *w;
  FILE *f;
  int fd, err = 0;

  (void)state;
  if (access("/dev/full", W_OK) != 0)
    skip();
  w = tw_open("/dev/full", &o, &err);
  check_dev_full_writer(w, err);

  fd = open("/dev/full", O_WRONLY);
  assert_true(fd >= 0);
  err = 0;
  w = tw_open_fd(fd, &o, &err);
  check_dev_full_writer(w, err);
  /* Failed or closed, the fd is still the caller's. */
  assert_true(fcntl(fd, F_GETFD) != -1);
  assert_int_equal(close(fd), 0);

  f = fopen("/dev/full", "w");
  assert_non_null(f);
  err = 0;
  w = tw_open_stream(f, &o, &err);
  check_dev_full_writer(w, err);
  fclose(f);                         /* fails: the buffer cannot go out */
}

/* A pipe whose reader went away: the writer gets -EPIPE (SIGPIPE
 * ignored), sticky from then on. */
static void test_sticky_epipe(void **state)
{
  tw_options o = make_opts(1024, FMT_ARRAY);
  struct sigaction ign, old;
  tw_writer *w;
  tw_stats s;
  int p[2], err = 0;

  (void)state;
  memset(&ign, 0, sizeof ign);
  ign.sa_handler = SIG_IGN;
  assert_int_equal(sigaction(SIGPIPE, &ign, &old), 0);
  assert_int_equal(pipe(p), 0);
  w = tw_open_fd(p[1], &o, &err);
  assert_non_null(w);
  assert_int_equal(close(p[0]), 0);
  assert_int_equal(tu_emit(&W, w, 0), 0);
  assert_int_equal(tw_flush(w), -EPIPE);
  assert_int_equal(tw_errcode(w), -EPIPE);
  s = get_stats(w);
  assert_int_equal(s.error, -EPIPE);
  /* Sticky: every later call fails at once. */
  assert_int_equal(tu_emit(&W, w, 1), -EPIPE);
  assert_int_equal(tw_flush(w), -EPIPE);
  assert_int_equal(tw_errcode(w), -EPIPE);
  /* Even a call with bad input fails (with the sticky error or its own
   * code): never 0. */
  assert_int_not_equal(tw_complete(w, NULL, NULL, 0, 0, NULL, 0), 0);
  assert_int_equal(tw_close(w), -EPIPE);
  assert_true(fcntl(p[1], F_GETFD) != -1);
  assert_int_equal(close(p[1]), 0);
  assert_int_equal(sigaction(SIGPIPE, &old, NULL), 0);
}

/* Exit codes of the RLIMIT_FSIZE child (0: all checks passed). */
enum {
  FS_OK = 0, FS_SETUP = 10, FS_OPEN, FS_NOERROR, FS_WRONG_ERROR,
  FS_ERRCODE, FS_EMIT_NOT_STICKY, FS_FLUSH_NOT_STICKY, FS_STATS,
  FS_CLOSE, FS_REPORT, FS_NOTHING_COMMITTED
};

#define FSIZE_LIMIT (64 * 1024)

/* In a forked child: write under RLIMIT_FSIZE, flushing after every
 * flush_every events, until the error; check it is -EFBIG and sticky;
 * report through report_fd how many events were committed, the index of
 * the event whose call failed, and whether that call was an emit (an
 * overflow commit) or a flush. */
static int fsize_child(const char *path, size_t buffer_size, int flush_every,
                       int report_fd)
{
  tw_options o = make_opts(buffer_size, FMT_ARRAY);
  struct rlimit rl;
  tw_writer *w;
  tw_stats s;
  uint64_t prev;
  int committed = 0, rc = 0, err = 0, in_emit = 0, i;
  int report[3];

  signal(SIGXFSZ, SIG_IGN);
  rl.rlim_cur = rl.rlim_max = FSIZE_LIMIT;
  if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
    return FS_SETUP;
  if (!(w = tw_open(path, &o, &err)))
    return FS_OPEN;
  if (tw_get_stats(w, &s) != 0)
    return FS_STATS;
  prev = s.commits;
  for (i = 0; i < 1000000; i++) {
    if ((rc = tu_emit(&W, w, i)) != 0) {
      in_emit = 1;
      break;
    }
    if (tw_get_stats(w, &s) != 0)
      return FS_STATS;
    if (s.commits != prev)              /* overflow: 0..i-1 committed */
      committed = i;
    prev = s.commits;
    if (i % flush_every == flush_every - 1) {
      if ((rc = tw_flush(w)) != 0)
        break;
      committed = i + 1;
      if (tw_get_stats(w, &s) != 0)
        return FS_STATS;
      prev = s.commits;
    }
  }
  if (rc == 0)
    return FS_NOERROR;
  if (rc != -EFBIG)
    return FS_WRONG_ERROR;
  if (committed == 0)
    return FS_NOTHING_COMMITTED;
  if (tw_errcode(w) != -EFBIG)
    return FS_ERRCODE;
  if (tu_emit(&W, w, i + 1) != -EFBIG || tu_emit_pad(&W, w, i + 2, 0) != -EFBIG)
    return FS_EMIT_NOT_STICKY;
  if (tw_flush(w) != -EFBIG || tw_flush(w) != -EFBIG)
    return FS_FLUSH_NOT_STICKY;
  if (tw_get_stats(w, &s) != 0 || s.error != -EFBIG)
    return FS_STATS;
  if (tw_close(w) != -EFBIG)
    return FS_CLOSE;
  report[0] = committed;
  report[1] = i;
  report[2] = in_emit;
  if (write(report_fd, report, sizeof report) != (ssize_t)sizeof report)
    return FS_REPORT;
  return FS_OK;
}

/* Returns whether the error came from an emit (1) or a flush (0). */
static int fsize_run(size_t buffer_size, int flush_every)
{
  char *path = tu_tmppath(".json");
  int p[2], status, report[3];
  pid_t pid;

  assert_int_equal(pipe(p), 0);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    int code;
    close(p[0]);
    code = fsize_child(path, buffer_size, flush_every, p[1]);
    free(path);
    _exit(code);
  }
  close(p[1]);
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  if (WEXITSTATUS(status) != FS_OK)
    fail_msg("RLIMIT_FSIZE child (buffer %zu, flush every %d) failed with "
             "code %d", buffer_size, flush_every, WEXITSTATUS(status));
  assert_int_equal(read(p[0], report, sizeof report), (ssize_t)sizeof report);
  close(p[0]);
  assert_true(report[0] > 0);
  assert_true(report[1] >= report[0]);
  /* The file is the last commit: valid, exactly the committed events. */
  assert_true(file_size(path) <= FSIZE_LIMIT);
  W.pid = W.tid = pid;       /* the child's only thread */
  tu_check_file(&W, path, 0, FMT_ARRAY, report[0]);
  W.pid = W.tid = 0;
  tu_cleanup(path);
  return report[2];
}

static void test_rlimit_fsize(void **state)
{
  (void)state;
  fsize_run(1024, 5);                  /* overflows and flushes */
  fsize_run(256, 5);
  assert_int_equal(fsize_run(TW_DEFAULT_BUFFER_SIZE, 5), 0); /* flush */
  assert_int_equal(fsize_run(1024, 1000000), 1);  /* overflow in emit */
  assert_int_equal(fsize_run(256, 1000000), 1);
}

/* ---------------------------------------------------------- open errors */

static void test_open_errors(void **state)
{
  tw_options o;
  char *path = tu_tmppath(".json");
  char bad[4096];
  tw_writer *w;
  int err, fd;

  (void)state;
  snprintf(bad, sizeof bad, "%s.no-such-dir/x.json", path);
  err = 0;
  assert_null(tw_open(bad, NULL, &err));
  assert_int_equal(err, -ENOENT);
  assert_null(tw_open(bad, NULL, NULL));          /* error may be NULL */

  err = 0;
  assert_null(tw_open(NULL, NULL, &err));
  assert_int_equal(err, -EINVAL);
  assert_null(tw_open(NULL, NULL, NULL));

  /* struct_size from an incompatible version. */
  tw_options_init(&o);
  o.struct_size = 8;
  err = 0;
  assert_null(tw_open(path, &o, &err));
  assert_int_equal(err, TW_EVERSION);
  o.struct_size = sizeof o + 8;
  err = 0;
  assert_null(tw_open(path, &o, &err));
  assert_int_equal(err, TW_EVERSION);
  o.struct_size = 0;
  err = 0;
  assert_null(tw_open(path, &o, &err));
  assert_int_equal(err, TW_EVERSION);

  /* Values out of range. */
#define BAD_OPTION(field, value, code)                                      \
  do {                                                                      \
    tw_options_init(&o);                                                    \
    o.field = (value);                                                      \
    err = 0;                                                                \
    assert_null(tw_open(path, &o, &err));                                   \
    if (err != (code))                                                      \
      fail_msg("tw_open with " #field " = " #value ": %d (%s), expected %s",\
               err, tw_err_name(err), #code);                              \
    err = 0;                                                                \
    fd = open(path, O_RDWR);                                                \
    assert_true(fd >= 0);                                                   \
    assert_null(tw_open_fd(fd, &o, &err));                                  \
    assert_int_equal(err, (code));                                          \
    assert_true(fcntl(fd, F_GETFD) != -1);                                  \
    close(fd);                                                              \
  } while (0)
  BAD_OPTION(buffer_size, 10, TW_EOPTION);
  BAD_OPTION(buffer_size, 255, TW_EOPTION);
  BAD_OPTION(buffer_size, 0, TW_EOPTION);
  BAD_OPTION(format, 7, TW_EOPTION);
  BAD_OPTION(format, -1, TW_EOPTION);
  BAD_OPTION(sink, 99, TW_EOPTION);
  BAD_OPTION(sink, -1, TW_EOPTION);
  BAD_OPTION(flags, 0x100u, TW_EOPTION);
  BAD_OPTION(flags, 0x80000000u, TW_EOPTION);
  BAD_OPTION(max_event, 100, TW_EOPTION);
  BAD_OPTION(max_string, 0, TW_EOPTION);
  BAD_OPTION(max_string, TW_MIN_MAX_STRING - 1, TW_EOPTION);
  BAD_OPTION(gzip_level, 10, TW_EOPTION);
  BAD_OPTION(file_mode, -1, TW_EOPTION);
  BAD_OPTION(file_mode, 010000, TW_EOPTION);
  BAD_OPTION(commit, 3, TW_EOPTION);
  BAD_OPTION(commit, -1, TW_EOPTION);
  BAD_OPTION(buffer_count, 0, TW_EOPTION);
  BAD_OPTION(buffer_count, 1, TW_EOPTION);
  BAD_OPTION(buffer_count, TW_MAX_BUFFER_COUNT + 1, TW_EOPTION);
  BAD_OPTION(mmap_chunk, 100, TW_EOPTION);
  BAD_OPTION(on_full, 2, TW_EOPTION);
  BAD_OPTION(on_full, -1, TW_EOPTION);
#undef BAD_OPTION

  /* mmap needs a seekable regular file: never a pipe. */
  {
    int p[2];
    assert_int_equal(pipe(p), 0);
    tw_options_init(&o);
    o.sink = TW_SINK_MMAP;
    err = 0;
    assert_null(tw_open_fd(p[1], &o, &err));
    assert_int_equal(err, TW_ESINK);
    close(p[0]);
    close(p[1]);
  }

  /* The same for streams. */
  {
    FILE *f = tmpfile();
    assert_non_null(f);
    tw_options_init(&o);
    o.sink = TW_SINK_MMAP;
    err = 0;
    assert_null(tw_open_stream(f, &o, &err));
    assert_int_equal(err, TW_ESINK);
    o.sink = TW_SINK_GZIP;
    err = 0;
    assert_null(tw_open_stream(f, &o, &err));
    assert_int_equal(err, TW_ESINK);
    o.sink = TW_SINK_AUTO;
    o.format = 7;
    err = 0;
    assert_null(tw_open_stream(f, &o, &err));
    assert_int_equal(err, TW_EOPTION);
    o.format = 0;
    o.struct_size = 4;
    err = 0;
    assert_null(tw_open_stream(f, &o, &err));
    assert_int_equal(err, TW_EVERSION);
    /* Nothing was written to the stream. */
    assert_int_equal(fflush(f), 0);
    assert_int_equal(ftell(f), 0);
    fclose(f);
  }

  /* Bad descriptors. */
  err = 0;
  assert_null(tw_open_fd(-1, NULL, &err));
  assert_int_equal(err, -EBADF);
  assert_null(tw_open_fd(-1, NULL, NULL));
  fd = open(path, O_RDONLY);
  assert_true(fd >= 0);
  err = 0;
  assert_null(tw_open_fd(fd, NULL, &err));
  assert_int_equal(err, -EBADF);
  assert_true(fcntl(fd, F_GETFD) != -1);
  close(fd);
  /* A closed descriptor number. */
  fd = open(path, O_WRONLY);
  assert_true(fd >= 0);
  close(fd);
  err = 0;
  assert_null(tw_open_fd(fd, NULL, &err));
  assert_int_equal(err, -EBADF);

  err = 0;
  assert_null(tw_open_stream(NULL, NULL, &err));
  assert_int_equal(err, -EINVAL);
  assert_null(tw_open_stream(NULL, NULL, NULL));

  /* A good open after all that works and leaves err alone or 0. */
  err = 0;
  w = tw_open(path, NULL, &err);
  assert_non_null(w);
  assert_int_equal(err, 0);
  assert_int_equal(tw_close(w), 0);
  tu_cleanup(path);
}

/* The mmap and gzip sinks: TW_ESINK while this version lacks them; once
 * they exist, a plain open/emit/close must work. */
static void test_other_sinks(void **state)
{
  static const int sinks[] = { TW_SINK_MMAP, TW_SINK_GZIP };

  (void)state;
  for (size_t k = 0; k < 2; k++) {
    char *path = tu_tmppath(sinks[k] == TW_SINK_GZIP ? ".json.gz" : ".json");
    tw_options o = make_opts(1024, FMT_ARRAY);
    tw_writer *w;
    int err = 0, fd;

    o.sink = sinks[k];
    w = tw_open(path, &o, &err);
    if (!w) {
      assert_int_equal(err, TW_ESINK);
    } else {
      for (int i = 0; i < 5; i++)
        assert_int_equal(tu_emit(&W, w, i), 0);
      assert_int_equal(tw_close(w), 0);
      if (sinks[k] == TW_SINK_MMAP)
        tu_check_file(&W, path, 0, FMT_ARRAY, 5);
    }
    fd = open(path, O_RDWR | O_TRUNC);
    assert_true(fd >= 0);
    err = 0;
    w = tw_open_fd(fd, &o, &err);
    if (!w) {
      assert_int_equal(err, TW_ESINK);
    } else {
      for (int i = 0; i < 5; i++)
        assert_int_equal(tu_emit(&W, w, i), 0);
      assert_int_equal(tw_close(w), 0);
      if (sinks[k] == TW_SINK_MMAP)
        tu_check_file(&W, path, 0, FMT_ARRAY, 5);
    }
    assert_true(fcntl(fd, F_GETFD) != -1);
    close(fd);
    tu_cleanup(path);
  }
}

/* ---------------------------------------------------------------- stats */

/* 64 bytes: TW_MIN_MAX_STRING. */
#define STR64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void stats_run(int format)
{
  char *path = tu_tmppath(".json");
  tw_options o = make_opts(1024, format);
  size_t tail_len = strlen(TU_TAIL(format == FMT_OBJECT));
  tw_writer *w;
  tw_stats s;
  tw_event ev;
  tw_arg a;
  jc_doc *d;
  jc_val evs, e;
  int err = 0;

  o.max_string = TW_MIN_MAX_STRING;
  w = tw_open(path, &o, &err);
  assert_non_null(w);
  s = get_stats(w);
  assert_int_equal(s.events, 2);
  assert_int_equal(s.commits, 1);
  assert_int_equal(s.bytes, file_size(path) - (off_t)tail_len);
  assert_int_equal(s.rejected, 0);
  assert_int_equal(s.strings_truncated, 0);
  assert_int_equal(s.utf8_replaced, 0);
  assert_int_equal(s.dropped, 0);
  assert_int_equal(s.error, 0);

  /* Two good events: one with a long string, one with invalid UTF-8. */
  a = tw_arg_str("s", STR64 "0123456789abcdefghijklmnopqrstuvwxyz");
  assert_int_equal(tw_complete(w, "c", "long", 1000, 1, &a, 1), 0);
  a = tw_arg_str("s", "ab\xff" "cd");
  assert_int_equal(tw_complete(w, "c", "bad-utf8", 2000, 1, &a, 1), 0);
  /* Two bad ones. */
  memset(&ev, 0, sizeof ev);
  ev.ph = 'Z';
  ev.name = "bad-phase";
  assert_int_equal(tw_emit(w, &ev), TW_EEVENT);
  ev.ph = 'X';
  ev.name = NULL;
  assert_int_equal(tw_emit(w, &ev), TW_EEVENT);
  assert_int_equal(tw_emit(w, NULL), -EINVAL);

  s = get_stats(w);
  assert_int_equal(s.events, 4);
  assert_int_equal(s.commits, 1);
  assert_int_equal(s.rejected, 2);
  assert_int_equal(s.strings_truncated, 1);
  assert_int_equal(s.utf8_replaced, 1);
  assert_int_equal(s.error, 0);
  assert_int_equal(tw_flush(w), 0);
  s = get_stats(w);
  assert_int_equal(s.commits, 2);
  assert_int_equal(s.bytes, file_size(path) - (off_t)tail_len);

  /* Grow past the buffer: bytes follows every record. */
  for (int i = 0; i < 40; i++)
    assert_int_equal(tu_emit_pad(&W, w, i, 8), 0);
  assert_int_equal(tw_flush(w), 0);
  s = get_stats(w);
  assert_int_equal(s.events, 44);
  assert_true(s.commits > 3);
  assert_int_equal(s.bytes, file_size(path) - (off_t)tail_len);

  /* A size smaller than the first tw_stats (which ended with rotations),
   * NULL stats, NULL writer. */
  assert_int_equal(tw_get_stats_sized(w, &s, offsetof(tw_stats, rotations)),
                   TW_EVERSION);
  /* The first tw_stats: the fields it had, nothing written past them. */
  {
    size_t v1 = offsetof(tw_stats, rotations) + sizeof s.rotations;
    tw_stats old;
    memset(&old, 0xAA, sizeof old);
    assert_int_equal(tw_get_stats_sized(w, &old, v1), 0);
    assert_int_equal(old.events, 44);
    assert_int_equal(old.bytes, s.bytes);
    assert_int_equal(old.restarts, 0xAAAAAAAAAAAAAAAAull);
  }
  assert_int_equal(tw_get_stats_sized(w, &s, 0), TW_EVERSION);
  /* A caller built against a newer, larger tw_stats: what this library
   * knows, then zeros. */
  {
    struct { tw_stats known; uint64_t later[3]; } big;
    memset(&big, 0xAA, sizeof big);
    assert_int_equal(tw_get_stats_sized(w, &big.known, sizeof big), 0);
    assert_int_equal(big.known.events, 44);
    assert_int_equal(big.known.bytes, s.bytes);
    for (int k = 0; k < 3; k++)
      assert_int_equal(big.later[k], 0);
  }
  assert_int_equal(tw_get_stats(w, NULL), -EINVAL);
  assert_int_equal(tw_get_stats(NULL, NULL), -EINVAL);
  memset(&s, 0xAA, sizeof s);
  assert_int_equal(tw_get_stats(NULL, &s), 0);
  assert_int_equal(s.events, 0);
  assert_int_equal(s.bytes, 0);
  assert_int_equal(s.commits, 0);
  assert_int_equal(s.rejected, 0);
  assert_int_equal(s.strings_truncated, 0);
  assert_int_equal(s.utf8_replaced, 0);
  assert_int_equal(s.dropped, 0);
  assert_int_equal(s.error, 0);

  assert_int_equal(tw_close(w), 0);

  /* The file: what the stats counted. */
  tu_assert_tail(path, format == FMT_OBJECT);
  d = tu_load(path);
  evs = tu_events(d);
  assert_int_equal(jc_len(d, evs), 43);
  e = jc_first(d, evs);
  tu_check_pname(&W, d, e);
  e = jc_next(d, e);
  tu_assert_str(d, e, "name", "long");
  tu_assert_str(d, jc_get(d, e, "args"), "s", STR64);
  e = jc_next(d, e);
  tu_assert_str(d, e, "name", "bad-utf8");
  tu_assert_str(d, jc_get(d, e, "args"), "s", "ab\xef\xbf\xbd" "cd");
  for (int i = 0; i < 40; i++)
    tu_check_event_pad(&W, d, e = jc_next(d, e), i, 8);
  jc_free(d);
  tu_cleanup(path);
}

static void test_stats(void **state)
{
  (void)state;
  stats_run(FMT_ARRAY);
  stats_run(FMT_OBJECT);
}

/* --------------------------------------------------- errors and version */

static void test_strerror(void **state)
{
  static const struct { int code; const char *name; } codes[] = {
#define TW__T(name, value, msg) { TW_##name, "TW_" #name },
    TW_ERRNO_MAP(TW__T)
#undef TW__T
  };
  size_t n = sizeof codes / sizeof codes[0];

  int lowest = 0;

  (void)state;
  assert_true(n >= 13);
  for (size_t i = 0; i < n; i++) {
    const char *msg = tw_strerror(codes[i].code);
    const char *name = tw_err_name(codes[i].code);
    assert_non_null(msg);
    assert_true(msg[0] != '\0');
    assert_string_not_equal(msg, "unknown error");
    assert_string_equal(name, codes[i].name);
    assert_true(codes[i].code < -1000);
    if (codes[i].code < lowest)
      lowest = codes[i].code;
    for (size_t j = 0; j < i; j++) {
      assert_int_not_equal(codes[i].code, codes[j].code);
      assert_string_not_equal(msg, tw_strerror(codes[j].code));
      assert_string_not_equal(name, tw_err_name(codes[j].code));
    }
  }
  assert_string_equal(tw_strerror(-ENOSPC), strerror(ENOSPC));
  assert_string_equal(tw_err_name(-ENOSPC), "ENOSPC");
  assert_string_equal(tw_strerror(-EFBIG), strerror(EFBIG));
  assert_string_equal(tw_err_name(-EFBIG), "EFBIG");
  assert_string_equal(tw_err_name(-EBADF), "EBADF");
  assert_string_equal(tw_strerror(0), "success");
  assert_string_equal(tw_err_name(0), "0");
  {
    const int unknown[] = { -999999, 5, 1, INT32_MAX, INT32_MIN, -1500,
                            -1000, lowest - 1, TW_ERRNO_END_ };
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
      assert_string_equal(tw_strerror(unknown[i]), "unknown error");
      assert_string_equal(tw_err_name(unknown[i]), "UNKNOWN");
    }
  }
  assert_string_equal(tw_version(), TW_VERSION_STRING);
}

/* ------------------------------------------------------------------ fork */

enum { FK_OK = 0, FK_EMIT = 20, FK_FLUSH, FK_HELPER, FK_CLOSE };

static int fork_child(tw_writer *w)
{
  if (tu_emit(&W, w, 100) != TW_EFORKED)
    return FK_EMIT;
  if (tw_flush(w) != TW_EFORKED)
    return FK_FLUSH;
  if (tw_instant(w, NULL, "child", 'g', NULL, 0) != TW_EFORKED)
    return FK_HELPER;
  if (tw_close(w) != 0)
    return FK_CLOSE;
  return FK_OK;
}

static void fork_run(int use_fd, int commit)
{
  char *path = tu_tmppath(".json");
  tw_options o = make_opts(1024, FMT_ARRAY);
  tw_writer *w;
  char *before, *after;
  size_t blen, alen;
  int status, err = 0, fd = -1;
  pid_t pid;

  o.commit = commit;
  if (use_fd) {
    fd = open(path, O_WRONLY);
    assert_true(fd >= 0);
    w = tw_open_fd(fd, &o, &err);
  } else {
    w = tw_open(path, &o, &err);
  }
  assert_non_null(w);
  for (int i = 0; i < 5; i++)
    assert_int_equal(tu_emit(&W, w, i), 0);
  assert_int_equal(tw_flush(w), 0);
  /* Something buffered, not committed, at the fork: the child must not
   * write it either. */
  assert_int_equal(tu_emit(&W, w, 5), 0);
  before = tu_read_file(path, &blen);

  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    /* Free what the parent allocated, so leak checkers (valgrind) have
     * nothing to report when the child leaves. */
    int code = fork_child(w);
    free(before);
    free(path);
    _exit(code);
  }
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  if (WEXITSTATUS(status) != FK_OK)
    fail_msg("fork child failed with code %d", WEXITSTATUS(status));

  /* The child wrote nothing. */
  after = tu_read_file(path, &alen);
  assert_int_equal(alen, blen);
  assert_memory_equal(after, before, blen);
  free(before);
  free(after);
  tu_check_file(&W, path, 0, FMT_ARRAY, 5);

  for (int i = 6; i < 12; i++)
    assert_int_equal(tu_emit(&W, w, i), 0);
  assert_int_equal(tw_close(w), 0);
  tu_check_file(&W, path, 0, FMT_ARRAY, 12);
  if (fd >= 0)
    assert_int_equal(close(fd), 0);
  tu_cleanup(path);
}

/* After fork the child's writer refuses every call (TW_EFORKED) and its
 * tw_close writes nothing, not even what the parent had buffered: the
 * parent's file is byte for byte as before, and the parent goes on.  For
 * tw_open and tw_open_fd, inline and background commits. */
static void test_forked_child_refused_file_untouched(void **state)
{
  (void)state;
  fork_run(0, TW_COMMIT_INLINE);
  fork_run(1, TW_COMMIT_INLINE);
  fork_run(0, TW_COMMIT_BACKGROUND);
}

/* ------------------------------------------------------------- NULL writer */

static void test_null_writer(void **state)
{
  tw_event ev;

  (void)state;
  memset(&ev, 0, sizeof ev);
  ev.ph = 'X';
  ev.name = "x";
  assert_int_equal(tw_flush(NULL), 0);
  assert_int_equal(tw_close(NULL), 0);
  assert_int_equal(tw_errcode(NULL), 0);
  assert_int_equal(tw_emit(NULL, &ev), 0);
  assert_int_equal(tw_emit(NULL, NULL), 0);
  assert_int_equal(tw_complete(NULL, "c", "n", 1, 2, NULL, 0), 0);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_commit_array_256),
    cmocka_unit_test(test_commit_array_1024),
    cmocka_unit_test(test_commit_object_256),
    cmocka_unit_test(test_commit_object_1024),
    cmocka_unit_test(test_commit_background),
    cmocka_unit_test(test_flush_interval),
    cmocka_unit_test(test_default_process_name),
    cmocka_unit_test(test_record_larger_than_buffer),
    cmocka_unit_test(test_process_name_larger_than_buffer),
    cmocka_unit_test(test_process_name_limit),
    cmocka_unit_test(test_many_long_args_under_max_event),
    cmocka_unit_test(test_max_event_whatever_the_slot),
    cmocka_unit_test(test_process_name_copied),
    cmocka_unit_test(test_file_mode),
    cmocka_unit_test(test_open_truncates),
    cmocka_unit_test(test_open_fd_offset),
    cmocka_unit_test(test_open_fd_append),
    cmocka_unit_test(test_open_fd_pipe),
    cmocka_unit_test(test_open_stream_tmpfile),
    cmocka_unit_test(test_open_stream_fopen),
    cmocka_unit_test(test_drop_when_full),
    cmocka_unit_test(test_drop_report_at_close),
    cmocka_unit_test(test_dev_full),
    cmocka_unit_test(test_sticky_epipe),
    cmocka_unit_test(test_rlimit_fsize),
    cmocka_unit_test(test_open_errors),
    cmocka_unit_test(test_other_sinks),
    cmocka_unit_test(test_stats),
    cmocka_unit_test(test_strerror),
    cmocka_unit_test(test_forked_child_refused_file_untouched),
    cmocka_unit_test(test_null_writer),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
