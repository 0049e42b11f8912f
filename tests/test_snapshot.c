/* test_snapshot.c -- "tracewriter snapshot" (tools/snapshot.c)
 *
 * Static files first: traces written with the library, copied whole, cut
 * at every byte of their end, compressed; the copy read back with the
 * strict checker record by record, the original never touched.  Then
 * live files: a child process writes with the library, from several
 * threads, in each sink, while the test takes hundreds of snapshots; each
 * copy must be strict JSON whose every record is one the writer began,
 * field by field, and none twice.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mkfifo, nanosleep, MAP_ANONYMOUS under -std=c99 */
#endif

#include "testutil.h"
#include "tooltest.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gunzip.h"
#include "output.h"
#include "repair.h"
#include "snapshot.h"

/* Snapshot in to out, failing with the message if it fails. */
static void snapshot_ok(const char *in, const char *out, int compress,
                        struct twt_snapshot_report *rep)
{
  struct twt_snapshot_options o;
  char err[512];
  int rc;

  twt_snapshot_options_init(&o);
  o.compress = compress;
  rc = twt_snapshot_file(in, out, &o, rep, err, sizeof err);
  if (rc != 0)
    fail_msg("twt_snapshot_file(%s) = %d: %s", in, rc, err);
}

/* ====================================================== static files */

/* A closed trace: copied whole, in every compression; never touched. */
static void check_copies(int object_form)
{
  char *dir = tt_make_dir();
  char *src = tt_in_dir(dir, "src.json");
  char *gz = tt_in_dir(dir, "src.json.gz");
  char *copy = tt_in_dir(dir, "copy.json");
  char *copy_gz = tt_in_dir(dir, "copy.json.gz");
  struct twt_snapshot_report rep;
  size_t len, glen, tl;
  unsigned char *member;
  char *orig;
  tt_snap before, after;
  tt_records exp;

  tt_write_trace(src, object_form, 200, 0);
  orig = tu_read_file(src, &len);
  tt_records_of(orig, len, &exp);
  tl = tt_lib_tail_len(orig, len, object_form);
  before = tt_take_snap(src);

  snapshot_ok(src, copy, TWT_OUT_BY_NAME, &rep);
  assert_true(rep.complete);
  assert_true(rep.had_tail);
  assert_false(rep.was_gzip);
  assert_false(rep.out_gzip);
  assert_int_equal(rep.records, exp.n);
  assert_int_equal(rep.dropped_records, 0);
  assert_int_equal(rep.object_form, object_form);
  assert_int_equal(rep.input_bytes, len);
  tt_assert_trace_file(copy, &exp, exp.n, object_form);
  /* The same bytes as the original, tail included. */
  assert_int_equal(tl, strlen(tt_out_tail(object_form)));
  tt_assert_file_is(copy, orig, len);
  assert_int_equal(rep.output_bytes, len);

  snapshot_ok(src, copy_gz, TWT_OUT_BY_NAME, &rep);
  assert_true(rep.complete);
  assert_true(rep.out_gzip);
  tt_assert_gzip_trace_file(copy_gz, &exp, exp.n, object_form);

  /* A gzip input: plain by name, gzip as the input. */
  member = tt_gz_member(orig, len, &glen);
  tt_write_bytes(gz, member, glen);
  snapshot_ok(gz, copy, TWT_OUT_BY_NAME, &rep);
  assert_true(rep.complete);
  assert_true(rep.was_gzip);
  assert_false(rep.out_gzip);
  assert_int_equal(rep.json_bytes, len);
  tt_assert_trace_file(copy, &exp, exp.n, object_form);
  snapshot_ok(gz, copy, TWT_SNAPSHOT_AS_INPUT, &rep);
  assert_true(rep.out_gzip);
  tt_assert_gzip_trace_file(copy, &exp, exp.n, object_form);

  after = tt_take_snap(src);
  tt_assert_same_snap(&before, &after);
  tt_assert_file_is(src, orig, len);
  tt_assert_file_is(gz, member, glen);
  assert_int_equal(tt_count_files(dir), 4);    /* no temporary left */
  tt_records_free(&exp);
  free(member);
  free(orig);
  free(src);
  free(gz);
  free(copy);
  free(copy_gz);
  tt_remove_dir(dir);
}

