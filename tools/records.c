/* records.c -- the fields of one record (see records.h)
 *
 * The input is always valid JSON (the reader checked it), so the scan
 * only has to find where each value ends: strings end at the first quote
 * not escaped (memchr finds the candidates), containers at the bracket
 * that brings the depth back to zero, numbers and literals at the first
 * delimiter.
 */
#include "config.h"

#include "records.h"
#include "internal.h"     /* tw__parse_duration: the options' units */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define I64_MAX_NS ((uint64_t)INT64_MAX)

static int is_ws(char c)
{
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static const char *skip_ws(const char *p, const char *e)
{
  while (p < e && is_ws(*p))
    p++;
  return p;
}

/* The end of the string token at p (its opening quote): just after its
 * closing quote. */
static const char *skip_string(const char *p, const char *e)
{
  const char *q = p + 1;

  for (;;) {
    const char *b;
    q = memchr(q, '"', (size_t)(e - q));
    if (!q)
      return e;
    /* Escaped if an odd number of backslashes come before it. */
    for (b = q; b > p + 1 && b[-1] == '\\'; b--)
      continue;
    if (((q - b) & 1) == 0)
      return q + 1;
    q++;
  }
}

/* The end of the value at p. */
static const char *skip_value(const char *p, const char *e)
{
  int depth = 0;

  if (*p == '"')
    return skip_string(p, e);
  if (*p != '{' && *p != '[') {
    while (p < e && *p != ',' && *p != '}' && *p != ']' && !is_ws(*p))
      p++;
    return p;
  }
  while (p < e) {
    char c = *p;
    if (c == '"') {
      p = skip_string(p, e);
      continue;
    }
    if (c == '{' || c == '[') {
      depth++;
    } else if (c == '}' || c == ']') {
      if (--depth == 0)
        return p + 1;
    }
    p++;
  }
  return e;
}

int twt_rec_each(const char *obj, size_t len, twt_rec_member_fn fn, void *arg)
{
  const char *e = obj + len, *p = skip_ws(obj, e);

  if (p >= e || *p != '{')
    return -1;
  p = skip_ws(p + 1, e);
  while (p < e && *p == '"') {
    const char *key = p + 1, *kend = skip_string(p, e) - 1, *v;
    twt_rec_span span;
    p = skip_ws(kend + 1, e);
    if (p >= e || *p != ':')
      return -1;
    v = skip_ws(p + 1, e);
    if (v >= e)
      return -1;
    p = skip_value(v, e);
    span.off = (size_t)(v - obj);
    span.len = (size_t)(p - v);
    if (fn(arg, key, (size_t)(kend - key), span))
      return 0;
    p = skip_ws(p, e);
    if (p < e && *p == ',')
      p = skip_ws(p + 1, e);
  }
  return 0;
}

#define KEY_IS(k, n, lit) ((n) == sizeof lit - 1 && \
                           memcmp((k), lit, sizeof lit - 1) == 0)

static int take_member(void *arg, const char *k, size_t n, twt_rec_span v)
{
  twt_rec *r = arg;

  switch (n) {
  case 1:
    break;
  case 2:
    if (KEY_IS(k, n, "ph"))
      r->ph_v = v;
    else if (KEY_IS(k, n, "ts"))
      r->ts_v = v;
    else if (KEY_IS(k, n, "id"))
      r->id = v;
    break;
  case 3:
    if (KEY_IS(k, n, "pid"))
      r->pid_v = v;
    else if (KEY_IS(k, n, "tid"))
      r->tid_v = v;
    else if (KEY_IS(k, n, "cat"))
      r->cat = v;
    else if (KEY_IS(k, n, "dur"))
      r->dur_v = v;
    else if (KEY_IS(k, n, "id2"))
      r->id2 = v;
    break;
  case 4:
    if (KEY_IS(k, n, "name"))
      r->name = v;
    else if (KEY_IS(k, n, "args"))
      r->args = v;
    break;
  case 5:
    if (KEY_IS(k, n, "scope"))
      r->scope = v;
    break;
  default:
    break;
  }
  return 0;
}

void twt_rec_take(void *arg, const char *key, size_t klen, size_t voff,
                  size_t vlen)
{
  twt_rec_span v;

  if (!key) {
    memset(arg, 0, sizeof(twt_rec));
    return;
  }
  v.off = voff;
  v.len = vlen;
  (void)take_member(arg, key, klen, v);
}

