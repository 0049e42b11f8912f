/* test_jsoncheck.c -- tests of the strict JSON checker the other tests use
 *
 * The checker is what decides whether tracewriter's output is valid, so it
 * must refuse everything RFC 8259 refuses (jsmn alone lets much through)
 * and read back exactly what was written.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mkstemp, newlocale, uselocale */
#endif

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jsoncheck.h"

/* A document with its length: it may hold NUL bytes. */
typedef struct sample {
  const char *text;
  size_t len;
} sample;

#define S(lit) { (lit), sizeof(lit) - 1 }
#define NSAMPLES(a) (sizeof(a) / sizeof((a)[0]))

/* Parse buf[0..len) from a heap copy of exactly len bytes, so that the
 * sanitizers catch any read past the end; returns the document or NULL. */
static jc_doc *parse_exact(const char *buf, size_t len, char *err,
                           size_t errsize)
{
  char *copy = malloc(len > 0 ? len : 1);
  jc_doc *d;
  assert_non_null(copy);
  memcpy(copy, buf, len);
  d = jc_parse(copy, len, err, errsize);
  free(copy);                        /* the doc must not need it */
  return d;
}

/* Parse a NUL-terminated text that must be valid; returns the doc. */
static jc_doc *parse_ok(const char *text)
{
  char err[256] = "";
  jc_doc *d = parse_exact(text, strlen(text), err, sizeof err);
  if (d == NULL)
    fail_msg("rejected valid JSON <%s>: %s", text, err);
  return d;
}

/* Write a printable form of s[0..len) into out (for failure messages);
 * returns out. */
static const char *show(const char *s, size_t len, char *out, size_t size)
{
  size_t i, o = 0;
  for (i = 0; i < len && o + 5 < size; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 0x20 && c < 0x7f)
      out[o++] = (char)c;
    else
      o += (size_t)snprintf(out + o, size - o, "\\x%02x", c);
  }
  out[o] = '\0';
  return out;
}

/* Assert that s is rejected with a reason that starts "offset "; returns
 * the reason's offset. */
static long must_reject(sample s)
{
  char err[256] = "", shown[256];
  jc_doc *d = parse_exact(s.text, s.len, err, sizeof err);
  if (d != NULL) {
    jc_free(d);
    fail_msg("accepted invalid JSON <%s>", show(s.text, s.len, shown,
                                                sizeof shown));
  }
  if (strncmp(err, "offset ", 7) != 0 || strchr(err, '\n') != NULL)
    fail_msg("bad reason <%s> for <%s>", err,
             show(s.text, s.len, shown, sizeof shown));
  return strtol(err + 7, NULL, 10);
}

/* ------------------------------------------------------ validity */

/* Every kind of valid document parses. */
static void test_accepts_valid_documents(void **state)
{
  static const sample ok[] = {
    S("0"), S("-0"), S("1e5"), S("1.5E-3"), S("0.0"), S("-1.25e+10"),
    S("1E-0"), S("123456789012345678901234567890"), S("1e400"),
    S("true"), S("false"), S("null"), S("\"\""), S("\"abc\""),
    S("[]"), S("{}"), S(" [ ] "), S("\t\r\n 7 \n"),
    S("{ \"a\" : [ 1 , 2 , { \"b\" : null } ] }"),
    S("[[[[]]]]"), S("[{}, [], {\"\": \"\"}]"),
    S("{\"a\":{\"b\":{\"c\":[true,false,null,-0.5e-7]}}}"),
    S("[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"]"),
    S("[\"\\u0041\\u00e9\\u20AC\\ud83d\\ude00\\u0000\\uDBFF\\uDFFF\"]"),
    S("\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\""),   /* é € 😀 raw */
    S("\"\xc2\x80\xdf\xbf\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\""),
    S("\"\xef\xbf\xbf\xf0\x90\x80\x80\xf4\x8f\xbf\xbf\""), /* to U+10FFFF */
    S("\"\x7f\""),                   /* DEL is not a control byte here */
    S("{\"a\":1,\"a\":2}"),          /* duplicate keys are grammatical */
    S("[1,-1,0.25,1E+2,1e-2,10,200]"),
  };
  size_t i;
  char shown[256];
  (void)state;
  for (i = 0; i < NSAMPLES(ok); i++) {
    char err[256] = "";
    jc_doc *d = parse_exact(ok[i].text, ok[i].len, err, sizeof err);
    if (d == NULL)
      fail_msg("rejected valid <%s>: %s",
               show(ok[i].text, ok[i].len, shown, sizeof shown), err);
    assert_int_equal(jc_root(d), 0);
    jc_free(d);
  }
}

