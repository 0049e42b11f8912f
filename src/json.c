/* json.c -- the one JSON grammar of the project (see json.h)
 *
 * The writer checks a raw JSON argument (tw_arg_json) with it
 * (tw__json_validate), and the tools check every record and member they
 * read with it (tools/reader.c, tools/jsonscan.c): what the writer
 * accepts and what the tools accept can never drift apart.  One checker,
 * check(), always inlined so that each mode gets only what it asks for;
 * its scalar tokens in json_token.h, which the tools' shape cache
 * (json_shape.c) reads values with too; one UTF-8 rule
 * (tw__utf8_sequence, json.h; the streaming checker keeps it a byte at a
 * time, tested equal); no allocation, no locale, no printf:
 * async-signal-safe, as the formatter that calls it from the crash hook
 * must be.
 */
#include "internal.h"     /* config.h first; TW_MAX_JSON_DEPTH, TW_EJSON */
#include "json.h"
#include "json_token.h"

#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
# include <emmintrin.h>
#endif

#define DEPTH_MAX TW__JSON_DEPTH_MAX
#define ONES  TW__JSON_ONES
#define HIGHS TW__JSON_HIGHS
#define HAS_BYTE(v, b) TW__JSON_HAS_BYTE(v, b)

/* ===================================================== the checker */

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

/* (json_token.h) */
const unsigned char *tw__json_string_slow(const unsigned char *p,
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
      int k = tw__utf8_sequence(p, (size_t)(e - p));
      if (k <= 0)
        return NULL;
      p += k;
    }
  }
  return NULL;
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
  tw__json_member_fn fn;        /* the top object's members (or NULL) */
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
  case 'f':
  case 'n':
    p = check_literal(p, e);
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
  /* A comma right after the value first (the library's layout, and
   * most of what other programs write, has no whitespace there). */
  if (p < e && *p == ',')
    goto comma;
  SKIP_WS();
  if (p >= e)
    goto fail;
  if (*p == ',') {
comma:
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
  if (p < e && *p == ':') {       /* the colon right after the key */
    p++;
  } else {
    SKIP_WS();
    if (p >= e || *p != ':')
      goto fail;
    p++;
  }
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

int tw__json_check(const char *json, size_t len, unsigned max_depth,
                   size_t *bad)
{
  struct ck ck;
  int rc = check(json, len, max_depth, &ck, 0, 0, 0);

  if (rc && bad)
    *bad = ck.bad;
  return rc;
}

int tw__json_check_ex(const char *json, size_t len, unsigned max_depth,
                      size_t *bad, tw__json_member_fn fn, void *arg)
{
  struct ck ck;
  int rc;

  if (!fn)
    return tw__json_check(json, len, max_depth, bad);
  ck.fn = fn;
  ck.arg = arg;
  rc = check(json, len, max_depth, &ck, 0, 0, 2);  /* reported as found */
  if (rc && bad)
    *bad = ck.bad;
  return rc;
}

int tw__json_check_prefix(const char *json, size_t len, unsigned max_depth,
                          size_t *end, int *spread, size_t *bad,
                          tw__json_member_fn fn, void *arg)
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

size_t tw__json_compact(char *d, const char *text, size_t n)
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
        j += tw__json_to_quote(u + j, u + n);
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

/* One call for every mode the tools' readers use (see json.h). */
int tw__json_check_full(const char *text, size_t n, unsigned max_depth,
                        unsigned mode, char *d, size_t dcap,
                        tw__json_member_fn fn, void *arg,
                        struct tw__json_res *res)
{
  struct ck ck;
  int rc;

  ck.fn = fn;
  ck.arg = arg;
  ck.d = (unsigned char *)d;
  ck.dcap = dcap;
  ck.end = ck.bad = 0;
  switch (mode & 15u) {
#define CASE(m, pre, com, mem)                                          \
  case m:                                                               \
    rc = check(text, n, max_depth, &ck, pre, com, mem);                 \
    break
  CASE(0, 0, 0, 0);
  CASE(TW__JSON_PREFIX, 1, 0, 0);
  CASE(TW__JSON_COMPACT, 0, 1, 0);
  CASE(TW__JSON_PREFIX | TW__JSON_COMPACT, 1, 1, 0);
  CASE(TW__JSON_MEMBERS, 0, 0, 2);
  CASE(TW__JSON_PREFIX | TW__JSON_MEMBERS, 1, 0, 2);
  CASE(TW__JSON_COMPACT | TW__JSON_MEMBERS, 0, 1, 1);
  CASE(TW__JSON_PREFIX | TW__JSON_COMPACT | TW__JSON_MEMBERS, 1, 1, 1);
#undef CASE
  default:
    return -1;
  }
  res->end = ck.end;
  res->bad = ck.bad;
  res->wlen = ck.wlen;
  res->nl = ck.nl;
  res->overflow = ck.overflow;
  return rc;
}

int tw__json_validate(const char *json, size_t len)
{
  return tw__json_check(json, len, TW_MAX_JSON_DEPTH, NULL) ? TW_EJSON : 0;
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

void tw__jstream_init(tw__jstream *j, int member)
{
  memset(j, 0, sizeof *j);
  j->state = member ? JS_KEY : JS_VALUE;
  j->first = 1;
}

/* A value ended: what comes next. */
static void js_value_done(tw__jstream *j)
{
  j->state = j->depth ? JS_AFTER : JS_DONE;
  j->first = 0;
}

static int js_out(tw__jstream *j, const char *p, size_t n,
                  tw__jstream_out out, void *arg)
{
  j->written += n;
  return out ? out(arg, p, n) : 0;
}

/* The byte c in a string: 0 taken, -1 not valid there. */
static int js_string_byte(tw__jstream *j, unsigned c)
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
static int js_number_byte(tw__jstream *j, unsigned c)
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
static int js_open(tw__jstream *j, unsigned c)
{
  if (j->depth >= TW__JSTREAM_DEPTH)
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

static int js_in_object(const tw__jstream *j)
{
  return j->depth && (j->obj[(j->depth - 1) / 8] >> (j->depth - 1) % 8 & 1);
}

int tw__jstream_feed(tw__jstream *j, const char *p, size_t n,
                     tw__jstream_out out, void *arg)
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

int tw__jstream_end(tw__jstream *j)
{
  if (j->bad)
    return -1;
  if (j->state == JS_NUM && j->depth == 0 &&
      (j->num == N_ZERO || j->num == N_INT || j->num == N_FRAC ||
       j->num == N_EXP))
    j->state = JS_DONE;
  return j->state == JS_DONE ? 0 : -1;
}
