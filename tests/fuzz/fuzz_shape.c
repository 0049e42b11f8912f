/* fuzz_shape.c -- the shape cache against the checker
 *
 * tw__json_check_shaped (src/json_shape.c) must give what
 * tw__json_check_full gives, for every text, in every mode: the same
 * return, end, error offset, compacted text, whitespace flag and
 * members.  The input: a first byte choosing the mode (bits 0-2: PREFIX,
 * COMPACT, MEMBERS; bit 3: compact in place; bits 4-7: the depth limit,
 * 1 + 4 * them), then texts separated by NUL bytes.  Each text is
 * checked, then again with each digit and each letter of it changed (the
 * same shape with other values, or a broken one), through one cache for
 * the whole input so that shapes learnt from one text meet the others.
 */
#include "fuzz.h"

#include "json.h"

#define MEMBERS_MAX 128

struct member {
  char key[64];
  size_t klen, voff, vlen;
};

struct seen {
  size_t n;
  int overflowed;
  struct member m[MEMBERS_MAX];
};

static void on_member(void *arg, const char *key, size_t klen, size_t voff,
                      size_t vlen)
{
  struct seen *s = arg;

  if (s->n == MEMBERS_MAX) {
    s->overflowed = 1;
    return;
  }
  memset(&s->m[s->n], 0, sizeof s->m[s->n]);
  memcpy(s->m[s->n].key, key, klen < 64 ? klen : 64);
  s->m[s->n].klen = klen;
  s->m[s->n].voff = voff;
  s->m[s->n].vlen = vlen;
  s->n++;
}

/* One check of text[0..n) both ways, compared. */
static void compare(tw__json_shapes *sh, const char *text, size_t n,
                    unsigned mode, int inplace, unsigned depth)
{
  char *a = malloc(n ? n : 1), *b = malloc(n ? n : 1);
  char *da = malloc(n ? n : 1), *db = malloc(n ? n : 1);
  struct seen *sa = calloc(1, sizeof *sa), *sb = calloc(1, sizeof *sb);
  struct tw__json_res ra, rb;
  int rca, rcb;

  if (!a || !b || !da || !db || !sa || !sb)
    FZ_FAIL("harness: out of memory");
  memcpy(a, text, n);
  memcpy(b, text, n);
  memset(&ra, 0x5a, sizeof ra);
  memset(&rb, 0x5a, sizeof rb);
  rca = tw__json_check_full(a, n, depth, mode, inplace ? a : da, n,
                            on_member, sa, &ra);
  rcb = tw__json_check_shaped(sh, b, n, depth, mode, inplace ? b : db, n,
                              on_member, sb, &rb);
  FZ_CHECK(rca == rcb, "return %d, shaped %d (mode %u)", rca, rcb, mode);
  if (rca != 0) {
    FZ_CHECK(ra.bad == rb.bad, "error at %zu, shaped at %zu", ra.bad,
             rb.bad);
  } else {
    const char *wa = inplace ? a : da, *wb = inplace ? b : db;
    FZ_CHECK(ra.end == rb.end, "end %zu, shaped %zu", ra.end, rb.end);
    FZ_CHECK(ra.nl == rb.nl, "nl %d, shaped %d", ra.nl, rb.nl);
    FZ_CHECK(ra.overflow == rb.overflow, "overflow differs");
    FZ_CHECK(ra.wlen == rb.wlen, "wlen %zu, shaped %zu", ra.wlen, rb.wlen);
    if (mode & TW__JSON_COMPACT)
      FZ_CHECK(memcmp(wa, wb, ra.wlen) == 0, "compacted text differs");
    FZ_CHECK(sa->n == sb->n, "%zu members, shaped %zu", sa->n, sb->n);
    for (size_t i = 0; i < sa->n; i++)
      FZ_CHECK(memcmp(&sa->m[i], &sb->m[i], sizeof sa->m[i]) == 0,
               "member %zu differs (key %.*s, %zu+%zu; shaped %.*s, "
               "%zu+%zu)", i, (int)(sa->m[i].klen < 64 ? sa->m[i].klen : 64),
               sa->m[i].key, sa->m[i].voff, sa->m[i].vlen,
               (int)(sb->m[i].klen < 64 ? sb->m[i].klen : 64), sb->m[i].key,
               sb->m[i].voff, sb->m[i].vlen);
  }
  free(a);
  free(b);
  free(da);
  free(db);
  free(sa);
  free(sb);
}

/* text with every byte that is a digit (what) or a letter changed: the
 * same shape with other values, or not. */
static void variant(char *v, const char *text, size_t n, int what)
{
  for (size_t i = 0; i < n; i++) {
    char c = text[i];
    if (what == 0 && c >= '0' && c <= '9')
      c = c == '9' ? '0' : (char)(c + 1);
    else if (what == 1 && c >= 'a' && c <= 'y')
      c = (char)(c + 1);
    v[i] = c;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  tw__json_shapes *sh;
  unsigned mode, depth;
  int inplace;
  size_t i = 1;

  if (size < 1 || size > 64 * 1024)
    return 0;
  mode = data[0] & 7u;
  inplace = (data[0] & 8u) && (mode & TW__JSON_COMPACT);
  depth = 1 + 4 * (data[0] >> 4);
  if (!(sh = tw__json_shapes_new()))
    FZ_FAIL("harness: out of memory");
  while (i < size) {
    const char *t = (const char *)data + i;
    const char *z = memchr(t, '\0', size - i);
    size_t n = z ? (size_t)(z - t) : size - i;
    char *v = malloc(n ? n : 1);

    if (!v)
      FZ_FAIL("harness: out of memory");
    compare(sh, t, n, mode, inplace, depth);
    compare(sh, t, n, mode, inplace, depth);  /* now of a known shape */
    for (int what = 0; what < 2; what++) {
      variant(v, t, n, what);
      compare(sh, v, n, mode, inplace, depth);
    }
    free(v);
    i += n + 1;
  }
  tw__json_shapes_free(sh);
  return 0;
}
