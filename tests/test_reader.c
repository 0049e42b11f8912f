/* test_reader.c -- the tool's trace reader and output (tools/reader.h,
 * tools/output.h), through their API
 *
 * The commands built on them (repair, snapshot, and later cat, merge,
 * slice, stats) rely on this contract: every complete record yielded
 * once, in file order, with its offset and line; the dropped lines
 * yielded on demand; rewind; a borrowed fd left as it was; sticky
 * errors; a growing file followed; an output that writes the library's
 * layout and leaves nothing behind on failure.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mkdtemp under -std=c99 */
#endif

#include "testutil.h"
#include "tooltest.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "output.h"
#include "reader.h"

/* Open path, failing with the message if it cannot. */
static twt_reader *open_ok(const char *path, unsigned flags,
                           size_t max_record)
{
  struct twt_read_options o = { max_record, flags };
  twt_reader *r;
  char err[512];

  if (twt_reader_open(&r, path, &o, err, sizeof err) != 0)
    fail_msg("twt_reader_open(%s): %s", path, err);
  return r;
}

/* Every record of r must be exp's, at its offset, in order. */
static void assert_reads(twt_reader *r, const tt_records *exp)
{
  twt_read_item item;
  size_t i = 0;
  int rc;

  while ((rc = twt_reader_next(r, &item)) > 0) {
    assert_int_equal(item.kind, TWT_ITEM_RECORD);
    assert_true(i < exp->n);
    assert_int_equal(item.len, exp->rawlen[i]);
    assert_memory_equal(item.text, exp->raw[i], item.len);
    assert_int_equal(item.offset, exp->start[i]);
    assert_int_equal(item.line, i + 2);
    i++;
  }
  if (rc != 0)
    fail_msg("twt_reader_next: %s", twt_reader_error(r));
  assert_int_equal(i, exp->n);
  assert_true(twt_reader_info(r)->ended);
  assert_int_equal(twt_reader_info(r)->records, exp->n);
}

/* A trace written by the library, plain and gzip: every record at its
 * offset; rewind reads it again; the info is the file's. */
static void test_records_and_offsets(void **state)
{
  char *dir = tt_make_dir();
  char *path = tt_in_dir(dir, "t.json");
  char *gz = tt_in_dir(dir, "t.json.gz");
  const struct twt_read_info *info;
  size_t len, glen;
  unsigned char *member;
  char *orig;
  tt_records exp;
  twt_reader *r;
  (void)state;

  for (int object_form = 0; object_form < 2; object_form++) {
    tt_write_trace(path, object_form, 300, 0);
    orig = tu_read_file(path, &len);
    tt_records_of(orig, len, &exp);
    r = open_ok(path, 0, 0);
    info = twt_reader_info(r);
    assert_false(info->gzip);
    assert_reads(r, &exp);
    assert_true(info->strict);
    assert_true(info->had_tail);
    assert_int_equal(info->object_form, object_form);
    assert_int_equal(info->tail_len, object_form ? 2 : 1);
    assert_memory_equal(info->tail, object_form ? "]}" : "]",
                        info->tail_len);
    assert_int_equal(info->json_bytes, len);
    assert_int_equal(info->input_bytes, len);
    assert_int_equal(info->dropped_records + info->junk_bytes, 0);
    /* After the end: 0 again.  Rewound: the same again. */
    {
      twt_read_item item;
      assert_int_equal(twt_reader_next(r, &item), 0);
    }
    assert_int_equal(twt_reader_rewind(r), 0);
    assert_int_equal(twt_reader_info(r)->records, 0);
    assert_reads(r, &exp);
    twt_reader_close(r);

    /* gzip: the offsets are the decompressed text's. */
    member = tt_gz_member(orig, len, &glen);
    tt_write_bytes(gz, member, glen);
    r = open_ok(gz, 0, 0);
    assert_true(twt_reader_info(r)->gzip);
    assert_reads(r, &exp);
    assert_true(twt_reader_info(r)->strict);
    assert_int_equal(twt_reader_info(r)->input_bytes, glen);
    assert_int_equal(twt_reader_info(r)->json_bytes, len);
    twt_reader_close(r);
    free(member);
    tt_records_free(&exp);
    free(orig);
  }
  free(path);
  free(gz);
  tt_remove_dir(dir);
}

/* TWT_READ_DROPPED: the cut records and the junk, in file order, with
 * their offsets, lines and sizes. */