/* Everything outside RFC 8259 is refused, jsmn's blind spots first. */
static void test_rejects_invalid_documents(void **state)
{
  static const sample bad[] = {
    /* jsmn 1.1.0 lets these through */
    S("[1,,2]"), S("{\"a\":1,}"), S("[1,]"), S("[,1]"), S("[tru]"),
    S("[nul]"), S("truex"), S("[1] [2]"), S("[1]x"), S("[1]\0"),
    S("[1]\0\0\0\0\0\0\0\0"), S("{\"a\" 1}"), S("{1:2}"),
    S("[\"a\x01\"]"), S("[\"a\0b\"]"), S("[\"\t\"]"), S("\"\n\""),
    S("\"\x1f\""), S("[true false]"), S("[1 2]"), S("{\"a\":1 \"b\":2}"),
    S("[\"a\"\"b\"]"), S("{\"a\":1,,\"b\":2}"), S("{,}"), S("[null,]"),
    /* escapes */
    S("[\"\\x\"]"), S("[\"\\u12\"]"), S("[\"\\u12g4\"]"), S("\"\\U0041\""),
    S("\"\\'\""), S("\"\\"), S("\"\\u"),
    /* surrogates */
    S("[\"\\ud800\"]"), S("[\"\\udc00\"]"), S("[\"\\udc00\\ud800\"]"),
    S("[\"\\ud800\\u0041\"]"), S("[\"\\ud800x\"]"), S("[\"\\ud800\\ud800\"]"),
    S("[\"\\uDBFF\\n\"]"), S("\"\\ud800\\udc0"),
    /* UTF-8 */
    S("\"\xff\""), S("\"\xfe\""), S("\"\x80\""), S("\"\xc0\x80\""),
    S("\"\xc1\xbf\""), S("\"\xe0\x9f\xbf\""), S("\"\xf0\x8f\xbf\xbf\""),
    S("\"\xed\xa0\x80\""), S("\"\xed\xbf\xbf\""), S("\"\xf4\x90\x80\x80\""),
    S("\"\xf5\x80\x80\x80\""), S("\"\xe2\x82\""), S("\"\xe2\x82"),
    S("\"\xf0\x9f\x98\""), S("\"\xc3\""), S("\"\xc3\x28\""),
    S("\xef\xbb\xbf[1]"),            /* a BOM is not whitespace */
    S("[\xc3\xa9]"),                 /* non-ASCII outside a string */
    /* numbers */
    S("01"), S("-01"), S("00"), S("1."), S(".5"), S("+1"), S("-"), S("1e"),
    S("1e+"), S("1E-"), S("1.e5"), S("[-]"), S("[1.5.2]"), S("[1e5e5]"),
    S("[0x10]"), S("[--1]"), S("[1-2]"), S("- 1"), S("[1.]"), S("[.5]"),
    S("NaN"), S("Infinity"), S("-Infinity"), S("[NaN]"),
    /* literals */
    S("TRUE"), S("True"), S("nulll"), S("fals"), S("nul"), S("t"),
    /* empty, whitespace, structure */
    S(""), S(" "), S(" \t\r\n"), S("\f[1]"), S("[1]\f"), S("\v1"),
    S("\0[1]"), S("\"abc"), S("[1,2"), S("{\"a\":1"), S("{\"a\""),
    S("{\"a\":"), S("["), S("{"), S("]"), S("}"), S("[}"), S("{]"),
    S("[1,2]]"), S("[[1,2]"), S("{\"a\":1}}"), S("{\"a\"::1}"),
    S("['a']"), S("{a:1}"), S("1 2"), S("\"a\" \"b\""), S("{} {}"),
    S(","), S(":"), S("[1]//"), S("/*x*/[1]"),
  };
  size_t i;
  (void)state;
  for (i = 0; i < NSAMPLES(bad); i++)
    must_reject(bad[i]);
}

/* The reason points at the offending byte. */
static void test_error_offsets(void **state)
{
  static const struct {
    sample s;
    long offset;
  } cases[] = {
    { S("[1,,2]"), 3 },
    { S("{\"a\":1,}"), 7 },
    { S("[1]x"), 3 },
    { S("[1]\0"), 3 },
    { S("01"), 0 },
    { S("[\"ab\x01\"]"), 4 },
    { S("[\"ab\xc0\x80\"]"), 4 },
    { S("  "), 2 },
    { S("[\"\\ud800\"]"), 2 },
    { S("[tru]"), 1 },
    { S("{\"a\" 1}"), 5 },
  };
  size_t i;
  (void)state;
  for (i = 0; i < NSAMPLES(cases); i++) {
    long got = must_reject(cases[i].s);
    if (got != cases[i].offset)
      fail_msg("case %zu: offset %ld, expected %ld", i, got,
               cases[i].offset);
  }
}

/* A document of depth arrays nested in one another, e.g. "[[]]" for 2;
 * returns a malloc'ed NUL-terminated string. */
