/* format_string.h -- strings as the formatter writes them: JSON-escaped,
 * UTF-8 checked by the one rule (tw__utf8_sequence, json.h), invalid
 * sequences replaced by U+FFFD or refused
 *
 * escape, the hot path's writer, is here, always inlined into the
 * record's code (format.c): plain ASCII many bytes a step; from the first
 * byte that needs more on, tw__escape_slow (format_string.c); and
 * str_len, the lengths it needs.  Pure, no allocation,
 * async-signal-safe.
 */
#ifndef TW_FORMAT_STRING_H
#define TW_FORMAT_STRING_H

#include "format_number.h"    /* TW__HOT_INLINE; internal.h, json.h */

#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
# include <emmintrin.h>
#endif

/* For each byte: 0 copied as is, 1 escaped (quote, backslash, control),
 * 2 the start of a UTF-8 sequence (or junk) to check. */
extern const unsigned char tw__byte_class[256];

/* Nonzero when one of the 8 bytes of w is more than a plain copy: a
 * control byte, '"', '\\' or a byte of 0x80 and above (SWAR, as in
 * "Bit Twiddling Hacks": a byte's high bit ends up set iff it is below
 * 0x20 or equal to 0x22 or 0x5c, or was set).  A borrow only crosses into
 * the next byte from a byte that is itself special, so the result is
 * exact as a truth value on either byte order. */
#define ONES64 UINT64_C(0x0101010101010101)

TW__HOT_INLINE uint64_t special8(uint64_t w)
{
  return (w | (w - 0x20 * ONES64) | ((w ^ 0x22 * ONES64) - ONES64) |
          ((w ^ 0x5c * ONES64) - ONES64)) & (0x80 * ONES64);
}

#ifdef __SSE2__
/* The bits (one per byte, the first byte lowest) of the bytes of v that
 * are more than a plain copy, as special8: a signed compare with 0x20
 * finds the control bytes and those of 0x80 and above at once. */
TW__HOT_INLINE unsigned special16(__m128i v)
{
  __m128i low = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
  __m128i quote = _mm_cmpeq_epi8(v, _mm_set1_epi8('"'));
  __m128i bs = _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'));
  return (unsigned)_mm_movemask_epi8(_mm_or_si128(low, _mm_or_si128(quote,
                                                                     bs)));
}
#endif

/* strlen(s), inline for the short strings of the hot path (names, cats,
 * keys): without SSE2 or under a sanitizer, strlen itself.  With SSE2,
 * ESCAPE_CHUNK bytes a step by aligned loads, as the C library's own
 * does: an aligned load never crosses into the next page, so it reads
 * nothing that could fault, but may read bytes past the NUL; memcheck
 * takes such loads (partial loads of aligned words), the sanitizers
 * would report them, so they are not built in there. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
# define TW__STR_LEN_PLAIN 1
#elif defined(__has_feature)
# if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
     __has_feature(memory_sanitizer)
#  define TW__STR_LEN_PLAIN 1
# endif
#endif
#if !defined(__SSE2__) && !defined(TW__STR_LEN_PLAIN)
# define TW__STR_LEN_PLAIN 1
#endif

TW__HOT_INLINE size_t str_len(const char *s)
{
#ifdef TW__STR_LEN_PLAIN
  return strlen(s);
#else
  uintptr_t off = (uintptr_t)s & 15;
  const __m128i *p = (const __m128i *)(const void *)(s - off);
  unsigned m = (unsigned)_mm_movemask_epi8(
                 _mm_cmpeq_epi8(_mm_load_si128(p), _mm_setzero_si128())) >>
               off;

  if (TW__LIKELY(m != 0))
    return (size_t)__builtin_ctz(m);
  do
    m = (unsigned)_mm_movemask_epi8(
          _mm_cmpeq_epi8(_mm_load_si128(++p), _mm_setzero_si128()));
  while (m == 0);
  return (size_t)((const char *)p - s) + (size_t)__builtin_ctz(m);
#endif
}

/* The longest prefix of s of at most max bytes (s[max] readable) that
 * does not end inside a UTF-8 sequence. */
size_t tw__utf8_cut(const unsigned char *s, size_t max);

/* The exact length of s[0..n) once escaped (without the quotes), invalid
 * UTF-8 counted as U+FFFD; *invalid set if there is any. */
size_t tw__escaped_len(const unsigned char *s, size_t n, int *invalid);

/* [s, e) escaped at d, as escape (below), which calls it from the first
 * chunk that holds a byte to escape or check.  Returns the end of what
 * it wrote, or NULL when refused. */
char *tw__escape_slow(char *d, const unsigned char *s, const unsigned char *e,
                      unsigned flags, unsigned *replaced);

/* 1 if none of the 8 bytes a (the first 4) and b (the last 4) is more
 * than a plain copy. */
