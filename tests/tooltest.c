/* tooltest.c -- helpers of the tests of the command-line tool's code
 * (see tooltest.h) */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mkdtemp, st_mtim under -std=c99 */
#endif

#include "tooltest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

/* ========================================================= files */

/* A private directory, so that a stray temporary file is noticed. */
char *tt_make_dir(void)
{
  const char *base = getenv("TMPDIR");
  char *dir;
  size_t n;

  if (!base || !*base)
    base = "/tmp";
  n = strlen(base) + 32;
  dir = malloc(n);
  assert_non_null(dir);
  snprintf(dir, n, "%s/twrepair-XXXXXX", base);
  assert_non_null(mkdtemp(dir));
  return dir;
}

/* The same in TW_TEST_FAST_DIR (tests/deadline.sh: a directory of the
 * test's own in /dev/shm) or in /dev/shm when there is one, for tests that
 * repair hundreds of files (each repair fsyncs its output and its
 * directory) or write large ones: what they test does not depend on the
 * file system. */
char *tt_make_fast_dir(void)
{
  const char *base = getenv("TW_TEST_FAST_DIR");
  char *dir;
  size_t n;

  if (!base || !*base) {
    if (getenv("TMPDIR") || access("/dev/shm", W_OK) != 0)
      return tt_make_dir();
    base = "/dev/shm";
  }
  n = strlen(base) + 32;
  dir = malloc(n);
  assert_non_null(dir);
  snprintf(dir, n, "%s/twrepair-XXXXXX", base);
  assert_non_null(mkdtemp(dir));
  return dir;
}

/* dir/name, malloc'ed. */
char *tt_in_dir(const char *dir, const char *name)
{
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = malloc(n);

  assert_non_null(p);
  snprintf(p, n, "%s/%s", dir, name);
  return p;
}

/* How many entries dir holds (. and .. excepted). */
int tt_count_files(const char *dir)
{
  DIR *d = opendir(dir);
  struct dirent *e;
  int n = 0;

  assert_non_null(d);
  while ((e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
      n++;
  closedir(d);
  return n;
}

/* Remove dir and every file in it; free the name. */
void tt_remove_dir(char *dir)
{
  DIR *d = opendir(dir);
  struct dirent *e;

  assert_non_null(d);
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
      char *p = tt_in_dir(dir, e->d_name);
      assert_int_equal(unlink(p), 0);
      free(p);
    }
  }
  closedir(d);
  assert_int_equal(rmdir(dir), 0);
  free(dir);
}

void tt_write_bytes(const char *path, const void *data, size_t len)
{
  FILE *f = fopen(path, "wb");

  assert_non_null(f);
  if (len)
    assert_int_equal(fwrite(data, 1, len, f), len);
  assert_int_equal(fclose(f), 0);
}

/* The file's bytes must be exactly data[0..len). */
void tt_assert_file_is(const char *path, const void *data, size_t len)
{
  size_t n;
  char *buf = tu_read_file(path, &n);

  assert_int_equal(n, len);
  if (len)
    assert_memory_equal(buf, data, len);
  free(buf);
}

/* Options for the test traces. */
void tt_trace_options(tw_options *o, int object_form)
{
  assert_int_equal(tw_options_init(o), 0);
  o->process_name = "repair \"test\"";
  o->sink = TW_SINK_FILE;
  o->format = object_form ? TW_FORMAT_OBJECT : TW_FORMAT_ARRAY;
  o->buffer_size = 4096;          /* many commits */
}

