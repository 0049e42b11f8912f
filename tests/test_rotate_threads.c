/* test_rotate_threads.c -- rotation while threads emit and another thread
 * flushes, reads the stats or crashes
 *
 * For every combination of producer threads (1, 4), sink (file, file with
 * a background committer, mmap, gzip), rotation (by size, by time) and a
 * concurrent caller (a thread calling tw_flush in a loop, one calling
 * tw_get_stats in a loop), then tw_close after the join: every event is
 * in exactly one of the files, each thread's events in the order it
 * emitted them, every file strict JSON that begins with the process name
 * and ends exactly at its tail.  Then crash=commit with a fatal signal in
 * one thread while the others rotate: every file strict, each thread's
 * events in order with no gap and no repeat.
 *
 * (The combination of threads, mmap, rotation and a flushing thread once
 * rotated from two threads at a time: a crash, or lost events.)
 *
 * TW_TEST_SCALE (testutil.h) divides the events per thread; TW_TEST_ROUNDS (default 1)
 * repeats the whole matrix, for soak runs.
 */
#include "testutil.h"
#include "gunzip.h"
#include "rotate.h"            /* tw__rotated_name */

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADS_MAX 4

static int env_int(const char *name, int dflt)
{
  const char *s = getenv(name);
  long k = s && *s ? strtol(s, NULL, 10) : dflt;

  return k < 1 ? 1 : (int)k;
}

/* --------------------------------------------------------- the files */

/* A directory of its own for each run, and the trace path in it. */
typedef struct place {
  char dir[256];
  char path[320];
  int gz;
} place;

static void place_new(place *p, int gz)
{
  const char *tmp = getenv("TMPDIR");

  snprintf(p->dir, sizeof p->dir, "%s/twrt-XXXXXX",
           tmp && *tmp ? tmp : "/tmp");
  assert_non_null(mkdtemp(p->dir));
  snprintf(p->path, sizeof p->path, "%s/trace.json%s", p->dir,
           gz ? ".gz" : "");
  p->gz = gz;
}

/* File n of the trace: 1.. the finished ones, 0 the live one. */
static void file_of(const place *p, unsigned long n, char *out, size_t size)
{
  if (n == 0)
    snprintf(out, size, "%s", p->path);
  else
    assert_int_equal(tw__rotated_name(out, size, p->path, n), 0);
}

static int exists(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0;
}

/* Check one file strictly (one complete gzip member for gzip, ending
 * exactly at the tail, the process name first) and add its events to
 * next[]: each (t, i) must be thread t's next i.  Returns the X events
 * it held. */
static int check_file(const place *p, const char *path, int nthreads,
                      int *next)
{
  size_t len, jlen;
  char *bytes = tu_read_file(path, &len), *json = bytes;
  jc_doc *d;
  jc_val e;
  int xs = 0;

  if (p->gz && !(json = tu_gunzip(bytes, len, &jlen)))
    fail_msg("%s: not one complete gzip member", path);
  if (!p->gz)
    jlen = len;
  if (jlen < 2 || memcmp(json + jlen - 2, "\n]", 2) != 0)
    fail_msg("%s: does not end exactly at its tail", path);
  d = tu_load_mem(json, jlen);
  e = jc_first(d, tu_events(d));
  tu_assert_str(d, e, "ph", "M");
  tu_assert_str(d, e, "name", "process_name");
  tu_assert_str(d, jc_get(d, e, "args"), "name", "rotating");
  for (e = jc_next(d, e); e >= 0; e = jc_next(d, e)) {
    jc_val args = jc_get(d, e, "args");
    int64_t t = -1, i = -1;
    uint64_t dur = 1;

    if (jc_streq(d, jc_get(d, e, "ph"), "M"))
      continue;                        /* repeated metadata */
    if (!jc_streq(d, jc_get(d, e, "ph"), "X") ||
        !jc_streq(d, jc_get(d, e, "name"), "work") ||
        jc_int64(d, jc_get(d, args, "t"), &t) != 0 ||
        jc_int64(d, jc_get(d, args, "i"), &i) != 0 ||
        jc_us_to_ns(d, jc_get(d, e, "dur"), &dur) != 0 || dur != 0)
    {
      size_t rl;
      const char *raw = jc_raw(d, e, &rl);
      fail_msg("%s: a record that is not a producer's event: %.*s", path,
               (int)rl, raw);
    }
    if (t < 0 || t >= nthreads || i != next[t])
      fail_msg("%s: thread %lld event %lld where %d was expected (lost, "
               "repeated or out of order)", path, (long long)t,
               (long long)i, t >= 0 && t < nthreads ? next[t] : -1);
    next[t]++;
    xs++;
  }
  jc_free(d);
  if (json != bytes)
    free(json);
  free(bytes);
  return xs;
}

