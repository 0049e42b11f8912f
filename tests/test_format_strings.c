/* test_format_strings.c -- what tracewriter writes, by area (format_test.h)
 *
 * Strings: escapes, invalid UTF-8 replaced or refused, every length,
 * embedded NULs, long strings cut or refused, and the library's own names
 * never cut.
 *
 * Read back with the strict JSON checker, field by field
 * (format_test.h).
 */
#include "format_test.h"

/* Invalid UTF-8 and its replacement, maximal subpart by maximal subpart
 * (Unicode chapter 3, "U+FFFD substitution of maximal subparts"). */
static const struct { const char *in; const char *out; } utf8_cases[] = {
  { "\xff", U_FFFD },
  { "\xfe", U_FFFD },
  { "a\xff" "b", "a" U_FFFD "b" },
  { "\xc0\x80", U_FFFD U_FFFD },                  /* overlong NUL */
  { "\xc1\xbf", U_FFFD U_FFFD },
  { "\xe0\x80\xaf", U_FFFD U_FFFD U_FFFD },       /* overlong '/' */
  { "\xed\xa0\x80", U_FFFD U_FFFD U_FFFD },       /* surrogate D800 */
  { "\xed\xbf\xbf", U_FFFD U_FFFD U_FFFD },       /* surrogate DFFF */
  { "\xf4\x90\x80\x80", U_FFFD U_FFFD U_FFFD U_FFFD }, /* > U+10FFFF */
  { "\xf5\x80\x80\x80", U_FFFD U_FFFD U_FFFD U_FFFD },
  { "\xf0\x80\x80", U_FFFD U_FFFD U_FFFD },       /* overlong prefix */
  { "\xf0\x80\x80\x80", U_FFFD U_FFFD U_FFFD U_FFFD },
  { "a\xe2\x82", "a" U_FFFD },                    /* truncated at end */
  { "\xe2\x82" "a", U_FFFD "a" },
  { "\xe2\x82\xe2\x82\xac", U_FFFD "\xe2\x82\xac" },
  { "\xf0\x9f\x98", U_FFFD },
  { "\xf0\x9f\x98" "x", U_FFFD "x" },
  { "\xf0\x9f", U_FFFD },
  { "\xc3", U_FFFD },
  { "\xc3\xc3\xa9", U_FFFD "\xc3\xa9" },
  { "\x80", U_FFFD },
  { "\x80\xbf\x80", U_FFFD U_FFFD U_FFFD },
  { "\xc3\xa9\xa9", "\xc3\xa9" U_FFFD },
  /* Unicode's own example (table 3-8 text). */
  { "\x61\xf1\x80\x80\xe1\x80\xc2\x62\x80\x63\x80\xbf\x64",
    "a" U_FFFD U_FFFD U_FFFD "b" U_FFFD "c" U_FFFD U_FFFD "d" },
  /* Valid edge cases stay as they are. */
  { "\x7f", "\x7f" },
  { "\xc2\x80", "\xc2\x80" },
  { "\xdf\xbf", "\xdf\xbf" },
  { "\xe0\xa0\x80", "\xe0\xa0\x80" },
  { "\xed\x9f\xbf", "\xed\x9f\xbf" },
  { "\xee\x80\x80", "\xee\x80\x80" },
  { "\xef\xbf\xbf", "\xef\xbf\xbf" },
  { "\xef\xbf\xbd", "\xef\xbf\xbd" },
  { "\xf0\x90\x80\x80", "\xf0\x90\x80\x80" },
  { "\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf" },
};

