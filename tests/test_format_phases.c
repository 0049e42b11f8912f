/* test_format_phases.c -- what tracewriter writes, by area (format_test.h)
 *
 * Every phase (X, B/E, i, C, b/n/e, s/t/f, M, N/O/D, R, c) and the fields
 * each one writes; the helpers of tracewriter.h and spans.
 *
 * Read back with the strict JSON checker, field by field
 * (format_test.h).
 */
#include "format_test.h"

/* ------------------------------------------------------ 1. every phase */

static void test_phase_complete(void **state)
{
  static sess s;
  tw_event ev;
  static const tw_arg args[] = {
    { "n", TW_ARG_INT, 0, { .i = -42 } },
    { "label", TW_ARG_STRING, TW_NUL_TERMINATED, { .s = "hello" } },
  };
  (void)state;

  s_open(&s, NULL);
  /* Bare: name and times only. */
  ev = mkev_ts('X', NULL, "bare", 1000);
  ev.dur = 2000;
  s_emit(&s, &ev);
  /* Everything an X can carry. */
  ev = mkev_ts('X', "cat1,cat2", "full", 1234567891);
  ev.dur = 999;
  ev.has |= TW_HAS_PID | TW_HAS_TID | TW_HAS_TTS | TW_HAS_TDUR |
            TW_HAS_BIND_ID;
  ev.flags |= TW_EV_FLOW_IN | TW_EV_FLOW_OUT;
  ev.pid = 4242;
  ev.tid = 77;
  ev.tts = 5000;
  ev.tdur = 1;
  ev.bind_id = 0xabcdef;
  ev.cname = "thread_state_running";
  ev.args = args;
  ev.nargs = 2;
  s_emit(&s, &ev);
  /* Flow v2 halves alone. */
  ev = mkev_ts('X', "c", "in_only", 1);
  ev.has |= TW_HAS_BIND_ID;
  ev.flags |= TW_EV_FLOW_IN;
  ev.bind_id = 0;
  s_emit(&s, &ev);
  ev = mkev_ts('X', "c", "out_only", 2);
  ev.flags |= TW_EV_FLOW_OUT;
  s_emit(&s, &ev);
  /* Zero duration. */
  ev = mkev_ts('X', "c", "zero", 3);
  s_emit(&s, &ev);
  s_finish(&s);
}

static void test_phase_begin_end(void **state)
{
  static sess s;
  tw_event ev;
  static const tw_arg args[] = { { "k", TW_ARG_BOOL, 0, { .b = 1 } } };
  (void)state;

  s_open(&s, NULL);
  ev = mkev_ts('B', "io", "read", 10);
  ev.args = args;
  ev.nargs = 1;
  s_emit(&s, &ev);
  ev = mkev_ts('E', "io", "read", 20);
  s_emit(&s, &ev);
  ev = mkev_ts('B', NULL, "outer", 30);
  ev.has |= TW_HAS_TTS;
  ev.tts = 3;
  s_emit(&s, &ev);
  /* E needs no name (and gets none). */
  ev = mkev_ts('E', NULL, NULL, 40);
  ev.args = args;
  ev.nargs = 1;
  s_emit(&s, &ev);
  ev = mkev('E', NULL, NULL);        /* all defaults */
  s_emit(&s, &ev);
  s_finish(&s);
}

static void test_phase_instant(void **state)
{
  static const char scopes[] = { 'g', 'p', 't', 0 };
  static sess s;
  tw_event ev;
  (void)state;

  s_open(&s, NULL);
  for (int lower = 0; lower < 2; lower++) {
    for (size_t i = 0; i < sizeof scopes; i++) {
      ev = mkev_ts(lower ? 'i' : 'I', "cat", lower ? "lower" : "upper",
                   100 + i);
      ev.instant_scope = scopes[i];
      s_emit(&s, &ev);        /* check_event: "ph":"I", "s" as given or t */
    }
  }
  s_finish(&s);
}

static void test_phase_counter(void **state)
{
  static sess s;
  tw_event ev;
  static const tw_arg series[] = {
    { "heap", TW_ARG_INT, 0, { .i = 1 << 20 } },
    { "rss", TW_ARG_UINT, 0, { .u = UINT64_MAX } },
    { "ratio", TW_ARG_DOUBLE, 0, { .d = 0.25 } },
    { "neg", TW_ARG_INT, 0, { .i = INT64_MIN } },
  };
  (void)state;

  s_open(&s, NULL);
  ev = mkev_ts('C', "mem", "memory", 5000);
  ev.args = series;
  ev.nargs = 4;
  s_emit(&s, &ev);
  ev = mkev_ts('C', NULL, "one", 6000);
  ev.args = series + 2;
  ev.nargs = 1;
  ev.has |= TW_HAS_ID;            /* counters may carry an id */
  ev.id = 3;
  s_emit(&s, &ev);
  s_finish(&s);
}

