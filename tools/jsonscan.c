/* jsonscan.c -- the general front end (see jsonscan.h)
 *
 * How it works: a state machine over the document's structure outside
 * the records (the top-level object's keys, values skipped or kept, the
 * events array's separators).  A record that lies within one chunk (most
 * of them) is taken in one pass of the strict checker (check(), no
 * recursion, strings sixteen bytes a step with SSE2, eight without):
 * it is validated, its end found, its members reported and, when it
 * spreads over lines, its text without the whitespace between tokens
 * written out, all at once; it is yielded where it is when it needs no
 * change.  Otherwise (it goes on into the next chunk, or is invalid) a
 * scan that tracks only strings, escapes and nesting finds where it
 * ends, gathering it into a buffer of at most max_record bytes, and the
 * checker then takes the whole.
 */
#include "config.h"

#include "jsonscan.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
# include <emmintrin.h>
#endif

#define DEPTH_MAX 512u     /* the deepest twt_json_check can check */

/* Eight bytes at a time (SWAR): whether a word holds a byte that ends a
 * run of plain string bytes. */
#define ONES  UINT64_C(0x0101010101010101)
#define HIGHS UINT64_C(0x8080808080808080)
#define HAS_ZERO(v) (((v) - ONES) & ~(v) & HIGHS)
#define HAS_BYTE(v, b) HAS_ZERO((v) ^ (ONES * (uint64_t)(b)))

/* How many bytes from p (up to e) come before a '"' or '\\', eight at
 * a time: the lowest bit of each mask is exact (a borrow only makes
 * false hits above a true one), and words are read little-endian. */
static inline size_t to_quote(const unsigned char *p, const unsigned char *e)
{
  const unsigned char *s = p;

  while (e - p >= 8) {
    uint64_t w, m;
    memcpy(&w, p, 8);
    if ((m = HAS_BYTE(w, '"') | HAS_BYTE(w, '\\')) != 0)
      return (size_t)(p - s) + (size_t)(__builtin_ctzll(m) >> 3);
    p += 8;
  }
  while (p < e && *p != '"' && *p != '\\')
    p++;
  return (size_t)(p - s);
}

/* The same for every byte that needs a closer look in a strict string:
 * '"', '\\', a control byte, or one of 0x80 and above (UTF-8).  With
 * SSE2 (every x86-64) sixteen bytes a step: a signed compare with 0x20
 * catches the control bytes and those of 0x80 and above at once. */
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
    uint64_t w, m;
    memcpy(&w, p, 8);
    m = (HAS_BYTE(w, '"') | HAS_BYTE(w, '\\') |
         ((w - ONES * 0x20) & ~w) | w) & HIGHS;
    if (m)
      return (size_t)(p - s) + (size_t)(__builtin_ctzll(m) >> 3);
    p += 8;
  }
  while (p < e && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\')
    p++;
  return (size_t)(p - s);
}
#define KEY_KEEP  16u      /* bytes of a key kept to compare */

/* ===================================================== the checker */

/* The length of the UTF-8 sequence at p[0..n) (its first byte >= 0x80),
 * or 0 if it is not a valid one (overlong, surrogate, past U+10FFFF,
 * cut). */
static size_t utf8_len(const unsigned char *p, size_t n)
{
  unsigned c = p[0];

  if (c >= 0xc2 && c <= 0xdf)
    return n >= 2 && (p[1] & 0xc0) == 0x80 ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    if (n < 3 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
      return 0;
    if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0))
      return 0;                     /* overlong; a surrogate */
    return 3;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    if (n < 4 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 ||
        (p[3] & 0xc0) != 0x80)
      return 0;
    if ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90))
      return 0;                     /* overlong; past U+10FFFF */
    return 4;
  }
  return 0;
}

static int hex4(const unsigned char *p, const unsigned char *e, unsigned *v)
{
  unsigned x = 0;

  if (e - p < 4)
    return -1;
  for (int i = 0; i < 4; i++) {
    unsigned c = p[i];
    if (c >= '0' && c <= '9')
      c -= '0';
    else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
      c = (c | 0x20) - 'a' + 10;
    else
      return -1;
    x = x << 4 | c;
  }
  *v = x;
  return 0;
}

/* The string at p (its opening quote): past its closing quote, or
 * NULL. */
static const unsigned char *check_string_slow(const unsigned char *p,
                                         const unsigned char *e)
{
  for (p++; p < e;) {
    unsigned c;

    p += to_special(p, e);
    if (p >= e)
      break;
    c = *p;
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      p++;
      continue;
    }
    if (c == '"')
      return p + 1;
    if (c < 0x20)
      return NULL;
    if (c == '\\') {
      unsigned v, lo;
      if (++p >= e)
        return NULL;
      c = *p++;
      if (c == 'u') {
        if (hex4(p, e, &v))
          return NULL;
        p += 4;
        if (v >= 0xdc00 && v <= 0xdfff)
          return NULL;              /* a lone low surrogate */
        if (v >= 0xd800 && v <= 0xdbff) {
          if (e - p < 6 || p[0] != '\\' || p[1] != 'u' ||
              hex4(p + 2, e, &lo) || lo < 0xdc00 || lo > 0xdfff)
            return NULL;
          p += 6;
        }
      } else if (!memchr("\"\\/bfnrt", (int)c, 8)) {
        return NULL;
      }
      continue;
    }
    {
      size_t k = utf8_len(p, (size_t)(e - p));
      if (!k)
        return NULL;
      p += k;
    }
  }
  return NULL;
}

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
  return check_string_slow(p, e);
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

static inline int is_ws_byte(unsigned c)
{
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* What check() is asked and what it finds. */
#define CK_MEMBERS_MAX 32u /* members of the top object held for fn */

struct ck_member {
  const unsigned char *key; /* without its quotes */
  size_t klen;
  size_t krm;              /* whitespace left out before it */
  size_t voff, vlen;       /* the value in the text read */
  size_t rm0, rm1;         /* whitespace left out before its start, end */
};

struct ck {
  twt_member_fn fn;        /* the top object's members (or NULL) */
  void *arg;
  unsigned char *d;        /* compact: the text without the whitespace
                              between tokens goes here (may be the text
                              itself: moved down) */
  size_t dcap;             /* ... its room (at least the text's length) */
  size_t end;              /* prefix: where the value ends */
  size_t bad;              /* where it went wrong */
  size_t wlen;             /* compact: the bytes written to d */
  size_t removed;          /* whitespace bytes between tokens */
  int nl;                  /* ... a run of it held '\n', '\r' or '\t' */
  unsigned nm;             /* members held */
  int overflow;            /* more than CK_MEMBERS_MAX of them */
  struct ck_member m[CK_MEMBERS_MAX];
};

/* The end of the run of whitespace at p; *nl set if it holds a byte
 * other than a space.  With SSE2 sixteen bytes a step. */
static inline const unsigned char *ws_run(const unsigned char *p,
                                          const unsigned char *e, int *nl)
{
#ifdef __SSE2__
  while (e - p >= 16) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i other = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\n')),
                     _mm_cmpeq_epi8(v, _mm_set1_epi8('\r'))),
        _mm_cmpeq_epi8(v, _mm_set1_epi8('\t')));
    unsigned o = (unsigned)_mm_movemask_epi8(other);
    unsigned ws = (unsigned)_mm_movemask_epi8(
        _mm_or_si128(other, _mm_cmpeq_epi8(v, _mm_set1_epi8(' '))));
    unsigned k = (unsigned)__builtin_ctz(~ws);  /* at most 16 */
    if (o & ((1u << k) - 1))
      *nl = 1;
    if (k < 16)
      return p + k;
    p += 16;
  }
