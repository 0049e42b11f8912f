/* test_user_files.c -- tw_open never replaces or silently loses what the
 * user owns
 *
 *  - /dev/stdout, /dev/fd/N: the descriptor the shell set up, appended to
 *    after ">>" (the text already there stays), never a file made in its
 *    place;
 *  - an existing file, and a symbolic link to one: written in place, its
 *    inode, mode, owner and other hard links kept, on every sink; with
 *    rotation the finished files go beside the file the link leads to,
 *    and the live file keeps the mode and owner;
 *  - a link planted in a sticky world-writable directory: the kernel's
 *    protected_symlinks refuses it, and tw_open reports that error;
 *  - two writers on one file, in one process or two: the second gets
 *    TW_EBUSY, and tw_global says which process holds it and to use %p.
 *
 * Every file is read back through the strict checker, event by event.
 */
#include "testutil.h"
#include "gunzip.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define OTHER_UID 12345        /* an owner that is not the test's */

/* A fresh directory, removed with everything in it by dir_remove. */
static void dir_new(char *dir, size_t size)
{
  const char *tmp = getenv("TMPDIR");

  snprintf(dir, size, "%s/twuser-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  assert_non_null(mkdtemp(dir));
}

static void dir_remove(const char *dir)
{
  char cmd[600];

  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

static void write_text(const char *path, const char *text, mode_t mode)
{
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

  assert_true(fd >= 0);
  assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  assert_int_equal(close(fd), 0);
}

/* Emit n numbered events (args.i) on w. */
static void emit_n(tw_writer *w, int n)
{
  for (int i = 0; i < n; i++) {
    tw_arg a = tw_arg_int("i", i);
    assert_int_equal(tw_complete(w, "user", "ev", 1000u + (unsigned)i, 5,
                                 &a, 1), 0);
  }
}

/* Check json[0..len), a whole trace, strictly: the process name first,
 * then events i = *next, *next + 1, ... (repeated metadata aside);
 * advances *next. */
static void check_events(const char *what, const char *json, size_t len,
                         int *next)
{
  jc_doc *d = tu_load_mem(json, len);
  jc_val e = jc_first(d, tu_events(d));

  tu_assert_str(d, e, "name", "process_name");
  for (e = jc_next(d, e); e >= 0; e = jc_next(d, e)) {
    int64_t i = -1;
    if (jc_streq(d, jc_get(d, e, "ph"), "M"))
      continue;
    tu_assert_str(d, e, "ph", "X");
    tu_assert_str(d, e, "name", "ev");
    tu_assert_us(d, e, "dur", 5);
    if (jc_int64(d, jc_get(d, jc_get(d, e, "args"), "i"), &i) != 0 ||
        i != *next)
      fail_msg("%s: event %lld where %d was expected", what, (long long)i,
               *next);
    tu_assert_us(d, e, "ts", 1000u + (uint64_t)i);
    (*next)++;
  }
  jc_free(d);
}

/* Check the trace file at path (gz: one complete gzip member) that holds
 * events from *next on. */
static void check_trace_file(const char *path, int gz, int *next)
{
  size_t len, jlen;
  char *bytes = tu_read_file(path, &len), *json = bytes;

  if (gz && !(json = tu_gunzip(bytes, len, &jlen)))
    fail_msg("%s: not one complete gzip member", path);
  if (!gz)
    jlen = len;
  if (jlen < 2 || memcmp(json + jlen - 2, "\n]", 2) != 0)
    fail_msg("%s: does not end exactly at its tail", path);
  check_events(path, json, jlen, next);
  if (json != bytes)
    free(json);
  free(bytes);
}

/* ------------------------------------------- the standard streams */

/* A child whose standard output is fd writes n events to path. */
static void child_writes(const char *path, int fd, int n)
{
  pid_t pid = fork();
  int status;

  assert_true(pid >= 0);
  if (pid == 0) {
    tw_writer *w;
    int err;
    if (dup2(fd, STDOUT_FILENO) < 0 || !(w = tw_open(path, NULL, &err)))
      _exit(3);
    for (int i = 0; i < n; i++) {
      tw_arg a = tw_arg_int("i", i);
      if (tw_complete(w, "user", "ev", 1000u + (unsigned)i, 5, &a, 1) != 0)
        _exit(4);
    }
    _exit(tw_close(w) == 0 ? 0 : 5);
  }
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
}

/* "./app >> existing.log" with TRACEWRITER_OUT=/dev/stdout: the trace is
 * appended after the text, in the same file. */
static void test_stdout_appended(void **state)
{
  static const char *const names[] = { "/dev/stdout", "/dev/fd/1",
                                       "/proc/self/fd/1" };
  char dir[256], log[320];
  (void)state;

  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
    struct stat before, after;
    size_t len;
    char *text;
    int fd, next = 0;

    dir_new(dir, sizeof dir);
    snprintf(log, sizeof log, "%s/existing.log", dir);
    write_text(log, "existing text\n", 0600);
    assert_int_equal(stat(log, &before), 0);
    assert_true((fd = open(log, O_WRONLY | O_APPEND)) >= 0);
    child_writes(names[k], fd, 25);
    close(fd);
    assert_int_equal(stat(log, &after), 0);
    assert_int_equal(after.st_ino, before.st_ino);
    text = tu_read_file(log, &len);
    if (len < 14 || memcmp(text, "existing text\n", 14) != 0)
      fail_msg("%s: the text that was in the file is gone", names[k]);
    check_events(names[k], text + 14, len - 14, &next);
    assert_int_equal(next, 25);
    free(text);
    dir_remove(dir);
  }
}

/* A descriptor open without O_APPEND at an offset: written in place from
 * there, what comes before it kept. */
static void test_fd_path_in_place(void **state)
{
  char dir[256], file[320], path[64];
  size_t len;
  char *text;
  int fd, next = 0, err;
  tw_writer *w;

  (void)state;
  dir_new(dir, sizeof dir);
  snprintf(file, sizeof file, "%s/out.json", dir);
  write_text(file, "head:", 0644);
  assert_true((fd = open(file, O_RDWR)) >= 0);
  assert_int_equal(lseek(fd, 0, SEEK_END), 5);
  snprintf(path, sizeof path, "/dev/fd/%d", fd);
  assert_non_null(w = tw_open(path, NULL, &err));
  emit_n(w, 10);
  assert_int_equal(tw_flush(w), 0);
  /* Committed in place: the file is a trace after "head:" already. */
  text = tu_read_file(file, &len);
  assert_memory_equal(text, "head:", 5);
  check_events(path, text + 5, len - 5, &next);
  free(text);
  assert_int_equal(tw_close(w), 0);
  close(fd);
  /* Rotation needs a file to name: refused, as tw_open_fd refuses it. */
  {
    tw_options o;
    tw_options_init(&o);
    o.rotate_size = 1 << 20;
    assert_null(tw_open("/dev/stdout", &o, &err));
    assert_int_equal(err, TW_EOPTION);
  }
  dir_remove(dir);
}

/* -------------------------------------- existing files and links */

static const char *const sinks[] = { "file", "gzip", "mmap" };

/* The user's file: mode 0600, another owner (when the test may give
 * one), a second hard link.  Returns whether the owner was changed. */
static int users_file(const char *path, const char *hard)
{
  write_text(path, "the user's data\n", 0600);
  assert_int_equal(chmod(path, 0600), 0);
  assert_int_equal(link(path, hard), 0);
  return chown(path, OTHER_UID, OTHER_UID) == 0;
}

static void assert_owned(const char *path, const struct stat *was,
                         int other_owner)
{
  struct stat st;

  assert_int_equal(stat(path, &st), 0);
  assert_int_equal(st.st_mode & 07777, 0600);
  if (other_owner)
    assert_int_equal(st.st_uid, OTHER_UID);
  else
    assert_int_equal(st.st_uid, was->st_uid);
}

/* path (or the link at path to target) written in place, on every
 * sink; then with rotation. */
static void run_in_place(int via_link)
{
  char dir[256], target[320], hard[320], path[320], part[400];
  (void)part;

  for (size_t k = 0; k < sizeof sinks / sizeof sinks[0]; k++) {
    int gz = k == 1, other, err, next = 0;
    struct stat was, st;
    char optstr[64];
    tw_options o;
    tw_writer *w;

    dir_new(dir, sizeof dir);
    snprintf(target, sizeof target, "%s/data/target.json%s", dir,
             gz ? ".gz" : "");
    snprintf(hard, sizeof hard, "%s/data/hard.json", dir);
    snprintf(part, sizeof part, "%s/data", dir);
    assert_int_equal(mkdir(part, 0755), 0);
    other = users_file(target, hard);
    assert_int_equal(stat(target, &was), 0);
    if (via_link) {
      /* A relative link, from another directory. */
      snprintf(path, sizeof path, "%s/trace.json%s", dir, gz ? ".gz" : "");
      assert_int_equal(symlink(gz ? "data/target.json.gz"
                                  : "data/target.json", path), 0);
    } else {
      snprintf(path, sizeof path, "%s", target);
    }
    snprintf(optstr, sizeof optstr, "sink=%s", sinks[k]);
    tw_options_init(&o);
    assert_int_equal(tw_options_parse(&o, optstr, NULL, 0), 0);
    assert_non_null(w = tw_open(path, &o, &err));
    emit_n(w, 30);
    assert_int_equal(tw_close(w), 0);
    /* The same inode, mode, owner and links; the link still a link. */
    assert_int_equal(stat(target, &st), 0);
    assert_int_equal(st.st_ino, was.st_ino);
    assert_int_equal(st.st_nlink, 2);
    assert_owned(target, &was, other);
    if (via_link) {
      assert_int_equal(lstat(path, &st), 0);
      assert_true(S_ISLNK(st.st_mode));
    }
    check_trace_file(hard, gz, &next);
    assert_int_equal(next, 30);

    /* With rotation: the finished files beside the target, the first
     * one the user's inode with its other link; the live file with the
     * user's mode and owner. */
    tw_options_init(&o);
    assert_int_equal(tw_options_parse(&o, optstr, NULL, 0), 0);
    o.rotate_size = 4096;
    o.buffer_size = 4096;
    assert_non_null(w = tw_open(path, &o, &err));
    emit_n(w, gz ? 8000 : 400);           /* gzip: 4 KiB compressed */
    assert_int_equal(tw_close(w), 0);
    snprintf(part, sizeof part, "%s/data/target.000001.json%s", dir,
             gz ? ".gz" : "");
    if (stat(part, &st) != 0)
      fail_msg("%s: no %s", sinks[k], part);
    assert_int_equal(st.st_ino, was.st_ino);
    assert_int_equal(st.st_nlink, 2);
    assert_owned(target, &was, other);
    next = 0;
    for (unsigned long n = 1;; n++) {
      snprintf(part, sizeof part, "%s/data/target.%06lu.json%s", dir, n,
               gz ? ".gz" : "");
      if (stat(part, &st) != 0)
        break;
      check_trace_file(part, gz, &next);
    }
    check_trace_file(target, gz, &next);
    assert_int_equal(next, gz ? 8000 : 400);
    if (via_link) {
      assert_int_equal(lstat(path, &st), 0);
      assert_true(S_ISLNK(st.st_mode));
    }
    dir_remove(dir);
  }
}

static void test_existing_file_in_place(void **state)
{
  (void)state;
  run_in_place(0);
}

static void test_symlink_followed_in_place(void **state)
{
  (void)state;
  run_in_place(1);
}

/* A link planted by another user in a sticky, world-writable directory
 * (/tmp's kind): the kernel refuses to follow it (protected_symlinks),
 * and tw_open reports its error; the file it points to is untouched. */
static void test_planted_symlink_refused(void **state)
{
  char dir[256], sticky[320], victim[320], link_[400], *text;
  size_t len;
  int err, prot = 0;
  FILE *f;

  (void)state;
  if ((f = fopen("/proc/sys/fs/protected_symlinks", "r")) != NULL) {
    if (fscanf(f, "%d", &prot) != 1)
      prot = 0;
    fclose(f);
  }
  if (prot != 1 || geteuid() != 0) {
    print_message("  SKIP: needs root and fs.protected_symlinks = 1\n");
    return;
  }
  dir_new(dir, sizeof dir);
  snprintf(sticky, sizeof sticky, "%s/tmp", dir);
  snprintf(victim, sizeof victim, "%s/victim", dir);
  snprintf(link_, sizeof link_, "%s/trace.json", sticky);
  assert_int_equal(mkdir(sticky, 0777), 0);
  assert_int_equal(chmod(sticky, 01777), 0);
  write_text(victim, "precious\n", 0644);
  assert_int_equal(symlink(victim, link_), 0);
  assert_int_equal(lchown(link_, OTHER_UID, OTHER_UID), 0);
  assert_null(tw_open(link_, NULL, &err));
  assert_int_equal(err, -EACCES);
  text = tu_read_file(victim, &len);
  assert_string_equal(text, "precious\n");
  free(text);
  dir_remove(dir);
}

/* ----------------------------------------------- one writer per file */

static void test_second_writer_busy(void **state)
{
  char dir[256], path[320], other[320];
  tw_writer *w, *w2;
  int err, status, next = 0;
  pid_t pid;

  (void)state;
  dir_new(dir, sizeof dir);
  snprintf(path, sizeof path, "%s/trace.json", dir);
  snprintf(other, sizeof other, "%s/link.json", dir);
  assert_non_null(w = tw_open(path, NULL, &err));
  emit_n(w, 5);
  /* The same process, by the same name and through a link. */
  assert_null(w2 = tw_open(path, NULL, &err));
  assert_int_equal(err, TW_EBUSY);
  assert_int_equal(symlink("trace.json", other), 0);
  assert_null(w2 = tw_open(other, NULL, &err));
  assert_int_equal(err, TW_EBUSY);
  /* Another process. */
  if ((pid = fork()) == 0) {
    tw_writer *c = tw_open(path, NULL, &err);
    _exit(c == NULL && err == TW_EBUSY ? 0 : 1);
  }
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  assert_string_equal(tw_err_name(TW_EBUSY), "TW_EBUSY");
  /* The first writer lost nothing. */
  emit_n(w, 0);
  assert_int_equal(tw_close(w), 0);
  check_trace_file(path, 0, &next);
  assert_int_equal(next, 5);
  /* Free again once it is closed. */
  assert_non_null(w = tw_open(path, NULL, &err));
  assert_int_equal(tw_close(w), 0);
  dir_remove(dir);
}

/* Whether this process's fdinfo shows its locks (some systems do not). */
static int locks_listed(void)
{
  char line[256], cmd[64];
  int found = 0;
  FILE *f;

  snprintf(cmd, sizeof cmd, "cat /proc/%ld/fdinfo/* 2>/dev/null",
           (long)getpid());
  f = popen(cmd, "r");

  while (f && !found && fgets(line, sizeof line, f))
    found = strstr(line, "OFDLCK") != NULL;
  if (f)
    pclose(f);
  return found;
}

/* tw_global's one line on stderr names the file, the holder and %p. */
static void test_global_says_who_holds_it(void **state)
{
  char dir[256], path[320], line[1024], want[64];
  tw_writer *w;
  int err, fds[2], status;
  ssize_t n;
  pid_t pid;

  (void)state;
  dir_new(dir, sizeof dir);
  snprintf(path, sizeof path, "%s/trace.json", dir);
  assert_non_null(w = tw_open(path, NULL, &err));
  assert_int_equal(pipe(fds), 0);
  if ((pid = fork()) == 0) {
    dup2(fds[1], STDERR_FILENO);
    setenv("TRACEWRITER_OUT", path, 1);
    unsetenv("TRACEWRITER_QUIET");
    _exit(tw_global() == NULL ? 0 : 1);
  }
  close(fds[1]);
  n = read(fds[0], line, sizeof line - 1);
  close(fds[0]);
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  assert_true(n > 0);
  line[n] = '\0';
  /* The holder is named where the system lists its locks. */
  snprintf(want, sizeof want, "process %ld", (long)getpid());
  if (!strstr(line, path) || !strstr(line, "%p") ||
      (locks_listed() && !strstr(line, want)))
    fail_msg("the message does not name the file, the holder and %%p: %s",
             line);
  assert_int_equal(tw_close(w), 0);
  dir_remove(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_stdout_appended),
    cmocka_unit_test(test_fd_path_in_place),
    cmocka_unit_test(test_existing_file_in_place),
    cmocka_unit_test(test_symlink_followed_in_place),
    cmocka_unit_test(test_planted_symlink_refused),
    cmocka_unit_test(test_second_writer_busy),
    cmocka_unit_test(test_global_says_who_holds_it),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
