/* test_format_args.c -- what tracewriter writes, by area (format_test.h)
 *
 * Arguments of every type, raw JSON, and TW_MAX_ARGS of them.
 *
 * Read back with the strict JSON checker, field by field
 * (format_test.h).
 */
#include "format_test.h"

/* ---------------------------------------------------------- arguments */

static void test_args_integers(void **state)
{
  static const int64_t iv[] = { 0, 1, -1, 9, 10, 99, 100, -100,
                                1234567890123456789LL, INT64_MAX, INT64_MIN,
                                INT64_MIN + 1 };
  static const uint64_t uv[] = { 0, 1, 9, 10, 4294967296ULL,
                                 (uint64_t)INT64_MAX + 1, UINT64_MAX,
                                 UINT64_MAX - 1 };
  tw_arg args[32];
  char names[32][8];
  size_t n = 0;
  static sess s;
  tw_event ev;
  jc_doc *d;
  (void)state;

  for (size_t i = 0; i < sizeof iv / sizeof iv[0]; i++, n++) {
    snprintf(names[n], sizeof names[n], "i%zu", i);
    args[n] = tw_arg_int(names[n], iv[i]);
  }
  for (size_t i = 0; i < sizeof uv / sizeof uv[0]; i++, n++) {
    snprintf(names[n], sizeof names[n], "u%zu", i);
    args[n] = tw_arg_uint(names[n], uv[i]);
  }
  s_open(&s, NULL);
  ev = mkev_ts('X', "a", "ints", 1);
  ev.args = args;
  ev.nargs = n;
  s_emit(&s, &ev);
  d = s_close(&s);
  {
    jc_val a = jc_get(d, s_record(d, 0), "args");
    assert_raw(d, jc_get(d, a, "i9"), "9223372036854775807");
    assert_raw(d, jc_get(d, a, "i10"), "-9223372036854775808");
    assert_raw(d, jc_get(d, a, "u4"), "4294967296");
    /* Above INT64_MAX: the nearest double, which Perfetto reads as
     * positive (an integer it would read as 2^64 less). */
    assert_raw(d, jc_get(d, a, "u5"), "9.2233720368547758e+18");
    assert_raw(d, jc_get(d, a, "u6"), "1.8446744073709552e+19");
    assert_raw(d, jc_get(d, a, "u7"), "1.8446744073709552e+19");
    assert_raw(d, jc_get(d, a, "i0"), "0");
    assert_raw(d, jc_get(d, a, "i7"), "-100");
  }
  s_done(&s, d);
}

static void test_args_doubles(void **state)
{
  static const double dv[] = {
    0.1, 1e300, -0.5, 5.0, 1e-7, 0.0, -1.0, 1.0 / 3.0, 2.0 / 3.0, 123456.789,
    DBL_MAX, -DBL_MAX, DBL_MIN, 5e-324, 1e-300, 1e21, 1e22, 123e-20,
    9007199254740992.0, 9007199254740994.0, 9223372036854775808.0,
    -9223372036854775808.0, 18446744073709551616.0, 0.30000000000000004,
    4.35, 2.5e-5, 1e15 + 0.5, 3.141592653589793, -2.718281828459045,
  };
  const size_t nd = sizeof dv / sizeof dv[0];
  tw_arg args[64];
  char names[64][8];
  static sess s;
  tw_event ev;
  jc_doc *d;
  jc_val a;
  (void)state;

  for (size_t i = 0; i < nd; i++) {
    snprintf(names[i], sizeof names[i], "d%zu", i);
    args[i] = tw_arg_double(names[i], dv[i]);
  }
  s_open(&s, NULL);
  ev = mkev_ts('X', "a", "doubles", 1);
  ev.args = args;
  ev.nargs = nd;
  s_emit(&s, &ev);           /* check_arg: jc_num == the double, exactly */
  ev = mkev_ts('C', "a", "counter", 2);
  ev.args = args;
  ev.nargs = nd;
  s_emit(&s, &ev);
  d = s_close(&s);
  a = jc_get(d, s_record(d, 0), "args");
  assert_raw(d, jc_get(d, a, "d3"), "5");          /* 5.0 written as 5 */
  assert_raw(d, jc_get(d, a, "d0"), "0.1");
  assert_raw(d, jc_get(d, a, "d2"), "-0.5");
  assert_raw(d, jc_get(d, a, "d5"), "0");
  assert_raw(d, jc_get(d, a, "d6"), "-1");
  s_done(&s, d);
}

static void test_args_bool_null_string(void **state)
{
  static sess s;
  tw_event ev;
  tw_arg args[8];
  (void)state;

  args[0] = tw_arg_bool("t", 1);
  args[1] = tw_arg_bool("f", 0);
  args[2] = tw_arg_bool("t2", -7);        /* nonzero is true */
  args[3] = tw_arg_null("n");
  args[4] = tw_arg_str("s", "text");
  args[5] = tw_arg_str("empty", "");
  args[6] = tw_arg_strn("prefix", "abcdef", 3);
  args[7] = tw_arg_str("", "empty key");
  s_open(&s, NULL);
  ev = mkev_ts('I', "a", "misc", 1);
  ev.args = args;
  ev.nargs = 8;
  s_emit(&s, &ev);
  s_finish(&s);
}

