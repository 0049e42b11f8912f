/* test_format_doubles.c -- the formatter's doubles are printf's, without
 * printf
 *
 * tw__format_double writes a double as the library always has: the
 * shortest of %.15g and %.17g that reads back as the same double, in the
 * C locale, in %.16e form where %.17g would write more than 19 digits
 * after the point.  It now does so by code of its own (no printf, no
 * locale: async-signal-safe).  Each value here is checked two ways: its
 * text is byte for byte what that printf rule writes (the rule, with
 * snprintf and strtod, is the oracle below), and strtod reads the text
 * back as the same double, bit for bit.  Every edge class is checked
 * whole (subnormals, the least normal, powers of ten and two and their
 * neighbours, 2^53 +- 1, negative zero, the largest double, the
 * carries of 9.99...), then 10,000,000 random doubles (divided by
 * TW_TEST_SCALE: testutil.h, default 10, 1 for make check-long)
 * from a printed seed (TW_TEST_SEED replays it): a quarter random bit
 * patterns (every exponent), a quarter random digits at decimal exponents
 * -30 .. 30, a quarter quotients of small integers (what programs divide),
 * a quarter short decimals (1 to 16 digits, 1 to 8 after the point).
 * The program is linked with the library's internals (libtw.la).
 */
#include "testutil.h"
#include "internal.h"

#include <float.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>

/* The old formatter, as it was: the oracle. */
static size_t oracle(double v, char *buf)
{
  int prec = 15, n;
  const char *dot;

  n = snprintf(buf, 32, "%.*g", prec, v);
  if (strtod(buf, NULL) != v) {
    prec = 17;
    n = snprintf(buf, 32, "%.*g", prec, v);
  }
  if ((dot = strchr(buf, '.')) && !strchr(dot, 'e') &&
      buf + n - dot - 1 > 19)
    n = snprintf(buf, 32, "%.*e", prec - 1, v);
  return (size_t)n;
}

static unsigned long checked;

/* v written by the formatter: the oracle's bytes, read back bit-exact. */
static void check(double v)
{
  char got[TW__DOUBLE_MAX + 8], want[40];
  size_t n, wn;
  double back;
  uint64_t a, b;

  memset(got, 'Z', sizeof got);
  n = tw__format_double(v, got);
  if (n > TW__DOUBLE_TEXT_MAX)
    fail_msg("%.17g: %zu bytes, more than TW__DOUBLE_TEXT_MAX", v, n);
  for (size_t i = TW__DOUBLE_MAX; i < sizeof got; i++)
    if (got[i] != 'Z')
      fail_msg("%.17g: wrote past TW__DOUBLE_MAX", v);
  got[n] = '\0';
  wn = oracle(v, want);
  if (n != wn || memcmp(got, want, n) != 0) {
    memcpy(&a, &v, 8);
    fail_msg("double 0x%016llx: wrote \"%s\", printf's rule \"%s\"",
             (unsigned long long)a, got, want);
  }
  back = strtod(got, NULL);
  memcpy(&a, &v, 8);
  memcpy(&b, &back, 8);
  if (a != b && !(v == 0 && back == 0))
    fail_msg("double 0x%016llx: \"%s\" reads back as 0x%016llx",
             (unsigned long long)a, got, (unsigned long long)b);
  checked++;
}

/* v if finite (the formatter is given finite doubles only). */
static void check_finite(double v)
{
  if (isfinite(v))
    check(v);
}

/* v, -v, and the doubles next to each. */
static void check_around(double v)
{
  double s[2] = { v, -v };
  for (int i = 0; i < 2; i++) {
    check_finite(s[i]);
    check_finite(nextafter(s[i], INFINITY));
    check_finite(nextafter(s[i], -INFINITY));
  }
}

static double from_bits(uint64_t b)
{
  double v;
  memcpy(&v, &b, 8);
  return v;
}

