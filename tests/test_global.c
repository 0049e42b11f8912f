/* test_global.c -- tw_global(): the process-wide writer from the
 * environment
 *
 * tw_global reads TRACEWRITER_OUT and TRACEWRITER_OPTIONS once per
 * process, so every scenario runs in a forked child that sets the
 * environment before its first call, does the work and exits with a
 * status (0: every check in the child passed, else the number of the
 * check that failed).  The parent checks the status and reads the file
 * back with the strict checker.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* gettid, program_invocation_short_name */
#endif
#include "numbered.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------- helpers */

/* A fresh temporary directory (malloc'ed path). */
static char *make_dir(void)
{
  return tu_tmpdir("twglobal-");
}

static char *join(const char *dir, const char *name)
{
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = malloc(n);
  assert_non_null(p);
  snprintf(p, n, "%s/%s", dir, name);
  return p;
}

/* The file the child with this pid wrote for pattern "<dir>/<pre><pid>
 * <post>". */
static char *pid_path(const char *dir, const char *pre, pid_t pid,
                      const char *post)
{
  char name[256];
  snprintf(name, sizeof name, "%s%ld%s", pre, (long)pid, post);
  return join(dir, name);
}

/* setenv, or unsetenv for a NULL value. */
static void set_env(const char *name, const char *value)
{
  if (value)
    setenv(name, value, 1);
  else
    unsetenv(name);
}

typedef int (*child_fn)(void *arg);

/* Fork; the child runs fn and, if exit_normally, leaves with exit() (so
 * atexit handlers run), else with _exit().  Returns the child's pid after
 * checking that it exited with status 0. */
static pid_t run_child(child_fn fn, void *arg, int exit_normally)
{
  int status, rc;
  pid_t pid;

  fflush(NULL);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    rc = fn(arg);
    if (exit_normally)
      exit(rc);
    _exit(rc);
  }
  assert_int_equal(waitpid(pid, &status, 0), pid);
  if (!WIFEXITED(status))
    fail_msg("child killed by signal %d", WTERMSIG(status));
  if (WEXITSTATUS(status) != 0)
    fail_msg("child failed its check number %d", WEXITSTATUS(status));
  return pid;
}

/* The events of these tests (numbered.h), in a process named as the
 * program: its global writer takes that name. */
static tu_family events(void)
{
  tu_family f = { "global", program_invocation_short_name, NULL, 0, 0,
                  0 };
  return f;
}

/* Emit events 0..n-1 on w; nonzero if one failed. */
static int emit_n(tw_writer *w, int n)
{
  const tu_family f = events();

  return tu_emit_range(&f, w, 0, n);
}

/* The file at path must be a strict trace (object_form or not) by process
 * pid holding the process_name record then exactly the n events of
 * emit_n, emitted by its main thread (tid = pid); opened by any of its
 * threads (the first to call tw_global()). */
static void check_global_trace(const char *path, int object_form, pid_t pid,
                               int n)
{
  tu_family f = events();

  f.pid = f.tid = pid;
  f.pname_tid = -1;
  tu_check_file(&f, path, 0, object_form, n);
}

/* ------------------------------------------------------- tracing is off */

static int child_off(void *arg)
{
  const char *msg = "not set";
  const char *value = arg;
  tw_event ev;

  set_env("TRACEWRITER_OUT", value);
  unsetenv("TRACEWRITER_OPTIONS");
  if (tw_global() != NULL)
    return 1;
  if (tw_global_status(&msg) != 0)
    return 2;
  if (!msg || msg[0] != '\0')
    return 3;
  if (tw_global_status(NULL) != 0)
    return 4;
  /* Every helper on the NULL writer is a no-op. */
  memset(&ev, 0, sizeof ev);
  ev.ph = 'X';
  ev.name = "x";
  if (tw_emit(tw_global(), &ev) != 0 ||
      tw_complete(tw_global(), "c", "n", 1, 1, NULL, 0) != 0 ||
      tw_begin(tw_global(), "c", "n", NULL, 0) != 0 ||
      tw_end(tw_global(), "c", "n", NULL, 0) != 0 ||
      tw_instant(tw_global(), "c", "n", 'g', NULL, 0) != 0 ||
      tw_thread_name(tw_global(), "t") != 0)
    return 5;
  if (tw_flush(tw_global()) != 0 || tw_errcode(tw_global()) != 0)
    return 6;
  {
    TW_SCOPE(tw_global(), "c", "scope");
  }
  /* Later calls still NULL, even with the variable set now. */
  setenv("TRACEWRITER_OUT", "/tmp/should-not-be-created-by-tw-test.json", 1);
  if (tw_global() != NULL || tw_global_status(NULL) != 0)
    return 7;
  if (tw_close(tw_global()) != 0)
    return 8;
  return 0;
}

