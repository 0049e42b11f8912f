/* test_rotate.c -- rotation: rotate=, rotate_every=, keep=
 *
 * Every file a rotated writer leaves is read back through the strict
 * checker (gzip files through zlib first, as one complete member): each
 * must be a complete trace on its own, begin with the process name and
 * carry the metadata emitted before it, and together, in order, the files
 * must hold every event exactly once.
 */
#include "numbered.h"
#include "gunzip.h"
#include "document.h"
#include "rotate.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------- helpers */

/* A new empty directory and the trace path name in it. */
typedef struct {
  char dir[256];
  char path[320];
} place;

static void place_new(place *p, const char *name)
{
  const char *tmp = getenv("TMPDIR");

  snprintf(p->dir, sizeof p->dir, "%s/twrot-XXXXXX",
           tmp && *tmp ? tmp : "/tmp");
  assert_non_null(mkdtemp(p->dir));
  snprintf(p->path, sizeof p->path, "%s/%s", p->dir, name);
}

/* The name of finished file n (0: the live file). */
static void file_name(const place *p, unsigned long n, char *out,
                      size_t size)
{
  if (n == 0)
    snprintf(out, size, "%s", p->path);
  else
    assert_int_equal(tw__rotated_name(out, size, p->path, n), 0);
}

static int exists(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0;
}

/* Remove the files 0..last and the directory. */
static void place_remove(place *p, unsigned long last)
{
  char name[400];

  for (unsigned long n = 0; n <= last; n++) {
    file_name(p, n, name, sizeof name);
    unlink(name);
  }
  assert_int_equal(rmdir(p->dir), 0);
}

/* The events of these tests (numbered.h), from any thread. */
static const tu_family R = { "t", "rotating", NULL, 0, -1, 0 };

/* Parse a trace file strictly (the array form, ending exactly with its
 * tail); gz: it must be one complete gzip member. */
static jc_doc *load(const char *path, int gz)
{
  return tu_load_trace_file(path, gz, 0);
}

/* Checks the first records of a file: the process name first, then
 * (when thread_name is not NULL) this thread's name among the metadata. */
static void assert_begins_complete(const jc_doc *d, const char *process,
                                   const char *thread_name)
{
  jc_val ev = jc_first(d, tu_events(d));
  int found = thread_name == NULL;

  assert_true(ev >= 0);
  tu_assert_str(d, ev, "ph", "M");
  tu_assert_str(d, ev, "name", "process_name");
  assert_true(jc_streq(d, jc_get(d, jc_get(d, ev, "args"), "name"),
                       process));
  for (; ev >= 0 && jc_streq(d, jc_get(d, ev, "ph"), "M");
       ev = jc_next(d, ev))
    if (thread_name && jc_streq(d, jc_get(d, ev, "name"), "thread_name") &&
        jc_streq(d, jc_get(d, jc_get(d, ev, "args"), "name"), thread_name))
      found = 1;
  assert_true(found);
}

/* Append the "i" arg of every X event of thread tid in d to seen[], in
 * file order, each checked field by field as event i of R; *n counts
 * them.  (tid < 0: every thread.) */
static void collect(const jc_doc *d, int64_t tid, int64_t *seen, size_t cap,
                    size_t *n)
{
  for (jc_val ev = jc_first(d, tu_events(d)); ev >= 0; ev = jc_next(d, ev)) {
    int64_t t, i;
    if (!jc_streq(d, jc_get(d, ev, "ph"), "X"))
      continue;
    assert_int_equal(jc_int64(d, jc_get(d, ev, "tid"), &t), 0);
    if (tid >= 0 && t != tid)
      continue;
    assert_int_equal(jc_int64(d, jc_get(d, jc_get(d, ev, "args"), "i"), &i),
                     0);
    tu_check_event(&R, d, ev, (int)i);
    assert_true(*n < cap);
    seen[(*n)++] = i;
  }
}

static tw_writer *open_with(const char *path, const char *options)
{
  tw_options o;
  char err[256];
  int rc = 0;
  tw_writer *w;

  tw_options_init(&o);
  o.process_name = "rotating";
  assert_int_equal(tw_options_parse(&o, options, err, sizeof err), 0);
  w = tw_open(path, &o, &rc);
  if (!w)
    fail_msg("tw_open %s with %s: %s", path, options, tw_strerror(rc));
  return w;
}

/* Name thread tid (0: the calling thread). */
static void name_thread_of(tw_writer *w, int64_t tid, const char *name)
{
  tw_arg a = tw_arg_str("name", name);
  tw_event ev;

  memset(&ev, 0, sizeof ev);
  ev.ph = 'M';
  ev.name = "thread_name";
  if (tid) {
    ev.has = TW_HAS_TID;
    ev.tid = tid;
  }
  ev.args = &a;
  ev.nargs = 1;
  assert_int_equal(tw_emit(w, &ev), 0);
}

static void name_thread(tw_writer *w, const char *name)
{
  name_thread_of(w, 0, name);
}

/* ------------------------------------------------------------- tests */

