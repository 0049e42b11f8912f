/* test_mmap.c -- the mmap sink: valid after every record, exact at close
 *
 * Every file is read back with a plain read() (never through the mapping)
 * and parsed by the strict checker, and its events are compared field by
 * field.
 */
#include "numbered.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BIG 10240               /* a string arg larger than a 4 KiB chunk */

/* ------------------------------------------------------------- helpers */

/* The pad of event i: BIG characters for every tenth, none else. */
static size_t pad_of(int i)
{
  return i % 10 == 3 ? BIG : 0;
}

/* The events of these tests (numbered.h). */
static const tu_family M = { "test", "test_mmap", pad_of, 0, 0, 0 };

/* The events of process pid's main thread, which wrote the file. */
static tu_family by_process(pid_t pid)
{
  tu_family f = M;

  f.pid = f.tid = pid;
  return f;
}

/* The whole file at path through its own descriptor and read(2). */
static char *read_fd_all(const char *path, size_t *len)
{
  int fd = open(path, O_RDONLY);
  char *buf;

  assert_true(fd >= 0);
  buf = tu_read_fd(fd, len);
  close(fd);
  return buf;
}

/* Read the file while the writer is open and check it: the trace from
 * start is strict JSON holding the first n test events, the file is start
 * plus whole chunks long and ends with the tail. */
static void check_open_file(const char *path, off_t start, size_t chunk,
                            int object_form, int n)
{
  const char *tail = TU_TAIL(object_form);
  size_t len, tl = strlen(tail);
  char *buf = read_fd_all(path, &len);
  jc_doc *d;

  assert_true(len > (size_t)start + tl);
  assert_int_equal((len - (size_t)start) % chunk, 0);
  assert_memory_equal(buf + len - tl, tail, tl);
  d = tu_load_mem(buf + start, len - (size_t)start);
  tu_check_trace(&M, d, n);
  jc_free(d);
  free(buf);
}

/* After tw_close: exactly start + bytes + tail, ending with the tail,
 * strict JSON with the first n test events. */
static void check_closed_file(const char *path, off_t start, uint64_t bytes,
                              int object_form, int n)
{
  const char *tail = TU_TAIL(object_form);
  size_t len, tl = strlen(tail);
  char *buf = read_fd_all(path, &len);
  jc_doc *d;

  assert_int_equal(len, (size_t)start + bytes + tl);
  assert_memory_equal(buf + len - tl, tail, tl);
  d = tu_load_mem(buf + start, len - (size_t)start);
  tu_check_trace(&M, d, n);
  jc_free(d);
  free(buf);
}

static void mmap_options(tw_options *o, size_t chunk, int format)
{
  tw_options_init(o);
  o->sink = TW_SINK_MMAP;
  o->mmap_chunk = chunk;
  o->format = format;
  o->process_name = M.pname;
}

/* Write n events through tw_open_fd on a file that already holds `start`
 * bytes of other data, checking the file after every event (no flush),
 * then close and check it is exact. */
static void run_every_event(size_t chunk, int format, off_t start, int n)
{
  char *path = tu_tmppath(".json");
  tw_options o;
  tw_stats st;
  tw_writer *w;
  char *prefix = NULL;
  size_t len;
  int fd, err = 0, i;

  fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  assert_true(fd >= 0);
  if (start > 0) {
    prefix = malloc((size_t)start);
    assert_non_null(prefix);
    memset(prefix, 'x', (size_t)start);
    assert_int_equal(write(fd, prefix, (size_t)start), (ssize_t)start);
  }
  mmap_options(&o, chunk, format);
  w = tw_open_fd(fd, &o, &err);
  assert_non_null(w);
  assert_int_equal(err, 0);
  check_open_file(path, start, chunk, format == TW_FORMAT_OBJECT, 0);
  for (i = 0; i < n; i++) {
    assert_int_equal(tu_emit(&M, w, i), 0);
    check_open_file(path, start, chunk, format == TW_FORMAT_OBJECT, i + 1);
  }
  assert_int_equal(tw_get_stats(w, &st), 0);
  assert_int_equal(st.events, (uint64_t)n + 2);
  assert_int_equal(st.error, 0);
  assert_int_equal(tw_close(w), 0);
  check_closed_file(path, start, st.bytes, format == TW_FORMAT_OBJECT, n);
  if (start > 0) {
    char *buf = read_fd_all(path, &len);
    assert_memory_equal(buf, prefix, (size_t)start);
    free(buf);
  }
  /* The writer never closes a caller's fd. */
  assert_true(fcntl(fd, F_GETFD) >= 0);
  close(fd);
  free(prefix);
  tu_cleanup(path);
}