static void test_unset(void **state)
{
  (void)state;
  run_child(child_off, NULL, 1);
  run_child(child_off, "", 1);
  assert_int_not_equal(access("/tmp/should-not-be-created-by-tw-test.json",
                              F_OK), 0);
}

/* ------------------------------------------------ a file, committed at exit */

typedef struct scenario {
  const char *out;          /* TRACEWRITER_OUT */
  const char *options;      /* TRACEWRITER_OPTIONS, NULL: unset */
  int n;                    /* events to emit */
} scenario;

/* Set the environment, emit, and exit WITHOUT tw_close or tw_flush: the
 * atexit commit must make the file complete. */
static int child_emit(void *arg)
{
  const scenario *sc = arg;
  const char *msg = NULL;
  tw_writer *w;

  setenv("TRACEWRITER_OUT", sc->out, 1);
  set_env("TRACEWRITER_OPTIONS", sc->options);
  if (!(w = tw_global()))
    return 1;
  if (tw_global() != w)
    return 2;
  if (tw_global_status(&msg) != 0 || !msg)
    return 3;
  if (emit_n(w, sc->n) != 0)
    return 4;
  if (tw_errcode(w) != 0)
    return 5;
  return 0;
}

static void test_pid_path_atexit(void **state)
{
  char *dir = make_dir();
  char *pattern = join(dir, "g-%p.json");
  scenario sc = { pattern, NULL, 1000 };
  pid_t pid;
  char *path;

  (void)state;
  pid = run_child(child_emit, &sc, 1);
  path = pid_path(dir, "g-", pid, ".json");
  check_global_trace(path, 0, pid, sc.n);
  tu_cleanup(path);
  free(pattern);
  assert_int_equal(rmdir(dir), 0);            /* nothing else was made */
  free(dir);
}

static void test_percent_percent(void **state)
{
  char *dir = make_dir();
  char *pattern = join(dir, "g-%%-%p-%%p.json");
  scenario sc = { pattern, NULL, 10 };
  pid_t pid;
  char *path;

  (void)state;
  pid = run_child(child_emit, &sc, 1);
  path = pid_path(dir, "g-%-", pid, "-%p.json");
  check_global_trace(path, 0, pid, sc.n);
  tu_cleanup(path);
  free(pattern);
  assert_int_equal(rmdir(dir), 0);
  free(dir);
}

/* %t: the start time, UTC, as 20261122T071500Z. */
static void test_time_path(void **state)
{
  char *dir = make_dir();
  char *pattern = join(dir, "g-%t.json");
  scenario sc = { pattern, NULL, 10 };
  time_t before = time(NULL), after, named;
  struct dirent *e;
  struct tm tm;
  DIR *d;
  char *path = NULL;
  pid_t pid;

  (void)state;
  pid = run_child(child_emit, &sc, 1);
  after = time(NULL);
  assert_non_null(d = opendir(dir));
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.')
      continue;
    assert_null(path);                          /* one file only */
    path = join(dir, e->d_name);
    assert_int_equal(strlen(e->d_name), strlen("g-20261122T071500Z.json"));
    assert_int_equal(strncmp(e->d_name, "g-", 2), 0);
    memset(&tm, 0, sizeof tm);
    assert_string_equal(strptime(e->d_name + 2, "%Y%m%dT%H%M%SZ", &tm),
                        ".json");
    named = timegm(&tm);
    assert_true(named >= before && named <= after);
  }
  closedir(d);
  assert_non_null(path);
  check_global_trace(path, 0, pid, sc.n);
  tu_cleanup(path);
  free(pattern);
  assert_int_equal(rmdir(dir), 0);
  free(dir);
}

