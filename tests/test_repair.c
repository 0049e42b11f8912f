/* test_repair.c -- "tracewriter repair" (tools/repair.c)
 *
 * Traces are written with the real library, then damaged the ways a crash
 * damages them: cut at every byte of the last records and of the tail, a
 * half-copied record in mmap padding, the old tail glued after the last
 * record, zeroed blocks, gzip members cut anywhere (also in the gzip sink's
 * layout: sync-flushed blocks, a stored final block and a trailer
 * rewritten at every commit).  Every output is read back with the strict
 * checker and compared record by record with the records of the original.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mkdtemp, symlink, st_mtim, dup2 under -std=c99 */
#endif

#include "testutil.h"
#include "tooltest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "layout.h"       /* TW__LAYOUT_RECORD_DEPTH */
#include "reader.h"
#include "repair.h"

/* ============================================================ helpers */







/* data[0..len) followed by more[0..more_len), written to path. */
static void write_two(const char *path, const void *data, size_t len,
                      const void *more, size_t more_len)
{
  FILE *f = fopen(path, "wb");

  assert_non_null(f);
  if (len)
    assert_int_equal(fwrite(data, 1, len, f), len);
  if (more_len)
    assert_int_equal(fwrite(more, 1, more_len, f), more_len);
  assert_int_equal(fclose(f), 0);
}












/* Run twt_repair_file, failing with its message if it fails. */
static void repair_ok(const char *in, const char *out,
                      struct twt_repair_report *rep)
{
  char err[512];
  int rc = twt_repair_file(in, out, rep, err, sizeof err);

  if (rc != 0)
    fail_msg("twt_repair_file(%s) = %d: %s", in, rc, err);
}





/* ======================================================= gzip helpers */





/* The gzip sink's layout, simulated: a hand-made header, one raw deflate
 * stream sync-flushed at each commit, then a stored final block holding
 * the tail and the trailer, both rewritten at the next commit. */
typedef struct gzsim {
  tu_text file;            /* the file as committed so far */
  size_t data_end;         /* end of the deflate data (the tail's offset) */
  z_stream z;
  uLong crc, isize;
  const char *tail;
} gzsim;

static void sim_init(gzsim *g, const char *tail)
{
  static const unsigned char header[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0,
                                            0, 3 };
  memset(g, 0, sizeof *g);
  g->tail = tail;
  assert_int_equal(deflateInit2(&g->z, 1, Z_DEFLATED, -15, 8,
                                Z_DEFAULT_STRATEGY), Z_OK);
  g->crc = crc32(0, NULL, 0);
  tu_text_put(&g->file, header, sizeof header);
  g->data_end = g->file.len;
}

/* Commit data[0..n): returns the bytes written at data_end by this commit
 * (deflate data + stored block + trailer), as the sink would pwrite them,
 * in *w (malloc'ed) and *wn; g->file becomes the committed file. */
static void sim_commit(gzsim *g, const char *data, size_t n,
                       unsigned char **w, size_t *wn)
{
  unsigned char out[1 << 16];
  size_t tl = strlen(g->tail), start = g->data_end;
  unsigned char block[5], trailer[8];
  uLong crc;

  g->file.len = g->data_end;            /* write over the old tail */
  g->z.next_in = (unsigned char *)data;
  g->z.avail_in = (uInt)n;
  do {
    g->z.next_out = out;
    g->z.avail_out = sizeof out;
    assert_true(deflate(&g->z, Z_SYNC_FLUSH) != Z_STREAM_ERROR);
    tu_text_put(&g->file, out, sizeof out - g->z.avail_out);
  } while (g->z.avail_out == 0);
  g->crc = crc32(g->crc, (const unsigned char *)data, (uInt)n);
  g->isize += (uLong)n;
  g->data_end = g->file.len;
  block[0] = 0x01;
  block[1] = (unsigned char)(tl & 0xff);
  block[2] = (unsigned char)(tl >> 8);
  block[3] = (unsigned char)(~tl & 0xff);
  block[4] = (unsigned char)((~tl >> 8) & 0xff);
  tu_text_put(&g->file, block, 5);
  tu_text_put(&g->file, g->tail, tl);
  crc = crc32(g->crc, (const unsigned char *)g->tail, (uInt)tl);
  for (int i = 0; i < 4; i++) {
    trailer[i] = (unsigned char)(crc >> (8 * i));
    trailer[4 + i] = (unsigned char)((g->isize + tl) >> (8 * i));
  }
  tu_text_put(&g->file, trailer, 8);
  *wn = g->file.len - start;
  *w = malloc(*wn);
  assert_non_null(*w);
  memcpy(*w, g->file.p + start, *wn);
}

static void sim_free(gzsim *g)
{
  deflateEnd(&g->z);
  free(g->file.p);
}

/* ======================================================= valid traces */

static void check_valid_untouched(int object_form)
{
  char *dir = tt_make_dir();
  char *path = tt_in_dir(dir, "t.json");
  struct twt_repair_report rep;
  size_t len;
  char *orig;
  tt_snap before, after;
  tt_records exp;

  tt_write_trace(path, object_form, 40, 0);
  orig = tu_read_file(path, &len);
  tt_records_of(orig, len, &exp);
  assert_int_equal(exp.n, 40 + TT_DOC_RECORDS);
  before = tt_take_snap(path);

  repair_ok(path, NULL, &rep);
  assert_true(rep.was_valid);
  assert_false(rep.written);
  assert_false(rep.was_gzip);
  assert_int_equal(rep.object_form, object_form);
  assert_int_equal(rep.kept_records, 40 + TT_DOC_RECORDS);
  assert_int_equal(rep.dropped_records, 0);
  assert_int_equal(rep.input_bytes, len);
  after = tt_take_snap(path);
  tt_assert_same_snap(&before, &after);
  tt_assert_file_is(path, orig, len);
  assert_int_equal(tt_count_files(dir), 1);

  /* A dry run says the same. */
  {
    struct twt_repair_options o;
    char err[256];
    twt_repair_options_init(&o);
    o.dry_run = 1;
    assert_int_equal(twt_repair_file_ex(path, NULL, &o, &rep, err,
                                        sizeof err), 0);
    assert_true(rep.was_valid);
    assert_false(rep.written);
  }
  tt_records_free(&exp);
  free(orig);
  free(path);
  tt_remove_dir(dir);
}

static void test_valid_array(void **state)
{
  (void)state;
  check_valid_untouched(0);
}

static void test_valid_object(void **state)
{
  (void)state;
  check_valid_untouched(1);
}

/* ============================================== cut at every byte */

static void check_every_cut(int object_form)
{
  char *dir = tt_make_dir();
  char *src = tt_in_dir(dir, "src.json");
  char *path = tt_in_dir(dir, "cut.json");
  struct twt_repair_report rep;
  size_t len, first, whole;
  char *orig;
  tt_records exp;

  tt_write_trace(src, object_form, 30, 0);
  orig = tu_read_file(src, &len);
  tt_records_of(orig, len, &exp);
  /* Cut from here on, the file ends with the whole tail: valid.  The
   * library's tail ends at the bracket, so that is the whole file. */
  whole = len - tt_lib_tail_len(orig, len, object_form) +
          strlen(tt_out_tail(object_form));
  assert_int_equal(whole, len);
  /* From the end of the third-to-last record: the ",\n" and all of the
   * last two records, then every byte of the tail. */
  first = exp.end[exp.n - 3];
  for (size_t cut = first; cut <= len; cut++) {
    size_t kept = tt_complete_in(&exp, cut);
    size_t inside = exp.start[kept < exp.n ? kept : exp.n - 1];
    int partial = kept < exp.n && cut > inside;
    size_t text = cut;              /* the partial text, padding off */

    while (partial && text > inside && strchr(" \t\r,", orig[text - 1]))
      text--;

    tt_write_bytes(path, orig, cut);
    if (cut >= whole) {             /* the whole file, left untouched */
      tt_snap before = tt_take_snap(path), after;
      repair_ok(path, NULL, &rep);
      assert_true(rep.was_valid);
      assert_int_equal(rep.kept_records, exp.n);
      after = tt_take_snap(path);
      tt_assert_same_snap(&before, &after);
      tt_assert_file_is(path, orig, cut);
      continue;
    }
    repair_ok(path, NULL, &rep);
    assert_false(rep.was_valid);
    assert_true(rep.written);
    assert_true(rep.in_place);
    assert_int_equal(rep.kept_records, kept);
    assert_int_equal(rep.dropped_records, partial ? 1 : 0);
    assert_int_equal(rep.dropped_bytes, partial ? text - inside : 0);
    assert_int_equal(rep.junk_bytes, 0);
    assert_int_equal(rep.object_form, object_form);
    tt_assert_trace_file(path, &exp, kept, object_form);
    assert_int_equal(tt_count_files(dir), 2);   /* no temporary left */
    /* Repairing again finds it valid. */
    repair_ok(path, NULL, &rep);
    assert_true(rep.was_valid);
    assert_int_equal(rep.kept_records, kept);
  }
  /* Every cut inside the head and the first record is refused. */
  for (size_t cut = 0; cut < exp.end[0]; cut++) {
    char err[256];
    int rc;
    tt_write_bytes(path, orig, cut);
    rc = twt_repair_file(path, NULL, &rep, err, sizeof err);
    assert_true(rc == TWT_REPAIR_ENORECORD || rc == TWT_REPAIR_ENOTTRACE);
    assert_true(cut > 0 || rc == TWT_REPAIR_ENOTTRACE);
    if (cut > (object_form ? 16u : 1u))
      assert_int_equal(rc, TWT_REPAIR_ENORECORD);
    assert_non_null(strstr(err, path));
    tt_assert_file_is(path, orig, cut);
    assert_int_equal(tt_count_files(dir), 2);
  }
  tt_records_free(&exp);
  free(orig);
  free(src);
  free(path);
  tt_remove_dir(dir);
}

