/* test_one_writer.c -- one writer per file, exactly
 *
 * A second writer opening the path of a rotating writer in a loop gets
 * TW_EBUSY every time, on every sink: never a finished file, which it
 * would cut (every event of the first writer must be in its files exactly
 * once, read back through the strict checker).  A child forked while a
 * writer is open, or while another thread opens and closes one, which
 * never touches it, does not keep the file locked after the parent's
 * tw_close: the parent, and another process, open it again at once.  And
 * fork does not wait for a tw_open that waits for a FIFO's reader: the
 * reader may be the child.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* fork, pipe2 under -std=c99 */
#endif
#include "numbered.h"
#include "gunzip.h"
#include "rotate.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Written by children too: their pids and tids are not checked. */
static const tu_family F = { "one", "one-writer", NULL, -1, -1, -1 };

/* The sinks, as options, and whether their files are gzip. */
static const struct {
  const char *options;
  int gz;
} sinks[] = {
  { "sink=file", 0 },
  { "sink=mmap,chunk=4KiB", 0 },
  { "sink=gzip", 1 },
  { "sink=file,commit=background,formatter=committer", 0 },
};
#define NSINKS (sizeof sinks / sizeof sinks[0])

static tw_writer *open_opts(const char *path, const char *options, int *rc)
{
  char err[256];
  tw_options o;

  tw_options_init(&o);
  o.process_name = F.pname;
  if (tw_options_parse(&o, options, err, sizeof err) != 0)
    fail_msg("%s: %s", options, err);
  return tw_open(path, &o, rc);
}

/* A byte through a pipe: the two processes' only way to wait for each
 * other. */
static void put_byte(int fd, char c)
{
  while (write(fd, &c, 1) != 1)
    if (errno != EINTR)
      _exit(70);
}

static char get_byte(int fd)
{
  char c = 0;
  ssize_t n;

  while ((n = read(fd, &c, 1)) < 0 && errno == EINTR)
    continue;
  return n == 1 ? c : 0;
}

/* ------------------------------------------- a second writer, rotation */

/* What the rotating child reports when it is done. */
typedef struct report {
  int events;
  unsigned long rotations;
  int rc;                       /* the first failure, or 0 */
} report;

/* The child: the first writer, rotating fast, until it has rotated
 * `rotations` times; then it says so and closes once the test has stopped
 * opening.  Reports through `out`. */
static void rotating_child(const char *path, const char *options,
                           unsigned long rotations, int to_test,
                           int from_test)
{
  report r = { 0, 0, 0 };
  tw_stats st;
  tw_writer *w = open_opts(path, options, &r.rc);

  put_byte(to_test, w ? 'o' : 'x');
  if (!w)
    _exit(71);
  while (r.rc == 0) {
    for (int k = 0; k < 8 && r.rc == 0; k++)
      r.rc = tu_emit(&F, w, r.events++);
    if (r.rc == 0)
      r.rc = tw_flush(w);
    if (r.rc == 0 && (r.rc = tw_get_stats(w, &st)) == 0 &&
        st.rotations >= rotations)
      break;
  }
  put_byte(to_test, 'd');                 /* done: stop opening */
  (void)get_byte(from_test);              /* the test stopped */
  if (tw_get_stats(w, &st) == 0)
    r.rotations = st.rotations;
  if (tw_close(w) != 0 && r.rc == 0)
    r.rc = -EIO;
  if (write(to_test, &r, sizeof r) != (ssize_t)sizeof r)
    _exit(72);
  _exit(0);
}

/* The path of file n of the rotation at path (0: the live one). */
static void file_of(const char *path, unsigned long n, char *out, size_t size)
{
  if (n == 0)
    snprintf(out, size, "%s", path);
  else
    assert_int_equal(tw__rotated_name(out, size, path, n), 0);
}

/* Files 1..rotations, then the live one, hold events 0..events-1 of F in
 * order, each exactly once, each file a strict trace of its own that
 * begins with the process name. */
static void check_rotated(const char *path, int gz, const report *r)
{
  char name[512];
  int next = 0;

  for (unsigned long n = 1; n <= r->rotations + 1; n++) {
    jc_doc *d;
    jc_val ev;

    file_of(path, n <= r->rotations ? n : 0, name, sizeof name);
    d = tu_load_trace_file(name, gz, 0);
    ev = jc_first(d, tu_events(d));
    tu_check_pname(&F, d, ev);
    for (ev = jc_next(d, ev); ev >= 0; ev = jc_next(d, ev)) {
      if (jc_streq(d, jc_get(d, ev, "ph"), "M"))
        continue;
      if (next >= r->events)
        fail_msg("%s: more events than the %d written", name, r->events);
      tu_check_event(&F, d, ev, next++);
    }
    jc_free(d);
    unlink(name);
  }
  if (next != r->events)
    fail_msg("%s: %d of the %d events written are in the files", path, next,
             r->events);
}

