/* test_threads.c -- many threads on one writer
 *
 * Every event of every thread must be in the file exactly once, each
 * thread's events in the order it emitted them and with its own tid, and
 * the file must be strict JSON: on every sink, with 8 and 32 threads,
 * with the default buffer and a small one, with flushes racing the
 * producers, with large records (larger than a thread's slot) among small
 * ones, and with a background committer.  Then what per-thread staging
 * must not strand: the records of a thread gone idle (the flush timer, a
 * flush, close), of a thread that exited without a flush, of threads that
 * open and close their own writers.
 *
 * TW_TEST_SCALE (testutil.h: default 10, 1 for make check-long) divides
 * the number of events per thread.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* gettid */
#endif
#include "numbered.h"
#include "gunzip.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_THREADS 32

/* Events per thread, divided by TW_TEST_SCALE (testutil.h). */
static int scaled(int n)
{
  return (int)tu_scaled((unsigned long)n);
}

/* One producer thread's work. */
typedef struct producer {
  tw_writer *w;
  pthread_barrier_t *start; /* all threads start together */
  int t;                    /* thread index, written as args.t */
  int n;                    /* events to emit */
  int big_every;            /* > 0: every big_every-th event is big */
  size_t big_len;           /* length of a big event's string arg */
  int64_t tid;              /* out: the kernel thread id */
  int failures;             /* out: calls that did not return 0 */
  int first_rc;             /* out: the first such return */
} producer;

/* The string of a big event: its length and its content are a function
 * of (t, i), so a record spliced with another thread's shows. */
static void fill_big(char *buf, size_t len, int t, int i)
{
  for (size_t k = 0; k < len; k++)
    buf[k] = (char)('a' + (size_t)(t * 7 + i + (int)k) % 26);
  buf[len] = '\0';
}

static size_t big_len_of(const producer *p, int i)
{
  return p->big_len + (size_t)(i % 13);
}

static int is_big(int big_every, int i)
{
  return big_every > 0 && i % big_every == big_every - 1;
}

static void *producer_main(void *arg)
{
  producer *p = arg;
  char *big = NULL;

  p->tid = gettid();
  if (p->big_every) {
    big = malloc(p->big_len + 16);
    if (!big) {
      p->failures++;
      return NULL;
    }
  }
  pthread_barrier_wait(p->start);
  for (int i = 0; i < p->n; i++) {
    tw_arg args[3];
    size_t nargs = 2;
    int rc;

    args[0] = tw_arg_int("t", p->t);
    args[1] = tw_arg_int("i", i);
    if (is_big(p->big_every, i)) {
      fill_big(big, big_len_of(p, i), p->t, i);
      args[2] = tw_arg_str("big", big);
      nargs = 3;
    }
    rc = tw_complete(p->w, "thr", "work", 1000u + (uint64_t)i, 5, args,
                     nargs);
    if (rc != 0 && p->failures++ == 0)
      p->first_rc = rc;
  }
  free(big);
  return NULL;
}

/* A flusher thread: flushes until told to stop, counting failures. */
typedef struct flusher {
  tw_writer *w;
  pthread_barrier_t *start; /* released with the producers */
  int stop;                 /* atomic */
  int flushes;
  int failures;
} flusher;

static void *flusher_main(void *arg)
{
  flusher *f = arg;

  /* Start with the producers and flush at least once: on a loaded
   * machine the producers may all finish before this thread runs. */
  pthread_barrier_wait(f->start);
  do {
    if (tw_flush(f->w) != 0)
      f->failures++;
    f->flushes++;
    sched_yield();
  } while (!__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE));
  return NULL;
}

/* Check the file: the process_name record, then every (t, i) exactly
 * once, each thread's i in increasing order (no gap, no repeat), each
 * with its thread's tid, intact big strings.  Walks the array once.
 * Events numbered per thread and interleaved: not numbered.h's single
 * sequence, which the tests of one thread use. */
