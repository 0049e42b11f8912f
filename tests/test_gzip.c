/* test_gzip.c -- tests of the gzip sink
 *
 * Every file is read back with zlib's own gzip decoder (inflateInit2 with
 * windowBits 16 + 15: gzip only), which must reach Z_STREAM_END, so the
 * CRC-32 and ISIZE of the trailer are checked, exactly at the end of the
 * file; then the JSON goes through the strict checker and the events are
 * compared field by field.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pipe, fork, dup2, setrlimit under -std=c99 */
#endif

#include "numbered.h"
#include "gunzip.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#define NNAMES 8
static const char *const names[NNAMES] = {
  "rms_norm", "matmul", "softmax", "attention", "rope", "silu", "add",
  "embedding"
};

/* Timestamps of the test events: deterministic, so files compare. */
#define TS0 1000000000ull
#define TS(i) (TS0 + (uint64_t)(i) * 1733u)
#define DUR(i) (100u + (uint64_t)(i) % 977u)

/* ----------------------------------------------------------- helpers */

/* Inflate the gzip data buf[0..len): it must be exactly one complete
 * member (Z_STREAM_END, so CRC and ISIZE match) with no byte after it,
 * or the test fails.  Returns the bytes, NUL-terminated (free them), and
 * their count. */
static char *gunzip_mem(const unsigned char *buf, size_t len, size_t *outlen)
{
  char why[256];
  char *out = tu_gunzip_why(buf, len, outlen, why, sizeof why);

  if (!out)
    fail_msg("%s", why);
  return out;
}

/* Inflate what a gzip stream holds so far (it need not be finished; the
 * test fails if it is corrupt).  Returns the bytes, NUL-terminated, and
 * their count; *complete says whether the stream ended. */
static char *gunzip_partial(const unsigned char *buf, size_t len,
                            size_t *outlen, int *complete)
{
  enum tu_gz_end end;
  char *out = tu_gunzip_prefix(buf, len, outlen, &end);

  assert_non_null(out);
  if (end == TU_GZ_CORRUPT)
    fail_msg("corrupt gzip stream after %zu bytes of output", *outlen);
  *complete = end == TU_GZ_COMPLETE;
  return out;
}

/* The file at path from byte skip on, inflated as one exact member. */
static char *gunzip_file(const char *path, size_t skip, size_t *outlen)
{
  size_t len;
  char *raw = tu_read_file(path, &len);
  char *json;

  assert_true(len >= skip + 18);
  assert_int_equal((unsigned char)raw[skip], 0x1f);
  assert_int_equal((unsigned char)raw[skip + 1], 0x8b);
  assert_int_equal((unsigned char)raw[skip + 2], 8);
  json = gunzip_mem((unsigned char *)raw + skip, len - skip, outlen);
  free(raw);
  return json;
}

static off_t file_size(const char *path)
{
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  return st.st_size;
}

/* Options for the gzip sink. */
static tw_options gz_opts(size_t buffer_size, int commit, int level)
{
  tw_options o;
  assert_int_equal(tw_options_init(&o), 0);
  o.sink = TW_SINK_GZIP;
  o.buffer_size = buffer_size;
  o.commit = commit;
  o.gzip_level = level;
  o.process_name = "test_gzip";
  return o;
}

/* The events of these tests (numbered.h), without a pad. */
static const tu_family G = { "test", "test_gzip", NULL, 0, 0, 0 };

/* ------------------------------------------------------------- tests */

/* Every phase and every arg type survive the trip through gzip; the
 * sink is chosen by the ".json.gz" suffix. */