int twt_rec_parse(twt_rec *r, const char *text, size_t len)
{
  memset(r, 0, sizeof *r);
  if (twt_rec_each(text, len, take_member, r) != 0)
    return -1;
  twt_rec_finish(r, text, len);
  return 0;
}

void twt_rec_finish(twt_rec *r, const char *text, size_t len)
{
  r->text = text;
  r->len = len;
  if (r->ph_v.len >= 3 && text[r->ph_v.off] == '"')
    r->ph = text[r->ph_v.off + 1];
  if (r->ts_v.len && twt_rec_us_to_ns(text + r->ts_v.off, r->ts_v.len,
                                      &r->ts) == 0)
    r->has |= TWT_REC_TS;
  if (r->dur_v.len && twt_rec_us_to_ns(text + r->dur_v.off, r->dur_v.len,
                                       &r->dur) == 0)
    r->has |= TWT_REC_DUR;
  if (r->pid_v.len && twt_rec_int(text + r->pid_v.off, r->pid_v.len,
                                  &r->pid) == 0)
    r->has |= TWT_REC_PID;
  if (r->tid_v.len && twt_rec_int(text + r->tid_v.off, r->tid_v.len,
                                  &r->tid) == 0)
    r->has |= TWT_REC_TID;
}

struct find {
  const char *key;
  size_t klen;
  twt_rec_span found;
};

static int find_member(void *arg, const char *k, size_t n, twt_rec_span v)
{
  struct find *f = arg;

  if (n == f->klen && memcmp(k, f->key, n) == 0)
    f->found = v;               /* the last one counts: go on */
  return 0;
}

twt_rec_span twt_rec_member(const char *obj, size_t len, const char *key)
{
  struct find f;

  f.key = key;
  f.klen = strlen(key);
  f.found.off = f.found.len = 0;
  (void)twt_rec_each(obj, len, find_member, &f);
  return f.found;
}

int twt_rec_str_is(const char *tok, size_t n, const char *s)
{
  size_t sl = strlen(s);

  return n == sl + 2 && tok[0] == '"' && memcmp(tok + 1, s, sl) == 0;
}

int twt_rec_int(const char *tok, size_t n, int64_t *out)
{
  const char *p = tok, *e = tok + n;
  uint64_t v = 0, limit;
  int neg = 0;

  if (p < e && *p == '-') {
    neg = 1;
    p++;
  }
  if (p >= e)
    return -1;
  if (e - p <= 18) {               /* 18 digits cannot overflow */
    for (; p < e; p++) {
      unsigned d = (unsigned)(*p - '0');
      if (d > 9)
        return -1;                /* a fraction or an exponent */
      v = v * 10 + d;
    }
    *out = neg ? -(int64_t)v : (int64_t)v;
    return 0;
  }
  limit = neg ? I64_MAX_NS + 1 : I64_MAX_NS;
  for (; p < e; p++) {
    unsigned d = (unsigned)(*p - '0');
    if (d > 9 || v > (limit - d) / 10)
      return -1;                /* a fraction, an exponent, or too big */
    v = v * 10 + d;
  }
  *out = neg ? (int64_t)(0 - v) : (int64_t)v;
  return 0;
}

/* ===================================================== exact decimals
 *
 * A timestamp is kept as the exact decimal it spells: m * 10^-scale, m
 * in 128 bits (38 digits: every timestamp of the format with room for
 * many decimals), whatever the spelling -- 1694039968955744.123,
 * 1.694039968955744123E15, "1694039968955744.123".  Nothing goes through
 * a double.
 */

typedef __int128 i128;
#define DEC_DIGITS 38

typedef struct dec {
  i128 m;                  /* the digits, signed */
  unsigned scale;          /* decimals */
} dec;

static i128 pow10_i128(unsigned k)
{
  i128 v = 1;

  while (k--)
    v *= 10;
  return v;
}

/* The JSON number tok[0..n), or a string holding one, as a dec: 0, or -1
 * (not a number, more than DEC_DIGITS digits, or an exponent out of
 * reach).  *quoted is set for a string. */