static void test_names(void **state)
{
  static const struct { const char *path, *want; unsigned long n; } cases[] = {
    { "trace.json", "trace.000001.json", 1 },
    { "/var/tmp/srv-1.json.gz", "/var/tmp/srv-1.000012.json.gz", 12 },
    { "t.gz", "t.000003.gz", 3 },
    { "x.log", "x.000001.log", 1 },
    { "dir.d/trace", "dir.d/trace.000001", 1 },
    { ".hidden", ".hidden.000002", 2 },
    { "a.json", "a.1234567.json", 1234567 },
  };
  char out[64];
  (void)state;

  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    assert_int_equal(tw__rotated_name(out, sizeof out, cases[i].path,
                                      cases[i].n), 0);
    assert_string_equal(out, cases[i].want);
  }
  assert_int_equal(tw__rotated_name(out, 10, "trace.json", 1),
                   -ENAMETOOLONG);
}

static void test_options(void **state)
{
  tw_options o;
  char err[256];
  (void)state;

  tw_options_init(&o);
  assert_int_equal(o.rotate_size, 0);
  assert_int_equal(o.rotate_interval_ns, 0);
  assert_int_equal(o.rotate_keep, 0);
  assert_int_equal(tw_options_parse(&o, "rotate=64MiB,rotate_every=1h,"
                                    "keep=5", err, sizeof err), 0);
  assert_int_equal(o.rotate_size, 64u << 20);
  assert_int_equal(o.rotate_interval_ns, 3600000000000ull);
  assert_int_equal(o.rotate_keep, 5);
  assert_int_equal(tw_options_parse(&o, "rotate=off,rotate_every=off,"
                                    "keep=all", err, sizeof err), 0);
  assert_int_equal(o.rotate_size, 0);
  assert_int_equal(o.rotate_interval_ns, 0);
  assert_int_equal(o.rotate_keep, 0);
  assert_int_equal(tw_options_parse(&o, "rotate=100", err, sizeof err),
                   TW_EOPTION);
  assert_non_null(strstr(err, "'100' for 'rotate'"));
  assert_int_equal(tw_options_parse(&o, "rotate_every=soon", err,
                                    sizeof err), TW_EOPTION);
  assert_non_null(strstr(err, "'soon' for 'rotate_every'"));
  assert_int_equal(tw_options_parse(&o, "keep=0", err, sizeof err),
                   TW_EOPTION);
  assert_non_null(strstr(err, "'0' for 'keep'"));
  assert_int_equal(tw_options_parse(&o, "keep=2k", err, sizeof err),
                   TW_EOPTION);
  o.rotate_size = 100;                        /* below TW_MIN_ROTATE_SIZE */
  int rc = 0;
  assert_null(tw_open("/dev/null", &o, &rc));
  assert_int_equal(rc, TW_EOPTION);
}

/* Rotation needs the path: the fd and stream writers refuse it. */
static void test_needs_path(void **state)
{
  tw_options o;
  FILE *f = tmpfile();
  int rc = 0;
  (void)state;

  assert_non_null(f);
  tw_options_init(&o);
  o.rotate_size = 1u << 20;
  assert_null(tw_open_fd(fileno(f), &o, &rc));
  assert_int_equal(rc, TW_EOPTION);
  rc = 0;
  assert_null(tw_open_stream(f, &o, &rc));
  assert_int_equal(rc, TW_EOPTION);
  o.rotate_size = 0;
  o.rotate_interval_ns = 1000;
  rc = 0;
  assert_null(tw_open_fd(fileno(f), &o, &rc));
  assert_int_equal(rc, TW_EOPTION);
  fclose(f);
  /* A path that is not a regular file is never renamed. */
  rc = 0;
  assert_null(tw_open("/dev/null", &o, &rc));
  assert_int_equal(rc, TW_ESINK);
  assert_true(exists("/dev/null"));
}

/* By size, on each sink: every file complete, the events all there once,
 * in order, the byte count that of the files. */
static void rotate_by_size(const char *name, const char *options, int gz)
{
  enum { N = 6000 };
  static int64_t seen[N];
  size_t nseen = 0, tail_len = strlen(TU_TAIL(0));
  uint64_t out_total = 0;
  tw_stats st;
  place p;
  char fname[400];
  tw_writer *w;

  place_new(&p, name);
  w = open_with(p.path, options);
  name_thread(w, "main-t");
  for (int i = 0; i < N; i++)
    assert_int_equal(tu_emit(&R, w, i), 0);
  assert_int_equal(tw_flush(w), 0);
  assert_int_equal(tw_get_stats(w, &st), 0);
  assert_int_equal(tw_close(w), 0);
  assert_true(st.rotations >= 5);
  for (unsigned long n = 1; n <= st.rotations + 1; n++) {
    jc_doc *d;
    struct stat sb;
    file_name(&p, n <= st.rotations ? n : 0, fname, sizeof fname);
    d = load(fname, gz);
    assert_begins_complete(d, "rotating", "main-t");
    collect(d, -1, seen, N, &nseen);
    jc_free(d);
    if (!gz)
      tu_assert_tail(fname, 0);
    assert_int_equal(stat(fname, &sb), 0);
    out_total += (uint64_t)sb.st_size;
  }
  file_name(&p, st.rotations + 1, fname, sizeof fname);
  assert_false(exists(fname));
  assert_int_equal(nseen, N);
  for (size_t i = 0; i < N; i++)
    assert_int_equal(seen[i], (int64_t)i);
  /* Output bytes: the files' sizes less their tails (gzip: the end
   * block and trailer, 5 + 2 + 8 bytes each). */
  if (gz)
    tail_len = 5 + strlen(TU_TAIL(0)) + 8;
  assert_int_equal(st.output_bytes,
                   out_total - tail_len * (st.rotations + 1));
  place_remove(&p, st.rotations);
}