static void test_copy_array(void **state)
{
  (void)state;
  check_copies(0);
}

static void test_copy_object(void **state)
{
  (void)state;
  check_copies(1);
}

/* A file cut at every byte of its end (a commit in progress, or a
 * crash): the complete records copied, the cut one dropped and said. */
static void check_cuts(int object_form)
{
  char *dir = tt_make_fast_dir();
  char *src = tt_in_dir(dir, "src.json");
  char *cutp = tt_in_dir(dir, "cut.json");
  char *copy = tt_in_dir(dir, "copy.json");
  size_t len, first;
  char *orig;
  tt_records exp;

  tt_write_trace(src, object_form, 30, 0);
  orig = tu_read_file(src, &len);
  tt_records_of(orig, len, &exp);
  first = exp.end[exp.n - 3];
  for (size_t cut = first; cut < len; cut++) {
    size_t kept = tt_complete_in(&exp, cut);
    int partial = kept < exp.n && cut > exp.start[kept];
    struct twt_snapshot_report rep;
    tt_snap before, after;

    tt_write_bytes(cutp, orig, cut);
    before = tt_take_snap(cutp);
    snapshot_ok(cutp, copy, TWT_OUT_BY_NAME, &rep);
    after = tt_take_snap(cutp);
    tt_assert_same_snap(&before, &after);
    tt_assert_file_is(cutp, orig, cut);
    assert_int_equal(rep.complete, !partial);
    assert_int_equal(rep.records, kept);
    assert_int_equal(rep.dropped_records, partial);
    tt_assert_trace_file(copy, &exp, kept, object_form);
  }
  /* gzip members cut every 61 bytes. */
  {
    size_t glen;
    unsigned char *member = tt_gz_member(orig, len, &glen);
    for (size_t cut = 1; cut < glen; cut += 61) {
      struct twt_snapshot_report rep;
      struct twt_snapshot_options o;
      size_t tl;
      int complete, rc;
      char err[512];
      char *text = tt_gz_inflate(member, cut, &tl, &complete);
      size_t kept = tt_complete_in(&exp, tl);

      tt_write_bytes(cutp, member, cut);
      twt_snapshot_options_init(&o);
      o.compress = TWT_SNAPSHOT_AS_INPUT;
      rc = twt_snapshot_file(cutp, copy, &o, &rep, err, sizeof err);
      if (kept == 0) {
        assert_true(rc == TWT_READ_ENOTTRACE || rc == TWT_READ_ENORECORD);
      } else {
        if (rc != 0)
          fail_msg("cut %zu: %s", cut, err);
        assert_true(rep.gzip_cut);
        assert_true(rep.records <= kept);
        tt_assert_gzip_trace_file(copy, &exp, (size_t)rep.records,
                                  object_form);
      }
      tt_assert_file_is(cutp, member, cut);
      free(text);
    }
    free(member);
  }
  tt_records_free(&exp);
  free(orig);
  free(src);
  free(cutp);
  free(copy);
  tt_remove_dir(dir);
}

static void test_cuts_array(void **state)
{
  (void)state;
  check_cuts(0);
}

static void test_cuts_object(void **state)
{
  (void)state;
  check_cuts(1);
}