static void test_utf8_replace(void **state)
{
  const size_t nc = sizeof utf8_cases / sizeof utf8_cases[0];
  static sess s;
  tw_stats st;
  uint64_t replaced = 0;
  tw_arg *args = pool_alloc(nc * sizeof *args);
  tw_arg *exp_args = pool_alloc(nc * sizeof *exp_args);
  tw_arg a, ea;
  (void)state;

  assert_non_null(args);
  assert_non_null(exp_args);
  s_open(&s, NULL);
  for (size_t i = 0; i < nc; i++) {
    const char *in = utf8_cases[i].in, *out = utf8_cases[i].out;
    int bad = strcmp(in, out) != 0;
    tw_event ev = mkev_ts('n', in, in, i);
    tw_event ex = mkev_ts('n', out, out, i);
    args[i] = tw_arg_str(in, in);
    exp_args[i] = tw_arg_str(out, out);
    ev.has |= TW_HAS_ID;
    ev.id_scope = in;
    ev.args = &args[i];
    ev.nargs = 1;
    ex.has = ev.has;
    ex.id_scope = out;
    ex.args = &exp_args[i];
    ex.nargs = 1;
    s_emit_as(&s, &ev, &ex);
    /* name, cat, scope, key and value: five strings replaced (a cname is
     * one of the reserved names). */
    replaced += bad ? 5 : 0;
    s_stats(&s, &st);
    assert_int_equal(st.utf8_replaced, replaced);
  }
  /* With an explicit length, in a value only. */
  a = tw_arg_strn("v", "ok\xe2\x82\xac\xe2\x82", 7);
  ea = tw_arg_str("v", "ok\xe2\x82\xac" U_FFFD);
  {
    tw_event ev = mkev_ts('X', "c", "n", 1), ex;
    ev.args = &a;
    ev.nargs = 1;
    ex = ev;
    ex.args = &ea;
    s_emit_as(&s, &ev, &ex);
    replaced++;
  }
  s_stats(&s, &st);
  assert_int_equal(st.utf8_replaced, replaced);
  assert_int_equal(st.rejected, 0);
  s_finish(&s);
  pool_free();
}

static void utf8_reject(const char *optstr)
{
  static const char *const bad[] = { "\xff", "a\xe2\x82", "\xc0\x80",
                                     "\xed\xa0\x80", "\xf4\x90\x80\x80",
                                     "ok\x80" };
  tw_options o;
  static sess s;
  tw_stats st;
  tw_event ev;
  tw_arg a;

  assert_int_equal(tw_options_init(&o), 0);
  if (optstr)
    assert_int_equal(tw_options_parse(&o, optstr, NULL, 0), 0);
  else
    o.flags |= TW_OPT_REJECT_INVALID_UTF8;
  s_open(&s, &o);
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    for (int where = 0; where < 6; where++) {
      ev = mkev_ts('b', "cat", "name", 1);
      ev.has |= TW_HAS_ID;
      a = tw_arg_str("key", "value");
      ev.args = &a;
      ev.nargs = 1;
      switch (where) {
      case 0: ev.name = bad[i]; break;
      case 1: ev.cat = bad[i]; break;
      case 2: a.name = bad[i]; break;
      case 3: a.v.s = bad[i]; break;
      case 4: ev.id_scope = bad[i]; break;
      default: ev.cname = bad[i]; break;
      }
      s_bad(&s, &ev, TW_EUTF8);
    }
  }
  /* Valid multibyte text is not affected. */
  ev = mkev_ts('X', "\xc3\xa9", "\xe6\xbc\xa2", 1);
  a = tw_arg_str("\xf0\x9f\x98\x80", "\xef\xbf\xbd");
  ev.args = &a;
  ev.nargs = 1;
  s_emit(&s, &ev);
  s_stats(&s, &st);
  assert_int_equal(st.utf8_replaced, 0);
  s_finish(&s);
}

static void test_utf8_reject(void **state)
{
  (void)state;
  utf8_reject(NULL);
  utf8_reject("utf8=reject");
}