static void check_threads_file(const char *path, int gz, int object_form,
                       producer *ps, int nthreads)
{
  int next[MAX_THREADS] = { 0 };
  size_t total = 1;
  char *big = NULL;
  size_t big_cap = 0;
  int64_t mypid = getpid();
  jc_doc *d;
  jc_val ev, e;

  for (int t = 0; t < nthreads; t++) {
    total += (size_t)ps[t].n;
    if (ps[t].big_every && ps[t].big_len + 16 > big_cap)
      big_cap = ps[t].big_len + 16;
  }
  if (big_cap) {
    big = malloc(big_cap);
    assert_non_null(big);
  }
  d = tu_load_trace_file(path, gz, object_form);
  ev = tu_events(d);
  assert_int_equal(jc_len(d, ev), total);
  e = jc_first(d, ev);
  tu_assert_str(d, e, "ph", "M");
  tu_assert_str(d, e, "name", "process_name");
  tu_assert_str(d, jc_get(d, e, "args"), "name", "threads");
  for (e = jc_next(d, e); e >= 0; e = jc_next(d, e)) {
    jc_val args = jc_get(d, e, "args");
    int64_t t = 0, i = 0, tid, pid;  /* (clang: fail_msg may return) */
    uint64_t ts, dur;
    producer *p;

    if (jc_int64(d, jc_get(d, args, "t"), &t) != 0 ||
        jc_int64(d, jc_get(d, args, "i"), &i) != 0)
      fail_msg("an event without integer args t and i");
    if (t < 0 || t >= nthreads)
      fail_msg("args.t = %lld out of range", (long long)t);
    p = &ps[t];
    if (i != next[t])
      fail_msg("thread %lld: event i=%lld where i=%d was expected (lost, "
               "repeated or out of order)", (long long)t, (long long)i,
               next[t]);
    next[t]++;
    if (jc_int64(d, jc_get(d, e, "tid"), &tid) != 0 || tid != p->tid)
      fail_msg("thread %lld event %lld: tid %lld, expected %lld",
               (long long)t, (long long)i, (long long)tid,
               (long long)p->tid);
    /* Field by field, cheaply: 8 members, each key present once (the
     * count of members rules out duplicates), each value as emitted. */
    if (jc_len(d, e) != 8 ||
        !jc_streq(d, jc_get(d, e, "ph"), "X") ||
        !jc_streq(d, jc_get(d, e, "name"), "work") ||
        !jc_streq(d, jc_get(d, e, "cat"), "thr") ||
        jc_int64(d, jc_get(d, e, "pid"), &pid) != 0 || pid != mypid ||
        jc_us_to_ns(d, jc_get(d, e, "ts"), &ts) != 0 ||
        ts != 1000u + (uint64_t)i ||
        jc_us_to_ns(d, jc_get(d, e, "dur"), &dur) != 0 || dur != 5)
      fail_msg("thread %lld event %lld: wrong fields", (long long)t,
               (long long)i);
    if (is_big(p->big_every, (int)i)) {
      assert_int_equal(jc_len(d, args), 3);
      fill_big(big, big_len_of(p, (int)i), (int)t, (int)i);
      tu_assert_str(d, args, "big", big);
    } else {
      assert_int_equal(jc_len(d, args), 2);
    }
  }
  for (int t = 0; t < nthreads; t++)
    if (next[t] != ps[t].n)
      fail_msg("thread %d: %d events in the file, %d emitted", t, next[t],
               ps[t].n);
  jc_free(d);
  free(big);
}

/* Run nthreads producers of n events each (and a flusher if asked) on a
 * writer with these options; check the file. */