static int dec_parse(const char *tok, size_t n, dec *d, int *quoted)
{
  const char *p = tok, *e = tok + n;
  unsigned nd = 0, frac = 0;
  long ex = 0;
  int neg = 0, any = 0;
  i128 m = 0;

  *quoted = 0;
  if (n >= 2 && tok[0] == '"' && tok[n - 1] == '"') {
    *quoted = 1;
    p++;
    e--;
  }
  if (p < e && *p == '-') {
    neg = 1;
    p++;
  }
  {                                 /* up to 18 digits in 64 bits */
    uint64_t v = 0;
    for (; p < e && *p >= '0' && *p <= '9' && nd < 18; p++) {
      any = 1;
      if (v == 0 && *p == '0')
        continue;                   /* leading zeros */
      nd++;
      v = v * 10 + (uint64_t)(*p - '0');
    }
    m = (i128)v;
  }
  for (; p < e && *p >= '0' && *p <= '9'; p++) {
    any = 1;
    if (m == 0 && *p == '0')
      continue;                     /* leading zeros */
    if (++nd > DEC_DIGITS)
      return -1;
    m = m * 10 + (*p - '0');
  }
  if (p < e && *p == '.') {
    for (p++; p < e && *p >= '0' && *p <= '9'; p++) {
      any = 1;
      if (m == 0 && *p == '0') {
        frac++;
        continue;
      }
      if (++nd > DEC_DIGITS)
        return -1;
      m = m * 10 + (*p - '0');
      frac++;
    }
  }
  if (!any)
    return -1;
  if (p < e && (*p == 'e' || *p == 'E')) {
    int eneg = 0, edig = 0;
    p++;
    if (p < e && (*p == '+' || *p == '-'))
      eneg = *p++ == '-';
    for (; p < e && *p >= '0' && *p <= '9'; p++, edig++)
      if (ex < 100000)
        ex = ex * 10 + (*p - '0');
    if (!edig)
      return -1;
    if (eneg)
      ex = -ex;
  }
  if (p != e)
    return -1;
  ex -= (long)frac;                 /* value = m * 10^ex */
  if (ex > 0) {
    if (m != 0 && (unsigned long)ex + nd > DEC_DIGITS)
      return -1;
    m *= pow10_i128((unsigned)ex);
    ex = 0;
  }
  if (-ex > DEC_DIGITS + 20)
    return -1;
  d->m = neg ? -m : m;
  d->scale = (unsigned)-ex;         /* the decimals the text has */
  return 0;
}

/* d in nanoseconds (d in microseconds): rounded down (toward minus
 * infinity), so that a comparison with a whole number of nanoseconds is
 * exact.  0, or -1 if out of range. */
static int dec_to_ns(const dec *d, int64_t *ns)
{
  i128 v;

  if (d->scale <= 3) {
    v = d->m * pow10_i128(3 - d->scale);
  } else {
    unsigned k = d->scale - 3;
    if (k > DEC_DIGITS) {
      v = d->m < 0 ? -1 : 0;
    } else {
      i128 p = pow10_i128(k);
      v = d->m / p;
      if (d->m % p != 0 && d->m < 0)
        v -= 1;
    }
  }
  if (v > (i128)INT64_MAX || v < (i128)INT64_MIN)
    return -1;
  *ns = (int64_t)v;
  return 0;
}

/* How many digits the eight bytes at p begin with, and their value in
 * *v: eight at once (SWAR) where words are little-endian.  The bytes
 * after the digits are read, not used. */
static inline unsigned digits8(const char *p, uint64_t *v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint64_t w, d, bad;
  unsigned k;

  memcpy(&w, p, 8);
  d = w - UINT64_C(0x3030303030303030);
  /* a byte below '0' (its borrow only marks bytes above it) or above
   * '9': its top bit set */
  bad = (d | (d + UINT64_C(0x7676767676767676))) & UINT64_C(0x8080808080808080);
  k = bad ? (unsigned)__builtin_ctzll(bad) >> 3 : 8;
  if (k == 0) {
    *v = 0;
    return 0;
  }
  d <<= 8 * (8 - k);               /* the digits, zeros before them */
  d = (d * 2561) >> 8;              /* pairs, then fours, then eight */
  d = ((d & UINT64_C(0x00FF00FF00FF00FF)) * 6553601) >> 16;
  d = ((d & UINT64_C(0x0000FFFF0000FFFF)) * UINT64_C(42949672960001)) >> 32;
  *v = d;
  return k;
#else
  uint64_t x = 0;
  unsigned k = 0;

  while (k < 8 && p[k] >= '0' && p[k] <= '9')
    x = x * 10 + (uint64_t)(p[k++] - '0');
  *v = x;
  return k;
#endif
}