/* --------------------------------------------------------------- tests */

/* 4 KiB chunks: the file grows many times, and every tenth record (10 KiB)
 * is larger than a chunk. */
static void test_every_event_array(void **state)
{
  (void)state;
  run_every_event(4096, TW_FORMAT_ARRAY, 0, 300);
}

static void test_every_event_object(void **state)
{
  (void)state;
  run_every_event(4096, TW_FORMAT_OBJECT, 0, 200);
}

/* A chunk that is not a multiple of the page size. */
static void test_odd_chunk(void **state)
{
  (void)state;
  run_every_event(5000, TW_FORMAT_ARRAY, 0, 120);
}

/* The trace starts at the fd's offset, page-aligned or not; what is
 * before it is kept. */
static void test_start_offset(void **state)
{
  (void)state;
  run_every_event(4096, TW_FORMAT_ARRAY, 5000, 100);
  run_every_event(4096, TW_FORMAT_OBJECT, 8192, 50);
  run_every_event(8192, TW_FORMAT_ARRAY, 1, 50);
}

/* The default chunk: the first write grows the file to 1 MiB. */
static void test_default_chunk(void **state)
{
  char *path = tu_tmppath(".json");
  tw_options o;
  tw_stats st;
  tw_writer *w;
  int err = 0, i;

  (void)state;
  tw_options_init(&o);
  o.sink = TW_SINK_MMAP;
  w = tw_open(path, &o, &err);
  assert_non_null(w);
  check_open_file(path, 0, TW_DEFAULT_MMAP_CHUNK, 0, 0);
  for (i = 0; i < 1000; i++)
    assert_int_equal(tu_emit(&M, w, i), 0);
  check_open_file(path, 0, TW_DEFAULT_MMAP_CHUNK, 0, 1000);
  assert_int_equal(tw_flush(w), 0);
  assert_int_equal(tw_get_stats(w, &st), 0);
  assert_int_equal(tw_close(w), 0);
  check_closed_file(path, 0, st.bytes, 0, 1000);
  tu_assert_tail(path, 0);
  tu_cleanup(path);
}

/* tw_open with an options string (tw_open must open the file O_RDWR);
 * sync makes tw_flush msync and tw_close fdatasync. */
static void test_tw_open_options(void **state)
{
  static const char *const strs[] = {
    "mmap,chunk=8KiB", "sink=mmap,chunk=4096,format=object,sync"
  };
  size_t k;

  (void)state;
  for (k = 0; k < sizeof strs / sizeof *strs; k++) {
    char *path = tu_tmppath(".json");
    char msg[128];
    tw_options o;
    tw_stats st;
    tw_writer *w;
    int err = 0, i, obj = k == 1;
    size_t chunk = k == 0 ? 8192 : 4096;

    tw_options_init(&o);
    assert_int_equal(tw_options_parse(&o, strs[k], msg, sizeof msg), 0);
    w = tw_open(path, &o, &err);
    assert_non_null(w);
    for (i = 0; i < 60; i++) {
      assert_int_equal(tu_emit(&M, w, i), 0);
      if (i % 20 == 0)
        assert_int_equal(tw_flush(w), 0);
      check_open_file(path, 0, chunk, obj, i + 1);
    }
    assert_int_equal(tw_get_stats(w, &st), 0);
    assert_int_equal(tw_close(w), 0);
    check_closed_file(path, 0, st.bytes, obj, 60);
    tu_assert_tail(path, obj);
    tu_cleanup(path);
  }
}