static void test_phase_async(void **state)
{
  static const char phases[] = "bne";
  static sess s;
  tw_event ev;
  static const tw_arg args[] = { { "url", TW_ARG_STRING, TW_NUL_TERMINATED,
                                   { .s = "/x?y=1" } } };
  (void)state;

  s_open(&s, NULL);
  for (int i = 0; i < 3; i++) {
    ev = mkev_ts(phases[i], "net", "req", 10 + i);
    ev.has |= TW_HAS_ID;
    ev.id = 0x1a;
    if (i == 0) {
      ev.args = args;
      ev.nargs = 1;
    }
    s_emit(&s, &ev);
    ev = mkev_ts(phases[i], "net", "local", 20 + i);
    ev.has |= TW_HAS_ID;
    ev.flags |= TW_EV_ID2_LOCAL;
    ev.id = 0;
    s_emit(&s, &ev);
    ev = mkev_ts(phases[i], "net", "global", 30 + i);
    ev.has |= TW_HAS_ID;
    ev.flags |= TW_EV_ID2_GLOBAL;
    ev.id = UINT64_MAX;
    ev.id_scope = "my scope";
    s_emit(&s, &ev);
    ev = mkev_ts(phases[i], "net", "scoped", 40 + i);
    ev.has |= TW_HAS_ID | TW_HAS_PID | TW_HAS_TID;
    ev.id = 0x123456789abcdefULL;
    ev.pid = 4294967295;            /* the largest a viewer keeps */
    ev.tid = 0;
    ev.id_scope = "s\"q";
    s_emit(&s, &ev);
  }
  s_finish(&s);
}

static void test_phase_flow(void **state)
{
  static const char phases[] = "stf";
  static sess s;
  tw_event ev;
  (void)state;

  s_open(&s, NULL);
  for (int i = 0; i < 3; i++) {
    ev = mkev_ts(phases[i], "flow", "f", 100 + i);
    ev.has |= TW_HAS_ID;
    ev.id = 7;
    s_emit(&s, &ev);
    ev = mkev_ts(phases[i], "flow", "f2", 200 + i);
    ev.has |= TW_HAS_ID;
    ev.flags |= TW_EV_ID2_GLOBAL;
    ev.id = 8;
    if (phases[i] != 's')
      ev.flags |= TW_EV_BP_ENCLOSING;
    ev.id_scope = "sc";
    s_emit(&s, &ev);
    ev = mkev_ts(phases[i], "flow", "f3", 300 + i);
    ev.has |= TW_HAS_ID | TW_HAS_TTS;
    ev.flags |= TW_EV_ID2_LOCAL;
    ev.id = 9;
    ev.tts = 12;
    s_emit(&s, &ev);
  }
  s_finish(&s);
}

static void test_phase_metadata(void **state)
{
  static sess s;
  tw_event ev;
  tw_arg a_pn = tw_arg_str("name", "server \"main\"");
  tw_arg a_tn = tw_arg_str("name", "worker-1");
  tw_arg a_psi = tw_arg_int("sort_index", -5);
  tw_arg a_tsi = tw_arg_int("sort_index", INT32_MAX);
  tw_arg a_pl = tw_arg_str("labels", "a,b");
  (void)state;

  s_open(&s, NULL);
  ev = mkev('M', NULL, "process_name");
  ev.args = &a_pn;
  ev.nargs = 1;
  S_CALL(&s, &ev, tw_process_name(s.w, "server \"main\""));
  ev = mkev('M', NULL, "thread_name");
  ev.args = &a_tn;
  ev.nargs = 1;
  S_CALL(&s, &ev, tw_thread_name(s.w, "worker-1"));
  ev = mkev('M', NULL, "process_sort_index");
  ev.args = &a_psi;
  ev.nargs = 1;
  S_CALL(&s, &ev, tw_process_sort_index(s.w, -5));
  ev = mkev('M', NULL, "thread_sort_index");
  ev.args = &a_tsi;
  ev.nargs = 1;
  S_CALL(&s, &ev, tw_thread_sort_index(s.w, INT32_MAX));
  ev = mkev('M', NULL, "process_labels");
  ev.args = &a_pl;
  ev.nargs = 1;
  S_CALL(&s, &ev, tw_process_labels(s.w, "a,b"));
  /* Through tw_emit: another thread's name, and an M with a ts. */
  ev = mkev('M', NULL, "thread_name");
  ev.args = &a_tn;
  ev.nargs = 1;
  ev.has = TW_HAS_TID | TW_HAS_PID;
  ev.tid = 99;
  ev.pid = 98;
  s_emit(&s, &ev);
  ev.has |= TW_HAS_TS;
  ev.ts = 123;
  s_emit(&s, &ev);
  s_finish(&s);
}