int twt_rec_us_to_ns(const char *tok, size_t n, int64_t *ns)
{
  const char *p = tok, *e = tok + n;
  uint64_t us = 0, frac = 0;
  unsigned scale = 100;
  int neg = 0;
  dec d;
  int quoted;

  /* The common spelling first, in 64 bits: up to 15 digits, a point and
   * up to three decimals (the library's form). */
  if (p < e && *p == '-') {
    neg = 1;
    p++;
  }
  if (p < e && e - p <= 20) {
    const char *s = p;
    if (e - p >= 8) {               /* up to 8 digits at once */
      unsigned k = digits8(p, &us);
      p += k;
    }
    while (p < e && *p >= '0' && *p <= '9' && p - s < 15)
      us = us * 10 + (uint64_t)(*p++ - '0');
    if (p > s && p < e && *p == '.') {
      for (p++; p < e && *p >= '0' && *p <= '9' && scale; p++, scale /= 10)
        frac += (uint64_t)(*p - '0') * scale;
    }
    if (p == e && p > s && e[-1] != '.') {
      int64_t v = (int64_t)(us * 1000 + frac);
      *ns = neg ? -v : v;
      return 0;
    }
  }
  return dec_parse(tok, n, &d, &quoted) == 0 ? dec_to_ns(&d, ns) : -1;
}

int twt_rec_us_cmp(const char *a, size_t an, const char *b, size_t bn,
                   int *cmp)
{
  dec x, y;
  int q;
  unsigned s;
  i128 xm, ym;

  if (dec_parse(a, an, &x, &q) != 0 || dec_parse(b, bn, &y, &q) != 0)
    return -1;
  s = x.scale > y.scale ? x.scale : y.scale;
  if (s - x.scale > DEC_DIGITS || s - y.scale > DEC_DIGITS)
    return -1;
  xm = x.m * pow10_i128(s - x.scale);
  ym = y.m * pow10_i128(s - y.scale);
  *cmp = xm < ym ? -1 : xm > ym;
  return 0;
}

size_t twt_rec_us_shift_text(const char *tok, size_t n, int64_t shift_ns,
                             char *buf)
{
  dec d;
  int quoted;
  unsigned k = 3, scale;
  int64_t sh = shift_ns;
  i128 m, add;
  char digits[48];
  size_t w = 0, nd = 0;
  int neg;

  if (dec_parse(tok, n, &d, &quoted) != 0)
    return 0;
  /* The shift in microseconds with k decimals, k as few as it needs. */
  while (k > 0 && sh % 10 == 0) {
    sh /= 10;
    k--;
  }
  scale = d.scale > k ? d.scale : k;
  if (scale - d.scale > DEC_DIGITS || scale - k > DEC_DIGITS)
    return 0;
  m = d.m * pow10_i128(scale - d.scale);
  add = (i128)sh * pow10_i128(scale - k);
  m += add;
  neg = m < 0;
  if (neg)
    m = -m;
  do {
    digits[nd++] = (char)('0' + (int)(m % 10));
    m /= 10;
  } while (m != 0 || nd <= scale);  /* at least one digit before '.' */
  if (nd > DEC_DIGITS + 2)
    return 0;
  if (quoted)
    buf[w++] = '"';
  if (neg)
    buf[w++] = '-';
  while (nd > 0) {
    if (nd == scale)
      buf[w++] = '.';
    buf[w++] = digits[--nd];
  }
  if (quoted)
    buf[w++] = '"';
  return w;
}

size_t twt_rec_us_text(int64_t ns, char *buf)
{
  uint64_t a = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns, whole = a / 1000;
  unsigned frac = (unsigned)(a % 1000);
  char digits[24];
  size_t n = 0, k = 0;

  if (ns < 0)
    buf[n++] = '-';
  do {
    digits[k++] = (char)('0' + whole % 10);
    whole /= 10;
  } while (whole);
  while (k)
    buf[n++] = digits[--k];
  buf[n++] = '.';
  buf[n++] = (char)('0' + frac / 100);
  buf[n++] = (char)('0' + frac / 10 % 10);
  buf[n++] = (char)('0' + frac % 10);
  return n;
}

static unsigned hex_value(const char *p)
{
  unsigned v = 0;

  for (int i = 0; i < 4; i++) {
    char c = p[i];
    v = v * 16 + (unsigned)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
  }
  return v;
}

