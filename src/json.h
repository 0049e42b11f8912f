/* json.h -- the one JSON grammar of the project: a strict RFC 8259
 * checker (no recursion, every byte looked at once), in every mode the
 * writer and the tools use, and its streaming form
 *
 * The writer's raw JSON argument (tw_arg_json) is checked with
 * tw__json_validate; the tools' readers check every record and member
 * with the same functions (tools/jsonscan.h names them twt_json_*).
 * Strict: numbers, literals, escapes (a high surrogate only with its low
 * one), UTF-8 (no overlong form, no surrogate, nothing past U+10FFFF),
 * nothing after the value but whitespace, at most max_depth deep (at
 * most TW__JSON_DEPTH_MAX).  Pure and async-signal-safe.
 */
#ifndef TW_JSON_H
#define TW_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TW__JSON_DEPTH_MAX 512u   /* the deepest the checker checks */

/* The one UTF-8 rule: the length of the valid UTF-8 sequence at s (n > 0
 * bytes available), or minus the length of its maximal invalid subpart
 * (at least 1), as Unicode chapter 3 (U+FFFD substitution of maximal
 * subparts) counts it: no overlong form, no UTF-16 surrogate, nothing
 * past U+10FFFF.  The formatter writes strings by it, record.c checks
 * them by it before formatting, the checker reads JSON strings by it. */
static inline int tw__utf8_sequence(const unsigned char *s, size_t n)
{
  unsigned c = s[0];
  unsigned lo = 0x80, hi = 0xbf;
  int len, i;

  if (c < 0x80)
    return 1;
  if (c >= 0xc2 && c <= 0xdf)
    len = 2;
  else if (c >= 0xe0 && c <= 0xef) {
    len = 3;
    if (c == 0xe0)
      lo = 0xa0;
    else if (c == 0xed)
      hi = 0x9f;          /* no UTF-16 surrogates */
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4;
    if (c == 0xf0)
      lo = 0x90;
    else if (c == 0xf4)
      hi = 0x8f;          /* nothing above U+10FFFF */
  } else
    return -1;
  for (i = 1; i < len; i++) {
    if ((size_t)i >= n || s[i] < lo || s[i] > hi)
      return -i;
    lo = 0x80;
    hi = 0xbf;
  }
  return len;
}


/* Check that json[0..len) is one strict JSON value at most max_depth
 * deep.  Returns 0, or -1 with the offset of the first byte that is
 * wrong in *bad (if not NULL). */
int tw__json_check(const char *json, size_t len, unsigned max_depth,
                   size_t *bad);

/* The same, and for an object, fn(arg, key, klen, voff, vlen) for each
 * of its members as it is checked (key: the raw key without its quotes;
 * the value at json + voff, vlen bytes): validation and extraction in
 * one pass.  Members may be reported before the whole is known to be
 * valid: use them only when it returns 0.  fn may be NULL. */
typedef void (*tw__json_member_fn)(void *arg, const char *key, size_t klen,
                                   size_t voff, size_t vlen);
int tw__json_check_ex(const char *json, size_t len, unsigned max_depth,
                      size_t *bad, tw__json_member_fn fn, void *arg);

/* The same for the value that json[0..len) begins with, whatever
 * follows it: 0, where it ends in *end and, in *spread, whether the
 * whitespace between its tokens held a newline, CR or tab; or -1 (then
 * *bad as above; members may have been reported). */
int tw__json_check_prefix(const char *json, size_t len, unsigned max_depth,
                          size_t *end, int *spread, size_t *bad,
                          tw__json_member_fn fn, void *arg);

/* Every mode at once (the tools' general reader): mode is a set of
 *   TW__JSON_PREFIX   the value begins text, anything may follow it
 *                     (res->end: where it ends);
 *   TW__JSON_COMPACT  its text without the whitespace between its tokens
 *                     is written to d (dcap bytes, at least n; may be
 *                     text itself): res->wlen bytes, and res->nl says
 *                     whether a run of it held a newline, CR or tab;
 *   TW__JSON_MEMBERS  the top object's members reported to fn: with
 *                     COMPACT once the whole is valid, in the
 *                     coordinates of the text written when res->nl (of
 *                     the text read otherwise), unless res->overflow
 *                     (too many: none reported); without it as found.
 * Returns 0, or -1 with res->bad. */
