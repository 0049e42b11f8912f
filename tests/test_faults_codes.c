/* test_faults_codes.c -- fault injection: no private code reaches a
 * caller
 *
 * The library's internal codes (TW__ETRUNCATED, TW__ENOROOM, TW__ENOLINK,
 * TW__EMOVED, near -1996..-1999 in src/) are answers between its own
 * functions; a caller must only ever see 0 or a public code, one that
 * tw_err_name knows (a TW_E* of tracewriter.h or a negated errno).  For
 * each output call that a run makes (every write, writev, pwrite,
 * pwritev and fallocate, from tw_open to tw_close), in turn, the file is
 * cut to nothing right after it (logrotate's copytruncate), or the call
 * fails: every public function's return is checked against the public
 * list, and the file read back with the strict checker.  A cut is not an
 * error: there every call returns 0 and the file is a valid trace.
 *
 * Built from the library's sources and the harness tests/faults.c, like
 * the other test_faults_* programs (faults.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "faults.h"

#include <errno.h>
#include <unistd.h>

/* Rounds of calls in a run: every helper a few times, several commits
 * of the 512-byte buffers. */
#define ROUNDS 32

/* Output calls that a cut can follow, and a failure can hit. */
static const enum fk kinds[] = {
  FK_WRITE, FK_WRITEV, FK_PWRITE, FK_PWRITEV, FK_FALLOC
};

/* The writers these tests run: every sink, both commit modes, sync. */
static const cfg *const cfgs[] = {
  &FILE_IN, &FILE_BG, &GZIP_IN, &GZIP_BG, &MMAP_IN, &MMAP_BG, &FILE_SYNC,
  &MMAP_SYNC, &FILE_APP
};

/* rc, the return of what, must be 0 or a public code. */
static void public(int rc, const char *what)
{
  if (rc != 0 && strcmp(tw_err_name(rc), "UNKNOWN") == 0)
    fail_msg("%s: %s returned %d, which is no public code (tw_strerror: "
             "\"%s\")", ctx, what, rc, tw_strerror(rc));
}

/* What a run of the public functions returned. */
typedef struct codes {
  int first;               /* the first error, or 0 */
  int open_failed;         /* tw_open returned NULL */
} codes;

/* rc, the return of what: public, and remembered if the first error. */
static void see(codes *cs, int rc, const char *what)
{
  public(rc, what);
  if (rc && !cs->first)
    cs->first = rc;
}

/* Open, emit through every helper and tw_emit, flush, read the stats,
 * close: every return checked. */
static void run_all(target *t, codes *cs)
{
  tw_arg a[2] = { tw_arg_int("n", 1), tw_arg_str("s", "x") };
  tw_stats st;
  tw_span sp;
  int err;

  memset(cs, 0, sizeof *cs);
  if (!t_open(t, &err)) {
    see(cs, err, "tw_open");
    cs->open_failed = 1;
    EXPECT(err != 0);
    return;
  }
  for (int i = 0; i < ROUNDS; i++) {
    see(cs, tu_emit(&F, t->w, i), "tw_emit");
    switch (i % 8) {
    case 0:
      see(cs, tw_complete(t->w, "c", "x", tw_now_ns(), 5, a, 2),
          "tw_complete");
      break;
    case 1:
      see(cs, tw_begin(t->w, "c", "b", a, 1), "tw_begin");
      see(cs, tw_end(t->w, "c", "b", NULL, 0), "tw_end");
      break;
    case 2:
      see(cs, tw_instant(t->w, "c", "i", 'p', a, 2), "tw_instant");
      see(cs, tw_counter(t->w, "c", "k", a, 1), "tw_counter");
      break;
    case 3:
      see(cs, tw_async_begin(t->w, "c", "a", 7, NULL, 0), "tw_async_begin");
      see(cs, tw_async_instant(t->w, "c", "a", 7, a, 1), "tw_async_instant");
      see(cs, tw_async_end(t->w, "c", "a", 7, NULL, 0), "tw_async_end");
      break;
    case 4:
      see(cs, tw_flow_start(t->w, "c", "f", 9), "tw_flow_start");
      see(cs, tw_flow_step(t->w, "c", "f", 9), "tw_flow_step");
      see(cs, tw_flow_end(t->w, "c", "f", 9), "tw_flow_end");
      break;
    case 5:
      see(cs, tw_thread_name(t->w, "worker"), "tw_thread_name");
      see(cs, tw_process_sort_index(t->w, i), "tw_process_sort_index");
      see(cs, tw_thread_sort_index(t->w, i), "tw_thread_sort_index");
      see(cs, tw_process_labels(t->w, "a,b"), "tw_process_labels");
      break;
    case 6:
      sp = tw_span_begin(t->w, "c", "span");
      see(cs, tw_mark(t->w, "c", "m"), "tw_mark");
      see(cs, tw_span_end(&sp), "tw_span_end");
      break;
    default:
      see(cs, tw_flush(t->w), "tw_flush");
      see(cs, tw_get_stats(t->w, &st), "tw_get_stats");
      break;
    }
  }
  see(cs, tw_errcode(t->w), "tw_errcode");
  see(cs, t_close(t), "tw_close");
}

