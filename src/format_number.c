/* format_number.c -- the formatter's doubles (format_number.h holds its
 * integer writers), by code of our own
 *
 * A double is written as %.15g writes it when that reads back as the
 * same double, else as %.17g (tw__format_double, below), without printf,
 * locale or allocation, so the formatter stays async-signal-safe: the
 * crash hook formats.  test_format_number checks the integers and the
 * microseconds, test_format_doubles the doubles, each against printf and
 * strtod.
 */
#include "format_number.h"

#include <math.h>

/* ---------------------------------------------------------------- doubles
 *
 * A double as %.15g writes it when that reads back as the same double,
 * else as %.17g, in the C locale (the bytes tracewriter has always
 * written), by code of our own: no printf, no locale, no allocation, so
 * the formatter stays async-signal-safe.
 *
 * v = m * 2^e (m < 2^53).  For P significant digits and v's decimal
 * exponent X, x = v * 10^s with s = P - 1 - X lies in [10^(P-1), 10^P);
 * x = M / D exactly for integers M and D:
 *
 *   s >= 0, e + s >= 0    M = m 5^s 2^(e+s)   D = 1
 *   s >= 0, e + s < 0     M = m 5^s           D = 2^-(e+s)
 *   s < 0,  e >= 0        M = m 2^e           D = 10^-s
 *   s < 0,  e < 0         M = m               D = 10^-s 2^-e
 *
 * and the spacing of doubles around v (its ulp, 2^e) is U / D with U =
 * 5^s, 2^e or 1 in the last three rows.  The digits are N = x rounded to
 * the nearest, ties to even (as glibc's printf rounds the exact value),
 * and r = M - N D says how far N is from v: the P digits read back as v
 * when |r| is within half an ulp (a quarter below a power of two, where
 * the spacing below halves; a tie reads back as v when m is even, as
 * strtod rounds).  Integers of 128 bits do it for 1e-11 <= |v| < 1e33
 * or so; the rest goes through a small fixed-size bignum, on the stack.
 * Two P-digit decimals are at least 4 ulps apart for P <= 15, so when
 * the 15 digits read back they are also the shortest: %.15g's exactly. */

typedef unsigned __int128 u128;

static const uint64_t pow10_u64[20] = {
  UINT64_C(1), UINT64_C(10), UINT64_C(100), UINT64_C(1000),
  UINT64_C(10000), UINT64_C(100000), UINT64_C(1000000),
  UINT64_C(10000000), UINT64_C(100000000), UINT64_C(1000000000),
  UINT64_C(10000000000), UINT64_C(100000000000),
  UINT64_C(1000000000000), UINT64_C(10000000000000),
  UINT64_C(100000000000000), UINT64_C(1000000000000000),
  UINT64_C(10000000000000000), UINT64_C(100000000000000000),
  UINT64_C(1000000000000000000), UINT64_C(10000000000000000000)
};

/* 10^k for k <= 22, exact as doubles. */
static const double pow10_dbl[23] = {
  1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12,
  1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22
};

/* 5^k for k <= 27 (5^27 < 2^63). */
static const uint64_t pow5_u64[28] = {
  UINT64_C(1), UINT64_C(5), UINT64_C(25), UINT64_C(125), UINT64_C(625),
  UINT64_C(3125), UINT64_C(15625), UINT64_C(78125), UINT64_C(390625),
  UINT64_C(1953125), UINT64_C(9765625), UINT64_C(48828125),
  UINT64_C(244140625), UINT64_C(1220703125), UINT64_C(6103515625),
  UINT64_C(30517578125), UINT64_C(152587890625), UINT64_C(762939453125),
  UINT64_C(3814697265625), UINT64_C(19073486328125),
  UINT64_C(95367431640625), UINT64_C(476837158203125),
  UINT64_C(2384185791015625), UINT64_C(11920928955078125),
  UINT64_C(59604644775390625), UINT64_C(298023223876953125),
  UINT64_C(1490116119384765625), UINT64_C(7450580596923828125)
};

/* The double v > 0 (finite), split. */
typedef struct dsplit {
  double v;                /* the double, |v| */
  uint64_t m;              /* v = m * 2^e, m < 2^53 */
  int e;
  int lower_closer;        /* the next double below is nearer than the
                              next above (m = 2^52, not the least binade) */
} dsplit;

