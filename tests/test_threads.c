/* test_threads.c -- many threads on one writer
 *
 * Every event of every thread must be in the file exactly once, each
 * thread's events in the order it emitted them and with its own tid, and
 * the file must be strict JSON: with the default buffer and a small one,
 * with flushes racing the producers, with large records (formatted in the
 * per-thread scratch) among small ones, and with a background committer.
 *
 * TW_TEST_SCALE (a positive integer, default 1) divides the number of
 * events per thread, for slow builds (sanitizers, valgrind).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* gettid */
#endif
#include "testutil.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_THREADS 16

/* Events per thread, divided by TW_TEST_SCALE. */
static int scaled(int n)
{
  const char *s = getenv("TW_TEST_SCALE");
  long k = s && *s ? strtol(s, NULL, 10) : 1;

  if (k < 1)
    k = 1;
  n = (int)(n / k);
  return n > 0 ? n : 1;
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
  int stop;                 /* atomic */
  int flushes;
  int failures;
} flusher;

static void *flusher_main(void *arg)
{
  flusher *f = arg;

  while (!__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE)) {
    if (tw_flush(f->w) != 0)
      f->failures++;
    f->flushes++;
    sched_yield();
  }
  return NULL;
}

/* The file must end with exactly the tail (read from the end only: the
 * files here are large). */
static void check_tail(const char *path, int object_form)
{
  const char *tail = object_form ? "\n]}\n" : "\n]\n";
  size_t tl = strlen(tail);
  char got[8];
  struct stat st;
  int fd = open(path, O_RDONLY);

  assert_true(fd >= 0);
  assert_int_equal(fstat(fd, &st), 0);
  assert_true((size_t)st.st_size >= tl);
  assert_int_equal(pread(fd, got, tl, st.st_size - (off_t)tl), (ssize_t)tl);
  assert_memory_equal(got, tail, tl);
  close(fd);
}

/* Check the file: the process_name record, then every (t, i) exactly
 * once, each thread's i in increasing order (no gap, no repeat), each
 * with its thread's tid, intact big strings.  Walks the array once. */
static void check_file(const char *path, int object_form, producer *ps,
                       int nthreads)
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
  check_tail(path, object_form);
  d = tu_load(path);
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
  char *path = tu_tmppath(".json");
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
                                        (unsigned)nthreads + 1), 0);
  memset(&fl, 0, sizeof fl);
  fl.w = w;
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
  assert_int_equal(s.events, (uint64_t)nthreads * (uint64_t)n + 1);
  assert_int_equal(s.rejected, 0);
  assert_int_equal(s.error, 0);
  assert_int_equal(tw_close(w), 0);
  check_file(path, o.format == TW_FORMAT_OBJECT, ps, nthreads);
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

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_8x100k_default_buffer),
    cmocka_unit_test(test_8x100k_small_buffer),
    cmocka_unit_test(test_8x25k_background),
    cmocka_unit_test(test_concurrent_flush),
    cmocka_unit_test(test_big_events),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