static void test_phase_object(void **state)
{
  static const char snapshot[] =
    "{\"layers\":[{\"id\":1,\"bounds\":[0,0,10.5,20]},{\"id\":2}],"
    "\"name\":\"cc::LayerTreeHost\",\"visible\":true,\"parent\":null}";
  static sess s;
  tw_event ev;
  jc_doc *d;
  jc_val snap, layers, l0, bounds;
  tw_arg a = tw_arg_json("snapshot", snapshot);
  (void)state;

  s_open(&s, NULL);
  ev = mkev_ts('N', "obj", "LayerTreeHost", 1);
  ev.has |= TW_HAS_ID;
  ev.id = 0xdead;
  s_emit(&s, &ev);
  ev = mkev_ts('O', "obj", "LayerTreeHost", 2);
  ev.has |= TW_HAS_ID;
  ev.id = 0xdead;
  ev.args = &a;
  ev.nargs = 1;
  s_emit(&s, &ev);
  ev = mkev_ts('D', "obj", "LayerTreeHost", 3);
  ev.has |= TW_HAS_ID;
  ev.flags |= TW_EV_ID2_LOCAL;
  ev.id = 0xdead;
  ev.id_scope = "cc";
  s_emit(&s, &ev);
  d = s_close(&s);
  /* Navigate inside the snapshot. */
  snap = jc_get(d, jc_get(d, s_record(d, 1), "args"), "snapshot");
  assert_int_equal(jc_type(d, snap), JC_OBJECT);
  assert_int_equal(jc_len(d, snap), 4);
  layers = jc_get(d, snap, "layers");
  assert_int_equal(jc_len(d, layers), 2);
  l0 = jc_index(d, layers, 0);
  tu_assert_int(d, l0, "id", 1);
  bounds = jc_get(d, l0, "bounds");
  assert_int_equal(jc_len(d, bounds), 4);
  assert_true(jc_num(d, jc_index(d, bounds, 2)) == 10.5);
  tu_assert_int(d, jc_index(d, layers, 1), "id", 2);
  tu_assert_str(d, snap, "name", "cc::LayerTreeHost");
  assert_int_equal(jc_type(d, jc_get(d, snap, "visible")), JC_TRUE);
  assert_int_equal(jc_type(d, jc_get(d, snap, "parent")), JC_NULL);
  assert_true(jc_get(d, snap, "parent") >= 0);
  s_done(&s, d);
}

static void test_phase_mark(void **state)
{
  static sess s;
  tw_event ev;
  (void)state;

  s_open(&s, NULL);
  /* tw_mark writes a global instant, which DevTools draws; 'R' only
   * through tw_emit. */
  ev = mkev('I', "blink.user_timing", "navigationStart");
  ev.instant_scope = 'g';
  S_CALL(&s, &ev, tw_mark(s.w, "blink.user_timing", "navigationStart"));
  ev = mkev('I', NULL, "nocat");
  ev.instant_scope = 'g';
  S_CALL(&s, &ev, tw_mark(s.w, NULL, "nocat"));
  ev = mkev_ts('R', "c", "explicit", 77);
  s_emit(&s, &ev);
  s_finish(&s);
}

static void test_phase_clock_sync(void **state)
{
  static sess s;
  tw_event ev;
  tw_arg args[2];
  (void)state;

  args[0] = tw_arg_str("sync_id", "abc-123");
  args[1] = tw_arg_double("issue_ts", 1234.5);
  s_open(&s, NULL);
  ev = mkev_ts('c', NULL, "clock_sync", 1000);
  ev.args = args;
  ev.nargs = 1;
  s_emit(&s, &ev);
  ev = mkev_ts('c', NULL, "clock_sync", 2000);
  ev.args = args;
  ev.nargs = 2;
  s_emit(&s, &ev);
  s_finish(&s);
}