static void run(const tw_options *base, int nthreads, int n, int big_every,
                size_t big_len, int with_flusher)
{
  int gz = base->sink == TW_SINK_GZIP;
  char *path = tu_tmppath(gz ? ".json.gz" : ".json");
  tw_options o = *base;
  producer ps[MAX_THREADS];
  pthread_t th[MAX_THREADS], fth;
  pthread_barrier_t start;
  flusher fl;
  tw_writer *w;
  tw_stats s;
  int err = 0;

  assert_true(nthreads <= MAX_THREADS);
  o.process_name = "threads";
  w = tw_open(path, &o, &err);
  assert_non_null(w);
  assert_int_equal(pthread_barrier_init(&start, NULL,
                                        (unsigned)nthreads + 1
                                        + (with_flusher ? 1u : 0u)), 0);
  memset(&fl, 0, sizeof fl);
  fl.w = w;
  fl.start = &start;
  if (with_flusher)
    assert_int_equal(pthread_create(&fth, NULL, flusher_main, &fl), 0);
  for (int t = 0; t < nthreads; t++) {
    memset(&ps[t], 0, sizeof ps[t]);
    ps[t].w = w;
    ps[t].start = &start;
    ps[t].t = t;
    ps[t].n = n;
    ps[t].big_every = (t % 2 == 0) ? big_every : 0;  /* big among small */
    ps[t].big_len = big_len;
    assert_int_equal(pthread_create(&th[t], NULL, producer_main, &ps[t]), 0);
  }
  pthread_barrier_wait(&start);
  for (int t = 0; t < nthreads; t++)
    assert_int_equal(pthread_join(th[t], NULL), 0);
  if (with_flusher) {
    __atomic_store_n(&fl.stop, 1, __ATOMIC_RELEASE);
    assert_int_equal(pthread_join(fth, NULL), 0);
    assert_int_equal(fl.failures, 0);
    assert_true(fl.flushes > 0);
  }
  pthread_barrier_destroy(&start);
  for (int t = 0; t < nthreads; t++)
    if (ps[t].failures)
      fail_msg("thread %d: %d calls failed, the first with %d (%s)", t,
               ps[t].failures, ps[t].first_rc, tw_err_name(ps[t].first_rc));

  assert_int_equal(tw_get_stats(w, &s), 0);
  assert_int_equal(s.events, (uint64_t)nthreads * (uint64_t)n + 2);
  assert_int_equal(s.rejected, 0);
  assert_int_equal(s.error, 0);
  assert_int_equal(tw_close(w), 0);
  check_threads_file(path, gz, o.format == TW_FORMAT_OBJECT, ps, nthreads);
  tu_cleanup(path);
}

static tw_options opts(size_t buffer_size, int commit)
{
  tw_options o;
  assert_int_equal(tw_options_init(&o), 0);
  o.buffer_size = buffer_size;
  o.commit = commit;
  return o;
}

static void test_8x100k_default_buffer(void **state)
{
  tw_options o = opts(TW_DEFAULT_BUFFER_SIZE, TW_COMMIT_INLINE);
  (void)state;
  run(&o, 8, scaled(100000), 0, 0, 0);
}

static void test_8x100k_small_buffer(void **state)
{
  tw_options o = opts(4096, TW_COMMIT_INLINE);
  (void)state;
  run(&o, 8, scaled(100000), 0, 0, 0);
}

/* A background committer with two small buffers: producers often wait
 * for a free one. */
static void test_8x25k_background(void **state)
{
  tw_options o = opts(4096, TW_COMMIT_BACKGROUND);
  (void)state;
  o.buffer_count = 2;
  run(&o, 8, scaled(25000), 0, 0, 0);
}

/* tw_flush from another thread while 4 threads emit. */
static void test_concurrent_flush(void **state)
{
  tw_options o = opts(4096, TW_COMMIT_INLINE);
  (void)state;
  run(&o, 4, scaled(25000), 0, 0, 1);
  o = opts(1024, TW_COMMIT_BACKGROUND);
  o.format = TW_FORMAT_OBJECT;
  run(&o, 4, scaled(25000), 0, 0, 1);
}

/* Records over 4 KiB (the per-thread scratch) among small ones, from
 * several threads at once, some larger than the whole buffer. */
static void test_big_events(void **state)
{
  tw_options o = opts(4096, TW_COMMIT_INLINE);
  (void)state;
  run(&o, 6, scaled(5000), 7, 5000, 0);
  o = opts(TW_DEFAULT_BUFFER_SIZE, TW_COMMIT_INLINE);
  run(&o, 6, scaled(3000), 5, 20000, 1);
  o = opts(4096, TW_COMMIT_BACKGROUND);
  run(&o, 6, scaled(3000), 7, 9000, 1);
}

