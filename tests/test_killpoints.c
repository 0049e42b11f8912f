/* test_killpoints.c -- a process killed at every syscall of tw_open and of
 * a rotation leaves nothing but complete traces
 *
 * SQLite-style and deterministic: a child (this program, --child) opens a
 * writer, and in the rotation scenario emits and flushes twice with
 * rotate_every=1ns, so that each flush finishes the live file and begins
 * a new one.  It runs under strace -e inject=SYSCALL:signal=KILL:when=K,
 * for every syscall that changes a file or a name (openat, pwritev,
 * pwrite64, write, writev, ftruncate, fallocate, linkat, renameat,
 * unlinkat, fdatasync, fsync) and every K = 1, 2, ... until the child
 * runs to its end: the kill lands at each such call in turn.  A call
 * killed at its entry never runs, so after every kill each file whose
 * name begins with the trace's is a strict JSON trace as it is (no repair
 * needed), the path names one whenever it exists, no event is in two
 * files, the events form a prefix of those emitted, and every event the
 * child had reported committed (a tw_flush that returned 0) is there.
 * Each scenario must be killed at least once at every syscall that its
 * configuration lists (config.open_calls, .rotate_calls), so that the
 * test cannot pass killing nothing when the library's calls change.
 *
 * For every sink (file, mmap, gzip) and both layouts (array, object).
 * Without strace, or where ptrace is not allowed, the test is skipped
 * (exit 77).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "testutil.h"
#include "gunzip.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define BATCH 10                   /* events per flush */

static const char *const syscalls[] = {
  "openat", "pwritev", "pwrite64", "write", "writev", "ftruncate",
  "fallocate", "linkat", "renameat", "unlinkat", "fdatasync", "fsync",
};

#define NSYSCALLS (sizeof syscalls / sizeof syscalls[0])

/* The syscalls each scenario must make, space-separated: each must be
 * killed at least once, or the test would pass with no kill at all if
 * the library's calls changed (a list to update, deliberately, with the
 * library).  Every scenario opens the file and writes the first document
 * without a name (openat, pwritev), then links it to the path, which a
 * link never replaces (linkat); a rotation also gives the finished file
 * its numbered name (linkat) and renames the new one over the path
 * (renameat).  The mmap sink reserves blocks (fallocate) and cuts the file
 * to its length at close (ftruncate); sync makes the data (fdatasync)
 * and the directory (fsync) durable. */
#define OPEN_CALLS "openat pwritev linkat"
#define ROTATE_CALLS OPEN_CALLS " renameat"
#define MMAP_CALLS " fallocate ftruncate"
#define SYNC_CALLS " fdatasync fsync"

typedef struct config {
  const char *name;
  const char *options;
  const char *suffix;               /* of the trace's name */
  int object_form;
  const char *open_calls;           /* the syscalls of each scenario */
  const char *rotate_calls;
} config;

static const config configs[] = {
  { "file", "sink=file,buffer=64KiB", ".json", 0, OPEN_CALLS, ROTATE_CALLS },
  { "file, object", "sink=file,format=object", ".json", 1, OPEN_CALLS,
    ROTATE_CALLS },
  { "mmap", "sink=mmap,chunk=4KiB", ".json", 0, OPEN_CALLS MMAP_CALLS,
    ROTATE_CALLS MMAP_CALLS },
  { "mmap, object", "sink=mmap,chunk=4KiB,format=object", ".json", 1,
    OPEN_CALLS MMAP_CALLS, ROTATE_CALLS MMAP_CALLS },
  { "gzip", "sink=gzip", ".json.gz", 0, OPEN_CALLS, ROTATE_CALLS },
  { "gzip, object", "sink=gzip,format=object", ".json.gz", 1, OPEN_CALLS,
    ROTATE_CALLS },
  { "file, sync", "sink=file,sync", ".json", 0, OPEN_CALLS SYNC_CALLS,
    ROTATE_CALLS SYNC_CALLS },
};