/* Every file in p's directory, the live one, the finished ones and a
 * prepared .next alike, is strict JSON (gzip: inflated, one complete
 * member) whose last byte is the closing bracket: the tail TU_TAIL and
 * nothing after it, not even a newline, which Perfetto refuses when it
 * falls into a later read chunk.  Returns the number of files. */
static unsigned assert_files_end_at_bracket(const place *p, int object_form,
                                            int gz)
{
  size_t tl = strlen(TU_TAIL(object_form));
  unsigned files = 0;
  struct dirent *e;
  DIR *dir = opendir(p->dir);

  assert_non_null(dir);
  while ((e = readdir(dir)) != NULL) {
    char name[600];
    size_t len, jlen;
    char *bytes, *json;

    if (e->d_name[0] == '.')
      continue;
    snprintf(name, sizeof name, "%s/%s", p->dir, e->d_name);
    bytes = tu_read_file(name, &len);
    json = bytes;
    jlen = len;
    if (gz && !(json = tu_gunzip(bytes, len, &jlen)))
      fail_msg("%s: not one complete gzip member", name);
    if (jlen < tl || memcmp(json + jlen - tl, TU_TAIL(object_form), tl))
      fail_msg("%s: %zu bytes of JSON that do not end with the tail, "
               "the last '%c'", name, jlen, jlen ? json[jlen - 1] : ' ');
    jc_free(tu_load_mem(json, jlen));
    if (json != bytes)
      free(json);
    free(bytes);
    files++;
  }
  closedir(dir);
  return files;
}

/* The last byte of every file is the bracket, for every sink and form:
 * after tw_open, after every commit, across rotations, after tw_close. */
static void test_last_byte_is_bracket(void **state)
{
  static const struct {
    const char *name, *options;
    int gz;
  } sinks[] = {
    { "t.json", "buffer=4KiB,rotate=16KiB,keep=3", 0 },
    { "t.json", "sink=mmap,chunk=4KiB,rotate=16KiB,keep=3", 0 },
    { "t.json.gz", "buffer=4KiB,rotate=4KiB,keep=3", 1 },
  };
  (void)state;

  for (size_t k = 0; k < sizeof sinks / sizeof sinks[0]; k++)
    for (int object_form = 0; object_form < 2; object_form++) {
      char options[200];
      tw_stats st;
      place p;
      tw_writer *w;

      snprintf(options, sizeof options, "%s%s", sinks[k].options,
               object_form ? ",format=object" : "");
      print_message("  %s\n", options);
      place_new(&p, sinks[k].name);
      w = open_with(p.path, options);
      assert_int_equal(assert_files_end_at_bracket(&p, object_form,
                                                   sinks[k].gz), 1);
      for (int i = 0; i < 3000; i++) {
        assert_int_equal(tu_emit(&R, w, i), 0);
        if (i % 97 == 0) {
          assert_int_equal(tw_flush(w), 0);
          assert_files_end_at_bracket(&p, object_form, sinks[k].gz);
        }
      }
      assert_int_equal(tw_get_stats(w, &st), 0);
      assert_true(st.rotations >= 3);
      assert_int_equal(tw_close(w), 0);
      assert_int_equal(assert_files_end_at_bracket(&p, object_form,
                                                   sinks[k].gz), 4);
      place_remove(&p, st.rotations);
    }
}

static void test_size_file(void **state)
{
  (void)state;
  rotate_by_size("trace.json", "buffer=4KiB,rotate=16KiB", 0);
}

static void test_size_mmap(void **state)
{
  (void)state;
  rotate_by_size("trace.json", "sink=mmap,chunk=4KiB,rotate=16KiB", 0);
}

static void test_size_gzip(void **state)
{
  (void)state;
  rotate_by_size("trace.json.gz", "buffer=4KiB,rotate=4KiB", 1);
}

static void test_size_background(void **state)
{
  (void)state;
  rotate_by_size("trace.json", "buffer=4KiB,commit=background,rotate=16KiB",
                 0);
}

/* rotate_every: with an interval of 1ns every commit finishes the file,
 * so file n holds exactly the event emitted before the nth flush. */