/* --- the bignum of the slow path: little-endian 32-bit limbs */
#define BIG_LIMBS 40       /* 1280 bits: M, D, N D are at most ~1100 */
typedef struct big {
  int n;                   /* limbs in use; d[n-1] != 0 unless n = 0 */
  uint32_t d[BIG_LIMBS];
} big;

static void big_set(big *a, uint64_t v)
{
  a->n = 0;
  while (v) {
    a->d[a->n++] = (uint32_t)v;
    v >>= 32;
  }
}

static void big_mul_u32(big *a, uint32_t k)
{
  uint64_t carry = 0;
  for (int i = 0; i < a->n; i++) {
    uint64_t t = (uint64_t)a->d[i] * k + carry;
    a->d[i] = (uint32_t)t;
    carry = t >> 32;
  }
  if (carry)
    a->d[a->n++] = (uint32_t)carry;
}

static void big_mul_pow5(big *a, int k)
{
  for (; k >= 13; k -= 13)
    big_mul_u32(a, 1220703125u);           /* 5^13 */
  if (k)
    big_mul_u32(a, (uint32_t)pow5_u64[k]);
}

static void big_shl(big *a, int bits)
{
  int w = bits / 32, b = bits % 32;

  if (a->n == 0)
    return;
  if (b) {
    uint32_t top = a->d[a->n - 1] >> (32 - b);
    for (int i = a->n - 1; i > 0; i--)
      a->d[i] = a->d[i] << b | a->d[i - 1] >> (32 - b);
    a->d[0] <<= b;
    if (top)
      a->d[a->n++] = top;
  }
  if (w) {
    for (int i = a->n - 1; i >= 0; i--)
      a->d[i + w] = a->d[i];
    for (int i = 0; i < w; i++)
      a->d[i] = 0;
    a->n += w;
  }
}

static int big_cmp(const big *a, const big *b)
{
  if (a->n != b->n)
    return a->n < b->n ? -1 : 1;
  for (int i = a->n - 1; i >= 0; i--)
    if (a->d[i] != b->d[i])
      return a->d[i] < b->d[i] ? -1 : 1;
  return 0;
}

/* a -= b, for a >= b. */
static void big_sub(big *a, const big *b)
{
  int64_t borrow = 0;
  for (int i = 0; i < a->n; i++) {
    int64_t t = (int64_t)a->d[i] - (i < b->n ? b->d[i] : 0) - borrow;
    borrow = t < 0;
    a->d[i] = (uint32_t)(t + (borrow << 32));
  }
  while (a->n > 0 && a->d[a->n - 1] == 0)
    a->n--;
}

/* out = a * q. */
static void big_mul_u64(big *out, const big *a, uint64_t q)
{
  u128 carry = 0;
  int i;

  for (i = 0; i < a->n; i++) {
    u128 t = (u128)a->d[i] * q + carry;
    out->d[i] = (uint32_t)t;
    carry = t >> 32;
  }
  for (; carry; carry >>= 32)
    out->d[i++] = (uint32_t)carry;
  out->n = i;
  while (out->n > 0 && out->d[out->n - 1] == 0)
    out->n--;
}

static int big_bits(const big *a)
{
  return a->n ? 32 * (a->n - 1) + (32 - __builtin_clz(a->d[a->n - 1])) : 0;
}

/* a >> k, for a result below 2^128. */
static u128 big_shr128(const big *a, int k)
{
  u128 r = 0;
  for (int i = a->n - 1; i >= 0; i--) {
    int pos = 32 * i - k;                      /* where limb i lands */
    if (pos >= 0)
      r |= (u128)a->d[i] << pos;
    else if (pos > -32)
      r |= (u128)(a->d[i] >> -pos);
  }
  return r;
}

/* The result of rounding x = M / D to an integer. */
typedef struct dround {
  uint64_t n;              /* x rounded, ties to even */
  int up;                  /* 1 if rounded up */
  int exact;               /* 1 if r = 0 */
  int back;                /* 1 if n reads back as v (when asked) */
} dround;

/* Whether N, |r| = ar away (above v if above), reads back as v, the ulp
 * being U (all in units of 1/D): the exact tests of the comment above. */