/* No %p: the name is taken as it is. */
static void test_plain_path(void **state)
{
  char *dir = make_dir();
  char *path = join(dir, "plain.json");
  scenario sc = { path, "", 3 };
  pid_t pid;

  (void)state;
  pid = run_child(child_emit, &sc, 1);
  check_global_trace(path, 0, pid, sc.n);
  tu_cleanup(path);
  assert_int_equal(rmdir(dir), 0);
  free(dir);
}

/* TRACEWRITER_OUT=/dev/stdout with "./app >> log": the trace follows the
 * text in the file and is whole once the program has exited, its tail
 * written by the exit commit (a descriptor opened for appending is
 * streamed: no tail before). */
typedef struct appended {
  scenario sc;
  const char *log;
} appended;

static int child_appended(void *arg)
{
  const appended *a = arg;
  int fd = open(a->log, O_WRONLY | O_APPEND);

  if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
    return 90;
  close(fd);
  return child_emit((void *)&a->sc);
}

static void test_stdout_appended_at_exit(void **state)
{
  static const char text[] = "the program's own line\n";
  char *dir = make_dir();
  char *log = join(dir, "app.log");
  appended a = { { "/dev/stdout", "", 9 }, log };
  tu_family f = events();
  size_t len, k = sizeof text - 1;
  char *got;
  FILE *fp;
  pid_t pid;

  (void)state;
  assert_non_null(fp = fopen(log, "w"));
  assert_int_equal(fputs(text, fp) >= 0, 1);
  assert_int_equal(fclose(fp), 0);
  pid = run_child(child_appended, &a, 1);
  got = tu_read_file(log, &len);
  assert_true(len > k);
  assert_memory_equal(got, text, k);
  f.pid = f.tid = pid;
  f.pname_tid = -1;
  tu_check_mem(&f, got + k, len - k, 0, 0, a.sc.n);
  free(got);
  tu_cleanup(log);
  assert_int_equal(rmdir(dir), 0);
  free(dir);
}

static void test_options_applied(void **state)
{
  char *dir = make_dir();
  char *path = join(dir, "obj.json");
  /* 2000 events of ~120 bytes: many commits of the 4 KiB buffer, and the
   * last part only at exit. */
  scenario sc = { path, "format=object,buffer=4KiB", 2000 };
  pid_t pid;

  (void)state;
  pid = run_child(child_emit, &sc, 1);
  check_global_trace(path, 1, pid, sc.n);
  tu_cleanup(path);
  assert_int_equal(rmdir(dir), 0);
  free(dir);
}

/* ------------------------------------------------------------ failures */

typedef struct failure {
  const char *out;
  const char *options;
  int status;               /* expected tw_global_status */
  const char *named;        /* the message must contain this */
} failure;

static int child_fail(void *arg)
{
  const failure *f = arg;
  const char *msg = NULL;

  setenv("TRACEWRITER_OUT", f->out, 1);
  set_env("TRACEWRITER_OPTIONS", f->options);
  setenv("TRACEWRITER_QUIET", "1", 1);  /* the line: test_stderr_* */
  if (tw_global() != NULL)
    return 1;
  if (tw_global_status(&msg) != f->status)
    return 2;
  if (!msg || !strstr(msg, f->named))
    return 3;
  /* Stable: the same answer again, and no retry. */
  if (tw_global() != NULL || tw_global_status(NULL) != f->status)
    return 4;
  if (emit_n(tw_global(), 3) != 0)
    return 5;
  return 0;
}

static void test_bad_options(void **state)
{
  char *dir = make_dir();
  char *path = join(dir, "never.json");
  failure f = { path, "bogus=1", TW_EOPTION, "bogus" };
  failure g = { path, "format=object,buffer=12x", TW_EOPTION, "12x" };

  (void)state;
  run_child(child_fail, &f, 1);
  run_child(child_fail, &g, 1);
  /* Nothing was created. */
  assert_int_not_equal(access(path, F_OK), 0);
  free(path);
  assert_int_equal(rmdir(dir), 0);
  free(dir);
}

static void test_unwritable_path(void **state)
{
  char *dir = make_dir();
  char *path = join(dir, "no-such-dir/x.json");
  failure f = { path, NULL, -ENOENT, path };

  (void)state;
  run_child(child_fail, &f, 1);
  free(path);
  /* A directory as the output path. */
  {
    failure g = { dir, NULL, -EISDIR, dir };
    run_child(child_fail, &g, 1);
  }
  assert_int_equal(rmdir(dir), 0);
  free(dir);
}

