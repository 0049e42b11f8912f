/* test_format_numbers.c -- what tracewriter writes, by area (format_test.h)
 *
 * Numbers: ids in hex, timestamps exact to the nanosecond, every length of
 * every number, and the numbers and shapes each viewer misreads (refused
 * or written so that every viewer reads them right).
 *
 * Read back with the strict JSON checker, field by field
 * (format_test.h).
 */
#include "format_test.h"

/* ------------------------------------------------- ids and timestamps */

static void test_ids_hex(void **state)
{
  static sess s;
  tw_event ev;
  jc_doc *d;
  (void)state;

  s_open(&s, NULL);
  ev = mkev_ts('b', "c", "id0", 1);
  ev.has |= TW_HAS_ID;
  ev.id = 0;
  s_emit(&s, &ev);
  ev.id = 0x1a;
  s_emit(&s, &ev);
  ev.id = UINT64_MAX;
  s_emit(&s, &ev);
  ev.has = TW_HAS_TS | TW_HAS_ID;
  ev.flags = TW_EV_ID2_GLOBAL;
  ev.id = 0x8000000000000000ULL;
  s_emit(&s, &ev);
  ev = mkev_ts('X', "c", "bind", 2);
  ev.has |= TW_HAS_BIND_ID;
  ev.bind_id = UINT64_MAX;
  s_emit(&s, &ev);
  d = s_close(&s);
  /* Exact text: lowercase, no leading zeros. */
  assert_raw(d, jc_get(d, s_record(d, 0), "id"), "\"0x0\"");
  assert_raw(d, jc_get(d, s_record(d, 1), "id"), "\"0x1a\"");
  assert_raw(d, jc_get(d, s_record(d, 2), "id"), "\"0xffffffffffffffff\"");
  assert_raw(d, jc_get(d, jc_get(d, s_record(d, 3), "id2"), "global"),
             "\"0x8000000000000000\"");
  assert_raw(d, jc_get(d, s_record(d, 4), "bind_id"),
             "\"0xffffffffffffffff\"");
  s_done(&s, d);
}

static void test_timestamps_exact(void **state)
{
  static const struct { uint64_t ns; const char *text; } t[] = {
    { 0, "0.000" },
    { 1, "0.001" },
    { 10, "0.010" },
    { 999, "0.999" },
    { 1000, "1.000" },
    { 1001, "1.001" },
    { 1234567891, "1234567.891" },
    { 1000000000000000000ULL, "1000000000000000.000" },
    /* ts + dur and tts + tdur stay below 2^63: zeros around the most. */
    { 0, "0.000" },
    { 9223372036854775807ULL, "9223372036854775.807" },
  };
  const size_t nt = sizeof t / sizeof t[0];
  static sess s;
  tw_event ev;
  jc_doc *d;
  (void)state;

  s_open(&s, NULL);
  for (size_t i = 0; i < nt; i++) {
    size_t j = (i + 1) % nt, k = (i + 2) % nt, l = (i + 3) % nt;
    ev = mkev_ts('X', "t", "ts", t[i].ns);
    ev.dur = t[j].ns;
    ev.has |= TW_HAS_TTS | TW_HAS_TDUR;
    ev.tts = t[k].ns;
    ev.tdur = t[l].ns;
    s_emit(&s, &ev);
  }
  d = s_close(&s);
  for (size_t i = 0; i < nt; i++) {
    jc_val r = s_record(d, i);
    assert_raw(d, jc_get(d, r, "ts"), t[i].text);
    assert_raw(d, jc_get(d, r, "dur"), t[(i + 1) % nt].text);
    assert_raw(d, jc_get(d, r, "tts"), t[(i + 2) % nt].text);
    assert_raw(d, jc_get(d, r, "tdur"), t[(i + 3) % nt].text);
  }
  s_done(&s, d);
}

/* A value of test_numbers_every_length as a time: below 2^62, so that
 * two of them add up to less than 2^63 ns, the most a time may reach. */
static uint64_t as_time(uint64_t v)
{
  return v < (UINT64_C(1) << 62) ? v : v >> 2;
}

/* ... and as a pid or tid: at most 4294967295. */
static int64_t as_id32(uint64_t v)
{
  return (int64_t)(v <= UINT32_MAX ? v : v % (UINT64_C(1) << 32));
}