/* What a snapshot refuses, leaving no file behind. */
static void test_refusals(void **state)
{
  char *dir = tt_make_dir();
  char *src = tt_in_dir(dir, "t.json");
  char *bad = tt_in_dir(dir, "bad.json");
  char *fifo = tt_in_dir(dir, "fifo.json");
  char *copy = tt_in_dir(dir, "copy.json");
  struct twt_snapshot_report rep;
  size_t len;
  char err[512], *orig;
  tt_snap before, after;
  unsigned left;
  int rc;
  (void)state;

  tt_write_trace(src, 0, 20, 0);
  orig = tu_read_file(src, &len);
  before = tt_take_snap(src);
  /* The copy over the trace itself. */
  rc = twt_snapshot_file(src, src, NULL, &rep, err, sizeof err);
  assert_int_equal(rc, -EEXIST);
  assert_non_null(strstr(err, src));
  after = tt_take_snap(src);
  tt_assert_same_snap(&before, &after);
  tt_assert_file_is(src, orig, len);
  /* Not a trace: no copy made. */
  tt_write_bytes(bad, "{\"a\":1}\n", 8);
  rc = twt_snapshot_file(bad, copy, NULL, &rep, err, sizeof err);
  assert_int_equal(rc, TWT_READ_ENOTTRACE);
  assert_non_null(strstr(err, bad));
  /* A directory, a FIFO (at once: the alarm guards). */
  assert_int_equal(twt_snapshot_file(dir, copy, NULL, &rep, err, sizeof err),
                   -EISDIR);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  left = tt_guard_begin(2, "snapshot of a FIFO blocked");
  rc = twt_snapshot_file(fifo, copy, NULL, &rep, err, sizeof err);
  tt_guard_end(left);
  assert_int_equal(rc, -EINVAL);
  assert_non_null(strstr(err, "not a regular file"));
  /* An output in a directory that does not exist. */
  rc = twt_snapshot_file(src, "/nonexistent/dir/copy.json", NULL, &rep, err,
                         sizeof err);
  assert_true(rc < 0);
  assert_non_null(strstr(err, "/nonexistent/dir/"));
  assert_int_equal(tt_count_files(dir), 3);    /* src, bad, fifo */
  /* To a device: written directly. */
  snapshot_ok(src, "/dev/null", TWT_OUT_BY_NAME, &rep);
  assert_true(rep.complete);
  assert_int_equal(rep.records, 20 + TT_DOC_RECORDS);
  tt_assert_file_is(src, orig, len);
  free(orig);
  free(src);
  free(bad);
  free(fifo);
  free(copy);
  tt_remove_dir(dir);
}

/* ======================================================== the command */

static int snapshot_cli(int argc, char **argv, const char *out,
                        const char *err)
{
  return tt_run(twt_tool_snapshot_main, argc, argv, out, err);
}