static void test_every(void **state)
{
  enum { K = 5 };
  tw_stats st;
  place p;
  char fname[400];
  tw_writer *w;
  (void)state;

  place_new(&p, "every.json");
  w = open_with(p.path, "rotate_every=1ns");
  name_thread(w, "main-t");
  for (int i = 0; i < K; i++) {
    assert_int_equal(tu_emit(&R, w, i), 0);
    assert_int_equal(tw_flush(w), 0);
  }
  assert_int_equal(tw_get_stats(w, &st), 0);
  assert_int_equal(st.rotations, K);
  assert_int_equal(tw_close(w), 0);
  for (unsigned long n = 0; n <= K; n++) {
    int64_t seen[2];
    size_t nseen = 0;
    jc_doc *d;
    file_name(&p, n, fname, sizeof fname);
    d = tu_load(fname);
    assert_begins_complete(d, "rotating", "main-t");
    collect(d, -1, seen, 2, &nseen);
    if (n == 0) {
      assert_int_equal(nseen, 0);       /* the live file: metadata only */
    } else {
      assert_int_equal(nseen, 1);
      assert_int_equal(seen[0], (int64_t)n - 1);
    }
    jc_free(d);
  }
  place_remove(&p, K);
}

/* keep=2: only the two newest finished files stay. */
static void test_keep(void **state)
{
  enum { K = 6 };
  place p;
  char fname[400];
  tw_writer *w;
  (void)state;

  place_new(&p, "keep.json.gz");
  w = open_with(p.path, "rotate_every=1ns,keep=2");
  for (int i = 0; i < K; i++) {
    assert_int_equal(tu_emit(&R, w, i), 0);
    assert_int_equal(tw_flush(w), 0);
  }
  assert_int_equal(tw_close(w), 0);
  for (unsigned long n = 1; n <= K; n++) {
    file_name(&p, n, fname, sizeof fname);
    assert_int_equal(exists(fname), n > K - 2);
    if (n > K - 2) {
      int64_t seen[2];
      size_t nseen = 0;
      jc_doc *d = load(fname, 1);
      collect(d, -1, seen, 2, &nseen);
      assert_int_equal(nseen, 1);
      assert_int_equal(seen[0], (int64_t)n - 1);
      jc_free(d);
    }
  }
  file_name(&p, 0, fname, sizeof fname);
  jc_free(load(fname, 1));
  place_remove(&p, K);
}

/* The metadata repeated in a new file: the latest value per key, once;
 * bounded when there is too much of it, the newest kept. */
static void test_metadata(void **state)
{
  enum { THREADS = 3000 };
  place p;
  char fname[400], tname[32];
  tw_writer *w;
  jc_doc *d;
  size_t names = 0, len;
  int saw_newest = 0, saw_oldest = 0, saw_b = 0, saw_a = 0;
  (void)state;

  place_new(&p, "meta.json");
  /* One commit, at the flush: the buffer holds everything before it. */
  w = open_with(p.path, "buffer=1MiB,rotate_every=1ns");
  name_thread(w, "a");
  name_thread(w, "b");               /* replaces "a" for this thread */
  for (int i = 0; i < THREADS; i++) {
    snprintf(tname, sizeof tname, "worker-%d", i);
    name_thread_of(w, 100000 + i, tname);
  }
  name_thread(w, "b");               /* again: the newest, not evicted */
  assert_int_equal(tw_flush(w), 0); /* rotates */
  assert_int_equal(tw_close(w), 0);

  /* The finished file has everything, as emitted. */
  file_name(&p, 1, fname, sizeof fname);
  d = tu_load(fname);
  assert_int_equal(jc_len(d, tu_events(d)), 1 + 2 + THREADS + 1);
  jc_free(d);

  file_name(&p, 0, fname, sizeof fname);
  free(tu_read_file(fname, &len));
  assert_true(len <= 64 * 1024 + 16);
  d = tu_load(fname);
  assert_begins_complete(d, "rotating", "b");
  for (jc_val ev = jc_first(d, tu_events(d)); ev >= 0; ev = jc_next(d, ev)) {
    jc_val name = jc_get(d, jc_get(d, ev, "args"), "name");
    tu_assert_str(d, ev, "ph", "M");
    if (!jc_streq(d, jc_get(d, ev, "name"), "thread_name"))
      continue;
    names++;
    saw_a |= jc_streq(d, name, "a");
    saw_b += jc_streq(d, name, "b");
    saw_oldest |= jc_streq(d, name, "worker-0");
    snprintf(tname, sizeof tname, "worker-%d", THREADS - 1);
    saw_newest |= jc_streq(d, name, tname);
  }
  jc_free(d);
  assert_false(saw_a);
  assert_int_equal(saw_b, 1);
  assert_true(saw_newest);
  assert_false(saw_oldest);
  assert_true(names > 100 && names < THREADS);
  place_remove(&p, 1);
}

/* A new file that cannot be created (no descriptor left): the live file
 * keeps its name and every committed event, the error is sticky and
 * tw_close reports it. */