/* ------------------------------------------------------ every sink */

/* The sinks, as options: inline and background file, mmap, gzip. */
static tw_options sink_opts(int k)
{
  tw_options o;

  assert_int_equal(tw_options_init(&o), 0);
  switch (k) {
  case 0: o.sink = TW_SINK_FILE; o.commit = TW_COMMIT_INLINE; break;
  case 1: o.sink = TW_SINK_FILE; o.commit = TW_COMMIT_BACKGROUND; break;
  case 2: o.sink = TW_SINK_MMAP; break;
  default: o.sink = TW_SINK_GZIP; break;
  }
  return o;
}

static const char *const sink_names[4] = {
  "file", "file, background", "mmap", "gzip"
};

static void test_every_sink_8_threads(void **state)
{
  (void)state;
  for (int k = 0; k < 4; k++) {
    tw_options o = sink_opts(k);
    print_message("  %s: 8 threads x %d\n", sink_names[k], scaled(100000));
    run(&o, 8, scaled(100000), 0, 0, 0);
  }
}

static void test_every_sink_32_threads(void **state)
{
  (void)state;
  for (int k = 0; k < 4; k++) {
    tw_options o = sink_opts(k);
    print_message("  %s: 32 threads x %d\n", sink_names[k],
                  scaled(100000));
    run(&o, 32, scaled(100000), 0, 0, 0);
  }
}

/* Threads that outnumber the slots of a small background pool, with
 * records larger than a slot among small ones, on every buffering sink:
 * producers wait for slots and write large records past the queue. */
static void test_every_sink_big_events(void **state)
{
  (void)state;
  for (int k = 0; k < 4; k++) {
    tw_options o = sink_opts(k);
    o.buffer_size = 4096;
    o.buffer_count = 2;
    run(&o, 12, scaled(4000), 9, 6000, 1);
  }
}

/* ---------------------------------------------- nothing left stranded */

/* The events of a file as a count per thread index (args.t), after
 * checking the file strictly and each thread's events in order. */
static void count_in(jc_doc *d, const char *path, int nthreads, int *count)
{
  jc_val e = jc_first(d, tu_events(d));

  memset(count, 0, sizeof *count * (size_t)nthreads);
  tu_assert_str(d, e, "name", "process_name");
  for (e = jc_next(d, e); e >= 0; e = jc_next(d, e)) {
    jc_val args = jc_get(d, e, "args");
    int64_t t = -1, i = -1;

    if (jc_int64(d, jc_get(d, args, "t"), &t) != 0 || t < 0 ||
        t >= nthreads || jc_int64(d, jc_get(d, args, "i"), &i) != 0 ||
        i != count[t])
      fail_msg("%s: event (t %lld, i %lld) out of place", path,
               (long long)t, (long long)i);
    count[t]++;
  }
  jc_free(d);
}

static void count_events(const char *path, int gz, int nthreads, int *count)
{
  count_in(tu_load_trace_file(path, gz, 0), path, nthreads, count);
}

/* count_events of a file that a writer may be committing to: a read that
 * overlaps a commit can see the old tail and new records (a torn copy,
 * which is why tracewriter snapshot exists): such a read returns -1, for
 * the caller to read again.  Two equal reads in a row that parse are the
 * file as committed. */
static int count_live_events(const char *path, int gz, int nthreads,
                             int *count)
{
  size_t len, len2, n;
  char *a = tu_read_file(path, &len), *b = tu_read_file(path, &len2);
  char *json = a, err[256];
  jc_doc *d = NULL;

  if (len == len2 && memcmp(a, b, len) == 0) {
    n = len;
    if (gz && (json = tu_gunzip(a, len, &n)) == NULL)
      json = a, n = 0;
    if (n)
      d = tu_parse_trace(json, n, err, sizeof err);
    if (json != a)
      free(json);
  }
  free(a);
  free(b);
  if (!d)
    return -1;
  count_in(d, path, nthreads, count);
  return 0;
}