static void test_cut_array(void **state)
{
  (void)state;
  check_every_cut(0);
}

static void test_cut_object(void **state)
{
  (void)state;
  check_every_cut(1);
}

/* ===================================== glued tails, zeroes, mmap padding */

/* orig without its tail, then more, repaired: expect n records. */
static void check_suffix(const char *dir, const char *orig, size_t body,
                         const char *more, size_t more_len,
                         const tt_records *exp, size_t n, int object_form,
                         int expect_valid, uint64_t dropped_records,
                         uint64_t junk)
{
  char *path = tt_in_dir(dir, "x.json");
  struct twt_repair_report rep;
  tt_snap before, after;

  write_two(path, orig, body, more, more_len);
  before = tt_take_snap(path);
  repair_ok(path, NULL, &rep);
  assert_int_equal(rep.was_valid, expect_valid);
  assert_int_equal(rep.kept_records, n);
  assert_int_equal(rep.dropped_records, dropped_records);
  assert_int_equal(rep.junk_bytes, junk);
  if (expect_valid) {
    after = tt_take_snap(path);
    tt_assert_same_snap(&before, &after);
    {
      size_t len;
      char *buf = tu_read_file(path, &len);
      char err[256];
      jc_doc *d = jc_parse(buf, len, err, sizeof err);  /* every record */
      if (!d)
        fail_msg("not strict JSON: %s", err);
      assert_int_equal(jc_len(d, tu_events(d)), n);
      jc_free(d);
      free(buf);
    }
  } else {
    tt_assert_trace_file(path, exp, n, object_form);
  }
  assert_int_equal(tt_count_files(dir), 2);
  unlink(path);
  free(path);
}

static void check_layouts(int object_form)
{
  char *dir = tt_make_dir();
  char *src = tt_in_dir(dir, "src.json");
  const char *tail;
  size_t tl, len, body, big = 300000;
  char *orig, *more;
  tt_records exp;

  tt_write_trace(src, object_form, 20, 0);
  orig = tu_read_file(src, &len);
  tt_records_of(orig, len, &exp);
  tl = tt_lib_tail_len(orig, len, object_form);
  tail = orig + len - tl;           /* the library's, NUL-terminated */
  body = len - tl;                  /* up to the last record's "}" */
  assert_int_equal(body, exp.end[exp.n - 1]);
  more = malloc(big + 1024);
  assert_non_null(more);

  /* The old tail glued after the record: a commit cut after 1 byte. */
  check_suffix(dir, orig, body, object_form ? ",]}\n" : ",]\n",
               object_form ? 4 : 3, &exp, exp.n, object_form, 0, 0, 0);
  /* ... after 2 bytes (object form: a lone "}" is left). */
  check_suffix(dir, orig, body, object_form ? ",\n}\n" : ",\n\n",
               object_form ? 4 : 3, &exp, exp.n, object_form, 0, 0,
               object_form ? 1 : 0);
  /* ... after 3 bytes: ",\n{" and the rest of the old tail. */
  check_suffix(dir, orig, body, object_form ? ",\n{\n" : ",\n{",
               object_form ? 4 : 3, &exp, exp.n, object_form, 0, 1, 0);

  /* mmap, open: records, spaces (more than a read buffer and more than
   * the whitespace kept in memory), the tail: already valid. */
  memset(more, ' ', big);
  memcpy(more + big, tail, tl);
  check_suffix(dir, orig, body, more, big + tl, &exp, exp.n, object_form,
               1, 0, 0);
  /* ... with newlines in the padding: valid too. */
  for (size_t i = 0; i < big; i += 1000)
    more[i] = '\n';
  check_suffix(dir, orig, body, more, big + tl, &exp, exp.n, object_form,
               1, 0, 0);
  /* mmap, crashed: a half-copied record, then the padding and the tail. */
  {
    const char *half = ",\n{\"ph\":\"X\",\"name\":\"half";
    size_t hl = strlen(half);
    memcpy(more, half, hl);
    memset(more + hl, ' ', big);
    memcpy(more + hl + big, tail, tl);
    check_suffix(dir, orig, body, more, hl + big + tl, &exp, exp.n,
                 object_form, 0, 1, 0);
  }
  /* mmap, crashed with a hole: a half record, spaces, then a complete
   * record copied by another thread (kept), spaces, the tail. */
  {
    char *path = tt_in_dir(dir, "x.json");
    struct twt_repair_report rep;
    const char *half = ",\n{\"ph\":\"X\",\"na";
    const char *whole = ",\n{\"ph\":\"i\",\"name\":\"after the hole\","
                        "\"ts\":1.000,\"pid\":1,\"tid\":1,\"s\":\"g\"}";
    FILE *f = fopen(path, "wb");
    size_t n;
    char *buf;
    jc_doc *d;
    jc_val ev, v;
    size_t i = 0;

    assert_non_null(f);
    assert_int_equal(fwrite(orig, 1, body, f), body);
    fputs(half, f);
    for (int k = 0; k < 5000; k++)
      fputc(' ', f);
    fputs(whole, f);
    for (int k = 0; k < 5000; k++)
      fputc(' ', f);
    fputs(tail, f);
    assert_int_equal(fclose(f), 0);
    repair_ok(path, NULL, &rep);
    assert_int_equal(rep.kept_records, exp.n + 1);
    assert_int_equal(rep.dropped_records, 1);
    assert_int_equal(rep.dropped_bytes, strlen(half) - 2);
    buf = tu_read_file(path, &n);
    d = tt_load_raw(buf, n);
    ev = tu_events(d);
    assert_int_equal(jc_len(d, ev), exp.n + 1);
    for (v = jc_first(d, ev); i < exp.n; v = jc_next(d, v), i++) {
      size_t rl;
      const char *r = jc_raw(d, v, &rl);
      assert_int_equal(rl, exp.rawlen[i]);
      assert_memory_equal(r, exp.raw[i], rl);
    }
    tu_assert_str(d, v, "name", "after the hole");
    jc_free(d);
    assert_memory_equal(buf + n - strlen(tt_out_tail(object_form)),
                        tt_out_tail(object_form),
                        strlen(tt_out_tail(object_form)));
    free(buf);
    unlink(path);
    free(path);
  }
  /* Zeroed blocks (a hole after a power loss, or mmap growth): NULs after
   * the last record, and NULs between a complete record and a later one
   * glued on the same line. */
  memset(more, 0, 70000);
  check_suffix(dir, orig, body, more, 70000, &exp, exp.n, object_form, 0,
               0, 0);
  memset(more, 0, 5000);
  memcpy(more + 5000, ",\n{\"ph\":\"X\"", 11);
  check_suffix(dir, orig, body, more, 5011, &exp, exp.n, object_form, 0,
               1, 0);
  /* A long run of spaces between a record and its comma is valid JSON. */
  {
    char *path = tt_in_dir(dir, "x.json");
    struct twt_repair_report rep;
    size_t split = exp.end[exp.n - 2];      /* after the second-to-last */
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(orig, 1, split, f), split);
    for (size_t k = 0; k < 200000; k++)
      fputc(' ', f);
    assert_int_equal(fwrite(orig + split, 1, len - split, f), len - split);
    assert_int_equal(fclose(f), 0);
    repair_ok(path, NULL, &rep);
    assert_true(rep.was_valid);
    assert_int_equal(rep.kept_records, exp.n);
    /* Cut in the last record: the one before is kept, padding and all
     * dropped from the output. */
    assert_int_equal(truncate(path, (off_t)(split + 200000 + 10)), 0);
    repair_ok(path, NULL, &rep);
    assert_false(rep.was_valid);
    assert_int_equal(rep.kept_records, exp.n - 1);
    assert_int_equal(rep.dropped_records, 1);
    tt_assert_trace_file(path, &exp, exp.n - 1, object_form);
    unlink(path);
    free(path);
  }
  /* Bytes after the tail: valid JSON, but not what a viewer accepts. */
  check_suffix(dir, orig, body, object_form ? "\n]}\n  " : "\n]\n\n",
               object_form ? 6 : 4, &exp, exp.n, object_form, 0, 0, 0);
  check_suffix(dir, orig, body, object_form ? "\n]}  " : "\n] ",
               object_form ? 5 : 3, &exp, exp.n, object_form, 0, 0, 0);
  /* Both tails are valid as they are, left untouched: today's, ending at
   * the bracket, and 0.1's, with a newline after it. */
  check_suffix(dir, orig, body, object_form ? "\n]}" : "\n]",
               object_form ? 3 : 2, &exp, exp.n, object_form, 1, 0, 0);
  check_suffix(dir, orig, body, object_form ? "\n]}\n" : "\n]\n",
               object_form ? 4 : 3, &exp, exp.n, object_form, 1, 0, 0);

  free(more);
  tt_records_free(&exp);
  free(orig);
  free(src);
  tt_remove_dir(dir);
}

static void test_layouts_array(void **state)
{
  (void)state;
  check_layouts(0);
}

static void test_layouts_object(void **state)
{
  (void)state;
  check_layouts(1);
}