static void test_roundtrip(void **state)
{
  char *path = tu_tmppath(".json.gz");
  tw_options o;
  tw_writer *w;
  jc_doc *d;
  jc_val evs, v, args;
  int err = 0;
  int64_t i64;
  uint64_t u64;
  size_t n;
  const char *raw;
  static const char *const phases = "XBEICbnestfMNODRc";
  (void)state;

  assert_int_equal(tw_options_init(&o), 0);
  o.process_name = "test_gzip";
  w = tw_open(path, &o, &err);
  assert_non_null(w);
  assert_int_equal(err, 0);
  for (const char *p = phases; *p; p++) {
    tw_arg args_all[7] = {
      tw_arg_int("int", -5), tw_arg_uint("uint", (uint64_t)INT64_MAX),
      tw_arg_double("dbl", 1.5), tw_arg_bool("yes", 1),
      tw_arg_str("str", "q\"b\\s\n\xc3\xa9\t"), tw_arg_null("nil"),
      tw_arg_json("js", "{\"k\":[1,2,{\"x\":null}]}")
    };
    tw_arg counter[2] = { tw_arg_int("a", 3), tw_arg_double("b", 0.25) };
    tw_arg clock[1] = { tw_arg_int("sync_id", 9) };
    tw_arg meta[1] = { tw_arg_str("name", "worker") };
    tw_event ev;

    memset(&ev, 0, sizeof ev);
    ev.ph = *p;
    ev.name = "ev";
    ev.cat = "cat";
    ev.has = TW_HAS_TS | TW_HAS_PID | TW_HAS_TID;
    ev.ts = TS(p - phases);
    ev.pid = 11;
    ev.tid = 22;
    ev.args = args_all;
    ev.nargs = 7;
    switch (*p) {
    case 'X': ev.dur = 1234567; break;
    case 'I': ev.instant_scope = 'g'; break;
    case 'C': ev.args = counter; ev.nargs = 2; break;
    case 'c': ev.args = clock; ev.nargs = 1; break;
    case 'M': ev.name = "thread_name"; ev.args = meta; ev.nargs = 1; break;
    case 'b': case 'n': case 'e': case 'N': case 'O': case 'D':
      ev.has |= TW_HAS_ID; ev.id = 0xabc; break;
    case 's': ev.has |= TW_HAS_ID; ev.flags |= TW_EV_ID2_GLOBAL;
      ev.id = 0x5; break;
    case 't': ev.has |= TW_HAS_ID; ev.flags |= TW_EV_ID2_LOCAL;
      ev.id = 0x5; break;
    case 'f': ev.has |= TW_HAS_ID; ev.flags |= TW_EV_BP_ENCLOSING;
      ev.id = 0x5; break;
    default: break;
    }
    assert_int_equal(tw_emit(w, &ev), 0);
  }
  assert_int_equal(tw_close(w), 0);

  d = tu_load_trace_file(path, 1, 0);
  evs = tu_events(d);
  assert_int_equal(jc_len(d, evs), strlen(phases) + 1);
  v = jc_first(d, evs);
  tu_assert_str(d, jc_get(d, v, "args"), "name", "test_gzip");
  for (const char *p = phases; *p; p++) {
    char ph[2] = { *p, 0 };
    v = jc_next(d, v);
    tu_assert_str(d, v, "ph", ph);
    tu_assert_int(d, v, "pid", 11);
    tu_assert_int(d, v, "tid", 22);
    if (*p != 'M')
      tu_assert_us(d, v, "ts", TS(p - phases));
    args = jc_get(d, v, "args");
    assert_true(args >= 0);
    switch (*p) {
    case 'X':
      tu_assert_us(d, v, "dur", 1234567);
      break;
    case 'I':
      tu_assert_str(d, v, "s", "g");
      break;
    case 'C':
      tu_assert_int(d, args, "a", 3);
      assert_true(jc_num(d, jc_get(d, args, "b")) == 0.25);
      continue;
    case 'c':
      tu_assert_int(d, args, "sync_id", 9);
      continue;
    case 'M':
      tu_assert_str(d, v, "name", "thread_name");
      tu_assert_str(d, args, "name", "worker");
      continue;
    case 's':
      tu_assert_str(d, jc_get(d, v, "id2"), "global", "0x5");
      break;
    case 't':
      tu_assert_str(d, jc_get(d, v, "id2"), "local", "0x5");
      break;
    case 'f':
      tu_assert_str(d, v, "id", "0x5");
      tu_assert_str(d, v, "bp", "e");
      break;
    case 'b': case 'n': case 'e': case 'N': case 'O': case 'D':
      tu_assert_str(d, v, "id", "0xabc");
      break;
    default:
      break;
    }
    tu_assert_str(d, v, "name", "ev");
    tu_assert_str(d, v, "cat", "cat");
    assert_int_equal(jc_len(d, args), 7);
    assert_int_equal(jc_int64(d, jc_get(d, args, "int"), &i64), 0);
    assert_int_equal(i64, -5);
    assert_int_equal(jc_uint64(d, jc_get(d, args, "uint"), &u64), 0);
    assert_true(u64 == (uint64_t)INT64_MAX);  /* the largest integer */
    assert_true(jc_num(d, jc_get(d, args, "dbl")) == 1.5);
    assert_int_equal(jc_type(d, jc_get(d, args, "yes")), JC_TRUE);
    tu_assert_str(d, args, "str", "q\"b\\s\n\xc3\xa9\t");
    assert_true(jc_get(d, args, "nil") >= 0);
    assert_int_equal(jc_type(d, jc_get(d, args, "nil")), JC_NULL);
    raw = jc_raw(d, jc_get(d, args, "js"), &n);
    assert_int_equal(n, strlen("{\"k\":[1,2,{\"x\":null}]}"));
    assert_memory_equal(raw, "{\"k\":[1,2,{\"x\":null}]}", n);
  }
  assert_int_equal(jc_next(d, v), -1);
  jc_free(d);
  tu_cleanup(path);
}

