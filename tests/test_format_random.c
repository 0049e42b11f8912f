/* test_format_random.c -- what tracewriter writes, by area (format_test.h)
 *
 * Random events against a reference: thousands of events of every phase
 * with random strings, args and options, each written or refused as a
 * reference model of the rules says, checked field by field, and the stats
 * counted.
 *
 * Read back with the strict JSON checker, field by field
 * (format_test.h).
 */
#include "format_test.h"

/* --------------------------------------------------------------- fuzz */

typedef struct fz_counts {
  uint64_t truncated, replaced;
} fz_counts;

/* What the writer must make of s[0..n) under max_string max. */
static const char *ref_string(const char *s, size_t n, size_t max,
                              size_t *outn, fz_counts *c)
{
  unsigned char *out;
  int bad;

  if (n > max) {
    n = ref_cut((const unsigned char *)s, max);
    c->truncated++;
  }
  out = pool_alloc(3 * n + 1);
  *outn = ref_replace((const unsigned char *)s, n, out, &bad);
  out[*outn] = '\0';
  c->replaced += (unsigned)bad;
  return (const char *)out;
}

static const char *const fz_pieces_ok[] = {
  "a", "Z", " ", "\xc3\xa9", "\xe6\xbc\xa2", "\xf0\x9f\x98\x80", "\n", "\"",
  "\\", "\x01", "\x1f", "\x7f", "\xef\xbf\xbf", "\xf4\x8f\xbf\xbf", "/",
  "\t", "\xed\x9f\xbf",
};
static const char *const fz_pieces_bad[] = {
  "\xff", "\xc0\x80", "\xed\xa0\x80", "\xe2\x82", "\xf0\x9f\x98", "\x80",
  "\xf4\x90\x80\x80", "\xc3", "\xe0\x80", "\xf8\x88\x80\x80\x80",
};

/* A random string (NUL-free unless allow_nul), pool-allocated. */
static char *fz_string(size_t *len, int allow_nul)
{
  size_t cap = 512, n = 0, target;
  char *s = pool_alloc(cap + 8);
  unsigned mode = rn(8);

  target = mode == 7 ? 60 + rn(120) : rn(40);
  while (n < target && n < cap - 8) {
    const char *piece;
    char b[2] = { 0, 0 };
    switch (mode) {
    case 0:                          /* printable ASCII */
      b[0] = (char)(0x20 + rn(0x5f));
      piece = b;
      break;
    case 1:                          /* any byte */
      b[0] = (char)rn(256);
      if (!b[0] && !allow_nul)
        b[0] = 'x';
      if (!b[0]) {
        s[n++] = '\0';
        continue;
      }
      piece = b;
      break;
    case 2:                          /* controls */
      b[0] = (char)(1 + rn(0x1f));
      piece = b;
      break;
    case 3:
    case 7:                          /* valid text */
      piece = fz_pieces_ok[rn(sizeof fz_pieces_ok / sizeof fz_pieces_ok[0])];
      break;
    default:                         /* text with invalid bits */
      piece = rn(4) ? fz_pieces_ok[rn(sizeof fz_pieces_ok /
                                      sizeof fz_pieces_ok[0])]
                    : fz_pieces_bad[rn(sizeof fz_pieces_bad /
                                       sizeof fz_pieces_bad[0])];
      break;
    }
    memcpy(s + n, piece, strlen(piece));
    n += strlen(piece);
  }
  s[n] = '\0';
  *len = n;
  return s;
}

static const struct { const char *json; int ok; } fz_json[] = {
  { "1", 1 }, { "[1,2,{\"a\":null}]", 1 }, { "{\"x\":\"y\\n\"}", 1 },
  { " true ", 1 }, { "\"\\ud83d\\ude00\"", 1 }, { "{\n\"a\":\n[1,\r\n2]}", 1 },
  { "-0.5e+3", 1 }, { "[]", 1 }, { "\"\xc3\xa9\"", 1 },
  { "[1,]", 0 }, { "tru", 0 }, { "01", 0 }, { "", 0 }, { "{\"a\"}", 0 },
  { "\"\\ud800\"", 0 }, { "[1] x", 0 }, { "\"\xff\"", 0 },
};

static const double fz_doubles[] = {
  0.1, 1e300, -0.5, 5.0, 1e-7, 0.0, DBL_MAX, 5e-324, 1.0 / 3.0, -1e-300,
  123456789.125, 9007199254740993.0,
};