#endif
  while (p < e && is_ws_byte(*p)) {
    if (*p != ' ')
      *nl = 1;
    p++;
  }
  return p;
}

static __attribute__((noinline))
const unsigned char *ws_run_long(const unsigned char *p,
                                 const unsigned char *e, int *nl)
{
  return ws_run(p, e, nl);
}

/* The same, the runs of a pretty-printed text first: one whitespace
 * byte, then up to eight spaces (the indentation after a newline, the
 * space after a colon), looked at in one word; longer runs out of line.
 * (Where whitespace is rare, ws_run inline costs less: no call.) */
static inline const unsigned char *ws_run_pretty(const unsigned char *p,
                                                 const unsigned char *e,
                                                 int *nl)
{
  if (e - p >= 10 && (*p == ' ' || *p == '\n')) {
    uint64_t w, x;
    unsigned k;
    memcpy(&w, p + 1, 8);
    x = w ^ UINT64_C(0x2020202020202020);   /* zero bytes: spaces */
    if (x) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
      k = (unsigned)__builtin_clzll(x) >> 3;  /* the first non-space */
#else
      k = (unsigned)__builtin_ctzll(x) >> 3;
#endif
      if (p[1 + k] > ' ') {
        if (*p == '\n')
          *nl = 1;
        return p + 1 + k;
      }
    }
  }
  return ws_run_long(p, e, nl);
}

/* Copy n bytes from src down to dst (dst <= src, maybe overlapping).
 * When the text written is not the text read (!inplace) and sixteen
 * bytes fit at both ends, a short run is copied in two fixed words. */
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

/* Skip the whitespace at p (if any): count it, and when compacting copy
 * the text before it. */
#define SKIP_WS()                                                      \
  do {                                                                 \
    if (p < e && *p <= ' ') {                                          \
      const unsigned char *ws_ = p;                                    \
      p = compact ? ws_run_pretty(p, e, &ck->nl) : ws_run(p, e, &ck->nl); \
      if (p != ws_) {                                                  \
        if (compact) {                                                 \
          size_t n_ = (size_t)(ws_ - mark);                            \
          copy_down(ck->d + ck->wlen, mark, n_,                        \
                    ck->dcap >= ck->wlen + 16 && e - mark >= 16 &&     \
                    ck->d != s);                                       \
          ck->wlen += n_;                                              \
          mark = p;                                                    \
        }                                                              \
        if (members == 1)                                              \
          ck->removed += (size_t)(p - ws_);                            \
      }                                                                \
    }                                                                  \
  } while (0)

/* The checker, always inlined so that each use gets only what it asks
 * for (constant flags):
 *   prefix   the value may be followed by anything: it stops at the
 *            end of the value (ck->end) instead of requiring the end of
 *            the text;
 *   compact  the text without the whitespace between its tokens is
 *            written to ck->d (ck->wlen bytes: complete once it returns
 *            0), whether or not a run held a newline (ck->nl);
 *   members  1: the top object's members are reported to ck->fn once
 *            the whole is valid, in the coordinates of the text written
 *            (compact and ck->nl: ck->d; otherwise the text read); 2:
 *            as they are found, in those of the text read.
 * One pass, no recursion; every byte looked at once.  Returns 0, or -1
 * with ck->bad. */
static inline __attribute__((always_inline))
int check(const char *json, size_t len, unsigned max_depth, struct ck *ck,
          const int prefix, const int compact, const int members)
{
  const unsigned char *s = (const unsigned char *)json, *p = s,
                      *e = s + len, *key = NULL, *kend = NULL, *val = NULL,
                      *mark = s;
  uint64_t objs[DEPTH_MAX / 64];  /* bit d: level d+1 is an object */
  unsigned depth = 0;
  int in_obj = 0;                 /* the innermost level is an object */
  size_t rm0 = 0, krm = 0;

  ck->wlen = ck->removed = 0;
  ck->nl = 0;
  ck->nm = 0;
  ck->overflow = 0;
  if (max_depth > DEPTH_MAX)
    max_depth = DEPTH_MAX;
  SKIP_WS();
value:
  if (p >= e)
    goto fail;
  switch (*p) {
  case '{':
  case '[': {
    int obj = *p == '{';
    if (depth >= max_depth)
      goto fail;
    if (obj)
      objs[depth / 64] |= UINT64_C(1) << (depth % 64);
    else
      objs[depth / 64] &= ~(UINT64_C(1) << (depth % 64));
    depth++;
    in_obj = obj;
    p++;
    SKIP_WS();
    if (p < e && *p == (obj ? '}' : ']')) {
      p++;
      goto pop;
    }
    if (obj)
      goto key;
    goto value;
  }
  case '"':
    p = check_string(p, e);
    break;
  case 't':
    p = e - p >= 4 && memcmp(p, "true", 4) == 0 ? p + 4 : NULL;
    break;
  case 'f':
    p = e - p >= 5 && memcmp(p, "false", 5) == 0 ? p + 5 : NULL;
    break;
  case 'n':
    p = e - p >= 4 && memcmp(p, "null", 4) == 0 ? p + 4 : NULL;
    break;
  default:
    p = check_number(p, e);
    break;
  }
  if (!p)
    goto fail_unknown;
after:
  if (members && val && depth == 1) { /* a member of the top object */
    if (members == 2) {
      ck->fn(ck->arg, (const char *)key + 1, (size_t)(kend - key) - 2,
             (size_t)(val - s), (size_t)(p - val));
    } else if (ck->nm < CK_MEMBERS_MAX) {
      struct ck_member *m = &ck->m[ck->nm++];
      m->key = key + 1;
      m->klen = (size_t)(kend - key) - 2;
      m->krm = krm;
      m->voff = (size_t)(val - s);
      m->vlen = (size_t)(p - val);
      m->rm0 = rm0;
      m->rm1 = ck->removed;
    } else {
      ck->overflow = 1;
    }
    val = NULL;
  }
  if (depth == 0) {
    if (prefix) {
      ck->end = (size_t)(p - s);
      goto done;
    }
    SKIP_WS();
    if (p != e)
      goto fail;
    goto done;
  }
  SKIP_WS();
  if (p >= e)
    goto fail;
  if (*p == ',') {
    p++;
    SKIP_WS();
    if (in_obj)
      goto key;
    goto value;
  }
  if (*p != (in_obj ? '}' : ']'))
    goto fail;
  p++;
pop:
  depth--;
  in_obj = depth && ((objs[(depth - 1) / 64] >> ((depth - 1) % 64)) & 1);
  goto after;
key:
  if (members && depth == 1) {
    key = p;
    krm = ck->removed;
  }
  if (p >= e || *p != '"' || !(p = check_string(p, e)))
    goto fail_unknown;
  if (members && depth == 1)
    kend = p;
  SKIP_WS();
  if (p >= e || *p != ':')
    goto fail;
  p++;
  SKIP_WS();
  if (members && depth == 1) {
    val = p;
    rm0 = ck->removed;
  }
  goto value;
done:
  if (compact) {                  /* the text after the last run */
    const unsigned char *stop = prefix ? s + ck->end : p;
    memmove(ck->d + ck->wlen, mark, (size_t)(stop - mark));
    ck->wlen += (size_t)(stop - mark);
  }
  if (members == 1 && !ck->overflow) {
    int moved = compact && ck->nl;
    for (unsigned i = 0; i < ck->nm; i++) {
      const struct ck_member *m = &ck->m[i];
      /* The key where it is now (moved down with the text). */
      ck->fn(ck->arg, moved ? (const char *)ck->d + (m->key - s) - m->krm
                            : (const char *)m->key, m->klen,
             moved ? m->voff - m->rm0 : m->voff,
             moved ? m->vlen - (m->rm1 - m->rm0) : m->vlen);
    }
  }
  return 0;
fail_unknown:
  ck->bad = len;                    /* somewhere in the last token */
  return -1;
fail:
  ck->bad = (size_t)(p - s);
  return -1;
}
#undef SKIP_WS