static void test_cname_tts_tdur(void **state)
{
  static sess s;
  tw_event ev;
  (void)state;

  s_open(&s, NULL);
  ev = mkev_ts('X', "c", "colored", 10);
  ev.dur = 5;
  ev.cname = "good";
  ev.has |= TW_HAS_TTS | TW_HAS_TDUR;
  ev.tts = 0;
  ev.tdur = (uint64_t)INT64_MAX;    /* tts + tdur: the most allowed */
  s_emit(&s, &ev);
  ev = mkev_ts('B', "c", "tts_only", 11);
  ev.has |= TW_HAS_TTS;
  ev.tts = 999;
  ev.cname = "terrible";
  s_emit(&s, &ev);
  ev = mkev_ts('I', "c", "cname", 12);
  ev.cname = "yellow";
  s_emit(&s, &ev);
  s_finish(&s);
}

static void test_pid_tid_ts_defaults(void **state)
{
  static sess s;
  tw_event ev;
  jc_doc *d;
  uint64_t ts0, ts1;
  (void)state;

  s_open(&s, NULL);
  /* A zeroed event takes every default (check_event: getpid(), gettid(),
   * ts between the clock before and after the call). */
  ev = mkev('B', NULL, "defaults");
  s_emit(&s, &ev);
  ev = mkev('E', NULL, "defaults");
  s_emit(&s, &ev);
  /* Explicit values, including ones a default could never give. */
  ev = mkev('I', NULL, "explicit");
  ev.has = TW_HAS_PID | TW_HAS_TID;
  ev.pid = 0;
  ev.tid = 0;
  s_emit(&s, &ev);
  ev.pid = 4294967295;              /* the most a viewer keeps */
  ev.tid = 4294967295;
  s_emit(&s, &ev);
  ev.has = TW_HAS_PID;
  ev.pid = 31337;
  s_emit(&s, &ev);                  /* tid still the default */
  ev.has = TW_HAS_TID;
  ev.tid = 4;
  s_emit(&s, &ev);                  /* pid still the default */
  d = s_close(&s);
  /* The default ts follows the clock. */
  assert_int_equal(jc_us_to_ns(d, jc_get(d, s_record(d, 0), "ts"), &ts0), 0);
  assert_int_equal(jc_us_to_ns(d, jc_get(d, s_record(d, 1), "ts"), &ts1), 0);
  assert_true(ts0 <= ts1);
  s_done(&s, d);
}

static void test_helpers(void **state)
{
  static sess s;
  tw_event ev;
  static const tw_arg args[] = {
    { "a", TW_ARG_INT, 0, { .i = 1 } },
    { "b", TW_ARG_STRING, TW_NUL_TERMINATED, { .s = "two" } },
  };
  static const tw_arg series[] = {
    { "x", TW_ARG_DOUBLE, 0, { .d = 1.5 } },
    { "y", TW_ARG_UINT, 0, { .u = 2 } },
  };
  (void)state;

  s_open(&s, NULL);
  /* tw_complete: X with ts and dur as given. */
  ev = mkev_ts('X', "cat", "complete", 1234567891);
  ev.dur = 1000;
  ev.args = args;
  ev.nargs = 2;
  S_CALL(&s, &ev, tw_complete(s.w, "cat", "complete", 1234567891, 1000,
                              args, 2));
  ev = mkev_ts('X', NULL, "complete0", 0);
  S_CALL(&s, &ev, tw_complete(s.w, NULL, "complete0", 0, 0, NULL, 0));
  /* tw_begin / tw_end at now. */
  ev = mkev('B', "cat", "span");
  ev.args = args;
  ev.nargs = 1;
  S_CALL(&s, &ev, tw_begin(s.w, "cat", "span", args, 1));
  ev = mkev('E', "cat", "span");
  S_CALL(&s, &ev, tw_end(s.w, "cat", "span", NULL, 0));
  ev = mkev('E', NULL, NULL);
  S_CALL(&s, &ev, tw_end(s.w, NULL, NULL, NULL, 0));
  /* tw_instant with each scope. */
  ev = mkev('I', "cat", "inst");
  ev.instant_scope = 'g';
  S_CALL(&s, &ev, tw_instant(s.w, "cat", "inst", 'g', NULL, 0));
  ev.instant_scope = 'p';
  ev.args = args + 1;
  ev.nargs = 1;
  S_CALL(&s, &ev, tw_instant(s.w, "cat", "inst", 'p', args + 1, 1));
  ev = mkev('I', "cat", "inst");
  ev.instant_scope = 't';
  S_CALL(&s, &ev, tw_instant(s.w, "cat", "inst", 't', NULL, 0));
  ev.instant_scope = 0;
  S_CALL(&s, &ev, tw_instant(s.w, "cat", "inst", 0, NULL, 0));
  /* tw_counter. */
  ev = mkev('C', "mem", "ctr");
  ev.args = series;
  ev.nargs = 2;
  S_CALL(&s, &ev, tw_counter(s.w, "mem", "ctr", series, 2));
  /* Async: id as "id". */
  ev = mkev('b', "net", "req");
  ev.has = TW_HAS_ID;
  ev.id = 0x10;
  ev.args = args;
  ev.nargs = 2;
  S_CALL(&s, &ev, tw_async_begin(s.w, "net", "req", 0x10, args, 2));
  ev.ph = 'n';
  ev.nargs = 0;
  ev.args = NULL;
  S_CALL(&s, &ev, tw_async_instant(s.w, "net", "req", 0x10, NULL, 0));
  ev.ph = 'e';
  ev.args = args + 1;
  ev.nargs = 1;
  S_CALL(&s, &ev, tw_async_end(s.w, "net", "req", 0x10, args + 1, 1));
  /* Flows: only the end binds to the enclosing slice. */
  ev = mkev('s', "flow", "fl");
  ev.has = TW_HAS_ID;
  ev.id = UINT64_MAX;
  S_CALL(&s, &ev, tw_flow_start(s.w, "flow", "fl", UINT64_MAX));
  ev.ph = 't';
  S_CALL(&s, &ev, tw_flow_step(s.w, "flow", "fl", UINT64_MAX));
  ev.ph = 'f';
  ev.flags |= TW_EV_BP_ENCLOSING;
  S_CALL(&s, &ev, tw_flow_end(s.w, "flow", "fl", UINT64_MAX));
  /* Mark. */
  ev = mkev('I', "m", "mark");
  ev.instant_scope = 'g';
  S_CALL(&s, &ev, tw_mark(s.w, "m", "mark"));
  s_finish(&s);
}