static void test_args_raw_json(void **state)
{
  static const char nested[] =
    "{\n  \"a\": [1, 2.5, -3e2, \"x\\ny\"],\r\n  \"b\": {\"c\": {\"d\": "
    "[true, false, null]}},\n  \"u\": \"\\u00e9\\ud83d\\ude00\\u0000\"\n}";
  static const char bigjson[] = "[1,2]garbage";
  static sess s;
  tw_event ev;
  tw_arg args[10];
  jc_doc *d;
  jc_val a, v, arr;
  size_t n;
  const char *str;
  (void)state;

  args[0] = tw_arg_json("nested", nested);
  args[1] = tw_arg_json("num", "-0.5e+10");
  args[2] = tw_arg_json("t", "true");
  args[3] = tw_arg_json("nul", "null");
  args[4] = tw_arg_json("str", "\"\\\"quoted\\\" \\/ \\b\\f\\n\\r\\t\"");
  args[5] = tw_arg_json("ws", " \t\n [ ] \r\n");
  args[6] = tw_arg_json("len", bigjson);
  args[6].len = 5;                          /* just "[1,2]" */
  args[7] = tw_arg_json("null_ptr", NULL);  /* NULL -> null */
  args[8] = tw_arg_json("empty_obj", "{}");
  args[9] = tw_arg_json("utf8", "\"\xc3\xa9\xe6\xbc\xa2\xf0\x9f\x98\x80\"");
  s_open(&s, NULL);
  ev = mkev_ts('X', "a", "json", 1);
  ev.args = args;
  ev.nargs = 10;
  s_emit(&s, &ev);            /* check_arg compares the raw text */
  d = s_close(&s);
  a = jc_get(d, s_record(d, 0), "args");
  v = jc_get(d, a, "nested");
  assert_int_equal(jc_len(d, v), 3);
  arr = jc_get(d, v, "a");
  assert_int_equal(jc_len(d, arr), 4);
  {
    int64_t i64;
    assert_int_equal(jc_int64(d, jc_index(d, arr, 0), &i64), 0);
    assert_int_equal(i64, 1);
  }
  assert_true(jc_num(d, jc_index(d, arr, 1)) == 2.5);
  assert_true(jc_num(d, jc_index(d, arr, 2)) == -300.0);
  assert_jstr(d, jc_index(d, arr, 3), "x\ny", 3, "a[3]");
  v = jc_get(d, jc_get(d, jc_get(d, v, "b"), "c"), "d");
  assert_int_equal(jc_len(d, v), 3);
  assert_int_equal(jc_type(d, jc_index(d, v, 0)), JC_TRUE);
  assert_int_equal(jc_type(d, jc_index(d, v, 1)), JC_FALSE);
  assert_int_equal(jc_type(d, jc_index(d, v, 2)), JC_NULL);
  v = jc_get(d, jc_get(d, a, "nested"), "u");
  str = jc_str(d, v, &n);
  assert_int_equal(n, 7);
  assert_memory_equal(str, "\xc3\xa9\xf0\x9f\x98\x80\0", 7);
  assert_jstr(d, jc_get(d, a, "str"), "\"quoted\" / \b\f\n\r\t", 16,
              "str");
  assert_raw(d, jc_get(d, a, "ws"), "[ ]");
  assert_raw(d, jc_get(d, a, "len"), "[1,2]");
  assert_int_equal(jc_type(d, jc_get(d, a, "null_ptr")), JC_NULL);
  assert_jstr(d, jc_get(d, a, "utf8"), "\xc3\xa9\xe6\xbc\xa2\xf0\x9f\x98\x80",
              9, "utf8");
  assert_true(jc_num(d, jc_get(d, a, "num")) == -0.5e10);
  s_done(&s, d);
}

static void test_args_max_args(void **state)
{
  tw_arg *args = pool_alloc((TW_MAX_ARGS + 1) * sizeof *args);
  char (*names)[8] = pool_alloc((TW_MAX_ARGS + 1) * sizeof *names);
  tw_arg *series = pool_alloc(TW_MAX_ARGS * sizeof *series);
  static sess s;
  tw_event ev;
  (void)state;

  assert_non_null(args);
  assert_non_null(names);
  for (size_t i = 0; i <= TW_MAX_ARGS; i++) {
    snprintf(names[i], sizeof names[i], "a%zu", i);
    switch (i % 5) {
    case 0: args[i] = tw_arg_int(names[i], -(int64_t)i); break;
    case 1: args[i] = tw_arg_uint(names[i], i * 1000003u); break;
    case 2: args[i] = tw_arg_double(names[i], (double)i + 0.25); break;
    case 3: args[i] = tw_arg_bool(names[i], (int)(i & 8)); break;
    default: args[i] = tw_arg_str(names[i], names[i]); break;
    }
  }
  s_open(&s, NULL);
  ev = mkev_ts('X', "a", "max", 1);
  ev.args = args;
  ev.nargs = TW_MAX_ARGS;
  s_emit(&s, &ev);
  /* One more is refused. */
  ev.nargs = TW_MAX_ARGS + 1;
  s_bad(&s, &ev, TW_ETOOMANY);
  /* A counter with TW_MAX_ARGS series (numbers only). */
  for (size_t i = 0; i < TW_MAX_ARGS; i++) {
    if (i % 5 == 3)
      series[i] = tw_arg_uint(names[i], UINT64_MAX - i);
    else if (i % 5 == 4)
      series[i] = tw_arg_double(names[i], -1.0 / (double)(i + 1));
    else
      series[i] = args[i];
  }
  ev = mkev_ts('C', "a", "max_series", 2);
  ev.args = series;
  ev.nargs = TW_MAX_ARGS;
  s_emit(&s, &ev);
  s_finish(&s);
  pool_free();
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(test_args_integers, teardown),
    cmocka_unit_test_teardown(test_args_doubles, teardown),
    cmocka_unit_test_teardown(test_args_bool_null_string, teardown),
    cmocka_unit_test_teardown(test_args_raw_json, teardown),
    cmocka_unit_test_teardown(test_args_max_args, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