static void test_escapes_roundtrip(void **state)
{
  static const char *const texts[] = {
    "\"", "\\", "\"\\\"", "/", "\x7f", "a\x7f" "b", "tab\there",
    "\xc3\xa9", "\xe6\xbc\xa2\xe5\xad\x97", "\xf0\x9f\x98\x80",
    "\xef\xbb\xbf" "bom", "</script>", "\\u0041", "\\n", "{\"a\":1}",
    "caf\xc3\xa9 \xe6\xbc\xa2 \xf0\x9f\x98\x80 \"q\" \\ \n\r\t\b\f\x01\x1f",
  };
  enum { NT = sizeof texts / sizeof texts[0] };
  static char controls[32];
  static char one[32][2];
  tw_arg ctrl_arg, each[31], text_args[NT];
  static sess s;
  tw_event ev;
  tw_stats st;
  jc_doc *d;
  char *buf;
  size_t len;
  (void)state;

  for (int c = 1; c < 0x20; c++) {
    controls[c - 1] = (char)c;
    one[c][0] = (char)c;
    each[c - 1] = tw_arg_str(one[c], one[c]);
  }
  controls[31] = '\0';
  s_open(&s, NULL);
  /* All the control characters, in every kind of string. */
  ctrl_arg = tw_arg_str(controls, controls);
  ev = mkev_ts('b', controls, controls, 1);
  ev.has |= TW_HAS_ID;
  ev.id_scope = controls;
  ev.args = &ctrl_arg;
  ev.nargs = 1;
  s_emit(&s, &ev);
  /* Each alone, as keys and values. */
  ev = mkev_ts('X', "c", "each", 2);
  ev.args = each;
  ev.nargs = 31;
  s_emit(&s, &ev);
  for (size_t i = 0; i < NT; i++) {
    text_args[i] = tw_arg_str(texts[i], texts[i]);
    ev = mkev_ts('I', texts[i], texts[i], 3 + i);
    ev.args = &text_args[i];
    ev.nargs = 1;
    s_emit(&s, &ev);
  }
  s_stats(&s, &st);
  assert_int_equal(st.utf8_replaced, 0);
  assert_int_equal(st.strings_truncated, 0);
  d = s_close(&s);
  /* No raw control byte anywhere but the line ends. */
  buf = tu_read_file(s.path, &len);
  for (size_t i = 0; i < len; i++)
    if ((unsigned char)buf[i] < 0x20 && buf[i] != '\n')
      fail_msg("raw control byte 0x%02x at %zu", buf[i], i);
  free(buf);
  s_done(&s, d);
}

/* A copy of s[0..n) in a block of exactly n + 1 bytes (so that AddressSanitizer
 * sees any read past the terminating NUL), freed by pool_free. */
static char *exact_copy(const char *s, size_t n)
{
  char *p = pool_alloc(n + 1);
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

/* Every length of every kind of string the formatter copies in chunks
 * (name, cat, key, value, scope, cname): plain, and with one byte at each
 * place that is special or next to the edge of a class, so that the
 * chunked copy, its overlapping last chunk and the short cases each see a
 * byte to escape or check in every position. */
static void test_strings_every_length(void **state)
{
  static const struct { const char *in, *out; } probe[] = {
    { "\x1f", "\x1f" }, { " ", " " }, { "!", "!" }, { "\"", "\"" },
    { "#", "#" }, { "[", "[" }, { "\\", "\\" }, { "]", "]" },
    { "\x7f", "\x7f" }, { "\x01", "\x01" }, { "\n", "\n" },
    { "\xc3\xa9", "\xc3\xa9" }, { "\xe2\x82\xac", "\xe2\x82\xac" },
    { "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80" },
    { "\x80", U_FFFD }, { "\xff", U_FFFD }, { "\xe2\x82", U_FFFD },
  };
  static const size_t lens[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
                                 13, 14, 15, 16, 17, 23, 24, 25, 31, 32, 33,
                                 63, 64 };
  const size_t np = sizeof probe / sizeof probe[0];
  static sess s;
  tw_stats st;
  uint64_t replaced = 0, ts = 0;
  (void)state;

  s_open(&s, NULL);
  for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
    size_t len = lens[li];
    char in[80], out[80];
    for (size_t pi = 0; pi <= np; pi++) {
      /* pi == np: no probe, a plain string of len bytes. */
      for (size_t pos = 0; pos < (pi < np ? len : 1); pos++) {
        size_t ni = 0, no = 0;
        tw_event ev, ex;
        tw_arg *a = pool_alloc(2 * sizeof *a);
        char *sin, *sout;
        for (size_t i = 0; i < len; i++) {
          if (pi < np && i == pos) {
            size_t k = strlen(probe[pi].in), l = strlen(probe[pi].out);
            memcpy(in + ni, probe[pi].in, k);
            memcpy(out + no, probe[pi].out, l);
            ni += k;
            no += l;
          } else {
            in[ni++] = out[no++] = (char)('a' + (i * 7 + len) % 26);
          }
        }
        sin = exact_copy(in, ni);
        sout = exact_copy(out, no);
        a[0] = tw_arg_str(sin, sin);
        a[1] = tw_arg_str(sout, sout);
        ev = mkev_ts('X', sin, sin, ts++);
        ev.id_scope = sin;
        ev.args = &a[0];
        ev.nargs = 1;
        ex = ev;
        ex.cat = ex.name = ex.id_scope = sout;
        ex.args = &a[1];
        s_emit_as(&s, &ev, &ex);
        if (ni != no || memcmp(in, out, ni) != 0)
          replaced += 5;
      }
    }
  }
  s_stats(&s, &st);
  assert_int_equal(st.utf8_replaced, replaced);
  assert_int_equal(st.strings_truncated, 0);
  s_finish(&s);
  pool_free();
}

