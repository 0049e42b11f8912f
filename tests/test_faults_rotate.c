/* test_faults_rotate.c -- fault injection: a failed step of a
 * rotation never leaves a name on a torn trace
 *
 * Every step of a rotation (open, write, link, rename, unlink, fsync)
 * fails, in turn: every name on disk is a complete trace at every moment
 * (checked after each change of a name), no event is in two files, and
 * the error is sticky.
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

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* ------------------------------------------------------------- rotation */

/* A directory of its own for a rotating writer's files. */
typedef struct rot_dir {
  char dir[256];
  char path[300];          /* the live file */
  char live[32];           /* its name */
  int gz;
} rot_dir;

static void rot_dir_new(rot_dir *r, const cfg *c)
{
  const char *tmp = getenv("TMPDIR");

  snprintf(r->dir, sizeof r->dir, "%s/twfault-XXXXXX",
           tmp && *tmp ? tmp : "/tmp");
  assert_non_null(mkdtemp(r->dir));
  r->gz = c->sink == TW_SINK_GZIP;
  snprintf(r->live, sizeof r->live, "trace.json%s", r->gz ? ".gz" : "");
  snprintf(r->path, sizeof r->path, "%s/%s", r->dir, r->live);
}

static void rot_dir_remove(rot_dir *r)
{
  DIR *dp = opendir(r->dir);
  struct dirent *de;
  char full[600];

  assert_non_null(dp);
  while ((de = readdir(dp)) != NULL)
    if (de->d_name[0] != '.') {
      snprintf(full, sizeof full, "%s/%s", r->dir, de->d_name);
      (void)unlink(full);
    }
  closedir(dp);
  assert_int_equal(rmdir(r->dir), 0);
}

/* One file of a rotated trace: it must be a complete trace (gzip: one
 * exact member) that begins with the process name and holds workload
 * events first..first+n-1 in order, each as emitted.  Returns n, with
 * *first (-1 when n is 0).  An empty file passes only if may_be_empty. */
static int rot_file_events(const rot_dir *r, const char *name, int *first,
                           int may_be_empty)
{
  char full[600], why[96];
  size_t len, jn;
  char *raw, *json;
  jc_doc *d;
  jc_val e;
  int n = 0;

  snprintf(full, sizeof full, "%s/%s", r->dir, name);
  raw = tu_read_file(full, &len);
  *first = -1;
  if (len == 0 && may_be_empty) {
    free(raw);
    return 0;
  }
  if (r->gz) {
    json = gunzip_exact(raw, len, &jn);
    free(raw);
  } else {
    json = raw;
    jn = len;
  }
  if (!(d = tu_parse_trace(json, jn, why, sizeof why)))
    fail_msg("%s: %s is not strict JSON: %s", ctx, name, why);
  EXPECT(has_tail(json, jn));
  free(json);
  e = jc_first(d, tu_events(d));
  EXPECT(e >= 0);
  tu_check_pname(&F, d, e);
  for (e = jc_next(d, e); e >= 0; e = jc_next(d, e), n++) {
    int64_t i;
    if (n == 0) {
      EXPECT(jc_int64(d, jc_get(d, jc_get(d, e, "args"), "i"), &i) == 0);
      *first = (int)i;
    }
    tu_check_event_pad(&F, d, e, *first + n, pad_of(*first + n));
  }
  jc_free(d);
  return n;
}

static int cmp_ulong(const void *a, const void *b)
{
  unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;
  return x < y ? -1 : x > y;
}

/* Check every file in r's directory: the live file, the numbered ones,
 * and (only if next_ok) the next file being begun, which may be empty;
 * nothing else.  Every file must be a complete trace.  If whole: the
 * numbered files in order, then the live one, hold consecutive events
 * from *lowest on (the older ones deleted by keep), *count in all;
 * *numbered is the count of numbered files. */
