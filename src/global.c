/* global.c -- tw_global(): the process-wide writer from the environment */
#include "internal.h"
#include "fdio.h"
#include "writer.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static tw_writer *global_writer;   /* this process's writer, or NULL */
/* 0 until the first call has made global_writer; then 1 + the fork
 * generation global_writer is for.  Stored with release after the
 * writer, so the fast path needs only this acquire load. */
static unsigned global_ready;
static int global_reopening;       /* a thread is reopening after fork */
static int global_per_pid;         /* TRACEWRITER_OUT has %p */
static int global_error;           /* why global_writer is NULL, or 0 */
static char global_message[PATH_MAX + 256]; /* why, in words */

static void commit_at_exit(void)
{
  /* Commit (and a stream's tail), never free: other threads may still
   * hold the pointer. */
  (void)tw__commit_at_exit(global_writer);
}

/* Expand "%p" (pid), "%t" (now, UTC: 20261122T071500Z) and "%%" in
 * pattern into out[size].  Returns 0 or -ENAMETOOLONG. */
static int expand_path(const char *pattern, char *out, size_t size)
{
  time_t now = time(NULL);
  size_t n = 0;
  struct tm utc;

  gmtime_r(&now, &utc);
  for (const char *p = pattern; *p; p++) {
    char num[32];
    const char *piece = p;
    size_t len = 1;

    if (p[0] == '%' && p[1] == 'p') {
      snprintf(num, sizeof num, "%lld", (long long)tw__pid());
      piece = num;
      len = strlen(num);
      p++;
    } else if (p[0] == '%' && p[1] == 't') {
      len = strftime(num, sizeof num, "%Y%m%dT%H%M%SZ", &utc);
      piece = num;
      p++;
    } else if (p[0] == '%' && p[1] == '%') {
      p++;
    }
    if (n + len >= size)
      return -ENAMETOOLONG;
    memcpy(out + n, piece, len);
    n += len;
  }
  out[n] = '\0';
  return 0;
}

/* 1 if pattern has a "%p" that expand_path replaces. */
static int has_pid(const char *pattern)
{
  for (const char *p = pattern; *p; p++)
    if (p[0] == '%' && (p[1] == 'p' || p[1] == '%')) {
      if (p[1] == 'p')
        return 1;
      p++;
    }
  return 0;
}

/* Say what is wrong with the environment on stderr, in one line
 * "tracewriter: TEXT", with one write(2) -- no stdio, whose locks and
 * buffers are the program's -- unless TRACEWRITER_QUIET is set (and not
 * "0").  The library's only output, and only the global writer's: a
 * silent typo in TRACEWRITER_OPTIONS would leave a user with no trace and
 * no clue (glibc's MALLOC_ and the sanitizers' _OPTIONS speak up the same
 * way). */
static void say(const char *text)
{
  const char *quiet = getenv("TRACEWRITER_QUIET");
  char line[sizeof global_message + 64];
  size_t len, done = 0;
  int n;

  if (quiet && *quiet && strcmp(quiet, "0") != 0)
    return;
  n = snprintf(line, sizeof line, "tracewriter: %s\n", text);
  if (n < 0)
    return;
  len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
  line[len - 1] = '\n';                  /* cut, still one whole line */
  while (done < len) {
    ssize_t w = write(STDERR_FILENO, line + done, len - done);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return;                             /* no stderr: nothing to do */
    done += (size_t)w;
  }
}

/* Open the writer for pattern (TRACEWRITER_OUT) and TRACEWRITER_OPTIONS.
 * Returns it, or NULL with *rc and global_message saying why. */
