/* test_gzip_parallel.c -- tests of the gzip sink's parallel deflate
 *
 * With gzip_threads=N (N > 1) every commit of 48 KiB or more is cut into
 * blocks deflated by worker threads and the committing thread.  After
 * every commit the file must be one complete gzip member (tu_gunzip:
 * Z_STREAM_END, CRC-32 and ISIZE checked, nothing after it) whose JSON
 * passes the strict checker and holds every event committed so far,
 * field by field.  The split must really happen (the compressed bytes
 * differ from gzip_threads=1's while the JSON is byte-identical), cost
 * at most 2% in size against one zlib stream of the same bytes, survive
 * commits small enough to be deflated by one thread in between, a crash
 * (crash=commit) in the middle of a multi-MB stream, a pipe, and fork.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* fork, pipe under -std=c99 */
#endif

#include "testutil.h"
#include "gunzip.h"

#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#define NNAMES 8
static const char *const names[NNAMES] = {
  "rms_norm", "matmul", "softmax", "attention", "rope", "silu", "add",
  "embedding"
};
static const char *const layers[4] = { "attn", "mlp", "norm", "embed" };

/* Deterministic fields of event i, so files compare. */
#define TS0 5000000000ull
#define TS(i) (TS0 + (uint64_t)(i) * 1733u)
#define DUR(i) (100u + (uint64_t)(i) % 977u)

static int emit_i(tw_writer *w, unsigned i)
{
  tw_arg args[2];

  args[0] = tw_arg_int("tokens", (int64_t)i * 7);
  args[1] = tw_arg_str("layer", layers[i % 4]);
  return tw_complete(w, "par", names[i % NNAMES], TS(i), DUR(i), args, 2);
}

static tw_writer *open_with(const char *path, const char *opts)
{
  tw_options o;
  tw_writer *w;
  int err = 0;

  tw_options_init(&o);
  o.process_name = "gzpar";
  assert_int_equal(tw_options_parse(&o, opts, NULL, 0), 0);
  w = tw_open(path, &o, &err);
  if (!w)
    fail_msg("tw_open(%s): %s", opts, tw_strerror(err));
  return w;
}

/* The file's JSON: it must be exactly one complete gzip member. */
static char *inflate_file(const char *path, size_t *jlen, size_t *zlen)
{
  size_t len = 0;
  char *gz = tu_read_file(path, &len);
  char *json = tu_gunzip(gz, len, jlen);

  if (!json)
    fail_msg("%s (%zu bytes) is not one complete gzip member", path, len);
  free(gz);
  if (zlen)
    *zlen = len;
  return json;
}

/* json holds the process name record and events 0..n-1 in order, strictly
 * valid, every field as written. */
static void check_events(const char *json, size_t jlen, unsigned n)
{
  jc_doc *d = tu_load_mem(json, jlen);
  jc_val ev = tu_events(d), e;

  assert_int_equal(jc_len(d, ev), (size_t)n + 1);
  e = jc_index(d, ev, 0);
  tu_assert_str(d, e, "ph", "M");
  tu_assert_str(d, jc_get(d, e, "args"), "name", "gzpar");
  for (unsigned i = 0; i < n; i++) {
    jc_val a;

    e = jc_index(d, ev, i + 1);
    tu_assert_str(d, e, "ph", "X");
    tu_assert_str(d, e, "name", names[i % NNAMES]);
    tu_assert_str(d, e, "cat", "par");
    tu_assert_us(d, e, "ts", TS(i));
    tu_assert_us(d, e, "dur", DUR(i));
    a = jc_get(d, e, "args");
    tu_assert_int(d, a, "tokens", (int64_t)i * 7);
    tu_assert_str(d, a, "layer", layers[i % 4]);
  }
  jc_free(d);
}

/* The size of bytes[0..len) as one gzip stream at level 1 (gzip -1's
 * deflate: zlib, one stream, no flush). */
static size_t zlib1_size(const char *bytes, size_t len)
{
  z_stream z;
  size_t cap, out;
  unsigned char *buf;

  memset(&z, 0, sizeof z);
  assert_int_equal(deflateInit2(&z, 1, Z_DEFLATED, 16 + 15, 8,
                                Z_DEFAULT_STRATEGY), Z_OK);
  cap = deflateBound(&z, (uLong)len);
  buf = malloc(cap);
  assert_non_null(buf);
  z.next_in = (Bytef *)(uintptr_t)bytes;
  z.avail_in = (uInt)len;
  z.next_out = buf;
  z.avail_out = (uInt)cap;
  assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
  out = cap - z.avail_out;
  deflateEnd(&z);
  free(buf);
  return out;
}

/* ------------------------------------------------------------- tests */

/* Rounds of a few MB, each committed by tw_flush, with small commits
 * (one thread: primed from the last 32 KiB after a split one) between
 * them: after each, one complete member holding every event so far. */