static void rot_check_dir(const rot_dir *r, int next_ok, int whole,
                          int *lowest, int *count, int *numbered)
{
  char next_name[48], fmt[48], name[64];
  unsigned long nums[256];
  int nn = 0, live = 0, next = -1, first, n;
  DIR *dp = opendir(r->dir);
  struct dirent *de;

  assert_non_null(dp);
  snprintf(next_name, sizeof next_name, "%s.next", r->live);
  snprintf(fmt, sizeof fmt, "trace.%%lu.json%s%%n", r->gz ? ".gz" : "");
  while ((de = readdir(dp)) != NULL) {
    unsigned long k;
    int end = 0;
    if (de->d_name[0] == '.')
      continue;
    if (strcmp(de->d_name, r->live) == 0) {
      live = 1;
    } else if (strcmp(de->d_name, next_name) == 0) {
      if (!next_ok)
        fail_msg("%s: %s left behind", ctx, next_name);
      EXPECT(rot_file_events(r, next_name, &first, 1) == 0);
    } else if (sscanf(de->d_name, fmt, &k, &end) == 1 &&
               de->d_name[end] == '\0' && nn < 256) {
      nums[nn++] = k;
    } else {
      fail_msg("%s: unexpected file %s", ctx, de->d_name);
    }
  }
  closedir(dp);
  if (!live)
    fail_msg("%s: no file at the path", ctx);
  qsort(nums, (size_t)nn, sizeof nums[0], cmp_ulong);
  if (lowest)
    *lowest = -1;
  for (int f = 0; f <= nn; f++) {
    if (f < nn)
      snprintf(name, sizeof name, "trace.%06lu.json%s", nums[f],
               r->gz ? ".gz" : "");
    else
      snprintf(name, sizeof name, "%s", r->live);
    n = rot_file_events(r, name, &first, 0);
    if (!whole || n == 0)
      continue;
    if (next < 0)
      *lowest = first;
    else if (first != next)
      fail_msg("%s: %s begins with event %d, expected %d", ctx, name,
               first, next);
    next = first + n;
  }
  if (whole) {
    *count = next < 0 ? 0 : next - *lowest;
    *numbered = nn;
  }
}

static const rot_dir *watched;
static unsigned long watch_checks;

/* At every change of a name: every file complete, the next file may be
 * half begun (empty), events may show twice (the live file and its
 * numbered name are one file for a moment). */
static void watch_names(void)
{
  watch_checks++;
  rot_check_dir(watched, 1, 0, NULL, NULL, NULL);
}

static tw_options rot_opts(const cfg *c, uint64_t every_ns, unsigned keep)
{
  tw_options o = opts_of(c);

  o.rotate_interval_ns = every_ns;
  o.rotate_keep = keep;
  return o;
}

/* Rotation at every commit, on each sink: at every step of every
 * rotation, each file in the directory is a complete trace, and the path
 * always names one. */
static void test_rotate_names_always_complete(void **state)
{
  static const cfg *const cs[] = {
    &FILE_IN, &FILE_BG, &GZIP_IN, &GZIP_BG, &MMAP_IN, &FILE_SYNC
  };
  (void)state;

  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
    tw_options o = rot_opts(cs[i], 1, 3);
    int lowest, count, numbered, err;
    rot_dir r;
    run rr;
    tw_writer *w;

    snprintf(ctx, sizeof ctx, "%s: rotating at every commit", cs[i]->name);
    rot_dir_new(&r, cs[i]);
    w = tw_open(r.path, &o, &err);
    EXPECT(w != NULL);
    watched = &r;
    watch_checks = 0;
    names_changed = watch_names;
    workload(w, &rr);
    EXPECT_RC(rr.err, 0);
    EXPECT_RC(tw_close(w), 0);
    names_changed = NULL;
    /* openat, linkat, renameat at each; an unlinkat past keep */
    EXPECT(watch_checks >= 3 * 8);
    rot_check_dir(&r, 0, 1, &lowest, &count, &numbered);
    EXPECT(numbered == 3);
    EXPECT(lowest > 0 && lowest + count == NEV);
    rot_dir_remove(&r);
  }
}

/* Every call that a rotation makes fails in turn: the call returns the
 * error, which sticks; no file is left half made; the path names a
 * complete trace; and the files hold the events emitted, once each --
 * all of them, or (a buffered sink whose data commit failed) none of
 * them, or (mmap, which commits each record) at least every one
 * acknowledged. */
