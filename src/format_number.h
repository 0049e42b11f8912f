/* format_number.h -- numbers as the formatter writes them: integers and
 * fixed-point microseconds (here, always inlined, with their tables),
 * doubles (tw__format_double, internal.h; its printer is in
 * format_number.c)
 *
 * The writers of the hot path are inline so that the record's code
 * (format.c) writes a number where it stands without a call: each writes
 * at d, which has the room its comment names, and returns the length.
 * Locale-free, allocation-free, async-signal-safe.
 */
#ifndef TW_FORMAT_NUMBER_H
#define TW_FORMAT_NUMBER_H

#include "internal.h"

#include <stdint.h>
#include <string.h>

/* For the small helpers of the hot path, which GCC at -O2 would otherwise
 * call: the call costs more than they do. */
#define TW__HOT_INLINE static inline __attribute__((always_inline))

/* "00" to "99": two digits of every v < 100 at 2 v.  The tables are
 * static, in each file that uses them: an extern table cost the record's
 * hot path instructions (bench-callgrind). */
static const char tw__digit_pairs[201] =
  "00010203040506070809101112131415161718192021222324252627282930313233343536"
  "37383940414243444546474849505152535455565758596061626364656667686970717273"
  "74757677787980818283848586878889909192939495969798"
  "99";

/* Two digits of v < 100 at d. */
TW__HOT_INLINE void put2(char *d, uint32_t v)
{
  memcpy(d, tw__digit_pairs + 2 * v, 2);
}

/* The divisions below are multiplications by reciprocals, exact in the
 * ranges where they are used (checked for every value of each range):
 *   x * 5243 >> 19        is x / 100    for x < 10^4
 *   x * 429497 >> 32      is x / 10000  for x < 10^6
 *   x * 109951163 >> 40   is x / 10000  for x < 10^8 */
#define DIV100(x) (((x) * 5243u) >> 19)
#define DIV1E4_1E6(x) ((uint32_t)(((uint64_t)(x) * 429497u) >> 32))
#define DIV1E4_1E8(x) ((uint32_t)(((uint64_t)(x) * 109951163u) >> 40))

/* v < 10^8 as exactly eight digits at d, leading zeros kept. */
TW__HOT_INLINE void dec8(char *d, uint32_t v)
{
  uint32_t hi = DIV1E4_1E8(v), lo = v - hi * 10000;
  uint32_t a = DIV100(hi), c = DIV100(lo);

  put2(d, a);
  put2(d + 2, hi - a * 100);
  put2(d + 4, c);
  put2(d + 6, lo - c * 100);
}

/* v < 10^8 in decimal at d (8 bytes of room); returns the length.  The
 * leading pair a < 10 drops its zero by being copied from one byte further
 * into the table; the extra byte that copies is overwritten by the next
 * pair, which moves back by one (yyjson's trick: no digit count first). */
TW__HOT_INLINE size_t dec_1_8(char *d, uint32_t v)
{
  uint32_t a, b, hi, lo;
  size_t lz;

  if (v < 100) {
    if (v < 10) {
      d[0] = (char)('0' + v);
      return 1;
    }
    put2(d, v);
    return 2;
  }
  if (v < 10000) {
    a = DIV100(v);
    lz = a < 10;
    memcpy(d, tw__digit_pairs + 2 * a + lz, 2);
    put2(d + 2 - lz, v - a * 100);
    return 4 - lz;
  }
  if (v < 1000000) {
    a = DIV1E4_1E6(v);
    lo = v - a * 10000;
    b = DIV100(lo);
    lz = a < 10;
    memcpy(d, tw__digit_pairs + 2 * a + lz, 2);
    put2(d + 2 - lz, b);
    put2(d + 4 - lz, lo - b * 100);
    return 6 - lz;
  }
  hi = DIV1E4_1E8(v);
  lo = v - hi * 10000;
  a = DIV100(hi);
  b = DIV100(lo);
  lz = a < 10;
  memcpy(d, tw__digit_pairs + 2 * a + lz, 2);
  put2(d + 2 - lz, hi - a * 100);
  put2(d + 4 - lz, b);
  put2(d + 6 - lz, lo - b * 100);
  return 8 - lz;
}

/* Decimal digits of v at d (20 bytes of room); returns the length. */
TW__HOT_INLINE size_t u64_to_dec(uint64_t v, char *d)
{
  uint64_t hi, mid;
  size_t n;

  if (v < 100000000)
    return dec_1_8(d, (uint32_t)v);
  if (v < UINT64_C(10000000000000000)) {
    hi = v / 100000000;
    n = dec_1_8(d, (uint32_t)hi);
    dec8(d + n, (uint32_t)(v - hi * 100000000));
    return n + 8;
  }
  hi = v / UINT64_C(10000000000000000);           /* at most 1844 */
  v -= hi * UINT64_C(10000000000000000);
  mid = v / 100000000;
  n = dec_1_8(d, (uint32_t)hi);
  dec8(d + n, (uint32_t)mid);
  dec8(d + n + 8, (uint32_t)(v - mid * 100000000));
  return n + 16;
}

/* v in decimal at d (21 bytes of room); returns the length. */
TW__HOT_INLINE size_t i64_to_dec(int64_t v, char *d)
{
  if (v < 0) {
    *d = '-';
    return 1 + u64_to_dec((uint64_t)0 - (uint64_t)v, d + 1);
  }
  return u64_to_dec((uint64_t)v, d);
}

/* The most us_text writes. */
#define US_MAX 24

/* ".000" to ".999": the point and three decimals of every fraction, 4
 * bytes each, for one load and one store (us_text). */
#define FRAC3_1(a, b) "." #a #b "0" "." #a #b "1" "." #a #b "2" "." #a #b "3" \
  "." #a #b "4" "." #a #b "5" "." #a #b "6" "." #a #b "7" "." #a #b "8"     \
  "." #a #b "9"
#define FRAC3_10(a) FRAC3_1(a, 0) FRAC3_1(a, 1) FRAC3_1(a, 2) FRAC3_1(a, 3) \
  FRAC3_1(a, 4) FRAC3_1(a, 5) FRAC3_1(a, 6) FRAC3_1(a, 7) FRAC3_1(a, 8)     \
  FRAC3_1(a, 9)
static const char tw__frac3[4001] =
  FRAC3_10(0) FRAC3_10(1) FRAC3_10(2) FRAC3_10(3) FRAC3_10(4)
  FRAC3_10(5) FRAC3_10(6) FRAC3_10(7) FRAC3_10(8) FRAC3_10(9);
#undef FRAC3_1
#undef FRAC3_10

/* Nanoseconds as microseconds with exactly three decimals at d (US_MAX
 * bytes of room): 1234567891 -> "1234567.891".  Integer arithmetic only:
 * no rounding, no locale.  Returns the length. */
TW__HOT_INLINE size_t us_text(char *d, uint64_t ns)
{
  uint64_t us = ns / 1000;
  uint32_t frac = (uint32_t)(ns - us * 1000);
  size_t n = u64_to_dec(us, d);

  memcpy(d + n, tw__frac3 + 4 * frac, 4);
  return n + 4;
}

/* 1 if the double v is written as an integer: a whole number of
 * magnitude at most 2^53 (the common case for counters; -0.0 is 0). */
#define WHOLE_DOUBLE(v) ((v) >= -9007199254740992.0 && \
                         (v) <= 9007199254740992.0 && \
                         (v) == (double)(int64_t)(v))

#endif