/* After every one of 200 commits the file is one complete gzip member
 * holding strict JSON with exactly the events emitted so far. */
static void every_commit(int commit)
{
  char *path = tu_tmppath(".json.gz");
  tw_options o = gz_opts(1024, commit, 1);
  tw_writer *w;
  unsigned n = 0;
  int err = 0;

  w = tw_open(path, &o, &err);
  assert_non_null(w);
  for (unsigned c = 0; c < 200; c++) {
    /* 1..7 events per commit; some commits also fill the small buffer. */
    for (unsigned k = 0; k < 1 + c % 7 + (c % 31 == 0 ? 40 : 0); k++)
      assert_int_equal(tu_emit(&G, w, n++), 0);
    assert_int_equal(tw_flush(w), 0);
    tu_check_file(&G, path, 1, 0, n);
  }
  assert_int_equal(tw_close(w), 0);
  tu_check_file(&G, path, 1, 0, n);
  tu_cleanup(path);
}

static void test_every_commit_inline(void **state)
{
  (void)state;
  every_commit(TW_COMMIT_INLINE);
}

static void test_every_commit_background(void **state)
{
  (void)state;
  every_commit(TW_COMMIT_BACKGROUND);
}

/* The object form's tail "\n]}" works the same. */
static void test_object_form(void **state)
{
  char *path = tu_tmppath(".json.gz");
  tw_options o = gz_opts(512, TW_COMMIT_AUTO, 6);
  tw_writer *w;
  (void)state;

  o.format = TW_FORMAT_OBJECT;
  w = tw_open(path, &o, NULL);
  assert_non_null(w);
  for (unsigned i = 0; i < 100; i++) {
    assert_int_equal(tu_emit(&G, w, i), 0);
    if (i % 10 == 9) {
      assert_int_equal(tw_flush(w), 0);
      tu_check_file(&G, path, 1, 1, i + 1);
    }
  }
  assert_int_equal(tw_close(w), 0);
  tu_check_file(&G, path, 1, 1, 100);
  tu_cleanup(path);
}

/* A string of n pseudo-random letters: compresses poorly. */
static char *random_letters(size_t n, uint32_t seed)
{
  char *s = malloc(n + 1);
  assert_non_null(s);
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    s[i] = (char)('a' + (seed >> 16) % 26);
  }
  s[n] = '\0';
  return s;
}