/* Check every file of the trace, oldest first, the live one last, and
 * remove them.  Returns how many finished files there were. */
static unsigned long check_trace(const place *p, int nthreads, int *next)
{
  char name[400];
  unsigned long n;

  memset(next, 0, sizeof *next * THREADS_MAX);
  for (n = 1;; n++) {
    file_of(p, n, name, sizeof name);
    if (!exists(name))
      break;
    (void)check_file(p, name, nthreads, next);
  }
  (void)check_file(p, p->path, nthreads, next);
  for (unsigned long k = 0; k < n; k++) {
    file_of(p, k, name, sizeof name);
    unlink(name);
  }
  assert_int_equal(rmdir(p->dir), 0);
  return n - 1;
}

/* ------------------------------------------------------- the threads */

typedef struct producer {
  tw_writer *w;
  int t, n;
  int failures, first_rc;
} producer;

static void *producer_main(void *arg)
{
  producer *p = arg;

  for (int i = 0; i < p->n; i++) {
    tw_arg args[2] = { tw_arg_int("t", p->t), tw_arg_int("i", i) };
    int rc = tw_complete(p->w, "rot", "work", 1000, 0, args, 2);
    if (rc != 0 && p->failures++ == 0)
      p->first_rc = rc;
  }
  return NULL;
}

enum { BESIDE_FLUSH, BESIDE_STATS };

typedef struct beside {
  tw_writer *w;
  int what;
  int stop;                /* atomic */
  int calls, failures, first_rc;
} beside;

static void *beside_main(void *arg)
{
  beside *b = arg;

  while (!__atomic_load_n(&b->stop, __ATOMIC_ACQUIRE)) {
    tw_stats s;
    int rc = b->what == BESIDE_FLUSH ? tw_flush(b->w)
                                     : tw_get_stats(b->w, &s);
    if (rc == 0 && b->what == BESIDE_STATS && s.error != 0)
      rc = s.error;
    if (rc != 0 && b->failures++ == 0)
      b->first_rc = rc;
    b->calls++;
  }
  return NULL;
}

static const char *const sink_names[] = {
  "file", "file,commit=background", "mmap", "gzip"
};
/* By size: 16 KiB, or the least, 4 KiB, of compressed bytes for gzip,
 * so that every run rotates, even scaled down. */
static const char *const rotation_names[] = {
  "rotate=16KiB", "rotate_every=2ms"
};

/* One combination: run it and check every file. */
static void run(int nthreads, int sink, int rotation, int what)
{
  char optstr[200], err[200];
  producer ps[THREADS_MAX];
  pthread_t th[THREADS_MAX], bth;
  /* At least 4,000 events a thread (about 240 KB of JSON), however
   * scaled down: enough to rotate at 16 KiB, and at 4 KiB of gzip. */
  int next[THREADS_MAX], n = (int)tu_scaled(20000) + 1;
  unsigned long finished;
  beside b;
  tw_options o;
  tw_stats s;
  tw_writer *w;
  place p;
  int rc;

  if (n < 4001)
    n = 4001;
  place_new(&p, sink == 3);
  snprintf(optstr, sizeof optstr, "sink=%s,%s,keep=all,buffer=4KiB,"
           "chunk=4KiB", sink_names[sink],
           sink == 3 && rotation == 0 ? "rotate=4KiB"
                                      : rotation_names[rotation]);
  assert_int_equal(tw_options_init(&o), 0);
  if (tw_options_parse(&o, optstr, err, sizeof err) != 0)
    fail_msg("%s: %s", optstr, err);
  o.process_name = "rotating";
  if (!(w = tw_open(p.path, &o, &rc)))
    fail_msg("%s: tw_open: %s", optstr, tw_strerror(rc));
  memset(&b, 0, sizeof b);
  b.w = w;
  b.what = what;
  assert_int_equal(pthread_create(&bth, NULL, beside_main, &b), 0);
  for (int t = 0; t < nthreads; t++) {
    ps[t] = (producer){ w, t, n, 0, 0 };
    assert_int_equal(pthread_create(&th[t], NULL, producer_main, &ps[t]), 0);
  }
  for (int t = 0; t < nthreads; t++)
    assert_int_equal(pthread_join(th[t], NULL), 0);
  __atomic_store_n(&b.stop, 1, __ATOMIC_RELEASE);
  assert_int_equal(pthread_join(bth, NULL), 0);
  for (int t = 0; t < nthreads; t++)
    if (ps[t].failures)
      fail_msg("%s, %d threads: thread %d: %d calls failed, the first %s",
               optstr, nthreads, t, ps[t].failures,
               tw_err_name(ps[t].first_rc));
  if (b.failures)
    fail_msg("%s: %d concurrent calls failed, the first %s", optstr,
             b.failures, tw_err_name(b.first_rc));
  assert_int_equal(tw_get_stats(w, &s), 0);
  if ((rc = tw_close(w)) != 0)
    fail_msg("%s: tw_close: %s", optstr, tw_err_name(rc));
  finished = check_trace(&p, nthreads, next);
  for (int t = 0; t < nthreads; t++)
    if (next[t] != n)
      fail_msg("%s, %d threads: thread %d has %d events in the files, "
               "emitted %d", optstr, nthreads, t, next[t], n);
  /* Every file but the live one was begun by a rotation. */
  assert_int_equal(s.rotations, finished);
  if (rotation == 0 && finished == 0)
    fail_msg("%s: no rotation", optstr);
}

