/* test_jsonscan_fast.c -- the one-pass paths of the tools' reader give
 * the verdicts of the checks they replace
 *
 * The crash-layout reader takes a record line in one pass (the checker
 * in prefix mode finds the record's end, reports its members and says
 * whether it spreads over lines); timestamps are read eight digits at a
 * time.  Each must answer exactly what the slower way answers:
 *
 *   - twt_json_check_prefix against twt_json_check and
 *     twt_json_check_ex on random records, valid and damaged (escapes
 *     and runs of backslashes, strings holding braces, brackets and
 *     commas, UTF-8 and invalid UTF-8, control bytes, deep nesting,
 *     whitespace and newlines between tokens, cuts), followed by what
 *     may follow a record;
 *   - the general reader's records without their whitespace against
 *     twt_json_compact, fed in chunks of every size;
 *   - the reader with the one-pass path and without it
 *     (TWT_READ_LINES_ONLY) on random files in the library's layout
 *     with such lines, padding, commas, NULs, glued tails, lines spread
 *     and records across the 64 KiB read chunks: the same items, bytes,
 *     offsets, lines, members and info;
 *   - twt_rec_us_to_ns against the value computed here.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* setenv, unsetenv */
#endif

#include "testutil.h"
#include "tooltest.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "jsonscan.h"
#include "reader.h"
#include "records.h"

/* ------------------------------------------------------- random text */

static uint64_t rng;

static unsigned rnd(unsigned n)
{
  rng = rng * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
  return (unsigned)(rng >> 33) % n;
}

/* Whitespace between tokens: none mostly, or (pretty) any. */
static void ws(tu_text *b, int pretty)
{
  static const char *const w[] = { " ", "\n    ", "\t", "\r\n  ", "  " };

  if (pretty && rnd(3) == 0)
    tu_text_puts(b, w[rnd(5)]);
}

static void gen_string(tu_text *b)
{
  static const char *const bits[] = {
    "a", "name", " ", "{", "}", "[", "]", ",", ":", "\\\\", "\\\"",
    "\\\\\\\"", "\\\\\\\\\\\"", "\\n", "\\/", "\\u00e9", "\\ud83d\\ude00",
    "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "},{", "\"\\\\",
  };
  unsigned n = rnd(4) == 0 ? 20 + rnd(120) : rnd(6);

  tu_text_puts(b, "\"");
  for (unsigned i = 0; i < n; i++) {
    const char *s = bits[rnd(sizeof bits / sizeof *bits)];
    if (strcmp(s, "\"\\\\") == 0)
      s = "\\\\";                   /* an escaped backslash before the end */
    tu_text_puts(b, s);
  }
  tu_text_puts(b, "\"");
}

static void gen_value(tu_text *b, unsigned depth, int pretty);

/* "key": value, with whitespace around its tokens if pretty. */
static void gen_member(tu_text *b, unsigned depth, int pretty)
{
  ws(b, pretty);
  gen_string(b);
  ws(b, pretty);
  tu_text_puts(b, ":");
  ws(b, pretty);
  gen_value(b, depth, pretty);
  ws(b, pretty);
}

static void gen_value(tu_text *b, unsigned depth, int pretty)
{
  static const char *const nums[] = {
    "0", "-0", "12", "-3.25", "1e5", "2.5E-3", "1694039968955744.123",
    "100", "281000.500", "0.000001",
  };
  static const char *const lits[] = { "true", "false", "null" };
  unsigned k = rnd(depth < 4 ? 7 : 4);

  if (k == 0 || k == 1) {
    gen_string(b);
  } else if (k == 2) {
    tu_text_puts(b, nums[rnd(sizeof nums / sizeof *nums)]);
  } else if (k == 3) {
    tu_text_puts(b, lits[rnd(3)]);
  } else if (k == 4 || k == 5) {
    unsigned n = rnd(4);
    tu_text_puts(b, "{");
    for (unsigned i = 0; i < n; i++) {
      if (i)
        tu_text_puts(b, ",");
      gen_member(b, depth + 1, pretty);
    }
    tu_text_puts(b, "}");
  } else {
    unsigned n = rnd(4);
    tu_text_puts(b, "[");
    for (unsigned i = 0; i < n; i++) {
      if (i)
        tu_text_puts(b, ",");
      ws(b, pretty);
      gen_value(b, depth + 1, pretty);
      ws(b, pretty);
    }
    tu_text_puts(b, "]");
  }
}

