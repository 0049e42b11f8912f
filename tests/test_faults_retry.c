/* test_faults_retry.c -- fault injection: EINTR and short writes are
 * retried, nothing is lost
 *
 * Every write, sync and close of each sink returns EINTR once, in
 * turn, or writes half (or a few bytes) of what it was asked: the
 * library retries, and the trace holds every event.
 *
 * Built from the library's sources and the harness tests/faults.c,
 * linked with -Wl,--wrap for every call the harness wraps (faults.h).
 * Every file a test writes is read back with the strict checker (a gzip
 * file inflated by zlib first) and compared event by event with what was
 * emitted.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "faults.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------- EINTR, retried */

/* Each call of kind k, in turn, returns EINTR once: retried, no error, a
 * complete file. */
static void eintr_each(const cfg *c, enum fk k)
{
  unsigned long total = count_calls(c, k, NULL);

  EXPECT(total >= 1);
  for (unsigned long n = 1; n <= total; n++) {
    target t;
    run r;
    jc_doc *d;
    int err;

    snprintf(ctx, sizeof ctx, "%s: %s call %lu of %lu returns EINTR once",
             c->name, fk_names[k], n, total);
    t_init(&t, c);
    fault_reset();
    fault_fail(k, n, 1, EINTR);
    EXPECT(t_open(&t, &err) != NULL);
    workload(t.w, &r);
    EXPECT_RC(r.err, 0);
    EXPECT_RC(t_close(&t), 0);
    EXPECT(fault_injected(k) == 1);
    d = t_load(&t);
    EXPECT(tu_check_prefix(&F, d) == NEV);
    jc_free(d);
    t_cleanup(&t);
  }
}

static void test_eintr_file(void **state)
{
  (void)state;
  eintr_each(&FILE_IN, FK_PWRITEV);
  eintr_each(&FILE_BG, FK_PWRITEV);
  eintr_each(&FILE_APP, FK_WRITEV);
  eintr_each(&FILE_PIPE, FK_WRITEV);
}

static void test_eintr_gzip(void **state)
{
  (void)state;
  eintr_each(&GZIP_IN, FK_PWRITEV);
  eintr_each(&GZIP_BG, FK_PWRITEV);
  eintr_each(&GZIP_APP, FK_WRITEV);
  eintr_each(&GZIP_PIPE, FK_WRITEV);
}

static void test_eintr_mmap(void **state)
{
  (void)state;
  eintr_each(&MMAP_IN, FK_PWRITEV);
  eintr_each(&MMAP_IN, FK_FALLOC);
}

/* close(2) interrupted: the descriptor is gone on Linux, not an error. */
static void test_eintr_close(void **state)
{
  static const cfg *const cs[] = { &FILE_IN, &GZIP_BG, &MMAP_IN };
  (void)state;

  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
    close_fails_once(cs[i], EINTR, 0);
}

/* ------------------------------------------------------- short writes */

/* Every call of kind k writes at most cap bytes (HALF: half of what it
 * is asked): all retried, the output complete. */
static void short_writes(const cfg *c, enum fk k, size_t cap)
{
  target t;
  run r;
  jc_doc *d;
  int err;

  if (cap == HALF)
    snprintf(ctx, sizeof ctx, "%s: every %s writes half", c->name,
             fk_names[k]);
  else
    snprintf(ctx, sizeof ctx, "%s: every %s writes at most %zu bytes",
             c->name, fk_names[k], cap);
  t_init(&t, c);
  fault_reset();
  fault_cap(k, cap);
  EXPECT(t_open(&t, &err) != NULL);
  workload(t.w, &r);
  EXPECT_RC(r.err, 0);
  EXPECT_RC(t_close(&t), 0);
  EXPECT(fault_calls(k) > 0);
  fault_reset();
  d = t_load(&t);
  EXPECT(tu_check_prefix(&F, d) == NEV);
  jc_free(d);
  t_cleanup(&t);
}

static void test_short_writes(void **state)
{
  static const struct { const cfg *c; enum fk k; } cs[] = {
    { &FILE_IN, FK_PWRITEV }, { &FILE_BG, FK_PWRITEV },
    { &GZIP_IN, FK_PWRITEV }, { &GZIP_BG, FK_PWRITEV },
    { &MMAP_IN, FK_PWRITEV },
    { &FILE_APP, FK_WRITEV }, { &FILE_APP_BG, FK_WRITEV },
    { &FILE_PIPE, FK_WRITEV },
    { &GZIP_APP, FK_WRITEV }, { &GZIP_PIPE, FK_WRITEV },
  };
  (void)state;

  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
    short_writes(cs[i].c, cs[i].k, 7);
    short_writes(cs[i].c, cs[i].k, HALF);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    FAULTS_TEST(test_wrappers_see_library),
    FAULTS_TEST(test_eintr_file),
    FAULTS_TEST(test_eintr_gzip),
    FAULTS_TEST(test_eintr_mmap),
    FAULTS_TEST(test_eintr_close),
    FAULTS_TEST(test_short_writes),
  };

  faults_prefer_tmpfs();
  return cmocka_run_group_tests(tests, NULL, NULL);
}
