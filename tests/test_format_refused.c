/* test_format_refused.c -- what tracewriter writes, by area (format_test.h)
 *
 * Bad input refused whole (nothing of it in the file, the writer going
 * on): bad phases, names, ids, counters, args, raw JSON, NaN and
 * infinities, events too big, NULL pointers; and the contract of
 * tracewriter.h against what the library checks.
 *
 * Read back with the strict JSON checker, field by field
 * (format_test.h).
 */
#include "format_test.h"

/* ------------------------------------------------------- 4. bad input */

static void test_bad_null_name(void **state)
{
  static const char phases[] = "XBIiCbnestfMNODRc";
  static const tw_arg num[] = { { "v", TW_ARG_INT, 0, { .i = 1 } } };
  static sess s;
  tw_event ev;
  (void)state;

  s_open(&s, NULL);
  for (size_t i = 0; i < sizeof phases - 1; i++) {
    ev = mkev_ts(phases[i], "cat", NULL, 5);
    ev.has |= TW_HAS_ID;          /* so the name is all that is missing */
    ev.id = 1;
    ev.args = num;
    ev.nargs = 1;
    s_bad(&s, &ev, TW_EEVENT);
  }
  /* The helpers pass it on. */
  rc_equal(tw_complete(s.w, "c", NULL, 1, 1, NULL, 0), TW_EEVENT,
           "tw_complete");
  rc_equal(tw_begin(s.w, "c", NULL, NULL, 0), TW_EEVENT, "tw_begin");
  rc_equal(tw_instant(s.w, "c", NULL, 'g', NULL, 0), TW_EEVENT,
           "tw_instant");
  rc_equal(tw_counter(s.w, "c", NULL, num, 1), TW_EEVENT, "tw_counter");
  rc_equal(tw_async_begin(s.w, "c", NULL, 1, NULL, 0), TW_EEVENT,
           "tw_async_begin");
  rc_equal(tw_flow_start(s.w, "c", NULL, 1), TW_EEVENT, "tw_flow_start");
  rc_equal(tw_mark(s.w, "c", NULL), TW_EEVENT, "tw_mark");
  s.nbad += 7;
  assert_int_equal(tw_errcode(s.w), 0);
  /* E is fine without a name. */
  ev = mkev_ts('E', "cat", NULL, 6);
  s_emit(&s, &ev);
  s_finish(&s);
}

static void test_bad_phase(void **state)
{
  static const char bad[] = { 'Z', 0, 'x', 'a', 'P', 'S', 'T', 'F', 'p',
                              '{', '"', '\n', (char)0xff };
  static sess s;
  tw_event ev;
  (void)state;

  s_open(&s, NULL);
  for (size_t i = 0; i < sizeof bad; i++) {
    ev = mkev_ts(bad[i], "cat", "name", 5);
    ev.has |= TW_HAS_ID;
    s_bad(&s, &ev, TW_EEVENT);
  }
  s_finish(&s);
}

static void test_bad_counter(void **state)
{
  static sess s;
  tw_event ev;
  tw_arg args[3];
  static const int bad_types[] = { TW_ARG_STRING, TW_ARG_BOOL, TW_ARG_NULL,
                                   TW_ARG_JSON };
  (void)state;

  s_open(&s, NULL);
  args[0] = tw_arg_int("ok", 1);
  for (size_t i = 0; i < sizeof bad_types / sizeof bad_types[0]; i++) {
    switch (bad_types[i]) {
    case TW_ARG_STRING: args[1] = tw_arg_str("bad", "1"); break;
    case TW_ARG_BOOL: args[1] = tw_arg_bool("bad", 1); break;
    case TW_ARG_NULL: args[1] = tw_arg_null("bad"); break;
    default: args[1] = tw_arg_json("bad", "1"); break;
    }
    ev = mkev_ts('C', "c", "ctr", 1);
    ev.args = args;
    ev.nargs = 2;
    s_bad(&s, &ev, TW_EEVENT);
    rc_equal(tw_counter(s.w, "c", "ctr", args + 1, 1), TW_EEVENT,
             "tw_counter");
    s.nbad++;
  }
  /* No series at all. */
  ev = mkev_ts('C', "c", "ctr", 1);
  s_bad(&s, &ev, TW_EEVENT);
  rc_equal(tw_counter(s.w, "c", "ctr", NULL, 0), TW_EEVENT, "tw_counter");
  s.nbad++;
  /* Still fine with numbers. */
  ev.args = args;
  ev.nargs = 1;
  s_emit(&s, &ev);
  s_finish(&s);
}