static void second_writer_during_rotation(const char *options, int gz)
{
  char *dir = tu_tmppath("");
  char path[512], first[512];
  unsigned long rotations = tu_scaled(4000);
  unsigned long tries = 0, opened = 0;
  int to_test[2], from_test[2], status, rc = 0, other_rc = 0;
  report r;
  pid_t pid;

  /* A directory of its own: the rotated files are named beside the path. */
  assert_int_equal(unlink(dir), 0);
  assert_int_equal(mkdir(dir, 0700), 0);
  snprintf(path, sizeof path, "%s/r.json%s", dir, gz ? ".gz" : "");
  snprintf(first, sizeof first, "%s,rotate=4KiB,buffer=4KiB,keep=all",
           options);
  assert_int_equal(pipe(to_test), 0);
  assert_int_equal(pipe(from_test), 0);
  fflush(NULL);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0)
    rotating_child(path, first, rotations, to_test[1], from_test[0]);
  assert_int_equal(get_byte(to_test[0]), 'o');
  /* The second writer, in a loop, until the first has rotated enough. */
  for (;;) {
    struct pollfd p = { to_test[0], POLLIN, 0 };
    tw_writer *w;

    if (poll(&p, 1, 0) == 1)
      break;
    tries++;
    if ((w = open_opts(path, options, &rc)) != NULL) {
      opened++;
      (void)tw_close(w);
    } else if (rc != TW_EBUSY && other_rc == 0) {
      other_rc = rc;
    }
  }
  assert_int_equal(get_byte(to_test[0]), 'd');
  put_byte(from_test[1], 's');
  assert_int_equal(read(to_test[0], &r, sizeof r), (ssize_t)sizeof r);
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  print_message("  %s: %lu rotations, %d events; %lu opens tried beside "
                "them\n", options, r.rotations, r.events, tries);
  if (r.rc != 0)
    fail_msg("%s: the first writer failed: %s", options, tw_strerror(r.rc));
  if (opened)
    fail_msg("%s: the second writer opened %lu of %lu times while the "
             "first wrote", options, opened, tries);
  if (other_rc)
    fail_msg("%s: the second writer got %s, not TW_EBUSY", options,
             tw_err_name(other_rc));
  assert_true(r.rotations >= rotations);
  check_rotated(path, gz, &r);
  close(to_test[0]);
  close(to_test[1]);
  close(from_test[0]);
  close(from_test[1]);
  assert_int_equal(rmdir(dir), 0);
  free(dir);
}

static void test_second_writer_during_rotation(void **state)
{
  (void)state;
  for (size_t k = 0; k < NSINKS; k++)
    second_writer_during_rotation(sinks[k].options, sinks[k].gz);
}

/* ---------------------------------------------------------------- fork */

/* An emitting thread stays alive until the process has forked (the
 * barrier), even when its events are all written before: a child copies
 * only threads that run, and TSan reports the others as leaked. */
typedef struct emitter {
  tw_writer *w;
  int from, to;
  int rc;
  pthread_barrier_t *forked;
} emitter;

static void *emitter_main(void *arg)
{
  emitter *e = arg;

  e->rc = tu_emit_range(&F, e->w, e->from, e->to);
  pthread_barrier_wait(e->forked);
  return NULL;
}

/* Open path in a child process: its tw_open's return, 0 for a writer
 * (which writes events 0..n-1 and closes), through the exit status. */
static int open_in_other_process(const char *path, const char *options,
                                 int n)
{
  int status, rc = 0;
  pid_t pid;

  fflush(NULL);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    tw_writer *w = open_opts(path, options, &rc);
    if (!w)
      _exit(rc == TW_EBUSY ? 2 : 3);
    _exit(tu_emit_range(&F, w, 0, n) == 0 && tw_close(w) == 0 ? 0 : 4);
  }
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  return WEXITSTATUS(status);
}

/* Children forked while the threads emit: each fork lands at another
 * point of their work (a commit, a rotation's new file, a window mapped). */
#define FORKS 16

/* Fork a child that never touches a writer: it says it runs (fork has
 * returned in it, so the library let go of the file), then waits until
 * the test closes hold[1]. */
static pid_t fork_holder(int hold[2], int started[2])
{
  pid_t pid = fork();

  assert_true(pid >= 0);
  if (pid == 0) {
    close(hold[1]);
    put_byte(started[1], 'r');
    (void)get_byte(hold[0]);
    _exit(0);
  }
  assert_int_equal(get_byte(started[0]), 'r');
  return pid;
}

/* With the FORKS children alive, path is free: a writer opens it here,
 * and in another process, each file read back; then the children go
 * (hold_w closed) and must end well.  after: what came before, for the
 * messages. */
