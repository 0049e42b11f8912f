/* test_contract.c -- the concurrency contract is checked at run time
 *
 * With TW_DEBUG (configure --enable-debug, and every --enable-sanitizers
 * build), a function that src/writer.h says needs the writer's lock or
 * the commit token asserts that its caller holds it, and rotation asserts
 * its precondition (no commit under way but the caller's own).  Each test
 * breaks one rule in a child and requires the child to abort with the
 * library's message naming the rule; and keeps it, and requires no
 * abort.  Without TW_DEBUG the checks are compiled out: the test skips.
 *
 * Linked with the library's internals (libtw.la).
 */
#include "config.h"

#include "testutil.h"
#include "writer.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef TW_DEBUG

/* What a child does to w. */
typedef void (*deed)(tw_writer *w);

/* Run fn(w) in a child.  Returns 1 if it aborted saying that the
 * contract fails at want (a text of the check), 0 if it exited 0; fails
 * the test otherwise. */
static int aborts(tw_writer *w, deed fn, const char *want)
{
  char out[1024];
  size_t n = 0;
  ssize_t k;
  int p[2], status;
  pid_t pid;

  assert_int_equal(pipe(p), 0);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    dup2(p[1], 2);
    close(p[0]);
    fn(w);
    _exit(0);
  }
  close(p[1]);
  while (n < sizeof out - 1 && (k = read(p[0], out + n, sizeof out - 1 - n)) > 0)
    n += (size_t)k;
  out[n] = '\0';
  close(p[0]);
  assert_int_equal(waitpid(pid, &status, 0), pid);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && n == 0)
    return 0;
  if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT ||
      !strstr(out, "the concurrency contract fails: ") || !strstr(out, want))
    fail_msg("the child neither exited 0 nor aborted on %s (status %#x): %s",
             want, status, out);
  return 1;
}

static tw_writer *open_tmp(char **path)
{
  tw_options o;
  int rc;
  tw_writer *w;

  tw_options_init(&o);
  *path = tu_tmppath(".json");
  w = tw_open(*path, &o, &rc);
  assert_non_null(w);
  return w;
}

static void close_tmp(tw_writer *w, char *path)
{
  jc_doc *d;

  assert_int_equal(tw_close(w), 0);
  d = tu_load(path);                   /* still a valid trace */
  jc_free(d);
  tu_cleanup(path);
}

static void count_unlocked(tw_writer *w)
{
  uint64_t e, b;
  tw__stages_count(w, &e, &b);
}

static void count_locked(tw_writer *w)
{
  uint64_t e, b;
  tw__writer_lock(w);
  tw__stages_count(w, &e, &b);
  tw__writer_unlock(w);
}

/* A function that needs the lock. */
static void test_lock(void **state)
{
  char *path;
  tw_writer *w = open_tmp(&path);
  (void)state;

  assert_int_equal(aborts(w, count_unlocked, "tw__lock_held(w)"), 1);
  assert_int_equal(aborts(w, count_locked, "tw__lock_held(w)"), 0);
  close_tmp(w, path);
}

static void out_bytes_bare(tw_writer *w)
{
  tw__out_bytes_update(w);
}

static void out_bytes_token(tw_writer *w)
{
  sigset_t mask;

  tw__token_take(w, &mask);
  tw__out_bytes_update(w);
  tw__token_give(w, &mask);
}

/* A function that needs the lock or the token. */
static void test_token(void **state)
{
  char *path;
  tw_writer *w = open_tmp(&path);
  (void)state;

  assert_int_equal(aborts(w, out_bytes_bare, "tw__token_held(w)"), 1);
  assert_int_equal(aborts(w, out_bytes_token, "tw__token_held(w)"), 0);
  close_tmp(w, path);
}

/* Rotation while another thread's commit is under way. */
static void rotate_beside_a_commit(tw_writer *w)
{
  tw__writer_lock(w);
  w->committing = (int)tw__tid() + 1;
  (void)tw__document_rotate_locked(w);
}

static void rotate_unlocked(tw_writer *w)
{
  (void)tw__document_rotate_locked(w);
}

static void test_rotation_precondition(void **state)
{
  char *path;
  tw_writer *w = open_tmp(&path);
  (void)state;

  assert_int_equal(aborts(w, rotate_beside_a_commit,
                          "tw__no_other_commit(w)"), 1);
  assert_int_equal(aborts(w, rotate_unlocked, "tw__lock_held(w)"), 1);
  close_tmp(w, path);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_lock),
    cmocka_unit_test(test_token),
    cmocka_unit_test(test_rotation_precondition),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

#else /* !TW_DEBUG */

int main(void)
{
  printf("SKIP: built without TW_DEBUG (configure --enable-debug)\n");
  return 77;
}

#endif