static char *nested_arrays(size_t depth)
{
  char *s = malloc(2 * depth + 1);
  assert_non_null(s);
  memset(s, '[', depth);
  memset(s + depth, ']', depth);
  s[2 * depth] = '\0';
  return s;
}

/* A document of depth objects nested in one another, {"a":{"a":1}} for
 * 2; returns a malloc'ed NUL-terminated string. */
static char *nested_objects(size_t depth)
{
  char *s = malloc(6 * depth + 2);
  size_t i, len = 0;
  assert_non_null(s);
  for (i = 0; i < depth; i++, len += 5)
    memcpy(s + len, "{\"a\":", 5);
  s[len++] = '1';
  memset(s + len, '}', depth);
  s[len + depth] = '\0';
  return s;
}

/* JC_MAX_DEPTH levels of arrays or objects parse; one more does not. */
static void test_depth_limit(void **state)
{
  char *s;
  jc_doc *d;
  size_t i;
  jc_val v;
  (void)state;

  s = nested_arrays(JC_MAX_DEPTH);
  d = parse_ok(s);
  /* Walk down to the innermost, empty array. */
  for (v = jc_root(d), i = 1; i < JC_MAX_DEPTH; i++)
    v = jc_first(d, v);
  assert_int_equal(jc_type(d, v), JC_ARRAY);
  assert_int_equal(jc_len(d, v), 0);
  jc_free(d);
  free(s);

  s = nested_arrays(JC_MAX_DEPTH + 1);
  assert_int_equal(must_reject((sample){ s, strlen(s) }), JC_MAX_DEPTH);
  free(s);
  s = nested_arrays(600);
  must_reject((sample){ s, strlen(s) });
  free(s);

  /* Objects count too. */
  s = nested_objects(JC_MAX_DEPTH);
  d = parse_ok(s);
  v = jc_root(d);
  for (i = 1; i < JC_MAX_DEPTH; i++)
    v = jc_get(d, v, "a");
  assert_int_equal(jc_type(d, v), JC_OBJECT);
  assert_true(jc_num(d, jc_get(d, v, "a")) == 1.0);
  jc_free(d);
  free(s);
  s = nested_objects(JC_MAX_DEPTH + 1);
  assert_int_equal(must_reject((sample){ s, strlen(s) }),
                   5 * JC_MAX_DEPTH);
  free(s);
}

/* Only buf[0..len) is read. */
static void test_input_need_not_be_nul_terminated(void **state)
{
  /* "[12]" followed by a digit that is not part of the input. */
  static const char text[] = "[12]3";
  char *buf = malloc(4);
  jc_doc *d;
  int64_t i64;
  (void)state;
  assert_non_null(buf);
  memcpy(buf, text, 4);
  d = jc_parse(buf, 4, NULL, 0);
  free(buf);
  assert_non_null(d);
  assert_int_equal(jc_len(d, 0), 1);
  assert_int_equal(jc_int64(d, jc_first(d, 0), &i64), 0);
  assert_int_equal(i64, 12);
  jc_free(d);

  /* A bare number ends where the input ends, not at the next byte. */
  d = jc_parse("125", 2, NULL, 0);
  assert_non_null(d);
  assert_int_equal(jc_int64(d, 0, &i64), 0);
  assert_int_equal(i64, 12);
  jc_free(d);
}

/* err may be NULL; a short err gets a truncated, terminated reason. */
static void test_error_reporting(void **state)
{
  char err[16];
  (void)state;
  assert_null(jc_parse("[1,]", 4, NULL, 0));       /* err may be NULL */
  assert_null(jc_parse(NULL, 0, NULL, 0));
  memset(err, 'x', sizeof err);
  assert_null(jc_parse("[1,]", 4, err, 8));        /* truncated reason */
  assert_int_equal(strlen(err), 7);
  assert_memory_equal(err, "offset ", 7);
  assert_int_equal(err[9], 'x');                   /* nothing past 8 */
}

/* ---------------------------------------------------- navigation */