int twt_json_check(const char *json, size_t len, unsigned max_depth,
                   size_t *bad)
{
  struct ck ck;
  int rc = check(json, len, max_depth, &ck, 0, 0, 0);

  if (rc && bad)
    *bad = ck.bad;
  return rc;
}

int twt_json_check_ex(const char *json, size_t len, unsigned max_depth,
                      size_t *bad, twt_member_fn fn, void *arg)
{
  struct ck ck;
  int rc;

  if (!fn)
    return twt_json_check(json, len, max_depth, bad);
  ck.fn = fn;
  ck.arg = arg;
  rc = check(json, len, max_depth, &ck, 0, 0, 2);  /* reported as found */
  if (rc && bad)
    *bad = ck.bad;
  return rc;
}

int twt_json_check_prefix(const char *json, size_t len, unsigned max_depth,
                          size_t *end, int *spread, size_t *bad,
                          twt_member_fn fn, void *arg)
{
  struct ck ck;
  int rc;

  ck.fn = fn;
  ck.arg = arg;
  rc = fn ? check(json, len, max_depth, &ck, 1, 0, 2)
          : check(json, len, max_depth, &ck, 1, 0, 0);
  if (rc == 0) {
    *end = ck.end;
    *spread = ck.nl;
  } else if (bad)
    *bad = ck.bad;
  return rc;
}

/* ============================================= the streaming checker */

enum js_state {
  JS_KEY,                  /* a key (a string) expected (or "}") */
  JS_COLON,                /* ":" expected */
  JS_VALUE,                /* a value expected (or "]" first in one) */
  JS_AFTER,                /* "," or a closing bracket expected */
  JS_STR,                  /* in a string */
  JS_NUM,                  /* in a number */
  JS_LIT,                  /* in true, false or null */
  JS_DONE                  /* the whole read: whitespace only */
};

/* Number states: what was read last. */
enum { N_MINUS, N_ZERO, N_INT, N_DOT, N_FRAC, N_E, N_ESIGN, N_EXP };

void twt_jstream_init(twt_jstream *j, int member)
{
  memset(j, 0, sizeof *j);
  j->state = member ? JS_KEY : JS_VALUE;
  j->first = 1;
}

/* A value ended: what comes next. */
static void js_value_done(twt_jstream *j)
{
  j->state = j->depth ? JS_AFTER : JS_DONE;
  j->first = 0;
}

static int js_out(twt_jstream *j, const char *p, size_t n,
                  twt_jstream_out out, void *arg)
{
  j->written += n;
  return out ? out(arg, p, n) : 0;
}

/* The byte c in a string: 0 taken, -1 not valid there. */
static int js_string_byte(twt_jstream *j, unsigned c)
{
  if (j->u8) {                      /* a UTF-8 sequence's next byte */
    if (c < j->u8_lo || c > j->u8_hi)
      return -1;
    j->u8--;
    j->u8_lo = 0x80;
    j->u8_hi = 0xbf;
    return 0;
  }
  if (j->hex) {                     /* \uXXXX */
    unsigned v;
    if (c >= '0' && c <= '9')
      v = c - '0';
    else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
      v = (c | 0x20) - 'a' + 10;
    else
      return -1;
    j->uval = j->uval << 4 | v;
    if (--j->hex)
      return 0;
    if (j->need_low) {
      j->need_low = 0;
      return j->uval >= 0xdc00 && j->uval <= 0xdfff ? 0 : -1;
    }
    if (j->uval >= 0xdc00 && j->uval <= 0xdfff)
      return -1;                    /* a lone low surrogate */
    if (j->uval >= 0xd800 && j->uval <= 0xdbff)
      j->low_next = 2;              /* "\u" of the low one must follow */
    return 0;
  }
  if (j->low_next == 2) {
    if (c != '\\')
      return -1;
    j->low_next = 1;
    return 0;
  }
  if (j->low_next == 1) {
    if (c != 'u')
      return -1;
    j->low_next = 0;
    j->need_low = 1;
    j->hex = 4;
    j->uval = 0;
    return 0;
  }
  if (j->esc) {
    j->esc = 0;
    if (c == 'u') {
      j->hex = 4;
      j->uval = 0;
      return 0;
    }
    return memchr("\"\\/bfnrt", (int)c, 8) ? 0 : -1;
  }
  if (c == '\\') {
    j->esc = 1;
    return 0;
  }
  if (c == '"') {
    j->in_str = 0;
    return 0;
  }
  if (c < 0x20)
    return -1;
  if (c < 0x80)
    return 0;
  /* The first byte of a UTF-8 sequence (the checker's rules). */
  j->u8_lo = 0x80;
  j->u8_hi = 0xbf;
  if (c >= 0xc2 && c <= 0xdf) {
    j->u8 = 1;
  } else if (c >= 0xe0 && c <= 0xef) {
    j->u8 = 2;
    if (c == 0xe0)
      j->u8_lo = 0xa0;              /* not overlong */
    else if (c == 0xed)
      j->u8_hi = 0x9f;              /* no surrogate */
  } else if (c >= 0xf0 && c <= 0xf4) {
    j->u8 = 3;
    if (c == 0xf0)
      j->u8_lo = 0x90;
    else if (c == 0xf4)
      j->u8_hi = 0x8f;              /* up to U+10FFFF */
  } else {
    return -1;
  }
  return 0;
}