/* ------------------------------------------- the line on stderr */

/* What a child wrote on stderr: fork, point fd 2 at a new file, run fn
 * (the child exits normally with its result, which must be 0), and
 * return the file's content (malloc'ed) and the child's pid in *pid. */
static char *child_stderr(child_fn fn, void *arg, pid_t *pid)
{
  char *path = tu_tmppath(".stderr"), *text;
  int status, fd;

  fflush(NULL);
  *pid = fork();
  assert_true(*pid >= 0);
  if (*pid == 0) {
    fd = open(path, O_WRONLY | O_APPEND);
    if (fd < 0 || dup2(fd, STDERR_FILENO) < 0)
      _exit(100);
    close(fd);
    free(path);                   /* the child's copy: LeakSanitizer */
    exit(fn(arg));
  }
  assert_int_equal(waitpid(*pid, &status, 0), *pid);
  text = tu_read_file(path, NULL);
  tu_cleanup(path);
  if (!WIFEXITED(status))
    fail_msg("child killed by signal %d; its stderr: %s", WTERMSIG(status),
             text);
  if (WEXITSTATUS(status) != 0)
    fail_msg("child failed its check number %d; its stderr: %s",
             WEXITSTATUS(status), text);
  return text;
}

typedef struct speaker {
  const char *out;          /* TRACEWRITER_OUT, NULL: unset */
  const char *options;      /* TRACEWRITER_OPTIONS, NULL: unset */
  const char *quiet;        /* TRACEWRITER_QUIET, NULL: unset */
  int fails;                /* 1: tw_global must be NULL with an error */
} speaker;

/* Set the environment, call tw_global (twice) and tw_global_status; the
 * status must match what the child expects. */
static int child_speak(void *arg)
{
  const speaker *sp = arg;
  const char *msg = NULL;
  tw_writer *w;

  set_env("TRACEWRITER_OUT", sp->out);
  set_env("TRACEWRITER_OPTIONS", sp->options);
  set_env("TRACEWRITER_QUIET", sp->quiet);
  w = tw_global();
  if (tw_global() != w)
    return 1;
  if ((tw_global_status(&msg) != 0) != sp->fails || !msg)
    return 2;
  if (sp->fails != (w == NULL && sp->out && *sp->out))
    return 3;
  return 0;
}

/* The exact line: the message of tw_global_status between "tracewriter:
 * " and " (tracing is off)". */
static void assert_line(const char *got, const char *message)
{
  char want[4096];

  snprintf(want, sizeof want, "tracewriter: %s (tracing is off)\n",
           message);
  if (strcmp(got, want) != 0)
    fail_msg("stderr \"%s\", expected \"%s\"", got, want);
}

static void test_stderr_bad_options(void **state)
{
  char *dir = make_dir();
  char *path = join(dir, "never.json");
  speaker sp = { path, "buffer=64KiB, rotat=1G", NULL, 1 };
  speaker sp2 = { path, "format=object,buffer=12x", NULL, 1 };
  pid_t pid;
  char *text;

  (void)state;
  text = child_stderr(child_speak, &sp, &pid);
  assert_line(text, "TRACEWRITER_OPTIONS: unknown option 'rotat'; did you "
              "mean 'rotate'?");
  free(text);
  text = child_stderr(child_speak, &sp2, &pid);
  assert_line(text, "TRACEWRITER_OPTIONS: bad value '12x' for 'buffer': "
              "expected a size such as 65536, 64KiB or 1MiB");
  free(text);
  assert_int_not_equal(access(path, F_OK), 0);    /* tracing is off */
  free(path);
  assert_int_equal(rmdir(dir), 0);
  free(dir);
}

static void test_stderr_bad_path(void **state)
{
  char *dir = make_dir();
  char *path = join(dir, "no-such-dir/t.json");
  char message[1024];
  speaker sp = { path, "sync", NULL, 1 };
  pid_t pid;
  char *text;

  (void)state;
  text = child_stderr(child_speak, &sp, &pid);
  snprintf(message, sizeof message, "TRACEWRITER_OUT: cannot open '%s': %s",
           path, tw_strerror(-ENOENT));
  assert_line(text, message);
  free(text);
  free(path);
  assert_int_equal(rmdir(dir), 0);
  free(dir);
}