#define READS_BACK(ar2, ar4, U, above, sp)                                  \
  ((above) || !(sp)->lower_closer                                          \
     ? ((ar2) < (U) || ((ar2) == (U) && !((sp)->m & 1)))                   \
     : (ar4) <= (U))

/* x = v 10^s rounded, through the bignum. */
static dround round_big(const dsplit *sp, int s, int want_back)
{
  big M, D, U, P, t;
  dround r = { 0, 0, 0, 1 };
  int k, c;
  uint64_t q;

  big_set(&M, sp->m);
  big_set(&D, 1);
  big_set(&U, 1);
  if (s >= 0) {
    big_mul_pow5(&M, s);
    if (sp->e + s >= 0) {
      big_shl(&M, sp->e + s);
    } else {
      big_shl(&D, -(sp->e + s));
      big_mul_pow5(&U, s);
    }
  } else {
    big_mul_pow5(&D, -s);
    big_shl(&D, -s);
    if (sp->e >= 0) {
      big_shl(&M, sp->e);
      big_shl(&U, sp->e);
    } else {
      big_shl(&D, -sp->e);
    }
  }
  /* q from the top 64 bits of D, within a few units of M / D < 2^64;
   * then made exact. */
  k = big_bits(&D) > 64 ? big_bits(&D) - 64 : 0;
  q = (uint64_t)(big_shr128(&M, k) / (uint64_t)big_shr128(&D, k));
  big_mul_u64(&P, &D, q);
  while (big_cmp(&P, &M) > 0) {
    big_sub(&P, &D);
    q--;
  }
  t = M;
  big_sub(&t, &P);                             /* t = M - q D */
  while (big_cmp(&t, &D) >= 0) {
    big_sub(&t, &D);
    q++;
  }
  r.exact = t.n == 0;
  P = t;
  big_shl(&P, 1);                              /* 2 R */
  c = big_cmp(&P, &D);
  r.up = c > 0 || (c == 0 && (q & 1));
  r.n = q + (uint64_t)r.up;
  if (want_back && !r.exact) {
    big a = t;                                 /* |r| */
    if (r.up) {
      a = D;
      big_sub(&a, &t);
    }
    big a2 = a, a4 = a;
    big_shl(&a2, 1);
    big_shl(&a4, 2);
    c = big_cmp(&a2, &U);
    if (r.up || !sp->lower_closer)
      r.back = c < 0 || (c == 0 && !(sp->m & 1));
    else
      r.back = big_cmp(&a4, &U) <= 0;
  }
  return r;
}

/* x = v 10^s rounded: in 128 bits where they hold it, else round_big. */
static dround round_scaled(const dsplit *sp, int s, int want_back)
{
  dround r = { 0, 0, 0, 1 };
  int e = sp->e;

  if (s >= 0 && s <= 27) {
    u128 T = (u128)sp->m * pow5_u64[s];
    int sh = -(e + s);
    if (sh <= 0) {                             /* an integer */
      if (-sh < 64 && (T << -sh) >> 64 == 0) {
        r.n = (uint64_t)(T << -sh);
        r.exact = 1;
        return r;
      }
    } else if (sh < 120) {
      u128 rem = T & (((u128)1 << sh) - 1), half = (u128)1 << (sh - 1);
      u128 U = pow5_u64[s], ar;
      if ((T >> sh) >> 64 == 0) {
        r.n = (uint64_t)(T >> sh);
        r.up = rem > half || (rem == half && (r.n & 1));
        r.n += (uint64_t)r.up;
        r.exact = rem == 0;
        if (want_back && !r.exact) {
          ar = r.up ? ((u128)1 << sh) - rem : rem;
          r.back = READS_BACK(ar << 1, ar << 2, U, r.up, sp);
        }
        return r;
      }
    }
  } else if (s < 0 && s >= -19 && e <= 74) {
    u128 D = pow10_u64[-s], M = sp->m, U = 1, q, R, ar;
    if (e >= 0) {
      M <<= e;
      U <<= e;
    } else {
      D <<= -e;
    }
    q = M / D;
    R = M - q * D;
    if (q >> 64 == 0) {
      r.n = (uint64_t)q;
      r.up = (R << 1) > D || ((R << 1) == D && (r.n & 1));
      r.n += (uint64_t)r.up;
      r.exact = R == 0;
      if (want_back && !r.exact) {
        ar = r.up ? D - R : R;
        r.back = READS_BACK(ar << 1, ar << 2, U, r.up, sp);
      }
      return r;
    }
  }
  return round_big(sp, s, want_back);
}