/* The byte c in a number: 1 taken, 0 it ends the number (not taken),
 * -1 not valid. */
static int js_number_byte(twt_jstream *j, unsigned c)
{
  int digit = c >= '0' && c <= '9';

  switch (j->num) {
  case N_MINUS:
    if (!digit)
      return -1;
    j->num = c == '0' ? N_ZERO : N_INT;
    return 1;
  case N_ZERO:
  case N_INT:
    if (digit && j->num == N_INT)
      return 1;
    if (digit)
      return -1;                    /* a leading zero */
    if (c == '.') {
      j->num = N_DOT;
      return 1;
    }
    if (c == 'e' || c == 'E') {
      j->num = N_E;
      return 1;
    }
    return 0;
  case N_DOT:
    if (!digit)
      return -1;
    j->num = N_FRAC;
    return 1;
  case N_FRAC:
    if (digit)
      return 1;
    if (c == 'e' || c == 'E') {
      j->num = N_E;
      return 1;
    }
    return 0;
  case N_E:
    if (c == '+' || c == '-') {
      j->num = N_ESIGN;
      return 1;
    }
    /* fall through */
  case N_ESIGN:
    if (!digit)
      return -1;
    j->num = N_EXP;
    return 1;
  default:                          /* N_EXP */
    return digit ? 1 : 0;
  }
}

/* A container begins (c: '{' or '['). */
static int js_open(twt_jstream *j, unsigned c)
{
  if (j->depth >= TWT_JSTREAM_DEPTH)
    return -1;
  if (c == '{')
    j->obj[j->depth / 8] |= (unsigned char)(1u << j->depth % 8);
  else
    j->obj[j->depth / 8] &= (unsigned char)~(1u << j->depth % 8);
  j->depth++;
  j->first = 1;
  j->state = c == '{' ? JS_KEY : JS_VALUE;
  return 0;
}

static int js_in_object(const twt_jstream *j)
{
  return j->depth && (j->obj[(j->depth - 1) / 8] >> (j->depth - 1) % 8 & 1);
}

int twt_jstream_feed(twt_jstream *j, const char *p, size_t n,
                     twt_jstream_out out, void *arg)
{
  static const char *const lits[3] = { "true", "false", "null" };
  size_t i = 0, from = 0;           /* p[from..i): to write */
  int rc;

#define FLUSH()                                                         \
  do {                                                                  \
    if (i > from && js_out(j, p + from, i - from, out, arg) != 0)       \
      return -2;                                                        \
  } while (0)
#define SKIP()                                                          \
  do {                                                                  \
    FLUSH();                                                            \
    from = i + 1;                                                       \
  } while (0)

  if (j->bad)
    return -1;
  while (i < n) {
    unsigned c = (unsigned char)p[i];
    int ws = c == ' ' || c == '\t' || c == '\n' || c == '\r';

    j->off++;
    switch (j->state) {
    case JS_STR:
      if (js_string_byte(j, c) != 0)
        goto bad;
      if (!j->in_str) {
        if (j->key) {
          j->key = 0;
          j->state = JS_COLON;
        } else {
          js_value_done(j);
        }
      }
      i++;
      continue;
    case JS_NUM:
      if ((rc = js_number_byte(j, c)) < 0)
        goto bad;
      if (rc) {
        i++;
        continue;
      }
      if (j->num != N_ZERO && j->num != N_INT && j->num != N_FRAC &&
          j->num != N_EXP)
        goto bad;
      js_value_done(j);
      j->off--;
      continue;                     /* c again, after the number */
    case JS_LIT:
      if (c != (unsigned char)lits[j->lit][j->lit_i])
        goto bad;
      if (lits[j->lit][++j->lit_i] == '\0')
        js_value_done(j);
      i++;
      continue;
    default:
      break;
    }
    if (ws) {
      SKIP();
      i++;
      continue;
    }
    switch (j->state) {
    case JS_KEY:
      if (c == '}' && j->first && j->depth) {
        j->depth--;
        js_value_done(j);
        break;
      }
      if (c != '"')
        goto bad;
      j->state = JS_STR;
      j->in_str = 1;
      j->key = 1;
      break;
    case JS_COLON:
      if (c != ':')
        goto bad;
      j->state = JS_VALUE;
      break;
    case JS_VALUE:
      if (c == ']' && j->first && j->depth && !js_in_object(j)) {
        j->depth--;
        js_value_done(j);
        break;
      }
      if (c == '{' || c == '[') {
        if (js_open(j, c) != 0)
          goto bad;
      } else if (c == '"') {
        j->state = JS_STR;
        j->in_str = 1;
      } else if (c == '-' || (c >= '0' && c <= '9')) {
        j->state = JS_NUM;
        j->num = c == '-' ? N_MINUS : c == '0' ? N_ZERO : N_INT;
      } else if (c == 't' || c == 'f' || c == 'n') {
        j->state = JS_LIT;
        j->lit = c == 't' ? 0 : c == 'f' ? 1 : 2;
        j->lit_i = 1;
      } else {
        goto bad;
      }
      break;
    case JS_AFTER:
      if (c == ',') {
        j->state = js_in_object(j) ? JS_KEY : JS_VALUE;
        j->first = 0;
      } else if (c == (js_in_object(j) ? '}' : ']')) {
        j->depth--;
        js_value_done(j);
      } else {
        goto bad;
      }
      break;
    default:                        /* JS_DONE: only whitespace */
      goto bad;
    }
    i++;
  }
  FLUSH();
  return 0;
bad:
  FLUSH();
  j->bad = 1;
  return -1;
#undef FLUSH
#undef SKIP
}

int twt_jstream_end(twt_jstream *j)
{
  if (j->bad)
    return -1;
  if (j->state == JS_NUM && j->depth == 0 &&
      (j->num == N_ZERO || j->num == N_INT || j->num == N_FRAC ||
       j->num == N_EXP))
    j->state = JS_DONE;
  return j->state == JS_DONE ? 0 : -1;
}

/* ===================================================== the scanner */

enum state {
  ST_START,                /* before the document: BOM, whitespace */
  ST_BOM,                  /* inside a byte-order mark */
  ST_KEY,                  /* object: a key (or "}") expected */
  ST_KEYSTR,               /* ... inside the key */
  ST_COLON,                /* ... ":" expected */
  ST_VALUE,                /* ... the value expected */
  ST_OBJNEXT,              /* ... "," or "}" expected */
  ST_EVENTS,               /* the events array: an element, ",", "]" */
  ST_RECORD,               /* inside a record */
  ST_SKIP,                 /* inside a value skipped (or kept) */
  ST_END,                  /* after the document */
  ST_STOP                  /* after what made no sense: ignored */
};

struct twt_scan {
  enum state state;
  uint64_t off;            /* offset of the current feed's first byte */
  size_t max_record, max_members;
  struct twt_scan_info info;
  int err;
  char msg[200];