static void test_rotate_step_fails(void **state)
{
  static const cfg *const cs[] = { &FILE_IN, &GZIP_IN, &MMAP_IN,
                                   &FILE_SYNC };
  static const struct { enum fk k; int err; } ks[] = {
    { FK_OPENAT, EMFILE }, { FK_LINKAT, EIO }, { FK_RENAMEAT, EIO },
    { FK_UNLINKAT, EIO }, { FK_FSYNC, EIO }, { FK_PWRITEV, ENOSPC },
    { FK_PWRITE, ENOSPC }, { FK_FALLOC, ENOSPC }, { FK_MMAP, ENOMEM },
    { FK_CLOSE, EIO }, { FK_FDATASYNC, EIO }, { FK_ALLOC, ENOMEM },
    { FK_DEFLATE, Z_STREAM_ERROR },
  };
  enum { K = 5 };
  (void)state;

  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
    for (size_t j = 0; j < sizeof ks / sizeof ks[0]; j++) {
      tw_options o = rot_opts(cs[i], 1, 0);
      unsigned long calls = 0;

      o.buffer_size = 65536;         /* the flush is the one commit */
      for (unsigned long n = 0; n <= calls; n++) {
        int lowest, count, numbered, err;
        rot_dir r;
        run rr;
        tw_writer *w;

        snprintf(ctx, sizeof ctx, "%s: %s call %lu of %lu fails",
                 cs[i]->name, fk_names[ks[j].k], n, calls);
        rot_dir_new(&r, cs[i]);
        w = tw_open(r.path, &o, &err);
        EXPECT(w != NULL);
        memset(&rr, 0, sizeof rr);
        /* The thread's first event allocates its staging: before the
         * faults, which are for the rotating flush. */
        note(&rr, tu_emit(&F, w, 0), "emit", 0);
        rr.ok = 1;
        fault_reset();
        if (n > 0)
          fault_fail(ks[j].k, n, 1, ks[j].err);
        for (int e = 1; e < K; e++) {
          note(&rr, tu_emit(&F, w, e), "emit", e);
          if (!rr.err)
            rr.ok = e + 1;
        }
        note(&rr, tw_flush(w), "tw_flush", K);
        if (n == 0) {
          calls = fault_calls(ks[j].k);
          if (getenv("TW_FAULTS_VERBOSE"))
            print_message("%s: %lu %s calls\n", cs[i]->name, calls,
                          fk_names[ks[j].k]);
        }
        fault_reset();
        EXPECT_RC(tw_errcode(w), rr.err);
        EXPECT_RC(tw_close(w), rr.err);
        rot_check_dir(&r, 0, 1, &lowest, &count, &numbered);
        EXPECT(count == 0 || lowest == 0);
        if (!rr.err)
          EXPECT(count == K && numbered >= 1);
        else if (cs[i]->sink == TW_SINK_MMAP)
          EXPECT(count >= rr.ok && count <= K);
        else
          EXPECT(count == 0 || count == K);
        rot_dir_remove(&r);
      }
    }
}

/* Where the file system has no hard links, the live file is renamed to
 * its numbered name instead; a failure after that puts it back. */
static void test_rotate_without_links(void **state)
{
  static const cfg *const cs[] = { &FILE_IN, &GZIP_IN, &MMAP_IN };
  (void)state;

  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
    for (int fail_rename = 0; fail_rename <= 1; fail_rename++) {
      tw_options o = rot_opts(cs[i], 1, 0);
      int mmap = cs[i]->sink == TW_SINK_MMAP;
      int lowest, count, numbered, err;
      rot_dir r;
      run rr;
      tw_writer *w;

      snprintf(ctx, sizeof ctx, "%s: linkat fails with EPERM%s",
               cs[i]->name, fail_rename ? ", then renameat" : "");
      o.buffer_size = 65536;
      rot_dir_new(&r, cs[i]);
      w = tw_open(r.path, &o, &err);
      EXPECT(w != NULL);
      fault_fail(FK_LINKAT, 1, FOREVER, EPERM);
      /* renameat 1 names the live file, 2 puts it back when the new,
       * unnamed file cannot be linked (no linkat), 3 names it again, 4
       * the new one (named .next), 5 puts back */
      if (fail_rename)
        fault_fail(FK_RENAMEAT, 4, 1, EIO);
      memset(&rr, 0, sizeof rr);
      for (int e = 0; e < 3; e++) {
        note(&rr, tu_emit(&F, w, e), "emit", e);
        if (!rr.err)
          rr.ok = e + 1;
      }
      note(&rr, tw_flush(w), "tw_flush", 3);
      EXPECT_RC(rr.err, fail_rename ? -EIO : 0);
      EXPECT(fault_injected(FK_LINKAT) >= 1);
      fault_reset();
      EXPECT_RC(tw_close(w), rr.err);
      rot_check_dir(&r, 0, 1, &lowest, &count, &numbered);
      /* mmap rotates after each record: the first one's rotation fails */
      EXPECT(lowest == 0 && count == (mmap && fail_rename ? 1 : 3));
      EXPECT(numbered == (fail_rename ? 0 : mmap ? 3 : 1));
      rot_dir_remove(&r);
    }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    FAULTS_TEST(test_wrappers_see_library),
    FAULTS_TEST(test_rotate_names_always_complete),
    FAULTS_TEST(test_rotate_step_fails),
    FAULTS_TEST(test_rotate_without_links),
  };

  faults_prefer_tmpfs();
  return cmocka_run_group_tests(tests, NULL, NULL);
}
