/* testutil.c -- helpers shared by the tests (see testutil.h) */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* memmem */
#endif
#include "testutil.h"

#include <errno.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------ deadline */

static char deadline_message[160];
static size_t deadline_message_len;

/* SIGALRM: say why, then die of the signal (the harness shows a FAIL). */
static void deadline_passed(int signo)
{
  ssize_t k = write(STDERR_FILENO, deadline_message, deadline_message_len);

  (void)k;
  signal(signo, SIG_DFL);
  raise(signo);
}

/* Before main(): arm the deadline of testutil.h.  A bad TW_TEST_TIMEOUT
 * keeps the default (and says so). */
__attribute__((constructor)) static void tu_arm_deadline(void)
{
  const char *env = getenv("TW_TEST_TIMEOUT");
  unsigned long seconds = TU_DEFAULT_TIMEOUT;
  char *end;

  if (env && *env) {
    errno = 0;
    seconds = strtoul(env, &end, 10);
    if (errno != 0 || *end != '\0' || env[0] < '0' || env[0] > '9' ||
        seconds > 86400 * 7) {
      fprintf(stderr, "testutil: TW_TEST_TIMEOUT=%s is not a number of "
              "seconds; %d s it is\n", env, TU_DEFAULT_TIMEOUT);
      seconds = TU_DEFAULT_TIMEOUT;
    }
  }
  /* TW_TEST_ONLY=GLOB runs only the tests whose names match. */
  if ((env = getenv("TW_TEST_ONLY")) && *env)
    cmocka_set_test_filter(env);
  if (seconds == 0)
    return;
  snprintf(deadline_message, sizeof deadline_message,
           "\ntestutil: the test ran for %lu s, past its deadline "
           "(TW_TEST_TIMEOUT=%lu): stopped\n", seconds, seconds);
  deadline_message_len = strlen(deadline_message);
  signal(SIGALRM, deadline_passed);
  alarm((unsigned)seconds);
}

/* --------------------------------------------------------------- seeds */

unsigned tu_seed(const char *what)
{
  const char *env = getenv("TW_TEST_SEED");
  unsigned long seed;

  if (env && *env) {
    char *end;
    errno = 0;
    seed = strtoul(env, &end, 10);
    if (errno != 0 || *end != '\0' || env[0] < '0' || env[0] > '9' ||
        seed > 0xffffffffUL)
      fail_msg("TW_TEST_SEED=%s: not a decimal number below 2^32", env);
  } else {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    seed = ((unsigned long)now.tv_sec * 1000003UL) ^
           (unsigned long)now.tv_nsec ^ ((unsigned long)getpid() << 16);
    seed &= 0xffffffffUL;
  }
  print_message("  %s: seed %lu (TW_TEST_SEED=%lu replays it)\n", what, seed,
                seed);
  return (unsigned)seed;
}

unsigned tu_test_scale(void)
{
  const char *env = getenv("TW_TEST_SCALE");
  unsigned long k;
  char *end;

  if (!env || !*env)
    return TU_DEFAULT_SCALE;
  errno = 0;
  k = strtoul(env, &end, 10);
  if (errno != 0 || *end != '\0' || env[0] < '0' || env[0] > '9' || k < 1 ||
      k > 1000000)
    fail_msg("TW_TEST_SCALE=%s: not a whole number from 1 to 1000000", env);
  return (unsigned)k;
}

unsigned long tu_scaled(unsigned long n)
{
  n /= tu_test_scale();
  return n > 0 ? n : 1;
}

/* ------------------------------------------------------- files, traces */

/* $TMPDIR, or /tmp where it is not set. */
static const char *tmp_base(void)
{
  const char *dir = getenv("TMPDIR");

  return dir && *dir ? dir : "/tmp";
}

char *tu_tmpdir(const char *prefix)
{
  const char *base = tmp_base();
  size_t n = strlen(base) + strlen(prefix) + 16;
  char *dir = malloc(n);

  assert_non_null(dir);
  snprintf(dir, n, "%s/%sXXXXXX", base, prefix);
  assert_non_null(mkdtemp(dir));
  return dir;
}