static void test_cli(void **state)
{
  char *dir = tt_make_dir();
  char *src = tt_in_dir(dir, "t.json");
  char *gz = tt_in_dir(dir, "t.json.gz");
  char *cut = tt_in_dir(dir, "cut.json");
  char *copy = tt_in_dir(dir, "copy.json");
  char *out = tt_in_dir(dir, "stdout");
  char *err = tt_in_dir(dir, "stderr");
  size_t len, glen, n;
  unsigned char *member;
  char *orig, *text;
  tt_records exp;
  (void)state;

  tt_write_trace(src, 0, 12, 0);
  orig = tu_read_file(src, &len);
  tt_records_of(orig, len, &exp);
  member = tt_gz_member(orig, len, &glen);
  tt_write_bytes(gz, member, glen);
  tt_write_bytes(cut, orig, exp.start[exp.n - 1] + 9);

  {
    char *a[] = { "snapshot", NULL };
    assert_int_equal(snapshot_cli(1, a, out, err), 2);
    text = tu_read_file(err, NULL);
    assert_non_null(strstr(text, "Usage: tracewriter snapshot"));
    free(text);
  }
  {
    char *a[] = { "snapshot", "--bogus", src, NULL };
    assert_int_equal(snapshot_cli(3, a, NULL, NULL), 2);
  }
  {
    char *a[] = { "snapshot", src, src, NULL };
    assert_int_equal(snapshot_cli(3, a, NULL, NULL), 2);
  }
  {
    char *a[] = { "snapshot", "-m", "1k", src, NULL };
    assert_int_equal(snapshot_cli(4, a, NULL, NULL), 2);
  }
  {
    char *a[] = { "snapshot", "-o", NULL };
    assert_int_equal(snapshot_cli(2, a, NULL, NULL), 2);
  }
  {
    char *a[] = { "snapshot", "--help", NULL };
    assert_int_equal(snapshot_cli(2, a, out, err), 0);
    text = tu_read_file(out, NULL);
    assert_non_null(strstr(text, "Exit status"));
    free(text);
  }
  /* A complete copy: 0, the summary on stderr, nothing on stdout. */
  {
    char *a[] = { "snapshot", "-o", copy, "--max-line", "64KIB", src, NULL };
    assert_int_equal(snapshot_cli(6, a, out, err), 0);
    tt_assert_trace_file(copy, &exp, exp.n, 0);
    text = tu_read_file(out, &n);
    assert_int_equal(n, 0);
    free(text);
    text = tu_read_file(err, NULL);
    assert_non_null(strstr(text, "copied 14 records to"));   /* 12 + 2 */
    free(text);
  }
  /* A cut file: 3, and the summary says what was dropped. */
  {
    char *a[] = { "snapshot", cut, "-o", copy, NULL };
    assert_int_equal(snapshot_cli(4, a, out, err), TWT_SNAPSHOT_EXIT_CUT);
    tt_assert_trace_file(copy, &exp, exp.n - 1, 0);
    text = tu_read_file(err, NULL);
    assert_non_null(strstr(text, "copied 13 records"));
    assert_non_null(strstr(text, "dropped 1 cut record (9 bytes)"));
    free(text);
  }
  /* -q: nothing on stderr. */
  {
    char *a[] = { "snapshot", "-q", cut, "-o", copy, NULL };
    assert_int_equal(snapshot_cli(5, a, out, err), TWT_SNAPSHOT_EXIT_CUT);
    text = tu_read_file(err, &n);
    assert_int_equal(n, 0);
    free(text);
  }
  /* Without -o: standard output, compressed as the input is. */
  {
    char *a[] = { "snapshot", src, NULL };
    assert_int_equal(snapshot_cli(2, a, out, err), 0);
    tt_assert_trace_file(out, &exp, exp.n, 0);
  }
  {
    char *a[] = { "snapshot", gz, NULL };
    assert_int_equal(snapshot_cli(2, a, out, err), 0);
    tt_assert_gzip_trace_file(out, &exp, exp.n, 0);
  }
  /* -o -: standard output, plain. */
  {
    char *a[] = { "snapshot", "-o", "-", gz, NULL };
    assert_int_equal(snapshot_cli(4, a, out, err), 0);
    tt_assert_trace_file(out, &exp, exp.n, 0);
  }
  /* Errors: 1, the message on stderr. */
  {
    char *a[] = { "snapshot", "/nonexistent/t.json", NULL };
    assert_int_equal(snapshot_cli(2, a, out, err), 1);
    text = tu_read_file(err, NULL);
    assert_non_null(strstr(text, "tracewriter snapshot: /nonexistent/t.json"));
    free(text);
  }
  {
    char *a[] = { "snapshot", "-o", src, src, NULL };
    assert_int_equal(snapshot_cli(4, a, out, err), 1);
    tt_assert_file_is(src, orig, len);
  }
  tt_records_free(&exp);
  free(member);
  free(orig);
  free(src);
  free(gz);
  free(cut);
  free(copy);
  free(out);
  free(err);
  tt_remove_dir(dir);
}

/* ========================================================= live files */

#define LIVE_THREADS 3
#define LIVE_SNAPSHOTS 300
/* Records per thread per snapshot: 10 at TW_TEST_SCALE=1, 1 at the
 * default scale.  Each snapshot copies and checks the whole file, so the
 * test's cost grows with the square of the file: the snapshots, the
 * thing tested, stay 300, the records between two of them scale. */
static unsigned live_per_snapshot;
#define LIVE_MAX_RECORDS ((LIVE_SNAPSHOTS + 2) * (uint64_t)live_per_snapshot)

