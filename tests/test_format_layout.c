/* test_format_layout.c -- what tracewriter writes, by area (format_test.h)
 *
 * The file's layout: the head, the first record, the array and object
 * forms, the tail, records after a flush.
 *
 * Read back with the strict JSON checker, field by field
 * (format_test.h).
 */
#include "format_test.h"

/* ------------------------------------------------- 2. the file's layout */

static void test_first_record_default_name(void **state)
{
  static sess s;
  tw_stats st;
  size_t len;
  char *buf;
  (void)state;

  s_open(&s, NULL);
  s_stats(&s, &st);
  assert_int_equal(st.events, 2);
  assert_int_equal(st.rejected, 0);
  assert_int_equal(st.strings_truncated, 0);
  assert_int_equal(st.utf8_replaced, 0);
  /* Already a complete trace before anything else is written. */
  buf = tu_read_file(s.path, &len);
  assert_true(len > 4);
  assert_memory_equal(buf, "[\n{", 3);
  free(buf);
  tu_assert_tail(s.path, 0);
  s_finish(&s);
}

static void test_first_record_custom_name(void **state)
{
  static const char name[] = "my \"proc\"\n\\\t\x01 \xc3\xa9\xe6\xbc\xa2";
  tw_options o;
  static sess s;
  (void)state;

  assert_int_equal(tw_options_init(&o), 0);
  o.process_name = name;
  s_open(&s, &o);
  s_finish(&s);
}

static void test_layout_array(void **state)
{
  static sess s;
  tw_event ev;
  size_t len;
  char *buf;
  static const tw_arg args[] = {
    { "s", TW_ARG_STRING, TW_NUL_TERMINATED, { .s = "line1\nline2\r\n" } },
    { "j", TW_ARG_JSON, TW_NUL_TERMINATED, { .s = "{\n\"a\":\n[1,\r\n2]\n}" } },
  };
  (void)state;

  s_open(&s, NULL);
  for (int i = 0; i < 5; i++)
    s_good(&s);
  ev = mkev_ts('X', "c", "multi\nline", 5);
  ev.args = args;
  ev.nargs = 2;
  s_emit(&s, &ev);
  s_finish(&s);             /* checks one record per line */

  /* And once more by hand, for the exact head and tail bytes. */
  s_open(&s, NULL);
  s_good(&s);
  assert_int_equal(tw_close(s.w), 0);
  s.w = NULL;
  buf = tu_read_file(s.path, &len);
  assert_true(len > 6);
  assert_memory_equal(buf, "[\n{\"", 4);
  assert_memory_equal(buf + len - 2, "\n]", 2);
  free(buf);
  s.n = 0;
  s_done(&s, NULL);
}

static void test_layout_object(void **state)
{
  tw_options o;
  static sess s;
  size_t len;
  char *buf;
  jc_doc *d;
  (void)state;

  assert_int_equal(tw_options_init(&o), 0);
  o.format = TW_FORMAT_OBJECT;
  s_open(&s, &o);
  for (int i = 0; i < 3; i++)
    s_good(&s);
  assert_int_equal(tw_flush(s.w), 0);
  /* Committed: a complete object document already. */
  tu_assert_tail(s.path, 1);
  d = tu_load(s.path);
  assert_int_equal(jc_len(d, tu_events(d)), 4);
  jc_free(d);
  s_good(&s);
  d = s_close(&s);
  assert_int_equal(jc_type(d, jc_root(d)), JC_OBJECT);
  assert_true(jc_get(d, jc_root(d), "traceEvents") >= 0);
  buf = tu_read_file(s.path, &len);
  assert_memory_equal(buf, "{\"traceEvents\":[\n{", 18);
  assert_memory_equal(buf + len - 3, "\n]}", 3);
  free(buf);
  s_done(&s, d);

  /* The same through the options string. */
  assert_int_equal(tw_options_init(&o), 0);
  assert_int_equal(tw_options_parse(&o, "format=object", NULL, 0), 0);
  assert_int_equal(o.format, TW_FORMAT_OBJECT);
  s_open(&s, &o);
  s_good(&s);
  s_finish(&s);
}

static void test_flush_then_more(void **state)
{
  static sess s;
  jc_doc *d;
  (void)state;

  /* After each flush the file is a complete trace holding every event so
   * far; later events follow on. */
  s_open(&s, NULL);
  for (int i = 0; i < 4; i++) {
    s_good(&s);
    assert_int_equal(tw_flush(s.w), 0);
    check_layout(s.path, s.n + 1, 0);
    d = tu_load(s.path);
    assert_int_equal(jc_len(d, tu_events(d)), s.n + 1);
    jc_free(d);
  }
  s_finish(&s);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(test_first_record_default_name, teardown),
    cmocka_unit_test_teardown(test_first_record_custom_name, teardown),
    cmocka_unit_test_teardown(test_layout_array, teardown),
    cmocka_unit_test_teardown(test_layout_object, teardown),
    cmocka_unit_test_teardown(test_flush_then_more, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