char *tu_tmppath(const char *suffix)
{
  const char *dir = tmp_base();
  size_t n;
  char *path;
  int fd;

  n = strlen(dir) + strlen(suffix) + 32;
  path = malloc(n);
  assert_non_null(path);
  snprintf(path, n, "%s/twtest-XXXXXX%s", dir, suffix);
  fd = mkstemps(path, (int)strlen(suffix));
  assert_true(fd >= 0);
  close(fd);
  return path;
}

void tu_cleanup(char *path)
{
  if (path) {
    unlink(path);
    free(path);
  }
}

char *tu_read_file(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  char *buf = NULL;
  size_t cap = 0, n = 0;

  if (!f)
    fail_msg("cannot open %s", path);
  for (;;) {
    if (n + 65536 + 1 > cap) {
      cap = (n + 65536 + 1) * 2;
      buf = realloc(buf, cap);
      assert_non_null(buf);
    }
    size_t k = fread(buf + n, 1, cap - n - 1, f);
    n += k;
    if (k == 0)
      break;
  }
  assert_int_equal(ferror(f), 0);
  fclose(f);
  buf[n] = '\0';
  if (len)
    *len = n;
  return buf;
}

/* Read fd to its end into *buf (grown from *cap bytes, *len of them
 * used).  Returns 0, or the errno of a failed read (ENOMEM if memory
 * runs out).  No cmocka call: a reader thread runs it. */
static int read_to_end(int fd, char **buf, size_t *len, size_t *cap)
{
  for (;;) {
    ssize_t k;
    if (*cap - *len < 65536) {
      size_t bigger = *cap * 2 + 65536;
      char *p = realloc(*buf, bigger);
      if (!p)
        return ENOMEM;
      *buf = p;
      *cap = bigger;
    }
    k = read(fd, *buf + *len, *cap - *len - 1);
    if (k < 0 && errno == EINTR)
      continue;
    if (k < 0)
      return errno;
    if (k == 0)
      break;
    *len += (size_t)k;
  }
  (*buf)[*len] = '\0';
  return 0;
}

char *tu_read_fd(int fd, size_t *len)
{
  char *buf = NULL;
  size_t n = 0, cap = 0;
  int err = read_to_end(fd, &buf, &n, &cap);

  if (err)
    fail_msg("read: %s", strerror(err));
  if (len)
    *len = n;
  return buf;
}

char *tu_text_room(tu_text *t, size_t n)
{
  if (n >= SIZE_MAX / 2 - t->len)
    fail_msg("tu_text: %zu more bytes after %zu", n, t->len);
  if (t->len + n + 1 > t->cap) {
    t->cap = (t->len + n + 1) * 2;
    t->p = realloc(t->p, t->cap);
    assert_non_null(t->p);
  }
  t->p[t->len + n] = '\0';
  return t->p + t->len;
}

void tu_text_put(tu_text *t, const void *s, size_t n)
{
  memcpy(tu_text_room(t, n), s, n);
  t->len += n;
}

void tu_text_puts(tu_text *t, const char *s)
{
  tu_text_put(t, s, strlen(s));
}

static void *pipe_reader_main(void *arg)
{
  tu_pipe_reader *r = arg;

  r->err = read_to_end(r->fd, &r->buf, &r->len, &r->cap);
  return NULL;
}

void tu_pipe_reader_start(tu_pipe_reader *r, int fd)
{
  memset(r, 0, sizeof *r);
  r->fd = fd;
  r->cap = 1u << 20;
  r->buf = malloc(r->cap);
  assert_non_null(r->buf);
  assert_int_equal(pthread_create(&r->th, NULL, pipe_reader_main, r), 0);
}

char *tu_pipe_reader_join(tu_pipe_reader *r, size_t *len)
{
  assert_int_equal(pthread_join(r->th, NULL), 0);
  if (r->err)
    fail_msg("the pipe's reader: %s", strerror(r->err));
  if (len)
    *len = r->len;
  return r->buf;
}

/* The clock record the library writes after the first record of every
 * document (layout.h), as it begins. */