/* A thread that emits n events, then waits, idle, until released. */
typedef struct idler {
  tw_writer *w;
  int t, n;
  int emitted;              /* atomic: all n emitted */
  int release;              /* atomic: may return */
  int rc;
} idler;

static void *idler_main(void *arg)
{
  idler *p = arg;

  for (int i = 0; i < p->n && !p->rc; i++) {
    tw_arg args[2] = { tw_arg_int("t", p->t), tw_arg_int("i", i) };
    p->rc = tw_complete(p->w, "thr", "idle", 1000u + (uint64_t)i, 5, args,
                        2);
  }
  __atomic_store_n(&p->emitted, 1, __ATOMIC_RELEASE);
  while (!__atomic_load_n(&p->release, __ATOMIC_ACQUIRE))
    sched_yield();
  return NULL;
}

/* Wait until every idler has emitted. */
static void wait_emitted(idler *ps, int n)
{
  for (int t = 0; t < n; t++)
    while (!__atomic_load_n(&ps[t].emitted, __ATOMIC_ACQUIRE))
      sched_yield();
}

/* Threads emit a few events each (far less than a slot), then go idle
 * for good: the flush timer alone must bring their events to the file
 * (nobody flushes; the test only reads the file until they are there,
 * or its deadline passes).  On every buffering sink, inline and
 * background. */
static void test_idle_threads_flush_timer(void **state)
{
  enum { N = 4, EACH = 7 };
  static const int ks[] = { 0, 1, 3 };
  (void)state;

  for (size_t k = 0; k < sizeof ks / sizeof ks[0]; k++) {
    int gz = ks[k] == 3, count[N];
    char *path = tu_tmppath(gz ? ".json.gz" : ".json");
    tw_options o = sink_opts(ks[k]);
    idler ps[N];
    pthread_t th[N];
    uint64_t deadline;
    tw_writer *w;
    int err = 0, all;

    o.flush_interval_ns = 20u * 1000u * 1000u;       /* 20 ms */
    o.process_name = "threads";
    w = tw_open(path, &o, &err);
    assert_non_null(w);
    memset(ps, 0, sizeof ps);
    for (int t = 0; t < N; t++) {
      ps[t].w = w;
      ps[t].t = t;
      ps[t].n = EACH;
      assert_int_equal(pthread_create(&th[t], NULL, idler_main, &ps[t]), 0);
    }
    wait_emitted(ps, N);
    /* The file, read again and again (strictly each time), until the
     * timer has committed every event; 30 s is only a deadline. */
    deadline = tw_now_ns() + 30ull * 1000000000u;
    do {
      if (count_live_events(path, gz, N, count) != 0) {
        all = 0;
        continue;
      }
      all = 1;
      for (int t = 0; t < N; t++)
        all &= count[t] == EACH;
      if (!all)
        sched_yield();
    } while (!all && tw_now_ns() < deadline);
    if (!all)
      fail_msg("%s: the flush timer left idle threads' events out",
               sink_names[ks[k]]);
    for (int t = 0; t < N; t++) {
      __atomic_store_n(&ps[t].release, 1, __ATOMIC_RELEASE);
      assert_int_equal(pthread_join(th[t], NULL), 0);
      assert_int_equal(ps[t].rc, 0);
    }
    assert_int_equal(tw_close(w), 0);
    tu_cleanup(path);
  }
}

/* Without a timer: a tw_flush from another thread commits what idle
 * threads staged, and so does tw_close. */
static void test_idle_threads_flush_and_close(void **state)
{
  enum { N = 5, EACH = 11 };
  (void)state;

  for (int k = 0; k < 4; k++) {
    int gz = k == 3, count[N];
    char *path = tu_tmppath(gz ? ".json.gz" : ".json");
    tw_options o = sink_opts(k);
    idler ps[N];
    pthread_t th[N];
    tw_writer *w;
    int err = 0;

    o.process_name = "threads";
    w = tw_open(path, &o, &err);
    assert_non_null(w);
    memset(ps, 0, sizeof ps);
    for (int t = 0; t < N; t++) {
      ps[t].w = w;
      ps[t].t = t;
      ps[t].n = EACH;
      assert_int_equal(pthread_create(&th[t], NULL, idler_main, &ps[t]), 0);
    }
    wait_emitted(ps, N);
    assert_int_equal(tw_flush(w), 0);
    count_events(path, gz, N, count);
    for (int t = 0; t < N; t++)
      assert_int_equal(count[t], EACH);
    /* Close while the threads are still idle (alive). */
    assert_int_equal(tw_close(w), 0);
    count_events(path, gz, N, count);
    for (int t = 0; t < N; t++) {
      assert_int_equal(count[t], EACH);
      __atomic_store_n(&ps[t].release, 1, __ATOMIC_RELEASE);
      assert_int_equal(pthread_join(th[t], NULL), 0);
    }
    tu_cleanup(path);
  }
}