/* jc_first / jc_next / jc_index / jc_get / jc_key_raw walk a tree. */
static void test_navigation(void **state)
{
  jc_doc *d = parse_ok("{\"a\":1,\"b\":[true,false,null,\"x\"],"
                       "\"c\":{\"d\":-2.5},\"e\":{},\"f\":[]}");
  jc_val root, a, b, c, e, f, v;
  size_t len;
  const char *key;
  (void)state;

  root = jc_root(d);
  assert_int_equal(root, 0);
  assert_int_equal(jc_type(d, root), JC_OBJECT);
  assert_int_equal(jc_len(d, root), 5);

  a = jc_first(d, root);
  assert_int_equal(jc_type(d, a), JC_NUMBER);
  assert_true(jc_num(d, a) == 1.0);
  key = jc_key_raw(d, a, &len);
  assert_int_equal(len, 1);
  assert_memory_equal(key, "a", 1);

  b = jc_next(d, a);
  assert_int_equal(jc_get(d, root, "b"), b);
  assert_int_equal(jc_type(d, b), JC_ARRAY);
  assert_int_equal(jc_len(d, b), 4);
  v = jc_first(d, b);
  assert_int_equal(jc_type(d, v), JC_TRUE);
  assert_null(jc_key_raw(d, v, &len));             /* array element */
  assert_int_equal(len, 0);
  v = jc_next(d, v);
  assert_int_equal(jc_type(d, v), JC_FALSE);
  v = jc_next(d, v);
  assert_int_equal(jc_type(d, v), JC_NULL);
  v = jc_next(d, v);
  assert_true(jc_streq(d, v, "x"));
  assert_int_equal(jc_next(d, v), -1);
  assert_int_equal(jc_index(d, b, 3), v);
  assert_int_equal(jc_index(d, b, 4), -1);

  c = jc_next(d, b);
  assert_int_equal(jc_get(d, root, "c"), c);
  v = jc_get(d, c, "d");
  assert_true(jc_num(d, v) == -2.5);
  assert_int_equal(jc_next(d, v), -1);             /* last member of c */

  e = jc_next(d, c);
  assert_int_equal(jc_type(d, e), JC_OBJECT);
  assert_int_equal(jc_len(d, e), 0);
  assert_int_equal(jc_first(d, e), -1);
  f = jc_next(d, e);
  assert_int_equal(jc_type(d, f), JC_ARRAY);
  assert_int_equal(jc_first(d, f), -1);
  assert_int_equal(jc_next(d, f), -1);
  assert_int_equal(jc_next(d, root), -1);

  /* jc_index works on objects' values too. */
  assert_int_equal(jc_index(d, root, 0), a);
  assert_int_equal(jc_index(d, root, 4), f);
  assert_int_equal(jc_index(d, root, 5), -1);
  assert_int_equal(jc_index(d, a, 0), -1);         /* a scalar */

  assert_int_equal(jc_get(d, root, "zz"), -1);
  assert_int_equal(jc_get(d, root, ""), -1);
  assert_int_equal(jc_get(d, b, "a"), -1);         /* not an object */
  jc_free(d);
}

/* Every accessor answers "none" for -1, out-of-range and wrong types. */
static void test_none_values_are_safe(void **state)
{
  jc_doc *d = parse_ok("[1]");
  size_t len = 99;
  int64_t i64;
  uint64_t u64;
  (void)state;
  assert_int_equal(jc_root(NULL), -1);
  assert_int_equal(jc_type(d, -1), JC_NULL);
  assert_int_equal(jc_type(d, 2), JC_NULL);
  assert_int_equal(jc_len(d, -1), 0);
  assert_int_equal(jc_len(d, 1), 0);               /* a scalar */
  assert_int_equal(jc_first(d, -1), -1);
  assert_int_equal(jc_next(d, -1), -1);
  assert_int_equal(jc_index(d, -1, 0), -1);
  assert_null(jc_key_raw(d, -1, &len));
  assert_int_equal(len, 0);
  assert_int_equal(jc_get(d, -1, "a"), -1);
  assert_int_equal(jc_count_key(d, -1, "a"), 0);
  len = 99;
  assert_null(jc_str(d, -1, &len));
  assert_int_equal(len, 0);
  assert_null(jc_str(d, 1, NULL));                 /* a number */
  assert_false(jc_streq(d, -1, ""));
  assert_null(jc_raw(d, -1, NULL));
  assert_true(isnan(jc_num(d, -1)));
  assert_true(isnan(jc_num(d, 0)));                /* an array */
  assert_int_equal(jc_int64(d, -1, &i64), -1);
  assert_int_equal(jc_uint64(d, -1, &u64), -1);
  assert_int_equal(jc_us_to_ns(d, -1, &u64), -1);
  assert_int_equal(jc_trace_events(NULL), -1);
  jc_free(d);
  jc_free(NULL);
}

/* A bare number, literal or string is a whole document. */
static void test_root_scalars(void **state)
{
  jc_doc *d;
  size_t len;
  const char *raw;
  int64_t i64;
  (void)state;

  d = parse_ok("  42 \n");
  assert_int_equal(jc_type(d, 0), JC_NUMBER);
  raw = jc_raw(d, 0, &len);
  assert_int_equal(len, 2);
  assert_memory_equal(raw, "42", 2);
  assert_int_equal(jc_int64(d, 0, &i64), 0);
  assert_int_equal(i64, 42);
  assert_int_equal(jc_len(d, 0), 0);
  assert_int_equal(jc_first(d, 0), -1);
  assert_int_equal(jc_next(d, 0), -1);
  jc_free(d);

  d = parse_ok("false");
  assert_int_equal(jc_type(d, 0), JC_FALSE);
  jc_free(d);
  d = parse_ok("null");
  assert_int_equal(jc_type(d, 0), JC_NULL);
  jc_free(d);
  d = parse_ok("\"hi\"");
  assert_true(jc_streq(d, 0, "hi"));
  jc_free(d);
}