static void test_bad_ids(void **state)
{
  static const char need_id[] = "bnestfNOD";
  /* An id2 form without an id, or two forms. */
  static const struct { unsigned has, flags; } bad_forms[] = {
    { 0, TW_EV_ID2_LOCAL }, { 0, TW_EV_ID2_GLOBAL },
    { 0, TW_EV_ID2_LOCAL | TW_EV_ID2_GLOBAL },
    { TW_HAS_ID, TW_EV_ID2_LOCAL | TW_EV_ID2_GLOBAL },
  };
  static sess s;
  tw_event ev;
  (void)state;

  s_open(&s, NULL);
  for (size_t i = 0; i < sizeof need_id - 1; i++) {
    ev = mkev_ts(need_id[i], "cat", "noid", 5);
    ev.id = 5;                          /* set, but no TW_HAS_ bit */
    ev.id_scope = "scope";
    s_bad(&s, &ev, TW_EEVENT);
    for (size_t k = 0; k < sizeof bad_forms / sizeof bad_forms[0]; k++) {
      ev.has = TW_HAS_TS | bad_forms[k].has;
      ev.flags = bad_forms[k].flags;
      s_bad(&s, &ev, TW_EEVENT);
    }
    ev.flags = 0;
  }
  /* Two id forms on a phase that needs no id is wrong too. */
  ev = mkev_ts('X', "cat", "twoids", 5);
  ev.has |= TW_HAS_ID;
  ev.flags |= TW_EV_ID2_LOCAL | TW_EV_ID2_GLOBAL;
  s_bad(&s, &ev, TW_EEVENT);
  /* Bits no version defines, and reserved fields, are refused. */
  ev = mkev_ts('X', "cat", "unknown", 5);
  ev.has |= 0x80u;
  s_bad(&s, &ev, TW_EEVENT);
  ev = mkev_ts('X', "cat", "unknown", 5);
  ev.flags |= 0x20u;
  s_bad(&s, &ev, TW_EEVENT);
  ev = mkev_ts('X', "cat", "reserved", 5);
  ev.reserved[1] = &ev;
  s_bad(&s, &ev, TW_EEVENT);
  s_finish(&s);
}

static void test_bad_instant_scope(void **state)
{
  static const char bad[] = { 'x', 'G', 'T', 's', ' ', (char)0x80 };
  static sess s;
  tw_event ev;
  (void)state;

  s_open(&s, NULL);
  for (size_t i = 0; i < sizeof bad; i++) {
    ev = mkev_ts(i & 1 ? 'i' : 'I', "cat", "inst", 5);
    ev.instant_scope = bad[i];
    s_bad(&s, &ev, TW_EEVENT);
  }
  rc_equal(tw_instant(s.w, "c", "n", 'x', NULL, 0), TW_EEVENT, "tw_instant");
  s.nbad++;
  s_finish(&s);
}

static void test_bad_args(void **state)
{
  static sess s;
  tw_event ev;
  tw_arg args[TW_MAX_ARGS + 1];
  (void)state;

  for (size_t i = 0; i <= TW_MAX_ARGS; i++)
    args[i] = tw_arg_int("k", (int64_t)i);
  s_open(&s, NULL);
  /* An arg without a name, first or last. */
  args[0].name = NULL;
  ev = mkev_ts('X', "c", "n", 1);
  ev.args = args;
  ev.nargs = 1;
  s_bad(&s, &ev, TW_EEVENT);
  args[0].name = "k";
  args[2].name = NULL;
  ev.nargs = 3;
  s_bad(&s, &ev, TW_EEVENT);
  args[2].name = "k";
  /* Too many. */
  ev.nargs = TW_MAX_ARGS + 1;
  s_bad(&s, &ev, TW_ETOOMANY);
  ev.nargs = (size_t)-1;
  s_bad(&s, &ev, TW_ETOOMANY);
  /* nargs without args. */
  ev.args = NULL;
  ev.nargs = 1;
  s_bad(&s, &ev, TW_EEVENT);
  rc_equal(tw_begin(s.w, "c", "n", NULL, 2), TW_EEVENT, "tw_begin");
  s.nbad++;
  /* An unknown arg type. */
  args[1].type = 0;
  ev.args = args;
  ev.nargs = 2;
  s_bad(&s, &ev, TW_EEVENT);
  args[1].type = TW_ARG_JSON + 1;
  s_bad(&s, &ev, TW_EEVENT);
  args[1].type = -1;
  s_bad(&s, &ev, TW_EEVENT);
  s_finish(&s);
}