  int first;               /* no member / element yet in the container */
  int need_sep;            /* events: an element was read, "," expected */
  unsigned bom_i;          /* bytes of the BOM seen */
  uint64_t after_end;      /* whitespace bytes after the document */
  int after_nl;            /* ... of which newlines */

  /* The key being read. */
  char key[KEY_KEEP];
  size_t key_len;
  int key_esc, key_odd;    /* in an escape; escaped or too long */
  uint64_t key_off;        /* its offset (its opening quote) */
  int is_events;

  /* A value skipped: strings, escapes, nesting counted. */
  uint64_t sk_depth;
  int sk_str, sk_esc, sk_scalar;
  int sk_keep;             /* keep it in the members */
  enum state sk_ret;       /* where to go after it */
  uint64_t sk_off;         /* its offset */

  /* The record being scanned. */
  uint64_t r_depth;
  int r_str, r_esc, r_ws;
  uint64_t r_off;
  size_t r_start;          /* in the current feed, when not yet copied */
  int r_inbuf;             /* its start is in buf */
  char *buf;
  size_t blen, bcap;

  int members_only;        /* records skipped, not checked nor held */
  uint64_t elements;       /* elements of the events array begun */
  uint64_t first_skip;     /* the first one that is no object (from 1) */
  char first_skip_c;       /* ... its first byte */

  twt_member_fn on_member; /* each record's members, as checked */
  void *on_member_arg;

  /* The members kept. */
  char *mem;
  size_t mem_len, mem_cap, mem_start, mem_vstart;
  int mem_over;            /* the current member is not kept */
  uint64_t sk_end;         /* where the value skipped ended */
  struct twt_scan_big big[TWT_SCAN_BIG_MAX]; /* members too big to keep */
};

/* Bytes that matter in a record: outside strings (1) and inside (2). */
static unsigned char cls[256];
static int cls_ready;

static void init_cls(void)
{
  if (cls_ready)
    return;
  cls['"'] = 1 | 2;
  cls['\\'] = 2;
  cls['{'] = cls['}'] = cls['['] = cls[']'] = 1;
  cls['\n'] = cls['\r'] = cls['\t'] = 1;
  cls_ready = 1;
}

twt_scan *twt_scan_new(size_t max_record, size_t max_members)
{
  twt_scan *s = calloc(1, sizeof *s);

  if (!s)
    return NULL;
  init_cls();
  s->max_record = max_record;
  s->max_members = max_members;
  s->state = ST_START;
  s->info.strict = 1;
  return s;
}

void twt_scan_members_only(twt_scan *s)
{
  s->members_only = 1;
}

void twt_scan_on_member(twt_scan *s, twt_member_fn fn, void *arg)
{
  s->on_member = fn;
  s->on_member_arg = arg;
}

void twt_scan_free(twt_scan *s)
{
  if (!s)
    return;
  free(s->buf);
  free(s->mem);
  free(s);
}

const struct twt_scan_info *twt_scan_info(const twt_scan *s)
{
  return &s->info;
}

const char *twt_scan_error(const twt_scan *s)
{
  return s->msg;
}

__attribute__((format(printf, 3, 4)))
static int fail(twt_scan *s, int rc, const char *fmt, ...)
{
  va_list ap;

  if (s->err)
    return s->err;
  s->err = rc;
  va_start(ap, fmt);
  vsnprintf(s->msg, sizeof s->msg, fmt, ap);
  va_end(ap);
  return rc;
}

/* A printable form of byte c, for messages. */
static const char *show(int c, char *out)
{
  if (c > 0x20 && c < 0x7f && c != '\'')
    snprintf(out, 8, "'%c'", c);
  else
    snprintf(out, 8, "0x%02x", (unsigned)(c & 0xff));
  return out;
}

/* The text stopped making sense at offset, where want was expected.
 * Before any record that is an error: not a trace.  After, the rest is
 * ignored like a cut.  Returns 0 or the error. */
/* The member being read is not kept: the members end before it. */
static void forget_member(twt_scan *s)
{
  s->mem_len = s->mem_start;
  s->info.members_len = s->mem_len;
}

/* The reading ends (cut or stopped) in state st: a member being read is
 * not kept. */
static void drop_partial_member(twt_scan *s, int st)
{
  if (st == ST_KEYSTR || st == ST_COLON || st == ST_VALUE ||
      (st == ST_SKIP && s->sk_keep))
    forget_member(s);
}

static int stop(twt_scan *s, uint64_t offset, int c, const char *want)
{
  char b[8];

  drop_partial_member(s, s->state);
  s->info.strict = 0;
  if (s->info.records == 0)
    return fail(s, TWT_SCAN_ENOTTRACE, "not a trace: byte %" PRIu64
                ": %s expected, found %s", offset, want,
                c < 0 ? "the end" : show(c, b));
  s->info.stopped = 1;
  s->info.stop_offset = offset;
  snprintf(s->info.stop_why, sizeof s->info.stop_why, "%s expected, "
           "found %s", want, c < 0 ? "the end" : show(c, b));
  s->state = ST_STOP;
  return 0;
}

/* Append p[0..n) to the members kept, unless over max_members (then the
 * member is dropped). */
static int mem_add(twt_scan *s, const char *p, size_t n)
{
  if (s->mem_over || n == 0)
    return 0;
  if (s->mem_len + n > s->max_members) {
    s->mem_over = 1;
    forget_member(s);
    return 0;
  }
  if (s->mem_len + n > s->mem_cap) {
    size_t cap = s->mem_cap ? s->mem_cap : 1024;
    char *q;
    while (cap < s->mem_len + n)
      cap *= 2;
    if (cap > s->max_members)
      cap = s->max_members;
    if (!(q = realloc(s->mem, cap)))
      return fail(s, -ENOMEM, "out of memory");
    s->mem = q;
    s->mem_cap = cap;
  }
  memcpy(s->mem + s->mem_len, p, n);
  s->mem_len += n;
  s->info.members = s->mem;
  s->info.members_len = s->mem_len;
  return 0;
}

/* Append p[0..n) to the record buffer. */
static int buf_add(twt_scan *s, const char *p, size_t n)
{
  if (n > s->max_record - s->blen)
    return fail(s, TWT_SCAN_ETOOBIG, "byte %" PRIu64 ": a record of more "
                "than %zu bytes; raise --max-line to read it", s->r_off,
                s->max_record);
  if (s->blen + n > s->bcap) {
    size_t cap = s->bcap ? s->bcap : 4096;
    char *q;
    while (cap < s->blen + n)
      cap = cap > SIZE_MAX / 2 ? s->blen + n : cap * 2;
    if (!(q = realloc(s->buf, cap)))
      return fail(s, -ENOMEM, "out of memory for a record of %zu bytes",
                  s->blen + n);
    s->buf = q;
    s->bcap = cap;
  }
  memcpy(s->buf + s->blen, p, n);
  s->blen += n;
  return 0;
}