/* Shared between the test and its writing child. */
typedef struct live_shared {
  int ready;               /* the child opened the trace */
  int stop;                /* the test asks the child to close it */
  uint64_t snapshots;      /* snapshots begun by the test */
  int failed;              /* the child's tw_* call failed: its code */
  uint64_t begun[LIVE_THREADS]; /* records each thread began to write */
} live_shared;

static live_shared *shared;

typedef struct live_sink {
  const char *name;        /* for messages */
  const char *file;        /* the trace's name */
  int sink;                /* TW_SINK_* */
  unsigned threads;
  unsigned flush_every;    /* tw_flush after this many records (0: no) */
} live_sink;

/* Record j of thread t: its fields. */
static uint64_t live_ts(unsigned t, uint64_t j)
{
  return UINT64_C(1000000) + (uint64_t)t * UINT64_C(1000000000000) +
         j * 1000;
}

static void live_pad(char *buf, size_t size, unsigned t, uint64_t j)
{
  static const char chars[] = "ab ,]}[{\"\\x\t";
  size_t n = (size_t)((j * 7 + t * 13) % 240);

  assert_true(n < size);
  for (size_t i = 0; i < n; i++)
    buf[i] = chars[(i + j) % (sizeof chars - 1)];
  buf[n] = '\0';
}

typedef struct live_thread {
  tw_writer *w;
  unsigned t;
  const live_sink *sink;
} live_thread;

/* A writing thread of the child: records until asked to stop, paced so
 * that the file grows with the snapshots, not faster (live_per_snapshot
 * records per snapshot begun, a short sleep after each, so that they are
 * written while the test reads). */
static void *live_writer(void *arg)
{
  const live_thread *lt = arg;
  struct timespec pause = { 0, 50000 };
  char name[64], pad[256];
  uint64_t j = 0;

  while (!__atomic_load_n(&shared->stop, __ATOMIC_ACQUIRE) &&
         j < LIVE_MAX_RECORDS) {
    uint64_t allowed = (__atomic_load_n(&shared->snapshots,
                                        __ATOMIC_ACQUIRE) + 1) *
                       live_per_snapshot;
    tw_arg args[2];
    int rc;

    if (j >= allowed) {
      nanosleep(&pause, NULL);
      continue;
    }

    snprintf(name, sizeof name, "live %u.%" PRIu64, lt->t, j);
    live_pad(pad, sizeof pad, lt->t, j);
    args[0] = tw_arg_uint("seq", j);
    args[1] = tw_arg_str("pad", pad);
    __atomic_store_n(&shared->begun[lt->t], j + 1, __ATOMIC_RELEASE);
    rc = tw_complete(lt->w, "live", name, live_ts(lt->t, j), 100 + j % 50,
                     args, 2);
    if (rc == 0 && lt->sink->flush_every && j % lt->sink->flush_every == 0)
      rc = tw_flush(lt->w);
    if (rc != 0) {
      __atomic_store_n(&shared->failed, rc, __ATOMIC_RELEASE);
      break;
    }
    j++;
    nanosleep(&pause, NULL);
  }
  return NULL;
}

/* The child: open the trace, write from sink->threads threads until
 * stopped, close.  Never returns. */