#define CLOCK_RECORD ",\n{\"ph\":\"c\",\"name\":\"clock_sync\","

jc_doc *tu_parse_trace(const char *buf, size_t len, char *err,
                       size_t errsize)
{
  jc_doc *d = jc_parse(buf, len, err, errsize);
  const char *c, *end;
  char *copy;

  if (!d || !(c = memmem(buf, len, CLOCK_RECORD, strlen(CLOCK_RECORD))) ||
      !(end = memmem(c, len - (size_t)(c - buf), "}}", 2)))
    return d;
  /* Checked whole; read without its clock record. */
  jc_free(d);
  end += 2;
  copy = malloc(len);
  assert_non_null(copy);
  memcpy(copy, buf, (size_t)(c - buf));
  memcpy(copy + (c - buf), end, len - (size_t)(end - buf));
  d = jc_parse(copy, len - (size_t)(end - c), err, errsize);
  free(copy);
  return d;
}

jc_doc *tu_load_mem(const char *buf, size_t len)
{
  char err[256];
  jc_doc *d = tu_parse_trace(buf, len, err, sizeof err);
  if (!d)
    fail_msg("not strict JSON: %s", err);
  return d;
}

jc_doc *tu_load(const char *path)
{
  size_t len;
  char *buf = tu_read_file(path, &len);
  char err[256];
  jc_doc *d = tu_parse_trace(buf, len, err, sizeof err);
  if (!d) {
    fprintf(stderr, "---- %s (%zu bytes), last 200:\n%s\n----\n", path, len,
            len > 200 ? buf + len - 200 : buf);
    free(buf);
    fail_msg("%s is not strict JSON: %s", path, err);
  }
  free(buf);
  return d;
}

jc_val tu_events(const jc_doc *d)
{
  jc_val ev = jc_trace_events(d);
  assert_true(ev >= 0);
  assert_int_equal(jc_type(d, ev), JC_ARRAY);
  return ev;
}

void tu_assert_str(const jc_doc *d, jc_val obj, const char *key,
                   const char *expected)
{
  jc_val v = jc_get(d, obj, key);
  if (v < 0)
    fail_msg("key \"%s\" missing (expected \"%s\")", key, expected);
  if (!jc_streq(d, v, expected)) {
    size_t n;
    const char *s = jc_str(d, v, &n);
    fail_msg("key \"%s\": got \"%s\", expected \"%s\"", key,
             s ? s : "(not a string)", expected);
  }
  assert_int_equal(jc_count_key(d, obj, key), 1);
}

void tu_assert_int(const jc_doc *d, jc_val obj, const char *key,
                   int64_t expected)
{
  int64_t got;
  jc_val v = jc_get(d, obj, key);
  if (v < 0)
    fail_msg("key \"%s\" missing", key);
  if (jc_int64(d, v, &got) != 0)
    fail_msg("key \"%s\" is not an integer", key);
  assert_int_equal(got, expected);
  assert_int_equal(jc_count_key(d, obj, key), 1);
}

void tu_assert_us(const jc_doc *d, jc_val obj, const char *key,
                  uint64_t expected_ns)
{
  uint64_t got;
  jc_val v = jc_get(d, obj, key);
  if (v < 0)
    fail_msg("key \"%s\" missing", key);
  if (jc_us_to_ns(d, v, &got) != 0)
    fail_msg("key \"%s\" is not a microsecond timestamp", key);
  assert_int_equal(got, expected_ns);
}

void tu_assert_absent(const jc_doc *d, jc_val obj, const char *key)
{
  if (jc_get(d, obj, key) >= 0)
    fail_msg("key \"%s\" present, expected absent", key);
}

void tu_assert_tail(const char *path, int object_form)
{
  size_t len;
  char *buf = tu_read_file(path, &len);
  const char *tail = TU_TAIL(object_form);
  size_t tl = strlen(tail);
  assert_true(len >= tl);
  assert_memory_equal(buf + len - tl, tail, tl);
  assert_int_equal(buf[len - 1], object_form ? '}' : ']');
  free(buf);
}