/* v's P significant digits (P <= 17) into *n (exactly P digits) and its
 * decimal exponent into *x (of the rounded value, as %e gives it).
 * Returns 1 if they read back as v (only computed when want_back). */
static int decimal_digits(const dsplit *sp, int P, int want_back,
                          uint64_t *n, int *x)
{
  int lg = sp->e + 63 - __builtin_clzll(sp->m);      /* floor(log2 v) */
  int est = (int)(((int64_t)lg * 78913) >> 18);      /* floor(lg log10 2) */

  /* X is est or est + 1: where 10^(est+1) is a double, one compare says
   * which (elsewhere, or if a rounded power misleads it, the loop below
   * corrects it at the price of one more round). */
  if (est + 1 >= 0 && est + 1 <= 22 && sp->v >= pow10_dbl[est + 1])
    est++;

  for (;;) {
    dround r = round_scaled(sp, P - 1 - est, want_back);
    if (r.n >= pow10_u64[P]) {
      if (r.n == pow10_u64[P] && r.up) {         /* 9.99.. rounded up */
        *n = pow10_u64[P - 1];
        *x = est + 1;
        return r.back;
      }
      est++;
    } else if (r.n < pow10_u64[P - 1]) {
      est--;
    } else {
      *n = r.n;
      *x = est;
      return r.back;
    }
  }
}

/* The text of a P-digit n with decimal exponent x, as %.{P}g writes it
 * (or %.{P-1}e when e_form) at d, which has TW__DOUBLE_MAX bytes of room
 * (the digits are copied in pieces of constant size, which may write past
 * the text); returns the length. */
static size_t g_text(char *d, uint64_t n, int x, int P, int e_form)
{
  char dig[40];
  size_t k = (size_t)P, len;

  if (!e_form) {                     /* %g drops the trailing zeros */
    while (n % 100000000 == 0) {
      n /= 100000000;
      k -= 8;
    }
    if (n % 10000 == 0) {
      n /= 10000;
      k -= 4;
    }
    if (n % 100 == 0) {
      n /= 100;
      k -= 2;
    }
    if (n % 10 == 0) {
      n /= 10;
      k -= 1;
    }
  }
  u64_to_dec(n, dig);                /* k <= 17 digits */
  if (!e_form && x >= -4 && x < P) { /* %f style */
    if (x >= 0) {
      size_t ip = (size_t)x + 1;
      if (k <= ip) {                 /* an integer: no point */
        memcpy(d, dig, 17);
        memcpy(d + k, "0000000000000000", 16);
        return ip;
      }
      memcpy(d, dig, 16);            /* ip < k <= 17 */
      d[ip] = '.';
      memcpy(d + ip + 1, dig + ip, 16);
      return k + 1;
    }
    len = 2 + (size_t)(-x - 1);
    memcpy(d, "0.000000", 8);
    memcpy(d + len, dig, 24);
    return len + k;
  }
  d[0] = dig[0];
  d[1] = '.';
  memcpy(d + 2, dig + 1, 16);
  len = k > 1 ? k + 1 : 1;
  d[len++] = 'e';
  d[len++] = x < 0 ? '-' : '+';
  {
    unsigned ax = (unsigned)(x < 0 ? -x : x);
    if (ax >= 100) {
      d[len++] = (char)('0' + ax / 100);
      ax %= 100;
    }
    put2(d + len, ax);
    len += 2;
  }
  return len;
}

/* The most digits after the decimal point of a number without an
 * exponent that Perfetto reads right: it divides the fraction's digits
 * by 10^n in a uint64_t, which overflows from n = 20 (a value then off
 * by a factor of ten or more). */
#define FRACTION_DIGITS_MAX 19

/* The most digits after the point short_decimal tries. */
#define SHORT_DECIMAL_DIGITS 6