static void live_child(const char *path, const live_sink *sink)
{
  /* Never outlive the test (killed by its deadline, say). */
  (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
  live_thread lt[LIVE_THREADS];
  pthread_t th[LIVE_THREADS];
  tw_options o;
  tw_writer *w;
  int err = 0;

  tw_options_init(&o);
  o.process_name = "live";
  o.sink = sink->sink;
  o.buffer_size = 4096;            /* commits often */
  /* The mmap tail moves often: every ten snapshots or so. */
  o.mmap_chunk = 8 * 1024 * (size_t)live_per_snapshot;
  if (!(w = tw_open(path, &o, &err))) {
    shared->failed = err ? err : -1;
    _exit(2);
  }
  __atomic_store_n(&shared->ready, 1, __ATOMIC_RELEASE);
  for (unsigned t = 0; t < sink->threads; t++) {
    lt[t].w = w;
    lt[t].t = t;
    lt[t].sink = sink;
    if (pthread_create(&th[t], NULL, live_writer, &lt[t]) != 0)
      _exit(3);
  }
  for (unsigned t = 0; t < sink->threads; t++)
    pthread_join(th[t], NULL);
  if ((err = tw_close(w)) != 0 && !shared->failed)
    shared->failed = err;
  _exit(shared->failed ? 4 : 0);
}

/* Check one snapshot (the JSON text): strict; every record one that a
 * thread began, before the snapshot ended, with its fields; none twice
 * (stamp[t][j] == mark: seen in this copy).  Returns the live records. */
static uint64_t check_live_copy(const char *json, size_t len,
                                const uint64_t *begun, uint32_t **stamp,
                                uint32_t mark)
{
  jc_doc *d = tt_load_raw(json, len);
  jc_val ev = tu_events(d), v;
  uint64_t live = 0;

  for (v = jc_first(d, ev); v >= 0; v = jc_next(d, v)) {
    jc_val ph = jc_get(d, v, "ph"), args;
    unsigned t;
    uint64_t j;
    char name[64], pad[256];
    size_t nl;
    const char *nm;

    assert_true(ph >= 0);
    if (jc_streq(d, ph, "M") || jc_streq(d, ph, "c"))
      continue;                     /* process_name, thread_name, clock */
    nm = jc_str(d, jc_get(d, v, "name"), &nl);
    assert_non_null(nm);
    if (sscanf(nm, "live %u.%" SCNu64, &t, &j) != 2 || t >= LIVE_THREADS)
      fail_msg("a record the writer never wrote: %.*s", (int)nl, nm);
    if (j >= begun[t])
      fail_msg("record %u.%" PRIu64 " in a copy before thread %u began "
               "it (%" PRIu64 " begun)", t, j, t, begun[t]);
    if (stamp[t][j] == mark)
      fail_msg("record %u.%" PRIu64 " twice in one copy", t, j);
    stamp[t][j] = mark;
    snprintf(name, sizeof name, "live %u.%" PRIu64, t, j);
    tu_assert_str(d, v, "name", name);
    tu_assert_str(d, v, "ph", "X");
    tu_assert_str(d, v, "cat", "live");
    tu_assert_us(d, v, "ts", live_ts(t, j));
    tu_assert_us(d, v, "dur", 100 + j % 50);
    args = jc_get(d, v, "args");
    assert_true(args >= 0);
    tu_assert_int(d, args, "seq", (int64_t)j);
    live_pad(pad, sizeof pad, t, j);
    tu_assert_str(d, args, "pad", pad);
    live++;
  }
  jc_free(d);
  return live;
}

/* The text of a copy: the file, or its inflated gzip member (which must
 * be complete). */
static char *copy_text(const char *path, int gzip, size_t *len)
{
  size_t n;
  char *buf = tu_read_file(path, &n), *text;

  if (!gzip) {
    *len = n;
    return buf;
  }
  text = tu_gunzip(buf, n, len);
  if (!text)
    fail_msg("%s: not one complete gzip member", path);
  free(buf);
  return text;
}

/* Halfway, the snapshots must have a record to see, however slowly the
 * writer runs on a loaded machine: wait until a thread began its second
 * record, so its first is written and flushed (file, gzip: flush_every)
 * or in the mapping (mmap); the snapshots after this one see it. */
static void wait_first_record(pid_t pid, const live_sink *sink)
{
  int status;

  for (;;) {
    for (unsigned t = 0; t < sink->threads; t++)
      if (__atomic_load_n(&shared->begun[t], __ATOMIC_ACQUIRE) >= 2)
        return;
    if (__atomic_load_n(&shared->failed, __ATOMIC_ACQUIRE) ||
        waitpid(pid, &status, WNOHANG) == pid)
      fail_msg("%s: the writer stopped before its second record (%s)",
               sink->name, tw_strerror(shared->failed));
    sched_yield();
  }
}

static void check_live(const live_sink *sink)
{
  char *dir = tt_make_fast_dir();
  char *path = tt_in_dir(dir, sink->file);
  char *copy = tt_in_dir(dir, "copy.json");
  char *copy_gz = tt_in_dir(dir, "copy.json.gz");
  uint32_t *stamp[LIVE_THREADS];
  unsigned complete = 0, cut = 0, tailless = 0;
  uint64_t begun[LIVE_THREADS], total = 0, live_max = 0;
  int status;
  pid_t pid;

  live_per_snapshot = (unsigned)tu_scaled(10);
  for (unsigned t = 0; t < LIVE_THREADS; t++) {
    stamp[t] = calloc(LIVE_MAX_RECORDS, sizeof *stamp[t]);
    assert_non_null(stamp[t]);
  }
  memset(shared, 0, sizeof *shared);
  fflush(NULL);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0)
    live_child(path, sink);
  while (!__atomic_load_n(&shared->ready, __ATOMIC_ACQUIRE)) {
    if (waitpid(pid, &status, WNOHANG) == pid)
      fail_msg("%s: the writer died before opening (status %d, %s)",
               sink->name, status, tw_strerror(shared->failed));
    sched_yield();
  }

  for (uint32_t s = 1; s <= LIVE_SNAPSHOTS; s++) {
    struct twt_snapshot_report rep;
    struct twt_snapshot_options o;
    int gz_copy = s % 10 == 0;      /* now and then, a gzip copy */
    const char *out = gz_copy ? copy_gz : copy;
    char err[512], *text;
    uint64_t live;
    size_t len;
    int rc;

    __atomic_add_fetch(&shared->snapshots, 1, __ATOMIC_RELEASE);
    if (s == LIVE_SNAPSHOTS / 2)
      wait_first_record(pid, sink);
    twt_snapshot_options_init(&o);
    rc = twt_snapshot_file(path, out, &o, &rep, err, sizeof err);
    for (unsigned t = 0; t < LIVE_THREADS; t++)
      begun[t] = __atomic_load_n(&shared->begun[t], __ATOMIC_ACQUIRE);
    if (rc != 0)
      fail_msg("%s: snapshot %u: %s", sink->name, s, err);
    assert_int_equal(rep.out_gzip, gz_copy);
    text = copy_text(out, gz_copy, &len);
    live = check_live_copy(text, len, begun, stamp, s);
    assert_true(live <= rep.records);
    live_max = live > live_max ? live : live_max;
    free(text);
    if (rep.complete)
      complete++;
    else
      cut++;
    if (!rep.had_tail)
      tailless++;
  }

  /* Closed: every record begun is in the copy, whole. */
  __atomic_store_n(&shared->stop, 1, __ATOMIC_RELEASE);
  assert_int_equal(waitpid(pid, &status, 0), pid);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    fail_msg("%s: the writer failed (status %d, %s)", sink->name, status,
             tw_strerror(shared->failed));
  {
    struct twt_snapshot_report rep;
    char *text;
    size_t len;

    snapshot_ok(path, copy, TWT_OUT_BY_NAME, &rep);
    assert_true(rep.complete);
    assert_true(rep.had_tail);
    for (unsigned t = 0; t < LIVE_THREADS; t++) {
      begun[t] = shared->begun[t];
      total += begun[t];
    }
    text = copy_text(copy, 0, &len);
    assert_int_equal(check_live_copy(text, len, begun, stamp,
                                     LIVE_SNAPSHOTS + 1), total);
    free(text);
  }
  print_message("  %s: %u snapshots while %u threads wrote (%u complete, "
                "%u with records cut, %u without the tail; up to %" PRIu64
                " records), then %" PRIu64 " records after close\n",
                sink->name, LIVE_SNAPSHOTS, sink->threads, complete, cut,
                tailless, live_max, total);
  assert_true(live_max > 0);
  for (unsigned t = 0; t < LIVE_THREADS; t++)
    free(stamp[t]);
  free(path);
  free(copy);
  free(copy_gz);
  tt_remove_dir(dir);
}