/* "depth" nested arrays, with a 0 in the middle. */
static char *nested_json(unsigned depth, int objects)
{
  size_t cap = depth * 8 + 8, o = 0;
  char *j = pool_alloc(cap);
  for (unsigned i = 0; i < depth; i++)
    o += (size_t)snprintf(j + o, cap - o, "%s", objects ? "{\"a\":" : "[");
  j[o++] = '0';
  for (unsigned i = 0; i < depth; i++)
    j[o++] = objects ? '}' : ']';
  j[o] = '\0';
  return j;
}

static void test_bad_raw_json(void **state)
{
  static const char *const bad[] = {
    "[1,]", "{\"a\":1,}", "tru", "01", "[1] x", "\"\\ud800\"", "",
    " ", "[1,,2]", "[", "]", "{\"a\"}", "{\"a\":}", "{a:1}", "nul", "truex",
    "-", "1.", ".5", "1e", "1e+", "+1", "0x10", "NaN", "Infinity", "'a'",
    "\"abc", "\"a\\x\"", "\"\\u12\"", "\"\\udc00\"", "\"\\ud800\\u0041\"",
    "\"\x01\"", "\"a\nb\"", "\"\xff\"", "\"\xc0\x80\"", "\"\xed\xa0\x80\"",
    "[1]]", "{}}", "1 2", "[1 2]", "{\"a\":1 \"b\":2}", "\x7f", "[\x0b]",
  };
  static sess s;
  tw_event ev;
  tw_arg args[2];
  char *deep;
  (void)state;

  s_open(&s, NULL);
  args[0] = tw_arg_int("first", 1);
  ev = mkev_ts('X', "c", "json", 1);
  ev.args = args;
  ev.nargs = 2;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    args[1] = tw_arg_json("j", bad[i]);
    s_bad(&s, &ev, TW_EJSON);
  }
  /* An explicit length cuts a valid document short: invalid. */
  args[1] = tw_arg_json("j", "[1,2]");
  args[1].len = 4;
  s_bad(&s, &ev, TW_EJSON);
  args[1].len = 0;
  s_bad(&s, &ev, TW_EJSON);
  /* An embedded NUL inside the given length. */
  args[1] = tw_arg_json("j", "[1,\0 2]");
  args[1].len = 7;
  s_bad(&s, &ev, TW_EJSON);
  /* Depth: TW_MAX_JSON_DEPTH is accepted, one more is not. */
  for (int objects = 0; objects < 2; objects++) {
    deep = nested_json(TW_MAX_JSON_DEPTH + 1, objects);
    args[1] = tw_arg_json("j", deep);
    s_bad(&s, &ev, TW_EJSON);
  }
  deep = nested_json(TW_MAX_JSON_DEPTH, 0);
  args[1] = tw_arg_json("j", deep);
  s_emit(&s, &ev);
  {
    char *deep2 = nested_json(TW_MAX_JSON_DEPTH, 1);
    tw_arg a2[2] = { tw_arg_json("j", deep2), tw_arg_json("k", deep) };
    tw_event e2 = mkev_ts('O', "c", "deep_obj", 2);
    jc_doc *d;
    jc_val v;
    unsigned depth = 0;
    e2.has |= TW_HAS_ID;
    e2.args = a2;
    e2.nargs = 2;
    s_emit(&s, &e2);
    d = s_close(&s);
    v = jc_get(d, jc_get(d, s_record(d, s.n - 1), "args"), "j");
    while (jc_type(d, v) == JC_OBJECT) {
      v = jc_get(d, v, "a");
      depth++;
    }
    assert_int_equal(depth, TW_MAX_JSON_DEPTH);
    s_done(&s, d);
  }
  pool_free();
}

