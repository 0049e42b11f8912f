/* test_format_number.c -- the formatter's number writers, called directly
 *
 * src/format_number.h: integers (u64_to_dec, i64_to_dec, dec8), times
 * as microseconds with three decimals (us_text), the rule that writes a
 * double as an integer (WHOLE_DOUBLE), and the double printer's edges
 * (tw__format_double).  Each text is compared with an oracle that is not
 * the code under test: printf's %llu, %lld, %08u, integer arithmetic for
 * the microseconds; and it is read back through the tests' strict JSON
 * checker (jsoncheck.c: numbers as integers, microseconds as exact
 * nanoseconds, doubles bit for bit).  Every writer is given exactly the
 * room its comment names, with a guard after it that must stay untouched.
 * The edges first (0, powers of ten and two and their neighbours, the
 * INT64 and UINT64 limits), then random values from a printed seed
 * (TW_TEST_SEED replays it), 1,000,000 of each divided by TW_TEST_SCALE.
 * test_format_doubles holds the doubles to printf's %.15g/%.17g rule;
 * test_format_numbers checks numbers in whole records, through the
 * writer.  The program is linked with the library's internals (libtw.la).
 */
#include "format_test.h"   /* rng, rnd */
#include "format_number.h"

#include <locale.h>

#define GUARD 16
#define GUARD_BYTE 'Z'

/* The text at buf[0..n), which had room bytes of room, against want;
 * the guard after the room untouched; and the text one JSON value for
 * the strict checker (returned: jc_free it). */
static jc_doc *check_text(const char *what, const char *buf, size_t n,
                          size_t room, const char *want)
{
  char err[200];
  jc_doc *d;

  if (n > room)
    fail_msg("%s: %zu bytes, more than its room %zu", what, n, room);
  for (size_t i = room; i < room + GUARD; i++)
    if (buf[i] != GUARD_BYTE)
      fail_msg("%s: wrote past its room of %zu bytes", what, room);
  if (n != strlen(want) || memcmp(buf, want, n) != 0)
    fail_msg("%s: wrote \"%.*s\", want \"%s\"", what, (int)n, buf, want);
  d = jc_parse(buf, n, err, sizeof err);
  if (!d)
    fail_msg("%s: \"%.*s\" is not JSON: %s", what, (int)n, buf, err);
  return d;
}

/* An integer writer's text at buf[0..n) (room bytes of room): printf's
 * want, and read back by the checker as the value of the bits v. */
static void check_integer(const char *writer, const char *buf, size_t n,
                          size_t room, const char *want, uint64_t v)
{
  char what[64];
  int64_t i;
  uint64_t u;
  jc_doc *d;

  snprintf(what, sizeof what, "%s(%s)", writer, want);
  d = check_text(what, buf, n, room, want);
  if (want[0] == '-') {
    assert_int_equal(jc_int64(d, jc_root(d), &i), 0);
    assert_true((uint64_t)i == v);
  } else {
    assert_int_equal(jc_uint64(d, jc_root(d), &u), 0);
    assert_true(u == v);
  }
  jc_free(d);
}

static void check_u64(uint64_t v)
{
  char buf[20 + GUARD], want[32];

  memset(buf, GUARD_BYTE, sizeof buf);
  snprintf(want, sizeof want, "%" PRIu64, v);
  check_integer("u64_to_dec", buf, u64_to_dec(v, buf), 20, want, v);
}

static void check_i64(int64_t v)
{
  char buf[21 + GUARD], want[32];

  memset(buf, GUARD_BYTE, sizeof buf);
  snprintf(want, sizeof want, "%" PRId64, v);
  check_integer("i64_to_dec", buf, i64_to_dec(v, buf), 21, want,
                (uint64_t)v);
}

/* v < 10^8: always eight digits, leading zeros kept (not JSON: no
 * read-back). */