static void test_fuzz(void **state)
{
  static const char phases[] = "XBEIiCbnestfMNODRc";
  const size_t max_string = 64;
  tw_options o;
  static sess s;
  fz_counts c = { 0, 0 };
  tw_stats st;
  size_t ok = 0, bad = 0;
  (void)state;

  rng = 0x9e3779b97f4a7c15ULL ^ tu_seed("test_fuzz");  /* never 0 */
  assert_int_equal(tw_options_init(&o), 0);
  o.max_string = max_string;
  o.buffer_size = 4096;                 /* many commits on the way */
  s_open(&s, &o);
  for (int iter = 0; iter < 2000; iter++) {
    tw_event ev, ex;
    fz_counts ec = { 0, 0 };
    size_t n, on;
    int want = 0;                       /* the expected return code */
    char ph;
    int needs_id, counter, instant, known;
    unsigned r;
    uint64_t lo, hi;
    int rc;

    memset(&ev, 0, sizeof ev);
    r = rn(100);
    ph = r < 3 ? "Z\0x?"[rn(4)] : phases[rn(sizeof phases - 1)];
    ev.ph = ph;
    known = ph && strchr(phases, ph) != NULL;
    needs_id = known && strchr("bnestfNOD", ph) != NULL;
    counter = ph == 'C';
    instant = ph == 'I' || ph == 'i';
    if (rn(100) >= 4)
      ev.name = fz_string(&n, 0);
    if (rn(100) < 60)
      ev.cat = fz_string(&n, 0);
    /* Numbers mostly in range, sometimes not (vr_numbers_refused). */
    if (rn(100) < 70) {
      ev.has |= TW_HAS_TS;
      ev.ts = rnd() >> (rn(32) ? 2 : 0);
    }
    ev.dur = rnd() >> (rn(32) ? 2 + rn(62) : 0);
    if (rn(100) < 30) {
      ev.has |= TW_HAS_PID;
      ev.pid = rn(16) ? (int64_t)(rnd() >> (32 + rn(32))) : (int64_t)rnd();
    }
    if (rn(100) < 30) {
      ev.has |= TW_HAS_TID;
      ev.tid = rn(16) ? (int64_t)(rnd() >> (32 + rn(32)))
                      : (int64_t)rnd() >> rn(64);
    }
    if (rn(100) < 20) {
      ev.has |= TW_HAS_TTS;
      ev.tts = rnd() >> (rn(32) ? 2 : 0);
    }
    if (rn(100) < 20) {
      ev.has |= TW_HAS_TDUR;
      ev.tdur = rnd() >> (rn(32) ? 2 : 0);
    }
    r = rn(100);
    if (needs_id ? r >= 8 : r >= 75) {
      ev.has |= TW_HAS_ID;
      ev.flags |= (unsigned[]){ 0, TW_EV_ID2_LOCAL, TW_EV_ID2_GLOBAL }[rn(3)];
    } else if (needs_id ? r >= 4 : r >= 72) {
      /* Both id2 forms, or one without an id: refused. */
      ev.has |= rn(2) ? TW_HAS_ID : 0;
      ev.flags |= rn(2) ? TW_EV_ID2_LOCAL | TW_EV_ID2_GLOBAL
                        : (rn(2) ? TW_EV_ID2_LOCAL : TW_EV_ID2_GLOBAL);
    }
    ev.id = rnd() >> rn(64);
    if (rn(10) == 0) {
      ev.has |= TW_HAS_BIND_ID;
      ev.bind_id = rnd();
    }
    if (rn(10) == 0)
      ev.flags |= TW_EV_FLOW_IN;
    if (rn(10) == 0)
      ev.flags |= TW_EV_FLOW_OUT;
    if (rn(10) == 0)
      ev.flags |= TW_EV_BP_ENCLOSING;
    r = rn(12);
    ev.instant_scope = r == 0 ? 'x' : "gpt\0"[r % 4];
    if (rn(100) < 15)
      ev.id_scope = fz_string(&n, 0);
    if (rn(100) < 10)
      ev.cname = rn(4) ? vr_colors[rn(VR_NCOLORS)] : fz_string(&n, 0);
    ev.nargs = counter ? rn(5) : rn(7);
    if (ev.nargs || rn(4) == 0) {
      tw_arg *args = pool_alloc((ev.nargs + 1) * sizeof *args);
      for (size_t i = 0; i < ev.nargs; i++) {
        tw_arg *a = &args[i];
        char *key;
        size_t kn;
        const char *suffix = fz_string(&kn, 0);
        key = pool_alloc(kn + 16);
        snprintf(key, kn + 16, "k%zu:%s", i, suffix);
        memset(a, 0, sizeof *a);
        a->name = rn(100) < 2 ? NULL : key;
        r = counter && rn(10) ? rn(3) : rn(7);
        a->type = rn(200) == 0 ? 99 : (int)(TW_ARG_INT + r);
        switch (a->type) {
        case TW_ARG_INT:
          a->v.i = rn(4) ? (int64_t)rnd() >> rn(64)
                         : (int64_t[]){ INT64_MIN, INT64_MAX, 0, -1 }[rn(4)];
          break;
        case TW_ARG_UINT:
          a->v.u = rn(4) ? rnd() >> rn(64) : UINT64_MAX;
          break;
        case TW_ARG_DOUBLE:
          if (rn(2)) {
            uint64_t bits = rnd();
            memcpy(&a->v.d, &bits, sizeof bits);  /* NaN, Inf included */
          } else {
            a->v.d = fz_doubles[rn(sizeof fz_doubles / sizeof fz_doubles[0])];
          }
          break;
        case TW_ARG_BOOL:
          a->v.b = (int)rn(3);
          break;
        case TW_ARG_STRING:
          if (rn(10) == 0) {
            a->v.s = NULL;
            a->len = TW_NUL_TERMINATED;
          } else if (rn(2)) {
            a->v.s = fz_string(&a->len, 1);   /* may hold NULs */
          } else {
            a->v.s = fz_string(&n, 0);
            a->len = TW_NUL_TERMINATED;
          }
          break;
        case TW_ARG_JSON: {
          size_t j = rn(sizeof fz_json / sizeof fz_json[0]);
          a->v.s = rn(10) == 0 ? NULL : fz_json[j].json;
          a->len = TW_NUL_TERMINATED;
          break;
        }
        default:
          break;
        }
      }
      ev.args = args;
    }
    if (rn(200) == 0 && ev.nargs)
      ev.args = NULL;

    /* The expected outcome, in the order the formatter checks. */
    if (!known)
      want = TW_EEVENT;
    else if (ph != 'E' && !ev.name)
      want = TW_EEVENT;
    else {
      unsigned id2 = ev.flags & (TW_EV_ID2_LOCAL | TW_EV_ID2_GLOBAL);
      if (id2 && (!(ev.has & TW_HAS_ID) || (id2 & (id2 - 1))))
        want = TW_EEVENT;
      else if (needs_id && !(ev.has & TW_HAS_ID))
        want = TW_EEVENT;
      else if (instant && ev.instant_scope == 'x')
        want = TW_EEVENT;
      else if (counter && ev.nargs == 0)
        want = TW_EEVENT;
      else if (ev.nargs && !ev.args)
        want = TW_EEVENT;
      else if (vr_numbers_refused(&ev, tw_now_ns()))
        want = TW_EEVENT;
      else {
        for (size_t i = 0; i < ev.nargs && !want; i++) {
          const tw_arg *a = &ev.args[i];
          if (!a->name)
            want = TW_EEVENT;
          else if (counter && a->type != TW_ARG_INT &&
                   a->type != TW_ARG_UINT && a->type != TW_ARG_DOUBLE)
            want = TW_EEVENT;
          else if (a->type == 99)
            want = TW_EEVENT;
          else if (a->type == TW_ARG_JSON && a->v.s) {
            for (size_t j = 0; j < sizeof fz_json / sizeof fz_json[0]; j++)
              if (fz_json[j].json == a->v.s && !fz_json[j].ok)
                want = TW_EJSON;
          }
        }
        if (!want && vr_catapult_refuses(&ev))
          want = TW_EEVENT;
      }
    }

    lo = tw_now_ns();
    rc = tw_emit(s.w, &ev);
    hi = tw_now_ns();
    if (rc != want)
      fail_msg("fuzz event %d (ph 0x%02x): returned %d (%s), expected %d "
               "(%s)", iter, (unsigned char)ph, rc, tw_err_name(rc), want,
               tw_err_name(want));
    assert_int_equal(tw_errcode(s.w), 0);
    if (rc) {
      bad++;
      s.nbad++;
      continue;
    }
    ok++;
    /* What the record must say. */
    ex = ev;
    if (ev.name)
      ex.name = ref_string(ev.name, strlen(ev.name), max_string, &on, &ec);
    if (ev.cat)
      ex.cat = ref_string(ev.cat, strlen(ev.cat), max_string, &on, &ec);
    else if (ph == 'b' || ph == 'n' || ph == 'e')
      ex.cat = "default";             /* chrome://tracing needs one */
    if (ev.id_scope)
      ex.id_scope = ref_string(ev.id_scope, strlen(ev.id_scope), max_string,
                               &on, &ec);
    if (ev.cname)
      ex.cname = ref_string(ev.cname, strlen(ev.cname), max_string, &on,
                            &ec);
    if (ev.nargs) {
      tw_arg *ea = pool_alloc(ev.nargs * sizeof *ea);
      for (size_t i = 0; i < ev.nargs; i++) {
        ea[i] = ev.args[i];
        ea[i].name = ref_string(ev.args[i].name, strlen(ev.args[i].name),
                                max_string, &on, &ec);
        if (ea[i].type == TW_ARG_STRING && ea[i].v.s) {
          size_t l = ea[i].len == TW_NUL_TERMINATED ? strlen(ea[i].v.s) : ea[i].len;
          ea[i].v.s = ref_string(ea[i].v.s, l, max_string, &on, &ec);
          ea[i].len = on;
        }
      }
      ex.args = ea;
    }
    c.truncated += ec.truncated;
    c.replaced += ec.replaced;
    s_add(&s, &ex, lo, hi);
  }
  s_stats(&s, &st);
  assert_int_equal(st.events, ok + 2);
  assert_int_equal(st.rejected, bad);
  assert_int_equal(st.strings_truncated, c.truncated);
  assert_int_equal(st.utf8_replaced, c.replaced);
  /* Enough of both kinds to mean something. */
  print_message("  %zu written, %zu refused\n", ok, bad);
  assert_true(ok > 1000);
  assert_true(bad > 100);
  assert_true(c.truncated > 50);
  assert_true(c.replaced > 200);
  s_finish(&s);                 /* every record, field by field */
  pool_free();
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(test_fuzz, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
