/* clock.c -- time, process and thread ids, fork generation
 *
 * getpid() and gettid() are system calls; an event needs both, so they are
 * cached: the pid in a global refreshed in the child after fork, the tid in
 * a thread-local variable.
 */
#include "internal.h"

#include <errno.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
int64_t tw__cached_pid;                  /* 0 until first asked */
static unsigned fork_gen;                /* bumped in each child */
TW__THREAD int64_t tw__cached_tid;       /* 0 until first asked */

/* Runs in the child right after fork(), in the only thread it has. */
static void after_fork_in_child(void)
{
  __atomic_store_n(&tw__cached_pid, (int64_t)getpid(), __ATOMIC_RELAXED);
  __atomic_add_fetch(&fork_gen, 1, __ATOMIC_RELAXED);
  tw__cached_tid = 0;
}

static void install_atfork(void)
{
  (void)pthread_atfork(NULL, NULL, after_fork_in_child);
  __atomic_store_n(&tw__cached_pid, (int64_t)getpid(), __ATOMIC_RELAXED);
}

/* tw__pid's first call: installs the fork handler, which caches the pid. */
int64_t tw__pid_slow(void)
{
  pthread_once(&atfork_once, install_atfork);
  return __atomic_load_n(&tw__cached_pid, __ATOMIC_RELAXED);
}

/* tw__tid's first call in a thread (or in a child after fork). */
int64_t tw__tid_slow(void)
{
  tw__cached_tid = (int64_t)syscall(SYS_gettid);
  return tw__cached_tid;
}

unsigned tw__fork_generation(void)
{
  /* The handler is installed before the first writer exists (tw_open asks
   * for the pid), so later calls only read the counter. */
  return __atomic_load_n(&fork_gen, __ATOMIC_RELAXED);
}

void tw__install_fork_handler(void)
{
  pthread_once(&atfork_once, install_atfork);
}

const char *tw__program_name(void)
{
  return program_invocation_short_name && *program_invocation_short_name
         ? program_invocation_short_name : "tracewriter";
}

uint64_t tw_now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
