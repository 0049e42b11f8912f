/* testutil.h -- what every tracewriter test includes
 *
 * cmocka needs stdarg.h, stddef.h, setjmp.h and stdint.h before it; this
 * header includes them once for all tests, then the strict JSON checker and
 * the library.
 */
#ifndef TW_TESTUTIL_H
#define TW_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jsoncheck.h"
#include "tracewriter.h"

/* Every program linked with testutil.c has a deadline: TW_TEST_TIMEOUT
 * seconds after it starts (default TU_DEFAULT_TIMEOUT; 0: none), SIGALRM
 * stops it with a message on stderr, so a test that hangs fails instead,
 * under make check or run by hand.  make check adds its own deadline, a
 * little later, for every test program and script (tests/deadline.sh). */
#define TU_DEFAULT_TIMEOUT 900

/* The seed of a randomised test: TW_TEST_SEED from the environment when set
 * (a decimal number, to replay a failure), else one drawn from the clock
 * and the pid.  Prints "  WHAT: seed N (TW_TEST_SEED=N replays it)" either
 * way; fails the test on a malformed TW_TEST_SEED. */
unsigned tu_seed(const char *what);

/* How much a test repeats itself.  The counts written in the tests
 * (events, rounds, random cases) are the soak size; TW_TEST_SCALE, a
 * positive integer, divides them, and is TU_DEFAULT_SCALE when unset, so
 * that make check (and a test run by hand) stays quick: make check-long
 * runs with TW_TEST_SCALE=1.  tu_scaled(n) is n / TW_TEST_SCALE, at least
 * 1; a malformed TW_TEST_SCALE fails the test. */
#define TU_DEFAULT_SCALE 10
unsigned tu_test_scale(void);
unsigned long tu_scaled(unsigned long n);

/* A new, unique, empty temporary file path ending in suffix (e.g.
 * ".json"), under $TMPDIR or /tmp.  The file exists (created empty);
 * free() the path, tu_cleanup() removes the file. */
char *tu_tmppath(const char *suffix);
/* A new, empty temporary directory named prefix + six random characters,
 * under $TMPDIR or /tmp (malloc'ed path; the test removes it). */
char *tu_tmpdir(const char *prefix);
/* Remove the file and free the path (NULL is fine). */
void tu_cleanup(char *path);

/* The whole content of a file, NUL-terminated (malloc'ed; *len may be
 * NULL).  Fails the test if it cannot be read. */
char *tu_read_file(const char *path, size_t *len);

/* Read fd to its end (EOF), retrying EINTR: every byte, NUL-terminated
 * (malloc'ed; *len may be NULL).  Fails the test on a read error. */
char *tu_read_fd(int fd, size_t *len);

/* A thread reading a pipe to its end, so that a writer never blocks on a
 * full pipe: start it before the writer writes, join it once every
 * write end is closed.  It allocates 1 MiB at start and more only past
 * that (for the fault injection tests, which count allocations). */
typedef struct tu_pipe_reader {
  int fd;                  /* the read end (the caller closes it) */
  char *buf;               /* what was read (NUL-terminated after join) */
  size_t len, cap;
  int err;                 /* errno of a failed read, or ENOMEM */
  pthread_t th;
} tu_pipe_reader;

void tu_pipe_reader_start(tu_pipe_reader *r, int fd);
/* Wait for the reader's EOF; fails the test if a read failed.  Returns
 * the bytes (r->buf: free them) and their count in *len (may be NULL). */
char *tu_pipe_reader_join(tu_pipe_reader *r, size_t *len);

/* A growing byte string that a test builds (a document, a file's
 * expected bytes): { 0 } is empty; p is NUL-terminated past len once
 * anything was put.  free(t.p) when done.  Growth failing fails the
 * test. */
typedef struct tu_text {
  char *p;
  size_t len, cap;
} tu_text;

/* Room for n more bytes (and the NUL after them) at t->p + t->len, which
 * it returns; len is unchanged. */
char *tu_text_room(tu_text *t, size_t n);
/* Append s[0..n), or a C string. */
void tu_text_put(tu_text *t, const void *s, size_t n);
void tu_text_puts(tu_text *t, const char *s);

/* Check buf[0..len) whole with the strict checker (jc_parse), then
 * return it parsed without the clock record that the library writes
 * after the first record of every document (a 'c' "clock_sync" event,
 * layout.h): the tests count and compare the records a writer was given;
 * the tests of the clock record itself use jc_parse.  NULL with err as
 * jc_parse if it is not strict JSON. */
jc_doc *tu_parse_trace(const char *buf, size_t len, char *err,
                       size_t errsize);

/* Parse a whole trace file with the strict checker; fails the test (with
 * the checker's reason) if it is not strictly valid JSON.  jc_free() it.
 * Read as tu_parse_trace. */
jc_doc *tu_load(const char *path);
/* Same for bytes in memory (read as tu_parse_trace). */
jc_doc *tu_load_mem(const char *buf, size_t len);

/* The events array of a trace (array or object form), asserted present. */
jc_val tu_events(const jc_doc *d);

/* Field checks on one event object; each fails the test on mismatch. */
void tu_assert_str(const jc_doc *d, jc_val obj, const char *key,
                   const char *expected);
void tu_assert_int(const jc_doc *d, jc_val obj, const char *key,
                   int64_t expected);
void tu_assert_us(const jc_doc *d, jc_val obj, const char *key,
                  uint64_t expected_ns);
void tu_assert_absent(const jc_doc *d, jc_val obj, const char *key);

/* The library's tail, "\n]" (or "\n]}" in the object form): the last
 * bytes of every file it finishes, with nothing after them.  Spelled out
 * here rather than taken from src/layout.h, so that the tests check the
 * layout instead of repeating it. */
#define TU_TAIL(object_form) ((object_form) ? "\n]}" : "\n]")

/* The file's bytes must end with exactly TU_TAIL(object_form) and have
 * nothing after it: its last byte is ']' (or '}'). */
void tu_assert_tail(const char *path, int object_form);

/* In a forked child, where cmocka's asserts cannot report: say which
 * check failed and exit 70 (the parent asserts the child's status). */
#define CHILD_CHECK(cond)                                                  \
  do {                                                                     \
    if (!(cond)) {                                                         \
      fprintf(stderr, "%s:%d: child check failed: %s\n", __FILE__,         \
              __LINE__, #cond);                                            \
      _exit(70);                                                           \
    }                                                                      \
  } while (0)

#endif