size_t twt_json_compact(char *d, const char *text, size_t n)
{
  const unsigned char *u = (const unsigned char *)text;
  size_t w = 0, i = 0;

  while (i < n) {
    char c = text[i];
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
      i++;
      continue;
    }
    if (c != '"') {
      d[w++] = c;
      i++;
      continue;
    }
    /* A string: copied whole, its end found 8 bytes at a time. */
    {
      size_t j = i + 1;
      for (;;) {
        j += to_quote(u + j, u + n);
        if (j >= n)
          break;
        if (text[j] == '"') {
          j++;
          break;
        }
        j += 2;                     /* an escape and the byte escaped */
      }
      if (j > n)
        j = n;
      memmove(d + w, text + i, j - i);
      w += j - i;
      i = j;
    }
  }
  return w;
}

/* Make room for need bytes in the record buffer (its contents are not
 * kept).  0, or -1 when out of memory. */
static int buf_room(twt_scan *s, size_t need)
{
  char *q;

  if (need <= s->bcap)
    return 0;
  if (!(q = realloc(s->buf, need)))
    return -1;
  s->buf = q;
  s->bcap = need;
  return 0;
}

/* Check the record text[0..n) (prefix: the record begins text, and may
 * be followed by anything) in one pass: valid, where it ends, its
 * members for on_member, and its text without the whitespace between
 * its tokens in s->buf when a newline, CR or tab was among it.  Returns
 * 0 with *out, *outlen (and *end for prefix), or -1 with *bad. */
static int record_check(twt_scan *s, const char *text, size_t n, int prefix,
                        const char **out, size_t *outlen, size_t *end,
                        size_t *bad)
{
  struct ck ck;
  int rc;

  ck.fn = s->on_member;
  ck.arg = s->on_member_arg;
  ck.d = (unsigned char *)s->buf;
  ck.dcap = s->bcap;
  if (text == s->buf) {
    /* Gathered into buf (a record over two chunks): compacting in place
     * would lose the text as read, so check first, and compact only
     * when it spreads over lines; then find its members again. */
    if (s->on_member)
      s->on_member(s->on_member_arg, NULL, 0, 0, 0);
    rc = s->on_member ? check(text, n, TWT_RECORD_DEPTH, &ck, 0, 0, 2)
                      : check(text, n, TWT_RECORD_DEPTH, &ck, 0, 0, 0);
    if (rc != 0) {
      *bad = ck.bad;
      return -1;
    }
    *out = text;
    *outlen = *end = n;
    if (ck.nl) {
      *outlen = twt_json_compact(s->buf, text, n);
      if (s->on_member) {
        s->on_member(s->on_member_arg, NULL, 0, 0, 0);
        (void)check(*out, *outlen, TWT_RECORD_DEPTH, &ck, 0, 0, 2);
      }
    }
    return 0;
  }
  if (s->on_member) {
    s->on_member(s->on_member_arg, NULL, 0, 0, 0);
    rc = prefix ? check(text, n, TWT_RECORD_DEPTH, &ck, 1, 1, 1)
                : check(text, n, TWT_RECORD_DEPTH, &ck, 0, 1, 1);
  } else {
    rc = prefix ? check(text, n, TWT_RECORD_DEPTH, &ck, 1, 1, 0)
                : check(text, n, TWT_RECORD_DEPTH, &ck, 0, 1, 0);
  }
  if (rc != 0) {
    *bad = ck.bad;
    return -1;
  }
  *end = prefix ? ck.end : n;
  if (ck.nl) {
    *out = s->buf;
    *outlen = ck.wlen;
  } else {
    *out = text;
    *outlen = *end;
  }
  if (ck.overflow) {                /* many members: found again */
    s->on_member(s->on_member_arg, NULL, 0, 0, 0);
    (void)check(*out, *outlen, TWT_RECORD_DEPTH, &ck, 0, 0, 2);
  }
  return 0;
}

/* Yield the record text[0..n) (checked), which began at offset. */
static void record_yield(twt_scan *s, const char *text, size_t n,
                         uint64_t offset, twt_scan_rec *rec)
{
  memset(rec, 0, sizeof *rec);
  rec->offset = offset;
  s->info.records++;
  rec->text = text;
  rec->len = n;
  s->state = ST_EVENTS;
  s->need_sep = 1;
}

/* A record's text is complete: check it, and yield it or what dropped
 * it. */
static int record_done(twt_scan *s, const char *text, size_t n,
                       twt_scan_rec *rec)
{
  const char *out;
  size_t outlen, end, bad;

  /* Compacted into buf: in place when the text is there already. */
  if (text != s->buf && buf_room(s, n) != 0)
    return fail(s, -ENOMEM, "out of memory");
  if (record_check(s, text, n, 0, &out, &outlen, &end, &bad) == 0) {
    record_yield(s, out, outlen, s->r_off, rec);
    return 0;
  }
  memset(rec, 0, sizeof *rec);
  rec->offset = s->r_off;
  if (s->info.invalid++ == 0)
    s->info.first_invalid = s->r_off;
  s->info.invalid_bytes += n;
  s->info.strict = 0;
  rec->dropped = 1;
  rec->len = n;
  s->state = ST_EVENTS;
  s->need_sep = 1;
  return 0;
}

/* A record begins at p[0] and the text read goes on to p[n]: if the
 * record ends there and is valid, yield it at once (one pass: checked,
 * its end found, compacted); 1 and its length in *used.  0 otherwise
 * (it goes on past p[n], is invalid, or longer than max_record): the
 * byte-by-byte path then takes it. */
static int record_fast(twt_scan *s, const char *p, size_t n, uint64_t at,
                       twt_scan_rec *rec, size_t *used)
{
  const char *out;
  size_t outlen, end, bad;

  if (n > s->max_record)
    n = s->max_record;
  if (buf_room(s, n) != 0 ||
      record_check(s, p, n, 1, &out, &outlen, &end, &bad) != 0)
    return 0;
  record_yield(s, out, outlen, at, rec);
  *used = end;
  return 1;
}

/* Scan inside a record from p[i]; returns the new i (n: not over). */
static size_t record_scan(twt_scan *s, const char *p, size_t i, size_t n,
                          int *over)
{
  const unsigned char *u = (const unsigned char *)p;

  *over = 0;
  while (i < n) {
    if (s->r_esc) {
      s->r_esc = 0;
      i++;
      continue;
    }
    if (s->r_str) {
      i += to_quote(u + i, u + n);
      if (i == n)
        break;
      if (u[i] == '"')
        s->r_str = 0;
      else
        s->r_esc = 1;
      i++;
      continue;
    }
    while (i < n && !(cls[u[i]] & 1))
      i++;
    if (i == n)
      break;
    switch (u[i++]) {
    case '"':
      s->r_str = 1;
      break;
    case '{':
    case '[':
      s->r_depth++;
      break;
    case '}':
    case ']':
      if (--s->r_depth == 0) {
        *over = 1;
        return i;
      }
      break;
    default:                        /* newline, CR, tab */
      s->r_ws = 1;
      break;
    }
  }
  return i;
}