static void test_live_file(void **state)
{
  static const live_sink sink = { "file sink", "live.json", TW_SINK_FILE,
                                  2, 3 };
  (void)state;
  check_live(&sink);
}

static void test_live_mmap(void **state)
{
  static const live_sink sink = { "mmap sink", "live.json", TW_SINK_MMAP,
                                  LIVE_THREADS, 0 };
  (void)state;
  check_live(&sink);
}

static void test_live_gzip(void **state)
{
  static const live_sink sink = { "gzip sink", "live.json.gz",
                                  TW_SINK_GZIP, 2, 3 };
  (void)state;
  check_live(&sink);
}

/* ======================================= a head with members */

/* The object form's head with members (timebase=kineto, a rank) is the
 * library's own layout: a snapshot, and the repair of a cut copy, read
 * it and keep its members (after the array), as strict JSON. */
static void check_members_kept(const char *path, size_t events)
{
  jc_doc *d = tt_load_file(path);
  jc_val root = jc_root(d), info = jc_get(d, root, "distributedInfo");
  int64_t v = -1;

  assert_int_equal(jc_int64(d, jc_get(d, info, "rank"), &v), 0);
  assert_int_equal(v, 4);
  assert_int_equal(jc_int64(d, jc_get(d, root, "schemaVersion"), &v), 0);
  assert_int_equal(v, 1);
  assert_true(jc_int64(d, jc_get(d, root, "baseTimeNanoseconds"), &v) == 0 &&
              v > 0);
  assert_int_equal(jc_len(d, jc_trace_events(d)), events);
  jc_free(d);
}