/* An object-form tail with metadata after the array is kept. */
static void test_object_tail_kept(void **state)
{
  char *dir = tt_make_dir();
  char *path = tt_in_dir(dir, "o.json");
  const char *valid =
    "{\"traceEvents\":[\n"
    "{\"ph\":\"M\",\"name\":\"process_name\",\"args\":{\"name\":\"x\"}},\n"
    "{\"ph\":\"i\",\"name\":\"a\",\"ts\":1.000,\"s\":\"g\"}\n"
    "],\"displayTimeUnit\":\"ns\"}";
  const char *broken =
    "{\"traceEvents\":[\n"
    "{\"ph\":\"M\",\"name\":\"process_name\",\"args\":{\"name\":\"x\"}},\n"
    "{\"ph\":\"i\",\"name\":\"a\",\"ts\":1.000,\"s\":\"g\"},\n"
    "{\"ph\":\"i\",\"name\":\"b\",\"ts\":2.0      \n"
    "],\"displayTimeUnit\":\"ns\"}\n";
  struct twt_repair_report rep;
  size_t len;
  char *buf;
  (void)state;

  tt_write_bytes(path, valid, strlen(valid));
  repair_ok(path, NULL, &rep);
  assert_true(rep.was_valid);
  assert_int_equal(rep.kept_records, 2);
  tt_write_bytes(path, broken, strlen(broken));
  repair_ok(path, NULL, &rep);
  assert_false(rep.was_valid);
  assert_true(rep.had_tail);
  assert_int_equal(rep.kept_records, 2);
  assert_int_equal(rep.dropped_records, 1);
  tt_assert_file_is(path, valid, strlen(valid));   /* no newline at the end */
  buf = tu_read_file(path, &len);
  jc_free(tt_load_raw(buf, len));
  free(buf);
  free(path);
  tt_remove_dir(dir);
}

/* ======================================================= not a trace */

static void test_not_a_trace(void **state)
{
  static const struct { const char *text; size_t len; int rc; } cases[] = {
#define C(s, rc) { s, sizeof s - 1, rc }
    C("", TWT_REPAIR_ENOTTRACE),
    C("hello, world\n", TWT_REPAIR_ENOTTRACE),
    C("{\"a\":1}", TWT_REPAIR_ENOTTRACE),
    C("{\"a\":1}\n", TWT_REPAIR_ENOTTRACE),
    C("[1,2]\n", TWT_REPAIR_ENOTTRACE),
    C("[\n1,\n2\n]\n", TWT_REPAIR_ENOTTRACE),
    C("[\n]\n", TWT_REPAIR_ENOTTRACE),
    C("[\n\"x\",\n{\"a\":1}\n]\n", TWT_REPAIR_ENOTTRACE),
    /* Strict JSON, only not in the library's layout: left as it is. */
    C("[ \n{\"a\":1}\n]\n", 0),
    C("[\r\n{\"a\":1}\r\n]\r\n", TWT_REPAIR_ENOTTRACE),
    C("{\"traceEvents\": [\n{\"a\":1}\n]}\n", 0),
    C("[\0\n{\"a\":1}\n]\n", TWT_REPAIR_ENOTTRACE),
    C("[", TWT_REPAIR_ENORECORD),
    C("[\n", TWT_REPAIR_ENORECORD),
    C("{\"traceEvents\":[", TWT_REPAIR_ENORECORD),
    C("[\n{\"ph\":\"M\",\"na", TWT_REPAIR_ENORECORD),
    C("[\n{\"ph\":\"M\",\"na      \n]\n", TWT_REPAIR_ENORECORD),
    C("[\n{\"a\":1}}\n]\n", TWT_REPAIR_ENORECORD),
    C("\x1f\x8b", TWT_REPAIR_ENOTTRACE),
    C("      \n \n", TWT_REPAIR_ENORECORD),
    C("\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", TWT_REPAIR_ENORECORD),
    C("   [\n{\"a\":1}\n]\n", 0),
    C("\n[\n{\"a\":1}\n]\n", 0),
    C("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03garbage", TWT_REPAIR_ENOTTRACE),
#undef C
  };
  char *dir = tt_make_dir();
  char *path = tt_in_dir(dir, "n.json");
  char *out = tt_in_dir(dir, "out.json");
  struct twt_repair_report rep;
  char err[512];
  (void)state;

  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    for (int with_out = 0; with_out < 2; with_out++) {
      tt_snap before, after;
      int rc;
      tt_write_bytes(path, cases[i].text, cases[i].len);
      before = tt_take_snap(path);
      rc = twt_repair_file(path, with_out ? out : NULL, &rep, err, sizeof err);
      if (rc != cases[i].rc)
        fail_msg("case %zu: rc %d, expected %d (%s)", i, rc, cases[i].rc,
                 err);
      after = tt_take_snap(path);
      tt_assert_same_snap(&before, &after);
      tt_assert_file_is(path, cases[i].text, cases[i].len);
      if (rc == 0) {                /* valid: -o gets a copy */
        assert_true(rep.was_valid);
        if (with_out) {
          tt_assert_file_is(out, cases[i].text, cases[i].len);
          assert_int_equal(unlink(out), 0);
        }
        continue;
      }
      assert_non_null(strstr(err, path));
      assert_int_equal(tt_count_files(dir), 1);   /* nor out, nor a temp */
    }
  }
  /* Random bytes, and random bytes after a valid head. */
  srand(tt_seed());
  for (int round = 0; round < 50; round++) {
    char buf[2000];
    size_t n = 1 + (size_t)rand() % sizeof buf;
    int rc;
    for (size_t k = 0; k < n; k++)
      buf[k] = (char)rand();
    if (round % 2) {
      buf[0] = '[';
      if (n > 1)
        buf[1] = '\n';
      if (n > 2 && buf[2] == '{')
        buf[2] = 'x';
    }
    tt_write_bytes(path, buf, n);
    rc = twt_repair_file(path, NULL, &rep, err, sizeof err);
    assert_true(rc == TWT_REPAIR_ENOTTRACE || rc == TWT_REPAIR_ENORECORD);
    tt_assert_file_is(path, buf, n);
    assert_int_equal(tt_count_files(dir), 1);
  }
  /* A gzip member of something that is not a trace. */
  {
    size_t gl;
    unsigned char *gz = tt_gz_member("{\"a\":1}\n", 8, &gl);
    tt_write_bytes(path, gz, gl);
    assert_int_equal(twt_repair_file(path, NULL, &rep, err, sizeof err),
                     TWT_REPAIR_ENOTTRACE);
    assert_true(rep.was_gzip);
    tt_assert_file_is(path, gz, gl);
    free(gz);
  }
  /* Not a regular file, no file. */
  assert_int_equal(twt_repair_file(dir, NULL, &rep, err, sizeof err),
                   -EISDIR);
  assert_int_equal(twt_repair_file("/nonexistent/x.json", NULL, &rep, err,
                                   sizeof err), -ENOENT);
  assert_non_null(strstr(err, "/nonexistent/x.json"));
  assert_true(twt_repair_file("/dev/null", NULL, &rep, err, sizeof err) < 0);
  unlink(path);
  free(path);
  free(out);
  tt_remove_dir(dir);
}

/* ================================================= in place and -o */

static void test_output_and_in_place(void **state)
{
  char *dir = tt_make_dir();
  char *path = tt_in_dir(dir, "t.json");
  char *out = tt_in_dir(dir, "out.json");
  char *link = tt_in_dir(dir, "link.json");
  struct twt_repair_report rep;
  size_t len, cut;
  char *orig;
  tt_snap before, after;
  tt_records exp;
  struct stat st;
  (void)state;

  tt_write_trace(path, 0, 25, 0);
  orig = tu_read_file(path, &len);
  tt_records_of(orig, len, &exp);
  cut = exp.start[exp.n - 1] + 7;

  /* -o: the input is left alone. */
  tt_write_bytes(path, orig, cut);
  before = tt_take_snap(path);
  repair_ok(path, out, &rep);
  assert_true(rep.written);
  assert_false(rep.in_place);
  after = tt_take_snap(path);
  tt_assert_same_snap(&before, &after);
  tt_assert_file_is(path, orig, cut);
  tt_assert_trace_file(out, &exp, exp.n - 1, 0);
  /* -o over an existing file keeps that file's mode. */
  assert_int_equal(chmod(out, 0604), 0);
  repair_ok(path, out, &rep);
  assert_int_equal(stat(out, &st), 0);
  assert_int_equal(st.st_mode & 07777, 0604);
  tt_assert_trace_file(out, &exp, exp.n - 1, 0);
  assert_int_equal(tt_count_files(dir), 2);

  /* -o with a valid input: a byte-for-byte copy. */
  tt_write_bytes(path, orig, len);
  unlink(out);
  repair_ok(path, out, &rep);
  assert_true(rep.was_valid);
  assert_true(rep.written);
  tt_assert_file_is(out, orig, len);
  tt_assert_file_is(path, orig, len);

  /* -o naming the input itself: in place. */
  tt_write_bytes(path, orig, cut);
  repair_ok(path, path, &rep);
  assert_true(rep.in_place);
  tt_assert_trace_file(path, &exp, exp.n - 1, 0);

  /* In place keeps the permission bits; the inode is new. */
  tt_write_bytes(path, orig, cut);
  assert_int_equal(chmod(path, 0640), 0);
  before = tt_take_snap(path);
  repair_ok(path, NULL, &rep);
  after = tt_take_snap(path);
  assert_int_equal(after.mode & 07777, 0640);
  assert_true(S_ISREG(after.mode));
  assert_true(before.ino != after.ino);
  tt_assert_trace_file(path, &exp, exp.n - 1, 0);

  /* Run by root, in place keeps the owner too. */
  if (geteuid() == 0) {
    tt_write_bytes(path, orig, cut);
    assert_int_equal(chown(path, 65534, 65534), 0);
    repair_ok(path, NULL, &rep);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_uid, 65534);
    assert_int_equal(st.st_gid, 65534);
    tt_assert_trace_file(path, &exp, exp.n - 1, 0);
  }

  /* Through a symbolic link: the target is repaired, the link stays. */
  tt_write_bytes(path, orig, cut);
  assert_int_equal(symlink("t.json", link), 0);
  repair_ok(link, NULL, &rep);
  assert_int_equal(lstat(link, &st), 0);
  assert_true(S_ISLNK(st.st_mode));
  tt_assert_trace_file(path, &exp, exp.n - 1, 0);
  unlink(link);

  /* To a device: written directly. */
  tt_write_bytes(path, orig, cut);
  repair_ok(path, "/dev/null", &rep);
  assert_true(rep.written);
  tt_assert_file_is(path, orig, cut);

  /* A dry run writes nothing. */
  {
    struct twt_repair_options o;
    char err[256];
    twt_repair_options_init(&o);
    o.dry_run = 1;
    before = tt_take_snap(path);
    assert_int_equal(twt_repair_file_ex(path, NULL, &o, &rep, err,
                                        sizeof err), 0);
    assert_false(rep.was_valid);
    assert_false(rep.written);
    assert_int_equal(rep.kept_records, exp.n - 1);
    assert_int_equal(rep.dropped_records, 1);
    assert_int_equal(rep.dropped_bytes, 7);
    after = tt_take_snap(path);
    tt_assert_same_snap(&before, &after);
  }
  /* An output in a directory that does not exist: an error, input
   * untouched. */
  {
    char err[512];
    int rc = twt_repair_file(path, "/nonexistent/dir/out.json", &rep, err,
                             sizeof err);
    assert_true(rc < 0);
    tt_assert_file_is(path, orig, cut);
  }
  assert_int_equal(tt_count_files(dir), 2);
  tt_records_free(&exp);
  free(orig);
  free(path);
  free(out);
  free(link);
  tt_remove_dir(dir);
}