static void test_dropped_items(void **state)
{
  static const char text[] =
    "[\n"
    "{\"ph\":\"M\",\"name\":\"process_name\"},\n"     /* line 2 */
    TT_CLOCK_LINE                                     /* 3 */
    "{\"ph\":\"X\",\"na         ,\n"                  /* 4: cut */
    "{\"ph\":\"i\",\"name\":\"a\"}     ,\n"            /* 5 */
    "garbage here  \n"                                /* 6: junk */
    "{\"ph\":\"i\",\"name\":\"b\"}\n"                  /* 7 */
    "]";
  static const struct { int kind; const char *starts; size_t len; } want[] = {
    { TWT_ITEM_RECORD, "{\"ph\":\"M\"", 32 },
    { TWT_ITEM_RECORD, "{\"ph\":\"c\"", sizeof TT_CLOCK_LINE - 3 },
    { TWT_ITEM_CUT, "{\"ph\":\"X\"", 13 },
    { TWT_ITEM_RECORD, "{\"ph\":\"i\",\"name\":\"a\"}", 21 },
    { TWT_ITEM_JUNK, "garbage", 12 },
    { TWT_ITEM_RECORD, "{\"ph\":\"i\",\"name\":\"b\"}", 21 },
  };
  char *dir = tt_make_dir();
  char *path = tt_in_dir(dir, "d.json");
  const struct twt_read_info *info;
  twt_read_item item;
  twt_reader *r;
  size_t i = 0;
  int rc;
  (void)state;

  tt_write_bytes(path, text, sizeof text - 1);
  r = open_ok(path, TWT_READ_DROPPED, 0);
  while ((rc = twt_reader_next(r, &item)) > 0) {
    assert_true(i < sizeof want / sizeof want[0]);
    assert_int_equal(item.kind, want[i].kind);
    assert_int_equal(item.len, want[i].len);
    assert_int_equal(item.line, i + 2);
    assert_memory_equal(text + item.offset, want[i].starts,
                        strlen(want[i].starts));
    if (item.kind == TWT_ITEM_RECORD)
      assert_memory_equal(item.text, text + item.offset, item.len);
    else
      assert_null(item.text);
    i++;
  }
  assert_int_equal(rc, 0);
  assert_int_equal(i, 6);
  info = twt_reader_info(r);
  assert_int_equal(info->records, 4);
  assert_int_equal(info->dropped_records, 1);
  assert_int_equal(info->dropped_bytes, 13);
  assert_int_equal(info->junk_bytes, 12);
  assert_false(info->strict);
  assert_true(info->had_tail);
  twt_reader_close(r);
  /* Without the flag: the records only, the same counts. */
  r = open_ok(path, 0, 0);
  for (i = 0; (rc = twt_reader_next(r, &item)) > 0; i++)
    assert_int_equal(item.kind, TWT_ITEM_RECORD);
  assert_int_equal(i, 4);
  assert_int_equal(twt_reader_info(r)->junk_bytes, 12);
  twt_reader_close(r);
  free(path);
  tt_remove_dir(dir);
}

/* A borrowed fd: read from offset 0 whatever its offset, left open and
 * where it was. */
static void test_borrowed_fd(void **state)
{
  char *dir = tt_make_dir();
  char *path = tt_in_dir(dir, "t.json");
  size_t len;
  char err[256], *orig;
  tt_records exp;
  twt_reader *r;
  int fd;
  (void)state;

  tt_write_trace(path, 0, 50, 0);
  orig = tu_read_file(path, &len);
  tt_records_of(orig, len, &exp);
  fd = open(path, O_RDONLY);
  assert_true(fd >= 0);
  assert_int_equal(lseek(fd, 17, SEEK_SET), 17);
  assert_int_equal(twt_reader_open_fd(&r, fd, "named", NULL, err,
                                      sizeof err), 0);
  assert_int_equal(twt_reader_fd(r), fd);
  assert_reads(r, &exp);
  twt_reader_close(r);
  assert_int_equal(lseek(fd, 0, SEEK_CUR), 17);
  assert_true(fcntl(fd, F_GETFD) >= 0);
  close(fd);
  /* Messages use the name given; errors are sticky. */
  tt_write_bytes(path, "nope\n", 5);
  fd = open(path, O_RDONLY);
  assert_int_equal(twt_reader_open_fd(&r, fd, "named", NULL, err,
                                      sizeof err), 0);
  {
    twt_read_item item;
    assert_int_equal(twt_reader_next(r, &item), TWT_READ_ENOTTRACE);
    assert_int_equal(twt_reader_next(r, &item), TWT_READ_ENOTTRACE);
    assert_non_null(strstr(twt_reader_error(r), "named: "));
  }
  twt_reader_close(r);
  close(fd);
  tt_records_free(&exp);
  free(orig);
  free(path);
  tt_remove_dir(dir);
}

/* Errors: at open (with the message in err), or at the first record;
 * a record over max_record. */