/* Emit event number i, of several phases and argument types. */
void tt_emit_event(tw_writer *w, size_t i)
{
  char name[64];
  tw_arg args[7];
  tw_event ev;

  snprintf(name, sizeof name, "event %zu", i);
  switch (i % 4) {
  case 0:
    args[0] = tw_arg_int("i", (int64_t)i);
    args[1] = tw_arg_str("s", "quote \" backslash \\ tab \t newline \n "
                         "é €");
    args[2] = tw_arg_double("d", 0.25 * (double)i);
    args[3] = tw_arg_bool("b", (int)(i & 1));
    args[4] = tw_arg_null("n");
    args[5] = tw_arg_json("j", "{\"k\": [1, 2, {\"x\": null}]}");
    args[6] = tw_arg_uint("u", UINT64_MAX - i);
    assert_int_equal(tw_complete(w, "cat,other", name, 1000000 + i * 1000,
                                 500, args, 7), 0);
    break;
  case 1:
    args[0] = tw_arg_str("where", "here");
    assert_int_equal(tw_instant(w, "cat", name, 'g', args, 1), 0);
    break;
  case 2:
    args[0] = tw_arg_int("queue", (int64_t)(i * 7 % 13));
    args[1] = tw_arg_double("load", 1.5);
    assert_int_equal(tw_counter(w, "cat", "counter", args, 2), 0);
    break;
  default:
    memset(&ev, 0, sizeof ev);
    ev.ph = 'b';
    ev.name = name;
    ev.cat = "async";
    ev.has = TW_HAS_ID | TW_HAS_TS | TW_HAS_PID | TW_HAS_TID;
    ev.id = i;
    ev.ts = 5000000 + i;
    ev.pid = 42;
    ev.tid = 43;
    assert_int_equal(tw_emit(w, &ev), 0);
    break;
  }
}

/* Write a trace of nevents events (plus the process_name record) with the
 * library.  big: the size of one string argument of the last event (0:
 * none). */
void tt_write_trace(const char *path, int object_form, size_t nevents,
                    size_t big)
{
  tw_options o;
  tw_writer *w;
  int err = 0;

  tt_trace_options(&o, object_form);
  if (big) {
    o.max_event = 8 * big + 64 * 1024;  /* room for the worst case */
    o.max_string = big + 1;
    o.buffer_size = 64 * 1024;
  }
  w = tw_open(path, &o, &err);
  if (!w)
    fail_msg("tw_open %s: %s", path, tw_strerror(err));
  for (size_t i = 0; i < nevents; i++)
    tt_emit_event(w, i);
  if (big) {
    char *s = malloc(big + 1);
    tw_arg a;
    assert_non_null(s);
    for (size_t i = 0; i < big; i++)
      s[i] = (char)('a' + i % 26);
    s[big] = '\0';
    a = tw_arg_str("big", s);
    assert_int_equal(tw_complete(w, "cat", "big", 7000, 1, &a, 1), 0);
    free(s);
  }
  assert_int_equal(tw_close(w), 0);
}


/* buf[0..len) parsed strictly as it is: the tools see every record, the
 * document's clock record too (tu_load_mem would leave it out). */
jc_doc *tt_load_raw(const char *buf, size_t len)
{
  char err[256];
  jc_doc *d = jc_parse(buf, len, err, sizeof err);

  if (!d)
    fail_msg("not strict JSON: %s", err);
  return d;
}

void tt_records_of(const char *buf, size_t len, tt_records *r)
{
  jc_doc *d = tt_load_raw(buf, len);
  jc_val ev = tu_events(d), v;
  const char *base = jc_raw(d, jc_root(d), NULL);
  size_t i = 0;

  r->n = jc_len(d, ev);
  r->raw = calloc(r->n, sizeof *r->raw);
  r->rawlen = calloc(r->n, sizeof *r->rawlen);
  r->start = calloc(r->n, sizeof *r->start);
  r->end = calloc(r->n, sizeof *r->end);
  assert_true(r->raw && r->rawlen && r->start && r->end);
  for (v = jc_first(d, ev); v >= 0; v = jc_next(d, v), i++) {
    size_t n;
    const char *p = jc_raw(d, v, &n);
    assert_int_equal(jc_type(d, v), JC_OBJECT);
    r->raw[i] = malloc(n);
    assert_non_null(r->raw[i]);
    memcpy(r->raw[i], p, n);
    r->rawlen[i] = n;
    r->start[i] = (size_t)(p - base);
    r->end[i] = r->start[i] + n;
  }
  assert_int_equal(i, r->n);
  /* The library's layout: the first record is the process_name. */
  tu_assert_str(d, jc_first(d, ev), "name", "process_name");
  jc_free(d);
}

void tt_records_free(tt_records *r)
{
  for (size_t i = 0; i < r->n; i++)
    free(r->raw[i]);
  free(r->raw);
  free(r->rawlen);
  free(r->start);
  free(r->end);
  memset(r, 0, sizeof *r);
}