/* Threads emit and exit without any flush (their stages outlive them
 * until a commit writes what they staged); more threads come and go;
 * nothing is lost. */
static void test_threads_exit_without_flush(void **state)
{
  enum { WAVES = 6, N = 8, EACH = 300 };
  (void)state;

  for (int k = 0; k < 4; k++) {
    int gz = k == 3, count[WAVES * N];
    char *path = tu_tmppath(gz ? ".json.gz" : ".json");
    tw_options o = sink_opts(k);
    tw_writer *w;
    int err = 0;

    o.process_name = "threads";
    o.buffer_size = 4096;
    w = tw_open(path, &o, &err);
    assert_non_null(w);
    for (int v = 0; v < WAVES; v++) {
      idler ps[N];
      pthread_t th[N];

      memset(ps, 0, sizeof ps);
      for (int t = 0; t < N; t++) {
        ps[t].w = w;
        ps[t].t = v * N + t;
        ps[t].n = EACH;
        ps[t].release = 1;                 /* exits at once */
        assert_int_equal(pthread_create(&th[t], NULL, idler_main, &ps[t]),
                         0);
      }
      for (int t = 0; t < N; t++) {
        assert_int_equal(pthread_join(th[t], NULL), 0);
        assert_int_equal(ps[t].rc, 0);
      }
    }
    assert_int_equal(tw_close(w), 0);
    count_events(path, gz, WAVES * N, count);
    for (int t = 0; t < WAVES * N; t++)
      if (count[t] != EACH)
        fail_msg("%s: thread %d: %d events of %d", sink_names[k], t,
                 count[t], EACH);
    tu_cleanup(path);
  }
}

/* A thread with writers of its own: it opens one, emits, closes it,
 * three times over, and exits -- at the same time as others do the
 * same.  Each stage is freed once, by whichever lets go last. */
typedef struct own {
  char *path;
  int sink;
  int rc;
} own;

static void *own_main(void *arg)
{
  own *p = arg;
  tw_options o = sink_opts(p->sink);
  tw_writer *w;
  int err = 0;

  o.process_name = "threads";
  for (int round = 0; round < 3 && !p->rc; round++) {
    if (!(w = tw_open(p->path, &o, &err))) {
      p->rc = err;
      break;
    }
    for (int i = 0; i < 50 && !p->rc; i++) {
      tw_arg args[2] = { tw_arg_int("t", 0), tw_arg_int("i", i) };
      p->rc = tw_complete(w, "thr", "own", 1000u + (uint64_t)i, 5, args, 2);
    }
    if (!p->rc)
      p->rc = tw_close(w);
  }
  return NULL;
}

static void test_threads_own_writers(void **state)
{
  enum { N = 8 };
  (void)state;

  for (int k = 0; k < 4; k++) {
    own ps[N];
    pthread_t th[N];
    int count[1];

    for (int t = 0; t < N; t++) {
      ps[t].sink = k;
      ps[t].rc = 0;
      ps[t].path = tu_tmppath(k == 3 ? ".json.gz" : ".json");
      assert_int_equal(pthread_create(&th[t], NULL, own_main, &ps[t]), 0);
    }
    for (int t = 0; t < N; t++) {
      assert_int_equal(pthread_join(th[t], NULL), 0);
      assert_int_equal(ps[t].rc, 0);
      count_events(ps[t].path, k == 3, 1, count);
      assert_int_equal(count[0], 50);
      tu_cleanup(ps[t].path);
    }
  }
}