/* TRACEWRITER_QUIET: any non-empty value but "0" silences the line. */
static void test_stderr_quiet(void **state)
{
  static const struct { const char *quiet; int silent; } cases[] = {
    { "1", 1 }, { "yes", 1 }, { "00", 1 }, { " ", 1 },
    { "0", 0 }, { "", 0 }, { NULL, 0 },
  };
  char *dir = make_dir();
  char *path = join(dir, "never.json");

  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    speaker sp = { path, "bogus", cases[i].quiet, 1 };
    pid_t pid;
    char *text = child_stderr(child_speak, &sp, &pid);

    if (cases[i].silent && text[0] != '\0')
      fail_msg("TRACEWRITER_QUIET=\"%s\": stderr \"%s\"", cases[i].quiet,
               text);
    if (!cases[i].silent)
      assert_line(text, "TRACEWRITER_OPTIONS: unknown option 'bogus'");
    free(text);
  }
  free(path);
  assert_int_equal(rmdir(dir), 0);
  free(dir);
}

/* A RANK that is not a rank: one line on stderr, and a trace with no
 * rank in it (tu_check_file admits no process_labels record). */
typedef struct ranked {
  speaker sp;
  const char *rank;
} ranked;

static int child_ranked(void *arg)
{
  const ranked *r = arg;

  set_env("RANK", r->rank);
  return child_speak((void *)&r->sp);
}

static void test_stderr_bad_rank(void **state)
{
  static const char *const bad[] = { "abc", "-3", "2147483647", "1x" };
  char *dir = make_dir();
  char *path = join(dir, "ranked.json");

  (void)state;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ranked r = { { path, NULL, NULL, 0 }, bad[i] };
    char want[256];
    pid_t pid;
    char *text = child_stderr(child_ranked, &r, &pid);

    snprintf(want, sizeof want, "tracewriter: RANK=%s is not a rank (a "
             "whole number from 0): the trace names no rank\n", bad[i]);
    if (strcmp(text, want) != 0)
      fail_msg("RANK=%s: stderr \"%s\", expected \"%s\"", bad[i], text,
               want);
    free(text);
    check_global_trace(path, 0, pid, 0);
  }
  tu_cleanup(path);
  assert_int_equal(rmdir(dir), 0);
  free(dir);
}

/* Nothing on stderr when tracing is simply off, or on. */
static void test_stderr_silent_otherwise(void **state)
{
  char *dir = make_dir();
  char *path = join(dir, "ok.json");
  speaker off = { NULL, "bogus", NULL, 0 };
  speaker empty = { "", "bogus", NULL, 0 };
  speaker on = { path, "buffer = 4KiB , sync=off", NULL, 0 };
  pid_t pid;
  char *text;

  (void)state;
  text = child_stderr(child_speak, &off, &pid);
  assert_string_equal(text, "");
  free(text);
  text = child_stderr(child_speak, &empty, &pid);
  assert_string_equal(text, "");
  free(text);
  text = child_stderr(child_speak, &on, &pid);
  assert_string_equal(text, "");
  free(text);
  check_global_trace(path, 0, pid, 0);             /* committed at exit */
  tu_cleanup(path);
  assert_int_equal(rmdir(dir), 0);
  free(dir);
}

/* A child after fork says it again only if it tries again (a "%p" path)
 * and fails; the second and later calls of a process say nothing. */
static int child_fork_speak(void *arg)
{
  const char *out = arg;
  int status;
  pid_t pid;

  setenv("TRACEWRITER_OUT", out, 1);
  unsetenv("TRACEWRITER_OPTIONS");
  unsetenv("TRACEWRITER_QUIET");
  if (tw_global() != NULL)
    return 1;
  fflush(NULL);
  pid = fork();
  if (pid < 0)
    return 2;
  if (pid == 0)
    exit(tw_global() == NULL && tw_global() == NULL &&
         tw_global_status(NULL) == (strstr(out, "%p") ? -ENOENT : 0) ? 0 : 1);
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0)
    return 3;
  if (tw_global() != NULL || tw_global_status(NULL) != -ENOENT)
    return 4;
  return 0;
}