static void run_every_commit(const char *opts)
{
  char *path = tu_tmppath(".json.gz");
  tw_writer *w = open_with(path, opts);
  unsigned n = 0;

  for (int round = 0; round < 6; round++) {
    /* Big rounds (about 2 MB at the soak size, 200 KB under make check:
     * more than the 48 KiB a commit needs to be split) alternate with
     * small ones (3 events). */
    unsigned batch = round % 2 == 0 ? (unsigned)tu_scaled(15000) : 3;
    size_t jlen;
    char *json;

    for (unsigned k = 0; k < batch; k++, n++)
      assert_int_equal(emit_i(w, n), 0);
    assert_int_equal(tw_flush(w), 0);
    json = inflate_file(path, &jlen, NULL);
    check_events(json, jlen, n);
    free(json);
  }
  assert_int_equal(tw_close(w), 0);
  {
    size_t jlen;
    char *json = inflate_file(path, &jlen, NULL);
    check_events(json, jlen, n);
    /* Closed: the JSON ends exactly at the tail. */
    assert_true(jlen >= 2);
    assert_memory_equal(json + jlen - 2, TU_TAIL(0), 2);
    free(json);
  }
  tu_cleanup(path);
}

static void test_every_commit_inline(void **state)
{
  (void)state;
  run_every_commit("sink=gzip,gzip_threads=3,commit=inline,buffer=1MiB");
}

static void test_every_commit_background(void **state)
{
  (void)state;
  run_every_commit("sink=gzip,gzip_threads=2,commit=background,"
                   "buffer=256KiB");
}

/* Many workers on default-sized commits: blocks no smaller than the
 * minimum, every commit valid. */
static void test_every_commit_many_threads(void **state)
{
  (void)state;
  run_every_commit("sink=gzip,gzip_threads=17,commit=inline");
}

/* The same events with gzip_threads=1 and =4: the JSON is byte for byte
 * the same, the compressed bytes are not (the commits were split), and
 * the split costs at most 2% against one zlib stream at level 1 of the
 * same JSON (what gzip -1 writes), with 1 MiB and with default commits. */
static void check_split(const char *buffer, double limit)
{
  char *p1 = tu_tmppath(".json.gz"), *p4 = tu_tmppath(".json.gz");
  char opts1[128], opts4[128];
  size_t j1, j4, z1, z4, ref;
  char *a, *b;
  tw_writer *w1, *w4;
  unsigned n = 30000;

  snprintf(opts1, sizeof opts1,
           "sink=gzip,gzip_threads=1,commit=inline,buffer=%s", buffer);
  snprintf(opts4, sizeof opts4,
           "sink=gzip,gzip_threads=4,commit=inline,buffer=%s", buffer);
  w1 = open_with(p1, opts1);
  w4 = open_with(p4, opts4);
  for (unsigned i = 0; i < n; i++) {
    assert_int_equal(emit_i(w1, i), 0);
    assert_int_equal(emit_i(w4, i), 0);
  }
  assert_int_equal(tw_close(w1), 0);
  assert_int_equal(tw_close(w4), 0);
  a = inflate_file(p1, &j1, &z1);
  b = inflate_file(p4, &j4, &z4);
  check_events(b, j4, n);
  /* Same JSON but for the clock record's instant: compare the events. */
  {
    const char *ea = strstr(a, "\"ph\":\"X\""), *eb = strstr(b, "\"ph\":\"X\"");
    assert_non_null(ea);
    assert_non_null(eb);
    assert_int_equal(j1 - (size_t)(ea - a), j4 - (size_t)(eb - b));
    assert_memory_equal(ea, eb, j1 - (size_t)(ea - a));
  }
  ref = zlib1_size(b, j4);
  printf("  buffer=%s: %zu bytes of JSON; one thread %zu, four %zu, "
         "zlib -1 %zu (%.4fx)\n", buffer, j4, z1, z4, ref,
         (double)z4 / (double)ref);
  assert_true(z1 != z4 || memcmp(a, b, j1) != 0);
  {
    size_t l1 = 0, l4 = 0;
    char *g1 = tu_read_file(p1, &l1), *g4 = tu_read_file(p4, &l4);
    /* The bytes after the header differ: the commits were split. */
    assert_true(l1 != l4 || memcmp(g1 + 10, g4 + 10, l1 - 10) != 0);
    free(g1);
    free(g4);
  }
  assert_true((double)z4 <= limit * (double)ref);
  free(a);
  free(b);
  tu_cleanup(p1);
  tu_cleanup(p4);
}

static void test_split_size(void **state)
{
  (void)state;
  check_split("1MiB", 1.02);
  check_split("64KiB", 1.02);
}

/* A child writes a multi-MB stream with a background committer splitting
 * commits and crashes (SIGSEGV, crash=commit) after event k: the handler
 * waits for a commit in flight to end, then commits the rest inline.
 * The file is one complete member holding exactly events 0..k-1. */