static void test_nonfinite_null(void **state)
{
  static sess s;
  tw_event ev;
  tw_arg args[4];
  jc_doc *d;
  jc_val a;
  (void)state;

  args[0] = tw_arg_double("nan", NAN);
  args[1] = tw_arg_double("inf", INFINITY);
  args[2] = tw_arg_double("ninf", -INFINITY);
  args[3] = tw_arg_double("ok", 2.5);
  s_open(&s, NULL);
  ev = mkev_ts('X', "c", "nonfinite", 1);
  ev.args = args;
  ev.nargs = 4;
  s_emit(&s, &ev);
  ev.ph = 'C';                          /* counters too */
  s_emit(&s, &ev);
  d = s_close(&s);
  for (size_t r = 0; r < 2; r++) {
    a = jc_get(d, s_record(d, r), "args");
    assert_raw(d, jc_get(d, a, "nan"), "null");
    assert_raw(d, jc_get(d, a, "inf"), "null");
    assert_raw(d, jc_get(d, a, "ninf"), "null");
  }
  s_done(&s, d);
}

static void nonfinite_reject(const char *optstr)
{
  static const double bad[] = { NAN, -NAN, INFINITY, -INFINITY };
  tw_options o;
  static sess s;
  tw_event ev;
  tw_arg args[2];

  assert_int_equal(tw_options_init(&o), 0);
  if (optstr)
    assert_int_equal(tw_options_parse(&o, optstr, NULL, 0), 0);
  else
    o.flags |= TW_OPT_REJECT_NONFINITE;
  s_open(&s, &o);
  args[0] = tw_arg_double("ok", 1.5);
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    args[1] = tw_arg_double("bad", bad[i]);
    ev = mkev_ts(i & 1 ? 'C' : 'X', "c", "n", 1);
    ev.args = args;
    ev.nargs = 2;
    s_bad(&s, &ev, TW_ENONFINITE);
  }
  /* Finite numbers still pass. */
  ev = mkev_ts('C', "c", "n", 1);
  ev.args = args;
  ev.nargs = 1;
  s_emit(&s, &ev);
  s_finish(&s);
}

static void test_nonfinite_reject(void **state)
{
  (void)state;
  nonfinite_reject(NULL);
  nonfinite_reject("nonfinite=reject");
}



static char *filled(size_t n, char c)
{
  char *p = pool_alloc(n + 1);
  assert_non_null(p);
  memset(p, c, n);
  p[n] = '\0';
  return p;
}

static void test_too_big(void **state)
{
  tw_options o;
  static sess s;
  tw_event ev;
  tw_arg a;
  char *big = filled(5000, 'x');
  (void)state;

  assert_int_equal(tw_options_init(&o), 0);
  o.max_event = 4096;
  o.max_string = 1 << 20;
  s_open(&s, &o);
  a = tw_arg_str("big", big);
  ev = mkev_ts('X', "c", "big", 1);
  ev.args = &a;
  ev.nargs = 1;
  s_bad(&s, &ev, TW_ETOOBIG);
  ev.name = big;                 /* in the name */
  ev.nargs = 0;
  s_bad(&s, &ev, TW_ETOOBIG);
  /* Many small args adding up. */
  {
    tw_arg many[600];
    for (size_t i = 0; i < 600; i++)
      many[i] = tw_arg_uint("k", UINT64_MAX);
    ev = mkev_ts('X', "c", "many", 1);
    ev.args = many;
    ev.nargs = 600;
    s_bad(&s, &ev, TW_ETOOBIG);
  }
  s_finish(&s);
  pool_free();
}

static void test_big_event_scratch(void **state)
{
  tw_options o;
  static sess s;
  tw_event ev;
  tw_arg a[3];
  char *big = filled(100 * 1024, 'y');
  char *mixed = pool_alloc(40001);
  tw_stats st;
  (void)state;

  assert_non_null(mixed);
  /* 40000 bytes of multibyte text and escapes. */
  for (size_t i = 0; i < 40000; i += 10)
    memcpy(mixed + i, "\xe6\xbc\xa2\xc3\xa9\"\\\n\x01z", 10);
  mixed[40000] = '\0';
  assert_int_equal(tw_options_init(&o), 0);
  o.max_string = 1 << 20;
  o.max_event = 1 << 20;
  s_open(&s, &o);
  a[0] = tw_arg_str("big", big);
  ev = mkev_ts('X', "c", "big", 1);
  ev.args = a;
  ev.nargs = 1;
  s_emit(&s, &ev);               /* ~100 KB record: the scratch buffer */
  s_good(&s);                    /* and small ones after it */
  a[1] = tw_arg_str("mixed", mixed);
  a[2] = tw_arg_int("n", 3);
  ev.args = a + 1;
  ev.nargs = 2;
  ev.name = "mixed";
  s_emit(&s, &ev);
  ev.args = a;
  ev.nargs = 3;
  s_emit(&s, &ev);
  s_good(&s);
  s_stats(&s, &st);
  assert_int_equal(st.strings_truncated, 0);
  s_finish(&s);
  pool_free();
}