/* What a mapping cannot serve is TW_ESINK, and the file is left alone. */
static void test_refused(void **state)
{
  char *path = tu_tmppath(".json");
  tw_options o;
  struct stat st;
  int p[2], fd, err;
  FILE *f;

  (void)state;
  mmap_options(&o, 4096, TW_FORMAT_ARRAY);

  /* A pipe. */
  assert_int_equal(pipe(p), 0);
  err = 0;
  assert_null(tw_open_fd(p[1], &o, &err));
  assert_int_equal(err, TW_ESINK);
  close(p[0]);
  close(p[1]);

  /* O_APPEND, and write-only: a shared writable mapping needs O_RDWR. */
  fd = open(path, O_RDWR | O_APPEND);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, "keep", 4), 4);
  err = 0;
  assert_null(tw_open_fd(fd, &o, &err));
  assert_int_equal(err, TW_ESINK);
  close(fd);
  fd = open(path, O_WRONLY);
  assert_true(fd >= 0);
  err = 0;
  assert_null(tw_open_fd(fd, &o, &err));
  assert_int_equal(err, TW_ESINK);
  close(fd);
  assert_int_equal(stat(path, &st), 0);
  assert_int_equal(st.st_size, 4);

  /* A character device. */
  fd = open("/dev/null", O_RDWR);
  assert_true(fd >= 0);
  err = 0;
  assert_null(tw_open_fd(fd, &o, &err));
  assert_int_equal(err, TW_ESINK);
  close(fd);

  /* A stdio stream. */
  f = fopen(path, "w+");
  assert_non_null(f);
  err = 0;
  assert_null(tw_open_stream(f, &o, &err));
  assert_int_equal(err, TW_ESINK);
  fclose(f);
  tu_cleanup(path);
}

/* -------------------------------------------------------------- window */

/* Bytes of the file st (matched by device and inode, or by its real path
 * rp) that this process maps, from /proc/self/maps; -1 if that cannot be
 * read. */
static long mapped_bytes(const struct stat *st, const char *rp)
{
  FILE *f = fopen("/proc/self/maps", "r");
  char line[4096];
  long total = 0;

  if (!f)
    return -1;
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi, off, ino;
    unsigned maj, min;
    char perms[8];
    int name = 0;
    size_t n = strlen(line);

    if (n > 0 && line[n - 1] == '\n')
      line[--n] = '\0';
    if (sscanf(line, "%lx-%lx %7s %lx %x:%x %lu %n", &lo, &hi, perms, &off,
               &maj, &min, &ino, &name) < 7 || name == 0)
      continue;
    if ((ino == (unsigned long)st->st_ino &&
         makedev(maj, min) == st->st_dev) || strcmp(line + name, rp) == 0)
      total += (long)(hi - lo);
  }
  fclose(f);
  return total;
}

/* Write n test events with chunk-byte growths: after every event the
 * file is mapped over at most a window of a chunk, the largest record and
 * a page (rounded to pages: the window starts at the page holding the
 * record end), never over the records behind it, however big the file
 * gets; after tw_close nothing is mapped.  The file is checked as
 * everywhere else. */
static void run_window(size_t chunk, int n)
{
  char *path = tu_tmppath(".json"), *rp;
  long page = sysconf(_SC_PAGESIZE), most = 0, bound;
  size_t maxrec = BIG + 256;            /* a big record: string and fields */
  struct stat st;
  tw_options o;
  tw_stats ts;
  tw_writer *w;
  int err = 0, i;

  if (access("/proc/self/maps", R_OK) != 0) {
    tu_cleanup(path);
    skip();                             /* no /proc */
  }
  rp = realpath(path, NULL);
  assert_non_null(rp);
  bound = (long)((chunk + maxrec + 2 * (size_t)page + (size_t)page - 1) /
                 (size_t)page) * page;
  mmap_options(&o, chunk, TW_FORMAT_ARRAY);
  w = tw_open(path, &o, &err);
  assert_non_null(w);
  assert_int_equal(stat(path, &st), 0);
  for (i = 0; i < n; i++) {
    long now;
    assert_int_equal(tu_emit(&M, w, i), 0);
    now = mapped_bytes(&st, rp);
    if (now > bound)
      fail_msg("event %d: %ld bytes of the file mapped, more than %ld", i,
               now, bound);
    if (now > most)
      most = now;
  }
  /* The file is mapped, and the file is far bigger than the window. */
  assert_true(most >= (long)chunk);
  assert_int_equal(stat(path, &st), 0);
  assert_true(st.st_size >= 10 * bound);
  print_message("window: chunk %zu: at most %ld bytes of a %lld-byte file "
                "mapped (bound %ld)\n", chunk, most, (long long)st.st_size,
                bound);
  assert_int_equal(tw_get_stats(w, &ts), 0);
  assert_int_equal(tw_close(w), 0);
  assert_int_equal(mapped_bytes(&st, rp), 0);
  check_closed_file(path, 0, ts.bytes, 0, n);
  free(rp);
  tu_cleanup(path);
}