#ifdef __SSE2__
# define PLAIN_4_4(a, b)                                                  \
  (!(special16(_mm_unpacklo_epi32(_mm_cvtsi32_si128((int)(a)),           \
                                  _mm_cvtsi32_si128((int)(b)))) & 0xff))
#else
# define PLAIN_4_4(a, b) (!special8((uint64_t)(a) << 32 | (b)))
#endif

/* Copies s[0..n) (4 <= n < 8) to d and returns 1 when no byte of it is
 * more than a plain copy, else 0: two overlapping loads, one check. */
TW__HOT_INLINE int copy_4_7(char *d, const unsigned char *s, size_t n)
{
  uint32_t a, b;

  memcpy(&a, s, 4);
  memcpy(&b, s + n - 4, 4);
  if (!PLAIN_4_4(a, b))
    return 0;
  memcpy(d, &a, 4);
  memcpy(d + n - 4, &b, 4);
  return 1;
}

#ifdef __SSE2__
/* The chunk plain ASCII goes in: 16 bytes with SSE2 (every x86-64). */
# define ESCAPE_CHUNK 16

/* The ESCAPE_CHUNK bytes at s copied to d, returning 1, if none is more
 * than a plain copy; else 0, nothing written. */
TW__HOT_INLINE int copy_chunk(char *d, const unsigned char *s)
{
  __m128i v = _mm_loadu_si128((const __m128i *)s);

  if (special16(v))
    return 0;
  _mm_storeu_si128((__m128i *)d, v);
  return 1;
}

/* As copy_4_7 for 8 <= n < 16. */
TW__HOT_INLINE int copy_8_15(char *d, const unsigned char *s, size_t n)
{
  __m128i a = _mm_loadl_epi64((const __m128i *)s);
  __m128i b = _mm_loadl_epi64((const __m128i *)(s + n - 8));

  if (special16(_mm_unpacklo_epi64(a, b)))
    return 0;
  _mm_storel_epi64((__m128i *)d, a);
  _mm_storel_epi64((__m128i *)(d + n - 8), b);
  return 1;
}
#else
/* Without SSE2: 8 bytes (SWAR). */
# define ESCAPE_CHUNK 8

TW__HOT_INLINE int copy_chunk(char *d, const unsigned char *s)
{
  uint64_t w;

  memcpy(&w, s, 8);
  if (special8(w))
    return 0;
  memcpy(d, &w, 8);
  return 1;
}
#endif

/* Copies s[0..n) (n >= 8) to d and returns 1 when no byte of it is more
 * than a plain copy; else returns 0 with *done the bytes copied (0 or a
 * multiple of ESCAPE_CHUNK), from which tw__escape_slow goes on.  An
 * ESCAPE_CHUNK a step, the last overlapping the one before. */
TW__HOT_INLINE int copy_plain(char *d, const unsigned char *s, size_t n,
                              size_t *done)
{
  size_t i = 0;

#ifdef __SSE2__
  if (n < ESCAPE_CHUNK)
    return copy_8_15(d, s, n);
#endif
  for (; n - i >= ESCAPE_CHUNK; i += ESCAPE_CHUNK)
    if (!copy_chunk(d + i, s + i))
      goto special;
  if (i < n && !copy_chunk(d + n - ESCAPE_CHUNK, s + n - ESCAPE_CHUNK))
    goto special;
  return 1;

special:
  *done = i;
  return 0;
}

/* s[0..n) escaped at d (without quotes), invalid UTF-8 replaced by U+FFFD
 * (*replaced counts the string once) or, with TW_OPT_REJECT_INVALID_UTF8,
 * refused.
 * Writes exactly the escaped length (tw__escaped_len), at most 6n bytes,
 * and nothing past it.  Returns the end of what it wrote, or NULL when
 * refused.
 *
 * Plain ASCII goes many bytes a step (copy_plain); 4 to 7 bytes in one
 * check (copy_4_7); 3 bytes or less: first, middle and last.  From the first chunk that holds a byte to
 * escape or check on, tw__escape_slow. */
TW__HOT_INLINE char *escape(char *d, const unsigned char *s, size_t n,
                            unsigned flags, unsigned *replaced)
{
  size_t done = 0;

  if (n >= 8) {
    if (copy_plain(d, s, n, &done))
      return d + n;
  } else if (n >= 4) {
    if (copy_4_7(d, s, n))
      return d + n;
  } else if (n > 0) {
    unsigned a = s[0], b = s[n >> 1], c = s[n - 1];
    if (!(tw__byte_class[a] | tw__byte_class[b] | tw__byte_class[c])) {
      d[0] = (char)a;
      d[n >> 1] = (char)b;
      d[n - 1] = (char)c;
      return d + n;
    }
  } else {
    return d;
  }
  return tw__escape_slow(d + done, s + done, s + n, flags, replaced);
}

#endif