static void test_null_event_pointer(void **state)
{
  static sess s;
  (void)state;

  s_open(&s, NULL);
  rc_equal(tw_emit(s.w, NULL), -EINVAL, "tw_emit(w, NULL)");
  assert_int_equal(tw_errcode(s.w), 0);
  s_good(&s);
  s_finish(&s);
}

static void test_null_string_values(void **state)
{
  static sess s;
  tw_event ev;
  tw_arg args[4], en;
  jc_doc *d;
  jc_val a;
  (void)state;

  args[0] = tw_arg_str("s", NULL);
  args[1] = tw_arg_strn("sn", NULL, 5);
  args[2] = tw_arg_json("j", NULL);
  args[3] = tw_arg_null("n");
  s_open(&s, NULL);
  ev = mkev_ts('X', NULL, "nulls", 1);     /* no cat, no cname, no scope */
  ev.args = args;
  ev.nargs = 4;
  s_emit(&s, &ev);
  /* The helpers with a NULL string: the metadata arg becomes null. */
  en = tw_arg_str("name", NULL);
  {
    tw_event ex = mkev('M', NULL, "thread_name");
    ex.args = &en;
    ex.nargs = 1;
    S_CALL(&s, &ex, tw_thread_name(s.w, NULL));
  }
  d = s_close(&s);
  a = jc_get(d, s_record(d, 0), "args");
  for (size_t i = 0; i < 4; i++)
    assert_raw(d, jc_index(d, a, i), "null");
  s_done(&s, d);
}

static void test_null_writer(void **state)
{
  tw_event ev = mkev('X', "c", "n");
  tw_arg a = tw_arg_int("k", 1);
  tw_stats st;
  tw_span sp;
  (void)state;

  assert_int_equal(tw_emit(NULL, &ev), 0);
  assert_int_equal(tw_emit(NULL, NULL), 0);
  ev.ph = 'Z';                               /* not even checked */
  assert_int_equal(tw_emit(NULL, &ev), 0);
  assert_int_equal(tw_complete(NULL, "c", "n", 1, 2, &a, 1), 0);
  assert_int_equal(tw_complete(NULL, NULL, NULL, 1, 2, NULL, 5), 0);
  assert_int_equal(tw_begin(NULL, "c", "n", &a, 1), 0);
  assert_int_equal(tw_end(NULL, "c", "n", &a, 1), 0);
  assert_int_equal(tw_instant(NULL, "c", "n", 'x', NULL, 0), 0);
  assert_int_equal(tw_counter(NULL, "c", "n", NULL, 0), 0);
  assert_int_equal(tw_async_begin(NULL, "c", "n", 1, NULL, 0), 0);
  assert_int_equal(tw_async_instant(NULL, "c", "n", 1, NULL, 0), 0);
  assert_int_equal(tw_async_end(NULL, "c", "n", 1, NULL, 0), 0);
  assert_int_equal(tw_flow_start(NULL, "c", "n", 1), 0);
  assert_int_equal(tw_flow_step(NULL, "c", "n", 1), 0);
  assert_int_equal(tw_flow_end(NULL, "c", "n", 1), 0);
  assert_int_equal(tw_process_name(NULL, "p"), 0);
  assert_int_equal(tw_thread_name(NULL, "t"), 0);
  assert_int_equal(tw_process_sort_index(NULL, 1), 0);
  assert_int_equal(tw_thread_sort_index(NULL, 1), 0);
  assert_int_equal(tw_process_labels(NULL, "l"), 0);
  assert_int_equal(tw_mark(NULL, "c", "n"), 0);
  assert_int_equal(tw_flush(NULL), 0);
  assert_int_equal(tw_errcode(NULL), 0);
  memset(&st, 0xa5, sizeof st);
  assert_int_equal(tw_get_stats(NULL, &st), 0);
  assert_int_equal(st.events, 0);
  assert_int_equal(st.bytes, 0);
  assert_int_equal(st.commits, 0);
  assert_int_equal(st.rejected, 0);
  assert_int_equal(st.strings_truncated, 0);
  assert_int_equal(st.utf8_replaced, 0);
  assert_int_equal(st.dropped, 0);
  assert_int_equal(st.error, 0);
  sp = tw_span_begin(NULL, "c", "n");
  assert_null(sp.w);
  assert_int_equal(sp.start_ns, 0);
  assert_int_equal(tw_span_end(&sp), 0);
  assert_int_equal(tw_span_end(NULL), 0);
  {
    TW_SCOPE(NULL, "c", "n");
  }
  assert_int_equal(tw_close(NULL), 0);
}