static void test_stderr_after_fork(void **state)
{
  char *dir = make_dir();
  char *per_pid = join(dir, "no-such-dir/f-%p.json");
  char *plain = join(dir, "no-such-dir/f.json");
  char message[2048], path[1024], *text, *second;
  long gpid;
  pid_t pid;

  (void)state;
  /* "%p": the child's line, then the grandchild's, with its own pid. */
  text = child_stderr(child_fork_speak, per_pid, &pid);
  snprintf(path, sizeof path, "%s/no-such-dir/f-%ld.json", dir, (long)pid);
  snprintf(message, sizeof message, "TRACEWRITER_OUT: cannot open '%s': %s",
           path, tw_strerror(-ENOENT));
  second = strchr(text, '\n');
  assert_non_null(second);
  second++;
  assert_non_null(strstr(second, "/f-"));
  assert_int_equal(sscanf(strstr(second, "/f-"), "/f-%ld.json'", &gpid), 1);
  assert_true(gpid > 0 && gpid != (long)pid);
  second[-1] = '\0';
  {
    char first[4096];
    snprintf(first, sizeof first, "%s\n", text);
    assert_line(first, message);
  }
  snprintf(path, sizeof path, "%s/no-such-dir/f-%ld.json", dir, gpid);
  snprintf(message, sizeof message, "TRACEWRITER_OUT: cannot open '%s': %s",
           path, tw_strerror(-ENOENT));
  assert_line(second, message);
  free(text);

  /* No "%p": the grandchild does not try, and says nothing. */
  text = child_stderr(child_fork_speak, plain, &pid);
  snprintf(message, sizeof message, "TRACEWRITER_OUT: cannot open '%s': %s",
           plain, tw_strerror(-ENOENT));
  assert_line(text, message);
  free(text);
  free(per_pid);
  free(plain);
  assert_int_equal(rmdir(dir), 0);
  free(dir);
}

/* ---------------------------------------------------- threads and fork */

typedef struct racer {
  pthread_barrier_t *start;
  tw_writer *got;
  int failed;
} racer;

static void *racer_main(void *arg)
{
  racer *r = arg;
  pthread_barrier_wait(r->start);
  r->got = tw_global();
  r->failed = r->got ? 0 : 1;
  return NULL;
}

/* The first calls race from several threads: one writer for all. */
static int child_threads(void *arg)
{
  enum { T = 6 };
  const scenario *sc = arg;
  pthread_barrier_t start;
  pthread_t th[T];
  racer r[T];

  setenv("TRACEWRITER_OUT", sc->out, 1);
  unsetenv("TRACEWRITER_OPTIONS");
  if (pthread_barrier_init(&start, NULL, T) != 0)
    return 1;
  for (int t = 0; t < T; t++) {
    memset(&r[t], 0, sizeof r[t]);
    r[t].start = &start;
    if (pthread_create(&th[t], NULL, racer_main, &r[t]) != 0)
      return 2;
  }
  for (int t = 0; t < T; t++)
    if (pthread_join(th[t], NULL) != 0)
      return 3;
  pthread_barrier_destroy(&start);
  for (int t = 0; t < T; t++)
    if (r[t].failed || r[t].got != r[0].got)
      return 4;
  if (tw_global() != r[0].got)
    return 5;
  if (emit_n(tw_global(), sc->n) != 0)
    return 6;
  return 0;
}

static void test_first_call_race(void **state)
{
  char *dir = make_dir();
  char *pattern = join(dir, "race-%p.json");
  scenario sc = { pattern, NULL, 20 };
  pid_t pid;
  char *path;

  (void)state;
  pid = run_child(child_threads, &sc, 1);
  path = pid_path(dir, "race-", pid, ".json");
  check_global_trace(path, 0, pid, sc.n);
  tu_cleanup(path);
  free(pattern);
  assert_int_equal(rmdir(dir), 0);
  free(dir);
}

/* A process with a global writer forks: the grandchild must never write
 * into its parent's file, not even at its exit commit.  With %p in the
 * path, its tw_global() opens a file of its own; without, it is NULL. */
static int grandchild(int per_pid, tw_writer *parents)
{
  tw_writer *w = tw_global();

  if (!per_pid)
    return w == NULL ? 0 : 10;
  /* (The parent's writer is freed by then: the new one may reuse its
   * address, so only the files tell them apart.) */
  (void)parents;
  if (!w)
    return 11;
  if (tw_global() != w)
    return 12;
  /* Two events: the second takes the path of a thread's later events,
   * which must not keep the text of the parent's pid and tid. */
  if (tw_complete(w, "global", "grandchild", 1, 1, NULL, 0) != 0 ||
      tw_complete(w, "global", "grandchild", 2, 1, NULL, 0) != 0)
    return 13;
  return 0;                                     /* exit(): atexit commits */
}