static void test_head_with_members(void **state)
{
  char *dir = tt_make_dir(), *src = tt_in_dir(dir, "src.json");
  char *copy = tt_in_dir(dir, "copy.json"), *cut = tt_in_dir(dir, "cut.json");
  char *fixed = tt_in_dir(dir, "fixed.json"), err[512];
  struct twt_snapshot_report rep;
  struct twt_repair_report rrep;
  tw_options o;
  tw_writer *w;
  size_t len;
  char *text;
  int rc;
  (void)state;

  tw_options_init(&o);
  assert_int_equal(tw_options_parse(&o, "timebase=kineto,rank=4,"
                                    "format=object", NULL, 0), 0);
  assert_non_null(w = tw_open(src, &o, &rc));
  for (int i = 0; i < 10; i++)
    assert_int_equal(tw_instant(w, "c", "tick", 't', NULL, 0), 0);
  assert_int_equal(tw_close(w), 0);
  /* 10 events, the process name, the clock record, the rank's label and
   * sort index. */
  snapshot_ok(src, copy, 0, &rep);
  check_members_kept(copy, 14);
  /* Cut inside its last record: repaired, the members kept. */
  text = tu_read_file(src, &len);
  tt_write_bytes(cut, text, len - 20);
  free(text);
  rc = twt_repair_file(cut, fixed, &rrep, err, sizeof err);
  if (rc != 0)
    fail_msg("repair: %s", err);
  check_members_kept(fixed, 13);
  free(src);
  free(copy);
  free(cut);
  free(fixed);
  tt_remove_dir(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_copy_array),
    cmocka_unit_test(test_head_with_members),
    cmocka_unit_test(test_copy_object),
    cmocka_unit_test(test_cuts_array),
    cmocka_unit_test(test_cuts_object),
    cmocka_unit_test(test_refusals),
    cmocka_unit_test(test_cli),
    cmocka_unit_test(test_live_file),
    cmocka_unit_test(test_live_mmap),
    cmocka_unit_test(test_live_gzip),
  };

  shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE,
                MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) {
    perror("mmap");
    return 99;
  }
  tt_deadline("test_snapshot");
  return cmocka_run_group_tests(tests, NULL, NULL);
}