/* A directory we may not write: no temporary file, an error. */
static void test_unwritable_dir(void **state)
{
  char *dir, *path;
  struct twt_repair_report rep;
  char err[512];
  size_t len;
  char *orig;
  int rc;

  if (geteuid() == 0)
    skip();                         /* root writes anywhere */
  dir = tt_make_dir();
  path = tt_in_dir(dir, "t.json");
  (void)state;

  tt_write_trace(path, 0, 5, 0);
  orig = tu_read_file(path, &len);
  tt_write_bytes(path, orig, len - 10);
  assert_int_equal(chmod(dir, 0500), 0);
  rc = twt_repair_file(path, NULL, &rep, err, sizeof err);
  assert_int_equal(chmod(dir, 0700), 0);
  assert_int_equal(rc, -EACCES);
  assert_non_null(strstr(err, "temporary"));
  tt_assert_file_is(path, orig, len - 10);
  assert_int_equal(tt_count_files(dir), 1);
  free(orig);
  free(path);
  tt_remove_dir(dir);
}

/* ================================ the mmap sink's regions, NULs, FIFOs */

/* A growing byte buffer. */
/* n bytes of c at the end of b. */
static void text_fill(tu_text *b, int c, size_t n)
{
  memset(tu_text_room(b, n), c, n);
  b->len += n;
}

/* A file in the layout of the mmap sink with per-thread regions, left by
 * a kill: each thread copies ",\n{record}" into a region of the file
 * reserved for it; the unused rest of a region stays spaces; a thread
 * killed in a copy leaves a prefix of it followed by spaces.  What a
 * repair must keep: every complete record, in file order. */
typedef struct layout {
  tu_text file;
  size_t n;                /* complete records */
  size_t start[2048];      /* offset of each one's "{" */
  size_t len[2048];        /* its length */
  uint64_t killed;         /* copies cut: a prefix of ",\n{...}" */
  uint64_t cut;            /* records cut, past their ",\n" */
  uint64_t cut_bytes;      /* ... their text, padding and commas off */
  size_t nul_pages;        /* pages zeroed */
  int has_tail;
} layout;

/* Record i of thread t: strings with spaces, commas, brackets, braces
 * and escapes, a nested object last. */
static size_t region_record(char *buf, size_t size, unsigned t, unsigned i,
                            unsigned *seed)
{
  static const char filler[] = " , ] } [ { , \\\" ";
  unsigned pad = rand_r(seed) % 160;
  char padding[200];
  int n;

  for (unsigned k = 0; k < pad; k++)
    padding[k] = filler[k % (sizeof filler - 1)];
  /* Do not end on a lone backslash. */
  while (pad > 0 && padding[pad - 1] == '\\')
    pad--;
  n = snprintf(buf, size, "{\"ph\":\"i\",\"name\":\"t%u e%u, [x] {y} "
               "\\\"q\\\"\",\"ts\":%u.%03u,\"pid\":7,\"tid\":%u,\"s\":\"t\","
               "\"args\":{\"pad\":\"%.*s\"}}", t, i, 1000 + i, t, t,
               (int)pad, padding);
  assert_true(n > 0 && (size_t)n < size);
  return (size_t)n;
}

/* Build a random layout.  ending: 0 spaces then the tail (the mapping's
 * end), 1 spaces and no tail, 2 spaces then NULs, 3 nothing after the
 * last region.  nul_pages: zero some 4 KiB pages (a power loss). */
static void make_regions(layout *L, unsigned *seed, int object_form,
                         int ending, int nul_pages)
{
  enum { MAX_THREADS = 4 };
  unsigned threads = 1 + rand_r(seed) % MAX_THREADS;
  /* Regions of a few KiB, or now and then longer than the padding the
   * reader keeps in memory (64 KiB). */
  size_t region = rand_r(seed) % 8 ? 128 + rand_r(seed) % 4000
                                   : 70000 + rand_r(seed) % 70000;
  size_t pos[MAX_THREADS], end[MAX_THREADS];
  unsigned nrec = 10 + rand_r(seed) % 400;
  char rec[512];
  const char *first = "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":7,"
                      "\"args\":{\"name\":\"regions\"}}";

  memset(L, 0, sizeof *L);
  memset(pos, 0, sizeof pos);
  memset(end, 0, sizeof end);
  if (object_form)
    tu_text_put(&L->file, "{\"traceEvents\":[\n", 17);
  else
    tu_text_put(&L->file, "[\n", 2);
  L->start[L->n] = L->file.len;
  L->len[L->n++] = strlen(first);
  tu_text_put(&L->file, first, strlen(first));

  /* nrec complete records, then one more per thread, cut or not. */
  for (unsigned k = 0; k < nrec + threads; k++) {
    unsigned t = k < nrec ? rand_r(seed) % threads : k - nrec;
    size_t rl = region_record(rec + 2, sizeof rec - 2, t, k, seed) + 2;
    size_t keep = rl;

    rec[0] = ',';
    rec[1] = '\n';
    if (k >= nrec) {                /* the kill: a prefix of the copy */
      if (rand_r(seed) % 2)
        continue;                   /* this thread was idle */
      keep = 1 + rand_r(seed) % (rl - 1);
    }
    if (end[t] - pos[t] < rl) {     /* reserve a new region at the end */
      size_t size = rl > region ? rl : region;
      pos[t] = L->file.len;
      end[t] = pos[t] + size;
      text_fill(&L->file, ' ', size);
    }
    memcpy(L->file.p + pos[t], rec, keep);
    if (keep == rl) {
      assert_true(L->n < sizeof L->start / sizeof L->start[0]);
      L->start[L->n] = pos[t] + 2;
      L->len[L->n++] = rl - 2;
    } else if (keep < 3) {          /* "," or ",\n": a stray comma */
      L->killed++;
    } else {                        /* ",\n{" and more: a cut record */
      size_t text = keep - 2;
      while (text > 0 && strchr(" ,\t\r", rec[2 + text - 1]))
        text--;
      L->killed++;
      L->cut++;
      L->cut_bytes += text;
    }
    pos[t] += rl;
  }
  /* Complete records sorted by offset: file order. */
  for (size_t a = 1; a < L->n; a++)
    for (size_t b = a; b > 0 && L->start[b - 1] > L->start[b]; b--) {
      size_t s0 = L->start[b], l0 = L->len[b];
      L->start[b] = L->start[b - 1];
      L->len[b] = L->len[b - 1];
      L->start[b - 1] = s0;
      L->len[b - 1] = l0;
    }
  if (ending != 3)
    text_fill(&L->file, ' ', rand_r(seed) % 5000);
  if (ending == 0) {
    const char *tail = object_form ? "\n]}" : "\n]";
    tu_text_put(&L->file, tail, strlen(tail));
    L->has_tail = 1;
  } else if (ending == 2) {
    text_fill(&L->file, '\0', 1 + rand_r(seed) % 9000);
  }
  if (nul_pages) {
    /* Zero pages, not the first one (the head), and forget the records
     * they touch. */
    size_t kept = 0;
    for (size_t page = 4096; page < L->file.len; page += 4096) {
      if (rand_r(seed) % 6)
        continue;
      memset(L->file.p + page, 0,
             L->file.len - page < 4096 ? L->file.len - page : 4096);
      L->nul_pages++;
    }
    for (size_t i = 0; i < L->n; i++) {
      if (memchr(L->file.p + L->start[i], '\0', L->len[i]))
        continue;
      L->start[kept] = L->start[i];
      L->len[kept++] = L->len[i];
    }
    L->n = kept;
    if (L->has_tail && L->file.p[L->file.len - 1] == '\0')
      L->has_tail = 0;
  }
}

/* The file at path must be a strict trace of exactly L's records. */
static void assert_layout_file(const char *path, const layout *L,
                               int object_form)
{
  size_t len, i = 0;
  char *buf = tu_read_file(path, &len);
  jc_doc *d = tt_load_raw(buf, len);
  jc_val ev = tu_events(d), v;

  assert_int_equal(jc_len(d, ev), L->n);
  for (v = jc_first(d, ev); v >= 0; v = jc_next(d, v), i++) {
    size_t rl;
    const char *r = jc_raw(d, v, &rl);
    assert_int_equal(jc_type(d, v), JC_OBJECT);
    assert_int_equal(rl, L->len[i]);
    assert_memory_equal(r, L->file.p + L->start[i], rl);
  }
  tu_assert_str(d, jc_first(d, ev), "name", "process_name");
  jc_free(d);
  assert_memory_equal(buf + len - strlen(tt_out_tail(object_form)),
                      tt_out_tail(object_form),
                      strlen(tt_out_tail(object_form)));
  free(buf);
}