static void test_crash_mid_stream(void **state)
{
  unsigned seed = tu_seed("crash points");

  (void)state;
  srand(seed);
  for (int round = 0; round < 4; round++) {
    char *path = tu_tmppath(".json.gz");
    unsigned k = (unsigned)tu_scaled(10000) +
                 (unsigned)rand() % (unsigned)tu_scaled(30000);
    int status;
    pid_t pid = fork();

    assert_true(pid >= 0);
    if (pid == 0) {
      struct rlimit no_core = { 0, 0 };
      tw_options o;
      tw_writer *w;

      (void)setrlimit(RLIMIT_CORE, &no_core);
      signal(SIGSEGV, SIG_DFL);          /* not cmocka's handler */
      tw_options_init(&o);
      o.process_name = "gzpar";
      CHILD_CHECK(tw_options_parse(&o, "sink=gzip,gzip_threads=2,"
                                   "commit=background,buffer=256KiB,"
                                   "crash=commit", NULL, 0) == 0);
      CHILD_CHECK((w = tw_open(path, &o, NULL)) != NULL);
      for (unsigned i = 0; i < k; i++)
        CHILD_CHECK(emit_i(w, i) == 0);
      raise(SIGSEGV);
      _exit(71);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGSEGV);
    {
      size_t jlen;
      char *json = inflate_file(path, &jlen, NULL);
      check_events(json, jlen, k);
      free(json);
    }
    tu_cleanup(path);
  }
}

/* A pipe: a plain gzip stream of split commits, finished at close. */
typedef struct reader {
  int fd;
  char *buf;
  size_t len, cap;
} reader;

static void *read_all(void *arg)
{
  reader *r = arg;
  ssize_t got;

  for (;;) {
    if (r->cap - r->len < 65536) {
      r->cap = r->cap ? r->cap * 2 : 1 << 20;
      r->buf = realloc(r->buf, r->cap);
      if (!r->buf)
        return NULL;
    }
    got = read(r->fd, r->buf + r->len, r->cap - r->len);
    if (got <= 0)
      break;
    r->len += (size_t)got;
  }
  return NULL;
}

static void test_pipe(void **state)
{
  int fds[2];
  pthread_t t;
  reader r = { 0, NULL, 0, 0 };
  tw_options o;
  tw_writer *w;
  unsigned n = (unsigned)tu_scaled(50000);
  size_t jlen;
  char *json;

  (void)state;
  assert_int_equal(pipe(fds), 0);
  r.fd = fds[0];
  assert_int_equal(pthread_create(&t, NULL, read_all, &r), 0);
  tw_options_init(&o);
  o.process_name = "gzpar";
  assert_int_equal(tw_options_parse(&o, "sink=gzip,gzip_threads=3,"
                                    "buffer=512KiB", NULL, 0), 0);
  assert_non_null(w = tw_open_fd(fds[1], &o, NULL));
  for (unsigned i = 0; i < n; i++)
    assert_int_equal(emit_i(w, i), 0);
  assert_int_equal(tw_close(w), 0);
  close(fds[1]);
  pthread_join(t, NULL);
  close(fds[0]);
  assert_non_null(r.buf);
  json = tu_gunzip(r.buf, r.len, &jlen);
  assert_non_null(json);
  check_events(json, jlen, n);
  free(json);
  free(r.buf);
}

/* After fork, with the workers running in the parent: the child's writer
 * refuses and closes without touching the workers or the file; the
 * parent goes on splitting commits. */
static void test_fork(void **state)
{
  char *path = tu_tmppath(".json.gz");
  tw_writer *w = open_with(path, "sink=gzip,gzip_threads=2,commit=inline,"
                           "buffer=1MiB");
  unsigned n = 0, half = (unsigned)tu_scaled(20000);
  int status;
  pid_t pid;
  size_t jlen;
  char *json;

  (void)state;
  for (; n < half; n++)
    assert_int_equal(emit_i(w, n), 0);
  assert_int_equal(tw_flush(w), 0);          /* the workers started */
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    CHILD_CHECK(emit_i(w, 0) == TW_EFORKED);
    CHILD_CHECK(tw_close(w) == 0);
    _exit(0);
  }
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  for (; n < 2 * half; n++)
    assert_int_equal(emit_i(w, n), 0);
  assert_int_equal(tw_close(w), 0);
  json = inflate_file(path, &jlen, NULL);
  check_events(json, jlen, n);
  free(json);
  tu_cleanup(path);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_every_commit_inline),
    cmocka_unit_test(test_every_commit_background),
    cmocka_unit_test(test_every_commit_many_threads),
    cmocka_unit_test(test_split_size),
    cmocka_unit_test(test_crash_mid_stream),
    cmocka_unit_test(test_pipe),
    cmocka_unit_test(test_fork),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