/* The smallest buffer with one-event commits, an event far larger than
 * the buffer (its compressed form larger than the sink's initial output
 * buffer), and commits with nothing new. */
static void test_tiny_buffers(void **state)
{
  char *path = tu_tmppath(".json.gz");
  tw_options o = gz_opts(TW_MIN_BUFFER_SIZE, TW_COMMIT_INLINE, 1);
  size_t big_len = 500 * 1000;
  char *big = random_letters(big_len, 1);
  tw_writer *w;
  jc_doc *d;
  jc_val evs, v;
  unsigned n = 0;
  size_t len1, len2;
  char *snap1, *snap2;
  (void)state;

  o.max_string = 1024 * 1024;
  /* The formatter wants room for the worst-case escaping (6 bytes per
   * input byte) before it writes a string. */
  o.max_event = 4 * 1024 * 1024;
  w = tw_open(path, &o, NULL);
  assert_non_null(w);
  for (; n < 100; n++) {
    assert_int_equal(tu_emit(&G, w, n), 0);
    assert_int_equal(tw_flush(w), 0);
  }
  tu_check_file(&G, path, 1, 0, n);

  /* Two commits in a row with no new event change nothing. */
  snap1 = tu_read_file(path, &len1);
  assert_int_equal(tw_flush(w), 0);
  assert_int_equal(tw_flush(w), 0);
  snap2 = tu_read_file(path, &len2);
  assert_int_equal(len1, len2);
  assert_memory_equal(snap1, snap2, len1);
  free(snap1);
  free(snap2);

  /* The huge event, between small ones. */
  {
    tw_arg a = tw_arg_strn("blob", big, big_len);
    assert_int_equal(tw_instant(w, "big", "huge", 'p', &a, 1), 0);
  }
  assert_true(file_size(path) > 250 * 1000);      /* committed on its own */
  for (; n < 200; n++)
    assert_int_equal(tu_emit(&G, w, n), 0);
  assert_int_equal(tw_flush(w), 0);
  assert_int_equal(tw_flush(w), 0);
  assert_int_equal(tw_close(w), 0);

  d = tu_load_trace_file(path, 1, 0);
  evs = tu_events(d);
  assert_int_equal(jc_len(d, evs), 1 + 200 + 1);
  v = jc_index(d, evs, 101);
  tu_assert_str(d, v, "name", "huge");
  tu_assert_str(d, jc_get(d, v, "args"), "blob", big);
  tu_check_event(&G, d, jc_index(d, evs, 100), 99);
  tu_check_event(&G, d, jc_index(d, evs, 102), 100);
  tu_check_event(&G, d, jc_index(d, evs, 201), 199);
  jc_free(d);
  free(big);
  tu_cleanup(path);
}

/* A compressible trace of n events, committed every 500 events, at level
 * (buffer 64 KiB).  Returns the file's size; the content is checked. */
static off_t write_level(const char *path, int level, unsigned n)
{
  tw_options o = gz_opts(64 * 1024, TW_COMMIT_AUTO, level);
  tw_writer *w = tw_open(path, &o, NULL);

  assert_non_null(w);
  for (unsigned i = 0; i < n; i++) {
    assert_int_equal(tu_emit(&G, w, i), 0);
    if (i % 500 == 499)
      assert_int_equal(tw_flush(w), 0);
  }
  assert_int_equal(tw_close(w), 0);
  tu_check_file(&G, path, 1, 0, n);
  return file_size(path);
}

static void test_levels(void **state)
{
  char *path = tu_tmppath(".json.gz");
  off_t size[10];
  (void)state;

  for (int level = 1; level <= 9; level++) {
    size[level] = write_level(path, level, 20000);
    print_message("level %d: %lld bytes\n", level, (long long)size[level]);
  }
  assert_true(size[9] <= size[1]);
  assert_true(size[6] <= size[1]);
  tu_cleanup(path);
}