static int shallow;                 /* no record too deep */

/* A record: an object with the usual members and random others. */
static void gen_record(tu_text *b, int pretty)
{
  char num[64];
  unsigned n = rnd(6);

  tu_text_puts(b, "{");
  ws(b, pretty);
  snprintf(num, sizeof num, "\"ph\":\"X\",\"ts\":%u.%03u,\"pid\":%u,"
           "\"tid\":%u", rnd(100000000), rnd(1000), rnd(70000), rnd(9));
  tu_text_puts(b, num);
  for (unsigned i = 0; i < n; i++) {
    tu_text_puts(b, ",");
    gen_member(b, 0, pretty);
  }
  if (!shallow && rnd(20) == 0) {   /* deep */
    unsigned d = rnd(2) ? TWT_RECORD_DEPTH - 1 : TWT_RECORD_DEPTH + 3;
    tu_text_puts(b, ",\"deep\":");
    for (unsigned i = 0; i < d; i++)
      tu_text_puts(b, "[");
    for (unsigned i = 0; i < d; i++)
      tu_text_puts(b, "]");
  }
  tu_text_puts(b, "}");
}

/* Damage the text in one of the ways a file gets damaged. */
static void damage(tu_text *b)
{
  static const unsigned char bytes[] = {
    '"', '\\', '{', '}', '[', ']', ',', ':', 0x01, 0x1f, 0x80, 0xc3,
    0xed, 0xf5, 0xff, ' ', 'x', '0', '-', '.', 'e', '\n', '\t', 0x00,
  };
  size_t at;

  if (b->len == 0)
    return;
  at = rnd((unsigned)b->len);
  switch (rnd(4)) {
  case 0:                           /* a byte changed */
    b->p[at] = (char)bytes[rnd(sizeof bytes)];
    break;
  case 1:                           /* a byte gone */
    memmove(b->p + at, b->p + at + 1, b->len - at - 1);
    b->len--;
    break;
  case 2: {                         /* a byte more */
    char c = (char)bytes[rnd(sizeof bytes)];
    tu_text_put(b, " ", 1);
    memmove(b->p + at + 1, b->p + at, b->len - at - 1);
    b->p[at] = c;
    break;
  }
  default:                          /* cut */
    b->len = at;
    break;
  }
}

/* ------------------------------------------ the checker, prefix mode */

typedef struct member {
  char key[64];
  size_t klen, voff, vlen;
} member;

typedef struct members {
  member m[64];
  size_t n;
  int over;
} members;

static void take(void *arg, const char *key, size_t klen, size_t voff,
                 size_t vlen)
{
  members *ms = arg;

  if (!key) {
    ms->n = 0;
    ms->over = 0;
    return;
  }
  if (ms->n == 64) {
    ms->over = 1;
    return;
  }
  memcpy(ms->m[ms->n].key, key, klen < 64 ? klen : 64);
  ms->m[ms->n].klen = klen;
  ms->m[ms->n].voff = voff;
  ms->m[ms->n].vlen = vlen;
  ms->n++;
}

/* Whether text[0..n) holds a newline, CR or tab outside its strings. */
static int spread_of(const char *t, size_t n)
{
  int in = 0;

  for (size_t i = 0; i < n; i++) {
    if (in) {
      if (t[i] == '\\')
        i++;
      else if (t[i] == '"')
        in = 0;
    } else if (t[i] == '"') {
      in = 1;
    } else if (t[i] == '\n' || t[i] == '\r' || t[i] == '\t') {
      return 1;
    }
  }
  return 0;
}