static void inner_scope(tw_writer *w)
{
  TW_SCOPE(w, "scope", "inner");
}

static void test_span(void **state)
{
  static sess s;
  tw_event ev;
  tw_span sp;
  uint64_t lo, hi;
  rec *r;
  (void)state;

  s_open(&s, NULL);
  /* TW_SCOPE: one X when the scope exits. */
  lo = tw_now_ns();
  {
    TW_SCOPE(s.w, "scope", "block");
    /* nothing written yet */
  }
  hi = tw_now_ns();
  ev = mkev('X', "scope", "block");
  r = s_add(&s, &ev, lo, hi);
  r->dur_window = 1;
  lo = tw_now_ns();
  inner_scope(s.w);
  hi = tw_now_ns();
  ev = mkev('X', "scope", "inner");
  r = s_add(&s, &ev, lo, hi);
  r->dur_window = 1;
  /* tw_span_begin / tw_span_end: ts is exactly the start. */
  sp = tw_span_begin(s.w, NULL, "manual");
  assert_ptr_equal(sp.w, s.w);
  assert_null(sp.cat);
  assert_string_equal(sp.name, "manual");
  rc_equal(tw_span_end(&sp), 0, "tw_span_end");
  hi = tw_now_ns();
  ev = mkev_ts('X', NULL, "manual", sp.start_ns);
  r = s_add(&s, &ev, sp.start_ns, hi);
  r->dur_window = 1;
  s_finish(&s);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(test_phase_complete, teardown),
    cmocka_unit_test_teardown(test_phase_begin_end, teardown),
    cmocka_unit_test_teardown(test_phase_instant, teardown),
    cmocka_unit_test_teardown(test_phase_counter, teardown),
    cmocka_unit_test_teardown(test_phase_async, teardown),
    cmocka_unit_test_teardown(test_phase_flow, teardown),
    cmocka_unit_test_teardown(test_phase_metadata, teardown),
    cmocka_unit_test_teardown(test_phase_object, teardown),
    cmocka_unit_test_teardown(test_phase_mark, teardown),
    cmocka_unit_test_teardown(test_phase_clock_sync, teardown),
    cmocka_unit_test_teardown(test_cname_tts_tdur, teardown),
    cmocka_unit_test_teardown(test_pid_tid_ts_defaults, teardown),
    cmocka_unit_test_teardown(test_helpers, teardown),
    cmocka_unit_test_teardown(test_span, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