/* With 64 KiB commits the sync flushes cost little: the file is within
 * 1.3x of zlib's one-shot compress2 at level 1 of the same bytes. */
static void test_ratio(void **state)
{
  char *path = tu_tmppath(".json.gz");
  tw_options o = gz_opts(64 * 1024, TW_COMMIT_AUTO, 1);
  tw_writer *w = tw_open(path, &o, NULL);
  uLongf clen;
  unsigned char *cbuf;
  size_t n;
  char *json;
  off_t gz;
  uint64_t ts = TS0;
  uint32_t seed = 7;
  (void)state;

  assert_non_null(w);
  for (unsigned i = 0; i < 100000; i++) {
    tw_arg args[2];
    seed = seed * 1103515245u + 12345u;
    args[0] = tw_arg_int("layer", (int64_t)(i / NNAMES % 32));
    args[1] = tw_arg_uint("bytes", (seed >> 8) % 65536u);
    ts += 500 + (seed >> 20) % 3000;
    assert_int_equal(tw_complete(w, "bench", names[i % NNAMES], ts,
                                 200 + (seed >> 12) % 2000, args, 2), 0);
  }
  assert_int_equal(tw_close(w), 0);
  gz = file_size(path);
  json = gunzip_file(path, 0, &n);
  clen = compressBound((uLong)n);
  cbuf = malloc(clen);
  assert_non_null(cbuf);
  assert_int_equal(compress2(cbuf, &clen, (const Bytef *)json, (uLong)n, 1),
                   Z_OK);
  print_message("ratio: %zu bytes of JSON, gzip sink %lld bytes, "
                "compress2 level 1 %lu bytes (%.3fx)\n", n, (long long)gz,
                (unsigned long)clen, (double)gz / (double)clen);
  assert_true((double)gz <= 1.3 * (double)clen);
  {
    jc_doc *d = tu_load_mem(json, n);
    assert_int_equal(jc_len(d, tu_events(d)), 100001);
    jc_free(d);
  }
  free(cbuf);
  free(json);
  tu_cleanup(path);
}

/* A pipe streams: after tw_close the bytes are one complete gzip stream
 * of strict JSON holding every event. */
static void test_pipe(void **state)
{
  int p[2];
  tu_pipe_reader r;
  tw_options o = gz_opts(4096, TW_COMMIT_AUTO, 1);
  tw_writer *w;
  char *buf;
  size_t len;
  (void)state;

  assert_int_equal(pipe(p), 0);
  tu_pipe_reader_start(&r, p[0]);
  w = tw_open_fd(p[1], &o, NULL);
  assert_non_null(w);
  for (unsigned i = 0; i < 5000; i++) {
    assert_int_equal(tu_emit(&G, w, i), 0);
    if (i % 1000 == 0)
      assert_int_equal(tw_flush(w), 0);
  }
  assert_int_equal(tw_close(w), 0);
  close(p[1]);                          /* the writer never closes it */
  buf = tu_pipe_reader_join(&r, &len);
  close(p[0]);
  tu_check_mem(&G, buf, len, 1, 0, 5000);
  free(buf);
}

/* A streamed commit reaches a pipe's reader at once, sync-flushed: what
 * the reader has inflates to every record so far (the tail comes only at
 * close). */