static tw_writer *open_writer(const char *pattern, int *rc)
{
  const char *options = getenv("TRACEWRITER_OPTIONS"), *rank;
  char path[PATH_MAX];
  char err[256];
  tw_options o;
  tw_writer *w;

  if ((*rc = expand_path(pattern, path, sizeof path)) != 0) {
    snprintf(global_message, sizeof global_message,
             "TRACEWRITER_OUT: path too long");
    return NULL;
  }
  tw_options_init(&o);
  if ((*rc = tw_options_parse(&o, options, err, sizeof err)) != 0) {
    snprintf(global_message, sizeof global_message,
             "TRACEWRITER_OPTIONS: %s", err);
    return NULL;
  }
  /* A RANK that is not a rank: traced all the same, with no rank. */
  if (o.rank == TW_RANK_AUTO && (rank = getenv("RANK")) && *rank &&
      tw__env_number("RANK") < 0) {
    char text[160];
    snprintf(text, sizeof text, "RANK=%.40s is not a rank (a whole number "
             "from 0): the trace names no rank", rank);
    say(text);
  }
  if (!(w = tw_open(path, &o, rc))) {
    long holder = *rc == TW_EBUSY ? tw__path_lock_holder(path) : 0;
    if (*rc == TW_EBUSY && holder)
      snprintf(global_message, sizeof global_message,
               "TRACEWRITER_OUT: '%s' is being written by process %ld: "
               "put %%p in the path for a file per process", path, holder);
    else if (*rc == TW_EBUSY)
      snprintf(global_message, sizeof global_message,
               "TRACEWRITER_OUT: '%s' is being written by another writer: "
               "put %%p in the path for a file per process", path);
    else
      snprintf(global_message, sizeof global_message,
               "TRACEWRITER_OUT: cannot open '%s': %s", path,
               tw_strerror(*rc));
  }
  return w;
}

/* Open the writer the environment asks for into global_writer, or say
 * why not in global_error and global_message, and on stderr.  Then mark
 * it ready for this fork generation. */
static void global_open(void)
{
  const char *pattern = getenv("TRACEWRITER_OUT");
  tw_writer *w = NULL;
  int rc;

  if (pattern && *pattern) {
    global_per_pid = has_pid(pattern);
    if (!(w = open_writer(pattern, &rc))) {
      char text[sizeof global_message + 24];
      global_error = rc;
      snprintf(text, sizeof text, "%s (tracing is off)", global_message);
      say(text);
    }
  }
  __atomic_store_n(&global_writer, w, __ATOMIC_RELEASE);
  __atomic_store_n(&global_ready, tw__fork_generation() + 1u,
                   __ATOMIC_RELEASE);
}

static void global_init(void)
{
  tw__install_fork_handler();
  global_open();
  if (global_writer && atexit(commit_at_exit) != 0) {
    global_error = -ENOMEM;
    snprintf(global_message, sizeof global_message,
             "cannot register the exit commit; call tw_flush(tw_global())");
  }
}

/* In a child after fork: the parent's writer is not ours.  With "%p" in
 * the path the child opens its own file; without, tracing is off in the
 * child.  The first caller does it; others wait (a child's threads are
 * all new, so none can be stuck holding this). */
static tw_writer *global_after_fork(void)
{
  int expected = 0;

  if (__atomic_compare_exchange_n(&global_reopening, &expected, 1, 0,
                                  __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
    if (__atomic_load_n(&global_ready, __ATOMIC_RELAXED) !=
        tw__fork_generation() + 1u) {
      tw_writer *parents = global_writer;
      __atomic_store_n(&global_writer, NULL, __ATOMIC_RELEASE);
      (void)tw_close(parents);       /* frees, writes nothing: forked */
      global_error = 0;
      global_message[0] = '\0';
      if (global_per_pid)
        global_open();
      else
        __atomic_store_n(&global_ready, tw__fork_generation() + 1u,
                         __ATOMIC_RELEASE);
    }
    __atomic_store_n(&global_reopening, 0, __ATOMIC_RELEASE);
  } else {
    while (__atomic_load_n(&global_reopening, __ATOMIC_ACQUIRE))
      sched_yield();
  }
  return __atomic_load_n(&global_writer, __ATOMIC_ACQUIRE);
}

/* The first call of the process (pthread_once), or the first in a child
 * after fork. */
static tw_writer *global_slow(void)
{
  pthread_once(&global_once, global_init);
  if (__atomic_load_n(&global_ready, __ATOMIC_ACQUIRE) !=
      tw__fork_generation() + 1u)
    return global_after_fork();
  return __atomic_load_n(&global_writer, __ATOMIC_ACQUIRE);
}

tw_writer *tw_global(void)
{
  /* The ready word matches this process's fork generation only once the
   * writer (or NULL) is in place for it; its acquire orders the writer's
   * load after it (the writer was stored before it, with release). */
  if (TW__LIKELY(__atomic_load_n(&global_ready, __ATOMIC_ACQUIRE) ==
                 tw__fork_generation() + 1u))
    return __atomic_load_n(&global_writer, __ATOMIC_RELAXED);
  return global_slow();
}

int tw_global_status(const char **message)
{
  /* pthread_once orders the atexit error, set after the ready word, before
   * the reads below; tw_global reopens in a child after fork. */
  pthread_once(&global_once, global_init);
  (void)tw_global();
  if (message)
    *message = global_message;
  return global_error;
}