/* The mapping is a window at the end of the records: the process's
 * memory does not grow with the file.  4 KiB chunks (every tenth record
 * is larger than a chunk), and 64 KiB chunks. */
static void test_window_bounded(void **state)
{
  (void)state;
  run_window(4096, 1500);
  run_window(65536, 4000);
}

/* ------------------------------------------------------------- threads */

#define THREADS 4
#define PER_THREAD 50000

struct thread_arg {
  tw_writer *w;
  int t;
};

static void *thread_main(void *p)
{
  struct thread_arg *a = p;
  intptr_t bad = 0;
  int i;

  for (i = 0; i < PER_THREAD; i++) {
    tw_arg args[2] = { tw_arg_int("t", a->t), tw_arg_int("i", i) };
    if (tw_complete(a->w, "thr", "work", TU_TS(i), TU_DUR(i), args, 2) != 0)
      bad++;
  }
  return (void *)bad;
}

static void test_threads(void **state)
{
  char *path = tu_tmppath(".json");
  struct thread_arg a[THREADS];
  pthread_t th[THREADS];
  int64_t next[THREADS] = { 0 };
  tw_options o;
  tw_stats st;
  tw_writer *w;
  jc_doc *d;
  jc_val evs, ev;
  int err = 0, t;

  (void)state;
  mmap_options(&o, 65536, TW_FORMAT_ARRAY);
  w = tw_open(path, &o, &err);
  assert_non_null(w);
  for (t = 0; t < THREADS; t++) {
    a[t].w = w;
    a[t].t = t;
    assert_int_equal(pthread_create(&th[t], NULL, thread_main, &a[t]), 0);
  }
  for (t = 0; t < THREADS; t++) {
    void *bad;
    assert_int_equal(pthread_join(th[t], &bad), 0);
    assert_null(bad);
  }
  assert_int_equal(tw_get_stats(w, &st), 0);
  assert_int_equal(st.events, THREADS * PER_THREAD + 2);
  assert_int_equal(tw_close(w), 0);
  tu_assert_tail(path, 0);

  d = tu_load(path);
  evs = tu_events(d);
  assert_int_equal(jc_len(d, evs), THREADS * PER_THREAD + 1);
  ev = jc_next(d, jc_first(d, evs));
  for (; ev >= 0; ev = jc_next(d, ev)) {
    jc_val args = jc_get(d, ev, "args");
    int64_t tt, i;
    assert_int_equal(jc_int64(d, jc_get(d, args, "t"), &tt), 0);
    assert_int_equal(jc_int64(d, jc_get(d, args, "i"), &i), 0);
    assert_true(tt >= 0 && tt < THREADS);
    assert_int_equal(i, next[tt]);         /* every event, in order */
    next[tt]++;
    tu_assert_str(d, ev, "name", "work");
    tu_assert_us(d, ev, "ts", TU_TS(i));
    tu_assert_us(d, ev, "dur", TU_DUR(i));
  }
  for (t = 0; t < THREADS; t++)
    assert_int_equal(next[t], PER_THREAD);
  jc_free(d);
  tu_cleanup(path);
}

/* ----------------------------------------------------- full disk, limits */

/* Emit test events until one fails; check the failure is err, sticky, and
 * that the file holds exactly the events before it, then close.  Returns
 * the number of events written. */
static int fill_until(tw_writer *w, const char *path, int expect_err)
{
  tw_stats st;
  int i, rc = 0;

  for (i = 0; i < 100000; i++)
    if ((rc = tu_emit(&M, w, i)) != 0)
      break;
  assert_int_equal(rc, expect_err);
  assert_true(i > 0);
  /* Sticky: every later call fails fast with the same error. */
  assert_int_equal(tu_emit(&M, w, i), expect_err);
  assert_int_equal(tw_flush(w), expect_err);
  assert_int_equal(tw_errcode(w), expect_err);
  /* The file keeps every event before the error. */
  {
    size_t len;
    char *buf = read_fd_all(path, &len);
    jc_doc *d = tu_load_mem(buf, len);
    tu_check_trace(&M, d, i);
    jc_free(d);
    free(buf);
  }
  assert_int_equal(tw_get_stats(w, &st), 0);
  assert_int_equal(tw_close(w), expect_err);
  check_closed_file(path, 0, st.bytes, 0, i);
  return i;
}

