/* test_format_string.c -- the formatter's string writers, called directly
 *
 * src/format_string.h: escape (and tw__escape_slow behind it),
 * tw__escaped_len, tw__utf8_cut and str_len.  The oracle is the tests' own model
 * (format_test.c: ref_replace, ref_cut, written from Unicode chapter 3
 * apart from the library) followed by RFC 8259's escapes; the Unicode
 * standard's own examples of U+FFFD substitution (tables 3-8 to 3-12)
 * are checked word for word.  Every escaped string is also read back
 * through the strict JSON checker, and escape must write nothing past
 * the end it returns (its room is 6 bytes per input byte).  Each string
 * goes at every offset from 0 to 40, so that the byte to escape or check
 * falls in every chunk the fast paths take (16, 8, 4 bytes, the last
 * three) and at every place in it.  Random strings from a printed seed
 * (TW_TEST_SEED replays it), 200,000 divided by TW_TEST_SCALE.  The
 * program is linked with the library's internals (libtw.la).
 */
#include "format_test.h"
#include "format_string.h"

#define GUARD 16
#define GUARD_BYTE 'Z'
#define MAX_IN 512

/* RFC 8259's escape of an ASCII byte at out; returns its length. */
static size_t json_escape_ascii(unsigned c, char *out)
{
  static const char short_form[] = "\"\"\\\\\bb\ff\nn\rr\tt";

  for (size_t i = 0; i < sizeof short_form - 1; i += 2)
    if ((unsigned char)short_form[i] == c) {
      out[0] = '\\';
      out[1] = short_form[i + 1];
      return 2;
    }
  if (c < 0x20)
    return (size_t)snprintf(out, 7, "\\u%04x", c);
  out[0] = (char)c;
  return 1;
}

/* What escape must write for s[0..n): the model's replacement, then the
 * ASCII escapes (a byte of 0x80 and above is then part of a character). */
static size_t expected(const unsigned char *s, size_t n, char *out,
                       unsigned char *replaced, size_t *rn, int *bad)
{
  size_t o = 0;

  *rn = ref_replace(s, n, replaced, bad);
  for (size_t i = 0; i < *rn; i++)
    o += json_escape_ascii(replaced[i], out + o);
  return o;
}

static void check_escape(const unsigned char *s, size_t n)
{
  char buf[6 * MAX_IN + 2 + GUARD], want[6 * MAX_IN], err[200], show[800];
  unsigned char model[3 * MAX_IN];
  size_t wn, mn, len, dn;
  unsigned replaced = 0;
  int bad, invalid = 0;
  const char *decoded;
  char *end;
  jc_doc *d;

  assert_true(n <= MAX_IN);
  wn = expected(s, n, want, model, &mn, &bad);
  shown((const char *)s, n, show, sizeof show);
  memset(buf, GUARD_BYTE, sizeof buf);
  end = escape(buf + 1, s, n, 0, &replaced);
  len = (size_t)(end - (buf + 1));
  if (len != wn || memcmp(buf + 1, want, wn) != 0)
    fail_msg("escape(\"%s\"): wrote \"%.*s\", want \"%.*s\"", show,
             (int)len, buf + 1, (int)wn, want);
  for (char *p = end; p < buf + sizeof buf; p++)
    if (*p != GUARD_BYTE)
      fail_msg("escape(\"%s\"): wrote past its end", show);
  if (replaced != (unsigned)bad)
    fail_msg("escape(\"%s\"): replaced %u", show, replaced);
  if (tw__escaped_len(s, n, &invalid) != wn || invalid != bad)
    fail_msg("escaped_len(\"%s\") is not the length escape wrote", show);

  /* Read back: the model's text, as one strict JSON string. */
  buf[0] = '"';
  *end = '"';
  if (!(d = jc_parse(buf, len + 2, err, sizeof err)))
    fail_msg("escape(\"%s\"): not a JSON string: %s", show, err);
  decoded = jc_str(d, jc_root(d), &dn);
  if (!decoded || dn != mn || memcmp(decoded, model, mn) != 0)
    fail_msg("escape(\"%s\"): reads back otherwise", show);
  jc_free(d);

  /* Refused, and nothing counted, when asked to refuse. */
  replaced = 0;
  end = escape(buf + 1, s, n, TW_OPT_REJECT_INVALID_UTF8, &replaced);
  if ((end == NULL) != bad || replaced != 0)
    fail_msg("escape(\"%s\", reject): %s", show,
             end ? "not refused" : "refused");
  if (end && ((size_t)(end - (buf + 1)) != wn ||
              memcmp(buf + 1, want, wn) != 0))
    fail_msg("escape(\"%s\", reject): other bytes", show);
}