/* The tail repair writes: the file ends exactly at the bracket. */
const char *tt_out_tail(int object_form)
{
  return object_form ? "\n]}" : "\n]";
}

/* The length of the library's tail, which must end buf[0..len): "\n]"
 * (or "\n]}"), nothing after the bracket.  (0.1's "\n]\n" is made by
 * the tests that need it.) */
size_t tt_lib_tail_len(const char *buf, size_t len, int object_form)
{
  size_t tl = strlen(tt_out_tail(object_form));

  assert_true(len >= tl);
  assert_memory_equal(buf + len - tl, tt_out_tail(object_form), tl);
  return tl;
}

/* json[0..len) must be strict JSON in the library's layout holding exactly
 * the first n records of exp, byte for byte, and end exactly with the
 * tail. */
void tt_assert_trace_mem(const char *json, size_t len, const tt_records *exp,
                         size_t n, int object_form)
{
  jc_doc *d = tt_load_raw(json, len);
  jc_val ev = tu_events(d), v;
  const char *tail = tt_out_tail(object_form);
  const char *head = object_form ? "{\"traceEvents\":[\n" : "[\n";
  size_t i = 0;

  assert_int_equal(jc_len(d, ev), n);
  for (v = jc_first(d, ev); v >= 0; v = jc_next(d, v), i++) {
    size_t rl;
    const char *r = jc_raw(d, v, &rl);
    assert_true(i < exp->n);
    assert_int_equal(rl, exp->rawlen[i]);
    assert_memory_equal(r, exp->raw[i], rl);
  }
  assert_int_equal(i, n);
  if (n > 0)
    tu_assert_str(d, jc_first(d, ev), "name", "process_name");
  jc_free(d);
  /* One record per line: head, "{...}" lines ending in "," but the last,
   * tail. */
  assert_true(len >= strlen(head) + strlen(tail));
  assert_memory_equal(json, head, strlen(head));
  assert_memory_equal(json + len - strlen(tail), tail, strlen(tail));
}

/* The same for a file. */
void tt_assert_trace_file(const char *path, const tt_records *exp, size_t n,
                          int object_form)
{
  size_t len;
  char *buf = tu_read_file(path, &len);
  jc_doc *d = tu_load(path);       /* names the file on failure */

  jc_free(d);
  tt_assert_trace_mem(buf, len, exp, n, object_form);
  free(buf);
}


tt_snap tt_take_snap(const char *path)
{
  struct stat st;
  tt_snap s;

  assert_int_equal(stat(path, &st), 0);
  s.ino = st.st_ino;
  s.size = st.st_size;
  s.mtime = st.st_mtim;
  s.mode = st.st_mode;
  return s;
}

void tt_assert_same_snap(const tt_snap *a, const tt_snap *b)
{
  assert_int_equal(a->ino, b->ino);
  assert_int_equal(a->size, b->size);
  assert_int_equal(a->mtime.tv_sec, b->mtime.tv_sec);
  assert_int_equal(a->mtime.tv_nsec, b->mtime.tv_nsec);
  assert_int_equal(a->mode, b->mode);
}


/* data[0..len) as one gzip member (zlib, level 6); *out_len set. */
unsigned char *tt_gz_member(const void *data, size_t len, size_t *out_len)
{
  z_stream z;
  unsigned char *out;
  uLong bound;

  memset(&z, 0, sizeof z);
  assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 16 + 15, 8,
                                Z_DEFAULT_STRATEGY), Z_OK);
  bound = deflateBound(&z, (uLong)len) + 64;
  out = malloc(bound);
  assert_non_null(out);
  z.next_in = (unsigned char *)data;
  z.avail_in = (uInt)len;
  z.next_out = out;
  z.avail_out = (uInt)bound;
  assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
  *out_len = z.total_out;
  deflateEnd(&z);
  return out;
}

/* Inflate gz[0..len) as far as it goes.  *complete: the member ended
 * (Z_STREAM_END) exactly at the end of the input.  Returns the text
 * (malloc'ed, NUL-terminated), *out_len its length. */