static void test_edge_classes(void **state)
{
  static const double fixed[] = {
    0.0, 0.1, 0.2, 0.3, 0.1 + 0.2, 1.0 / 3, 2.0 / 3, 0.5, 1.5, 123.456,
    9007199254740991.0, 9007199254740992.0, 9007199254740994.0,
    9007199254740993.5, 4503599627370495.5, 4503599627370496.5,
    1e15, 1e16, 1e17, 123456789012345678.0, 18446744073709551615.0,
    9223372036854775807.0, 1e-4, 1e-3, 0.00012345678901234567,
    0.00099999999999999999, 0.0009999999999999998, 1e-5,
    0.000123456789012345, 5e-324, 1e-323, 2.2250738585072009e-308,
    2.2250738585072014e-308, 4.9406564584124654e-324, DBL_MAX, DBL_MIN,
    DBL_EPSILON, 1.7976931348623157e308, 9.999999999999999e22, 1e23,
    8.41e21, 5e-310, 3.14159265358979323846, 2.718281828459045,
    299792.458, 6.02214076e23, 6.62607015e-34, 1.602176634e-19,
  };
  (void)state;
  check(-0.0);
  for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
    check_around(fixed[i]);
  /* Every power of ten and of two a double reaches, and neighbours. */
  for (int k = -323; k <= 308; k++) {
    char t[16];
    snprintf(t, sizeof t, "1e%d", k);
    check_around(strtod(t, NULL));
    snprintf(t, sizeof t, "9.5e%d", k);
    check_around(strtod(t, NULL));
  }
  for (int k = -1074; k <= 1023; k++)
    check_around(ldexp(1.0, k));
  /* 2^53 +- 1 at every scale: the last integers doubles hold. */
  for (int k = -1074 + 53; k <= 1023 - 53; k += 7) {
    check(ldexp(9007199254740991.0, k));
    check(ldexp(9007199254740993.0, k));
  }
  /* Subnormals: the smallest, the largest, and every low one. */
  for (uint64_t m = 1; m < 5000; m++)
    check_around(from_bits(m));
  check_around(from_bits((UINT64_C(1) << 52) - 1));
  /* Numbers of 9s that round up into the next decade, at every scale. */
  for (int k = -300; k <= 300; k += 3) {
    char t[40];
    snprintf(t, sizeof t, "9.9999999999999995e%d", k);
    check_around(strtod(t, NULL));
    snprintf(t, sizeof t, "9.99999999999999999e%d", k);
    check_around(strtod(t, NULL));
    snprintf(t, sizeof t, "1.00000000000000005e%d", k);
    check_around(strtod(t, NULL));
  }
  /* Decimals of few digits (written by a shorter path), at the bounds
   * of that path: 1e-4 and 1e15, 15 digits, 6 and 7 after the point. */
  {
    static const char *const short_ones[] = {
      "0.5", "12.25", "0.001", "0.0001", "0.00011", "0.000123456",
      "0.0001234567", "99999999999999.9", "999999999999999.5",
      "999999999999999.9", "99999999.999999", "9999999.9999999",
      "123456789.123456", "1234567890.12345", "0.1234567", "0.999999",
      "0.9999995", "1e15", "1.5e15", "0.00009999", "0.000099999",
    };
    for (size_t i = 0; i < sizeof short_ones / sizeof *short_ones; i++)
      check_around(strtod(short_ones[i], NULL));
    for (int k = 1; k <= 9; k++)
      for (uint64_t n = 1; n < 2000; n++) {
        char t[40];
        snprintf(t, sizeof t, "%" PRIu64 "e-%d", n * 7919 % 100000, k);
        check_around(strtod(t, NULL));
      }
  }
  print_message("  %lu edge values\n", checked);
}

static uint64_t rng;

static uint64_t rnd(void)                    /* splitmix64 */
{
  uint64_t z = (rng += UINT64_C(0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

/* 10^k for 0 <= k <= 16. */
static uint64_t pow10_of(int k)
{
  uint64_t p = 1;
  while (k-- > 0)
    p *= 10;
  return p;
}

static void test_random(void **state)
{
  unsigned long n = tu_scaled(10000000UL);
  (void)state;

  rng = tu_seed("random doubles");
  checked = 0;
  for (unsigned long i = 0; i < n; i++) {
    double v;
    switch (i % 4) {
    case 0:                                  /* any bits */
      do
        v = from_bits(rnd());
      while (!isfinite(v));
      break;
    case 1: {                                /* digits at a scale */
      uint64_t r = rnd();
      char t[40];
      snprintf(t, sizeof t, "%" PRIu64 "e%d", (r >> 8) % UINT64_C(100000000000000000) >> (r % 57),
               (int)(r & 63) - 31 - 10);
      v = strtod(t, NULL);
      break;
    }
    case 2: {                                /* small quotients */
      uint64_t r = rnd();
      v = (double)(int64_t)(r >> 40) / (double)((r & 0xffff) + 1);
      break;
    }
    default: {                               /* short decimals */
      uint64_t r = rnd();
      char t[40];
      snprintf(t, sizeof t, "%s%" PRIu64 "e-%d", r & 1 ? "-" : "",
               (r >> 12) % pow10_of((int)(r >> 1 & 15) + 1),
               (int)(r >> 5 & 7) + 1);
      v = strtod(t, NULL);
      break;
    }
    }
    check(v);
  }
  print_message("  %lu random doubles\n", checked);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_edge_classes),
    cmocka_unit_test(test_random),
  };
  /* The oracle is printf in the C locale; the formatter has no locale. */
  setlocale(LC_ALL, "C");
  return cmocka_run_group_tests(tests, NULL, NULL);
}