/* Append code point cp as UTF-8 at out + *n if it fits in cap - 1. */
static int put_utf8(char *out, size_t cap, size_t *n, size_t *len,
                    unsigned cp)
{
  char b[4];
  size_t k;

  if (cp < 0x80) {
    b[0] = (char)cp;
    k = 1;
  } else if (cp < 0x800) {
    b[0] = (char)(0xc0 | cp >> 6);
    b[1] = (char)(0x80 | (cp & 0x3f));
    k = 2;
  } else if (cp < 0x10000) {
    b[0] = (char)(0xe0 | cp >> 12);
    b[1] = (char)(0x80 | (cp >> 6 & 0x3f));
    b[2] = (char)(0x80 | (cp & 0x3f));
    k = 3;
  } else {
    b[0] = (char)(0xf0 | cp >> 18);
    b[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    b[2] = (char)(0x80 | (cp >> 6 & 0x3f));
    b[3] = (char)(0x80 | (cp & 0x3f));
    k = 4;
  }
  *len += k;
  if (*n + k >= cap)
    return -1;
  memcpy(out + *n, b, k);
  *n += k;
  return 0;
}

size_t twt_rec_str_decode(const char *tok, size_t n, char *out, size_t cap)
{
  const char *p = tok + 1, *e = tok + n - 1;
  size_t len = 0, w = 0;
  int full = cap == 0;

  while (p < e) {
    if (*p != '\\') {
      /* A run of plain bytes, copied whole or up to a character. */
      const char *q = p;
      while (q < e && *q != '\\')
        q++;
      len += (size_t)(q - p);
      if (!full) {
        size_t k = (size_t)(q - p);
        if (w + k >= cap) {
          k = cap - 1 - w;
          while (k > 0 && ((unsigned char)p[k] & 0xc0) == 0x80)
            k--;              /* not inside a UTF-8 sequence */
          full = 1;
        }
        memcpy(out + w, p, k);
        w += k;
      }
      p = q;
      continue;
    }
    p++;
    {
      unsigned cp;
      switch (*p) {
      case 'b': cp = '\b'; break;
      case 'f': cp = '\f'; break;
      case 'n': cp = '\n'; break;
      case 'r': cp = '\r'; break;
      case 't': cp = '\t'; break;
      case 'u':
        cp = hex_value(p + 1);
        p += 4;
        if (cp >= 0xd800 && cp <= 0xdbff && p + 6 < e && p[1] == '\\') {
          cp = 0x10000 + ((cp - 0xd800) << 10) + (hex_value(p + 3) - 0xdc00);
          p += 6;
        }
        break;
      default: cp = (unsigned char)*p; break;   /* \" \\ \/ */
      }
      p++;
      if (full)
        len += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
      else if (put_utf8(out, cap, &w, &len, cp) != 0)
        full = 1;
    }
  }
  if (cap)
    out[w] = '\0';
  return len;
}

size_t twt_rec_str_cut(const char *tok, size_t n, size_t max)
{
  size_t i = 1, good = 1;

  if (n > 0)
    n--;                        /* the closing quote */
  while (i < n) {
    size_t k = 1;
    unsigned char c = (unsigned char)tok[i];
    if (c == '\\')
      k = tok[i + 1] == 'u' ? 6 : 2;
    else if (c >= 0xf0)
      k = 4;
    else if (c >= 0xe0)
      k = 3;
    else if (c >= 0xc0)
      k = 2;
    /* A surrogate pair is one character. */
    if (k == 6 && i + 12 <= n && tok[i + 6] == '\\' &&
        (tok[i + 2] | 0x20) == 'd' && tok[i + 3] >= '8' &&
        (tok[i + 3] <= '9' || (tok[i + 3] | 0x20) <= 'b'))
      k = 12;
    if (i + k > max)
      break;
    i += k;
    good = i;
  }
  return good;
}

uint64_t twt_rec_hash(const void *data, size_t n, uint64_t seed)
{
  const unsigned char *p = data;
  uint64_t h = seed ^ (n * UINT64_C(0x9E3779B97F4A7C15));

  /* FNV-1a over 8-byte words, then a final mix (splitmix64's). */
  while (n >= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    h = (h ^ w) * UINT64_C(0x100000001B3);
    h ^= h >> 29;
    p += 8;
    n -= 8;
  }
  while (n--)
    h = (h ^ *p++) * UINT64_C(0x100000001B3);
  h ^= h >> 30;
  h *= UINT64_C(0xBF58476D1CE4E5B9);
  h ^= h >> 27;
  h *= UINT64_C(0x94D049BB133111EB);
  return h ^ (h >> 31);
}

int twt_rec_parse_duration(const char *text, int64_t *ns)
{
  const char *p = text, *unit;
  uint64_t whole = 0, scale, step, frac = 0, total;
  char one[8];
  int neg = 0;

  if (*p == '+' || *p == '-')
    neg = *p++ == '-';
  if (*p < '0' || *p > '9')
    return -1;
  for (; *p >= '0' && *p <= '9'; p++) {
    if (whole > (UINT64_MAX - 9) / 10)
      return -1;
    whole = whole * 10 + (uint64_t)(*p - '0');
  }
  unit = p;
  if (*p == '.') {
    if (p[1] < '0' || p[1] > '9')
      return -1;
    for (unit = p + 1; *unit >= '0' && *unit <= '9'; unit++)
      continue;
  }
  if (*unit == '\0') {
    if (whole != 0 || unit != p)  /* only a bare 0 */
      return -1;
    *ns = 0;
    return 0;
  }
  /* The unit's scale, by the options' own parser: "1" and the unit. */
  if (strlen(unit) > 3)
    return -1;
  snprintf(one, sizeof one, "1%s", unit);
  if (tw__parse_duration(one, strlen(one), &scale) != 0)
    return -1;
  if (*p == '.') {
    step = scale;
    for (p++; *p >= '0' && *p <= '9'; p++) {
      if (step % 10 != 0)
        break;                  /* below the nanosecond */
      step /= 10;
      frac += (uint64_t)(*p - '0') * step;
    }
  }
  if (whole > (I64_MAX_NS - frac) / scale)
    return -1;
  total = whole * scale + frac;
  *ns = neg ? -(int64_t)total : (int64_t)total;
  return 0;
}

void twt_text_append(char *buf, size_t size, size_t *n, const char *fmt, ...)
{
  va_list ap;
  int k;

  if (!buf || *n >= size)
    return;
  va_start(ap, fmt);
  k = vsnprintf(buf + *n, size - *n, fmt, ap);
  va_end(ap);
  if (k > 0)
    *n += (size_t)k;
}

const char *twt_text_plural(uint64_t n, const char *one, const char *many)
{
  return n == 1 ? one : many;
}

/* ============================================================ members */

struct member_span {
  const char *key, *val;
  size_t klen, vlen, at;
};

struct member_list {
  struct member_span *v;
  size_t n, cap;
  const char *obj;
};

static int member_push(void *arg, const char *key, size_t klen,
                       twt_rec_span value)
{
  struct member_list *l = arg;

  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 16;
    struct member_span *v = realloc(l->v, cap * sizeof *v);
    if (!v)
      return -1;
    l->v = v;
    l->cap = cap;
  }
  l->v[l->n] = (struct member_span){ key, l->obj + value.off, klen,
                                     value.len, l->n };
  l->n++;
  return 0;
}