static void test_matrix(void **state)
{
  int rounds = env_int("TW_TEST_ROUNDS", 1);

  (void)state;
  for (int round = 0; round < rounds; round++)
    for (int threads = 1; threads <= THREADS_MAX; threads += 3)
      for (int sink = 0; sink < 4; sink++)
        for (int rotation = 0; rotation < 2; rotation++)
          for (int what = BESIDE_FLUSH; what <= BESIDE_STATS; what++)
            run(threads, sink, rotation, what);
}

/* -------------------------------------------- a crash during rotation */

/* In a child: producers on a rotating writer with crash=commit, and
 * after a while a fatal signal in one of them. */
static void crash_child(const place *p, const char *sink, int report_fd)
{
  char optstr[200];
  producer ps[THREADS_MAX];
  pthread_t th[THREADS_MAX];
  tw_options o;
  tw_writer *w;
  int rc;

  /* The default action, not the test runner's handler: the hook then
   * knows the process dies. */
  signal(SIGSEGV, SIG_DFL);
  snprintf(optstr, sizeof optstr, "sink=%s,rotate=8KiB,keep=all,buffer=4KiB,"
           "crash=commit", sink);
  if (tw_options_init(&o) != 0 || tw_options_parse(&o, optstr, NULL, 0) != 0)
    _exit(3);
  o.process_name = "rotating";
  if (!(w = tw_open(p->path, &o, &rc)))
    _exit(4);
  for (int t = 0; t < THREADS_MAX - 1; t++) {
    ps[t] = (producer){ w, t, 1 << 30, 0, 0 };
    if (pthread_create(&th[t], NULL, producer_main, &ps[t]) != 0)
      _exit(5);
  }
  /* The last thread emits until the writer has rotated a few times,
   * then crashes, while the others go on rotating. */
  ps[THREADS_MAX - 1] = (producer){ w, THREADS_MAX - 1, 1, 0, 0 };
  for (int i = 0;; i++) {
    tw_stats s;
    tw_arg args[2] = { tw_arg_int("t", THREADS_MAX - 1), tw_arg_int("i", i) };
    if (tw_complete(w, "rot", "work", 1000, 0, args, 2) != 0)
      _exit(6);
    if (i % 64 == 0 && tw_get_stats(w, &s) == 0 && s.rotations >= 20) {
      int emitted = i + 1;
      if (write(report_fd, &emitted, sizeof emitted) != sizeof emitted)
        _exit(7);
      raise(SIGSEGV);
    }
  }
}

static void test_crash_during_rotation(void **state)
{
  static const char *const sinks[] = { "file", "file,commit=background",
                                       "gzip" };
  int next[THREADS_MAX];

  (void)state;
  for (size_t k = 0; k < sizeof sinks / sizeof sinks[0]; k++) {
    int status, fds[2], emitted = -1;
    place p;
    pid_t pid;

    place_new(&p, k == 2);
    assert_int_equal(pipe(fds), 0);
    if ((pid = fork()) == 0) {
      close(fds[0]);
      crash_child(&p, sinks[k], fds[1]);
    }
    assert_true(pid > 0);
    close(fds[1]);
    assert_int_equal(read(fds[0], &emitted, sizeof emitted),
                     sizeof emitted);
    close(fds[0]);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSEGV)
      fail_msg("sink=%s: the child did not die of SIGSEGV (status %#x)",
               sinks[k], status);
    assert_true(check_trace(&p, THREADS_MAX, next) >= 20);
    /* The crashing thread's events are all there: the hook committed
     * what it had staged. */
    assert_int_equal(next[THREADS_MAX - 1], emitted);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_matrix),
    cmocka_unit_test(test_crash_during_rotation),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