static void test_errors(void **state)
{
  char *dir = tt_make_dir();
  char *path = tt_in_dir(dir, "e.json");
  struct twt_read_options o = { 0, 0 };
  twt_read_item item;
  char err[512], big[9000];
  twt_reader *r;
  (void)state;

  assert_int_equal(twt_reader_open(&r, "/nonexistent/e.json", NULL, err,
                                   sizeof err), -ENOENT);
  assert_null(r);
  assert_non_null(strstr(err, "/nonexistent/e.json: cannot open"));
  assert_int_equal(twt_reader_open(&r, dir, NULL, err, sizeof err), -EISDIR);
  tt_write_bytes(path, "", 0);
  assert_int_equal(twt_reader_open(&r, path, NULL, err, sizeof err),
                   TWT_READ_ENOTTRACE);
  tt_write_bytes(path, "[\n{\"a\":", 7);
  r = open_ok(path, 0, 0);
  assert_int_equal(twt_reader_next(r, &item), TWT_READ_ENORECORD);
  assert_non_null(strstr(twt_reader_error(r), path));
  twt_reader_close(r);
  /* A record of 8 KiB against max_record 4 KiB, then 16 KiB. */
  memcpy(big, "[\n{\"s\":\"", 8);
  memset(big + 8, 'x', sizeof big - 8);
  memcpy(big + sizeof big - 3, "\"}\n", 3);
  tt_write_bytes(path, big, sizeof big);
  o.max_record = 4096;
  assert_int_equal(twt_reader_open(&r, path, &o, err, sizeof err), 0);
  assert_int_equal(twt_reader_next(r, &item), TWT_READ_ELINE);
  twt_reader_close(r);
  o.max_record = 16384;
  assert_int_equal(twt_reader_open(&r, path, &o, err, sizeof err), 0);
  assert_int_equal(twt_reader_next(r, &item), 1);
  assert_int_equal(item.len, sizeof big - 3);
  assert_int_equal(twt_reader_next(r, &item), 0);
  assert_false(twt_reader_info(r)->had_tail);
  twt_reader_close(r);
  free(path);
  tt_remove_dir(dir);
}

/* TWT_READ_FOLLOW: a record appended after the open is read whole when
 * the size at open ends inside it; without the flag it is cut. */
static void test_follow(void **state)
{
  static const char first[] = "[\n{\"ph\":\"M\",\"name\":\"process_name\"},\n"
                              TT_CLOCK_LINE
                              "{\"ph\":\"i\",\"name\":\"appen";
  static const char rest[] = "ded\"}\n]";
  char *dir = tt_make_dir();
  char *path = tt_in_dir(dir, "f.json");
  (void)state;

  for (int flag = 0; flag < 2; flag++) {
    twt_read_item item;
    twt_reader *r;
    FILE *f;

    tt_write_bytes(path, first, sizeof first - 1);
    r = open_ok(path, flag ? TWT_READ_FOLLOW : 0, 0);
    f = fopen(path, "ab");
    assert_non_null(f);
    fputs(rest, f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(twt_reader_next(r, &item), 1);
    assert_int_equal(twt_reader_next(r, &item), 1);   /* the clock */
    if (flag) {
      assert_int_equal(twt_reader_next(r, &item), 1);
      assert_int_equal(item.len, 28);
      assert_memory_equal(item.text, "{\"ph\":\"i\",\"name\":\"appended\"}",
                          28);
      assert_int_equal(twt_reader_next(r, &item), 0);
      assert_true(twt_reader_info(r)->had_tail);
      assert_true(twt_reader_info(r)->strict);
      assert_int_equal(twt_reader_info(r)->input_bytes,
                       sizeof first + sizeof rest - 2);
    } else {
      assert_int_equal(twt_reader_next(r, &item), 0);
      assert_int_equal(twt_reader_info(r)->dropped_records, 1);
      assert_false(twt_reader_info(r)->had_tail);
    }
    twt_reader_close(r);
  }
  /* The old tail read, then a commit writes new records over it (as the
   * file sink does, at the tail's offset): the tail read is the one
   * used, and nothing after it is read. */
  {
    static const char before[] =
      "[\n{\"ph\":\"M\",\"name\":\"process_name\"},\n" TT_CLOCK_LINE
      "{\"ph\":\"a\"}\n]";
    static const char commit[] = ",\n{\"ph\":\"i\"}\n]";
    twt_read_item item;
    twt_reader *r;
    int fd;

    tt_write_bytes(path, before, sizeof before - 1);
    r = open_ok(path, TWT_READ_FOLLOW, 0);
    assert_int_equal(twt_reader_next(r, &item), 1);   /* the file read */
    fd = open(path, O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, commit, sizeof commit - 1,
                            (off_t)(sizeof before - 3)),
                     (ssize_t)(sizeof commit - 1));
    close(fd);
    assert_int_equal(twt_reader_next(r, &item), 1);   /* the clock */
    assert_int_equal(twt_reader_next(r, &item), 1);
    assert_memory_equal(item.text, "{\"ph\":\"a\"}", item.len);
    assert_int_equal(twt_reader_next(r, &item), 0);
    assert_true(twt_reader_info(r)->had_tail);
    assert_true(twt_reader_info(r)->strict);
    assert_int_equal(twt_reader_info(r)->dropped_records +
                     twt_reader_info(r)->junk_bytes, 0);
    assert_int_equal(twt_reader_info(r)->input_bytes, sizeof before - 1);
    twt_reader_close(r);
  }
  free(path);
  tt_remove_dir(dir);
}