/* Scan a skipped value from p[i]; returns the new i; *over when it
 * ended (the byte that ends a number or literal is not used). */
static size_t skip_scan(twt_scan *s, const char *p, size_t i, size_t n,
                        int *over)
{
  *over = 0;
  while (i < n) {
    char c = p[i];
    if (s->sk_str) {
      i++;
      if (s->sk_esc)
        s->sk_esc = 0;
      else if (c == '\\')
        s->sk_esc = 1;
      else if (c == '"') {
        s->sk_str = 0;
        if (s->sk_depth == 0) {
          *over = 1;
          return i;
        }
      }
      continue;
    }
    if (s->sk_scalar) {
      if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
          (c >= 'A' && c <= 'Z') || c == '.' || c == '+' || c == '-') {
        i++;
        continue;
      }
      *over = 1;
      return i;
    }
    i++;
    if (c == '"')
      s->sk_str = 1;
    else if (c == '{' || c == '[')
      s->sk_depth++;
    else if ((c == '}' || c == ']') && --s->sk_depth == 0) {
      *over = 1;
      return i;
    }
  }
  return i;
}

/* Begin skipping the value that begins with c.  0, or not a value. */
static int skip_begin(twt_scan *s, char c, uint64_t offset, int keep,
                      enum state ret)
{
  s->sk_depth = 0;                  /* the scan takes the first byte */
  s->sk_str = s->sk_esc = s->sk_scalar = 0;
  if (c == '"' || c == '{' || c == '[')
    ;
  else if (c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' ||
           c == 'n')
    s->sk_scalar = 1;
  else
    return -1;
  s->sk_keep = keep;
  s->sk_ret = ret;
  s->sk_off = offset;
  s->state = ST_SKIP;
  return 0;
}