/* ------------------------------------------------------------- the child */

/* Report n events committed on fd 3 (a pipe to the parent). */
static void report(unsigned n)
{
  char line[32];
  int len = snprintf(line, sizeof line, "%u\n", n);

  if (write(3, line, (size_t)len) != len)
    _exit(3);
}

static int child(const char *path, const char *options, int rotate)
{
  char opts[256], err[256];
  tw_options o;
  tw_writer *w;
  int rc;

  snprintf(opts, sizeof opts, "%s%s", options,
           rotate ? ",rotate_every=1ns" : "");
  tw_options_init(&o);
  o.process_name = "killpoints";
  if (tw_options_parse(&o, opts, err, sizeof err) != 0 ||
      !(w = tw_open(path, &o, &rc)))
    return 2;
  report(0);
  for (unsigned i = 0; rotate && i < 2 * BATCH; i++) {
    tw_arg a = tw_arg_uint("i", i);
    if (tw_complete(w, "kill", "ev", 1000u + i, 10, &a, 1) != 0)
      return 2;
    if ((i + 1) % BATCH == 0) {
      if (tw_flush(w) != 0)
        return 2;
      report(i + 1);
    }
  }
  return tw_close(w) == 0 ? 0 : 2;
}

/* ------------------------------------------------------------ the parent */

static char self[4096];             /* this program, for the child */

/* Run the child under strace, killed at the k-th call of sc (k 0: no
 * kill).  Returns the child's wait status (or strace's), and the last
 * count it reported committed in *committed (-1: it never reported). */
static int run_child(const char *path, const config *c, int rotate,
                     const char *sc, unsigned k, long *committed)
{
  char inject[64], buf[256];
  int p[2], status;
  pid_t pid;
  ssize_t n;
  size_t have = 0;

  snprintf(inject, sizeof inject, "inject=%s:signal=KILL:when=%u", sc, k);
  assert_int_equal(pipe(p), 0);
  fflush(NULL);
  if ((pid = fork()) == 0) {
    int nul = open("/dev/null", O_WRONLY);
    close(p[0]);                       /* it may be fd 3 */
    if (p[1] != 3) {
      dup2(p[1], 3);
      close(p[1]);
    }
    dup2(nul, 1);
    dup2(nul, 2);
    /* LeakSanitizer cannot run under ptrace: in a sanitizer build the
     * traced child would fail at exit. */
    {
      const char *old = getenv("ASAN_OPTIONS");
      char opts[1024];
      snprintf(opts, sizeof opts, "%s%sdetect_leaks=0", old ? old : "",
               old && *old ? ":" : "");
      setenv("ASAN_OPTIONS", opts, 1);
    }
    if (k)
      execlp("strace", "strace", "-f", "-qq", "-o", "/dev/null", "-e",
             inject, self, "--child", path, c->options,
             rotate ? "rotate" : "open", (char *)NULL);
    else
      execl(self, self, "--child", path, c->options,
            rotate ? "rotate" : "open", (char *)NULL);
    _exit(127);
  }
  assert_true(pid > 0);
  close(p[1]);
  *committed = -1;
  while ((n = read(p[0], buf + have, sizeof buf - 1 - have)) > 0) {
    char *nl;
    have += (size_t)n;
    buf[have] = '\0';
    while ((nl = strchr(buf, '\n')) != NULL) {
      *committed = strtol(buf, NULL, 10);
      memmove(buf, nl + 1, have - (size_t)(nl + 1 - buf) + 1);
      have -= (size_t)(nl + 1 - buf);
    }
  }
  close(p[0]);
  assert_int_equal(waitpid(pid, &status, 0), pid);
  return status;
}