static void test_pipe_prompt(void **state)
{
  int p[2];
  tw_options o = gz_opts(64 * 1024, TW_COMMIT_INLINE, 9);
  tw_writer *w;
  unsigned char buf[65536];
  char *json, *full;
  size_t n, got = 0;
  int complete;
  jc_doc *d;
  (void)state;

  assert_int_equal(pipe(p), 0);
  w = tw_open_fd(p[1], &o, NULL);
  assert_non_null(w);
  for (unsigned i = 0; i < 20; i++)
    assert_int_equal(tu_emit(&G, w, i), 0);
  assert_int_equal(tw_flush(w), 0);
  assert_int_equal(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
  for (;;) {
    ssize_t k = read(p[0], buf + got, sizeof buf - got);
    if (k <= 0)
      break;
    got += (size_t)k;
  }
  assert_true(got > 10);
  json = gunzip_partial(buf, got, &n, &complete);
  assert_false(complete);
  full = malloc(n + strlen(TU_TAIL(0)) + 1);
  assert_non_null(full);
  memcpy(full, json, n);
  memcpy(full + n, TU_TAIL(0), strlen(TU_TAIL(0)));
  d = tu_load_mem(full, n + strlen(TU_TAIL(0)));
  tu_check_trace(&G, d, 20);
  jc_free(d);
  free(full);
  free(json);
  assert_int_equal(tw_close(w), 0);
  close(p[1]);
  close(p[0]);
}

/* The sync option (fdatasync after each commit) works in place and on a
 * pipe, where there is nothing to sync. */
static void test_sync_option(void **state)
{
  char *path = tu_tmppath(".json.gz");
  tw_options o = gz_opts(1024, TW_COMMIT_AUTO, 1);
  tu_pipe_reader r;
  tw_writer *w;
  char *buf;
  size_t len;
  int p[2];
  (void)state;

  o.flags |= TW_OPT_SYNC;
  w = tw_open(path, &o, NULL);
  assert_non_null(w);
  for (unsigned i = 0; i < 100; i++) {
    assert_int_equal(tu_emit(&G, w, i), 0);
    if (i % 10 == 0)
      assert_int_equal(tw_flush(w), 0);
  }
  assert_int_equal(tw_close(w), 0);
  tu_check_file(&G, path, 1, 0, 100);
  tu_cleanup(path);

  assert_int_equal(pipe(p), 0);
  tu_pipe_reader_start(&r, p[0]);
  w = tw_open_fd(p[1], &o, NULL);
  assert_non_null(w);
  for (unsigned i = 0; i < 100; i++)
    assert_int_equal(tu_emit(&G, w, i), 0);
  assert_int_equal(tw_flush(w), 0);
  assert_int_equal(tw_close(w), 0);
  close(p[1]);
  buf = tu_pipe_reader_join(&r, &len);
  close(p[0]);
  tu_check_mem(&G, buf, len, 1, 0, 100);
  free(buf);
}

/* An O_APPEND fd streams too, and the trace goes after what the file
 * held (here a first complete member: the result is a valid two-member
 * gzip file). */
static void test_append(void **state)
{
  char *path = tu_tmppath(".json.gz");
  tw_options o = gz_opts(1024, TW_COMMIT_AUTO, 1);
  tw_writer *w;
  int fd, complete;
  size_t len1, len, n;
  char *raw, *json;
  (void)state;

  /* A first trace, written in place. */
  w = tw_open(path, &o, NULL);
  assert_non_null(w);
  assert_int_equal(tu_emit(&G, w, 0), 0);
  assert_int_equal(tw_close(w), 0);
  len1 = (size_t)file_size(path);

  fd = open(path, O_WRONLY | O_APPEND);
  assert_true(fd >= 0);
  w = tw_open_fd(fd, &o, NULL);
  assert_non_null(w);
  for (unsigned i = 0; i < 300; i++)
    assert_int_equal(tu_emit(&G, w, i), 0);
  assert_int_equal(tw_flush(w), 0);
  /* Streaming: no tail yet, but every record so far is readable. */
  raw = tu_read_file(path, &len);
  json = gunzip_partial((unsigned char *)raw + len1, len - len1, &n,
                        &complete);
  assert_false(complete);
  assert_true(strstr(json, "\"i\":299}") != NULL);
  free(json);
  free(raw);
  assert_int_equal(tw_close(w), 0);
  assert_int_equal(close(fd), 0);

  raw = tu_read_file(path, &len);
  tu_check_mem(&G, raw, len1, 1, 0, 1);                  /* first member */
  tu_check_mem(&G, raw + len1, len - len1, 1, 0, 300);
  free(raw);
  tu_cleanup(path);
}

/* On a seekable fd the member starts at the fd's offset, and whatever
 * the file held after it is dropped. */
static void test_fd_offset(void **state)
{
  char *path = tu_tmppath(".json.gz");
  tw_options o = gz_opts(1024, TW_COMMIT_INLINE, 1);
  static const char prefix[] = "PREFIX\n";
  tw_writer *w;
  char junk[10000];
  int fd;
  size_t len, n;
  char *raw, *json;
  jc_doc *d;
  (void)state;

  memset(junk, 'J', sizeof junk);
  fd = open(path, O_RDWR);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, prefix, 7), 7);
  assert_int_equal(write(fd, junk, sizeof junk), (ssize_t)sizeof junk);
  assert_int_equal(lseek(fd, 7, SEEK_SET), 7);
  w = tw_open_fd(fd, &o, NULL);
  assert_non_null(w);
  for (unsigned i = 0; i < 50; i++)
    assert_int_equal(tu_emit(&G, w, i), 0);
  assert_int_equal(tw_close(w), 0);
  assert_int_equal(close(fd), 0);

  raw = tu_read_file(path, &len);
  assert_memory_equal(raw, prefix, 7);
  free(raw);
  json = gunzip_file(path, 7, &n);
  d = tu_load_mem(json, n);
  tu_check_trace(&G, d, 50);
  jc_free(d);
  free(json);
  tu_cleanup(path);
}