static int is_ws(char c)
{
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* The prefix checker on u[0..len) (t[0..n) and what follows it) agrees
 * with the whole checker. */
static void prefix_agrees(const char *u, size_t len, size_t n)
{
  size_t end = 0, bad = 0, k;
  int spread = -1, full = twt_json_check(u, n, TWT_RECORD_DEPTH, NULL);
  members a, b;
  int pr;

  take(&a, NULL, 0, 0, 0);
  pr = twt_json_check_prefix(u, len, TWT_RECORD_DEPTH, &end, &spread, &bad,
                             take, &a);
  k = n;
  while (k > 0 && is_ws(u[k - 1]))
    k--;
  if (full == 0 && (pr != 0 || end != k))
    fail_msg("valid <%.*s> (+%zu bytes): prefix rc %d end %zu", (int)n, u,
             len - n, pr, end);
  if (pr != 0)
    return;
  assert_true(end <= len);
  if (twt_json_check(u, end, TWT_RECORD_DEPTH, NULL) != 0)
    fail_msg("prefix took <%.*s> that is not valid", (int)end, u);
  if (full != 0 && end <= n) {
    size_t i = end;
    while (i < n && is_ws(u[i]))
      i++;
    assert_true(i < n);             /* something after it: not one value */
  }
  assert_int_equal(spread, spread_of(u, end));
  take(&b, NULL, 0, 0, 0);
  assert_int_equal(twt_json_check_ex(u, end, TWT_RECORD_DEPTH, NULL, take,
                                     &b), 0);
  assert_int_equal(a.n, b.n);
  assert_int_equal(a.over, b.over);
  for (size_t i = 0; i < a.n; i++) {
    assert_int_equal(a.m[i].klen, b.m[i].klen);
    assert_memory_equal(a.m[i].key, b.m[i].key,
                        a.m[i].klen < 64 ? a.m[i].klen : 64);
    assert_int_equal(a.m[i].voff, b.m[i].voff);
    assert_int_equal(a.m[i].vlen, b.m[i].vlen);
  }
}

static void test_prefix_check(void **state)
{
  static const char *const after[] = {
    "", ",\n{\"a\":1}", "]", "  ,\r\n", "x", "\"", "\\", "}", ",]}\n",
  };
  (void)state;

  rng = tt_seed();
  for (unsigned i = 0; i < 20000; i++) {
    tu_text b = { 0 };
    size_t n;
    gen_record(&b, rnd(3) == 0);
    if (rnd(2))
      damage(&b);
    if (rnd(8) == 0)
      damage(&b);
    n = b.len;
    for (size_t s = 0; s < sizeof after / sizeof *after; s++) {
      b.len = n;
      tu_text_puts(&b, after[s]);
      /* an exact copy: the sanitizers see a read past the end */
      char *u = malloc(b.len ? b.len : 1);
      assert_non_null(u);
      memcpy(u, b.p, b.len);
      prefix_agrees(u, b.len, n);
      free(u);
    }
    free(b.p);
  }
}

/* The general reader yields each record spread over lines without the
 * whitespace between its tokens (the whitespace runs of a pretty-printed
 * record taken a word at a time), the others as they are, fed in chunks
 * of every size, and drops the invalid ones. */
static void test_scan_compacts(void **state)
{
  (void)state;

  rng = tt_seed();
  for (unsigned i = 0; i < 3000; i++) {
    tu_text doc = { 0 }, want = { 0 };
    unsigned n = 1 + rnd(6), valid = 0, got = 0;
    size_t chunk = rnd(3) == 0 ? 1 + rnd(40) : 1 + rnd(5000), off = 0;
    twt_scan *s = twt_scan_new(1 << 20, 1 << 16);
    assert_non_null(s);

    tu_text_puts(&doc, "{\"traceEvents\": [\n  ");
    for (unsigned k = 0; k < n; k++) {
      tu_text r = { 0 };
      gen_record(&r, rnd(4) != 0);
      if (rnd(5) == 0) {            /* invalid, its nesting kept: the
                                       scanner finds its end and goes on */
        char *ts = strstr(r.p, "\"ts\":");
        assert_non_null(ts);
        ts[5] = rnd(2) ? 'x' : '\x01';
      }
      if (twt_json_check(r.p, r.len, TWT_RECORD_DEPTH, NULL) == 0) {
        char *cp = malloc(r.len + 1);
        assert_non_null(cp);
        if (spread_of(r.p, r.len))     /* spread: compacted; else as is */
          tu_text_put(&want, cp, twt_json_compact(cp, r.p, r.len));
        else
          tu_text_put(&want, r.p, r.len);
        tu_text_put(&want, "\n", 1);
        free(cp);
        valid++;
      }
      if (k)
        tu_text_puts(&doc, ",\n  ");
      tu_text_put(&doc, r.p, r.len);
      free(r.p);
    }
    tu_text_puts(&doc, "\n  ],\n  \"x\": 1\n}\n");
    {
      tu_text have = { 0 };
      while (off < doc.len) {
        size_t m = doc.len - off < chunk ? doc.len - off : chunk;
        char *copy = malloc(m);     /* exact: reads past it are seen */
        twt_scan_rec rec;
        int ready;
        ptrdiff_t used;
        assert_non_null(copy);
        memcpy(copy, doc.p + off, m);
        used = twt_scan_feed(s, copy, m, &rec, &ready);
        assert_true(used >= 0);
        if (ready && !rec.dropped) {
          tu_text_put(&have, rec.text, rec.len);
          tu_text_put(&have, "\n", 1);
          got++;
        }
        free(copy);
        off += (size_t)used;
      }
      assert_int_equal(twt_scan_end(s), 0);
      if (got != valid || have.len != want.len ||
          (want.len && memcmp(have.p, want.p, want.len) != 0))
        fail_msg("chunks of %zu: %u records <%.*s>, want %u <%.*s>", chunk,
                 got, (int)have.len, have.p, valid, (int)want.len, want.p);
      assert_int_equal(twt_scan_info(s)->records, valid);
      assert_int_equal(twt_scan_info(s)->invalid, n - valid);
      free(have.p);
    }
    twt_scan_free(s);
    free(doc.p);
    free(want.p);
  }
}

/* ----------------------------------------------- the reader, both ways */

typedef struct item_copy {
  int kind;
  char *text;
  size_t len;
  uint64_t offset, line;
  twt_rec rec;
  int has_rec;
} item_copy;

typedef struct reading {
  item_copy *items;
  size_t n;
  int rc;
  char err[512];
  struct twt_read_info info;
  char tail[256];
} reading;

static void read_all(const char *path, unsigned flags, size_t max_record,
                     int lines_only, reading *out)
{
  struct twt_read_options o = { max_record, flags };
  twt_reader *r;
  twt_read_item it;
  size_t cap = 0;
  int rc;

  memset(out, 0, sizeof *out);
  if (lines_only)
    assert_int_equal(setenv("TWT_READ_LINES_ONLY", "1", 1), 0);
  else
    assert_int_equal(unsetenv("TWT_READ_LINES_ONLY"), 0);
  rc = twt_reader_open(&r, path, &o, out->err, sizeof out->err);
  assert_int_equal(unsetenv("TWT_READ_LINES_ONLY"), 0);
  assert_int_equal(rc, 0);
  while ((rc = twt_reader_next(r, &it)) > 0) {
    item_copy *c;
    if (out->n == cap) {
      cap = cap ? 2 * cap : 64;
      out->items = realloc(out->items, cap * sizeof *out->items);
      assert_non_null(out->items);
    }
    c = &out->items[out->n++];
    memset(c, 0, sizeof *c);
    c->kind = it.kind;
    c->len = it.len;
    c->offset = it.offset;
    c->line = it.line;
    if (it.text) {
      c->text = malloc(it.len + 1);
      assert_non_null(c->text);
      memcpy(c->text, it.text, it.len);
    }
    if (it.rec) {
      c->rec = *it.rec;
      c->rec.text = NULL;
      c->has_rec = 1;
    }
  }
  out->rc = rc;
  if (rc < 0)
    snprintf(out->err, sizeof out->err, "%s", twt_reader_error(r));
  out->info = *twt_reader_info(r);
  if (out->info.tail)
    snprintf(out->tail, sizeof out->tail, "%.*s", (int)out->info.tail_len,
             out->info.tail);
  out->info.tail = NULL;
  out->info.doc = NULL;
  twt_reader_close(r);
}

static void reading_free(reading *g)
{
  for (size_t i = 0; i < g->n; i++)
    free(g->items[i].text);
  free(g->items);
}

static void assert_same_reading(const reading *a, const reading *b,
                                const char *path)
{
  if (a->rc != b->rc || strcmp(a->err, b->err) != 0)
    fail_msg("%s: rc %d <%s> one pass, %d <%s> by lines", path, a->rc,
             a->err, b->rc, b->err);
  assert_int_equal(a->n, b->n);
  for (size_t i = 0; i < a->n; i++) {
    const item_copy *x = &a->items[i], *y = &b->items[i];
    if (x->kind != y->kind || x->len != y->len || x->offset != y->offset ||
        x->line != y->line)
      fail_msg("%s: item %zu: kind %d len %zu offset %" PRIu64 " line %"
               PRIu64 " one pass; %d %zu %" PRIu64 " %" PRIu64 " by lines",
               path, i, x->kind, x->len, x->offset, x->line, y->kind,
               y->len, y->offset, y->line);
    assert_int_equal(!x->text, !y->text);
    if (x->text)
      assert_memory_equal(x->text, y->text, x->len);
    assert_int_equal(x->has_rec, y->has_rec);
    if (x->has_rec)
      assert_memory_equal(&x->rec, &y->rec, sizeof x->rec);
  }
  assert_memory_equal(&a->info, &b->info, sizeof a->info);
  assert_string_equal(a->tail, b->tail);
}

/* A file in the library's layout with the lines a crash, a hand or
 * another writer leaves (clean: valid but for one odd separator, so
 * that info.strict tells the ways apart too). */
static void gen_layout_file(tu_text *b, int clean)
{
#define SEP(lit) { lit, sizeof lit - 1 }
  static const struct { const char *s; size_t n; } seps[] = {
    SEP(",\n"), SEP(",\n"), SEP(",\n"), SEP(",\n"), SEP("\n"),
    SEP(" ,  \n"), SEP(",\r\n"), SEP(",\t\n"), SEP(",\0\0\0\n"),
    SEP(",]\n"), SEP(",]}\n"), SEP(""), SEP(","), SEP("\n,"),
  };
#undef SEP
  unsigned n = 50 + rnd(400), obj = rnd(2), odd = rnd(n);

  tu_text_puts(b, obj ? "{\"traceEvents\":[\n" : "[\n");
  tu_text_puts(b, TT_FIRST_LINES);   /* as the library begins a file */
  for (unsigned i = 0; i < n; i++) {
    size_t at = b->len;
    unsigned s;
    gen_record(b, !clean && i > 0 && rnd(12) == 0);
    if (rnd(6) == 0) {              /* a long one: across the chunks */
      b->len--;
      tu_text_puts(b, ",\"pad\":\"");
      for (unsigned k = rnd(6000); k > 0; k--)
        tu_text_put(b, k % 61 == 0 ? "\\\"" : "y", k % 61 == 0 ? 2 : 1);
      tu_text_puts(b, "\"}");
    }
    if (!clean && i > 0 && rnd(10) == 0) {  /* damaged, after the first */
      tu_text d = { 0 };
      tu_text_put(&d, b->p + at, b->len - at);
      damage(&d);
      b->len = at;
      tu_text_put(b, d.p, d.len);
      free(d.p);
    }
    if (i + 1 == n)
      break;
    s = !clean || i == odd ? rnd(sizeof seps / sizeof *seps) : 0;
    tu_text_put(b, seps[s].s, seps[s].n);
  }
  if (clean || rnd(4))
    tu_text_puts(b, obj ? "\n]}\n" : "\n]\n");
  else
    b->len -= rnd((unsigned)(b->len / 3));   /* cut */
}

static void test_reader_both_ways(void **state)
{
  char *dir = tt_make_dir(), *path = tt_in_dir(dir, "layout.json");
  static const unsigned flags[] = {
    0, TWT_READ_MEMBERS, TWT_READ_DROPPED, TWT_READ_DROPPED |
    TWT_READ_MEMBERS, TWT_READ_LAYOUT | TWT_READ_DROPPED,
  };
  unsigned layout = 0, strict = 0;
  (void)state;

  rng = tt_seed();
  for (unsigned f = 0; f < 60; f++) {
    tu_text b = { 0 };
    size_t max_record = rnd(3) == 0 ? 4096 : 0;
    shallow = f % 2;
    gen_layout_file(&b, f % 2);
    tt_write_bytes(path, b.p, b.len);
    for (size_t k = 0; k < sizeof flags / sizeof *flags; k++) {
      reading one, lines;
      read_all(path, flags[k], max_record, 0, &one);
      read_all(path, flags[k], max_record, 1, &lines);
      assert_same_reading(&one, &lines, path);
      if (k == 0 && !one.info.general)
        layout++;                   /* the layout reader's */
      if (k == 0 && one.info.strict)
        strict++;
      reading_free(&one);
      reading_free(&lines);
    }
    free(b.p);
  }
  assert_true(layout >= 20);        /* the path under test was taken */
  assert_true(strict >= 5);         /* and some files were exactly valid */
  free(path);
  tt_remove_dir(dir);
}

/* ------------------------------------------------------- timestamps */

static void test_us_to_ns(void **state)
{
  (void)state;

  rng = tt_seed();
  for (unsigned i = 0; i < 200000; i++) {
    char t[64];
    unsigned digits = 1 + rnd(15), decimals = rnd(5), neg = rnd(8) == 0,
             quoted = rnd(10) == 0, zeros = rnd(6) == 0 ? rnd(3) : 0;
    uint64_t whole = 0, frac = 0, fscale = 1;
    int64_t ns = 0, want;
    size_t n = 0;

    if (quoted)
      t[n++] = '"';
    if (neg)
      t[n++] = '-';
    for (unsigned k = 0; k < zeros; k++)
      t[n++] = '0';
    for (unsigned k = 0; k < digits; k++) {
      unsigned d = rnd(10);
      whole = whole * 10 + d;
      t[n++] = (char)('0' + d);
    }
    if (decimals) {
      t[n++] = '.';
      for (unsigned k = 0; k < decimals; k++) {
        unsigned d = rnd(10);
        t[n++] = (char)('0' + d);
        if (k < 3) {
          frac = frac * 10 + d;
          fscale *= 10;
        }
      }
    }
    if (quoted)
      t[n++] = '"';
    while (fscale < 1000) {
      frac *= 10;
      fscale *= 10;
    }
    want = (int64_t)(whole * 1000 + frac);
    if (neg) {                      /* rounded down: past the nanosecond,
                                       one more below zero */
      int below = 0;
      for (size_t k = 0; k < n; k++)
        if (t[k] == '.') {
          for (size_t j = k + 4; j < n; j++)
            below |= t[j] >= '1' && t[j] <= '9';
          break;
        }
      want = -want - below;
    }
    if (twt_rec_us_to_ns(t, n, &ns) != 0 || ns != want)
      fail_msg("%.*s: %" PRId64 ", want %" PRId64, (int)n, t, ns, want);
  }
}

/* ------------------------------------------------ the streaming checker */

static int jst_out(void *arg, const char *p, size_t n)
{
  tu_text_put(arg, p, n);
  return 0;
}

/* twt_jstream, fed the text in random pieces, answers what
 * twt_json_check answers (members: "key": value, as the value of an
 * object), and writes what twt_json_compact writes. */
static void test_stream_check(void **state)
{
  (void)state;

  rng = tt_seed();
  for (unsigned i = 0; i < 30000; i++) {
    tu_text b = { 0 }, out = { 0 }, obj = { 0 };
    int as_member = rnd(2), want, got, rc = 0;
    twt_jstream j;
    size_t at = 0;

    if (as_member)
      gen_member(&b, 0, rnd(3) == 0);
    else if (rnd(3))
      gen_record(&b, rnd(3) == 0);
    else
      gen_value(&b, 0, rnd(3) == 0);
    if (rnd(2))
      damage(&b);
    if (rnd(8) == 0)
      damage(&b);
    if (as_member) {
      tu_text_puts(&obj, "{");
      tu_text_put(&obj, b.p, b.len);
      tu_text_puts(&obj, "}");
      want = twt_json_check(obj.p, obj.len, TWT_JSTREAM_DEPTH, NULL);
      if (obj.len == 2 + strspn(obj.p + 1, " \t\r\n"))
        want = -1;                  /* "{}": no member */
    } else {
      want = twt_json_check(b.p ? b.p : "", b.len, TWT_JSTREAM_DEPTH, NULL);
    }
    twt_jstream_init(&j, as_member);
    while (at < b.len && rc == 0) {
      size_t n = 1 + rnd(rnd(4) ? 8 : 300);
      if (n > b.len - at)
        n = b.len - at;
      rc = twt_jstream_feed(&j, b.p + at, n, jst_out, &out);
      at += n;
    }
    got = rc == 0 ? twt_jstream_end(&j) : -1;
    if ((got == 0) != (want == 0))
      fail_msg("stream %d, checker %d (member %d): %.*s", got, want, as_member,
               (int)b.len, b.p);
    if (want == 0) {
      char *c = malloc(b.len + 1);
      size_t cl;
      assert_non_null(c);
      if (as_member) {
        cl = twt_json_compact(c, obj.p + 1, obj.len - 2);
      } else {
        cl = twt_json_compact(c, b.p, b.len);
      }
      if (cl != out.len || memcmp(c, out.p, cl) != 0)
        fail_msg("compacted: %.*s\nwant %.*s", (int)out.len, out.p,
                 (int)cl, c);
      free(c);
    }
    free(b.p);
    free(out.p);
    free(obj.p);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_prefix_check),
    cmocka_unit_test(test_scan_compacts),
    cmocka_unit_test(test_reader_both_ways),
    cmocka_unit_test(test_us_to_ns),
    cmocka_unit_test(test_stream_check),
  };

  tt_deadline("test_jsonscan_fast");
  return cmocka_run_group_tests(tests, NULL, NULL);
}