static void test_open_fails(void **state)
{
  struct rlimit old, low;
  place p;
  char fname[400];
  int64_t seen[8];
  size_t nseen = 0;
  tw_writer *w;
  jc_doc *d;
  int fd;
  (void)state;

  place_new(&p, "fail.json");
  w = open_with(p.path, "rotate_every=1ns");
  assert_int_equal(tu_emit(&R, w, 0), 0);
  assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
  fd = dup(0);
  assert_true(fd >= 0);
  close(fd);
  low = old;
  low.rlim_cur = (rlim_t)fd;        /* the next open gets EMFILE */
  assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
  assert_int_equal(tw_flush(w), -EMFILE);
  assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
  assert_int_equal(tw_errcode(w), -EMFILE);
  assert_int_equal(tw_complete(w, "t", "late", 1, 1, NULL, 0), -EMFILE);
  assert_int_equal(tw_close(w), -EMFILE);
  file_name(&p, 1, fname, sizeof fname);
  assert_false(exists(fname));
  d = tu_load(p.path);
  assert_begins_complete(d, "rotating", NULL);
  collect(d, -1, seen, 8, &nseen);
  assert_int_equal(nseen, 1);
  assert_int_equal(seen[0], 0);
  jc_free(d);
  tu_assert_tail(p.path, 0);
  place_remove(&p, 1);
}

/* Several threads, a background committer, gzip: each thread's events
 * all there, once, in order, across the files. */
enum { PER_THREAD = 4000, NTHREADS = 3 };

struct worker {
  tw_writer *w;
  int64_t tid;
};

static void *worker_main(void *arg)
{
  struct worker *k = arg;
  k->tid = (int64_t)syscall(SYS_gettid);
  for (int i = 0; i < PER_THREAD; i++)
    if (tu_emit(&R, k->w, i) != 0)
      break;
  return NULL;
}

static void test_threads(void **state)
{
  static int64_t seen[PER_THREAD];
  struct worker k[NTHREADS];
  pthread_t t[NTHREADS];
  tw_stats st;
  place p;
  char fname[400];
  tw_writer *w;
  (void)state;

  place_new(&p, "threads.json.gz");
  w = open_with(p.path, "buffer=4KiB,rotate=8KiB,commit=background");
  for (int i = 0; i < NTHREADS; i++) {
    k[i].w = w;
    assert_int_equal(pthread_create(&t[i], NULL, worker_main, &k[i]), 0);
  }
  for (int i = 0; i < NTHREADS; i++)
    pthread_join(t[i], NULL);
  assert_int_equal(tw_close(w), 0);
  /* Stats are gone with the writer: count the files instead. */
  memset(&st, 0, sizeof st);
  for (unsigned long n = 1;; n++) {
    file_name(&p, n, fname, sizeof fname);
    if (!exists(fname))
      break;
    st.rotations = n;
  }
  assert_true(st.rotations >= 3);
  for (int i = 0; i < NTHREADS; i++) {
    size_t nseen = 0;
    for (unsigned long n = 1; n <= st.rotations + 1; n++) {
      jc_doc *d;
      file_name(&p, n <= st.rotations ? n : 0, fname, sizeof fname);
      d = load(fname, 1);
      if (i == 0)
        assert_begins_complete(d, "rotating", NULL);
      collect(d, k[i].tid, seen, PER_THREAD, &nseen);
      jc_free(d);
    }
    assert_int_equal(nseen, PER_THREAD);
    for (size_t j = 0; j < PER_THREAD; j++)
      assert_int_equal(seen[j], (int64_t)j);
  }
  place_remove(&p, st.rotations);
}

/* ---------------------------------------------------- the metadata store */

/* A record for the store: ",{" + tag padded with 'x' to len bytes + "}". */
static const char *meta_rec(char *buf, size_t len, char tag)
{
  assert_true(len >= 4);
  buf[0] = ',';
  buf[1] = '{';
  memset(buf + 2, 'x', len - 3);
  buf[2] = tag;
  buf[len - 1] = '}';
  return buf;
}

/* The tag of each record in order, as a string. */
static void meta_tags(const tw__meta *m, char *out)
{
  for (unsigned i = 0; i < m->n; i++)
    out[i] = m->data[TW__META_GAP + m->ent[i].off + 2];
  out[m->n] = '\0';
}

/* The records lie end to end, each with its comma, and fill len. */
static void meta_assert_sound(const tw__meta *m)
{
  size_t sum = 0;

  assert_true(m->len <= m->cap);
  for (unsigned i = 0; i < m->n; i++) {
    assert_int_equal(m->ent[i].off, sum);
    assert_int_equal(m->data[TW__META_GAP + sum], ',');
    sum += m->ent[i].len;
    assert_int_equal(m->data[TW__META_GAP + sum - 1], '}');
  }
  assert_int_equal(sum, m->len);
}

/* Remember a record of len bytes tagged tag, then the store must be
 * sound and hold the records tagged expect, in order. */
static void remember_expect(tw__meta *m, const char *name, int64_t tid,
                            size_t len, char tag, const char *expect)
{
  char rec[256], tags[TW__META_MAX_ENTRIES + 1];

  assert_true(len <= sizeof rec);
  tw__meta_remember(m, name, 1, tid, meta_rec(rec, len, tag), len);
  meta_assert_sound(m);
  meta_tags(m, tags);
  assert_string_equal(tags, expect);
}

