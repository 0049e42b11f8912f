/* format_string.c -- the formatter's strings (format_string.h): the part
 * of escaping past the first byte that needs more than a copy, the exact
 * escaped length, and the cut at max_string on a UTF-8 boundary
 *
 * Every UTF-8 decision is tw__utf8_sequence's (json.h), the project's one
 * rule, but for the two common sequences that tw__escape_slow takes
 * without a call (the same answer: test_format_string holds it to the
 * rule byte for byte).
 */
#include "format_string.h"

#define C16(x) x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x
const unsigned char tw__byte_class[256] = {
  C16(1), C16(1),                                     /* 0x00-0x1f */
  0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,     /* 0x20-0x2f: " */
  C16(0), C16(0),                                     /* 0x30-0x4f */
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,     /* 0x50-0x5f: \ */
  C16(0), C16(0),                                     /* 0x60-0x7f */
  C16(2), C16(2), C16(2), C16(2),                     /* 0x80-0xbf */
  C16(2), C16(2), C16(2), C16(2)                      /* 0xc0-0xff */
};
#undef C16

size_t tw__utf8_cut(const unsigned char *s, size_t max)
{
  size_t cut = max;
  int back = 0;

  while (cut > 0 && back < 3 && (s[cut] & 0xc0) == 0x80) {
    cut--;
    back++;
  }
  /* A lone continuation run longer than 3 is junk: cut where asked. */
  return (s[cut] & 0xc0) == 0x80 ? max : cut;
}

size_t tw__escaped_len(const unsigned char *s, size_t n, int *invalid)
{
  const unsigned char *p = s, *e = s + n;
  size_t len = 0;

  while (p < e) {
    unsigned c = *p;
    if (tw__byte_class[c] == 0) {
      len++;
      p++;
    } else if (tw__byte_class[c] == 1) {
      len += (c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' ||
              c == '\b' || c == '\f') ? 2 : 6;
      p++;
    } else {
      int k = tw__utf8_sequence(p, (size_t)(e - p));
      len += k > 0 ? (size_t)k : 3;
      p += k > 0 ? k : -k;
      *invalid |= k < 0;
    }
  }
  return len;
}

/* The index of the first byte of w (as loaded from memory) that special8
 * flagged, m = special8(w) != 0: the lowest flagged byte is always a
 * special one (a borrow only runs towards later bytes), on a
 * little-endian machine the lowest in value. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
# define FIRST_SPECIAL(m) ((size_t)__builtin_ctzll(m) >> 3)
#else
# define FIRST_SPECIAL(m) ((size_t)0)    /* byte by byte from there */
#endif

/* The letter of the two-byte escape of a byte below 0x60 ("\n"), or 0
 * for the \u00XX form. */
static const char escape_letter[0x60] = {
  ['"'] = '"', ['\\'] = '\\', ['\n'] = 'n', ['\r'] = 'r', ['\t'] = 't',
  ['\b'] = 'b', ['\f'] = 'f',
};

#ifdef __SSE2__
/* The index of the first byte of s[0..rem) (4 <= rem < 16) that is more
 * than a plain copy, or rem if none; the plain ones are copied to d, and
 * maybe some bytes after them, up to d + rem (which the caller writes
 * over next: what it writes from the byte found on is at least as long).
 * Two overlapping loads of 4 or 8 bytes, one check. */
static inline size_t first_special_short(char *d, const unsigned char *s,
                                         size_t rem)
{
  unsigned m, half;

  if (rem >= 8) {
    __m128i a = _mm_loadl_epi64((const __m128i *)s);
    __m128i b = _mm_loadl_epi64((const __m128i *)(s + rem - 8));
    m = special16(_mm_unpacklo_epi64(a, b));
    _mm_storel_epi64((__m128i *)d, a);
    _mm_storel_epi64((__m128i *)(d + rem - 8), b);
    half = 8;
  } else {
    uint32_t a, b;
    memcpy(&a, s, 4);
    memcpy(&b, s + rem - 4, 4);
    m = special16(_mm_unpacklo_epi32(_mm_cvtsi32_si128((int)a),
                                     _mm_cvtsi32_si128((int)b))) & 0xff;
    memcpy(d, &a, 4);
    memcpy(d + rem - 4, &b, 4);
    half = 4;
  }
  /* The first half's bits are its bytes; the second half's are the last
   * bytes, from rem - half on (past the first half: they overlap only in
   * bytes the first half found plain). */
  if (m & ((1u << half) - 1))
    return (size_t)__builtin_ctz(m);
  m >>= half;
  return m ? rem - half + (size_t)__builtin_ctz(m) : rem;
}
#endif