static int is_ws(char c)
{
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* The document's last bracket was read. */
static void doc_done(twt_scan *s)
{
  s->info.done = 1;
  s->state = ST_END;
}

/* A skipped value ended: a member kept is checked. */
static int skip_done(twt_scan *s)
{
  s->state = s->sk_ret;
  if (!s->sk_keep)
    return 0;
  if (s->mem_over) {
    /* Too big to keep: where it is, for a command to copy it from the
     * file (twt_jstream checks it as it goes). */
    s->info.strict = 0;
    if (s->info.nbig < TWT_SCAN_BIG_MAX) {
      s->big[s->info.nbig].off = s->key_off;
      s->big[s->info.nbig].len = s->sk_end - s->key_off;
      s->info.nbig++;
      s->info.big = s->big;
    } else {
      s->info.members_dropped++;
    }
    return 0;
  }
  /* The key too: a member kept is written back as it is, between the
   * comma and the colon the scanner added. */
  if (twt_json_check(s->mem + s->mem_start + 1,
                     s->mem_vstart - 1 - (s->mem_start + 1), 0, NULL) != 0) {
    forget_member(s);
    return stop(s, s->key_off, '"', "a valid JSON string (a key)");
  }
  if (twt_json_check(s->mem + s->mem_vstart, s->mem_len - s->mem_vstart,
                     DEPTH_MAX, NULL) != 0) {
    forget_member(s);
    return stop(s, s->sk_off, s->mem[s->mem_vstart] & 0xff,
                "a valid JSON value");
  }
  return 0;
}

ptrdiff_t twt_scan_feed(twt_scan *s, const char *p, size_t n,
                        twt_scan_rec *rec, int *ready)
{
  static const unsigned char bom[3] = { 0xef, 0xbb, 0xbf };
  size_t i = 0;
  int rc, over;

  *ready = 0;
  if (s->err)
    return s->err;
  if (s->state == ST_RECORD) {      /* a record continued from before */
    s->r_start = 0;
  }
  while (i < n) {
    char c = p[i];
    uint64_t at = s->off + i;

    switch (s->state) {
    case ST_START:
      if (at == 0 && (unsigned char)c == bom[0]) {
        s->state = ST_BOM;
        s->bom_i = 1;
        s->info.bom = 1;
        s->info.strict = 0;
        i++;
        break;
      }
      if (is_ws(c)) {
        i++;
        break;
      }
      if (c == '[') {
        s->info.events_found = 1;
        s->state = ST_EVENTS;
        s->first = 1;
        s->need_sep = 0;
      } else if (c == '{') {
        s->info.object_form = 1;
        s->state = ST_KEY;
        s->first = 1;
      } else {
        rc = fail(s, TWT_SCAN_ENOTTRACE, "not a trace: byte %" PRIu64 ": "
                  "a JSON array of events or an object with traceEvents "
                  "expected, found %s", at, show(c, (char[8]){ 0 }));
        return rc;
      }
      i++;
      break;
    case ST_BOM:
      if ((unsigned char)c != bom[s->bom_i])
        return fail(s, TWT_SCAN_ENOTTRACE, "not a trace: byte %" PRIu64
                    ": not UTF-8 text", at);
      if (++s->bom_i == 3)
        s->state = ST_START;
      i++;
      break;
    case ST_KEY:
      if (is_ws(c)) {
        i++;
        break;
      }
      if (c == '}') {
        if (!s->first) {
          s->info.stray_commas++;
          s->info.strict = 0;
        }
        doc_done(s);
        i++;
        break;
      }
      if (c != '"') {
        if ((rc = stop(s, at, c, "a key")) != 0)
          return rc;
        break;
      }
      s->key_len = 0;
      s->key_esc = s->key_odd = 0;
      s->key_off = at;
      s->mem_start = s->mem_len;
      s->mem_over = 0;
      if ((rc = mem_add(s, ",\"", 2)) != 0)
        return rc;
      s->state = ST_KEYSTR;
      i++;
      break;
    case ST_KEYSTR: {
      size_t j = i;
      for (; j < n; j++) {
        char k = p[j];
        if (s->key_esc) {
          s->key_esc = 0;
          continue;
        }
        if (k == '\\') {
          s->key_esc = s->key_odd = 1;
          continue;
        }
        if (k == '"')
          break;
        if (s->key_len < KEY_KEEP)
          s->key[s->key_len++] = k;
        else
          s->key_odd = 1;
      }
      if ((rc = mem_add(s, p + i, j < n ? j + 1 - i : j - i)) != 0)
        return rc;
      if (j == n) {
        i = n;
        break;
      }
      i = j + 1;
      s->is_events = !s->key_odd && s->key_len == 11 &&
                     memcmp(s->key, "traceEvents", 11) == 0;
      if (s->is_events)
        forget_member(s);           /* not a member kept */
      s->state = ST_COLON;
      break;
    }
    case ST_COLON:
      if (is_ws(c)) {
        i++;
        break;
      }
      if (c != ':') {
        if ((rc = stop(s, at, c, "':'")) != 0)
          return rc;
        break;
      }
      if (!s->is_events && (rc = mem_add(s, ":", 1)) != 0)
        return rc;
      s->mem_vstart = s->mem_len;
      s->state = ST_VALUE;
      i++;
      break;
    case ST_VALUE:
      if (is_ws(c)) {
        i++;
        break;
      }
      if (s->is_events) {
        if (c != '[') {
          if ((rc = stop(s, at, c, "the array of traceEvents")) != 0)
            return rc;
          break;
        }
        s->info.events_found = 1;
        s->info.members_before = s->mem_len;
        s->info.events_at = at;
        s->state = ST_EVENTS;
        s->first = 1;
        s->need_sep = 0;
        i++;
        break;
      }
      if (skip_begin(s, c, at, 1, ST_OBJNEXT) != 0) {
        if ((rc = stop(s, at, c, "a value")) != 0)
          return rc;
        break;
      }
      break;                        /* the first byte is taken in ST_SKIP */
    case ST_OBJNEXT:
      if (is_ws(c)) {
        i++;
        break;
      }
      if (c == ',') {
        s->first = 0;
        s->state = ST_KEY;
      } else if (c == '}') {
        doc_done(s);
      } else if ((rc = stop(s, at, c, "',' or '}'")) != 0) {
        return rc;
      } else {
        break;
      }
      i++;
      break;
    case ST_EVENTS:
      if (is_ws(c)) {               /* the run at once (pretty-printed:
                                       a newline and indentation) */
        for (i++; i < n && is_ws(p[i]); i++)
          continue;
        break;
      }
      if (c == ']') {
        if (!s->first && !s->need_sep) {  /* a trailing comma */
          s->info.stray_commas++;
          s->info.strict = 0;
        }
        s->info.events_end = at;
        s->info.events_ended = 1;
        if (s->info.object_form) {
          s->state = ST_OBJNEXT;
        } else {
          doc_done(s);
        }
        i++;
        break;
      }
      if (c == ',') {
        if (!s->need_sep) {
          s->info.stray_commas++;
          s->info.strict = 0;
        }
        s->need_sep = 0;
        s->first = 0;
        i++;
        break;
      }
      if (s->need_sep)
        s->info.strict = 0;         /* no comma between two elements */
      s->first = 0;
      s->elements++;
      if (c == '{') {
        size_t used;
        if (!s->members_only &&
            record_fast(s, p + i, n - i, at, rec, &used)) {
          *ready = 1;
          i += used;
          s->off += i;
          return (ptrdiff_t)i;
        }
        s->state = ST_RECORD;
        s->r_depth = 1;
        s->r_str = s->r_esc = s->r_ws = 0;
        s->r_off = at;
        s->r_start = i;
        s->r_inbuf = 0;
        s->blen = 0;
        i++;
        break;
      }
      if (skip_begin(s, c, at, 0, ST_EVENTS) != 0) {
        if ((rc = stop(s, at, c, "an event (an object)")) != 0)
          return rc;
        break;
      }
      if (s->info.skipped++ == 0) {
        s->first_skip = s->elements;
        s->first_skip_c = c;
      }
      s->info.strict = 0;           /* not checked */
      break;
    case ST_RECORD: {
      size_t j = record_scan(s, p, i, n, &over);
      if (!over) {
        i = n;
        break;
      }
      if (s->members_only) {        /* only where it ends matters */
        s->state = ST_EVENTS;
        s->need_sep = 1;
        s->info.records++;
        i = j;
        break;
      }
      if (s->r_inbuf) {
        if ((rc = buf_add(s, p, j)) != 0)
          return rc;
        rc = record_done(s, s->buf, s->blen, rec);
      } else {
        if (j - s->r_start > s->max_record)
          return fail(s, TWT_SCAN_ETOOBIG, "byte %" PRIu64 ": a record "
                      "of more than %zu bytes; raise --max-line to read "
                      "it", s->r_off, s->max_record);
        rc = record_done(s, p + s->r_start, j - s->r_start, rec);
      }
      if (rc != 0)
        return rc;
      *ready = 1;
      s->off += j;
      return (ptrdiff_t)j;
    }
    case ST_SKIP: {
      size_t j = skip_scan(s, p, i, n, &over);
      if (s->sk_keep && (rc = mem_add(s, p + i, j - i)) != 0)
        return rc;
      i = j;
      s->sk_end = s->off + j;
      if (over && (rc = skip_done(s)) != 0)
        return rc;
      break;
    }
    case ST_END:
      if (is_ws(c)) {
        s->after_end++;
        s->after_nl += c == '\n';
        if (s->after_end > 1 || c != '\n')
          s->info.strict = 0;
        i++;
        break;
      }
      s->info.strict = 0;           /* bytes after the document */
      s->info.stopped = 1;
      s->info.stop_offset = at;
      snprintf(s->info.stop_why, sizeof s->info.stop_why,
               "bytes after the end of the document");
      s->state = ST_STOP;
      break;
    case ST_STOP:
      i = n;
      break;
    }
  }
  /* The feed ends inside a record: keep what it holds. */
  if (s->state == ST_RECORD && !s->members_only) {
    size_t from = s->r_inbuf ? 0 : s->r_start;
    if ((rc = buf_add(s, p + from, n - from)) != 0)
      return rc;
    s->r_inbuf = 1;
  }
  s->off += n;
  return (ptrdiff_t)n;
}

int twt_scan_end(twt_scan *s)
{
  struct twt_scan_info *in = &s->info;

  if (s->err)
    return s->err;
  switch (s->state) {
  case ST_START:
  case ST_BOM:
    return fail(s, TWT_SCAN_ENOTTRACE, "%s: not a trace",
                s->off ? "only whitespace" : "empty");
  case ST_END:
    break;
  case ST_STOP:
    break;
  case ST_SKIP:
    if (s->sk_scalar && s->sk_ret == ST_EVENTS) {
      /* A number ends with the data: still cut. */
    }
    /* fall through */
  default:
    drop_partial_member(s, s->state);
    if (s->state == ST_RECORD) {
      if (in->invalid++ == 0)
        in->first_invalid = s->r_off;
      in->invalid_bytes += s->blen;
    }
    in->cut = 1;
    in->strict = 0;
    in->stop_offset = s->off;
    snprintf(in->stop_why, sizeof in->stop_why, "the data ended inside "
             "the document");
    break;
  }
  if (in->object_form && !in->events_found)
    return fail(s, TWT_SCAN_ENOTTRACE, "not a trace: a JSON object "
                "without traceEvents%s (byte %" PRIu64 ")",
                in->cut ? ", cut before it" : "", s->off);
  if (in->records == 0 && in->invalid == 0 && in->skipped > 0) {
    char c = s->first_skip_c;
    return fail(s, TWT_SCAN_ENOTTRACE, "not a trace: element %" PRIu64
                " is %s, not an event object (none of its %" PRIu64
                " elements is)", s->first_skip,
                c == '[' ? "an array" : c == '"' ? "a string" :
                c == 't' || c == 'f' ? "a boolean" : c == 'n' ? "null" :
                "a number", in->skipped);
  }
  return 0;
}
