/* json_shape.c -- the shapes of the records a reader has checked: a
 * record checked again by its shape, its literal text compared whole
 * and only its scalar values read token by token (json.h,
 * tw__json_check_shaped)
 *
 * Why the result is the checker's: a shape is learnt from a text the
 * checker (json.c) accepted, cut at each scalar value (string, number,
 * true, false, null) into literal segments -- brackets, keys, colons,
 * commas and whitespace.  A text made of the same segments around other
 * valid scalar values is valid too, and the checker finds in it the
 * same end, members and whitespace: the grammar takes any scalar where
 * it takes one; a segment after a value starts with whitespace, ',',
 * '}' or ']', which no scalar token continues; and a scalar holds no
 * whitespace between tokens.  The values are read with the checker's
 * own token functions (json_token.h).  Anything else -- a segment that
 * differs, a value that is not valid, a shape deeper than asked -- goes
 * to the checker, which then decides alone: every result and error is
 * the checker's (tests/fuzz/fuzz_shape.c compares them on every input).
 *
 * The shapes are a trie, since the records of a trace share their first
 * segments (`{"ph":`, then `,"name":` ...), in fixed memory: when it is
 * full nothing more is learnt, and when most records are new shapes it
 * stops trying.  Not async-signal-safe (it allocates); one a reader.
 */
#include "internal.h"     /* config.h first */
#include "json.h"
#include "json_token.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SHAPE_NODES   512u    /* segments, over all shapes */
#define SHAPE_POOL    12288u  /* their text, as read and compacted */
#define SHAPE_VALUES  64u     /* scalar values in one shape */
#define SHAPE_SEG_MAX 1024u   /* bytes in one segment */
#define SHAPE_MEMBERS 32u     /* a top object's members (as the checker
                                 holds them for TW__JSON_COMPACT) */
#define SHAPE_ALL_MEMBERS 768u
#define SHAPE_LEAVES  128u    /* shapes */
#define SHAPE_DEPTH   64u     /* the deepest shape learnt */
/* Stop trying when this many records were not of a known shape, and
 * more than one in eight of those that were: a trace of ever new
 * shapes then costs the checker and no more. */
#define SHAPE_MISSES_FREE 256u

/* A place in a shape's text: offset off in segment seg as read, coff in
 * it compacted. */
struct shape_pos {
  uint16_t seg, off, coff;
};

/* A member of the top object: its key (after the opening quote, klen
 * bytes) and its value, from v0 to v1. */
struct shape_member {
  struct shape_pos key, v0, v1;
  uint16_t klen;
};

/* A node: one segment; a value follows it, then one of its children, or
 * it ends a shape.  32 bytes. */
struct shape_node {
  uint64_t w0, m0;            /* its first word (tw__json_load_le), and
                                 the mask of its bytes in it */
  uint32_t raw;               /* its text in pool, compacted right after */
  uint16_t len, clen;
  uint16_t child, sibling;    /* 0: none (node 0 is the root) */
  uint16_t leaf;              /* 1 + its shape in leaf[], or 0 */
};

/* A shape's facts. */
struct shape_leaf {
  uint16_t depth, nm;         /* how deep, how many top members */
  uint16_t member;            /* the first in member[] */
  uint8_t nl;                 /* a newline, CR or tab between tokens */
};

struct tw__json_shapes {
  unsigned nodes, leaves, members, pool_used;
  int full, off;
  uint64_t hits, misses;
  struct shape_node node[SHAPE_NODES];
  struct shape_leaf leaf[SHAPE_LEAVES];
  struct shape_member member[SHAPE_ALL_MEMBERS];
  unsigned char pool[SHAPE_POOL + 16];  /* +16: words read past a text */
};

tw__json_shapes *tw__json_shapes_new(void)
{
  tw__json_shapes *sh = malloc(sizeof *sh);

  if (sh) {
    memset(sh, 0, offsetof(tw__json_shapes, node) + sizeof sh->node[0]);
    sh->nodes = 1;
    memset(sh->pool + SHAPE_POOL, 0, 16);
  }
  return sh;
}

void tw__json_shapes_free(tw__json_shapes *sh)
{
  free(sh);
}