/* The output, if any: a valid trace (a cut right after the last write
 * leaves nothing). */
static void check_output(target *t)
{
  size_t len, n;
  char *raw = t_bytes(t, &len), *json, why[96];
  jc_doc *d;

  if (len == 0) {
    free(raw);
    return;
  }
  json = json_of(t->c, raw, len, &n);
  EXPECT(has_tail(json, n));
  if (!(d = tu_parse_trace(json, n, why, sizeof why)))
    fail_msg("%s: not a valid trace (%s): %.*s", ctx, why,
             (int)(n < 120 ? n : 120), json);
  jc_free(d);
  free(json);
}

/* The calls of kind k that run_all makes on c without a fault. */
static unsigned long calls_of(const cfg *c, enum fk k)
{
  target t;
  codes cs;

  snprintf(ctx, sizeof ctx, "%s: counting %s calls", c->name, fk_names[k]);
  t_init(&t, c);
  fault_reset();
  run_all(&t, &cs);
  EXPECT_RC(cs.first, 0);
  check_output(&t);
  t_cleanup(&t);
  return fault_calls(k);
}

/* For each call of kind k of a run on c, in turn: the file is cut right
 * after it (cut) or it fails with EIO.  Returns the runs with a fault
 * injected. */
static unsigned long each_call(const cfg *c, enum fk k, int cut)
{
  unsigned long n_all = calls_of(c, k), n, injected = 0;

  for (n = 1; n <= n_all; n++) {
    target t;
    codes cs;

    snprintf(ctx, sizeof ctx, "%s: %s %s call %lu of %lu", c->name,
             cut ? "file cut after" : "EIO at", fk_names[k], n, n_all);
    t_init(&t, c);
    fault_reset();
    if (cut)
      fault_cut(k, n);
    else
      fault_fail(k, n, 1, EIO);
    run_all(&t, &cs);
    injected += fault_injected(k) > 0;
    fault_reset();
    if (cut) {
      /* A cut is not an error: a new document begins (but a stream
       * cannot tell a cut, so its file need not be valid). */
      EXPECT_RC(cs.first, 0);
      if (c->how == PATH)
        check_output(&t);
    }
    t_cleanup(&t);
  }
  return injected;
}

/* each_call for every writer and output call kind.  Returns the runs
 * with a fault injected. */
static unsigned long every_call(int cut)
{
  unsigned long runs = 0;

  for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++)
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
      runs += each_call(cfgs[i], kinds[k], cut);
  return runs;
}

/* A copytruncate right after any output call, tw_open's included. */
static void test_cut_after_each_call(void **state)
{
  (void)state;
  EXPECT(every_call(1) >= 50);
}

/* Any output call fails. */
static void test_eio_at_each_call(void **state)
{
  (void)state;
  EXPECT(every_call(0) >= 50);
}

/* The cut that tw_open met: right after the first document's write, the
 * file is cut; tw_open begins the document again and succeeds. */
static void test_cut_inside_open(void **state)
{
  static const cfg *const cs[] = { &FILE_IN, &GZIP_IN, &FILE_SYNC };
  (void)state;

  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
    target t;
    tw_stats st;
    int err;

    snprintf(ctx, sizeof ctx, "%s: cut after tw_open's first write",
             cs[i]->name);
    t_init(&t, cs[i]);
    fault_reset();
    fault_cut(FK_PWRITEV, 1);
    EXPECT(t_open(&t, &err) != NULL);
    EXPECT_RC(err, 0);
    EXPECT(fault_injected(FK_PWRITEV) == 1);
    fault_reset();
    if (t.w) {
      EXPECT_RC(tw_get_stats(t.w, &st), 0);
      EXPECT(st.restarts == 1);
      EXPECT_RC(tu_emit(&F, t.w, 0), 0);
      EXPECT_RC(t_close(&t), 0);
      {
        jc_doc *d = t_load(&t);
        EXPECT(tu_check_prefix(&F, d) == 1);
        jc_free(d);
      }
    }
    t_cleanup(&t);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    FAULTS_TEST(test_wrappers_see_library),
    FAULTS_TEST(test_cut_inside_open),
    FAULTS_TEST(test_cut_after_each_call),
    FAULTS_TEST(test_eio_at_each_call),
  };

  faults_prefer_tmpfs();
  return cmocka_run_group_tests(tests, NULL, NULL);
}
