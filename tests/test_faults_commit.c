/* test_faults_commit.c -- fault injection: a failed commit sticks and
 * leaves the last commit
 *
 * An allocation for a big event, a write, a sync, fallocate, deflate or
 * close(2) fails, in turn, during a workload: the error is sticky (every
 * later call returns it, tw_close too), and the file is the last commit,
 * as it was before the failed one (or put back to it when the restore
 * write fails too), strict and holding a prefix of the events.
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
#include "gunzip.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* ------------------------------------------------ big event, no memory */

/* The pads of the big-event test: two records above 4 KiB. */
static const size_t big_pads[5] = { 10, 6000, 20, 12000, 30 };

typedef struct big_arg {
  tw_writer *w;
  int rc[11];              /* what each step returned */
  unsigned long injected;  /* allocation faults injected by step 1 */
} big_arg;

/* Runs in a new thread, whose scratch buffer starts empty (cmocka's
 * assertions stay on the test's thread: this only records). */
static void *big_main(void *arg)
{
  big_arg *b = arg;
  tw_writer *w = b->w;

  b->rc[0] = tu_emit_pad(&F, w, 0, big_pads[0]);
  fault_fail(FK_ALLOC, fault_calls(FK_ALLOC) + 1, 1, ENOMEM);
  b->rc[1] = tu_emit_pad(&F, w, 1, big_pads[1]);  /* -ENOMEM */
  b->injected = fault_injected(FK_ALLOC);
  b->rc[2] = tw_errcode(w);                       /* not sticky */
  b->rc[3] = tu_emit_pad(&F, w, 1, big_pads[1]);  /* again: works */
  b->rc[4] = tu_emit_pad(&F, w, 2, big_pads[2]);
  b->rc[5] = tw_flush(w);
  fault_reset();
  fault_fail(FK_ALLOC, 1, FOREVER, ENOMEM);
  b->rc[6] = tu_emit_pad(&F, w, 3, big_pads[3]);  /* must grow: -ENOMEM */
  b->rc[7] = tu_emit_pad(&F, w, 3, big_pads[3]);
  b->rc[8] = tw_errcode(w);
  fault_reset();
  b->rc[9] = tu_emit_pad(&F, w, 3, big_pads[3]);
  b->rc[10] = tu_emit_pad(&F, w, 4, big_pads[4]);
  return NULL;
}

/* A second thread after big_main's: one small event. */
enum { SMALL_PAD = 40 };

static void *small_main(void *arg)
{
  big_arg *b = arg;

  b->rc[0] = tu_emit_pad(&F, b->w, 5, SMALL_PAD);
  return NULL;
}

/* A record above 4 KiB is formatted into the thread's scratch buffer; its
 * allocation fails: -ENOMEM, not sticky, the same event again works, and
 * so does a still bigger one after a second failure.  The file holds
 * every event that returned 0. */