static inline int ws_byte(unsigned c)
{
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* ============================================================ matching */

/* 1 if p[0..e) begins with the segment of nd: its first word compared
 * first (most segments are `,"key":`, at most eight bytes), then the
 * rest from the pool. */
static inline int seg_equal(const tw__json_shapes *sh,
                            const struct shape_node *nd,
                            const unsigned char *p, const unsigned char *e)
{
  const unsigned char *t = sh->pool + nd->raw;
  size_t n = nd->len;

  if (e - p >= 8) {
    if ((tw__json_load_le(p) ^ nd->w0) & nd->m0)
      return 0;
    if (n <= 8)
      return 1;
    if ((size_t)(e - p) < n)
      return 0;
    for (size_t i = 8; i + 8 < n; i += 8)   /* (none up to 16 bytes) */
      if (tw__json_load_le(p + i) != tw__json_load_le(t + i))
        return 0;
    return tw__json_load_le(p + n - 8) == tw__json_load_le(t + n - 8);
  }
  return (size_t)(e - p) >= n && memcmp(p, t, n) == 0;
}

/* The shape s[0..e) begins with: its leaf, with its segments in
 * path[0..nseg) and where each begins in at[0..nseg] (at[nseg]: where
 * the shape ends); or NULL.  (A segment that matches where a longer one
 * was meant fails at the value after it: the checker then decides.) */
static inline __attribute__((always_inline))
const struct shape_node *match(const tw__json_shapes *sh,
                               const unsigned char *s,
                               const unsigned char *e,
                               const struct shape_node **path,
                               const unsigned char **at, unsigned *nseg,
                               const int want_path)
{
  const unsigned char *p = s;
  unsigned k = sh->node[0].child, j = 0;

  for (;;) {
    const struct shape_node *nd = &sh->node[k];

    if (!k)                         /* (learning never leaves one) */
      return NULL;

    while (!seg_equal(sh, nd, p, e)) {
      if (!nd->sibling)
        return NULL;
      nd = &sh->node[nd->sibling];
    }
    if (want_path)
      path[j] = nd;
    at[j++] = p;
    p += nd->len;
    if (nd->leaf) {
      at[j] = p;
      *nseg = j;
      return nd;
    }
    if (p >= e)
      return NULL;
    if (*p == '"')
      p = check_string(p, e);
    else if (*p >= 'a')
      p = check_literal(p, e);
    else
      p = check_number(p, e);
    if (!p)
      return NULL;
    k = nd->child;
  }
}

/* ============================================================ learning */

/* Bytes of s[0..n) left when the whitespace between its tokens is taken
 * out (s begins between tokens). */
static size_t compact_len(const unsigned char *s, size_t n)
{
  unsigned char tmp[SHAPE_SEG_MAX];

  return tw__json_compact((char *)tmp, (const char *)s, n);
}

/* What learning a text found: its segments and top members. */
struct learnt {
  unsigned nv, nm, depth;
  int nl;
  size_t start[SHAPE_VALUES + 1], end[SHAPE_VALUES + 1]; /* segments */
  struct {
    size_t key, klen, v0, v1;          /* offsets in the text */
  } m[SHAPE_MEMBERS];
};

/* Cut the valid text s[0..n) (one value, whitespace before it, nothing
 * after) into segments.  -1 if it is not to be learnt. */
static int cut_text(const unsigned char *s, size_t n, struct learnt *l)
{
  size_t i = 0, seg0 = 0;
  unsigned depth = 0;
  int want_value = 0;       /* a top member's value comes next */

  l->nv = l->nm = l->depth = 0;
  l->nl = 0;
  for (; i < n && ws_byte(s[i]); i++)
    l->nl |= s[i] != ' ';
  if (i >= n || (s[i] != '{' && s[i] != '['))
    return -1;                      /* a scalar alone: no shape */
  while (i < n) {
    unsigned c = s[i];
    size_t a = i, b;

    switch (c) {
    case ' ':
      i++;
      continue;
    case '\n':
    case '\r':
    case '\t':
      l->nl = 1;
      i++;
      continue;
    case '{':
    case '[':
      if (want_value && depth == 1)
        l->m[l->nm - 1].v0 = i;
      want_value = 0;
      if (++depth > SHAPE_DEPTH)
        return -1;
      if (depth > l->depth)
        l->depth = depth;
      i++;
      continue;
    case '}':
    case ']':
      i++;
      if (--depth == 1 && l->nm && l->m[l->nm - 1].v1 == 0 &&
          l->m[l->nm - 1].v0 != 0)
        l->m[l->nm - 1].v1 = i;
      continue;
    case ':':
    case ',':
      i++;
      continue;
    case '"':
      b = i + 1;
      for (;;) {                    /* valid: ends with its quote */
        b += tw__json_to_quote(s + b, s + n);
        if (s[b] == '"')
          break;
        b += 2;
      }
      b++;
      i = b;
      while (i < n && ws_byte(s[i]))
        i++;
      if (i < n && s[i] == ':') {   /* a key */
        if (depth == 1) {
          if (l->nm == SHAPE_MEMBERS)
            return -1;
          l->m[l->nm].key = a + 1;
          l->m[l->nm].klen = b - a - 2;
          l->m[l->nm].v0 = l->m[l->nm].v1 = 0;
          l->nm++;
          want_value = 1;
        }
        i = b;
        continue;
      }
      break;
    default:
      b = i;
      while (b < n && !strchr(" \n\r\t,]}", s[b]))
        b++;
      break;
    }
    /* A scalar value at a..b: a segment ends at a. */
    if (l->nv == SHAPE_VALUES)
      return -1;
    l->start[l->nv] = seg0;
    l->end[l->nv] = a;
    l->nv++;
    if (want_value && depth == 1) {
      l->m[l->nm - 1].v0 = a;
      l->m[l->nm - 1].v1 = b;
    }
    want_value = 0;
    seg0 = i = b;
  }
  l->start[l->nv] = seg0;
  l->end[l->nv] = n;
  return 0;
}

/* Offset x of the text of l as a place in its segments. */
static struct shape_pos place(const unsigned char *s, const struct learnt *l,
                              size_t x)
{
  struct shape_pos q = { 0, 0, 0 };

  for (unsigned j = 0; j <= l->nv; j++)
    if (x >= l->start[j] && x <= l->end[j]) {
      q.seg = (uint16_t)j;
      q.off = (uint16_t)(x - l->start[j]);
      q.coff = (uint16_t)compact_len(s + l->start[j], q.off);
      break;
    }
  return q;
}

/* The child of node k whose segment is s[0..n) (and is a leaf or not),
 * made if there is none; 0 when full. */
static unsigned child(tw__json_shapes *sh, unsigned k,
                      const unsigned char *s, size_t n, int leaf)
{
  struct shape_node *nd;
  unsigned c;
  size_t cn;

  for (c = sh->node[k].child; c; c = sh->node[c].sibling) {
    nd = &sh->node[c];
    if (nd->len == n && (nd->leaf != 0) == leaf &&
        memcmp(sh->pool + nd->raw, s, n) == 0)
      return c;
  }
  if (sh->nodes == SHAPE_NODES || sh->pool_used + 2 * n > SHAPE_POOL)
    return 0;
  c = sh->nodes++;
  nd = &sh->node[c];
  memset(nd, 0, sizeof *nd);
  nd->raw = sh->pool_used;
  memcpy(sh->pool + nd->raw, s, n);
  nd->len = (uint16_t)n;
  nd->w0 = tw__json_load_le(sh->pool + nd->raw);
  nd->m0 = n >= 8 ? ~UINT64_C(0) : (UINT64_C(1) << (8 * n)) - 1;
  nd->w0 &= nd->m0;
  cn = tw__json_compact((char *)sh->pool + nd->raw + n, (const char *)s,
                        n);
  nd->clen = (uint16_t)cn;
  sh->pool_used += (unsigned)(n + cn);
  if (leaf) {
    sh->node[c].leaf = (uint16_t)++sh->leaves;
    memset(&sh->leaf[sh->leaves - 1], 0, sizeof sh->leaf[0]);
  }
  nd->sibling = sh->node[k].child;
  sh->node[k].child = (uint16_t)c;
  return c;
}

/* Learn the shape of the valid text s[0..n) (one value, nothing after). */
static void learn(tw__json_shapes *sh, const unsigned char *s, size_t n)
{
  struct learnt l;
  struct shape_leaf *leaf;
  unsigned k = 0;
  size_t need = 0;

  if (cut_text(s, n, &l) != 0)
    return;
  for (unsigned j = 0; j <= l.nv; j++) {
    if (l.end[j] - l.start[j] > SHAPE_SEG_MAX)
      return;
    need += 2 * (l.end[j] - l.start[j]);
  }
  /* All of it or nothing: no branch that leads nowhere. */
  if (sh->nodes + l.nv + 1 > SHAPE_NODES ||
      sh->pool_used + need > SHAPE_POOL || sh->leaves == SHAPE_LEAVES ||
      sh->members + l.nm > SHAPE_ALL_MEMBERS) {
    sh->full = 1;
    return;
  }
  for (unsigned j = 0; j <= l.nv; j++)
    k = child(sh, k, s + l.start[j], l.end[j] - l.start[j], j == l.nv);
  leaf = &sh->leaf[sh->node[k].leaf - 1];
  if (leaf->depth)
    return;                         /* known (deeper than asked, then) */
  leaf->depth = (uint16_t)l.depth;
  leaf->nl = (uint8_t)l.nl;
  leaf->member = (uint16_t)sh->members;
  leaf->nm = (uint16_t)l.nm;
  for (unsigned i = 0; i < l.nm; i++) {
    struct shape_member *m = &sh->member[sh->members++];
    m->key = place(s, &l, l.m[i].key);
    m->klen = (uint16_t)l.m[i].klen;
    m->v0 = place(s, &l, l.m[i].v0);
    m->v1 = place(s, &l, l.m[i].v1);
  }
}

/* ============================================================ the call */

/* For a text of the shape whose segments are path[0..nseg), at at[],
 * what tw__json_check_full gives for mode: the text compacted to d, and
 * the top members to fn. */
static void report(const tw__json_shapes *sh, const struct shape_leaf *leaf,
                   const unsigned char *s, const unsigned char *e,
                   const struct shape_node *const *path,
                   const unsigned char *const *at, unsigned nseg,
                   unsigned mode, unsigned char *d, size_t dcap,
                   tw__json_member_fn fn, void *arg,
                   struct tw__json_res *res)
{
  size_t cat[SHAPE_VALUES + 1];     /* where each segment went in d */
  int moved = 0;

  if (mode & TW__JSON_COMPACT) {
    size_t w = 0;
    /* Words past what is written only where nothing is to be read. */
    int apart = d != s;

    /* Written down in place (d may be s): never past what is read. */
    for (unsigned j = 0; j < nseg; j++) {
      const struct shape_node *nd = path[j];
      const unsigned char *v = at[j] + nd->len;

      cat[j] = w;
      copy_down(d + w, sh->pool + nd->raw + nd->len, nd->clen,
                apart && dcap - w >= 16);
      w += nd->clen;
      if (j + 1 < nseg) {
        size_t vn = (size_t)(at[j + 1] - v);
        copy_down(d + w, v, vn, apart && dcap - w >= 16 && e - v >= 16);
        w += vn;
      }
    }
    res->wlen = w;
    moved = leaf->nl;
  }
  if (!fn || !(mode & TW__JSON_MEMBERS))
    return;
  for (unsigned i = 0; i < leaf->nm; i++) {
    const struct shape_member *m = &sh->member[leaf->member + i];
    if (moved) {
      size_t v0 = cat[m->v0.seg] + m->v0.coff;
      fn(arg, (const char *)d + cat[m->key.seg] + m->key.coff, m->klen, v0,
         cat[m->v1.seg] + m->v1.coff - v0);
    } else {
      const unsigned char *v0 = at[m->v0.seg] + m->v0.off;
      fn(arg, (const char *)at[m->key.seg] + m->key.off, m->klen,
         (size_t)(v0 - s), (size_t)(at[m->v1.seg] + m->v1.off - v0));
    }
  }
}

int tw__json_check_shaped(tw__json_shapes *sh, const char *text, size_t n,
                          unsigned max_depth, unsigned mode, char *d,
                          size_t dcap, tw__json_member_fn fn, void *arg,
                          struct tw__json_res *res)
{
  const unsigned char *s = (const unsigned char *)text, *e = s + n;
  const unsigned char *at[SHAPE_VALUES + 2];
  const struct shape_node *path[SHAPE_VALUES + 1], *last;
  const struct shape_leaf *leaf;
  unsigned nseg;
  int rc;

  if (!sh || sh->off || (mode & ~15u))
    return tw__json_check_full(text, n, max_depth, mode, d, dcap, fn, arg,
                               res);
  last = mode & TW__JSON_COMPACT ? match(sh, s, e, path, at, &nseg, 1)
                                 : match(sh, s, e, path, at, &nseg, 0);
  if (last && (leaf = &sh->leaf[last->leaf - 1])->depth <= max_depth) {
    const unsigned char *p = at[nseg];
    int nl = leaf->nl;

    if (!(mode & TW__JSON_PREFIX)) {   /* then only whitespace */
      for (; p < e && ws_byte(*p); p++)
        nl |= *p != ' ';
      if (p != e)
        goto checker;
    }
    sh->hits++;
    res->end = mode & TW__JSON_PREFIX ? (size_t)(at[nseg] - s) : 0;
    res->bad = res->wlen = 0;
    res->nl = nl;
    res->overflow = 0;
    report(sh, leaf, s, e, path, at, nseg, mode, (unsigned char *)d, dcap,
           fn, arg, res);
    return 0;
  }
checker:
  sh->misses++;
  rc = tw__json_check_full(text, n, max_depth, mode, d, dcap, fn, arg, res);
  /* (Compacted in place: the text as read is gone.) */
  if (rc == 0 && !sh->full && !((mode & TW__JSON_COMPACT) && d == text)) {
    size_t end = mode & TW__JSON_PREFIX ? res->end : n;
    while (!(mode & TW__JSON_PREFIX) && end > 0 && ws_byte(s[end - 1]))
      end--;
    learn(sh, s, end);
  }
  if (sh->misses > SHAPE_MISSES_FREE && sh->misses > sh->hits / 8)
    sh->off = 1;
  return rc;
}