/* A newer value takes the older one's place; the first record is never
 * forgotten; a record that does not fit leaves the store as it was,
 * never empty. */
static void test_meta_store(void **state)
{
  tw__meta m;
  (void)state;

  assert_int_equal(tw__meta_init(&m, 100), 0);
  remember_expect(&m, "process_name", 0, 20, 'P', "P");
  remember_expect(&m, "thread_name", 7, 20, 'a', "Pa");
  remember_expect(&m, "thread_name", 8, 20, 'b', "Pab");
  /* the process renamed, longer: still first */
  remember_expect(&m, "process_name", 9, 30, 'Q', "Qab");
  /* thread 7 renamed, shorter: in its place */
  remember_expect(&m, "thread_name", 7, 10, 'c', "Qcb");
  /* too large for the store: ignored, the old value stays */
  remember_expect(&m, "process_name", 0, 101, 'Z', "Qcb");
  remember_expect(&m, "thread_name", 8, 101, 'Z', "Qcb");
  /* a replacement that needs room forgets others, not itself */
  remember_expect(&m, "thread_name", 7, 55, 'h', "Qh");
  /* a new one that needs room: the oldest but the first go */
  remember_expect(&m, "thread_name", 9, 60, 'd', "Qd");
  remember_expect(&m, "thread_name", 10, 70, 'e', "Qe");
  /* larger than the room the first leaves: not kept */
  remember_expect(&m, "thread_name", 11, 71, 'f', "Qe");
  tw__meta_free(&m);
}

/* Random use keeps the store sound: records end to end, keys unique,
 * never empty once it held a record, the first record the first. */
static void test_meta_random(void **state)
{
  char r[2048];
  (void)state;

  srand(tu_seed("test_meta_random"));
  for (int round = 0; round < 100; round++) {
    tw__meta m;
    size_t cap = 64 + (size_t)(rand() % 4096);
    assert_int_equal(tw__meta_init(&m, cap), 0);
    tw__meta_remember(&m, "process_name", 1, 0, meta_rec(r, 20, 'P'), 20);
    for (int it = 0; it < 2000; it++) {
      char name[32];
      int k = rand() % 40;
      size_t len = 4 + (size_t)(rand() % (rand() % 10 ? 100 : 1500));
      snprintf(name, sizeof name, k < 20 ? "thread_name" : "p%d", k);
      tw__meta_remember(&m, name, rand() % 3 + 1, rand() % 5, meta_rec(r, len,
                        (char)('a' + k % 26)), len);
      meta_assert_sound(&m);
      assert_true(m.n >= 1);
      assert_int_equal(m.data[TW__META_GAP + 2], 'P');
      for (unsigned i = 0; i < m.n; i++)
        for (unsigned j = i + 1; j < m.n; j++)
          assert_false(m.ent[i].name_hash == m.ent[j].name_hash &&
                       m.ent[i].pid == m.ent[j].pid &&
                       m.ent[i].tid == m.ent[j].tid);
    }
    tw__meta_free(&m);
  }
}

/* ------------------------------------------------- when a file is finished */

/* A commit with nothing new does not finish the file: flushes of an idle
 * writer never rotate, so keep= never deletes the files with events. */
static void test_idle_no_rotation(void **state)
{
  tw_stats st;
  place p;
  char fname[400];
  int64_t seen[4];
  size_t nseen = 0;
  tw_writer *w;
  jc_doc *d;
  (void)state;

  place_new(&p, "idle.json");
  w = open_with(p.path, "rotate_every=1ns,keep=1");
  assert_int_equal(tu_emit(&R, w, 0), 0);
  assert_int_equal(tw_flush(w), 0);           /* rotates: 1 finished */
  for (int i = 0; i < 5; i++)
    assert_int_equal(tw_flush(w), 0);         /* nothing new: no rotation */
  assert_int_equal(tw_get_stats(w, &st), 0);
  assert_int_equal(st.rotations, 1);
  assert_int_equal(tw_close(w), 0);
  for (unsigned long n = 1; n <= 2; n++) {   /* the finished, the live */
    file_name(&p, n % 2, fname, sizeof fname);
    d = tu_load(fname);
    assert_begins_complete(d, "rotating", NULL);
    collect(d, -1, seen, 4, &nseen);
    jc_free(d);
  }
  assert_int_equal(nseen, 1);
  assert_int_equal(seen[0], 0);
  file_name(&p, 2, fname, sizeof fname);
  assert_false(exists(fname));
  place_remove(&p, 1);
}

/* The size that finishes a file is that of its records: metadata larger
 * than rotate= does not make every commit begin a new file. */