/* Every length of the decimal writer: 10^k - 1, 10^k, 10^k + 1 and a
 * number of k + 1 different digits, for every k, and the largest values:
 * as times (their microseconds take every length too, up to the largest
 * time, as_time), as integer args of both signs and as explicit pid and
 * tid (up to 10 digits); the text compared with printf's.  A uint64 arg
 * above INT64_MAX is the nearest double, in exponent form. */
static void test_numbers_every_length(void **state)
{
  static const char digits[] = "12345678909876543210";
  uint64_t v[100];
  size_t nv = 0;
  uint64_t p = 1;
  static sess s;
  tw_arg *args;
  jc_doc *d;
  (void)state;

  for (int k = 0; k < 20; k++, p *= 10) {
    char pre[24];
    memcpy(pre, digits, (size_t)k + 1);
    pre[k + 1] = '\0';
    if (k)
      v[nv++] = p - 1;
    v[nv++] = p;
    v[nv++] = p + 1;
    v[nv++] = strtoull(pre, NULL, 10);
  }
  v[nv++] = UINT64_MAX;
  v[nv++] = (uint64_t)INT64_MAX;
  v[nv++] = (uint64_t)INT64_MAX + 1;
  args = pool_alloc(nv * 3 * sizeof *args);
  s_open(&s, NULL);
  for (size_t i = 0; i < nv; i++) {
    tw_event ev = mkev_ts('X', "c", "n", as_time(v[i]));
    tw_arg *a = args + 3 * i;
    int64_t sv = (int64_t)(v[i] & (uint64_t)INT64_MAX);
    ev.dur = as_time(v[(i + 1) % nv]);
    ev.has |= TW_HAS_TTS | TW_HAS_TDUR | TW_HAS_PID | TW_HAS_TID;
    ev.tts = as_time(v[(i + 2) % nv]);
    ev.tdur = as_time(v[(i + 3) % nv]);
    ev.pid = as_id32(v[i]);
    ev.tid = (int64_t)UINT32_MAX - as_id32(v[i]);
    a[0] = tw_arg_uint("u", v[i]);
    a[1] = tw_arg_int("i", sv);
    a[2] = tw_arg_int("m", sv == 0 ? INT64_MIN : -sv);
    ev.args = a;
    ev.nargs = 3;
    s_emit(&s, &ev);
  }
  d = s_close(&s);
  for (size_t i = 0; i < nv; i++) {
    static const char *const tkeys[] = { "ts", "dur", "tts", "tdur" };
    jc_val r = s_record(d, i), a = jc_get(d, r, "args");
    int64_t sv = (int64_t)(v[i] & (uint64_t)INT64_MAX);
    char text[48];
    for (size_t t = 0; t < 4; t++) {
      uint64_t ns = as_time(v[(i + t) % nv]);
      snprintf(text, sizeof text, "%" PRIu64 ".%03u", ns / 1000,
               (unsigned)(ns % 1000));
      assert_raw(d, jc_get(d, r, tkeys[t]), text);
    }
    if (v[i] <= (uint64_t)INT64_MAX) {
      snprintf(text, sizeof text, "%" PRIu64, v[i]);
      assert_raw(d, jc_get(d, a, "u"), text);
    } else {
      size_t rl;
      const char *raw = jc_raw(d, jc_get(d, a, "u"), &rl);
      assert_non_null(memchr(raw, 'e', rl));
      assert_true(jc_num(d, jc_get(d, a, "u")) == (double)v[i]);
    }
    snprintf(text, sizeof text, "%" PRId64, sv);
    assert_raw(d, jc_get(d, a, "i"), text);
    snprintf(text, sizeof text, "%" PRId64, sv == 0 ? INT64_MIN : -sv);
    assert_raw(d, jc_get(d, a, "m"), text);
    snprintf(text, sizeof text, "%" PRId64, as_id32(v[i]));
    assert_raw(d, jc_get(d, r, "pid"), text);
    snprintf(text, sizeof text, "%" PRId64,
             (int64_t)UINT32_MAX - as_id32(v[i]));
    assert_raw(d, jc_get(d, r, "tid"), text);
  }
  s_done(&s, d);
  pool_free();
}


/* --------------------------------------- 8. numbers the viewers misread */