static int member_cmp(const void *a, const void *b)
{
  const struct member_span *x = a, *y = b;
  size_t n = x->klen < y->klen ? x->klen : y->klen;
  int c = memcmp(x->key, y->key, n);

  if (c)
    return c;
  if (x->klen != y->klen)
    return x->klen < y->klen ? -1 : 1;
  return x->at < y->at ? -1 : x->at > y->at;
}

size_t twt_rec_sort_members(char *dst, const char *m, size_t len)
{
  struct member_list l = { NULL, 0, 0, NULL };
  char *obj;
  size_t w = 0;

  if (len < 2 || m[0] != ',' || !(obj = malloc(len + 1)))
    return 0;
  obj[0] = '{';
  memcpy(obj + 1, m + 1, len - 1);
  obj[len] = '}';
  l.obj = obj;
  if (twt_rec_each(obj, len + 1, member_push, &l) == 0 && l.n) {
    qsort(l.v, l.n, sizeof *l.v, member_cmp);
    for (size_t i = 0; i < l.n; i++) {
      dst[w++] = ',';
      dst[w++] = '"';
      memcpy(dst + w, l.v[i].key, l.v[i].klen);
      w += l.v[i].klen;
      dst[w++] = '"';
      dst[w++] = ':';
      memcpy(dst + w, l.v[i].val, l.v[i].vlen);
      w += l.v[i].vlen;
    }
  }
  free(l.v);
  free(obj);
  return w == len ? w : 0;
}
