/* global.c -- tw_global(): the process-wide writer from the environment */
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static tw_writer *global_writer;   /* set once, by global_init */
static int global_error;           /* why global_writer is NULL, or 0 */
static char global_message[PATH_MAX + 256]; /* why, in words */

static void commit_at_exit(void)
{
  /* Commit, never free: other threads may still hold the pointer. */
  (void)tw_flush(global_writer);
}

/* Expand "%p" (pid) and "%%" in pattern into out[size].  Returns 0 or
 * -ENAMETOOLONG. */
static int expand_path(const char *pattern, char *out, size_t size)
{
  size_t n = 0;

  for (const char *p = pattern; *p; p++) {
    char num[24];
    const char *piece = p;
    size_t len = 1;

    if (p[0] == '%' && p[1] == 'p') {
      snprintf(num, sizeof num, "%lld", (long long)tw__pid());
      piece = num;
      len = strlen(num);
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

static void global_init(void)
{
  const char *pattern = getenv("TRACEWRITER_OUT");
  const char *options = getenv("TRACEWRITER_OPTIONS");
  char path[PATH_MAX];
  char err[256];
  tw_options o;
  tw_writer *w;
  int rc;

  if (!pattern || !*pattern)
    return;
  if ((rc = expand_path(pattern, path, sizeof path)) != 0) {
    global_error = rc;
    snprintf(global_message, sizeof global_message,
             "TRACEWRITER_OUT: path too long");
    return;
  }
  tw_options_init(&o);
  if ((rc = tw_options_parse(&o, options, err, sizeof err)) != 0) {
    global_error = rc;
    snprintf(global_message, sizeof global_message,
             "TRACEWRITER_OPTIONS: %s", err);
    return;
  }
  if (!(w = tw_open(path, &o, &rc))) {
    global_error = rc;
    snprintf(global_message, sizeof global_message,
             "TRACEWRITER_OUT: cannot open '%s': %s", path, tw_strerror(rc));
    return;
  }
  global_writer = w;
  if (atexit(commit_at_exit) != 0) {
    global_error = -ENOMEM;
    snprintf(global_message, sizeof global_message,
             "cannot register the exit commit; call tw_flush(tw_global())");
  }
}

tw_writer *tw_global(void)
{
  pthread_once(&global_once, global_init);
  return global_writer;
}

int tw_global_status(const char **message)
{
  pthread_once(&global_once, global_init);
  if (message)
    *message = global_message;
  return global_error;
}