/* The first record of phase ph named name (NULL: without a name). */
static jc_val first_record(const jc_doc *d, const char *ph, const char *name)
{
  for (jc_val v = jc_first(d, tu_events(d)); v >= 0; v = jc_next(d, v))
    if (jc_streq(d, jc_get(d, v, "ph"), ph) &&
        (name ? jc_streq(d, jc_get(d, v, "name"), name)
              : jc_get(d, v, "name") < 0))
      return v;
  fail_msg("no record \"%s\" of phase %s", name ? name : "(no name)", ph);
  return -1;
}

/* A bad event through a helper: refused with code and counted, as by
 * s_bad. */
#define S_BAD_CALL(s, code, call)                                          \
  do {                                                                     \
    rc_equal((call), (code), #call);                                       \
    (s)->nbad++;                                                           \
  } while (0)

/* Times, pids, tids and sort indexes that Perfetto cannot read right are
 * refused with TW_EEVENT; the largest it reads right is written exactly.
 * A uint64 above INT64_MAX is written as the nearest double, exponent
 * form. */
static void test_numbers_viewer_limits(void **state)
{
  const uint64_t end = UINT64_C(1) << 63;
  static const int64_t bad_ids[] = { -1, INT64_MIN, 4294967296LL,
                                     INT64_MAX };
  static sess s;
  tw_event ev;
  tw_arg a[4], si[4];               /* each kept by the record it made */
  jc_doc *d;
  (void)state;

  s_open(&s, NULL);
  /* ts: from 2^63 ns refused, on every phase; 2^63 - 1 written. */
  ev = mkev_ts('I', NULL, "ts", end);
  s_bad(&s, &ev, TW_EEVENT);
  ev = mkev_ts('X', NULL, "ts", end);
  s_bad(&s, &ev, TW_EEVENT);
  ev = mkev_ts('M', NULL, "thread_name", UINT64_MAX);
  s_bad(&s, &ev, TW_EEVENT);
  ev = mkev_ts('I', NULL, "ts", end - 1);
  s_emit(&s, &ev);                                  /* record 1 */
  /* ts + dur: the end of an X. */
  ev = mkev_ts('X', NULL, "dur", end / 2);
  ev.dur = end / 2;
  s_bad(&s, &ev, TW_EEVENT);
  ev.dur = end / 2 - 1;
  s_emit(&s, &ev);                                  /* record 2 */
  ev = mkev('X', NULL, "dur, ts now");
  ev.dur = UINT64_MAX;
  s_bad(&s, &ev, TW_EEVENT);
  S_BAD_CALL(&s, TW_EEVENT, tw_complete(s.w, NULL, "c", 1, end - 1, NULL,
                                        0));
  /* tts, and tts + tdur. */
  ev = mkev_ts('X', NULL, "tts", 1);
  ev.has |= TW_HAS_TTS;
  ev.tts = end;
  s_bad(&s, &ev, TW_EEVENT);
  ev.has |= TW_HAS_TDUR;
  ev.tts = 1;
  ev.tdur = end - 1;
  s_bad(&s, &ev, TW_EEVENT);
  ev.has &= ~TW_HAS_TTS;
  ev.tdur = end;
  s_bad(&s, &ev, TW_EEVENT);
  ev.tdur = end - 1;
  s_emit(&s, &ev);                                  /* record 3 */
  ev.has |= TW_HAS_TTS;
  ev.tts = end - 1;
  ev.tdur = 0;
  s_emit(&s, &ev);                                  /* record 4 */
  /* pid and tid: 0..4294967295. */
  for (size_t i = 0; i < sizeof bad_ids / sizeof bad_ids[0]; i++) {
    ev = mkev('B', NULL, "id");
    ev.has = TW_HAS_PID;
    ev.pid = bad_ids[i];
    s_bad(&s, &ev, TW_EEVENT);
    ev.has = TW_HAS_TID;
    ev.tid = bad_ids[i];
    s_bad(&s, &ev, TW_EEVENT);
  }
  ev = mkev('E', NULL, NULL);
  ev.has = TW_HAS_PID | TW_HAS_TID;
  ev.pid = 0;
  ev.tid = 4294967295;
  s_emit(&s, &ev);                                  /* record 5 */
  /* Sort indexes: int32_t, by the helpers and through tw_emit. */
  S_BAD_CALL(&s, TW_EEVENT, tw_thread_sort_index(s.w, (int64_t)INT32_MAX +
                                                      1));
  S_BAD_CALL(&s, TW_EEVENT, tw_process_sort_index(s.w, (int64_t)INT32_MIN -
                                                       1));
  ev = mkev('M', NULL, "process_sort_index");
  si[0] = tw_arg_int("sort_index", INT32_MIN);
  ev.args = &si[0];
  ev.nargs = 1;
  S_CALL(&s, &ev, tw_process_sort_index(s.w, INT32_MIN));  /* record 6 */
  si[1] = tw_arg_uint("sort_index", (uint64_t)INT32_MAX + 1);
  ev.args = &si[1];
  s_bad(&s, &ev, TW_EEVENT);
  si[1] = tw_arg_double("sort_index", 3e9);
  s_bad(&s, &ev, TW_EEVENT);
  si[2] = tw_arg_double("sort_index", -2.0);
  ev.args = &si[2];
  s_emit(&s, &ev);                                  /* record 7 */
  si[3] = tw_arg_int("sort_index", INT64_MAX);      /* another name */
  ev.args = &si[3];
  ev.name = "sort_index_elsewhere";
  s_emit(&s, &ev);                                  /* record 8 */
  /* uint64 args: an integer up to INT64_MAX, a double above. */
  a[0] = tw_arg_uint("max", (uint64_t)INT64_MAX);
  a[1] = tw_arg_uint("above", (uint64_t)INT64_MAX + 1);
  a[2] = tw_arg_uint("umax", UINT64_MAX);
  a[3] = tw_arg_uint("round", 18446744073709549568ULL); /* 2^64 - 2^11 */
  ev = mkev_ts('C', NULL, "uints", 5);
  ev.args = a;
  ev.nargs = 4;
  s_emit(&s, &ev);                                  /* record 9 */
  d = s_close(&s);                 /* every record checked; and exactly: */
  assert_raw(d, jc_get(d, first_record(d, "I", "ts"), "ts"),
             "9223372036854775.807");
  assert_raw(d, jc_get(d, first_record(d, "X", "dur"), "dur"),
             "4611686018427387.903");
  assert_raw(d, jc_get(d, first_record(d, "X", "tts"), "tdur"),
             "9223372036854775.807");
  assert_raw(d, jc_get(d, first_record(d, "E", NULL), "tid"), "4294967295");
  assert_raw(d, jc_get(d, jc_get(d, first_record(d, "M",
                                                  "process_sort_index"),
                                 "args"), "sort_index"), "-2147483648");
  {
    jc_val v = jc_get(d, first_record(d, "C", "uints"), "args");
    assert_raw(d, jc_get(d, v, "max"), "9223372036854775807");
    assert_raw(d, jc_get(d, v, "above"), "9.2233720368547758e+18");
    assert_raw(d, jc_get(d, v, "umax"), "1.8446744073709552e+19");
    assert_raw(d, jc_get(d, v, "round"), "1.844674407370955e+19");
  }
  s_done(&s, d);
}

/* Shapes that chrome://tracing cannot import are refused; an async event
 * without a category gets "default", which it needs to show it. */
static void test_shapes_every_viewer(void **state)
{
  static sess s;
  tw_event ev, ex;
  tw_arg sync = tw_arg_str("sync_id", "s1");
  (void)state;

  s_open(&s, NULL);
  /* cname: only Catapult's reserved names, spelled as it does. */
  ev = mkev_ts('X', "c", "colored", 1);
  ev.cname = "red";
  s_bad(&s, &ev, TW_EEVENT);
  ev.cname = "Good";
  s_bad(&s, &ev, TW_EEVENT);
  ev.cname = "cq_build_attempt_runnig";
  s_emit(&s, &ev);
  /* 'c': a sync_id argument. */
  ev = mkev_ts('c', NULL, "clock_sync", 2);
  s_bad(&s, &ev, TW_EEVENT);
  ev.args = &sync;
  ev.nargs = 1;
  s_emit(&s, &ev);
  /* 'f': a category or bp. */
  ev = mkev_ts('f', NULL, "flow", 3);
  ev.has |= TW_HAS_ID;
  ev.id = 5;
  s_bad(&s, &ev, TW_EEVENT);
  ev.flags = TW_EV_BP_ENCLOSING;
  s_emit(&s, &ev);
  ev.flags = 0;
  ev.cat = "c";
  s_emit(&s, &ev);
  ev = mkev('f', NULL, "flow");
  ev.has = TW_HAS_ID;
  ev.id = 6;
  ev.flags = TW_EV_BP_ENCLOSING;
  S_CALL(&s, &ev, tw_flow_end(s.w, NULL, "flow", 6));
  /* Async without a category: "default", the same for b, n and e. */
  for (const char *p = "bne"; *p; p++) {
    ev = mkev_ts(*p, NULL, "req", 4);
    ev.has |= TW_HAS_ID;
    ev.id = 7;
    ex = ev;
    ex.cat = "default";
    s_emit_as(&s, &ev, &ex);
  }
  ev = mkev('b', "default", "helper");
  ev.has = TW_HAS_ID;
  ev.id = 8;
  S_CALL(&s, &ev, tw_async_begin(s.w, NULL, "helper", 8, NULL, 0));
  ev.ph = 'e';
  S_CALL(&s, &ev, tw_async_end(s.w, NULL, "helper", 8, NULL, 0));
  /* Other phases keep no category. */
  ev = mkev_ts('I', NULL, "nocat", 5);
  s_emit(&s, &ev);
  s_finish(&s);
}

/* A double is never written with more than 19 digits after the decimal
 * point (Perfetto divides them by 10^n in a uint64_t): exponent form
 * instead.  Every one reads back exactly. */
static void test_doubles_fraction_digits(void **state)
{
  static const struct { double v; const char *text; } t[] = {
    { 0.00012345678901234567, "1.2345678901234567e-04" },
    { -0.00098765432109876533, "-9.8765432109876533e-04" },
    { 0.0001, "0.0001" },                  /* short: stays as it was */
    { 0.00012345, "0.00012345" },
    { 0.0012345678901234567, "0.0012345678901234567" },   /* 19 */
    { 1e-5, "1e-05" },
  };
  enum { N = 4000 };
  static sess s;
  static tw_arg a[N];
  tw_event ev;
  jc_doc *d;
  jc_val args;
  (void)state;

  rng = 0x9e3779b97f4a7c15ULL ^ tu_seed("test_doubles_fraction_digits");
  for (size_t i = 0; i < N; i++) {
    double v;
    if (i < sizeof t / sizeof t[0]) {
      v = t[i].v;
    } else {
      /* Random doubles, mostly near 1e-4 where %.17g writes 20. */
      uint64_t bits = rnd();
      memcpy(&v, &bits, sizeof v);
      if (!isfinite(v) || rn(4))
        v = ldexp((double)(rnd() >> 11) / 9007199254740992.0,
                  -(int)rn(40)) * (rn(2) ? 1 : -1);
    }
    a[i] = tw_arg_double("d", v);
  }
  s_open(&s, NULL);
  for (size_t i = 0; i < N; i++) {
    ev = mkev_ts('I', NULL, "d", i);
    ev.args = &a[i];
    ev.nargs = 1;
    s_emit(&s, &ev);                 /* checks the value read back */
  }
  d = s_close(&s);
  for (size_t i = 0; i < N; i++) {
    size_t n;
    const char *raw, *dot;
    args = jc_get(d, s_record(d, i), "args");
    raw = jc_raw(d, jc_get(d, args, "d"), &n);
    if (i < sizeof t / sizeof t[0])
      assert_raw(d, jc_get(d, args, "d"), t[i].text);
    dot = memchr(raw, '.', n);
    if (dot && !memchr(raw, 'e', n) && (size_t)(raw + n - dot - 1) > 19)
      fail_msg("%.*s: %zu digits after the point", (int)n, raw,
               (size_t)(raw + n - dot - 1));
  }
  s_done(&s, d);
}

/* max_string bounds the caller's strings.  The names the library writes
 * itself -- "process_name", "process_sort_index", "sort_index"... -- must
 * never be cut or refused, so max_string has a floor, TW_MIN_MAX_STRING,
 * above the longest of them. */

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(test_ids_hex, teardown),
    cmocka_unit_test_teardown(test_timestamps_exact, teardown),
    cmocka_unit_test_teardown(test_numbers_every_length, teardown),
    cmocka_unit_test_teardown(test_numbers_viewer_limits, teardown),
    cmocka_unit_test_teardown(test_doubles_fraction_digits, teardown),
    cmocka_unit_test_teardown(test_shapes_every_viewer, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