/* Several cut records and runs of spaces among complete records: every
 * complete record kept, in file order; every cut one dropped. */
static void test_mmap_regions(void **state)
{
  char *dir = tt_make_fast_dir();
  char *path = tt_in_dir(dir, "regions.json");
  char *out = tt_in_dir(dir, "out.json");
  unsigned seed = tt_seed();
  unsigned rounds = 400, several = 0;
  layout *L = malloc(sizeof *L);
  (void)state;

  assert_non_null(L);
  for (unsigned round = 0; round < rounds; round++) {
    int object_form = round % 5 == 4, ending = (int)(round % 4);
    int nul = round % 3 == 2;
    unsigned round_seed = seed + round;
    struct twt_repair_report rep;
    char err[512];
    int rc;

    make_regions(L, &round_seed, object_form, ending, nul);
    tt_write_bytes(path, L->file.p, L->file.len);
    rc = twt_repair_file(path, out, &rep, err, sizeof err);
    if (rc != 0)
      fail_msg("round %u (seed %u): %s", round, seed + round, err);
    if (L->cut >= 2)
      several++;
    assert_int_equal(rep.kept_records, L->n);
    assert_int_equal(rep.was_valid, L->killed == 0 && L->has_tail &&
                     L->nul_pages == 0 && ending == 0);
    if (L->nul_pages == 0) {
      assert_int_equal(rep.dropped_records, L->cut);
      assert_int_equal(rep.dropped_bytes, L->cut_bytes);
      assert_int_equal(rep.junk_bytes, 0);
      assert_int_equal(rep.had_tail, L->has_tail);
    }
    if (rep.was_valid)
      tt_assert_file_is(out, L->file.p, L->file.len);
    else
      assert_layout_file(out, L, object_form);
    free(L->file.p);
  }
  print_message("  %u layouts, %u with several cut records\n", rounds,
                several);
  assert_true(several > rounds / 10);
  free(L);
  unlink(path);
  unlink(out);
  free(path);
  free(out);
  tt_remove_dir(dir);
}

/* Write body, then n bytes of c, to path (in 1 MiB pieces). */
static void write_padded(const char *path, const char *body, size_t len,
                         int c, size_t n)
{
  size_t piece = (size_t)1 << 20;
  char *fill = malloc(piece);
  FILE *f = fopen(path, "wb");

  assert_true(f && fill);
  memset(fill, c, piece);
  assert_int_equal(fwrite(body, 1, len, f), len);
  for (size_t done = 0; done < n; done += piece) {
    size_t k = n - done < piece ? n - done : piece;
    assert_int_equal(fwrite(fill, 1, k, f), k);
  }
  assert_int_equal(fclose(f), 0);
  free(fill);
}

/* 64 MiB of NULs (or spaces) after the last record: repaired (quickly:
 * make bench-tools measures it), every record kept. */
static void test_long_padding(void **state)
{
  char *dir = tt_make_fast_dir();
  char *src = tt_in_dir(dir, "src.json");
  char *path = tt_in_dir(dir, "pad.json");
  size_t len, body, pad = (size_t)64 << 20;
  char *orig;
  tt_records exp;
  (void)state;

  tt_write_trace(src, 0, 50, 0);
  orig = tu_read_file(src, &len);
  tt_records_of(orig, len, &exp);
  body = exp.end[exp.n - 1];
  for (int c = 0; c <= ' '; c += ' ') {
    struct twt_repair_report rep;
    write_padded(path, orig, body, c, pad);
    repair_ok(path, NULL, &rep);
    assert_false(rep.was_valid);
    assert_false(rep.had_tail);
    assert_int_equal(rep.kept_records, exp.n);
    assert_int_equal(rep.dropped_records, 0);
    assert_int_equal(rep.junk_bytes, 0);
    assert_int_equal(rep.json_bytes, body + pad);
    tt_assert_trace_file(path, &exp, exp.n, 0);
    /* With the tail after the padding, spaces are valid, NULs not. */
    write_padded(path, orig, body, c, pad);
    {
      FILE *f = fopen(path, "ab");
      assert_non_null(f);
      fputs("\n]", f);
      assert_int_equal(fclose(f), 0);
    }
    repair_ok(path, NULL, &rep);
    assert_int_equal(rep.was_valid, c == ' ');
    assert_true(rep.had_tail);
    assert_int_equal(rep.kept_records, exp.n);
    if (c == ' ')
      assert_int_equal(rep.input_bytes, body + pad + 2);
    else
      tt_assert_trace_file(path, &exp, exp.n, 0);
  }
  tt_records_free(&exp);
  free(orig);
  unlink(src);
  unlink(path);
  free(src);
  free(path);
  tt_remove_dir(dir);
}

/* A strictly valid trace is left untouched, byte for byte, whether it
 * ends at the bracket or with a newline after it; and so is a file with
 * records one per line in the "\n,{...}" style. */
static void test_valid_any_last_byte(void **state)
{
  static const char *const files[] = {
    "[\n{\"ph\":\"M\",\"name\":\"process_name\"},\n{\"ph\":\"i\"}\n]",
    "[\n{\"ph\":\"M\",\"name\":\"process_name\"},\n{\"ph\":\"i\"}\n]\n",
    "[\n{\"ph\":\"M\",\"name\":\"process_name\"}\n,{\"ph\":\"i\"}\n]",
    "{\"traceEvents\":[\n{\"ph\":\"M\"},\n{\"ph\":\"i\"}\n]}",
    "{\"traceEvents\":[\n{\"ph\":\"M\"},\n{\"ph\":\"i\"}\n]}\n",
    "{\"traceEvents\":[\n{\"ph\":\"M\"}\n],\"displayTimeUnit\":\"ns\"}",
  };
  char *dir = tt_make_dir();
  char *path = tt_in_dir(dir, "v.json");
  (void)state;

  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    struct twt_repair_report rep;
    tt_snap before, after;
    tt_write_bytes(path, files[i], strlen(files[i]));
    jc_free(tu_load(path));          /* strict JSON, as written */
    before = tt_take_snap(path);
    repair_ok(path, NULL, &rep);
    if (!rep.was_valid)
      fail_msg("file %zu: rewritten", i);
    assert_false(rep.written);
    assert_int_equal(rep.kept_records, i == 5 ? 1 : 2);
    after = tt_take_snap(path);
    tt_assert_same_snap(&before, &after);
    tt_assert_file_is(path, files[i], strlen(files[i]));
  }
  unlink(path);
  free(path);
  tt_remove_dir(dir);
}


/* A FIFO is refused at once, not opened for reading until a writer comes
 * (the guard: an alarm, which fails the test). */
static void test_fifo_refused(void **state)
{
  char *dir = tt_make_dir();
  char *fifo = tt_in_dir(dir, "fifo.json");
  struct twt_repair_report rep;
  char err[512];
  unsigned left;
  int rc;
  (void)state;

  assert_int_equal(mkfifo(fifo, 0600), 0);
  left = tt_guard_begin(2, "repair of a FIFO blocked");
  rc = twt_repair_file(fifo, NULL, &rep, err, sizeof err);
  tt_guard_end(left);
  assert_int_equal(rc, -EINVAL);
  assert_non_null(strstr(err, fifo));
  assert_non_null(strstr(err, "not a regular file"));
  {
    char *a[] = { "repair", fifo, NULL };
    left = tt_guard_begin(2, "tracewriter repair FIFO blocked");
    assert_int_equal(tt_run(twt_tool_repair_main, 2, a, NULL, NULL), 1);
    tt_guard_end(left);
  }
  assert_int_equal(tt_count_files(dir), 1);
  free(fifo);
  tt_remove_dir(dir);
}

/* ============================================================ sizes */

static void test_big_file(void **state)
{
  char *dir = tt_make_dir();
  char *path = tt_in_dir(dir, "big.json");
  struct twt_repair_report rep;
  size_t len;
  char *orig;
  tt_records exp;
  tt_snap before, after;
  (void)state;

  tt_write_trace(path, 0, 50000, 0);
  orig = tu_read_file(path, &len);
  assert_true(len > 5u * 1000 * 1000);
  tt_records_of(orig, len, &exp);
  assert_int_equal(exp.n, 50000 + TT_DOC_RECORDS);

  before = tt_take_snap(path);
  repair_ok(path, NULL, &rep);
  assert_true(rep.was_valid);
  assert_int_equal(rep.kept_records, 50000 + TT_DOC_RECORDS);
  after = tt_take_snap(path);
  tt_assert_same_snap(&before, &after);

  /* Cut in the middle of the last record. */
  tt_write_bytes(path, orig, exp.start[exp.n - 1] + exp.rawlen[exp.n - 1] / 2);
  repair_ok(path, NULL, &rep);
  assert_int_equal(rep.kept_records, 50000 + TT_DOC_RECORDS - 1);
  assert_int_equal(rep.dropped_records, 1);
  tt_assert_trace_file(path, &exp, 50000 + TT_DOC_RECORDS - 1, 0);
  tt_records_free(&exp);
  free(orig);
  free(path);
  tt_remove_dir(dir);
}