static void check_path_free(const char *path, const char *options, int gz,
                            int hold_w, const pid_t *child,
                            const char *after)
{
  int rc = 0, status;
  tw_writer *w = open_opts(path, options, &rc);

  if (!w)
    fail_msg("%s: open again after %s, with %d forked children alive: %s",
             options, after, FORKS, tw_err_name(rc));
  assert_int_equal(tu_emit_range(&F, w, 0, 5), 0);
  assert_int_equal(tw_close(w), 0);
  tu_check_file(&F, path, gz, 0, 5);
  if ((rc = open_in_other_process(path, options, 7)) != 0)
    fail_msg("%s: another process could not open it (%s)", options,
             rc == 2 ? "TW_EBUSY" : "failed");
  tu_check_file(&F, path, gz, 0, 7);
  close(hold_w);                          /* the children may go */
  for (int c = 0; c < FORKS; c++) {
    assert_int_equal(waitpid(child[c], &status, 0), child[c]);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      fail_msg("%s: forked child %d ended with status %#x", options, c,
               (unsigned)status);
  }
}

static void fork_keeps_no_lock(const char *options, int gz)
{
  char *path = tu_tmppath(gz ? ".json.gz" : ".json");
  emitter e[2];
  pthread_t t[2];
  pthread_barrier_t forked;
  int hold[2], started[2], rc = 0;
  tw_writer *w;
  pid_t child[FORKS];
  int n = (int)tu_scaled(20000);

  assert_non_null(w = open_opts(path, options, &rc));
  /* Two threads emitting while the process forks. */
  assert_int_equal(pthread_barrier_init(&forked, NULL, 3), 0);
  for (int k = 0; k < 2; k++) {
    e[k] = (emitter){ w, k * n, (k + 1) * n, 0, &forked };
    assert_int_equal(pthread_create(&t[k], NULL, emitter_main, &e[k]), 0);
  }
  assert_int_equal(pipe(hold), 0);
  assert_int_equal(pipe(started), 0);
  fflush(NULL);
  for (int c = 0; c < FORKS; c++)
    child[c] = fork_holder(hold, started);
  close(hold[0]);
  pthread_barrier_wait(&forked);
  close(started[0]);
  close(started[1]);
  for (int k = 0; k < 2; k++) {
    assert_int_equal(pthread_join(t[k], NULL), 0);
    assert_int_equal(e[k].rc, 0);
  }
  pthread_barrier_destroy(&forked);
  assert_int_equal(tw_close(w), 0);
  /* The children live on: the file is free all the same. */
  check_path_free(path, options, gz, hold[1], child, "close");
  tu_cleanup(path);
}

static void test_fork_keeps_no_lock(void **state)
{
  (void)state;
  for (size_t k = 0; k < NSINKS; k++)
    fork_keeps_no_lock(sinks[k].options, sinks[k].gz);
}

/* A thread that, each round, opens the path, writes one event and closes
 * it. */
typedef struct opener {
  const char *path, *options;
  pthread_barrier_t *go, *done;   /* each round's start and end */
  int rc;
} opener;

static void *opener_main(void *arg)
{
  opener *o = arg;

  for (int r = 0; r < FORKS; r++) {
    pthread_barrier_wait(o->go);
    if (!o->rc) {
      tw_writer *w = open_opts(o->path, o->options, &o->rc);
      if (w) {
        o->rc = tu_emit_range(&F, w, 0, 1);
        if (tw_close(w) != 0 && !o->rc)
          o->rc = -1;
      }
    }
    pthread_barrier_wait(o->done);
  }
  return NULL;
}