/* Names and cats around the size where the head of a record no longer
 * fits the writer's 4 KiB stack buffer with room for every byte escaped,
 * and well past it: plain, and every byte escaped.  The head is then
 * measured first and written in the room left, or in the thread's
 * scratch buffer; the bytes are the same. */
static void test_head_room(void **state)
{
  static sess s;
  tw_stats st;
  uint64_t ts = 0;
  size_t lens[60], nl = 0;
  (void)state;

  for (size_t n = 560; n <= 760; n += 5)
    lens[nl++] = n;
  lens[nl++] = 1000;
  lens[nl++] = 3000;
  lens[nl++] = 9000;
  s_open(&s, NULL);
  for (size_t l = 0; l < nl; l++) {
    size_t len = lens[l];
    char *plain = pool_alloc(len + 1), *ctl = pool_alloc(len + 1);
    tw_event ev;
    for (size_t i = 0; i < len; i++) {
      plain[i] = (char)('a' + i % 26);
      ctl[i] = (char)(1 + i % 31);
    }
    plain[len] = ctl[len] = '\0';
    ev = mkev_ts('X', "bench", plain, ts++);
    s_emit(&s, &ev);
    ev = mkev_ts('X', plain, plain, ts++);
    s_emit(&s, &ev);
    ev = mkev_ts('X', ctl, "n", ts++);
    s_emit(&s, &ev);
    ev = mkev_ts('I', ctl, plain, ts++);
    ev.has |= TW_HAS_TTS | TW_HAS_TDUR | TW_HAS_PID | TW_HAS_TID;
    ev.tts = UINT64_C(1) << 62;       /* the longest times allowed */
    ev.tdur = (UINT64_C(1) << 62) - 1;
    ev.pid = ev.tid = 4294967295;     /* the longest ids allowed */
    s_emit(&s, &ev);
  }
  s_stats(&s, &st);
  assert_int_equal(st.strings_truncated, 0);
  assert_int_equal(st.utf8_replaced, 0);
  s_finish(&s);
  pool_free();
}

static void test_embedded_nul(void **state)
{
  static sess s;
  tw_event ev;
  tw_arg args[4];
  jc_doc *d;
  jc_val a;
  size_t n;
  const char *str;
  (void)state;

  args[0] = tw_arg_strn("nul", "a\0b", 3);
  args[1] = tw_arg_strn("only", "\0", 1);
  args[2] = tw_arg_strn("end", "xy\0", 3);
  args[3] = tw_arg_strn("multi", "\xc3\xa9\0\xe6\xbc\xa2\0\0", 8);
  s_open(&s, NULL);
  ev = mkev_ts('X', "c", "nul", 1);
  ev.args = args;
  ev.nargs = 4;
  s_emit(&s, &ev);
  d = s_close(&s);
  a = jc_get(d, s_record(d, 0), "args");
  assert_raw(d, jc_get(d, a, "nul"), "\"a\\u0000b\"");
  assert_raw(d, jc_get(d, a, "only"), "\"\\u0000\"");
  str = jc_str(d, jc_get(d, a, "multi"), &n);
  assert_int_equal(n, 8);
  assert_memory_equal(str, "\xc3\xa9\0\xe6\xbc\xa2\0\0", 8);
  s_done(&s, d);
}