/* v (1e-4 <= v < 1e15) as %.15g writes it, at d, when v is a decimal of
 * at most 15 significant digits and SHORT_DECIMAL_DIGITS after the point
 * (0.5, 12.25, 0.001: what programs mostly write); returns the length of
 * the text, or 0 when v is not such a decimal.
 *
 * N = v 10^k rounded to an integer, for k = 1, 2, ...; the decimal
 * N 10^-k reads back as v when (double)N / 10^k == v, since both N and
 * 10^k are exact doubles and IEEE division rounds N / 10^k as strtod
 * rounds the decimal.  A decimal of at most 15 significant digits that
 * reads back as v is the one %.15g writes: v is within half an ulp of
 * it, less than half a unit of the 15th digit (an ulp is at most 2^-52
 * v, a unit of the 15th digit at least 10^-15 v), so rounding v to 15
 * digits gives it, and %g drops its trailing zeros as below.  It lies in
 * %g's fixed range (exponent -4 to 14), with at most 6 digits after the
 * point, so never in the exponent form of tw__format_double. */
static int short_decimal(double v, char *d)
{
  for (int k = 1; k <= SHORT_DECIMAL_DIGITS; k++) {
    double t = v * pow10_dbl[k];
    uint64_t N, q, r, p;
    size_t n;
    char tmp[16];

    if (t >= 1e15)
      return 0;
    N = (uint64_t)(t + 0.5);
    if ((double)N / pow10_dbl[k] != v)
      continue;
    p = pow10_u64[k];
    q = N / p;
    r = N - q * p;
    n = u64_to_dec(q, d);
    if (r == 0)                          /* a whole number after all */
      return (int)n;
    while (r % 10 == 0) {                /* %g's trailing zeros go */
      r /= 10;
      k--;
    }
    dec8(tmp, (uint32_t)r);              /* r < 10^6: 8 digits, zeros first */
    memset(tmp + 8, '0', 8);
    d[n] = '.';
    memcpy(d + n + 1, tmp + 8 - k, 8);   /* k digits, and scratch */
    return (int)n + 1 + k;
  }
  return 0;
}

/* Shortest of %.15g/%.17g that reads back as v (finite), as the C locale
 * writes it; in exponent form (%.16e) when %.17g would write more than
 * FRACTION_DIGITS_MAX fraction digits (for 1e-4 <= |v| < 1e-3).  %g
 * never puts more than 17 digits before the point (it switches to an
 * exponent), so the integer part never overflows Perfetto's int64
 * either.  Returns the length of the text at buf (at most
 * TW__DOUBLE_TEXT_MAX bytes; buf has TW__DOUBLE_MAX). */
size_t tw__format_double(double v, char *buf)
{
  uint64_t bits, n;
  dsplit sp;
  int bexp, x, P = 15;
  size_t len = 0;

  memcpy(&bits, &v, 8);
  if (bits >> 63)
    buf[len++] = '-';
  sp.v = fabs(v);
  bexp = (int)(bits >> 52 & 0x7ff);
  sp.m = bits & ((UINT64_C(1) << 52) - 1);
  if (bexp == 0 && sp.m == 0) {                  /* %g of 0.0 and -0.0 */
    buf[len++] = '0';
    return len;
  }
  if (bexp) {
    sp.m |= UINT64_C(1) << 52;
    sp.e = bexp - 1075;
  } else {
    sp.e = -1074;
  }
  if (sp.v >= 1e-4 && sp.v < 1e15 && (x = short_decimal(sp.v, buf + len)))
    return len + (size_t)x;
  sp.lower_closer = sp.m == UINT64_C(1) << 52 && bexp > 1;
  if (!decimal_digits(&sp, 15, 1, &n, &x)) {
    P = 17;
    decimal_digits(&sp, 17, 0, &n, &x);
    /* %.17g in %f style from 1e-4 on: 16 - x fraction digits, less
     * trailing zeros. */
    if (x < 0 && x >= -4) {
      int k = 17;
      uint64_t t = n;
      while (t % 10 == 0) {
        t /= 10;
        k--;
      }
      if (k - 1 - x > FRACTION_DIGITS_MAX)
        return len + g_text(buf + len, n, x, P, 1);
    }
  }
  return len + g_text(buf + len, n, x, P, 0);
}