/* Copies the plain bytes at *s to *d up to the first byte of [*s, e)
 * that is more than a plain copy, and leaves *s and *d there; returns 0
 * when there is none (all copied; *s is then left where it was).  Plain
 * runs go many bytes a step; a chunk is copied whole, what follows its
 * plain bytes being written over next (the room, 6 bytes per input
 * byte, holds them, as that many input bytes are left). */
static inline int skip_plain(char **dp, const unsigned char **sp,
                             const unsigned char *e)
{
  char *d = *dp;
  const unsigned char *s = *sp;

  while (s < e) {
    size_t rem = (size_t)(e - s), k;
#ifdef __SSE2__
    if (rem >= 16) {
      __m128i v = _mm_loadu_si128((const __m128i *)s);
      unsigned m = special16(v);
      _mm_storeu_si128((__m128i *)d, v);
      if (!m) {
        d += 16;
        s += 16;
        continue;
      }
      k = (size_t)__builtin_ctz(m);
    } else if (rem >= 4) {
      k = first_special_short(d, s, rem);
      if (k == rem) {
        d += rem;
        break;
      }
    } else
#else
    if (rem >= 8) {
      uint64_t w, m;
      memcpy(&w, s, 8);
      m = special8(w);
      memcpy(d, &w, 8);
      if (!m) {
        d += 8;
        s += 8;
        continue;
      }
      k = FIRST_SPECIAL(m);
    } else
#endif
    {                                 /* the last few: plain ones tightly */
      while (s < e && tw__byte_class[*s] == 0)
        *d++ = (char)*s++;
      if (s == e)
        break;
      k = 0;
    }
    *dp = d + k;
    *sp = s + k;
    return 1;
  }
  *dp = d;
  return 0;
}

/* The escape of the byte c (class 1: quote, backslash, control) at d:
 * "\n" or "\u001f".  Returns the end. */
static inline char *escape_control(char *d, unsigned c)
{
  static const char hex[] = "0123456789abcdef";

  d[0] = '\\';
  if (escape_letter[c]) {
    d[1] = escape_letter[c];
    return d + 2;
  }
  memcpy(d + 1, "u00", 3);
  d[4] = hex[c >> 4];
  d[5] = hex[c & 15];
  return d + 6;
}

/* The UTF-8 sequence (or junk) at *s, before e, at d: copied when valid,
 * else U+FFFD for its maximal invalid subpart (*rep set) or, with
 * TW_OPT_REJECT_INVALID_UTF8, refused.  Advances *s; returns the end of
 * what it wrote, or NULL when refused. */
static inline char *copy_utf8(char *d, const unsigned char **sp,
                              const unsigned char *e, unsigned flags,
                              unsigned *rep)
{
  const unsigned char *s = *sp;
  size_t rem = (size_t)(e - s);
  unsigned c = *s;
  int n;

  /* The common sequences first: two bytes from C2, three from E1 (not
   * ED: it may start a surrogate); the rest checked whole. */
  if (c >= 0xc2 && c <= 0xdf && rem >= 2 && (s[1] & 0xc0) == 0x80)
    n = 2;
  else if (c >= 0xe1 && c <= 0xef && c != 0xed && rem >= 3 &&
           (s[1] & 0xc0) == 0x80 && (s[2] & 0xc0) == 0x80)
    n = 3;
  else
    n = tw__utf8_sequence(s, rem);
  if (n > 0) {                        /* 2 to 4 bytes, copied as such */
    d[0] = (char)s[0];
    d[1] = (char)s[1];
    if (n > 2)
      d[2] = (char)s[2];
    if (n > 3)
      d[3] = (char)s[3];
    *sp = s + n;
    return d + n;
  }
  if (flags & TW_OPT_REJECT_INVALID_UTF8)
    return NULL;
  memcpy(d, "\xef\xbf\xbd", 3);       /* U+FFFD */
  *sp = s - n;
  *rep = 1;
  return d + 3;
}

/* Plain runs are skipped many bytes a step, to the first special byte;
 * only that byte takes the slow path (the common UTF-8 sequences, two or
 * three bytes, without a call). */
char *tw__escape_slow(char *d, const unsigned char *s, const unsigned char *e,
                      unsigned flags, unsigned *replaced)
{
  unsigned rep = 0;

  while (skip_plain(&d, &s, e)) {
    unsigned c = *s;
    switch (tw__byte_class[c]) {
    case 0:                           /* FIRST_SPECIAL's byte by byte */
      *d++ = (char)c;
      s++;
      break;
    case 1:
      d = escape_control(d, c);
      s++;
      break;
    default:
      if (!(d = copy_utf8(d, &s, e, flags, &rep)))
        return NULL;
    }
  }
  *replaced += rep;
  return d;
}