/* /dev/full: the head cannot be written, so the open fails with
 * -ENOSPC; and once a sink's writes start failing, the error is sticky
 * and tw_close returns it (the fd is swapped for /dev/full after open, in
 * streaming and in place mode, inline and in the background). */
static void test_dev_full(void **state)
{
  int full, err = 0;
  tw_options o = gz_opts(1024, TW_COMMIT_INLINE, 1);
  (void)state;

  assert_null(tw_open("/dev/full", &o, &err));
  assert_int_equal(err, -ENOSPC);
  full = open("/dev/full", O_WRONLY);
  assert_true(full >= 0);
  err = 0;
  assert_null(tw_open_fd(full, &o, &err));
  assert_int_equal(err, -ENOSPC);

  for (int mode = 0; mode < 4; mode++) {
    int commit = mode & 1 ? TW_COMMIT_BACKGROUND : TW_COMMIT_INLINE;
    char *path = NULL;
    int p[2] = { -1, -1 }, fd;
    tw_writer *w;
    int rc = 0;

    o = gz_opts(1024, commit, 1);
    if (mode & 2) {
      path = tu_tmppath(".json.gz");
      fd = open(path, O_WRONLY);
    } else {
      assert_int_equal(pipe(p), 0);
      assert_int_equal(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
      fd = p[1];
    }
    assert_true(fd >= 0);
    w = tw_open_fd(fd, &o, NULL);
    assert_non_null(w);
    assert_int_equal(dup2(full, fd), fd);
    for (unsigned i = 0; i < 100 && rc == 0; i++)
      rc = tu_emit(&G, w, i);
    if (rc == 0)
      rc = tw_flush(w);
    assert_int_equal(rc, -ENOSPC);
    assert_int_equal(tu_emit(&G, w, 1000), -ENOSPC);
    assert_int_equal(tw_flush(w), -ENOSPC);
    assert_int_equal(tw_errcode(w), -ENOSPC);
    assert_int_equal(tw_close(w), -ENOSPC);
    close(fd);
    if (p[0] >= 0)
      close(p[0]);
    tu_cleanup(path);
  }
  close(full);
}

/* A commit that fails half-way (the file size limit) leaves the file at
 * the last commit, byte for byte, and the error sticky. */
static void test_failed_commit_rollback(void **state)
{
  char *path = tu_tmppath(".json.gz");
  tw_options o = gz_opts(64 * 1024, TW_COMMIT_INLINE, 1);
  char *blob = random_letters(20000, 3);
  struct rlimit old, lim;
  void (*old_handler)(int);
  tw_writer *w;
  size_t len1, len2;
  char *snap1, *snap2;
  int rc = 0;
  (void)state;

  w = tw_open(path, &o, NULL);
  assert_non_null(w);
  for (unsigned i = 0; i < 100; i++)
    assert_int_equal(tu_emit(&G, w, i), 0);
  assert_int_equal(tw_flush(w), 0);
  snap1 = tu_read_file(path, &len1);

  assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
  lim = old;
  lim.rlim_cur = len1 + 4096;       /* room for part of the next commit */
  old_handler = signal(SIGXFSZ, SIG_IGN);
  assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
  for (unsigned i = 0; i < 3 && rc == 0; i++) {
    tw_arg a = tw_arg_str("blob", blob);
    rc = tw_instant(w, "big", "incompressible", 't', &a, 1);
  }
  if (rc == 0)
    rc = tw_flush(w);
  assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
  signal(SIGXFSZ, old_handler);

  assert_int_equal(rc, -EFBIG);
  assert_int_equal(tw_flush(w), -EFBIG);
  snap2 = tu_read_file(path, &len2);
  assert_int_equal(len1, len2);
  assert_memory_equal(snap1, snap2, len1);
  assert_int_equal(tw_close(w), -EFBIG);
  tu_check_file(&G, path, 1, 0, 100);
  free(snap1);
  free(snap2);
  free(blob);
  tu_cleanup(path);
}

/* After fork the child's writer refuses (TW_EFORKED) and writes nothing;
 * the parent goes on. */
static void test_forked_child_refused_member_untouched(void **state)
{
  char *path = tu_tmppath(".json.gz");
  tw_options o = gz_opts(4096, TW_COMMIT_AUTO, 1);   /* background */
  tw_writer *w;
  size_t len1, len2;
  char *snap1, *snap2;
  pid_t pid;
  int status;
  (void)state;

  w = tw_open(path, &o, NULL);
  assert_non_null(w);
  for (unsigned i = 0; i < 10; i++)
    assert_int_equal(tu_emit(&G, w, i), 0);
  assert_int_equal(tw_flush(w), 0);
  assert_int_equal(tu_emit(&G, w, 10), 0);           /* buffered, uncommitted */
  snap1 = tu_read_file(path, &len1);

  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    int bad = 0;
    bad |= tu_emit(&G, w, 99) != TW_EFORKED;
    bad |= tw_flush(w) != TW_EFORKED;
    bad |= tw_close(w) != 0;
    free(snap1);                /* for valgrind's leak check in the child */
    free(path);
    _exit(bad);
  }
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  snap2 = tu_read_file(path, &len2);
  assert_int_equal(len1, len2);
  assert_memory_equal(snap1, snap2, len1);

  for (unsigned i = 11; i < 20; i++)
    assert_int_equal(tu_emit(&G, w, i), 0);
  assert_int_equal(tw_close(w), 0);
  tu_check_file(&G, path, 1, 0, 20);
  free(snap1);
  free(snap2);
  tu_cleanup(path);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_roundtrip),
    cmocka_unit_test(test_every_commit_inline),
    cmocka_unit_test(test_every_commit_background),
    cmocka_unit_test(test_object_form),
    cmocka_unit_test(test_tiny_buffers),
    cmocka_unit_test(test_levels),
    cmocka_unit_test(test_ratio),
    cmocka_unit_test(test_pipe),
    cmocka_unit_test(test_pipe_prompt),
    cmocka_unit_test(test_sync_option),
    cmocka_unit_test(test_append),
    cmocka_unit_test(test_fd_offset),
    cmocka_unit_test(test_dev_full),
    cmocka_unit_test(test_failed_commit_rollback),
    cmocka_unit_test(test_forked_child_refused_member_untouched),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