static int child_fork(void *arg)
{
  const scenario *sc = arg;
  tw_writer *w;
  int status;
  pid_t pid;

  setenv("TRACEWRITER_OUT", sc->out, 1);
  unsetenv("TRACEWRITER_OPTIONS");
  if (!(w = tw_global()))
    return 1;
  if (emit_n(w, sc->n / 2) != 0)
    return 2;
  if (tw_flush(w) != 0)
    return 3;
  fflush(NULL);
  pid = fork();
  if (pid < 0)
    return 4;
  if (pid == 0)
    exit(grandchild(strstr(sc->out, "%p") != NULL, w));
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0)
    return 5;
  /* Go on: the rest of the events, emit_n's numbering continued. */
  {
    const tu_family f = events();
    if (tu_emit_range(&f, w, sc->n / 2, sc->n) != 0)
      return 6;
  }
  return 0;
}

static void test_fork_after_global(void **state)
{
  char *dir = make_dir();
  char *pattern = join(dir, "fork-%p.json");
  scenario sc = { pattern, NULL, 40 };
  pid_t pid;
  char *path;

  (void)state;
  pid = run_child(child_fork, &sc, 1);
  path = pid_path(dir, "fork-", pid, ".json");
  check_global_trace(path, 0, pid, sc.n);
  tu_cleanup(path);
  free(pattern);
  /* The grandchild's own file: its pid, its two events. */
  {
    DIR *dp = opendir(dir);
    struct dirent *de;
    int files = 0;
    assert_non_null(dp);
    while ((de = readdir(dp)) != NULL) {
      char *full;
      jc_doc *d;
      jc_val ev, e;
      long gpid;
      if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
        continue;
      files++;
      assert_int_equal(sscanf(de->d_name, "fork-%ld.json", &gpid), 1);
      assert_true(gpid != (long)pid);
      full = join(dir, de->d_name);
      tu_assert_tail(full, 0);
      d = tu_load(full);
      ev = tu_events(d);
      assert_int_equal(jc_len(d, ev), 3);
      e = jc_first(d, ev);
      tu_assert_str(d, e, "name", "process_name");
      tu_assert_int(d, e, "pid", gpid);
      for (int k = 0; k < 2; k++) {
        e = jc_next(d, e);
        tu_assert_str(d, e, "name", "grandchild");
        tu_assert_int(d, e, "pid", gpid);
        tu_assert_int(d, e, "tid", gpid);
      }
      jc_free(d);
      tu_cleanup(full);
    }
    closedir(dp);
    assert_int_equal(files, 1);
  }
  assert_int_equal(rmdir(dir), 0);
  free(dir);
}

/* Without %p the grandchild's tw_global() is NULL: tracing is off. */
static void test_fork_without_pid(void **state)
{
  char *dir = make_dir();
  char *out = join(dir, "plain.json");
  scenario sc = { out, NULL, 40 };
  pid_t pid;

  (void)state;
  pid = run_child(child_fork, &sc, 1);
  check_global_trace(out, 0, pid, sc.n);
  tu_cleanup(out);
  assert_int_equal(rmdir(dir), 0);
  free(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_unset),
    cmocka_unit_test(test_pid_path_atexit),
    cmocka_unit_test(test_percent_percent),
    cmocka_unit_test(test_time_path),
    cmocka_unit_test(test_plain_path),
    cmocka_unit_test(test_options_applied),
    cmocka_unit_test(test_bad_options),
    cmocka_unit_test(test_unwritable_path),
    cmocka_unit_test(test_stderr_bad_options),
    cmocka_unit_test(test_stderr_bad_path),
    cmocka_unit_test(test_stderr_quiet),
    cmocka_unit_test(test_stderr_silent_otherwise),
    cmocka_unit_test(test_stderr_bad_rank),
    cmocka_unit_test(test_stdout_appended_at_exit),
    cmocka_unit_test(test_stderr_after_fork),
    cmocka_unit_test(test_first_call_race),
    cmocka_unit_test(test_fork_after_global),
    cmocka_unit_test(test_fork_without_pid),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