/* s[0..n) after every number of plain bytes from 0 to 40, and before 0
 * or 17 of them. */
static void check_everywhere(const unsigned char *s, size_t n)
{
  unsigned char in[MAX_IN];

  for (size_t pre = 0; pre <= 40; pre++)
    for (size_t post = 0; post <= 17; post += 17) {
      memset(in, 'x', pre);
      memcpy(in + pre, s, n);
      memset(in + pre + n, 'y', post);
      check_escape(in, pre + n + post);
    }
}

static void test_every_ascii_byte(void **state)
{
  (void)state;

  check_escape((const unsigned char *)"", 0);
  for (unsigned c = 0; c < 0x80; c++) {
    unsigned char b = (unsigned char)c;
    check_everywhere(&b, 1);
  }
}

/* Unicode 15, section 3.9, "U+FFFD Substitution of Maximal Subparts":
 * the examples of tables 3-8 to 3-12, their input and the code points
 * the standard says they convert to (0xFFFD for each U+FFFD). */
static const struct {
  const char *in;
  const char *out;
} unicode_examples[] = {
  { "\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64",        /* 3-8 */
    "a" U_FFFD U_FFFD U_FFFD "b" U_FFFD "c" U_FFFD U_FFFD "d" },
  { "\xC0\xAF\xE0\x80\xBF\xF0\x81\x82\x41",                         /* 3-9 */
    U_FFFD U_FFFD U_FFFD U_FFFD U_FFFD U_FFFD U_FFFD U_FFFD "A" },
  { "\xED\xA0\x80\xED\xBF\xBF\xED\xAF\x41",                        /* 3-10 */
    U_FFFD U_FFFD U_FFFD U_FFFD U_FFFD U_FFFD U_FFFD U_FFFD "A" },
  { "\xF4\x91\x92\x93\xFF\x41\x80\xBF\x42",                        /* 3-11 */
    U_FFFD U_FFFD U_FFFD U_FFFD U_FFFD "A" U_FFFD U_FFFD "B" },
  { "\xE1\x80\xE2\xF0\x91\x92\xF1\xBF\x41",                        /* 3-12 */
    U_FFFD U_FFFD U_FFFD U_FFFD "A" },
};

static void test_unicode_examples(void **state)
{
  (void)state;

  for (size_t i = 0; i < sizeof unicode_examples / sizeof *unicode_examples;
       i++) {
    const unsigned char *in = (const unsigned char *)unicode_examples[i].in;
    size_t n = strlen(unicode_examples[i].in);
    char out[64];
    unsigned replaced = 0;
    char *end = escape(out, in, n, 0, &replaced);

    assert_int_equal(end - out, strlen(unicode_examples[i].out));
    assert_memory_equal(out, unicode_examples[i].out, end - out);
    assert_int_equal(replaced, 1);
    check_everywhere(in, n);         /* and the model agrees */
  }
}