/* Every event of one file: their "i", in order, into seen[]. */
static void load_events(const char *file, int gz, int object_form,
                        int *seen, unsigned *count, const char *ctx)
{
  size_t len;
  char *buf = tu_read_file(file, &len), *json = buf, err[256];
  jc_doc *d;
  jc_val e;

  if (gz && !(json = tu_gunzip(buf, len, &len)))
    fail_msg("%s: %s is not one complete gzip member", ctx, file);
  if (!(d = tu_parse_trace(json, len, err, sizeof err)))
    fail_msg("%s: %s is not strict JSON: %s", ctx, file, err);
  if (json != buf)
    free(json);
  free(buf);
  if (object_form != (jc_type(d, jc_root(d)) == JC_OBJECT))
    fail_msg("%s: %s is not in the %s form", ctx, file,
             object_form ? "object" : "array");
  e = jc_first(d, tu_events(d));
  if (e < 0)
    fail_msg("%s: %s has no first record", ctx, file);
  tu_assert_str(d, e, "name", "process_name");
  for (e = jc_next(d, e); e >= 0; e = jc_next(d, e)) {
    uint64_t i;
    if (!jc_streq(d, jc_get(d, e, "ph"), "X"))
      continue;                        /* thread names, etc. */
    if (jc_uint64(d, jc_get(d, jc_get(d, e, "args"), "i"), &i) != 0 ||
        i >= 2 * BATCH)
      fail_msg("%s: %s holds an event that was not emitted", ctx, file);
    if (seen[i]++)
      fail_msg("%s: event %llu twice (again in %s)", ctx,
               (unsigned long long)i, file);
    (*count)++;
  }
  jc_free(d);
}

/* Check the directory after a run: every file of the trace complete, the
 * events a prefix of those emitted, at least committed of them. */
static void check_dir(const char *dir, const char *base, const config *c,
                      long committed, const char *ctx)
{
  int seen[2 * BATCH] = { 0 };
  size_t bl = strlen(base);
  unsigned count = 0, nfiles = 0;
  ino_t inodes[64];
  struct dirent *de;
  DIR *dp = opendir(dir);
  char path[4096];

  assert_non_null(dp);
  while ((de = readdir(dp)) != NULL) {
    char stem[256];
    struct stat st;
    unsigned f;
    /* Every file of the trace: base, base.next, stem.NNNNNN.suffix. */
    snprintf(stem, sizeof stem, "%.*s", (int)(bl - strlen(c->suffix)), base);
    if (strncmp(de->d_name, stem, strlen(stem)) != 0)
      continue;
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    /* A rotation gives the live file its numbered name as a second link
     * before the new file takes the path: one file, two names. */
    assert_int_equal(stat(path, &st), 0);
    for (f = 0; f < nfiles && inodes[f] != st.st_ino; f++)
      continue;
    if (f < nfiles)
      continue;
    assert_true(nfiles < 64);
    inodes[nfiles++] = st.st_ino;
    load_events(path, strcmp(c->suffix, ".json.gz") == 0 &&
                strstr(de->d_name, ".gz") != NULL, c->object_form, seen,
                &count, ctx);
  }
  closedir(dp);
  for (unsigned i = 0; i < count; i++)
    if (!seen[i])
      fail_msg("%s: %u events, but event %u is missing", ctx, count, i);
  if (committed > 0 && count < (unsigned)committed)
    fail_msg("%s: %ld events were committed, %u are in the files", ctx,
             committed, count);
}

static void remove_dir(const char *dir)
{
  struct dirent *de;
  DIR *dp = opendir(dir);
  char path[4096];

  if (!dp)
    return;
  while ((de = readdir(dp)) != NULL) {
    if (de->d_name[0] == '.' && (!de->d_name[1] || de->d_name[1] == '.'))
      continue;
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    unlink(path);
  }
  closedir(dp);
  rmdir(dir);
}

/* 1 if the space-separated list names syscall sc. */
static int names(const char *list, const char *sc)
{
  size_t n = strlen(sc);

  for (const char *p = list; (p = strstr(p, sc)) != NULL; p += n)
    if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
      return 1;
  return 0;
}