static void test_size_after_metadata(void **state)
{
  enum { N = 400, THREADS = 100 };
  static int64_t seen[N];
  size_t nseen = 0, json_bytes;
  tw_stats st;
  place p;
  char fname[400], tname[64];
  tw_writer *w;
  (void)state;

  place_new(&p, "bigmeta.json");
  w = open_with(p.path, "buffer=1KiB,rotate=4KiB");
  for (int i = 0; i < THREADS; i++) {   /* some 8 KiB of thread names */
    snprintf(tname, sizeof tname, "a worker thread with a long name %d", i);
    name_thread_of(w, 100000 + i, tname);
  }
  for (int i = 0; i < N; i++)
    assert_int_equal(tu_emit(&R, w, i), 0);
  assert_int_equal(tw_get_stats(w, &st), 0);
  json_bytes = st.bytes;
  assert_int_equal(tw_close(w), 0);
  /* Each finished file holds at least 4 KiB of records past its
   * metadata, so there are at most bytes / 4 KiB of them. */
  assert_true(st.rotations >= 2);
  assert_true(st.rotations <= json_bytes / 4096);
  for (unsigned long n = 1; n <= st.rotations + 1; n++) {
    jc_doc *d;
    file_name(&p, n <= st.rotations ? n : 0, fname, sizeof fname);
    d = tu_load(fname);
    assert_begins_complete(d, "rotating", NULL);
    collect(d, -1, seen, N, &nseen);
    jc_free(d);
  }
  assert_int_equal(nseen, N);
  for (size_t i = 0; i < N; i++)
    assert_int_equal(seen[i], (int64_t)i);
  place_remove(&p, st.rotations);
}

/* The renamed process keeps its name first in every new file, however
 * many thread names came and went since. */
static void test_process_renamed(void **state)
{
  enum { THREADS = 3000 };
  place p;
  char fname[400], tname[32];
  tw_writer *w;
  jc_doc *d;
  (void)state;

  place_new(&p, "renamed.json");
  w = open_with(p.path, "buffer=1MiB,rotate_every=1ns");
  name_thread(w, "main-t");
  assert_int_equal(tw_process_name(w, "renamed"), 0);
  for (int i = 0; i < THREADS; i++) {      /* more than the store holds */
    snprintf(tname, sizeof tname, "worker-%d", i);
    name_thread_of(w, 100000 + i, tname);
  }
  assert_int_equal(tu_emit(&R, w, 0), 0);
  assert_int_equal(tw_flush(w), 0);
  assert_int_equal(tw_close(w), 0);
  /* The finished file, begun before the renaming, and the live one. */
  file_name(&p, 1, fname, sizeof fname);
  d = tu_load(fname);
  assert_begins_complete(d, "rotating", NULL);
  jc_free(d);
  file_name(&p, 0, fname, sizeof fname);
  d = tu_load(fname);
  assert_begins_complete(d, "renamed", NULL);
  jc_free(d);
  place_remove(&p, 1);
}

/* A relative path keeps naming the same files when the program changes
 * its working directory (as a daemon does). */
static void test_relative_path_chdir(void **state)
{
  char cwd[4096], fname[400];
  tw_stats st;
  place p;
  tw_writer *w;
  int64_t seen[8];
  size_t nseen = 0;
  (void)state;

  place_new(&p, "rel.json");
  assert_non_null(getcwd(cwd, sizeof cwd));
  assert_int_equal(chdir(p.dir), 0);
  w = open_with("rel.json", "rotate_every=1ns");
  assert_int_equal(chdir("/"), 0);
  for (int i = 0; i < 3; i++) {
    assert_int_equal(tu_emit(&R, w, i), 0);
    assert_int_equal(tw_flush(w), 0);
  }
  assert_int_equal(tw_get_stats(w, &st), 0);
  assert_int_equal(tw_close(w), 0);
  assert_int_equal(chdir(cwd), 0);
  assert_int_equal(st.rotations, 3);
  for (unsigned long n = 1; n <= 3; n++) {
    jc_doc *d;
    file_name(&p, n, fname, sizeof fname);
    d = tu_load(fname);
    collect(d, -1, seen, 8, &nseen);
    jc_free(d);
  }
  assert_int_equal(nseen, 3);
  for (size_t i = 0; i < 3; i++)
    assert_int_equal(seen[i], (int64_t)i);
  jc_free(tu_load(p.path));
  place_remove(&p, 3);
}

/* A path that is a symbolic link: followed at open, so the link still
 * names the live file and the finished ones lie beside its target. */
static void test_symlink_path(void **state)
{
  char link_path[400], fname[400];
  struct stat sb;
  place p;
  tw_writer *w;
  int64_t seen[4];
  size_t nseen = 0;
  jc_doc *d;
  (void)state;

  place_new(&p, "target.json");
  snprintf(link_path, sizeof link_path, "%s/link.json", p.dir);
  assert_int_equal(symlink("target.json", link_path), 0);
  w = open_with(link_path, "rotate_every=1ns");
  assert_int_equal(tu_emit(&R, w, 0), 0);
  assert_int_equal(tw_flush(w), 0);
  assert_int_equal(tu_emit(&R, w, 1), 0);
  assert_int_equal(tw_close(w), 0);
  assert_int_equal(lstat(link_path, &sb), 0);
  assert_true(S_ISLNK(sb.st_mode));
  file_name(&p, 1, fname, sizeof fname);     /* target.000001.json */
  d = tu_load(fname);
  collect(d, -1, seen, 4, &nseen);
  jc_free(d);
  d = tu_load(link_path);
  collect(d, -1, seen, 4, &nseen);
  jc_free(d);
  assert_int_equal(nseen, 2);
  assert_int_equal(seen[0], 0);
  assert_int_equal(seen[1], 1);
  unlink(link_path);
  place_remove(&p, 1);
}