char *tt_gz_inflate(const unsigned char *gz, size_t len, size_t *out_len,
                    int *complete)
{
  z_stream z;
  size_t cap = 4096, n = 0;
  char *out = malloc(cap);
  int zr;

  assert_non_null(out);
  memset(&z, 0, sizeof z);
  assert_int_equal(inflateInit2(&z, 16 + 15), Z_OK);
  z.next_in = (unsigned char *)gz;
  z.avail_in = (uInt)len;
  for (;;) {
    if (cap - n < 4096) {
      cap *= 2;
      out = realloc(out, cap);
      assert_non_null(out);
    }
    z.next_out = (unsigned char *)out + n;
    z.avail_out = (uInt)(cap - n - 1);
    zr = inflate(&z, Z_NO_FLUSH);
    n = (size_t)((char *)z.next_out - out);
    if (zr != Z_OK)
      break;
  }
  *complete = zr == Z_STREAM_END && z.avail_in == 0;
  inflateEnd(&z);
  out[n] = '\0';
  *out_len = n;
  return out;
}

/* A file that must be one complete gzip member of a strict trace holding
 * exactly the first n records of exp. */
void tt_assert_gzip_trace_file(const char *path, const tt_records *exp,
                               size_t n, int object_form)
{
  size_t len, json_len;
  int complete;
  char *gz = tu_read_file(path, &len);
  char *json;

  assert_true(len >= 18);
  assert_int_equal((unsigned char)gz[0], 0x1f);
  assert_int_equal((unsigned char)gz[1], 0x8b);
  json = tt_gz_inflate((unsigned char *)gz, len, &json_len, &complete);
  assert_true(complete);
  tt_assert_trace_mem(json, json_len, exp, n, object_form);
  free(json);
  free(gz);
}

/* How many records of exp are complete in a prefix of cut bytes. */
size_t tt_complete_in(const tt_records *exp, size_t cut)
{
  size_t k = 0;

  while (k < exp->n && exp->end[k] <= cut)
    k++;
  return k;
}

/* The seed of the random tests: tu_seed's (testutil.h). */
unsigned tt_seed(void)
{
  return tu_seed("tools test");
}

/* =================================================== commands, time */

int tt_run(int (*fn)(int, char **), int argc, char **argv,
           const char *out_path, const char *err_path)
{
  int saved_out, saved_err, out_fd, err_fd, status;
  const int flags = O_WRONLY | O_CREAT | O_TRUNC;

  fflush(stdout);
  fflush(stderr);
  saved_out = dup(1);
  saved_err = dup(2);
  out_fd = open(out_path ? out_path : "/dev/null", flags, 0600);
  err_fd = open(err_path ? err_path : "/dev/null", flags, 0600);
  assert_true(saved_out >= 0 && saved_err >= 0 && out_fd >= 0 &&
              err_fd >= 0);
  dup2(out_fd, 1);
  dup2(err_fd, 2);
  status = fn(argc, argv);
  fflush(stdout);
  fflush(stderr);
  dup2(saved_out, 1);
  dup2(saved_err, 2);
  close(saved_out);
  close(saved_err);
  close(out_fd);
  close(err_fd);
  return status;
}

static const char *volatile program_what = "";
static const char *volatile guard_what = "";

static void on_alarm(int sig)
{
  static const char msg[] = "timed out: ";
  const char *what = guard_what[0] ? guard_what : program_what;
  (void)sig;
  (void)!write(2, msg, sizeof msg - 1);
  (void)!write(2, what, strlen(what));
  (void)!write(2, "\n", 1);
  _exit(1);
}

void tt_deadline(const char *what)
{
  program_what = what;
  signal(SIGALRM, on_alarm);
}

unsigned tt_guard_begin(unsigned seconds, const char *what)
{
  guard_what = what;
  return alarm(seconds);
}

void tt_guard_end(unsigned left)
{
  alarm(left);
  guard_what = "";
}

int tt_run_argv(int (*fn)(int, char **), char **argv, const char *out_path,
                const char *err_path)
{
  int argc = 0;

  while (argv[argc])
    argc++;
  return tt_run(fn, argc, argv, out_path, err_path);
}

jc_doc *tt_load_file(const char *path)
{
  size_t len;
  char *buf = tu_read_file(path, &len);
  jc_doc *d = tt_load_raw(buf, len);

  free(buf);
  return d;
}