#define TW__JSON_PREFIX  1u
#define TW__JSON_COMPACT 2u
#define TW__JSON_MEMBERS 4u
struct tw__json_res {
  size_t end, bad, wlen;
  int nl, overflow;
};
int tw__json_check_full(const char *text, size_t n, unsigned max_depth,
                        unsigned mode, char *d, size_t dcap,
                        tw__json_member_fn fn, void *arg,
                        struct tw__json_res *res);

/* The shapes of the records one reader has checked (json_shape.c): with
 * them, tw__json_check_shaped gives what tw__json_check_full gives, the
 * same results and errors for the same text, and finds them faster for
 * a text of a shape seen before (the same keys, brackets and whitespace
 * around other scalar values: most records of a trace).  At most about
 * 40 KiB each, taken by tw__json_shapes_new; not thread-safe (one a
 * reader).  NULL sh: tw__json_check_full.  new returns NULL when out of
 * memory. */
typedef struct tw__json_shapes tw__json_shapes;
tw__json_shapes *tw__json_shapes_new(void);
void tw__json_shapes_free(tw__json_shapes *sh);
int tw__json_check_shaped(tw__json_shapes *sh, const char *text, size_t n,
                          unsigned max_depth, unsigned mode, char *d,
                          size_t dcap, tw__json_member_fn fn, void *arg,
                          struct tw__json_res *res);

/* Copy the valid JSON text[0..n) to d without the whitespace between its
 * tokens (d may be text).  Returns the length written (at most n). */
size_t tw__json_compact(char *d, const char *text, size_t n);

/* Eight bytes at p as a word whose lowest byte is p[0], whatever the
 * machine's byte order: the word loops take the lowest hit. */
static inline uint64_t tw__json_load_le(const unsigned char *p)
{
  uint64_t w;

  memcpy(&w, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  w = __builtin_bswap64(w);
#endif
  return w;
}

/* How many bytes from p (up to e) come before a '"' or '\\', eight at a
 * time (SWAR): the lowest bit of each mask is exact (a borrow only makes
 * false hits above a true one), and words are read little-endian
 * (tw__json_load_le). */
#define TW__JSON_ONES  UINT64_C(0x0101010101010101)
#define TW__JSON_HIGHS UINT64_C(0x8080808080808080)
#define TW__JSON_HAS_ZERO(v) (((v) - TW__JSON_ONES) & ~(v) & TW__JSON_HIGHS)
#define TW__JSON_HAS_BYTE(v, b) \
  TW__JSON_HAS_ZERO((v) ^ (TW__JSON_ONES * (uint64_t)(b)))
static inline size_t tw__json_to_quote(const unsigned char *p,
                                       const unsigned char *e)
{
  const unsigned char *s = p;

  while (e - p >= 8) {
    uint64_t w = tw__json_load_le(p), m;
    if ((m = TW__JSON_HAS_BYTE(w, '"') | TW__JSON_HAS_BYTE(w, '\\')) != 0)
      return (size_t)(p - s) + (size_t)(__builtin_ctzll(m) >> 3);
    p += 8;
  }
  while (p < e && *p != '"' && *p != '\\')
    p++;
  return (size_t)(p - s);
}

/* The streaming form of the same grammar: JSON text fed in pieces of
 * any size, checked by the rules of tw__json_check (tested equal to it
 * on random texts, tests/test_jsonscan_fast.c) at most TW__JSTREAM_DEPTH
 * deep, and written out without the whitespace between its tokens, in
 * memory that does not grow with the text: a member of megabytes copied
 * from a file as it is read.  member: the text is one member, "key":
 * value; else one value. */
#define TW__JSTREAM_DEPTH TW__JSON_DEPTH_MAX
typedef struct tw__jstream {
  int state, first, bad, key, in_str, esc, need_low, low_next;
  int num, lit, lit_i;
  unsigned hex, uval, u8, u8_lo, u8_hi, depth;
  unsigned char obj[TW__JSTREAM_DEPTH / 8]; /* 1: an object at depth */
  uint64_t off, written;
} tw__jstream;
/* Where the text goes: 0, or nonzero to stop (the feed returns -2). */
typedef int (*tw__jstream_out)(void *arg, const char *p, size_t n);
void tw__jstream_init(tw__jstream *j, int member);
/* p[0..n), the next bytes: 0, -1 not valid JSON (sticky; what came
 * before the bad byte was written), -2 out failed.  out may be NULL (a
 * check only). */
int tw__jstream_feed(tw__jstream *j, const char *p, size_t n,
                     tw__jstream_out out, void *arg);
/* The end of the text: 0 if it was exactly one valid member or value. */
int tw__jstream_end(tw__jstream *j);

#endif /* TW_JSON_H */