/* cp in UTF-8 at out (arithmetic of RFC 3629, section 3); the length. */
static size_t utf8_encode(uint32_t cp, unsigned char *out)
{
  if (cp < 0x80) {
    out[0] = (unsigned char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (unsigned char)(0xc0 | cp >> 6);
    out[1] = (unsigned char)(0x80 | (cp & 0x3f));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (unsigned char)(0xe0 | cp >> 12);
    out[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
    out[2] = (unsigned char)(0x80 | (cp & 0x3f));
    return 3;
  }
  out[0] = (unsigned char)(0xf0 | cp >> 18);
  out[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
  out[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
  out[3] = (unsigned char)(0x80 | (cp & 0x3f));
  return 4;
}

/* The code points at the edges of each length and lead byte, valid ones
 * copied as they are; the surrogates and past U+10FFFF (encoded all the
 * same) replaced. */
static void test_code_point_edges(void **state)
{
  static const uint32_t edges[] = {
    0x7f, 0x80, 0x7ff, 0x800, 0xfff, 0x1000, 0xcfff, 0xd000, 0xd7ff,
    0xd800, 0xdbff, 0xdc00, 0xdfff, 0xe000, 0xfffd, 0xffff, 0x10000,
    0x3ffff, 0x40000, 0xfffff, 0x100000, 0x10ffff, 0x110000, 0x1fffff,
  };
  (void)state;

  for (size_t i = 0; i < sizeof edges / sizeof *edges; i++) {
    unsigned char s[8];
    size_t n = utf8_encode(edges[i], s);
    check_everywhere(s, n);
    check_everywhere(s, n - 1);                 /* cut short */
  }
}

/* A random string of what strings are made of: plain ASCII, bytes to
 * escape, valid characters of each length, and junk. */
static size_t random_string(unsigned char *s, size_t max)
{
  static const char *const pieces[] = {
    "abc", "0123456789abcdef", "\"", "\\", "\n", "\x01", "\x1f", "\x7f",
    "\xc3\xa9", "\xe2\x82\xac", "\xed\x9f\xbf", "\xf0\x9f\x98\x80",
    "\xf4\x8f\xbf\xbf", "\x80", "\xbf", "\xc0", "\xc1\xbf", "\xe0\x80",
    "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xf8", "\xff", "\xe2\x82",
  };
  size_t n = 0, want = rn((unsigned)max);

  while (n < want) {
    const char *p = pieces[rn(sizeof pieces / sizeof *pieces)];
    size_t k = strlen(p);
    if (n + k > max)
      break;
    memcpy(s + n, p, k);
    n += k;
  }
  return n;
}

static void test_random_strings(void **state)
{
  unsigned long rounds = tu_scaled(200000UL);
  unsigned char s[MAX_IN];
  (void)state;

  rng = 0x9e3779b97f4a7c15ULL ^ tu_seed("random strings");  /* not 0 */
  for (unsigned long i = 0; i < rounds; i++)
    check_escape(s, random_string(s, i % 8 ? 48 : MAX_IN));
}

/* The cut at max_string: the model's, never inside a character. */
static void test_utf8_cut(void **state)
{
  unsigned char s[MAX_IN + 1];
  unsigned long rounds = tu_scaled(20000UL);
  (void)state;

  rng = 0x9e3779b97f4a7c15ULL ^ tu_seed("cuts");  /* not 0 */
  for (unsigned long i = 0; i < rounds; i++) {
    size_t n = random_string(s, 64);
    s[n] = 0;                           /* s[max] is read: a NUL string */
    for (size_t max = 0; max < n; max++) {
      size_t cut = tw__utf8_cut(s, max);
      if (cut != ref_cut(s, max))
        fail_msg("utf8_cut at %zu: %zu, the model %zu", max, cut,
                 ref_cut(s, max));
      assert_true(cut <= max && cut + 3 >= max);
    }
  }
  /* Five continuation bytes are junk: cut where asked. */
  memcpy(s, "a\x80\x80\x80\x80\x80" "b", 8);
  assert_int_equal(tw__utf8_cut(s, 5), 5);
  memcpy(s, "a\xf0\x9f\x98\x80" "b", 7);
  for (size_t max = 1; max <= 4; max++)
    assert_int_equal(tw__utf8_cut(s, max), 1);
  assert_int_equal(tw__utf8_cut(s, 5), 5);
}

/* str_len is strlen: every length from 0 to 80 at every offset from a
 * 16-byte boundary, the NUL the last byte of a block of its own (so
 * that valgrind and ASan see a read past the block; the SSE2 version
 * reads only aligned chunks, which never cross a page), and bytes of
 * every value before it but NUL. */
static void test_str_len(void **state)
{
  (void)state;
  for (size_t off = 0; off < 16; off++)
    for (size_t n = 0; n <= 80; n++) {
      char *block = malloc(off + n + 1), *s = block + off;
      assert_non_null(block);
      for (size_t i = 0; i < n; i++)
        s[i] = (char)(1 + (i * 37 + off) % 255);
      s[n] = '\0';
      if (str_len(s) != n)
        fail_msg("str_len of %zu bytes at %p: %zu", n, (void *)s,
                 str_len(s));
      free(block);
    }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_every_ascii_byte),
    cmocka_unit_test(test_unicode_examples),
    cmocka_unit_test(test_code_point_edges),
    cmocka_unit_test(test_random_strings),
    cmocka_unit_test(test_utf8_cut),
    cmocka_unit_test(test_str_len),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