/* ------------------------------------------------------- strings */

/* Escapes, \u0000 and surrogate pairs decode to the right bytes. */
static void test_string_decoding(void **state)
{
  jc_doc *d = parse_ok(
    "[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\", \"\\u0041\\u00e9\\u20ac\","
    " \"\\ud83d\\ude00\", \"a\\u0000b\", \"plain\", \"\","
    " \"\xc3\xa9\", \"\\uDBFF\\uDFFF\", \"x\\\\u0041\"]");
  jc_val v;
  const char *s, *raw;
  size_t len;
  (void)state;

  v = jc_first(d, 0);
  s = jc_str(d, v, &len);
  assert_int_equal(len, 8);
  assert_string_equal(s, "\"\\/\b\f\n\r\t");
  raw = jc_raw(d, v, &len);                        /* with its quotes */
  assert_int_equal(len, 18);
  assert_memory_equal(raw, "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", 18);

  v = jc_next(d, v);
  assert_string_equal(jc_str(d, v, NULL), "A\xc3\xa9\xe2\x82\xac");

  v = jc_next(d, v);
  assert_string_equal(jc_str(d, v, &len), "\xf0\x9f\x98\x80"); /* U+1F600 */
  assert_int_equal(len, 4);

  v = jc_next(d, v);
  s = jc_str(d, v, &len);
  assert_int_equal(len, 3);                        /* the NUL counts */
  assert_memory_equal(s, "a\0b", 4);               /* and NUL-terminated */
  assert_false(jc_streq(d, v, "a"));

  v = jc_next(d, v);
  assert_true(jc_streq(d, v, "plain"));
  assert_false(jc_streq(d, v, "plai"));
  assert_false(jc_streq(d, v, "plainer"));
  v = jc_next(d, v);
  assert_string_equal(jc_str(d, v, &len), "");
  assert_int_equal(len, 0);
  assert_true(jc_streq(d, v, ""));
  v = jc_next(d, v);
  assert_true(jc_streq(d, v, "\xc3\xa9"));
  v = jc_next(d, v);
  assert_true(jc_streq(d, v, "\xf4\x8f\xbf\xbf"));  /* U+10FFFF */
  v = jc_next(d, v);
  assert_true(jc_streq(d, v, "x\\u0041"));         /* escaped backslash */
  assert_int_equal(jc_next(d, v), -1);
  jc_free(d);
}

/* jc_get matches decoded keys; jc_key_raw gives them undecoded. */
static void test_keys_are_decoded(void **state)
{
  jc_doc *d = parse_ok("{\"\\u0061b\":1, \"c\\nd\":2, \"\":3}");
  jc_val v;
  const char *raw;
  size_t len;
  (void)state;
  v = jc_get(d, 0, "ab");
  assert_int_equal(v, jc_first(d, 0));
  raw = jc_key_raw(d, v, &len);                    /* undecoded, no quotes */
  assert_int_equal(len, 7);
  assert_memory_equal(raw, "\\u0061b", 7);
  assert_int_equal(jc_get(d, 0, "\\u0061b"), -1);
  v = jc_get(d, 0, "c\nd");
  assert_true(jc_num(d, v) == 2.0);
  v = jc_get(d, 0, "");
  assert_true(jc_num(d, v) == 3.0);
  assert_non_null(jc_key_raw(d, v, &len));
  assert_int_equal(len, 0);
  jc_free(d);
}

/* jc_count_key counts repeated keys in one object only. */
static void test_count_key_finds_duplicates(void **state)
{
  jc_doc *d = parse_ok("{\"ts\":1,\"ph\":\"X\",\"ts\":2,\"t\\u0073\":3,"
                       "\"nested\":{\"ts\":4}}");
  (void)state;
  assert_int_equal(jc_count_key(d, 0, "ts"), 3);
  assert_int_equal(jc_count_key(d, 0, "ph"), 1);
  assert_int_equal(jc_count_key(d, 0, "dur"), 0);
  assert_int_equal(jc_count_key(d, jc_get(d, 0, "nested"), "ts"), 1);
  assert_true(jc_num(d, jc_get(d, 0, "ts")) == 1.0);  /* the first */
  assert_int_equal(jc_count_key(d, jc_get(d, 0, "ph"), "ts"), 0);
  jc_free(d);
}

/* ------------------------------------------------------- numbers */