/* The tmpfs of test_enospc, unmounted by its teardown even if it fails. */
static char enospc_dir[] = "/tmp/twmmap-XXXXXX";
static int enospc_mounted;

static int enospc_teardown(void **state)
{
  (void)state;
  if (enospc_mounted) {
    char p[64];
    snprintf(p, sizeof p, "%s/t.json", enospc_dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/filler", enospc_dir);
    unlink(p);
    (void)umount2(enospc_dir, MNT_DETACH);
    enospc_mounted = 0;
  }
  rmdir(enospc_dir);
  return 0;
}

/* A full file system (a 1 MiB tmpfs; skipped where mount is not
 * allowed): -ENOSPC, sticky, no SIGBUS, the file valid with every event
 * before the error, exact after tw_close. */
static void test_enospc(void **state)
{
  char path[64], filler[64];
  tw_options o;
  tw_writer *w;
  int err = 0, fd;

  (void)state;
  assert_non_null(mkdtemp(enospc_dir));
  if (mount("tmpfs", enospc_dir, "tmpfs", 0, "size=1m") != 0)
    skip();
  enospc_mounted = 1;
  snprintf(path, sizeof path, "%s/t.json", enospc_dir);
  snprintf(filler, sizeof filler, "%s/filler", enospc_dir);
  mmap_options(&o, 4096, TW_FORMAT_ARRAY);
  w = tw_open(path, &o, &err);
  assert_non_null(w);
  fill_until(w, path, -ENOSPC);

  /* A file system already full: tw_open fails cleanly. */
  unlink(path);
  fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  assert_true(fd >= 0);
  {
    static char page[4096];
    while (write(fd, page, sizeof page) > 0)
      ;
  }
  close(fd);
  err = 0;
  assert_null(tw_open(path, &o, &err));
  assert_int_equal(err, -ENOSPC);
}

/* RLIMIT_FSIZE in a child (SIGXFSZ ignored): the growth fails with EFBIG.
 * The child reports by its exit status; cmocka's asserts there would
 * unwind into a copy of the test runner. */
static void test_rlimit_fsize(void **state)
{
  char *path = tu_tmppath(".json");
  pid_t pid;
  int status;

  (void)state;
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    struct rlimit rl = { 64 * 1024, 64 * 1024 };
    tw_options o;
    tw_writer *w;
    int err = 0, i, rc = 0;

    signal(SIGXFSZ, SIG_IGN);
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
      _exit(10);
    mmap_options(&o, 4096, TW_FORMAT_ARRAY);
    if (!(w = tw_open(path, &o, &err)))
      _exit(11);
    for (i = 0; i < 100000 && rc == 0; i++)
      rc = tu_emit(&M, w, i);
    if (rc != -EFBIG)
      _exit(12);
    if (tu_emit(&M, w, i) != -EFBIG || tw_errcode(w) != -EFBIG)
      _exit(13);
    {
      /* The growth was cut by the limit after part of its write: the
       * file is back as it was (the old `]` restored), whole chunks. */
      FILE *f = fopen(path, "rb");
      static char buf[64 * 1024];
      size_t len = f ? fread(buf, 1, sizeof buf, f) : 0;
      jc_doc *d = tu_parse_trace(buf, len, NULL, 0);
      int ok = d && jc_len(d, jc_trace_events(d)) == (size_t)i &&
               len % 4096 == 0;
      jc_free(d);
      if (f)
        fclose(f);
      if (!ok)
        _exit(15);
    }
    if (tw_close(w) != -EFBIG)
      _exit(14);
    _exit(0);
  }
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  {
    size_t len;
    char *buf = read_fd_all(path, &len);
    jc_doc *d = tu_load_mem(buf, len);
    const tu_family f = by_process(pid);
    assert_true(len <= 64 * 1024);
    assert_true(tu_check_prefix(&f, d) > 0);
    jc_free(d);
    free(buf);
  }
  tu_assert_tail(path, 0);
  tu_cleanup(path);
}