static void check_dec8(uint32_t v)
{
  char buf[8 + GUARD], want[16];

  memset(buf, GUARD_BYTE, sizeof buf);
  dec8(buf, v);
  snprintf(want, sizeof want, "%08" PRIu32, v);
  if (memcmp(buf, want, 8) != 0)
    fail_msg("dec8(%" PRIu32 "): wrote \"%.8s\"", v, buf);
  for (size_t i = 8; i < sizeof buf; i++)
    if (buf[i] != GUARD_BYTE)
      fail_msg("dec8(%" PRIu32 "): wrote past 8 bytes", v);
}

/* ns as microseconds: the whole part and the three decimals by integer
 * arithmetic, nothing rounded; read back as exact nanoseconds. */
static void check_us(uint64_t ns)
{
  char buf[US_MAX + GUARD], want[48], what[64];
  uint64_t back;
  jc_doc *d;
  size_t n;

  memset(buf, GUARD_BYTE, sizeof buf);
  n = us_text(buf, ns);
  snprintf(want, sizeof want, "%" PRIu64 ".%03u", ns / 1000,
           (unsigned)(ns % 1000));
  snprintf(what, sizeof what, "us_text(%" PRIu64 " ns)", ns);
  d = check_text(what, buf, n, US_MAX, want);
  assert_int_equal(jc_us_to_ns(d, jc_root(d), &back), 0);
  if (back != ns)
    fail_msg("%s: reads back as %" PRIu64 " ns", what, back);
  jc_free(d);
}

/* v, positive or negative, and its neighbours. */
static void check_around_u64(uint64_t v)
{
  for (uint64_t w = v - 1; w != v + 2; w++) {
    check_u64(w);
    check_i64((int64_t)w);
    check_i64((int64_t)(0 - w));  /* -w, 2^63 too */
    check_us(w);
    if (w < 100000000)
      check_dec8((uint32_t)w);
  }
}

static void test_integer_edges(void **state)
{
  uint64_t p = 1;
  (void)state;

  check_around_u64(1);             /* 0, 1, 2 */
  for (int k = 1; k <= 19; k++) {  /* every length and its carry */
    p *= 10;
    check_around_u64(p);
  }
  for (int b = 1; b < 64; b++)
    check_around_u64(UINT64_C(1) << b);
  check_u64(UINT64_MAX);
  check_u64(UINT64_MAX - 1);
  check_us(UINT64_MAX);
  check_us(UINT64_MAX - 1);
  check_i64(INT64_MAX);
  check_i64(INT64_MAX - 1);
  check_i64(INT64_MIN);
  check_i64(INT64_MIN + 1);
  check_dec8(0);
  check_dec8(99999999);
}

static void test_integer_random(void **state)
{
  unsigned long n = tu_scaled(1000000UL);
  (void)state;

  rng = 0x9e3779b97f4a7c15ULL ^ tu_seed("random integers");  /* not 0 */
  for (unsigned long i = 0; i < n; i++) {
    uint64_t r = rnd();
    uint64_t v = r >> (rnd() & 63);      /* every length */
    check_u64(v);
    check_i64((int64_t)v);
    check_us(v);
    check_dec8((uint32_t)(r % 100000000));
  }
}

/* WHOLE_DOUBLE against its meaning: a whole number of magnitude at most
 * 2^53, which i64_to_dec then writes. */
static void test_whole_double(void **state)
{
  static const double values[] = {
    0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1e-300, 4.9e-324, 123456789.0,
    9007199254740991.0, 9007199254740992.0, -9007199254740992.0,
    9007199254740994.0, -9007199254740994.0, 1e18, 9.2233720368547758e18,
    -9.2233720368547758e18, 1e300, DBL_MAX, -DBL_MAX, 2.5, 1e15 + 0.5,
  };
  (void)state;

  for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
    double v = values[i];
    int want = v == floor(v) && fabs(v) <= 9007199254740992.0;
    if (WHOLE_DOUBLE(v) != want)
      fail_msg("WHOLE_DOUBLE(%.17g) is %d", v, !want);
  }
  assert_false(WHOLE_DOUBLE(NAN));
  assert_false(WHOLE_DOUBLE(INFINITY));
  assert_false(WHOLE_DOUBLE(-INFINITY));
}