/* jc_num reads numbers exactly as strtod would. */
static void test_numbers_as_double(void **state)
{
  jc_doc *d = parse_ok("[-0, 1e5, 1.5E-3, 0.0, 0.1, -2.5e+2, 1e400,"
                       " 123456789012345678901234567890, 5e-324]");
  jc_val v = jc_first(d, 0);
  (void)state;
  assert_true(jc_num(d, v) == 0.0 && signbit(jc_num(d, v)));
  v = jc_next(d, v);
  assert_true(jc_num(d, v) == 1e5);
  v = jc_next(d, v);
  assert_true(jc_num(d, v) == 1.5e-3);
  v = jc_next(d, v);
  assert_true(jc_num(d, v) == 0.0 && !signbit(jc_num(d, v)));
  v = jc_next(d, v);
  assert_true(jc_num(d, v) == 0.1);                /* correctly rounded */
  v = jc_next(d, v);
  assert_true(jc_num(d, v) == -250.0);
  v = jc_next(d, v);
  assert_true(isinf(jc_num(d, v)));
  v = jc_next(d, v);
  assert_true(jc_num(d, v) == 123456789012345678901234567890.0);
  v = jc_next(d, v);
  assert_true(jc_num(d, v) == 5e-324);
  jc_free(d);
}

/* jc_num keeps "." as the decimal point in any locale. */
static void test_numbers_ignore_the_locale(void **state)
{
  /* Where a locale with a decimal comma is installed, switch the thread to
   * it: jc_num must still read "1.5" as 1.5. */
  static const char *const names[] = { "de_DE.UTF-8", "fr_FR.UTF-8",
                                       "de_DE.utf8", "fr_FR.utf8" };
  locale_t comma = (locale_t)0, old = (locale_t)0;
  jc_doc *d = parse_ok("[1.5, 2.25e1]");
  size_t i;
  (void)state;
  assert_true(jc_num(d, jc_index(d, 0, 0)) == 1.5);
  assert_true(jc_num(d, jc_index(d, 0, 1)) == 22.5);
  /* A locale that exists and has the trap: musl takes any name, and
   * reads "1.5" as 1.5 in all of them. */
  for (i = 0; i < NSAMPLES(names) && comma == (locale_t)0; i++) {
    comma = newlocale(LC_NUMERIC_MASK, names[i], (locale_t)0);
    if (comma != (locale_t)0) {
      old = uselocale(comma);
      if (strtod("1.5", NULL) == 1.5) {
        uselocale(old);
        freelocale(comma);
        comma = (locale_t)0;
      }
    }
  }
  if (comma == (locale_t)0) {
    jc_free(d);
    print_message("  no locale with a decimal comma (de_DE, fr_FR)\n");
    skip();
  }
  assert_true(jc_num(d, jc_index(d, 0, 0)) == 1.5);
  assert_true(jc_num(d, jc_index(d, 0, 1)) == 22.5);
  uselocale(old);
  freelocale(comma);
  jc_free(d);
}

/* jc_int64 takes integers within int64_t only. */
static void test_int64_range(void **state)
{
  jc_doc *d = parse_ok("[9223372036854775807, 9223372036854775808,"
                       " -9223372036854775808, -9223372036854775809,"
                       " -0, 0, -17, 1.0, 1e3, \"5\", 100000000000000000000]");
  int64_t i64 = 7;
  (void)state;
  assert_int_equal(jc_int64(d, jc_index(d, 0, 0), &i64), 0);
  assert_true(i64 == INT64_MAX);
  assert_int_equal(jc_int64(d, jc_index(d, 0, 1), &i64), -1);
  assert_true(i64 == INT64_MAX);                   /* left alone */
  assert_int_equal(jc_int64(d, jc_index(d, 0, 2), &i64), 0);
  assert_true(i64 == INT64_MIN);
  assert_int_equal(jc_int64(d, jc_index(d, 0, 3), &i64), -1);
  assert_int_equal(jc_int64(d, jc_index(d, 0, 4), &i64), 0);
  assert_true(i64 == 0);
  assert_int_equal(jc_int64(d, jc_index(d, 0, 5), &i64), 0);
  assert_true(i64 == 0);
  assert_int_equal(jc_int64(d, jc_index(d, 0, 6), &i64), 0);
  assert_true(i64 == -17);
  assert_int_equal(jc_int64(d, jc_index(d, 0, 7), &i64), -1);  /* 1.0 */
  assert_int_equal(jc_int64(d, jc_index(d, 0, 8), &i64), -1);  /* 1e3 */
  assert_int_equal(jc_int64(d, jc_index(d, 0, 9), &i64), -1);  /* "5" */
  assert_int_equal(jc_int64(d, jc_index(d, 0, 10), &i64), -1);
  jc_free(d);
}