/* max_string 10: where each input is cut (whole characters only). */
static const struct { const char *in; const char *out; } cut_cases[] = {
  { "0123456789", "0123456789" },                      /* exactly: kept */
  { "0123456789abc", "0123456789" },
  { "012345678\xc3\xa9", "012345678" },                /* 2-byte straddles */
  { "01234567\xc3\xa9", "01234567\xc3\xa9" },          /* fits: kept */
  { "01234567\xc3\xa9z", "01234567\xc3\xa9" },
  { "01234567\xe6\xbc\xa2x", "01234567" },             /* 3-byte, 2 in */
  { "012345678\xe6\xbc\xa2x", "012345678" },           /* 3-byte, 1 in */
  { "0123456\xe6\xbc\xa2x", "0123456\xe6\xbc\xa2" },   /* ends at the cut */
  { "012345\xf0\x9f\x98\x80", "012345\xf0\x9f\x98\x80" },   /* fits */
  { "0123456\xf0\x9f\x98\x80", "0123456" },         /* 4-byte, 3 in */
  { "012345\xf0\x9f\x98\x80x", "012345\xf0\x9f\x98\x80" },
  { "0123456\xf0\x9f\x98\x80x", "0123456" },           /* 4-byte, 3 in */
  { "01234567\xf0\x9f\x98\x80", "01234567" },          /* 4-byte, 2 in */
  { "012345678\xf0\x9f\x98\x80", "012345678" },        /* 4-byte, 1 in */
  { "\xe6\xbc\xa2\xe6\xbc\xa2\xe6\xbc\xa2\xe6\xbc\xa2",
    "\xe6\xbc\xa2\xe6\xbc\xa2\xe6\xbc\xa2" },
  { "\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xf0\x9f\x98\x80",
    "\xf0\x9f\x98\x80\xf0\x9f\x98\x80" },
  /* Invalid input is cut first, then replaced. */
  { "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",
    U_FFFD U_FFFD U_FFFD U_FFFD U_FFFD U_FFFD U_FFFD U_FFFD U_FFFD U_FFFD },
  { "012345678\xe2\x82\xac", "012345678" },
};

/* The cases above are for max_string 10; the tests use 64 (the smallest
 * max_string allowed, TW_MIN_MAX_STRING) and put this 54-byte prefix
 * before each. */
#define CUT_PREFIX "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz01"
#define CUT_PREFIX_LEN (sizeof CUT_PREFIX - 1)
#define CUT_MAX 64

static char *prefixed(const char *str)
{
  size_t n = strlen(str);
  char *p = pool_alloc(n + CUT_PREFIX_LEN + 1);
  memcpy(p, CUT_PREFIX, CUT_PREFIX_LEN);
  memcpy(p + CUT_PREFIX_LEN, str, n + 1);
  return p;
}