static uint64_t now_ns(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Children forked while another thread opens and closes the path, each
 * round's fork a little later into the round, so that forks land inside
 * tw_open and tw_close, where the file is open and locked but its writer
 * on no list (not yet, or not any more).  (The round waits for the child
 * to run: before its handler has closed the copies, any fork's child
 * holds the lock, tw_open(3).)  The spread only places the forks; what
 * is checked does not depend on where they land. */
static void fork_while_opening(const char *options, int gz)
{
  char *path = tu_tmppath(gz ? ".json.gz" : ".json");
  pthread_barrier_t go, done;
  opener op = { path, options, &go, &done, 0 };
  int hold[2], started[2], rc = 0;
  pid_t child[FORKS];
  uint64_t round_ns, t0;
  tw_writer *w;
  pthread_t t;

  /* How long a round takes here. */
  t0 = now_ns();
  assert_non_null(w = open_opts(path, options, &rc));
  assert_int_equal(tu_emit_range(&F, w, 0, 1), 0);
  assert_int_equal(tw_close(w), 0);
  round_ns = now_ns() - t0;
  assert_int_equal(pipe(hold), 0);
  assert_int_equal(pipe(started), 0);
  assert_int_equal(pthread_barrier_init(&go, NULL, 2), 0);
  assert_int_equal(pthread_barrier_init(&done, NULL, 2), 0);
  assert_int_equal(pthread_create(&t, NULL, opener_main, &op), 0);
  fflush(NULL);
  for (int c = 0; c < FORKS; c++) {
    pthread_barrier_wait(&go);
    t0 = now_ns();
    while (now_ns() - t0 < round_ns * (uint64_t)c / FORKS)
      continue;
    child[c] = fork_holder(hold, started);
    pthread_barrier_wait(&done);
  }
  assert_int_equal(pthread_join(t, NULL), 0);
  pthread_barrier_destroy(&go);
  pthread_barrier_destroy(&done);
  if (op.rc)
    fail_msg("%s: the opening thread failed: %s", options,
             tw_err_name(op.rc));
  close(hold[0]);
  close(started[0]);
  close(started[1]);
  /* The children live on: the file is free all the same. */
  check_path_free(path, options, gz, hold[1], child,
                  "rounds of open and close");
  tu_cleanup(path);
}

static void test_fork_while_opening(void **state)
{
  (void)state;
  for (size_t k = 0; k < NSINKS; k++)
    fork_while_opening(sinks[k].options, sinks[k].gz);
}

/* A thread opening a FIFO (tw_open waits in open(2) for a reader), then
 * writing events 0..2 and closing. */
typedef struct fifo_writer {
  const char *path;
  pid_t tid;                    /* atomic: the thread's, once known */
  int rc;
} fifo_writer;

static void *fifo_writer_main(void *arg)
{
  fifo_writer *f = arg;
  tw_writer *w;

  __atomic_store_n(&f->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
  if (!(w = open_opts(f->path, "sink=file", &f->rc)))
    return NULL;
  f->rc = tu_emit_range(&F, w, 0, 3);
  if (tw_close(w) != 0 && !f->rc)
    f->rc = -1;
  return NULL;
}

/* 1 once thread tid waits in openat(2), as /proc says; -1 if /proc
 * cannot tell. */
static int waits_in_open(pid_t tid)
{
  char name[64], line[64];
  FILE *f;
  long nr;
  int rc = -1;

  snprintf(name, sizeof name, "/proc/self/task/%d/syscall", (int)tid);
  if ((f = fopen(name, "r"))) {
    if (fgets(line, sizeof line, f) && sscanf(line, "%ld", &nr) == 1)
      rc = nr == SYS_openat;
    fclose(f);
  }
  return rc;
}

/* The reader of the FIFO is the child of a fork made while the writing
 * thread waits for a reader inside tw_open: the fork must not wait for
 * that tw_open (it would wait for ever).  The child copies what it reads
 * to a file, read back through the strict checker.  (A fork that waited
 * would hang here: alarm turns that into a failure.) */
static void test_fork_while_fifo_waits(void **state)
{
  char *dir = tu_tmpdir("one-fifo"), fifo[512], out[512];
  fifo_writer fw = { fifo, 0, 0 };
  pthread_t t;
  pid_t child, tid;
  int status, proc;

  (void)state;
  snprintf(fifo, sizeof fifo, "%s/fifo", dir);
  snprintf(out, sizeof out, "%s/read.json", dir);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  assert_int_equal(pthread_create(&t, NULL, fifo_writer_main, &fw), 0);
  while (!(tid = __atomic_load_n(&fw.tid, __ATOMIC_ACQUIRE)))
    continue;
  while ((proc = waits_in_open(tid)) == 0)
    continue;
  if (proc < 0) {
    /* No /proc: open the FIFO for the thread, and say so. */
    int fd = open(fifo, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    close(fd);
    skip();
  }
  alarm(120);
  fflush(NULL);
  child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    char buf[4096];
    ssize_t n;
    int in = open(fifo, O_RDONLY), o = open(out, O_WRONLY | O_CREAT, 0600);
    if (in < 0 || o < 0)
      _exit(3);
    while ((n = read(in, buf, sizeof buf)) > 0)
      if (write(o, buf, (size_t)n) != n)
        _exit(4);
    _exit(n == 0 ? 0 : 5);
  }
  assert_int_equal(pthread_join(t, NULL), 0);
  if (fw.rc)
    fail_msg("the FIFO's writer failed: %s", tw_err_name(fw.rc));
  assert_int_equal(waitpid(child, &status, 0), child);
  alarm(0);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  tu_check_file(&F, out, 0, 0, 3);
  unlink(out);
  unlink(fifo);
  rmdir(dir);
  free(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_second_writer_during_rotation),
    cmocka_unit_test(test_fork_keeps_no_lock),
    cmocka_unit_test(test_fork_while_opening),
    cmocka_unit_test(test_fork_while_fifo_waits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