/* A writer closed by the main thread while the threads that emitted on
 * it live on and go on to other writers. */
static void test_writer_closed_under_live_threads(void **state)
{
  enum { N = 4, EACH = 20 };
  (void)state;

  for (int round = 0; round < 3; round++)
    for (int k = 0; k < 4; k++) {
      int gz = k == 3, count[N];
      char *path = tu_tmppath(gz ? ".json.gz" : ".json");
      tw_options o = sink_opts(k);
      idler ps[N];
      pthread_t th[N];
      tw_writer *w;
      int err = 0;

      o.process_name = "threads";
      w = tw_open(path, &o, &err);
      assert_non_null(w);
      memset(ps, 0, sizeof ps);
      for (int t = 0; t < N; t++) {
        ps[t].w = w;
        ps[t].t = t;
        ps[t].n = EACH;
        assert_int_equal(pthread_create(&th[t], NULL, idler_main, &ps[t]),
                         0);
      }
      wait_emitted(ps, N);
      assert_int_equal(tw_close(w), 0);
      count_events(path, gz, N, count);
      for (int t = 0; t < N; t++) {
        assert_int_equal(count[t], EACH);
        __atomic_store_n(&ps[t].release, 1, __ATOMIC_RELEASE);
        assert_int_equal(pthread_join(th[t], NULL), 0);
      }
      tu_cleanup(path);
    }
}

/* ----------------------------------------------- cut under the writer */

/* A thread that names itself, then emits at least n events (args t, i),
 * and on until *until is set. */
typedef struct namer {
  tw_writer *w;
  int t, n, rc;
  const int *until;        /* atomic */
} namer;

static void *namer_main(void *arg)
{
  namer *p = arg;
  char name[32];

  snprintf(name, sizeof name, "worker %d", p->t);
  p->rc = tw_thread_name(p->w, name);
  for (int i = 0; (i < p->n || !__atomic_load_n(p->until, __ATOMIC_ACQUIRE))
                 && !p->rc; i++) {
    tw_arg args[2] = { tw_arg_int("t", p->t), tw_arg_int("i", i) };
    p->rc = tw_complete(p->w, "thr", "work", 1000u + (uint64_t)i, 5, args,
                        2);
    if (i % 4000 == 3999 && !p->rc)
      p->rc = tw_flush(p->w);
  }
  return NULL;
}

/* Cuts the file to 0 bytes, as logrotate's copytruncate does, k times at
 * random moments. */
typedef struct cutter {
  const char *path;
  unsigned seed;
  int k;
  int done;                /* atomic: the k cuts are made */
} cutter;

static void *cutter_main(void *arg)
{
  cutter *c = arg;

  for (int i = 0; i < c->k; i++) {
    struct timespec ts = { 0, (long)(rand_r(&c->seed) % 3000) * 1000 };
    nanosleep(&ts, NULL);            /* a random moment, not a wait */
    if (truncate(c->path, 0) != 0)
      fail_msg("truncate: %s", strerror(errno));
  }
  __atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
  return NULL;
}

/* The file is cut to nothing at random moments while 4 threads emit: the
 * writer notices at its next commit (an mmap writer: a store into a page
 * cut off is caught, not a SIGBUS that kills the process) and begins a
 * new document with the metadata records; after close the file is strict
 * JSON, each thread's events in order, each named. */
/* ThreadSanitizer takes a mapping replaced in place (mmap MAP_FIXED) for
 * a write to the whole range by the thread that replaced it.  The mmap
 * sink does that on purpose to a cut file's windows, while other threads
 * store into their regions there (their stores then go nowhere): TSan
 * reports those stores as races, which no lock could order.  Under TSan
 * the mmap case is left out (it runs in every other build). */
#if defined(__SANITIZE_THREAD__)
# define TU_TSAN 1
#elif defined(__has_feature)
# if __has_feature(thread_sanitizer)
#  define TU_TSAN 1
# endif
#endif