static void test_big_record(void **state)
{
  char *dir = tt_make_dir();
  char *path = tt_in_dir(dir, "rec.json");
  struct twt_repair_report rep;
  struct twt_repair_options o;
  size_t len, big = 2 * 1000 * 1000;
  char err[512];
  char *orig;
  tt_records exp;
  (void)state;

  /* The big record follows the document's records and 10 events. */
  enum { BIG = TT_DOC_RECORDS + 10 };

  tt_write_trace(path, 0, 10, big);
  orig = tu_read_file(path, &len);
  tt_records_of(orig, len, &exp);
  assert_int_equal(exp.n, 11 + TT_DOC_RECORDS);
  assert_true(exp.rawlen[BIG] > big);

  repair_ok(path, NULL, &rep);
  assert_true(rep.was_valid);

  /* The big record whole, its tail missing: kept. */
  tt_write_bytes(path, orig, exp.end[BIG]);
  repair_ok(path, NULL, &rep);
  assert_int_equal(rep.kept_records, 11 + TT_DOC_RECORDS);
  tt_assert_trace_file(path, &exp, BIG + 1, 0);
  /* Cut inside it: dropped, 1.5 MB counted. */
  tt_write_bytes(path, orig, exp.start[BIG] + 1500000);
  repair_ok(path, NULL, &rep);
  assert_int_equal(rep.kept_records, 10 + TT_DOC_RECORDS);
  assert_int_equal(rep.dropped_records, 1);
  assert_int_equal(rep.dropped_bytes, 1500000);
  tt_assert_trace_file(path, &exp, BIG, 0);
  /* A record longer than max_line is refused, not dropped. */
  tt_write_bytes(path, orig, exp.end[BIG]);
  twt_repair_options_init(&o);
  o.max_line = 1024 * 1024;
  assert_int_equal(twt_repair_file_ex(path, NULL, &o, &rep, err, sizeof err),
                   TWT_REPAIR_ELINE);
  assert_non_null(strstr(err, "max-line"));
  tt_assert_file_is(path, orig, exp.end[BIG]);
  assert_int_equal(tt_count_files(dir), 1);
  /* With max_line raised, repaired. */
  o.max_line = 4 * 1024 * 1024;
  assert_int_equal(twt_repair_file_ex(path, NULL, &o, &rep, err, sizeof err),
                   0);
  tt_assert_trace_file(path, &exp, BIG + 1, 0);
  tt_records_free(&exp);
  free(orig);
  free(path);
  tt_remove_dir(dir);
}

/* ============================================================= gzip */

static void check_gzip_cuts(int object_form)
{
  char *dir = tt_make_dir();
  char *src = tt_in_dir(dir, "src.json");
  char *path = tt_in_dir(dir, "t.json.gz");
  char *out = tt_in_dir(dir, "out.json.gz");
  struct twt_repair_report rep;
  size_t len, glen;
  unsigned char *gz;
  char *orig;
  tt_records exp;
  tt_snap before, after;

  tt_write_trace(src, object_form, 300, 0);
  orig = tu_read_file(src, &len);
  tt_records_of(orig, len, &exp);
  gz = tt_gz_member(orig, len, &glen);

  /* Complete: valid, untouched. */
  tt_write_bytes(path, gz, glen);
  before = tt_take_snap(path);
  repair_ok(path, NULL, &rep);
  assert_true(rep.was_valid);
  assert_true(rep.was_gzip);
  assert_int_equal(rep.kept_records, exp.n);
  assert_int_equal(rep.json_bytes, len);
  after = tt_take_snap(path);
  tt_assert_same_snap(&before, &after);

  /* Cut every 97th byte: what inflated before the cut is kept. */
  for (size_t cut = 1; cut < glen; cut += 97) {
    size_t tl;
    int complete, rc;
    char err[512];
    char *text = tt_gz_inflate(gz, cut, &tl, &complete);
    size_t kept = tt_complete_in(&exp, tl);

    assert_false(complete);
    tt_write_bytes(path, gz, cut);
    rc = twt_repair_file(path, out, &rep, err, sizeof err);
    if (kept == 0) {
      assert_true(rc == TWT_REPAIR_ENORECORD || rc == TWT_REPAIR_ENOTTRACE);
      assert_int_equal(tt_count_files(dir), 2);
    } else {
      if (rc != 0)
        fail_msg("cut %zu: %s", cut, err);
      assert_true(rep.was_gzip);
      assert_false(rep.was_valid);
      assert_true(rep.gzip_cut);
      if (rep.gzip_stale) {
        /* The end looked like the sink's stale block and trailer: what
         * inflated from those bytes is not used (a 1 in 2^8+ chance). */
        assert_true(rep.kept_records <= kept);
        assert_true(rep.json_bytes <= tl);
        kept = (size_t)rep.kept_records;
      } else {
        assert_int_equal(rep.json_bytes, tl);
        assert_int_equal(rep.kept_records, kept);
      }
      tt_assert_gzip_trace_file(out, &exp, kept, object_form);
      assert_int_equal(tt_count_files(dir), 3);
      /* The output is itself valid. */
      repair_ok(out, NULL, &rep);
      assert_true(rep.was_valid);
    }
    tt_assert_file_is(path, gz, cut);
    free(text);
  }
  /* In place, cut in the last quarter. */
  tt_write_bytes(path, gz, glen * 3 / 4);
  repair_ok(path, NULL, &rep);
  assert_true(rep.in_place);
  {
    size_t tl;
    int complete;
    char *text = tt_gz_inflate(gz, glen * 3 / 4, &tl, &complete);
    tt_assert_gzip_trace_file(path, &exp, tt_complete_in(&exp, tl),
                              object_form);
    free(text);
  }
  /* Bytes after the member: rewritten without them. */
  {
    unsigned char *more = malloc(glen + 5);
    assert_non_null(more);
    memcpy(more, gz, glen);
    memcpy(more + glen, "junk!", 5);
    tt_write_bytes(path, more, glen + 5);
    repair_ok(path, NULL, &rep);
    assert_false(rep.was_valid);
    assert_int_equal(rep.gzip_trailing, 5);
    assert_int_equal(rep.kept_records, exp.n);
    tt_assert_gzip_trace_file(path, &exp, exp.n, object_form);
    free(more);
  }
  /* A corrupt byte in the middle: everything before it is kept. */
  {
    unsigned char *bad = malloc(glen);
    assert_non_null(bad);
    memcpy(bad, gz, glen);
    bad[glen / 2] ^= 0x55;
    tt_write_bytes(path, bad, glen);
    repair_ok(path, NULL, &rep);
    assert_false(rep.was_valid);
    assert_true(rep.gzip_corrupt || rep.dropped_records || rep.junk_bytes ||
                rep.kept_records < exp.n);
    /* Whatever garbage decoded, what is kept is strict JSON. */
    {
      size_t jl;
      int complete;
      size_t gl2;
      char *g2 = tu_read_file(path, &gl2);
      char *json = tt_gz_inflate((unsigned char *)g2, gl2, &jl, &complete);
      assert_true(complete);
      jc_free(tt_load_raw(json, jl));
      free(json);
      free(g2);
    }
    free(bad);
  }
  free(gz);
  tt_records_free(&exp);
  free(orig);
  free(src);
  free(path);
  free(out);
  tt_remove_dir(dir);
}

static void test_gzip_array(void **state)
{
  (void)state;
  check_gzip_cuts(0);
}

static void test_gzip_object(void **state)
{
  (void)state;
  check_gzip_cuts(1);
}

/* The gzip sink's layout: valid after every commit; a crash inside a
 * commit leaves the new deflate data cut, possibly followed by stale bytes
 * of the old stored block and trailer. */
static void check_gzip_sink_layout(int object_form, int old_tail)
{
  char *dir = tt_make_dir();
  char *src = tt_in_dir(dir, "src.json");
  char *path = tt_in_dir(dir, "t.json.gz");
  char *out = tt_in_dir(dir, "out.json.gz");
  const char *tail = old_tail ? (object_form ? "\n]}\n" : "\n]\n")
                              : tt_out_tail(object_form);
  struct twt_repair_report rep;
  size_t len, ncommits = 0;
  size_t bounds[64];
  char *orig;
  tt_records exp;
  gzsim g;

  tt_write_trace(src, object_form, 60, 0);
  orig = tu_read_file(src, &len);
  tt_records_of(orig, len, &exp);
  /* Commits: the head and the first record, then 5 records at a time. */
  bounds[ncommits++] = exp.end[0];
  for (size_t i = 1; i < exp.n; i += 5)
    bounds[ncommits++] = exp.end[i + 4 < exp.n ? i + 4 : exp.n - 1];
  assert_true(ncommits < 64);
  sim_init(&g, tail);
  for (size_t k = 0; k < ncommits; k++) {
    size_t from = k ? bounds[k - 1] : 0, wn;
    unsigned char *w, *prev = malloc(g.file.len + 1);
    size_t prev_len = g.file.len, prev_end = g.data_end;
    assert_non_null(prev);
    memcpy(prev, g.file.p, g.file.len);
    sim_commit(&g, orig + from, bounds[k] - from, &w, &wn);

    /* After the commit: valid as it is. */
    tt_write_bytes(path, g.file.p, g.file.len);
    repair_ok(path, NULL, &rep);
    if (!rep.was_valid)
      fail_msg("commit %zu: not valid", k);
    assert_int_equal(rep.kept_records, tt_complete_in(&exp, bounds[k]));
    /* A crash inside it: the old file overwritten by a prefix of the
     * commit's bytes at the old tail's offset. */
    if (k > 0) {
      for (size_t j = 0; j < wn; j += j < 40 ? 1 : 13) {
        size_t flen = prev_end + j > prev_len ? prev_end + j : prev_len;
        unsigned char *f = malloc(flen);
        size_t before = tt_complete_in(&exp, bounds[k - 1]);
        assert_non_null(f);
        memcpy(f, prev, prev_len);
        memcpy(f + prev_end, w, j);
        tt_write_bytes(path, f, flen);
        repair_ok(path, out, &rep);
        if (rep.kept_records < before)
          fail_msg("commit %zu cut at %zu of %zu: kept %u < %zu (cut %d "
                   "corrupt %d stale %d discarded %u)", k, j, wn,
                   (unsigned)rep.kept_records, before, rep.gzip_cut,
                   rep.gzip_corrupt, rep.gzip_stale,
                   (unsigned)rep.gzip_discarded);
        if (j > 0 && j < 5 + strlen(tail) + 8)
          assert_true(rep.gzip_stale);
        assert_true(rep.kept_records <= tt_complete_in(&exp, bounds[k]));
        if (rep.was_valid)          /* j == 0: a copy, byte for byte */
          tt_assert_file_is(out, f, flen);
        else
          tt_assert_gzip_trace_file(out, &exp, (size_t)rep.kept_records,
                                    object_form);
        free(f);
      }
    }
    free(w);
    free(prev);
  }
  sim_free(&g);
  tt_records_free(&exp);
  free(orig);
  free(src);
  free(path);
  free(out);
  tt_remove_dir(dir);
}