/* ------------------------------------------- contract vs implementation */

/* tracewriter.h: 'M' requires a name only; the args viewers expect are
 * the caller's (or the helpers') to give, and are written as given.  A
 * 'c' requires a "sync_id" argument too. */
static void test_required_args(void **state)
{
  static sess s;
  tw_event ev;
  tw_arg other = tw_arg_int("other", 1);
  (void)state;

  s_open(&s, NULL);
  /* chrome://tracing fails its import on a 'c' without args, and ignores
   * one without sync_id: refused. */
  ev = mkev_ts('c', NULL, "clock_sync", 1);
  s_bad(&s, &ev, TW_EEVENT);
  ev.args = &other;
  ev.nargs = 1;
  s_bad(&s, &ev, TW_EEVENT);
  ev = mkev('M', NULL, "process_name");            /* no "name" arg */
  s_emit(&s, &ev);
  ev = mkev('M', NULL, "thread_sort_index");       /* no "sort_index" */
  ev.args = &other;
  ev.nargs = 1;
  s_emit(&s, &ev);
  ev = mkev('c', NULL, NULL);                      /* no name: refused */
  s_bad(&s, &ev, TW_EEVENT);
  s_finish(&s);
}

/* max_event is "the largest formatted record": a record well under it
 * must be accepted whatever room the formatter reserves on the way. */
static void test_event_under_max_event(void **state)
{
  tw_options o;
  static sess s;
  tw_event ev;
  tw_arg a;
  char *k1 = filled(1000, 'a');
  char *k300 = filled(300 * 1024, 'b');
  (void)state;

  /* A ~1.1 KB record with max_event at its minimum, 4 KiB. */
  assert_int_equal(tw_options_init(&o), 0);
  o.max_event = 4096;
  s_open(&s, &o);
  a = tw_arg_str("s", k1);
  ev = mkev_ts('X', "c", "1k", 1);
  ev.args = &a;
  ev.nargs = 1;
  s_emit(&s, &ev);
  s_finish(&s);

  /* A ~300 KB record with max_event 1 MiB. */
  assert_int_equal(tw_options_init(&o), 0);
  o.max_event = 1 << 20;
  o.max_string = 1 << 20;
  s_open(&s, &o);
  a = tw_arg_str("s", k300);
  ev = mkev_ts('X', "c", "300k", 1);
  ev.args = &a;
  ev.nargs = 1;
  s_emit(&s, &ev);
  s_finish(&s);
  pool_free();
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(test_bad_null_name, teardown),
    cmocka_unit_test_teardown(test_bad_phase, teardown),
    cmocka_unit_test_teardown(test_bad_counter, teardown),
    cmocka_unit_test_teardown(test_bad_ids, teardown),
    cmocka_unit_test_teardown(test_bad_instant_scope, teardown),
    cmocka_unit_test_teardown(test_bad_args, teardown),
    cmocka_unit_test_teardown(test_bad_raw_json, teardown),
    cmocka_unit_test_teardown(test_nonfinite_null, teardown),
    cmocka_unit_test_teardown(test_nonfinite_reject, teardown),
    cmocka_unit_test_teardown(test_too_big, teardown),
    cmocka_unit_test_teardown(test_big_event_scratch, teardown),
    cmocka_unit_test_teardown(test_null_event_pointer, teardown),
    cmocka_unit_test_teardown(test_null_string_values, teardown),
    cmocka_unit_test_teardown(test_null_writer, teardown),
    cmocka_unit_test_teardown(test_required_args, teardown),
    cmocka_unit_test_teardown(test_event_under_max_event, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