/* jc_uint64 takes non-negative integers within uint64_t only. */
static void test_uint64_range(void **state)
{
  jc_doc *d = parse_ok("[18446744073709551615, 18446744073709551616,"
                       " 0, -0, -1, 2.0, 1E2, 99999999999999999999]");
  uint64_t u64 = 7;
  (void)state;
  assert_int_equal(jc_uint64(d, jc_index(d, 0, 0), &u64), 0);
  assert_true(u64 == UINT64_MAX);
  assert_int_equal(jc_uint64(d, jc_index(d, 0, 1), &u64), -1);
  assert_int_equal(jc_uint64(d, jc_index(d, 0, 2), &u64), 0);
  assert_true(u64 == 0);
  assert_int_equal(jc_uint64(d, jc_index(d, 0, 3), &u64), -1);  /* -0 */
  assert_int_equal(jc_uint64(d, jc_index(d, 0, 4), &u64), -1);
  assert_int_equal(jc_uint64(d, jc_index(d, 0, 5), &u64), -1);
  assert_int_equal(jc_uint64(d, jc_index(d, 0, 6), &u64), -1);
  assert_int_equal(jc_uint64(d, jc_index(d, 0, 7), &u64), -1);
  jc_free(d);
}

/* jc_us_to_ns converts up to 3 decimals exactly and refuses the rest. */
static void test_us_to_ns(void **state)
{
  static const struct {
    const char *text;
    int rc;
    uint64_t ns;
  } cases[] = {
    { "1234567.891", 0, 1234567891 }, { "5", 0, 5000 }, { "0.5", 0, 500 },
    { "0", 0, 0 }, { "12", 0, 12000 }, { "1.23", 0, 1230 },
    { "1234.567", 0, 1234567 }, { "0.001", 0, 1 }, { "0.000", 0, 0 },
    { "18446744073709551.615", 0, UINT64_MAX },
    { "1.2345", -1, 0 }, { "-1", -1, 0 }, { "-0", -1, 0 },
    { "-0.5", -1, 0 }, { "1e3", -1, 0 }, { "1.5E1", -1, 0 },
    { "1.0000", -1, 0 }, { "18446744073709551.616", -1, 0 },
    { "18446744073709552", -1, 0 }, { "\"5\"", -1, 0 }, { "null", -1, 0 },
  };
  size_t i;
  (void)state;
  for (i = 0; i < NSAMPLES(cases); i++) {
    jc_doc *d = parse_ok(cases[i].text);
    uint64_t ns = 424242;
    int rc = jc_us_to_ns(d, 0, &ns);
    if (rc != cases[i].rc || (rc == 0 && ns != cases[i].ns) ||
        (rc != 0 && ns != 424242))
      fail_msg("jc_us_to_ns(%s) = %d, ns %llu", cases[i].text, rc,
               (unsigned long long)ns);
    jc_free(d);
  }
}

/* -------------------------------------------------------- traces */

/* jc_trace_events finds the array form and the object form. */
static void test_trace_events_forms(void **state)
{
  jc_doc *d;
  jc_val ev;
  (void)state;

  d = parse_ok("[{\"ph\":\"B\"},{\"ph\":\"E\"}]");
  ev = jc_trace_events(d);
  assert_int_equal(ev, jc_root(d));
  assert_int_equal(jc_len(d, ev), 2);
  jc_free(d);

  d = parse_ok("{\"displayTimeUnit\":\"ns\",\"traceEvents\":"
               "[{\"ph\":\"X\",\"ts\":1.5}]}");
  ev = jc_trace_events(d);
  assert_int_equal(jc_type(d, ev), JC_ARRAY);
  assert_int_equal(jc_len(d, ev), 1);
  assert_true(jc_streq(d, jc_get(d, jc_first(d, ev), "ph"), "X"));
  jc_free(d);

  d = parse_ok("{\"events\":[]}");
  assert_int_equal(jc_trace_events(d), -1);
  jc_free(d);
  d = parse_ok("{\"traceEvents\":{}}");
  assert_int_equal(jc_trace_events(d), -1);
  jc_free(d);
  d = parse_ok("\"traceEvents\"");
  assert_int_equal(jc_trace_events(d), -1);
  jc_free(d);
}

/* A large array is walked element by element with the right values. */
static void test_big_array_walk(void **state)
{
  /* [{"i":0,"s":"e0"},{"i":1,"s":"e1"},...]: walked in linear time. */
  enum { N = 200000 };
  size_t cap = (size_t)N * 40 + 16, len = 0;
  char *text = malloc(cap);
  jc_doc *d;
  jc_val ev, v;
  size_t i;
  (void)state;
  assert_non_null(text);
  text[len++] = '[';
  for (i = 0; i < N; i++)
    len += (size_t)snprintf(text + len, cap - len, "%s{\"i\":%zu,\"s\":\"e%zu\"}",
                            i ? "," : "", i, i);
  text[len++] = ']';
  d = jc_parse(text, len, NULL, 0);
  free(text);
  assert_non_null(d);
  ev = jc_trace_events(d);
  assert_int_equal(jc_len(d, ev), N);
  for (i = 0, v = jc_first(d, ev); v >= 0; v = jc_next(d, v), i++) {
    int64_t k;
    char name[32];
    if (jc_int64(d, jc_get(d, v, "i"), &k) != 0 || k != (int64_t)i)
      fail_msg("element %zu has the wrong \"i\"", i);
    snprintf(name, sizeof name, "e%zu", i);
    if (!jc_streq(d, jc_get(d, v, "s"), name))
      fail_msg("element %zu has the wrong \"s\"", i);
  }
  assert_int_equal(i, N);
  assert_true(jc_num(d, jc_get(d, jc_index(d, ev, N - 1), "i")) == N - 1);
  jc_free(d);
}