static void test_truncated_under_writer(void **state)
{
  enum { N = 4, K = 12 };
  unsigned seed = tu_seed("test_truncated_under_writer");
  (void)state;

  for (int k = 0; k < 4; k++) {
    int gz = k == 3;
    char *path;
    tw_options o = sink_opts(k);
    namer ps[N];
    pthread_t th[N], cth;
    cutter c = { NULL, seed + (unsigned)k, K, 0 };
    int last[N], named[N];
    tw_writer *w;
    tw_stats st;
    jc_doc *d;
    jc_val e;
    int err = 0;

#ifdef TU_TSAN
    if (o.sink == TW_SINK_MMAP) {
      print_message("  %s: left out under ThreadSanitizer\n", sink_names[k]);
      continue;
    }
#endif
    c.path = path = tu_tmppath(gz ? ".json.gz" : ".json");
    o.process_name = "threads";
    o.buffer_size = 16384;
    w = tw_open(path, &o, &err);
    assert_non_null(w);
    assert_int_equal(pthread_create(&cth, NULL, cutter_main, &c), 0);
    for (int t = 0; t < N; t++) {
      ps[t].w = w;
      ps[t].t = t;
      ps[t].n = scaled(40000);
      ps[t].rc = 0;
      ps[t].until = &c.done;           /* emitting while the file is cut */
      assert_int_equal(pthread_create(&th[t], NULL, namer_main, &ps[t]), 0);
    }
    for (int t = 0; t < N; t++) {
      assert_int_equal(pthread_join(th[t], NULL), 0);
      if (ps[t].rc)
        fail_msg("%s: thread %d: %s", sink_names[k], t,
                 tw_err_name(ps[t].rc));
    }
    assert_int_equal(pthread_join(cth, NULL), 0);
    assert_int_equal(tw_get_stats(w, &st), 0);
    assert_int_equal(tw_close(w), 0);
    print_message("  %s: %llu restarts for %d cuts\n", sink_names[k],
                  (unsigned long long)st.restarts, K);
    assert_true(st.restarts >= 1 && st.restarts <= K + 1);

    d = tu_load_trace_file(path, gz, 0);
    for (int t = 0; t < N; t++)
      last[t] = -1, named[t] = 0;
    e = jc_first(d, tu_events(d));
    tu_assert_str(d, e, "name", "process_name");
    for (e = jc_next(d, e); e >= 0; e = jc_next(d, e)) {
      jc_val args = jc_get(d, e, "args");
      int64_t t = -1, i = -1;
      if (jc_streq(d, jc_get(d, e, "ph"), "M")) {
        const char *n = jc_str(d, jc_get(d, args, "name"), NULL);
        if (n && sscanf(n, "worker %" SCNd64, &t) == 1 && t >= 0 && t < N)
          named[t] = 1;
        continue;
      }
      if (jc_int64(d, jc_get(d, args, "t"), &t) != 0 || t < 0 || t >= N ||
          jc_int64(d, jc_get(d, args, "i"), &i) != 0 || i <= last[t])
        fail_msg("%s: event (t %lld, i %lld) out of order", sink_names[k],
                 (long long)t, (long long)i);
      if (!named[t])
        fail_msg("%s: thread %lld's events without its name",
                 sink_names[k], (long long)t);
      last[t] = (int)i;
    }
    jc_free(d);
    tu_cleanup(path);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_8x100k_default_buffer),
    cmocka_unit_test(test_8x100k_small_buffer),
    cmocka_unit_test(test_8x25k_background),
    cmocka_unit_test(test_concurrent_flush),
    cmocka_unit_test(test_big_events),
    cmocka_unit_test(test_every_sink_8_threads),
    cmocka_unit_test(test_every_sink_32_threads),
    cmocka_unit_test(test_every_sink_big_events),
    cmocka_unit_test(test_idle_threads_flush_timer),
    cmocka_unit_test(test_idle_threads_flush_and_close),
    cmocka_unit_test(test_threads_exit_without_flush),
    cmocka_unit_test(test_threads_own_writers),
    cmocka_unit_test(test_writer_closed_under_live_threads),
    cmocka_unit_test(test_truncated_under_writer),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