/* The double printer at an edge: within TW__DOUBLE_TEXT_MAX, nothing
 * past TW__DOUBLE_MAX, one strict JSON number, read back bit for bit;
 * and no more significant digits than the 17 that every double needs. */
static void check_double(double v)
{
  char buf[TW__DOUBLE_MAX + GUARD], err[200];
  uint64_t a, b;
  double back;
  jc_doc *d;
  size_t n;
  int digits = 0, leading = 1;

  memset(buf, GUARD_BYTE, sizeof buf);
  n = tw__format_double(v, buf);
  if (n > TW__DOUBLE_TEXT_MAX)
    fail_msg("%.17g: %zu bytes", v, n);
  for (size_t i = TW__DOUBLE_MAX; i < sizeof buf; i++)
    if (buf[i] != GUARD_BYTE)
      fail_msg("%.17g: wrote past TW__DOUBLE_MAX", v);
  d = jc_parse(buf, n, err, sizeof err);
  if (!d)
    fail_msg("%.17g: \"%.*s\" is not JSON: %s", v, (int)n, buf, err);
  back = jc_num(d, jc_root(d));
  jc_free(d);
  memcpy(&a, &v, 8);
  memcpy(&b, &back, 8);
  if (a != b)
    fail_msg("%.17g: \"%.*s\" reads back as %.17g", v, (int)n, buf, back);
  for (size_t i = 0; i < n && buf[i] != 'e'; i++) {
    if (buf[i] >= '1' && buf[i] <= '9')
      leading = 0;
    digits += !leading && buf[i] >= '0' && buf[i] <= '9';
  }
  if (digits > 17)
    fail_msg("%.17g: \"%.*s\" has %d digits", v, (int)n, buf, digits);
}

/* v, -v and both neighbours of each. */
static void check_double_around(double v)
{
  double w[3] = { nextafter(v, -INFINITY), v, nextafter(v, INFINITY) };

  for (int i = 0; i < 3; i++) {
    if (!isfinite(w[i]))
      continue;
    check_double(w[i]);
    check_double(-w[i]);
  }
}

static void test_double_edges(void **state)
{
  char t[16], buf[TW__DOUBLE_MAX];
  (void)state;

  /* Zero and negative zero: %g's "0" and "-0". */
  assert_int_equal(tw__format_double(0.0, buf), 1);
  assert_memory_equal(buf, "0", 1);
  assert_int_equal(tw__format_double(-0.0, buf), 2);
  assert_memory_equal(buf, "-0", 2);
  check_double_around(DBL_TRUE_MIN);          /* the least subnormal */
  check_double_around(DBL_MIN);               /* the least normal */
  check_double_around(DBL_MIN - DBL_TRUE_MIN);  /* the largest subnormal */
  check_double_around(DBL_MAX);
  check_double_around(9007199254740992.0);    /* 2^53 */
  check_double_around(0.1);
  check_double_around(1.0 / 3.0);
  for (int k = -323; k <= 308; k++) {         /* every power of ten */
    snprintf(t, sizeof t, "1e%d", k);
    check_double_around(strtod(t, NULL));
  }
  for (int b = -1074; b <= 1023; b++)         /* every power of two */
    check_double_around(ldexp(1.0, b));
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_integer_edges),
    cmocka_unit_test(test_integer_random),
    cmocka_unit_test(test_whole_double),
    cmocka_unit_test(test_double_edges),
  };
  /* The oracles are printf and strtod in the C locale. */
  setlocale(LC_ALL, "C");
  return cmocka_run_group_tests(tests, NULL, NULL);
}
