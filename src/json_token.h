/* json_token.h -- the scalar tokens of the one JSON grammar (json.c):
 * strings, numbers and literals, and the copy of compacted text, shared
 * by the checker (json.c) and the shape cache (json_shape.c), which must
 * accept exactly the same tokens.
 * Internal to the library; pure, async-signal-safe.
 */
#ifndef TW_JSON_TOKEN_H
#define TW_JSON_TOKEN_H

#include "json.h"

#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
# include <emmintrin.h>
#endif

/* How many bytes from p (up to e) come before a '"', a '\\', a control
 * byte, or one of 0x80 and above (UTF-8): every byte that needs a closer
 * look in a strict string.  With SSE2 (every x86-64) sixteen bytes a
 * step: a signed compare with 0x20 catches the control bytes and those
 * of 0x80 and above at once. */
static inline size_t to_special(const unsigned char *p,
                                const unsigned char *e)
{
  const unsigned char *s = p;

#ifdef __SSE2__
  const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'),
                space = _mm_set1_epi8(0x20);

  while (e - p >= 16) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    unsigned m = (unsigned)_mm_movemask_epi8(
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote),
                                  _mm_cmpeq_epi8(v, bslash)),
                     _mm_cmplt_epi8(v, space)));
    if (m)
      return (size_t)(p - s) + (size_t)__builtin_ctz(m);
    p += 16;
  }
#endif
  while (e - p >= 8) {
    uint64_t w = tw__json_load_le(p), m;
    m = (TW__JSON_HAS_BYTE(w, '"') | TW__JSON_HAS_BYTE(w, '\\') |
         ((w - TW__JSON_ONES * 0x20) & ~w) | w) & TW__JSON_HIGHS;
    if (m)
      return (size_t)(p - s) + (size_t)(__builtin_ctzll(m) >> 3);
    p += 8;
  }
  while (p < e && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\')
    p++;
  return (size_t)(p - s);
}

/* The string at p (its opening quote), byte by byte where it must be
 * (escapes, UTF-8): past its closing quote, or NULL. */
const unsigned char *tw__json_string_slow(const unsigned char *p,
                                          const unsigned char *e);

/* The same, inlined: most strings of a trace are short and plain (keys,
 * names), and one step of sixteen bytes finds their end. */
static inline const unsigned char *check_string(const unsigned char *p,
                                                const unsigned char *e)
{
#ifdef __SSE2__
  if (e - p >= 17) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 1));
    unsigned m = (unsigned)_mm_movemask_epi8(
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                  _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
                     _mm_cmplt_epi8(v, _mm_set1_epi8(0x20))));
    if (m) {
      unsigned k = (unsigned)__builtin_ctz(m);
      if (p[1 + k] == '"')
        return p + 2 + k;
    }
  }
#endif
  return tw__json_string_slow(p, e);
}

/* How many digits p[0..e) begins with. */
static inline size_t digits(const unsigned char *p, const unsigned char *e)
{
  const unsigned char *s = p;

#ifdef __SSE2__
  while (e - p >= 16) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    unsigned m = (unsigned)_mm_movemask_epi8(
        _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)),
                      _mm_cmplt_epi8(v, _mm_set1_epi8('9' + 1))));
    if (m != 0xffff)
      return (size_t)(p - s) + (size_t)__builtin_ctz(~m);
    p += 16;
  }
#endif
  while (p < e && *p >= '0' && *p <= '9')
    p++;
  return (size_t)(p - s);
}

static inline __attribute__((always_inline))
const unsigned char *check_number(const unsigned char *p,
                                  const unsigned char *e)
{
  size_t k;

  if (p < e && *p == '-')
    p++;
  if (p >= e)
    return NULL;
  if (*p == '0') {
    p++;
  } else {
    if (!(k = digits(p, e)))
      return NULL;
    p += k;
  }
  if (p < e && *p == '.') {
    p++;
    if (!(k = digits(p, e)))
      return NULL;
    p += k;
  }
  if (p < e && (*p == 'e' || *p == 'E')) {
    p++;
    if (p < e && (*p == '+' || *p == '-'))
      p++;
    if (!(k = digits(p, e)))
      return NULL;
    p += k;
  }
  return p;
}

/* The literal at p (true, false or null): past it, or NULL. */
static inline const unsigned char *check_literal(const unsigned char *p,
                                                 const unsigned char *e)
{
  switch (*p) {
  case 't':
    return e - p >= 4 && memcmp(p, "true", 4) == 0 ? p + 4 : NULL;
  case 'f':
    return e - p >= 5 && memcmp(p, "false", 5) == 0 ? p + 5 : NULL;
  case 'n':
    return e - p >= 4 && memcmp(p, "null", 4) == 0 ? p + 4 : NULL;
  default:
    return NULL;
  }
}

/* Copy n bytes from src down to dst (dst <= src, maybe overlapping).
 * wide: sixteen bytes may be read at src and written at dst whatever n
 * (the text written is not the text read, and both have the room), so a
 * short run is copied in two fixed words. */
static inline void copy_down(unsigned char *dst, const unsigned char *src,
                             size_t n, int wide)
{
  if (wide && n <= 16) {
    uint64_t a, b;
    memcpy(&a, src, 8);
    memcpy(&b, src + 8, 8);
    memcpy(dst, &a, 8);
    memcpy(dst + 8, &b, 8);
  } else {
    memmove(dst, src, n);
  }
}

#endif /* TW_JSON_TOKEN_H */