/* The output: the library's layout, byte for byte; gzip by name; nothing
 * left by a close before commit; a copy through the reader. */
static void test_output(void **state)
{
  char *dir = tt_make_dir();
  char *plain = tt_in_dir(dir, "o.json");
  char *gz = tt_in_dir(dir, "o.json.gz");
  char *src = tt_in_dir(dir, "src.json");
  struct twt_out_options oo;
  char err[512];
  twt_out *o;
  (void)state;

  twt_out_options_init(&oo);
  oo.compress = TWT_OUT_BY_NAME;
  for (int object_form = 0; object_form < 2; object_form++) {
    static const char a[] = "{\"ph\":\"M\"}", b[] = "{\"ph\":\"i\"}";
    const char *want = object_form ?
      "{\"traceEvents\":[\n{\"ph\":\"M\"},\n{\"ph\":\"i\"}\n]}" :
      "[\n{\"ph\":\"M\"},\n{\"ph\":\"i\"}\n]";
    assert_int_equal(twt_out_open(&o, plain, &oo, err, sizeof err), 0);
    assert_false(twt_out_is_gzip(o));
    assert_int_equal(twt_out_record(o, object_form, a, sizeof a - 1), 0);
    /* The temporary file (and the first round's output). */
    assert_int_equal(tt_count_files(dir), 1 + object_form);
    assert_int_equal(twt_out_record(o, object_form, b, sizeof b - 1), 0);
    assert_int_equal(twt_out_end(o, object_form, NULL, 0), 0);
    assert_int_equal(twt_out_commit(o), 0);
    assert_int_equal(twt_out_records(o), 2);
    assert_int_equal(twt_out_bytes(o), strlen(want));
    twt_out_close(o);
    tt_assert_file_is(plain, want, strlen(want));
    jc_free(tu_load(plain));
  }
  /* Closed before commit: the temporary file is gone, the old file
   * stays. */
  assert_int_equal(twt_out_open(&o, plain, &oo, err, sizeof err), 0);
  assert_int_equal(twt_out_record(o, 0, "{}", 2), 0);
  assert_int_equal(tt_count_files(dir), 2);
  twt_out_close(o);
  assert_int_equal(tt_count_files(dir), 1);
  jc_free(tu_load(plain));
  /* A directory is refused at open. */
  assert_int_equal(twt_out_open(&o, dir, &oo, err, sizeof err), -EISDIR);
  assert_null(o);
  /* A copy through the reader, to gzip by name. */
  {
    size_t len;
    char *orig;
    tt_records exp;
    twt_reader *r;
    struct stat st;

    tt_write_trace(src, 1, 100, 0);
    orig = tu_read_file(src, &len);
    tt_records_of(orig, len, &exp);
    r = open_ok(src, 0, 0);
    assert_int_equal(fstat(twt_reader_fd(r), &st), 0);
    assert_true(twt_out_same_file(src, &st));
    assert_false(twt_out_same_file(gz, &st));
    assert_int_equal(twt_out_open(&o, gz, &oo, err, sizeof err), 0);
    assert_true(twt_out_is_gzip(o));
    assert_int_equal(twt_out_copy_trace(o, r), 0);
    assert_int_equal(twt_out_commit(o), 0);
    twt_out_close(o);
    twt_reader_close(r);
    tt_assert_gzip_trace_file(gz, &exp, exp.n, 1);
    tt_records_free(&exp);
    free(orig);
  }
  free(plain);
  free(gz);
  free(src);
  tt_remove_dir(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_records_and_offsets),
    cmocka_unit_test(test_dropped_items),
    cmocka_unit_test(test_borrowed_fd),
    cmocka_unit_test(test_errors),
    cmocka_unit_test(test_follow),
    cmocka_unit_test(test_output),
  };

  tt_deadline("test_reader");
  return cmocka_run_group_tests(tests, NULL, NULL);
}