/* The scenario must have been killed at least once at every syscall
 * that its list names; and the list names only syscalls that the test
 * kills at. */
static void check_kills(const config *c, int rotate,
                        const unsigned kills[NSYSCALLS])
{
  const char *list = rotate ? c->rotate_calls : c->open_calls, *p;
  unsigned listed = 0, words = 0;

  for (size_t s = 0; s < NSYSCALLS; s++) {
    if (!names(list, syscalls[s]))
      continue;
    listed++;
    if (kills[s] == 0)
      fail_msg("%s, %s: no kill at %s: the library no longer calls it "
               "there (update the list if that is meant)", c->name,
               rotate ? "rotation" : "open", syscalls[s]);
  }
  for (p = list + strspn(list, " "); *p; p += strspn(p, " ")) {
    words++;
    p += strcspn(p, " ");
  }
  if (words != listed)
    fail_msg("%s: \"%s\" names a syscall the test does not kill at",
             c->name, list);
}

/* Every kill point of one scenario on one configuration: at least one
 * at each syscall the scenario must make.  Returns the number of
 * kills. */
static unsigned kill_everywhere(const config *c, int rotate)
{
  unsigned kills[NSYSCALLS] = { 0 }, total = 0;

  for (size_t s = 0; s < NSYSCALLS; s++) {
    for (unsigned k = 1;; k++) {
      char *dir = tu_tmpdir("twkill"), path[4200], base[64], ctx[256];
      long committed;
      int status;

      snprintf(base, sizeof base, "trace%s", c->suffix);
      snprintf(path, sizeof path, "%s/%s", dir, base);
      snprintf(ctx, sizeof ctx, "%s, %s, killed at %s #%u", c->name,
               rotate ? "rotation" : "open", syscalls[s], k);
      status = run_child(path, c, rotate, syscalls[s], k, &committed);
      if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
        fail_msg("%s: the child failed (exit %d)", ctx, WEXITSTATUS(status));
      check_dir(dir, base, c, committed, ctx);
      remove_dir(dir);
      free(dir);
      if (WIFEXITED(status))
        break;                         /* it ran to its end: no K-th call */
      kills[s]++;
      total++;
    }
  }
  check_kills(c, rotate, kills);
  return total;
}

static void test_kill_at_every_syscall_of_open(void **state)
{
  (void)state;
  for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++)
    print_message("  %s: %u kills\n", configs[i].name,
                  kill_everywhere(&configs[i], 0));
}

static void test_kill_at_every_syscall_of_rotation(void **state)
{
  (void)state;
  for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++)
    print_message("  %s: %u kills\n", configs[i].name,
                  kill_everywhere(&configs[i], 1));
}

/* Whether strace can run a child here (installed, ptrace allowed). */
static int have_strace(void)
{
  int status;
  pid_t pid;

  fflush(NULL);
  if ((pid = fork()) == 0) {
    int nul = open("/dev/null", O_WRONLY);
    dup2(nul, 1);
    dup2(nul, 2);
    execlp("strace", "strace", "-qq", "-o", "/dev/null", "true",
           (char *)NULL);
    _exit(127);
  }
  return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
         WEXITSTATUS(status) == 0;
}

int main(int argc, char **argv)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_kill_at_every_syscall_of_open),
    cmocka_unit_test(test_kill_at_every_syscall_of_rotation),
  };
  ssize_t n;

  if (argc == 5 && strcmp(argv[1], "--child") == 0)
    return child(argv[2], argv[3], strcmp(argv[4], "rotate") == 0);
  if ((n = readlink("/proc/self/exe", self, sizeof self - 1)) < 0)
    return 99;
  self[n] = '\0';
  if (!have_strace()) {
    printf("strace is missing or cannot trace here: skipped\n");
    return 77;
  }
  return cmocka_run_group_tests(tests, NULL, NULL);
}