/* ---------------------------------------------------------------- fork */

/* A child gets TW_EFORKED, and tw_close there (abandon) leaves the parent's
 * file byte for byte as it was; the parent goes on. */
static void test_forked_child_refused_mapping_untouched(void **state)
{
  char *path = tu_tmppath(".json");
  tw_options o;
  tw_stats st;
  tw_writer *w;
  char *before, *after;
  size_t blen, alen;
  pid_t pid;
  int err = 0, status, i;

  (void)state;
  mmap_options(&o, 4096, TW_FORMAT_ARRAY);
  w = tw_open(path, &o, &err);
  assert_non_null(w);
  for (i = 0; i < 10; i++)
    assert_int_equal(tu_emit(&M, w, i), 0);
  before = read_fd_all(path, &blen);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    int code = 0;
    if (tu_emit(&M, w, 99) != TW_EFORKED)
      code = 1;
    else if (tw_flush(w) != TW_EFORKED)
      code = 2;
    else if (tw_close(w) != 0)
      code = 3;
    _exit(code);
  }
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  after = read_fd_all(path, &alen);
  assert_int_equal(alen, blen);
  assert_memory_equal(after, before, blen);
  free(before);
  free(after);
  for (; i < 40; i++)
    assert_int_equal(tu_emit(&M, w, i), 0);
  check_open_file(path, 0, 4096, 0, 40);
  assert_int_equal(tw_get_stats(w, &st), 0);
  assert_int_equal(tw_close(w), 0);
  check_closed_file(path, 0, st.bytes, 0, 40);
  tu_cleanup(path);
}

/* --------------------------------------------------------------- crash */

/* 1 if buf[0..len) is strictly valid JSON, else 0. */
static int strict_ok(const char *buf, size_t len)
{
  jc_doc *d = tu_parse_trace(buf, len, NULL, 0);
  jc_free(d);
  return d != NULL;
}