/* The document stays valid after the caller's buffer changes. */
static void test_doc_owns_its_text(void **state)
{
  char text[] = "{\"k\":\"value\",\"n\":[1,2]}";
  size_t text_len = strlen(text), len;
  jc_doc *d = jc_parse(text, text_len, NULL, 0);
  const char *raw;
  (void)state;
  assert_non_null(d);
  memset(text, ' ', text_len);
  assert_true(jc_streq(d, jc_get(d, 0, "k"), "value"));
  raw = jc_raw(d, jc_get(d, 0, "n"), &len);
  assert_int_equal(len, 5);
  assert_memory_equal(raw, "[1,2]", 5);
  raw = jc_raw(d, 0, &len);
  assert_int_equal(len, text_len);
  assert_memory_equal(raw, "{\"k\":\"value\",\"n\":[1,2]}", text_len);
  jc_free(d);
}

/* ---------------------------------------------------------- files */

/* Write data[0..len) to a new temporary file whose name ends in suffix
 * (suffix_len bytes); returns the malloc'ed path. */
static char *temp_file(const char *data, size_t len, const char *suffix)
{
  const char *dir = getenv("TMPDIR");
  char *path = malloc(4096);
  int fd;
  assert_non_null(path);
  snprintf(path, 4096, "%s/jsoncheck-XXXXXX%s", dir && *dir ? dir : "/tmp",
           suffix);
  fd = mkstemps(path, (int)strlen(suffix));
  assert_true(fd >= 0);
  assert_int_equal(write(fd, data, len), (ssize_t)len);
  close(fd);
  return path;
}

/* jc_parse_file reads files, refuses gzip bytes, reports missing files. */
static void test_parse_file(void **state)
{
  static const char good[] = "{\"traceEvents\":[{\"ts\":12.5}]}\n";
  /* The first bytes of a gzip stream: read as is, so rejected. */
  static const char gz[] = "\x1f\x8b\x08\x00\x00\x00\x00\x00";
  char err[512] = "";
  char *path;
  jc_doc *d;
  uint64_t ns;
  (void)state;

  path = temp_file(good, sizeof good - 1, ".json");
  d = jc_parse_file(path, err, sizeof err);
  assert_non_null(d);
  assert_int_equal(jc_us_to_ns(d, jc_get(d, jc_first(d, jc_trace_events(d)),
                                         "ts"), &ns), 0);
  assert_true(ns == 12500);
  jc_free(d);
  unlink(path);
  free(path);

  path = temp_file(gz, sizeof gz - 1, ".json.gz");
  assert_null(jc_parse_file(path, err, sizeof err));
  assert_memory_equal(err, "offset 0: ", 10);
  unlink(path);
  free(path);

  path = temp_file("[1,]", 4, ".json");
  assert_null(jc_parse_file(path, err, sizeof err));
  assert_memory_equal(err, "offset 3: ", 10);
  unlink(path);

  /* Now the file is gone. */
  assert_null(jc_parse_file(path, err, sizeof err));
  assert_non_null(strstr(err, path));
  free(path);
}

/* Run all the tests; returns the number that failed. */
int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_accepts_valid_documents),
    cmocka_unit_test(test_rejects_invalid_documents),
    cmocka_unit_test(test_error_offsets),
    cmocka_unit_test(test_depth_limit),
    cmocka_unit_test(test_input_need_not_be_nul_terminated),
    cmocka_unit_test(test_error_reporting),
    cmocka_unit_test(test_navigation),
    cmocka_unit_test(test_none_values_are_safe),
    cmocka_unit_test(test_root_scalars),
    cmocka_unit_test(test_string_decoding),
    cmocka_unit_test(test_keys_are_decoded),
    cmocka_unit_test(test_count_key_finds_duplicates),
    cmocka_unit_test(test_numbers_as_double),
    cmocka_unit_test(test_numbers_ignore_the_locale),
    cmocka_unit_test(test_int64_range),
    cmocka_unit_test(test_uint64_range),
    cmocka_unit_test(test_us_to_ns),
    cmocka_unit_test(test_trace_events_forms),
    cmocka_unit_test(test_big_array_walk),
    cmocka_unit_test(test_doc_owns_its_text),
    cmocka_unit_test(test_parse_file),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