static void test_long_strings_truncate(void **state)
{
  enum { NC = sizeof cut_cases / sizeof cut_cases[0] };
  tw_options o;
  static sess s;
  tw_stats st;
  uint64_t truncated = 0;
  tw_arg args[2], exp_args[2];
  tw_arg keep_args[NC][2], keep_exp[NC][2];
  (void)state;

  assert_int_equal(tw_options_init(&o), 0);
  o.max_string = CUT_MAX;
  o.process_name = "p";
  s_open(&s, &o);
  s_stats(&s, &st);
  assert_int_equal(st.strings_truncated, 0);
  for (size_t i = 0; i < NC; i++) {
    const char *in, *out;
    int cut;
    tw_event ev, ex;
    in = prefixed(cut_cases[i].in);
    out = prefixed(cut_cases[i].out);
    cut = strlen(in) > CUT_MAX;
    ev = mkev_ts('b', in, in, i);
    ex = mkev_ts('b', out, out, i);
    keep_args[i][0] = tw_arg_str(in, in);
    keep_args[i][1] = tw_arg_strn("n", in, strlen(in));
    keep_exp[i][0] = tw_arg_str(out, out);
    keep_exp[i][1] = tw_arg_str("n", out);
    ev.has |= TW_HAS_ID;
    ev.id_scope = in;
    ev.args = keep_args[i];
    ev.nargs = 2;
    ex.has = ev.has;
    ex.id_scope = out;
    ex.args = keep_exp[i];
    ex.nargs = 2;
    s_emit_as(&s, &ev, &ex);
    /* name, cat, scope, key, two values */
    truncated += cut ? 6 : 0;
    s_stats(&s, &st);
    assert_int_equal(st.strings_truncated, truncated);
  }
  /* A long arg key and value next to short ones. */
  args[0] = tw_arg_str("short", CUT_PREFIX "0123456789ABCDEFGHIJKLMN");
  args[1] = tw_arg_int(CUT_PREFIX "0123456789ABCDEFGHIJKLMN", 1);
  exp_args[0] = tw_arg_str("short", CUT_PREFIX "0123456789");
  exp_args[1] = tw_arg_int(CUT_PREFIX "0123456789", 1);
  {
    tw_event ev = mkev_ts('X', "c", "n", 1), ex;
    ev.args = args;
    ev.nargs = 2;
    ex = ev;
    ex.args = exp_args;
    s_emit_as(&s, &ev, &ex);
  }
  truncated += 2;
  s_stats(&s, &st);
  assert_int_equal(st.strings_truncated, truncated);
  assert_int_equal(st.rejected, 0);
  s_finish(&s);
  pool_free();
}

static void long_reject(const char *optstr)
{
  tw_options o;
  static sess s;
  tw_event ev;
  tw_arg a;
  tw_stats st;
  static const char *const longs[] = {
    CUT_PREFIX "0123456789a", CUT_PREFIX "012345678\xc3\xa9",
    CUT_PREFIX "\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xf0\x9f\x98\x80" };

  assert_int_equal(tw_options_init(&o), 0);
  o.process_name = "p";
  if (optstr) {
    assert_int_equal(tw_options_parse(&o, optstr, NULL, 0), 0);
  } else {
    o.max_string = CUT_MAX;
    o.flags |= TW_OPT_REJECT_LONG_STRINGS;
  }
  assert_int_equal(o.max_string, CUT_MAX);
  s_open(&s, &o);
  for (size_t i = 0; i < sizeof longs / sizeof longs[0]; i++) {
    for (int where = 0; where < 7; where++) {
      ev = mkev_ts('n', "cat", "name", 1);
      ev.has |= TW_HAS_ID;
      ev.flags |= TW_EV_ID2_LOCAL;
      a = tw_arg_str("key", "value");
      ev.args = &a;
      ev.nargs = 1;
      switch (where) {
      case 0: ev.name = longs[i]; break;
      case 1: ev.cat = longs[i]; break;
      case 2: a.name = longs[i]; break;
      case 3: a.v.s = longs[i]; break;
      case 4: a = tw_arg_strn("key", longs[i], strlen(longs[i])); break;
      case 5: ev.id_scope = longs[i]; break;
      default: ev.cname = longs[i]; break;
      }
      s_bad(&s, &ev, TW_ETOOLONG);
    }
  }
  /* Exactly max_string is fine. */
  ev = mkev_ts('X', CUT_PREFIX "0123456789", CUT_PREFIX "01234567\xc3\xa9",
               1);
  a = tw_arg_strn(CUT_PREFIX "0123456789",
                  CUT_PREFIX "\xf0\x9f\x98\x80\xe6\xbc\xa2\xc3\xa9z", CUT_MAX);
  ev.args = &a;
  ev.nargs = 1;
  s_emit(&s, &ev);
  s_stats(&s, &st);
  assert_int_equal(st.strings_truncated, 0);
  s_finish(&s);
}

static void test_long_strings_reject(void **state)
{
  (void)state;
  long_reject(NULL);
  long_reject("max_string=64,long=reject");
}

/* The head's strings are cut before it is written, but their faults
 * still come in the order the record holds them (tw_emit(3)): a name
 * refused for its UTF-8 before a cat too long, a name too long before a
 * cat refused for its UTF-8, and a string's length before its own UTF-8;
 * for the common shapes and the others, with the room of a whole slot
 * and of the last bytes of one (the events between fill it unevenly). */