/* The stored block holds today's tail ("\n]") or 0.1's ("\n]\n"). */
static void test_gzip_sink_layout_array(void **state)
{
  (void)state;
  check_gzip_sink_layout(0, 0);
  check_gzip_sink_layout(0, 1);
}

static void test_gzip_sink_layout_object(void **state)
{
  (void)state;
  check_gzip_sink_layout(1, 0);
  check_gzip_sink_layout(1, 1);
}

/* The library's own gzip sink, when it is there: its files after every
 * commit are valid; cut anywhere they are repaired; and a crash inside a
 * commit (the file of commit k overwritten at its stored block by a
 * prefix of commit k+1's bytes) keeps every record of commit k. */
static void check_gzip_library_sink(int object_form)
{
  size_t old_end;                   /* stored block + trailer */
  char *dir = tt_make_dir();
  char *path = tt_in_dir(dir, "lib.json.gz");
  char *crash = tt_in_dir(dir, "crash.json.gz");
  char *out = tt_in_dir(dir, "out.json.gz");
  struct twt_repair_report rep;
  tw_options o;
  tw_writer *w;
  size_t glen, jlen, nsnaps = 0, snap_len[40];
  int err = 0, complete;
  char *gz, *json, *snaps[40];
  tt_records exp;

  tt_trace_options(&o, object_form);
  o.sink = TW_SINK_GZIP;
  w = tw_open(path, &o, &err);
  if (!w && err == TW_ESINK) {      /* the sink is not there yet */
    free(path);
    free(crash);
    free(out);
    tt_remove_dir(dir);
    skip();
  }
  assert_non_null(w);
  for (size_t i = 0; i < 400; i++) {
    tt_emit_event(w, i);
    if (i % 10 == 9 && nsnaps < 40) {   /* a commit, and its file */
      assert_int_equal(tw_flush(w), 0);
      snaps[nsnaps] = tu_read_file(path, &snap_len[nsnaps]);
      nsnaps++;
    }
  }
  assert_int_equal(tw_close(w), 0);
  gz = tu_read_file(path, &glen);
  json = tt_gz_inflate((unsigned char *)gz, glen, &jlen, &complete);
  assert_true(complete);
  tt_records_of(json, jlen, &exp);
  old_end = 5 + tt_lib_tail_len(json, jlen, object_form) + 8;
  repair_ok(path, NULL, &rep);
  assert_true(rep.was_valid);
  assert_int_equal(rep.kept_records, exp.n);

  /* Cut every 97th byte. */
  for (size_t cut = 1; cut < glen; cut += 97) {
    size_t tl;
    char *text = tt_gz_inflate((unsigned char *)gz, cut, &tl, &complete);
    size_t kept = tt_complete_in(&exp, tl);
    char msg[512];
    tt_write_bytes(path, gz, cut);
    if (kept == 0) {
      assert_true(twt_repair_file(path, out, &rep, msg, sizeof msg) < 0);
    } else {
      repair_ok(path, out, &rep);
      if (rep.gzip_stale)
        assert_true(rep.kept_records <= kept);
      else
        assert_int_equal(rep.kept_records, kept);
      tt_assert_gzip_trace_file(out, &exp, (size_t)rep.kept_records,
                                object_form);
    }
    free(text);
  }

  /* Each commit's file is valid; a crash in the next commit keeps it
   * (every byte of the stale region, then a sample). */
  for (size_t k = 0; k + 1 < nsnaps; k += k + 2 < nsnaps - 4 ? 4 : 1) {
    const char *prev = snaps[k], *next = snaps[k + 1];
    size_t plen = snap_len[k], nlen = snap_len[k + 1], pend, committed;
    char *text;

    text = tt_gz_inflate((unsigned char *)prev, plen, &jlen, &complete);
    assert_true(complete);
    committed = tt_complete_in(&exp, jlen);
    free(text);
    tt_write_bytes(path, prev, plen);
    repair_ok(path, NULL, &rep);
    assert_true(rep.was_valid);
    assert_int_equal(rep.kept_records, committed);
    /* The sink's layout: commit k+1 keeps commit k's deflate data and
     * writes over its stored block and trailer. */
    assert_true(plen > old_end + 10 && nlen > plen);
    pend = plen - old_end;
    assert_memory_equal(prev, next, pend);
    for (size_t j = 1; j < nlen - pend; j += j < old_end + 4 ? 1 : 19) {
      char *f = malloc(nlen);
      size_t flen = pend + j > plen ? pend + j : plen;
      assert_non_null(f);
      memcpy(f, prev, plen);
      memcpy(f + pend, next + pend, j);
      tt_write_bytes(crash, f, flen);
      repair_ok(crash, out, &rep);
      if (rep.kept_records < committed)
        fail_msg("commit %zu cut after %zu bytes: kept %u of %zu",
                 k + 1, j, (unsigned)rep.kept_records, committed);
      if (j < old_end)
        assert_true(rep.gzip_stale);
      if (rep.was_valid)            /* a copy, byte for byte */
        tt_assert_file_is(out, f, flen);
      else
        tt_assert_gzip_trace_file(out, &exp, (size_t)rep.kept_records,
                                  object_form);
      free(f);
    }
  }
  for (size_t k = 0; k < nsnaps; k++)
    free(snaps[k]);
  tt_records_free(&exp);
  free(json);
  free(gz);
  free(path);
  free(crash);
  free(out);
  tt_remove_dir(dir);
}

static void test_gzip_library_sink_array(void **state)
{
  (void)state;
  check_gzip_library_sink(0);
}

static void test_gzip_library_sink_object(void **state)
{
  (void)state;
  check_gzip_library_sink(1);
}

/* ============================================================== CLI */

static void test_cli(void **state)
{
  char *dir = tt_make_dir();
  char *path = tt_in_dir(dir, "t.json");
  char *out = tt_in_dir(dir, "out.json");
  char *bad = tt_in_dir(dir, "bad.json");
  size_t len;
  char *orig;
  tt_records exp;
  (void)state;

  tt_write_trace(path, 0, 8, 0);
  orig = tu_read_file(path, &len);
  tt_records_of(orig, len, &exp);
  tt_write_bytes(bad, "{\"a\":1}\n", 8);

  {
    char *a[] = { "repair", NULL };
    assert_int_equal(tt_run(twt_tool_repair_main, 1, a, NULL, NULL), 2);
  }
  {
    char *a[] = { "repair", "--bogus", path, NULL };
    assert_int_equal(tt_run(twt_tool_repair_main, 3, a, NULL, NULL), 2);
  }
  {
    char *a[] = { "repair", "-x", path, NULL };
    assert_int_equal(tt_run(twt_tool_repair_main, 3, a, NULL, NULL), 2);
  }
  {
    char *a[] = { "repair", path, "-o", NULL };
    assert_int_equal(tt_run(twt_tool_repair_main, 3, a, NULL, NULL), 2);
  }
  {
    char *a[] = { "repair", path, path, NULL };
    assert_int_equal(tt_run(twt_tool_repair_main, 3, a, NULL, NULL), 2);
  }
  {
    char *a[] = { "repair", "--max-line", "12q", path, NULL };
    assert_int_equal(tt_run(twt_tool_repair_main, 4, a, NULL, NULL), 2);
  }
  {
    char *a[] = { "repair", "--max-line", "10", path, NULL };
    assert_int_equal(tt_run(twt_tool_repair_main, 4, a, NULL, NULL), 2);
  }
  {
    char *a[] = { "repair", "-o", "", path, NULL };
    assert_int_equal(tt_run(twt_tool_repair_main, 4, a, NULL, NULL), 2);
  }
  {
    char *a[] = { "repair", "--help", NULL };
    assert_int_equal(tt_run(twt_tool_repair_main, 2, a, NULL, NULL), 0);
  }
  {
    char *a[] = { "repair", "/nonexistent/trace.json", NULL };
    assert_int_equal(tt_run(twt_tool_repair_main, 2, a, NULL, NULL), 1);
  }
  {
    char *a[] = { "repair", bad, NULL };
    assert_int_equal(tt_run(twt_tool_repair_main, 2, a, NULL, NULL), 1);
    tt_assert_file_is(bad, "{\"a\":1}\n", 8);
  }
  {
    char *a[] = { "repair", path, NULL };
    assert_int_equal(tt_run(twt_tool_repair_main, 2, a, NULL, NULL), 0);
    tt_assert_file_is(path, orig, len);
  }
  /* Options after the file, and long forms. */
  tt_write_bytes(path, orig, len - 30);
  {
    char *a[] = { "repair", path, "--output", out, "-q", "--max-line",
                  "1MiB", NULL };
    assert_int_equal(tt_run(twt_tool_repair_main, 7, a, NULL, NULL), 0);
    tt_assert_file_is(path, orig, len - 30);
    tt_assert_trace_file(out, &exp, exp.n - 1, 0);
  }
  {
    char *a[] = { "repair", "-n", path, NULL };
    assert_int_equal(tt_run(twt_tool_repair_main, 3, a, NULL, NULL), 0);
    tt_assert_file_is(path, orig, len - 30);
  }
  {
    char *a[] = { "repair", path, NULL };
    assert_int_equal(tt_run(twt_tool_repair_main, 2, a, NULL, NULL), 0);
    tt_assert_trace_file(path, &exp, exp.n - 1, 0);
  }
  tt_records_free(&exp);
  free(orig);
  free(path);
  free(out);
  free(bad);
  tt_remove_dir(dir);
}