static void test_emit_big_alloc_fails(void **state)
{
  static const cfg *const cs[] = { &FILE_IN, &FILE_BG, &GZIP_BG, &MMAP_IN };
  static const int want[11] = { 0, -ENOMEM, 0, 0, 0, 0, -ENOMEM, -ENOMEM,
                                0, 0, 0 };
  (void)state;

  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
    big_arg b, b2;
    target t;
    pthread_t th;
    size_t live1;
    tw_stats st;
    jc_doc *d;
    jc_val e;
    size_t live0;
    int err;

    snprintf(ctx, sizeof ctx, "%s: big event, scratch allocation fails",
             cs[i]->name);
    t_init(&t, cs[i]);
    EXPECT(t_open(&t, &err) != NULL);
    memset(&b, 0, sizeof b);
    b.w = t.w;
    live0 = live_count();
    assert_int_equal(pthread_create(&th, NULL, big_main, &b), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    fault_reset();
    /* The thread's scratch buffer is freed when it exits; its stage is
     * freed by the next commit, which writes what it staged.  The writer
     * keeps at most the thread's slot (a block and its buffer) for the
     * next thread, which then leaves nothing more behind. */
    EXPECT_RC(tw_flush(t.w), 0);
    live1 = live_count();
    EXPECT(live1 >= live0 && live1 - live0 <= 2);
    memset(&b2, 0, sizeof b2);
    b2.w = t.w;
    assert_int_equal(pthread_create(&th, NULL, small_main, &b2), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    EXPECT_RC(b2.rc[0], 0);
    EXPECT_RC(tw_flush(t.w), 0);
    EXPECT(live_count() == live1);
    for (int k = 0; k < 11; k++)
      if (b.rc[k] != want[k])
        fail_msg("%s: step %d returned %s, expected %s", ctx, k,
                 tw_err_name(b.rc[k]), tw_err_name(want[k]));
    EXPECT(b.injected == 1);
    EXPECT_RC(tw_get_stats(t.w, &st), 0);
    EXPECT(st.rejected == 3 && st.error == 0);
    EXPECT_RC(t_close(&t), 0);
    d = t_load(&t);
    e = jc_first(d, tu_events(d));
    tu_check_pname(&F, d, e);
    for (int k = 0; k < 5; k++) {
      e = jc_next(d, e);
      EXPECT(e >= 0);
      tu_check_event_pad(&F, d, e, k, big_pads[k]);
    }
    e = jc_next(d, e);
    EXPECT(e >= 0);
    tu_check_event_pad(&F, d, e, 5, SMALL_PAD);
    EXPECT(jc_next(d, e) < 0);
    jc_free(d);
    t_cleanup(&t);
  }
}

/* ------------------------------------------- a failed commit, in turn */

/* For each call of kind k after tw_open, in turn: fail it with err (if
 * cut_first, a write kind: it writes half its request, and the retry
 * fails).  The error is sticky (every later emit and flush, tw_errcode,
 * tw_close return want), and the file holds exactly the last commit
 * before it, strictly valid: byte for byte what it held before the failed
 * call (the sink puts the old tail back over what the cut write left), or
 * for mmap every event whose emit returned 0. */
static unsigned long fail_each(const cfg *c, enum fk k, int err, int want,
                               int cut_first)
{
  unsigned long at_open = 0, total = count_calls(c, k, &at_open);

  for (unsigned long n = at_open + 1; n <= total; n++) {
    target t;
    run r;
    jc_doc *d;
    int rc, m, e;

    snprintf(ctx, sizeof ctx, "%s: %s call %lu of %lu %sfails with %s",
             c->name, fk_names[k], n, total,
             cut_first ? "writes half, the retry " : "",
             k == FK_DEFLATE ? zError(err) : strerror(err));
    t_init(&t, c);
    fault_reset();
    snap_arm(t.path);
    if (cut_first) {
      fault_short(k, n, HALF);
      fault_fail(k, n + 1, 1, err);
    } else {
      fault_fail(k, n, 1, err);
    }
    EXPECT(t_open(&t, &rc) != NULL);
    workload(t.w, &r);
    if (r.err) {
      /* Already now, before tw_close (a process killed here keeps this
       * file): the last commit, strictly valid. */
      d = t_load(&t);
      m = tu_check_prefix(&F, d);
      jc_free(d);
      if (m < r.flushed || m > r.ok + (k == FK_FDATASYNC || k == FK_MSYNC))
        fail_msg("%s: before tw_close, %d events in the file; %d were "
                 "flushed and %d emitted before the error", ctx, m,
                 r.flushed, r.ok);
      if (c->sink == TW_SINK_MMAP)
        EXPECT(m == r.ok);
    }
    rc = t_close(&t);
    EXPECT(fault_injected(k) == 1u + (cut_first != 0));
    fault_reset();
    /* The error: met by an emit or flush (then tw_close returns it too),
     * or by tw_close's own commit. */
    e = r.err ? r.err : rc;
    EXPECT_RC(e, want);
    EXPECT_RC(rc, e);
    d = t_load(&t);
    m = tu_check_prefix(&F, d);
    jc_free(d);
    /* A failed sync comes after the write: the record of the emit that
     * met it may be in the file (one larger than a buffer is written by
     * that emit itself). */
    if (m < r.flushed || m > r.ok + (k == FK_FDATASYNC || k == FK_MSYNC))
      fail_msg("%s: %d events in the file; %d were flushed and %d emitted "
               "before the error", ctx, m, r.flushed, r.ok);
    if (c->sink == TW_SINK_MMAP) {
      /* Every record is committed as it is copied. */
      EXPECT(m == r.ok);
    } else if (k != FK_FDATASYNC && k != FK_MSYNC) {
      size_t len;
      char *raw = t_bytes(&t, &len);
      EXPECT(snap_taken == 1);
      if (len != snap_len || memcmp(raw, snap, len) != 0) {
        free(raw);
        fail_msg("%s: the file (%zu bytes) is not the last commit (%zu "
                 "bytes)", ctx, len, snap_len);
      }
      free(raw);
    }
    t_cleanup(&t);
  }
  return total - at_open;
}

static void test_eio_file(void **state)
{
  (void)state;
  EXPECT(fail_each(&FILE_IN, FK_PWRITEV, EIO, -EIO, 0) > 0);
  EXPECT(fail_each(&FILE_BG, FK_PWRITEV, EIO, -EIO, 0) > 0);
  EXPECT(fail_each(&FILE_IN, FK_PWRITEV, EIO, -EIO, 1) > 0);
  EXPECT(fail_each(&FILE_BG, FK_PWRITEV, ENOSPC, -ENOSPC, 1) > 0);
}

static void test_eio_gzip(void **state)
{
  (void)state;
  EXPECT(fail_each(&GZIP_IN, FK_PWRITEV, EIO, -EIO, 0) > 0);
  EXPECT(fail_each(&GZIP_BG, FK_PWRITEV, EIO, -EIO, 0) > 0);
  EXPECT(fail_each(&GZIP_IN, FK_PWRITEV, ENOSPC, -ENOSPC, 1) > 0);
  EXPECT(fail_each(&GZIP_BG, FK_PWRITEV, EIO, -EIO, 1) > 0);
}

static void test_eio_mmap(void **state)
{
  (void)state;
  EXPECT(fail_each(&MMAP_IN, FK_PWRITEV, EIO, -EIO, 0) > 0);
  EXPECT(fail_each(&MMAP_IN, FK_PWRITEV, ENOSPC, -ENOSPC, 1) > 0);
}

/* The mmap sink grows the file: a full disk at fallocate is a sticky
 * -ENOSPC and a valid file, not a SIGBUS. */
static void test_enospc_mmap(void **state)
{
  (void)state;
  EXPECT(fail_each(&MMAP_IN, FK_FALLOC, ENOSPC, -ENOSPC, 0) > 0);
  /* (A sink that grows its mapping without mremap makes no such call.) */
  (void)fail_each(&MMAP_IN, FK_MREMAP, ENOMEM, -ENOMEM, 0);
}

/* The file system cannot reserve blocks (EOPNOTSUPP): the growth still
 * works, the pwrite allocates them. */
static void test_fallocate_unsupported_mmap(void **state)
{
  target t;
  run r;
  jc_doc *d;
  int err;
  (void)state;

  snprintf(ctx, sizeof ctx, "mmap: fallocate unsupported");
  t_init(&t, &MMAP_IN);
  fault_fail(FK_FALLOC, 1, FOREVER, EOPNOTSUPP);
  EXPECT(t_open(&t, &err) != NULL);
  workload(t.w, &r);
  EXPECT_RC(r.err, 0);
  EXPECT_RC(t_close(&t), 0);
  EXPECT(fault_injected(FK_FALLOC) >= 2);
  d = t_load(&t);
  EXPECT(tu_check_prefix(&F, d) == NEV);
  jc_free(d);
  t_cleanup(&t);
}

/* fdatasync (the sync option) fails: sticky; the data was written, so the
 * file is valid and holds at least every flushed event. */
static void test_fdatasync_fails(void **state)
{
  (void)state;
  EXPECT(fail_each(&FILE_SYNC, FK_FDATASYNC, EIO, -EIO, 0) > 0);
  EXPECT(fail_each(&FILE_SYNC_BG, FK_FDATASYNC, EIO, -EIO, 0) > 0);
  EXPECT(fail_each(&GZIP_SYNC, FK_FDATASYNC, EIO, -EIO, 0) > 0);
  EXPECT(fail_each(&MMAP_SYNC, FK_MSYNC, EIO, -EIO, 0) > 0);
  EXPECT(fail_each(&MMAP_SYNC, FK_FDATASYNC, EIO, -EIO, 0) > 0);
}

/* deflate fails in a commit: sticky TW_EZLIB, the file keeps the last
 * commit. */
static void test_deflate_fails(void **state)
{
  (void)state;
  EXPECT(fail_each(&GZIP_IN, FK_DEFLATE, Z_STREAM_ERROR, TW_EZLIB, 0) > 0);
  EXPECT(fail_each(&GZIP_BG, FK_DEFLATE, Z_STREAM_ERROR, TW_EZLIB, 0) > 0);
}

/* ------------------------------------------ the restore write fails too */

/* A commit's pwritev fails and so does the one that puts the old tail
 * back (nothing written by either): the file is still the last commit. */
static void restore_fails_nothing_written(const cfg *c)
{
  unsigned long at_open = 0, total = count_calls(c, FK_PWRITEV, &at_open);

  for (unsigned long n = at_open + 1; n <= total; n++) {
    target t;
    run r;
    jc_doc *d;
    size_t len;
    char *raw;
    int rc, m;

    snprintf(ctx, sizeof ctx, "%s: pwritev calls %lu and %lu of %lu fail",
             c->name, n, n + 1, total);
    t_init(&t, c);
    fault_reset();
    snap_arm(t.path);
    fault_fail(FK_PWRITEV, n, 2, EIO);
    EXPECT(t_open(&t, &rc) != NULL);
    workload(t.w, &r);
    rc = t_close(&t);
    EXPECT(fault_injected(FK_PWRITEV) == 2);
    fault_reset();
    EXPECT_RC(r.err ? r.err : rc, -EIO);
    EXPECT_RC(rc, -EIO);
    d = t_load(&t);
    m = tu_check_prefix(&F, d);
    jc_free(d);
    EXPECT(m >= r.flushed && m <= r.ok);
    raw = t_bytes(&t, &len);
    EXPECT(snap_taken == 1 && len == snap_len && memcmp(raw, snap, len) == 0);
    free(raw);
    t_cleanup(&t);
  }
}

/* The "repair" view of a cut trace: the text up to the end of the last
 * complete record line, its trailing comma dropped, and the tail.  Parsed
 * strictly.  (repair itself is not linked: this is its idea.) */
static jc_doc *repaired(const char *buf, size_t len)
{
  for (size_t end = len; end > 0; end--) {
    size_t n;
    char *fixed;
    jc_doc *d;
    char err[128];

    /* A record line ends at a newline (or the end of the data). */
    if (end < len && buf[end] != '\n')
      continue;
    n = end;
    if (n > 0 && buf[n - 1] == ',')
      n--;
    if (n == 0 || buf[n - 1] != '}')
      continue;
    fixed = malloc(n + strlen(TU_TAIL(0)));
    assert_non_null(fixed);
    memcpy(fixed, buf, n);
    memcpy(fixed + n, TU_TAIL(0), strlen(TU_TAIL(0)));
    d = tu_parse_trace(fixed, n + strlen(TU_TAIL(0)), err, sizeof err);
    free(fixed);
    if (d)
      return d;
  }
  fail_msg("%s: no complete record line to cut at", ctx);
  return NULL;
}

/* A commit's pwritev writes half of its request, the retry fails, and so
 * does the write that would put the old tail back: the file is then the
 * last commit (without its tail) followed by a piece of the new one.
 * Every committed byte is still in place, and cutting at the last
 * complete line gives the committed events followed by some of the new
 * ones (for gzip: the stream inflates to at least the committed text). */
static void restore_fails_cut(const cfg *c)
{
  unsigned long at_open = 0, total = count_calls(c, FK_PWRITEV, &at_open);

  for (unsigned long n = at_open + 1; n <= total; n++) {
    target t;
    run r;
    jc_doc *d;
    size_t len, jn, sn;
    char *raw, *json, *sjson;
    int rc, m, committed;

    snprintf(ctx, sizeof ctx, "%s: pwritev call %lu of %lu writes half, "
             "the retry and the restore fail", c->name, n, total);
    t_init(&t, c);
    fault_reset();
    snap_arm(t.path);
    fault_short(FK_PWRITEV, n, HALF);
    fault_fail(FK_PWRITEV, n + 1, 2, EIO);
    EXPECT(t_open(&t, &rc) != NULL);
    workload(t.w, &r);
    rc = t_close(&t);
    EXPECT(fault_injected(FK_PWRITEV) == 3);
    fault_reset();
    EXPECT_RC(r.err ? r.err : rc, -EIO);
    EXPECT_RC(rc, -EIO);
    EXPECT(snap_taken == 1);

    /* The last commit, as it was. */
    sjson = malloc(snap_len + 1);
    assert_non_null(sjson);
    memcpy(sjson, snap, snap_len);
    sjson = json_of(c, sjson, snap_len, &sn);
    d = tu_load_mem(sjson, sn);
    committed = tu_check_prefix(&F, d);
    jc_free(d);
    EXPECT(committed >= r.flushed && committed <= r.ok);
    EXPECT(has_tail(sjson, sn));
    sn -= strlen(TU_TAIL(0));      /* the committed text, without tail */

    raw = t_bytes(&t, &len);
    if (c->sink == TW_SINK_GZIP) {
      /* As much as decodes: the failed commit may have cut it. */
      json = tu_gunzip_prefix(raw, len, &jn, NULL);
      assert_non_null(json);
      free(raw);
    } else {
      json = raw;
      jn = len;
    }
    if (jn < sn || memcmp(json, sjson, sn) != 0)
      fail_msg("%s: the committed text (%zu bytes) is not a prefix of the "
               "file (%zu bytes)", ctx, sn, jn);
    if (c->sink != TW_SINK_GZIP) {
      d = repaired(json, jn);
      m = tu_check_prefix(&F, d);
      jc_free(d);
      EXPECT(m >= committed && m <= r.ok);
    }
    free(json);
    free(sjson);
    t_cleanup(&t);
  }
}

static void test_restore_fails_file(void **state)
{
  (void)state;
  restore_fails_nothing_written(&FILE_IN);
  restore_fails_nothing_written(&FILE_BG);
  restore_fails_cut(&FILE_IN);
  restore_fails_cut(&FILE_BG);
}

static void test_restore_fails_gzip(void **state)
{
  (void)state;
  restore_fails_nothing_written(&GZIP_IN);
  restore_fails_nothing_written(&GZIP_BG);
  restore_fails_cut(&GZIP_IN);
  restore_fails_cut(&GZIP_BG);
}

/* ------------------------------------------------------ close(2) fails */

/* tw_open owns the fd: close(2) failing with EIO at tw_close is its
 * return value; the file is complete all the same.  tw_open_fd's fd is
 * the caller's: tw_close does not close it. */
static void test_close_fails(void **state)
{
  static const cfg *const cs[] = { &FILE_IN, &FILE_BG, &GZIP_IN, &GZIP_BG,
                                   &MMAP_IN, &FILE_SYNC, &MMAP_SYNC };
  (void)state;

  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
    close_fails_once(cs[i], EIO, -EIO);
  {
    target t;
    run r;
    jc_doc *d;
    int err;

    snprintf(ctx, sizeof ctx, "tw_open_fd: tw_close does not close");
    t_init(&t, &FILE_APP);
    EXPECT(t_open(&t, &err) != NULL);
    workload(t.w, &r);
    fault_reset();
    fault_fail(FK_CLOSE, 1, FOREVER, EIO);
    EXPECT_RC(tw_close(t.w), 0);
    t.w = NULL;
    EXPECT(fault_calls(FK_CLOSE) == 0);
    fault_reset();
    t_finish(&t);
    d = t_load(&t);
    EXPECT(tu_check_prefix(&F, d) == NEV);
    jc_free(d);
    t_cleanup(&t);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    FAULTS_TEST(test_wrappers_see_library),
    FAULTS_TEST(test_emit_big_alloc_fails),
    FAULTS_TEST(test_eio_file),
    FAULTS_TEST(test_eio_gzip),
    FAULTS_TEST(test_eio_mmap),
    FAULTS_TEST(test_enospc_mmap),
    FAULTS_TEST(test_fallocate_unsupported_mmap),
    FAULTS_TEST(test_fdatasync_fails),
    FAULTS_TEST(test_deflate_fails),
    FAULTS_TEST(test_restore_fails_file),
    FAULTS_TEST(test_restore_fails_gzip),
    FAULTS_TEST(test_close_fails),
  };

  faults_prefer_tmpfs();
  return cmocka_run_group_tests(tests, NULL, NULL);
}