static void test_head_faults_order(void **state)
{
  static sess s;
  tw_options o;
  tw_stats st;
  tw_event ev;
  uint64_t ts = 0;
  const char *bad = "bad\xff", *longer = CUT_PREFIX "0123456789a";
  const char *bad_longer = CUT_PREFIX "\xff" "123456789a";
  static const struct {
    int name_bad, cat_bad;              /* 0 fine, 1 bad UTF-8, 2 long, 3 both */
    int code;
  } cases[] = {
    { 1, 2, TW_EUTF8 }, { 2, 1, TW_ETOOLONG }, { 0, 3, TW_ETOOLONG },
    { 3, 0, TW_ETOOLONG }, { 1, 1, TW_EUTF8 }, { 0, 2, TW_ETOOLONG },
  };
  const char *pick[4] = { "fine", bad, longer, bad_longer };
  (void)state;

  assert_int_equal(tw_options_init(&o), 0);
  o.process_name = "p";
  assert_int_equal(tw_options_parse(&o, "max_string=64,long=reject,"
                                    "utf8=reject,buffer=4096", NULL, 0), 0);
  s_open(&s, &o);
  for (int round = 0; round < 40; round++)
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
      ev = mkev_ts(round % 2 ? 'X' : 'n', pick[cases[i].cat_bad],
                   pick[cases[i].name_bad], ts++);
      if (ev.ph == 'n') {
        ev.has |= TW_HAS_ID;
        ev.id = 1;
      }
      s_bad(&s, &ev, cases[i].code);
      /* A good event of a length that moves the slot's end. */
      ev = mkev_ts('X', "c", CUT_PREFIX + round % 50, ts++);
      s_emit(&s, &ev);
    }
  s_stats(&s, &st);
  assert_int_equal(st.strings_truncated, 0);
  s_finish(&s);
}


static void test_library_names_not_cut(void **state)
{
  tw_options o;
  static sess s;
  tw_event ev;
  tw_arg a_tsi = tw_arg_int("sort_index", 1);
  tw_arg a_pl = tw_arg_str("labels", "l");
  char err[200];
  int e = 0;
  (void)state;

  /* Below the floor: refused, by the string and by the struct. */
  assert_int_equal(tw_options_init(&o), 0);
  assert_int_equal(tw_options_parse(&o, "max_string=63", err, sizeof err),
                   TW_EOPTION);
  assert_non_null(strstr(err, "max_string"));
  o.max_string = TW_MIN_MAX_STRING - 1;
  assert_null(tw_open("/nonexistent-dir-tw/x.json", &o, &e));
  assert_int_equal(e, TW_EOPTION);

  /* At the floor, rejecting: the library's names still go through. */
  assert_int_equal(tw_options_init(&o), 0);
  assert_int_equal(tw_options_parse(&o, "max_string=64,long=reject", NULL,
                                    0), 0);
  o.process_name = "p";
  s_open(&s, &o);
  ev = mkev('M', NULL, "thread_sort_index");
  ev.args = &a_tsi;
  ev.nargs = 1;
  S_CALL(&s, &ev, tw_thread_sort_index(s.w, 1));
  ev = mkev('M', NULL, "process_labels");
  ev.args = &a_pl;
  ev.nargs = 1;
  S_CALL(&s, &ev, tw_process_labels(s.w, "l"));
  s_finish(&s);
}

/* After a failed assertion: free what the test left. */

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(test_utf8_replace, teardown),
    cmocka_unit_test_teardown(test_utf8_reject, teardown),
    cmocka_unit_test_teardown(test_escapes_roundtrip, teardown),
    cmocka_unit_test_teardown(test_strings_every_length, teardown),
    cmocka_unit_test_teardown(test_head_room, teardown),
    cmocka_unit_test_teardown(test_embedded_nul, teardown),
    cmocka_unit_test_teardown(test_long_strings_truncate, teardown),
    cmocka_unit_test_teardown(test_long_strings_reject, teardown),
    cmocka_unit_test_teardown(test_head_faults_order, teardown),
    cmocka_unit_test_teardown(test_library_names_not_cut, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
