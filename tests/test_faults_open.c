/* test_faults_open.c -- fault injection: a failed tw_open frees
 * everything and leaves no torn file
 *
 * For each call of a kind (allocation, thread, deflateInit2_, mmap,
 * write) that a successful tw_open makes, in turn, the call fails: tw_open
 * returns NULL with the error, frees every block it allocated, closes
 * what it opened, and leaves the file empty or a valid trace holding only
 * the first record.
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
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* ---------------------------------------------- failed tw_open, in turn */

/* For each call of kind k that a successful tw_open makes, in turn: make
 * it fail with err (once, or from there on if persistent) and check that
 * tw_open returns NULL with want, frees every block it allocated, closes
 * what it opened, and leaves the file empty or a valid trace holding only
 * the first record.  Returns the number of calls tried. */
static unsigned long open_fail_each(const cfg *c, enum fk k, int err,
                                    int want, int persistent)
{
  unsigned long n_open = 0, n;

  /* (This first, successful run also warms up one-time initialisations
   * before blocks are counted.) */
  (void)count_calls(c, k, &n_open);
  for (n = 1; n <= n_open; n++) {
    target t;
    size_t live0, len;
    int fds0, rc;
    char *raw, bad[160] = "";

    snprintf(ctx, sizeof ctx, "%s: %s call %lu of %lu at tw_open fails "
             "with %s%s", c->name, fk_names[k], n, n_open,
             k == FK_DEFLATEINIT || k == FK_DEFLATE ? zError(err)
                                                    : strerror(err),
             persistent ? " (and every later one)" : "");
    live0 = live_count();
    fds0 = count_fds();
    t_init(&t, c);
    fault_reset();
    fault_fail(k, n, persistent ? FOREVER : 1, err);
    EXPECT(t_open(&t, &rc) == NULL);
    EXPECT_RC(rc, want);
    EXPECT(fault_injected(k) >= 1);
    fault_reset();
    t_finish(&t);
    /* What is left of the file: nothing, or the head and first record. */
    raw = t_bytes(&t, &len);
    if (len > 0) {
      size_t jn;
      char *json = json_of(c, raw, len, &jn);
      char why[96];
      jc_doc *d = tu_parse_trace(json, jn, why, sizeof why);
      if (d) {
        EXPECT(tu_check_prefix(&F, d) == 0);
        jc_free(d);
      } else {
        size_t bl = 0;
        bl += (size_t)snprintf(bad, sizeof bad, "\"");
        for (size_t i = 0; i < jn && bl + 8 < sizeof bad / 2; i++)
          bl += (size_t)snprintf(bad + bl, sizeof bad - bl,
                                 json[i] == '\n' ? "\\n" : "%c", json[i]);
        snprintf(bad + bl, sizeof bad - bl, "\" (%zu bytes; %s)", jn, why);
      }
      free(json);
    } else {
      free(raw);
    }
    t_cleanup(&t);
    if (bad[0])
      fail_msg("%s: tw_open failed and left a file that is neither empty "
               "nor a valid trace: %s", ctx, bad);
    if (live_count() != live0)
      fail_msg("%s: %zu blocks leaked", ctx, live_count() - live0);
    EXPECT(count_fds() == fds0);
  }
  return n_open;
}

/* Every allocation of tw_open, for every sink and commit mode. */
static void test_open_alloc_each(void **state)
{
  static const cfg *const cs[] = {
    &FILE_IN, &FILE_BG, &GZIP_IN, &GZIP_BG, &MMAP_IN, &MMAP_BG,
    &FILE_APP, &GZIP_PIPE, &FILE_SYNC, &GZIP_ROTATE
  };
  (void)state;

  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
    unsigned long n = open_fail_each(cs[i], FK_ALLOC, ENOMEM, -ENOMEM, 0);
    EXPECT(n >= 1);
    /* gzip: zlib's own allocations are counted too. */
    if (cs[i]->sink == TW_SINK_GZIP)
      EXPECT(n >= 5);
    (void)open_fail_each(cs[i], FK_ALLOC, ENOMEM, -ENOMEM, 1);
  }
}

/* The committer thread cannot start. */
static void test_open_thread_fails(void **state)
{
  (void)state;
  EXPECT(open_fail_each(&FILE_BG, FK_THREAD, EAGAIN, -EAGAIN, 0) == 1);
  EXPECT(open_fail_each(&GZIP_BG, FK_THREAD, EAGAIN, -EAGAIN, 0) == 1);
}

/* zlib's deflateInit2 fails: ENOMEM for Z_MEM_ERROR, TW_EZLIB else. */
static void test_open_deflateinit_fails(void **state)
{
  (void)state;
  EXPECT(open_fail_each(&GZIP_IN, FK_DEFLATEINIT, Z_MEM_ERROR, -ENOMEM,
                        0) == 1);
  EXPECT(open_fail_each(&GZIP_BG, FK_DEFLATEINIT, Z_STREAM_ERROR, TW_EZLIB,
                        0) == 1);
  EXPECT(open_fail_each(&GZIP_PIPE, FK_DEFLATEINIT, Z_VERSION_ERROR,
                        TW_EZLIB, 0) == 1);
}

/* The mmap sink cannot map the file. */
static void test_open_mmap_fails(void **state)
{
  (void)state;
  EXPECT(open_fail_each(&MMAP_IN, FK_MMAP, ENOMEM, -ENOMEM, 0) >= 1);
}

/* The first commit (head and first record) cannot be written: tw_open
 * fails with the error, and the file is left empty (or valid) -- never a
 * bare tail.  Every output syscall of tw_open in turn. */
static void test_open_write_fails(void **state)
{
  (void)state;
  EXPECT(open_fail_each(&GZIP_IN, FK_PWRITEV, EIO, -EIO, 0) >= 1);
  EXPECT(open_fail_each(&GZIP_BG, FK_DEFLATE, Z_STREAM_ERROR, TW_EZLIB,
                        0) >= 1);
  EXPECT(open_fail_each(&MMAP_IN, FK_PWRITEV, EIO, -EIO, 0) >= 1);
  EXPECT(open_fail_each(&MMAP_IN, FK_FALLOC, ENOSPC, -ENOSPC, 0) >= 1);
  EXPECT(open_fail_each(&FILE_APP, FK_WRITEV, EIO, -EIO, 0) >= 1);
  EXPECT(open_fail_each(&GZIP_PIPE, FK_WRITEV, EPIPE, -EPIPE, 0) >= 1);
  EXPECT(open_fail_each(&FILE_SYNC, FK_FDATASYNC, EIO, -EIO, 0) >= 1);
}

/* The same for the in-place file sink (kept apart: see the report). */
static void test_open_write_fails_file(void **state)
{
  (void)state;
  EXPECT(open_fail_each(&FILE_IN, FK_PWRITEV, EIO, -EIO, 0) >= 1);
  EXPECT(open_fail_each(&FILE_BG, FK_PWRITEV, ENOSPC, -ENOSPC, 0) >= 1);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    FAULTS_TEST(test_wrappers_see_library),
    FAULTS_TEST(test_open_alloc_each),
    FAULTS_TEST(test_open_thread_fails),
    FAULTS_TEST(test_open_deflateinit_fails),
    FAULTS_TEST(test_open_mmap_fails),
    FAULTS_TEST(test_open_write_fails),
    FAULTS_TEST(test_open_write_fails_file),
  };

  faults_prefer_tmpfs();
  return cmocka_run_group_tests(tests, NULL, NULL);
}