/* The clock record of a file: the second record, a 'c' "clock_sync"
 * event whose ts is its monotonic_ns; its realtime_ns into *real. */
static uint64_t clock_of(const char *path, uint64_t *real)
{
  size_t len;
  char *buf = tu_read_file(path, &len), err[256];
  jc_doc *d = jc_parse(buf, len, err, sizeof err);    /* every record */
  jc_val e, args;
  uint64_t mono, ts;

  if (!d)
    fail_msg("%s: not strict JSON: %s", path, err);
  e = jc_next(d, jc_first(d, tu_events(d)));
  tu_assert_str(d, e, "ph", "c");
  tu_assert_str(d, e, "name", "clock_sync");
  args = jc_get(d, e, "args");
  assert_int_equal(jc_len(d, args), 3);
  tu_assert_str(d, args, "sync_id", "tracewriter.realtime");
  assert_int_equal(jc_uint64(d, jc_get(d, args, "monotonic_ns"), &mono), 0);
  assert_int_equal(jc_uint64(d, jc_get(d, args, "realtime_ns"), real), 0);
  assert_int_equal(jc_us_to_ns(d, jc_get(d, e, "ts"), &ts), 0);
  assert_int_equal(ts, mono);
  jc_free(d);
  free(buf);
  return mono;
}

static uint64_t realtime_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Every file begins with the clock record read when it was begun: at
 * open, and again at each rotation, the two clocks read one after the
 * other (what tracewriter merge aligns traces with). */
static void test_clock_record(void **state)
{
  char fname[400];
  uint64_t m0, r0, m1, r1, before, after, mb, ma;
  place p;
  tw_writer *w;
  tw_stats st;
  (void)state;

  place_new(&p, "clock.json");
  before = realtime_ns();
  mb = tw_now_ns();
  w = open_with(p.path, "rotate_every=1ns");
  ma = tw_now_ns();
  after = realtime_ns();
  assert_int_equal(tu_emit(&R, w, 0), 0);
  assert_int_equal(tw_flush(w), 0);             /* rotates */
  assert_int_equal(tu_emit(&R, w, 1), 0);
  assert_int_equal(tw_get_stats(w, &st), 0);
  assert_int_equal(tw_close(w), 0);
  assert_true(st.rotations >= 1);
  file_name(&p, 1, fname, sizeof fname);
  m0 = clock_of(fname, &r0);
  assert_true(mb <= m0 && m0 <= ma);
  assert_true(before <= r0 && r0 <= after);
  m1 = clock_of(p.path, &r1);
  assert_true(m1 > m0 && r1 > r0);
  place_remove(&p, st.rotations);
}

/* A name too long for the numbers of the finished files is refused at
 * open, not at the first rotation hours later. */
static void test_name_too_long(void **state)
{
  char base[256];
  tw_options o;
  place p;
  char path[600];
  int rc = 0;
  tw_writer *w;
  (void)state;

  memset(base, 'a', 245);
  strcpy(base + 245, ".json");               /* 250 bytes: a legal name */
  place_new(&p, "unused.json");
  snprintf(path, sizeof path, "%s/%s", p.dir, base);
  tw_options_init(&o);
  o.rotate_interval_ns = 1;
  assert_null(tw_open(path, &o, &rc));
  assert_int_equal(rc, -ENAMETOOLONG);
  unlink(path);
  o.rotate_interval_ns = 0;                  /* fine without rotation */
  assert_non_null(w = tw_open(path, &o, &rc));
  assert_int_equal(tw_close(w), 0);
  jc_free(tu_load(path));
  unlink(path);
  place_remove(&p, 0);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_names),
    cmocka_unit_test(test_options),
    cmocka_unit_test(test_needs_path),
    cmocka_unit_test(test_size_file),
    cmocka_unit_test(test_size_mmap),
    cmocka_unit_test(test_size_gzip),
    cmocka_unit_test(test_size_background),
    cmocka_unit_test(test_last_byte_is_bracket),
    cmocka_unit_test(test_every),
    cmocka_unit_test(test_keep),
    cmocka_unit_test(test_metadata),
    cmocka_unit_test(test_open_fails),
    cmocka_unit_test(test_threads),
    cmocka_unit_test(test_meta_store),
    cmocka_unit_test(test_meta_random),
    cmocka_unit_test(test_idle_no_rotation),
    cmocka_unit_test(test_size_after_metadata),
    cmocka_unit_test(test_process_renamed),
    cmocka_unit_test(test_relative_path_chdir),
    cmocka_unit_test(test_symlink_path),
    cmocka_unit_test(test_name_too_long),
    cmocka_unit_test(test_clock_record),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