static int ws(char c)
{
  return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

/* The array form's tail and its length. */
#define TAIL TU_TAIL(0)
#define TAIL_LEN (strlen(TU_TAIL(0)))

/* buf[0..len) followed by the tail, parsed (fails the test if invalid). */
static jc_doc *load_with_tail(const char *buf, size_t len)
{
  char *b = malloc(len + TAIL_LEN);
  jc_doc *d;

  assert_non_null(b);
  memcpy(b, buf, len);
  memcpy(b + len, TAIL, TAIL_LEN);
  d = tu_load_mem(b, len + TAIL_LEN);
  free(b);
  return d;
}

/* How a file left by a killed writer looks. */
enum { KILL_STRICT, KILL_NO_BRACKET, KILL_PARTIAL, KILL_KINDS };

/* Classify the file in buf[0..len) and return its events, parsed: strict
 * JSON ending exactly with the tail; complete records then only
 * whitespace (killed while the `]` moves); or complete records, then a
 * prefix of one more record (",", ",\n", ",\n{..." on one line),
 * whitespace and the tail (killed inside a record's copy).  Anything
 * else fails the test: in particular any byte after the `]`, even
 * whitespace that keeps the JSON valid, which the layout forbids (the
 * spaces of a growth go before the tail, never after it). */
static jc_doc *classify_killed(char *buf, size_t len, int *kind)
{
  size_t e = len, q;

  if (strict_ok(buf, len)) {
    if (len < TAIL_LEN || memcmp(buf + len - TAIL_LEN, TAIL, TAIL_LEN) != 0)
      fail_msg("strict JSON, but %zu bytes do not end with the tail: "
               "bytes after the `]`", len);
    *kind = KILL_STRICT;
    return tu_load_mem(buf, len);
  }
  while (e > 0 && ws(buf[e - 1]))
    e--;
  assert_true(e > 0);
  if (buf[e - 1] == '}') {
    jc_doc *d;
    char *b = malloc(e + TAIL_LEN);
    assert_non_null(b);
    memcpy(b, buf, e);
    memcpy(b + e, TAIL, TAIL_LEN);
    d = tu_parse_trace(b, e + TAIL_LEN, NULL, 0);
    free(b);
    if (d) {
      *kind = KILL_NO_BRACKET;
      return d;
    }
  }
  *kind = KILL_PARTIAL;
  assert_true(len >= TAIL_LEN);
  assert_memory_equal(buf + len - TAIL_LEN, TAIL, TAIL_LEN);
  for (e = len - TAIL_LEN; e > 0 && ws(buf[e - 1]); e--)
    ;
  /* The longest prefix ending in '}' that the tail makes valid. */
  for (q = e; q > 0; q--) {
    if (buf[q - 1] == '}') {
      char *b = malloc(q + TAIL_LEN);
      jc_doc *d;
      assert_non_null(b);
      memcpy(b, buf, q);
      memcpy(b + q, TAIL, TAIL_LEN);
      d = tu_parse_trace(b, q + TAIL_LEN, NULL, 0);
      free(b);
      if (d) {
        jc_free(d);
        break;
      }
    }
  }
  assert_true(q > 0 && q < e);
  if (buf[q] != ',' || (e - q > 1 && buf[q + 1] != '\n') ||
      (e - q > 2 && memchr(buf + q + 2, '\n', e - q - 2))) {
    size_t from = q > 200 ? q - 200 : 0;
    print_error("not a prefix of a record at %zu of %zu:\n%.*s\n", q, len,
                (int)(len - from > 600 ? 600 : len - from), buf + from);
    fail();
  }
  return load_with_tail(buf, q);
}

/* A child writes (4 KiB chunks, some records larger than a chunk) until
 * SIGKILL lands at a random point.  Nothing before the last record is
 * ever damaged: see classify_killed. */
static void test_sigkill(void **state)
{
  const char *env = getenv("TW_TEST_KILLS");
  const char *env_chunk = getenv("TW_TEST_KILL_CHUNK");
  int rounds = env ? atoi(env) : 40, kinds[KILL_KINDS] = { 0 }, r;
  size_t chunk = env_chunk ? (size_t)atol(env_chunk) : 4096;

  (void)state;
  srand(tu_seed("test_sigkill"));
  for (r = 0; r < rounds; r++) {
    char *path = tu_tmppath(".json");
    char c;
    int p[2], status, kind;
    pid_t pid;
    size_t len;
    char *buf;
    jc_doc *d;

    assert_int_equal(pipe(p), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      tw_options o;
      tw_writer *w;
      int i;
      close(p[0]);
      mmap_options(&o, chunk, TW_FORMAT_ARRAY);
      if (!(w = tw_open(path, &o, NULL)) || tu_emit(&M, w, 0) != 0)
        _exit(1);
      if (write(p[1], "r", 1) != 1)
        _exit(1);
      for (i = 1;; i++)
        if (tu_emit(&M, w, i) != 0)
          _exit(2);
    }
    close(p[1]);
    assert_int_equal(read(p[0], &c, 1), 1);
    close(p[0]);
    {
      struct timespec ts = { 0, (long)(rand() % 20000) * 1000L };
      nanosleep(&ts, NULL);
    }
    kill(pid, SIGKILL);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));

    buf = read_fd_all(path, &len);
    d = classify_killed(buf, len, &kind);
    kinds[kind]++;
    {
      const tu_family f = by_process(pid);
      assert_true(tu_check_prefix(&f, d) > 0);
    }
    jc_free(d);
    free(buf);
    tu_cleanup(path);
  }
  print_message("sigkill: %d kills: %d strict JSON, %d without `]`, %d "
                "with a partial last record\n", rounds, kinds[KILL_STRICT],
                kinds[KILL_NO_BRACKET], kinds[KILL_PARTIAL]);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_every_event_array),
    cmocka_unit_test(test_every_event_object),
    cmocka_unit_test(test_odd_chunk),
    cmocka_unit_test(test_start_offset),
    cmocka_unit_test(test_default_chunk),
    cmocka_unit_test(test_tw_open_options),
    cmocka_unit_test(test_refused),
    cmocka_unit_test(test_window_bounded),
    cmocka_unit_test(test_threads),
    cmocka_unit_test_teardown(test_enospc, enospc_teardown),
    cmocka_unit_test(test_rlimit_fsize),
    cmocka_unit_test(test_forked_child_refused_mapping_untouched),
    cmocka_unit_test(test_sigkill),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