static void test_describe(void **state)
{
  struct twt_repair_report rep;
  char buf[512];
  (void)state;

  memset(&rep, 0, sizeof rep);
  rep.was_valid = 1;
  rep.kept_records = 12345;
  twt_repair_describe("trace.json", NULL, &rep, buf, sizeof buf);
  assert_string_equal(buf, "trace.json: already valid (12345 records)");

  memset(&rep, 0, sizeof rep);
  rep.kept_records = 12345;
  rep.dropped_records = 1;
  rep.dropped_bytes = 873;
  rep.had_tail = 1;
  rep.written = 1;
  rep.in_place = 1;
  twt_repair_describe("trace.json", NULL, &rep, buf, sizeof buf);
  assert_string_equal(buf, "trace.json: kept 12345 records, dropped 1 "
                      "partial record (873 bytes); repaired in place");

  memset(&rep, 0, sizeof rep);
  rep.kept_records = 1;
  rep.written = 1;
  rep.was_gzip = 1;
  rep.gzip_cut = 1;
  twt_repair_describe("t.json.gz", "o.json.gz", &rep, buf, sizeof buf);
  assert_string_equal(buf, "t.json.gz: kept 1 record, dropped nothing; "
                      "the tail was missing; the gzip data was cut; "
                      "written to o.json.gz");

  /* Truncated to the buffer, always terminated. */
  twt_repair_describe("t.json.gz", "o.json.gz", &rep, buf, 10);
  assert_int_equal(strlen(buf), 9);
}


/* ==================================================== depth, layout */

/* "[[[...]]]", depth deep, malloc'ed. */
static char *nested(unsigned depth)
{
  char *s = malloc(2 * (size_t)depth + 1);

  assert_non_null(s);
  memset(s, '[', depth);
  memset(s + depth, ']', depth);
  s[2 * depth] = '\0';
  return s;
}

/* Read path to its end with the reader (flags): the records kept and
 * dropped, and whether it is strict. */
static void read_counts(const char *path, unsigned flags, uint64_t *kept,
                        uint64_t *dropped, int *strict)
{
  struct twt_read_options ro;
  twt_reader *r;
  twt_read_item item;
  char err[512];

  memset(&ro, 0, sizeof ro);
  ro.flags = flags;
  assert_int_equal(twt_reader_open(&r, path, &ro, err, sizeof err), 0);
  while (twt_reader_next(r, &item) > 0)
    continue;
  assert_int_equal(twt_reader_error(r)[0], '\0');
  *kept = twt_reader_info(r)->records;
  *dropped = twt_reader_info(r)->dropped_records;
  *strict = twt_reader_info(r)->strict;
  twt_reader_close(r);
}

/* repair in place leaves path exactly as it is (valid). */
static void assert_repair_leaves(const char *path)
{
  struct twt_repair_report rep;
  char err[512];
  size_t len, len2;
  char *before = tu_read_file(path, &len), *after;
  tt_snap a = tt_take_snap(path), b;

  if (twt_repair_file(path, NULL, &rep, err, sizeof err) != 0)
    fail_msg("repair: %s", err);
  assert_true(rep.was_valid);
  assert_false(rep.written);
  b = tt_take_snap(path);
  tt_assert_same_snap(&a, &b);
  after = tu_read_file(path, &len2);
  assert_int_equal(len, len2);
  assert_memory_equal(before, after, len);
  free(before);
  free(after);
}

/* One nesting limit, from one definition: a raw argument
 * TW_MAX_JSON_DEPTH deep is accepted by tw_emit, and its record is kept
 * by both readers and left alone by repair; one level more is refused by
 * tw_emit and, written by hand, dropped by both readers (the record,
 * with its args, is then TW__LAYOUT_RECORD_DEPTH + 1 deep). */
static void test_depth_limit(void **state)
{
  char *dir = tt_make_dir(), *path = tt_in_dir(dir, "deep.json");
  char *at = nested(TW_MAX_JSON_DEPTH), *past = nested(TW_MAX_JSON_DEPTH + 1);
  uint64_t kept, dropped;
  int strict, rc = 0;
  tw_options o;
  tw_writer *w;
  tw_arg a;
  (void)state;

  assert_int_equal(TW__LAYOUT_RECORD_DEPTH, TW_MAX_JSON_DEPTH + 2);
  tt_trace_options(&o, 0);
  w = tw_open(path, &o, &rc);
  assert_non_null(w);
  a = tw_arg_json("deep", at);
  assert_int_equal(tw_instant(w, "cat", "at the limit", 't', &a, 1), 0);
  a = tw_arg_json("deep", past);
  assert_int_equal(tw_instant(w, "cat", "one past", 't', &a, 1), TW_EJSON);
  assert_int_equal(tw_close(w), 0);
  for (unsigned f = 0; f < 2; f++) {
    read_counts(path, f ? TWT_READ_GENERAL : TWT_READ_LAYOUT, &kept,
                &dropped, &strict);
    assert_int_equal(kept, TT_DOC_RECORDS + 1);
    assert_int_equal(dropped, 0);
    assert_true(strict);
  }
  assert_repair_leaves(path);

  /* By hand, at the limit and one past it. */
  for (int over = 0; over < 2; over++) {
    char *doc;
    assert_true(asprintf(&doc, "[\n{\"ph\":\"M\",\"name\":\"process_name\","
                         "\"pid\":1,\"tid\":1,\"args\":{\"name\":\"x\"}},\n"
                         "{\"ph\":\"i\",\"name\":\"deep\",\"ts\":1,\"pid\":1,"
                         "\"tid\":1,\"args\":{\"deep\":%s}}\n]",
                         over ? past : at) > 0);
    tt_write_bytes(path, doc, strlen(doc));
    for (unsigned f = 0; f < 2; f++) {
      read_counts(path, f ? TWT_READ_GENERAL : TWT_READ_LAYOUT, &kept,
                  &dropped, &strict);
      assert_int_equal(kept, over ? 1 : 2);
      assert_int_equal(dropped, over ? 1 : 0);
      assert_int_equal(strict, !over);
    }
    if (!over)
      assert_repair_leaves(path);
    free(doc);
  }
  free(at);
  free(past);
  free(path);
  tt_remove_dir(dir);
}

/* A strictly valid file laid out otherwise than the library lays it out
 * -- a record over two lines (the first, or a later one), the tail on
 * the last record's line, CRLF -- is left byte-identical by repair. */
static void test_strict_other_layout(void **state)
{
  static const char *const docs[] = {
    "[\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"tid\":1,"
    "\"args\":{\"name\":\"x\"}},\n{\"ph\":\"X\",\"name\":\"a\",\n"
    "\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1}\n]",
    "[\n{\"ph\":\"M\",\"name\":\"process_name\",\n\"pid\":1,\"tid\":1,"
    "\"args\":{\"name\":\"x\"}},\n{\"ph\":\"X\",\"name\":\"a\","
    "\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1}\n]\n",
    "{\"traceEvents\":[\n{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":2,"
    "\"pid\":1,\"tid\":1},\n{\"ph\":\"X\",\"name\":\"b\",\"ts\":1,"
    "\"dur\":2,\"pid\":1,\n\"tid\":1}],\"displayTimeUnit\":\"ns\"}",
    "[\r\n{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":2,\"pid\":1,"
    "\"tid\":1},\r\n{\"ph\":\"X\",\"name\":\"b\",\"ts\":1,\"dur\":2,"
    "\"pid\":1,\"tid\":1}]",
  };
  char *dir = tt_make_dir(), *path = tt_in_dir(dir, "t.json");
  (void)state;

  for (size_t i = 0; i < sizeof docs / sizeof *docs; i++) {
    tt_write_bytes(path, docs[i], strlen(docs[i]));
    assert_repair_leaves(path);
  }
  free(path);
  tt_remove_dir(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_mmap_regions),
    cmocka_unit_test(test_long_padding),
    cmocka_unit_test(test_valid_any_last_byte),
    cmocka_unit_test(test_fifo_refused),
    cmocka_unit_test(test_valid_array),
    cmocka_unit_test(test_valid_object),
    cmocka_unit_test(test_cut_array),
    cmocka_unit_test(test_cut_object),
    cmocka_unit_test(test_layouts_array),
    cmocka_unit_test(test_layouts_object),
    cmocka_unit_test(test_object_tail_kept),
    cmocka_unit_test(test_not_a_trace),
    cmocka_unit_test(test_output_and_in_place),
    cmocka_unit_test(test_unwritable_dir),
    cmocka_unit_test(test_big_file),
    cmocka_unit_test(test_big_record),
    cmocka_unit_test(test_gzip_array),
    cmocka_unit_test(test_gzip_object),
    cmocka_unit_test(test_gzip_sink_layout_array),
    cmocka_unit_test(test_gzip_sink_layout_object),
    cmocka_unit_test(test_gzip_library_sink_array),
    cmocka_unit_test(test_gzip_library_sink_object),
    cmocka_unit_test(test_cli),
    cmocka_unit_test(test_describe),
    cmocka_unit_test(test_depth_limit),
    cmocka_unit_test(test_strict_other_layout),
  };
  tt_deadline("test_repair");
  return cmocka_run_group_tests(tests, NULL, NULL);
}
