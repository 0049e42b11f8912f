/* test_format.c -- what tracewriter writes, event by event and field by field
 *
 * Every test writes through the public API into a temporary file, closes
 * the writer, reads the file back with the strict JSON checker and compares
 * every field of every record with what was emitted: the exact set of keys
 * (so an optional field that should be absent is), strings byte for byte,
 * numbers exactly, timestamps as exact integer nanoseconds.
 */
#include "testutil.h"
#include "viewer_rules.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#define U_FFFD "\xef\xbf\xbd"

/* ------------------------------------------------------------- helpers */

static int64_t my_tid(void)
{
  return (int64_t)syscall(SYS_gettid);
}

/* s[0..n) made printable for a failure message (\xNN for the rest). */
static const char *shown(const char *s, size_t n, char *out, size_t cap)
{
  size_t o = 0;
  for (size_t i = 0; i < n && o + 5 < cap; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 0x20 && c < 0x7f && c != '\\')
      out[o++] = (char)c;
    else
      o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
  }
  out[o] = '\0';
  return out;
}

/* v must be a string whose decoded bytes are exactly s[0..n). */
static void assert_jstr(const jc_doc *d, jc_val v, const char *s, size_t n,
                        const char *what)
{
  char a[512], b[512];
  size_t got_n;
  const char *got;

  if (v < 0)
    fail_msg("%s: missing", what);
  if (jc_type(d, v) != JC_STRING)
    fail_msg("%s: not a string", what);
  got = jc_str(d, v, &got_n);
  if (got_n != n || memcmp(got, s, n) != 0)
    fail_msg("%s: got \"%s\" (%zu bytes), expected \"%s\" (%zu bytes)", what,
             shown(got, got_n, a, sizeof a), got_n, shown(s, n, b, sizeof b),
             n);
}

/* The raw text of v must be exactly text. */
static void assert_raw(const jc_doc *d, jc_val v, const char *text)
{
  size_t n;
  const char *raw = jc_raw(d, v, &n);
  assert_non_null(raw);
  if (n != strlen(text) || memcmp(raw, text, n) != 0)
    fail_msg("raw text \"%.*s\", expected \"%s\"", (int)n, raw, text);
}

static void assert_hex(const jc_doc *d, jc_val v, uint64_t id,
                       const char *what)
{
  char hex[32];
  snprintf(hex, sizeof hex, "0x%" PRIx64, id);
  assert_jstr(d, v, hex, strlen(hex), what);
}

static int is_ws(char c)
{
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* A raw JSON arg: written as given, outer whitespace aside, with its
 * newlines turned into spaces. */
static void assert_raw_json(const jc_doc *d, jc_val v, const char *in,
                            size_t n)
{
  size_t rl;
  const char *raw;

  if (n == TW_NUL_TERMINATED)
    n = strlen(in);
  while (n && is_ws(in[0])) {
    in++;
    n--;
  }
  while (n && is_ws(in[n - 1]))
    n--;
  raw = jc_raw(d, v, &rl);
  assert_non_null(raw);
  if (rl != n)
    fail_msg("raw JSON \"%.*s\", expected \"%.*s\"", (int)rl, raw, (int)n,
             in);
  for (size_t i = 0; i < n; i++) {
    char c = (in[i] == '\n' || in[i] == '\r') ? ' ' : in[i];
    if (raw[i] != c)
      fail_msg("raw JSON \"%.*s\", expected \"%.*s\" (byte %zu)", (int)rl,
               raw, (int)n, in, i);
  }
}

/* One member key present exactly once, as a string equal to s[0..n). */
static void key_str(const jc_doc *d, jc_val obj, const char *key,
                    const char *s, size_t n, size_t *nkeys)
{
  assert_jstr(d, jc_get(d, obj, key), s, n, key);
  assert_int_equal(jc_count_key(d, obj, key), 1);
  (*nkeys)++;
}

static void key_true(const jc_doc *d, jc_val obj, const char *key,
                     size_t *nkeys)
{
  jc_val v = jc_get(d, obj, key);
  if (v < 0 || jc_type(d, v) != JC_TRUE)
    fail_msg("\"%s\" is not true", key);
  assert_int_equal(jc_count_key(d, obj, key), 1);
  (*nkeys)++;
}

/* One argument, member v of the args object, against what was emitted. */
static void check_arg(const jc_doc *d, jc_val args, jc_val v, const tw_arg *a)
{
  int64_t i;
  uint64_t u;
  char what[160];
  char buf[120];

  snprintf(what, sizeof what, "arg \"%s\"",
           shown(a->name, strlen(a->name), buf, sizeof buf));
  if (jc_get(d, args, a->name) != v)
    fail_msg("%s: not at its place in args (missing, renamed or reordered)",
             what);
  assert_int_equal(jc_count_key(d, args, a->name), 1);
  switch (a->type) {
  case TW_ARG_INT:
    if (jc_int64(d, v, &i) != 0)
      fail_msg("%s: not an int64", what);
    assert_int_equal(i, a->v.i);
    break;
  case TW_ARG_UINT:
    if (a->v.u > (uint64_t)INT64_MAX) {
      /* Perfetto would read the integer as negative: the nearest double,
       * in exponent form. */
      size_t rl;
      const char *raw = jc_raw(d, v, &rl);
      if (jc_type(d, v) != JC_NUMBER || !memchr(raw, 'e', rl) ||
          jc_num(d, v) != (double)a->v.u)
        fail_msg("%s: %" PRIu64 " written as \"%.*s\", not as a double in "
                 "exponent form", what, a->v.u, (int)rl, raw);
      break;
    }
    if (jc_uint64(d, v, &u) != 0)
      fail_msg("%s: not a uint64", what);
    assert_int_equal(u, a->v.u);
    break;
  case TW_ARG_DOUBLE:
    if (!isfinite(a->v.d)) {
      if (jc_type(d, v) != JC_NULL)
        fail_msg("%s: non-finite not written as null", what);
    } else {
      double got;
      assert_int_equal(jc_type(d, v), JC_NUMBER);
      got = jc_num(d, v);
      if (!(got == a->v.d)) {
        size_t rl;
        const char *raw = jc_raw(d, v, &rl);
        fail_msg("%s: %.17g written as \"%.*s\" reads back as %.17g", what,
                 a->v.d, (int)rl, raw, got);
      }
    }
    break;
  case TW_ARG_BOOL:
    assert_int_equal(jc_type(d, v), a->v.b ? JC_TRUE : JC_FALSE);
    break;
  case TW_ARG_STRING:
    if (!a->v.s)
      assert_int_equal(jc_type(d, v), JC_NULL);
    else
      assert_jstr(d, v, a->v.s, a->len == TW_NUL_TERMINATED ? strlen(a->v.s) : a->len,
                  what);
    break;
  case TW_ARG_NULL:
    assert_int_equal(jc_type(d, v), JC_NULL);
    break;
  case TW_ARG_JSON:
    if (!a->v.s)
      assert_int_equal(jc_type(d, v), JC_NULL);
    else
      assert_raw_json(d, v, a->v.s, a->len);
    break;
  default:
    fail_msg("%s: bad type %d in the expectation", what, a->type);
  }
}

/* Compare one record with the event that was expected to produce it:
 * every key that must be there, nothing else.  Defaults: ts within
 * [lo, hi], pid = getpid(), tid = the calling thread.  With dur_window,
 * dur is only known to end by hi. */
static void check_event(const jc_doc *d, jc_val obj, const tw_event *ev,
                        uint64_t lo, uint64_t hi, int dur_window)
{
  char ph[2] = { ev->ph, 0 };
  int instant = ev->ph == 'I' || ev->ph == 'i';
  size_t nkeys = 0;
  uint64_t ts = 0;
  jc_val v;

  assert_true(obj >= 0);
  assert_int_equal(jc_type(d, obj), JC_OBJECT);
  if (instant)
    ph[0] = 'I';
  key_str(d, obj, "ph", ph, 1, &nkeys);
  if (ev->name)
    key_str(d, obj, "name", ev->name, strlen(ev->name), &nkeys);
  else
    tu_assert_absent(d, obj, "name");
  if (ev->cat)
    key_str(d, obj, "cat", ev->cat, strlen(ev->cat), &nkeys);
  else
    tu_assert_absent(d, obj, "cat");
  if (ev->ph != 'M' || (ev->has & TW_HAS_TS)) {
    if (ev->has & TW_HAS_TS) {
      tu_assert_us(d, obj, "ts", ev->ts);
      ts = ev->ts;
    } else {
      assert_int_equal(jc_us_to_ns(d, jc_get(d, obj, "ts"), &ts), 0);
      assert_in_range(ts, lo, hi);
    }
    assert_int_equal(jc_count_key(d, obj, "ts"), 1);
    nkeys++;
  } else {
    tu_assert_absent(d, obj, "ts");
  }
  if (ev->ph == 'X') {
    if (dur_window) {
      uint64_t dur;
      assert_int_equal(jc_us_to_ns(d, jc_get(d, obj, "dur"), &dur), 0);
      assert_true(ts + dur <= hi);
    } else {
      tu_assert_us(d, obj, "dur", ev->dur);
    }
    assert_int_equal(jc_count_key(d, obj, "dur"), 1);
    nkeys++;
  } else {
    tu_assert_absent(d, obj, "dur");
  }
  if (ev->has & TW_HAS_TTS) {
    tu_assert_us(d, obj, "tts", ev->tts);
    assert_int_equal(jc_count_key(d, obj, "tts"), 1);
    nkeys++;
  } else {
    tu_assert_absent(d, obj, "tts");
  }
  if (ev->has & TW_HAS_TDUR) {
    tu_assert_us(d, obj, "tdur", ev->tdur);
    assert_int_equal(jc_count_key(d, obj, "tdur"), 1);
    nkeys++;
  } else {
    tu_assert_absent(d, obj, "tdur");
  }
  tu_assert_int(d, obj, "pid",
                (ev->has & TW_HAS_PID) ? ev->pid : (int64_t)getpid());
  nkeys++;
  tu_assert_int(d, obj, "tid", (ev->has & TW_HAS_TID) ? ev->tid : my_tid());
  nkeys++;
  if (instant) {
    char s[2] = { ev->instant_scope ? ev->instant_scope : 't', 0 };
    key_str(d, obj, "s", s, 1, &nkeys);
  } else {
    tu_assert_absent(d, obj, "s");
  }
  if ((ev->has & TW_HAS_ID) &&
      !(ev->flags & (TW_EV_ID2_LOCAL | TW_EV_ID2_GLOBAL))) {
    assert_hex(d, jc_get(d, obj, "id"), ev->id, "id");
    assert_int_equal(jc_count_key(d, obj, "id"), 1);
    nkeys++;
  } else {
    tu_assert_absent(d, obj, "id");
  }
  if ((ev->has & TW_HAS_ID) &&
      (ev->flags & (TW_EV_ID2_LOCAL | TW_EV_ID2_GLOBAL))) {
    const char *k = (ev->flags & TW_EV_ID2_LOCAL) ? "local" : "global";
    v = jc_get(d, obj, "id2");
    assert_true(v >= 0);
    assert_int_equal(jc_type(d, v), JC_OBJECT);
    assert_int_equal(jc_len(d, v), 1);
    assert_hex(d, jc_get(d, v, k), ev->id, k);
    assert_int_equal(jc_count_key(d, obj, "id2"), 1);
    nkeys++;
  } else {
    tu_assert_absent(d, obj, "id2");
  }
  if (ev->id_scope)
    key_str(d, obj, "scope", ev->id_scope, strlen(ev->id_scope), &nkeys);
  else
    tu_assert_absent(d, obj, "scope");
  if (ev->flags & TW_EV_BP_ENCLOSING)
    key_str(d, obj, "bp", "e", 1, &nkeys);
  else
    tu_assert_absent(d, obj, "bp");
  if (ev->has & TW_HAS_BIND_ID) {
    assert_hex(d, jc_get(d, obj, "bind_id"), ev->bind_id, "bind_id");
    assert_int_equal(jc_count_key(d, obj, "bind_id"), 1);
    nkeys++;
  } else {
    tu_assert_absent(d, obj, "bind_id");
  }
  if (ev->flags & TW_EV_FLOW_IN)
    key_true(d, obj, "flow_in", &nkeys);
  else
    tu_assert_absent(d, obj, "flow_in");
  if (ev->flags & TW_EV_FLOW_OUT)
    key_true(d, obj, "flow_out", &nkeys);
  else
    tu_assert_absent(d, obj, "flow_out");
  if (ev->cname)
    key_str(d, obj, "cname", ev->cname, strlen(ev->cname), &nkeys);
  else
    tu_assert_absent(d, obj, "cname");
  if (ev->nargs) {
    size_t i = 0;
    jc_val args = jc_get(d, obj, "args");
    assert_true(args >= 0);
    assert_int_equal(jc_type(d, args), JC_OBJECT);
    assert_int_equal(jc_len(d, args), ev->nargs);
    for (v = jc_first(d, args); v >= 0; v = jc_next(d, v), i++)
      check_arg(d, args, v, &ev->args[i]);
    assert_int_equal(i, ev->nargs);
    assert_int_equal(jc_count_key(d, obj, "args"), 1);
    nkeys++;
  } else {
    tu_assert_absent(d, obj, "args");
  }
  /* Every key written is one of those above: nothing unexpected. */
  assert_int_equal(jc_len(d, obj), nkeys);
}

/* The bytes on disk: the head, then one record per line, then the tail
 * and nothing after it, not even a newline; each record line is a JSON object by itself.
 * nevents counts the records but the document's clock record, which is
 * a line too. */
static void check_layout(const char *path, size_t nevents, int object_form)
{
  const char *head = object_form ? "{\"traceEvents\":[" : "[";
  const char *last = object_form ? "]}" : "]";
  size_t len, nl = 0, line = 0;
  int trailing = 0;
  char *buf = tu_read_file(path, &len);
  char *p = buf, *e = buf + len;

  tu_assert_tail(path, object_form);
  nevents++;                       /* the clock record */
  for (size_t i = 0; i < len; i++) {
    if (buf[i] == '\n')
      nl++;
    if (buf[i] == '\r' || buf[i] == '\0')
      fail_msg("raw CR or NUL at byte %zu", i);
  }
  assert_int_equal(nl, nevents + 1);   /* none after the tail */
  while (p < e) {
    char *q = memchr(p, '\n', (size_t)(e - p));
    size_t n;
    if (!q)
      q = e;                           /* the tail's line, unterminated */
    n = (size_t)(q - p);
    if (line == 0) {
      assert_int_equal(n, strlen(head));
      assert_memory_equal(p, head, n);
    } else if (line <= nevents) {
      const char *rec = p;
      size_t rn = n;
      jc_doc *one;
      /* The separator: ",\n" ending each record line but the last, or
       * "\n," starting each but the first; one style for the file. */
      if (line == 1)
        trailing = nevents > 1 && n > 0 && p[n - 1] == ',';
      if (trailing && line < nevents) {
        assert_true(n > 0 && p[n - 1] == ',');
        rn--;
      } else if (!trailing && line > 1) {
        assert_true(n > 0 && p[0] == ',');
        rec++;
        rn--;
      }
      assert_true(rn >= 2 && rec[0] == '{' && rec[rn - 1] == '}');
      one = tu_load_mem(rec, rn);
      assert_int_equal(jc_type(one, jc_root(one)), JC_OBJECT);
      jc_free(one);
    } else {
      assert_int_equal(line, nevents + 1);
      assert_int_equal(n, strlen(last));
      assert_memory_equal(p, last, n);
      assert_true(q == e);
    }
    p = q < e ? q + 1 : e;
    line++;
  }
  assert_int_equal(line, nevents + 2);
  free(buf);
}

/* Allocations of a test, freed at its end (or by the teardown). */
static void **pool;
static size_t npool, cappool;

static void *pool_alloc(size_t n)
{
  void *p = malloc(n ? n : 1);
  assert_non_null(p);
  if (npool == cappool) {
    cappool = cappool ? cappool * 2 : 1024;
    pool = realloc(pool, cappool * sizeof *pool);
    assert_non_null(pool);
  }
  pool[npool++] = p;
  return p;
}

static void pool_free(void)
{
  for (size_t i = 0; i < npool; i++)
    free(pool[i]);
  free(pool);
  pool = NULL;
  npool = cappool = 0;
}

/* ------------------------------------------------------------- sessions */

typedef struct rec {
  tw_event ev;           /* what the record must say */
  uint64_t lo, hi;       /* window of the default ts */
  int dur_window;        /* dur only known to end by hi */
} rec;

typedef struct sess {
  char *path;
  tw_writer *w;
  tw_options o;
  rec *recs;             /* the good events, in order */
  size_t n, cap;
  uint64_t nbad;         /* events refused */
  jc_doc *doc;           /* the file as read back by s_close */
  size_t nmarks;
  char marks[256][16];   /* names of the marker events */
} sess;

/* The open session, for the teardown when a test fails half-way (its
 * sess is static, so it outlives cmocka's longjmp). */
static sess *cur_sess;

static void s_open(sess *s, const tw_options *o)
{
  int err = 0;

  memset(s, 0, sizeof *s);
  cur_sess = s;
  if (o)
    s->o = *o;
  else
    assert_int_equal(tw_options_init(&s->o), 0);
  s->path = tu_tmppath(".json");
  s->w = tw_open(s->path, &s->o, &err);
  if (!s->w)
    fail_msg("tw_open: %s (%s)", tw_strerror(err), tw_err_name(err));
  assert_int_equal(tw_errcode(s->w), 0);
}

static rec *s_add(sess *s, const tw_event *expected, uint64_t lo, uint64_t hi)
{
  if (s->n == s->cap) {
    s->cap = s->cap ? s->cap * 2 : 64;
    s->recs = realloc(s->recs, s->cap * sizeof *s->recs);
    assert_non_null(s->recs);
  }
  s->recs[s->n].ev = *expected;
  s->recs[s->n].lo = lo;
  s->recs[s->n].hi = hi;
  s->recs[s->n].dur_window = 0;
  return &s->recs[s->n++];
}

static void rc_equal(int rc, int want, const char *what)
{
  if (rc != want)
    fail_msg("%s: returned %d (%s), expected %d (%s)", what, rc,
             tw_err_name(rc), want, tw_err_name(want));
}

/* Emit ev, which must succeed and be written as expected. */
static void s_emit_as(sess *s, const tw_event *ev, const tw_event *expected)
{
  uint64_t lo = tw_now_ns();
  int rc = tw_emit(s->w, ev);
  uint64_t hi = tw_now_ns();
  rc_equal(rc, 0, "tw_emit");
  s_add(s, expected, lo, hi);
}

/* Emit ev, which must succeed and be written as it is. */
static void s_emit(sess *s, const tw_event *ev)
{
  s_emit_as(s, ev, ev);
}

/* A helper call that must succeed and write exactly *expected. */
#define S_CALL(s, expected, call)                                          \
  do {                                                                     \
    uint64_t lo_ = tw_now_ns();                                            \
    int rc_ = (call);                                                      \
    uint64_t hi_ = tw_now_ns();                                            \
    rc_equal(rc_, 0, #call);                                               \
    s_add((s), (expected), lo_, hi_);                                      \
  } while (0)

/* A plain, always-good event, to show that the writer goes on. */
static void s_good(sess *s)
{
  tw_event ev;
  size_t k = s->nmarks++;

  assert_true(k < sizeof s->marks / sizeof s->marks[0]);
  snprintf(s->marks[k], sizeof s->marks[k], "good%zu", k);
  memset(&ev, 0, sizeof ev);
  ev.ph = 'X';
  ev.name = s->marks[k];
  ev.has = TW_HAS_TS | TW_HAS_PID | TW_HAS_TID;
  ev.ts = 1000 * k + 1;
  ev.dur = 7;
  ev.pid = 1;
  ev.tid = 2;
  s_emit(s, &ev);
}

/* Emit ev, which must be refused with code, leave the writer healthy and
 * be counted; then a good event. */
static void s_bad(sess *s, const tw_event *ev, int code)
{
  tw_stats st;

  rc_equal(tw_emit(s->w, ev), code, "bad event");
  assert_int_equal(tw_errcode(s->w), 0);
  s->nbad++;
  assert_int_equal(tw_get_stats(s->w, &st), 0);
  assert_int_equal(st.rejected, s->nbad);
  assert_int_equal(st.error, 0);
  s_good(s);
}

static void s_stats(sess *s, tw_stats *st)
{
  assert_int_equal(tw_get_stats(s->w, st), 0);
}

static int default_program_name(const char *s, size_t n)
{
  return (n == strlen("test_format") && memcmp(s, "test_format", n) == 0) ||
         (n == strlen("lt-test_format") &&
          memcmp(s, "lt-test_format", n) == 0);
}

/* The first record: the process_name metadata event. */
static void check_first(const sess *s, const jc_doc *d, jc_val obj)
{
  jc_val args, v;
  size_t n;
  const char *name;

  assert_int_equal(jc_type(d, obj), JC_OBJECT);
  tu_assert_str(d, obj, "ph", "M");
  tu_assert_str(d, obj, "name", "process_name");
  tu_assert_int(d, obj, "pid", (int64_t)getpid());
  tu_assert_int(d, obj, "tid", my_tid());
  tu_assert_absent(d, obj, "ts");
  tu_assert_absent(d, obj, "cat");
  args = jc_get(d, obj, "args");
  assert_true(args >= 0);
  assert_int_equal(jc_type(d, args), JC_OBJECT);
  assert_int_equal(jc_len(d, args), 1);
  v = jc_get(d, args, "name");
  assert_int_equal(jc_type(d, v), JC_STRING);
  name = jc_str(d, v, &n);
  if (s->o.process_name)
    assert_jstr(d, v, s->o.process_name, strlen(s->o.process_name),
                "process name");
  else if (!default_program_name(name, n))
    fail_msg("default process name \"%.*s\"", (int)n, name);
  assert_int_equal(jc_len(d, obj), 5);
}

/* Close, check the stats, the layout and every record.  Returns the
 * document (jc_free it) for further checks. */
static jc_doc *s_close(sess *s)
{
  tw_stats st;
  jc_doc *d;
  jc_val evs, v;
  size_t i = 0;

  s_stats(s, &st);
  assert_int_equal(st.events, s->n + 2);
  assert_int_equal(st.rejected, s->nbad);
  assert_int_equal(st.error, 0);
  assert_int_equal(st.dropped, 0);
  rc_equal(tw_close(s->w), 0, "tw_close");
  s->w = NULL;
  check_layout(s->path, s->n + 1, s->o.format == TW_FORMAT_OBJECT);
  d = s->doc = tu_load(s->path);
  evs = tu_events(d);
  assert_int_equal(jc_len(d, evs), s->n + 1);
  v = jc_first(d, evs);
  check_first(s, d, v);
  for (v = jc_next(d, v); v >= 0; v = jc_next(d, v), i++) {
    const rec *r = &s->recs[i];
    check_event(d, v, &r->ev, r->lo, r->hi, r->dur_window);
  }
  assert_int_equal(i, s->n);
  return d;
}

/* The i-th good event's record (0 = the first after process_name). */
static jc_val s_record(const jc_doc *d, size_t i)
{
  return jc_index(d, tu_events(d), i + 1);
}

/* Free the session and the document s_close returned (d may be NULL). */
static void s_done(sess *s, jc_doc *d)
{
  assert_true(d == NULL || d == s->doc);
  jc_free(s->doc);
  if (s->w)
    tw_close(s->w);
  tu_cleanup(s->path);
  free(s->recs);
  memset(s, 0, sizeof *s);
  if (cur_sess == s)
    cur_sess = NULL;
}

static void s_finish(sess *s)
{
  s_done(s, s_close(s));
}

static tw_event mkev(char ph, const char *cat, const char *name)
{
  tw_event ev;
  memset(&ev, 0, sizeof ev);
  ev.ph = ph;
  ev.cat = cat;
  ev.name = name;
  return ev;
}

/* An event with every default but ts (so the output is exact). */
static tw_event mkev_ts(char ph, const char *cat, const char *name,
                        uint64_t ts)
{
  tw_event ev = mkev(ph, cat, name);
  ev.has = TW_HAS_TS;
  ev.ts = ts;
  return ev;
}

/* ------------------------------------------------- 2. the file's layout */

static void test_first_record_default_name(void **state)
{
  static sess s;
  tw_stats st;
  size_t len;
  char *buf;
  (void)state;

  s_open(&s, NULL);
  s_stats(&s, &st);
  assert_int_equal(st.events, 2);
  assert_int_equal(st.rejected, 0);
  assert_int_equal(st.strings_truncated, 0);
  assert_int_equal(st.utf8_replaced, 0);
  /* Already a complete trace before anything else is written. */
  buf = tu_read_file(s.path, &len);
  assert_true(len > 4);
  assert_memory_equal(buf, "[\n{", 3);
  free(buf);
  tu_assert_tail(s.path, 0);
  s_finish(&s);
}

static void test_first_record_custom_name(void **state)
{
  static const char name[] = "my \"proc\"\n\\\t\x01 \xc3\xa9\xe6\xbc\xa2";
  tw_options o;
  static sess s;
  (void)state;

  assert_int_equal(tw_options_init(&o), 0);
  o.process_name = name;
  s_open(&s, &o);
  s_finish(&s);
}

static void test_layout_array(void **state)
{
  static sess s;
  tw_event ev;
  size_t len;
  char *buf;
  static const tw_arg args[] = {
    { "s", TW_ARG_STRING, TW_NUL_TERMINATED, { .s = "line1\nline2\r\n" } },
    { "j", TW_ARG_JSON, TW_NUL_TERMINATED, { .s = "{\n\"a\":\n[1,\r\n2]\n}" } },
  };
  (void)state;

  s_open(&s, NULL);
  for (int i = 0; i < 5; i++)
    s_good(&s);
  ev = mkev_ts('X', "c", "multi\nline", 5);
  ev.args = args;
  ev.nargs = 2;
  s_emit(&s, &ev);
  s_finish(&s);             /* checks one record per line */

  /* And once more by hand, for the exact head and tail bytes. */
  s_open(&s, NULL);
  s_good(&s);
  assert_int_equal(tw_close(s.w), 0);
  s.w = NULL;
  buf = tu_read_file(s.path, &len);
  assert_true(len > 6);
  assert_memory_equal(buf, "[\n{\"", 4);
  assert_memory_equal(buf + len - 2, "\n]", 2);
  free(buf);
  s.n = 0;
  s_done(&s, NULL);
}

static void test_layout_object(void **state)
{
  tw_options o;
  static sess s;
  size_t len;
  char *buf;
  jc_doc *d;
  (void)state;

  assert_int_equal(tw_options_init(&o), 0);
  o.format = TW_FORMAT_OBJECT;
  s_open(&s, &o);
  for (int i = 0; i < 3; i++)
    s_good(&s);
  assert_int_equal(tw_flush(s.w), 0);
  /* Committed: a complete object document already. */
  tu_assert_tail(s.path, 1);
  d = tu_load(s.path);
  assert_int_equal(jc_len(d, tu_events(d)), 4);
  jc_free(d);
  s_good(&s);
  d = s_close(&s);
  assert_int_equal(jc_type(d, jc_root(d)), JC_OBJECT);
  assert_true(jc_get(d, jc_root(d), "traceEvents") >= 0);
  buf = tu_read_file(s.path, &len);
  assert_memory_equal(buf, "{\"traceEvents\":[\n{", 18);
  assert_memory_equal(buf + len - 3, "\n]}", 3);
  free(buf);
  s_done(&s, d);

  /* The same through the options string. */
  assert_int_equal(tw_options_init(&o), 0);
  assert_int_equal(tw_options_parse(&o, "format=object", NULL, 0), 0);
  assert_int_equal(o.format, TW_FORMAT_OBJECT);
  s_open(&s, &o);
  s_good(&s);
  s_finish(&s);
}

static void test_flush_then_more(void **state)
{
  static sess s;
  jc_doc *d;
  (void)state;

  /* After each flush the file is a complete trace holding every event so
   * far; later events follow on. */
  s_open(&s, NULL);
  for (int i = 0; i < 4; i++) {
    s_good(&s);
    assert_int_equal(tw_flush(s.w), 0);
    check_layout(s.path, s.n + 1, 0);
    d = tu_load(s.path);
    assert_int_equal(jc_len(d, tu_events(d)), s.n + 1);
    jc_free(d);
  }
  s_finish(&s);
}

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

/* ---------------------------------------------------------- arguments */

static void test_args_integers(void **state)
{
  static const int64_t iv[] = { 0, 1, -1, 9, 10, 99, 100, -100,
                                1234567890123456789LL, INT64_MAX, INT64_MIN,
                                INT64_MIN + 1 };
  static const uint64_t uv[] = { 0, 1, 9, 10, 4294967296ULL,
                                 (uint64_t)INT64_MAX + 1, UINT64_MAX,
                                 UINT64_MAX - 1 };
  tw_arg args[32];
  char names[32][8];
  size_t n = 0;
  static sess s;
  tw_event ev;
  jc_doc *d;
  (void)state;

  for (size_t i = 0; i < sizeof iv / sizeof iv[0]; i++, n++) {
    snprintf(names[n], sizeof names[n], "i%zu", i);
    args[n] = tw_arg_int(names[n], iv[i]);
  }
  for (size_t i = 0; i < sizeof uv / sizeof uv[0]; i++, n++) {
    snprintf(names[n], sizeof names[n], "u%zu", i);
    args[n] = tw_arg_uint(names[n], uv[i]);
  }
  s_open(&s, NULL);
  ev = mkev_ts('X', "a", "ints", 1);
  ev.args = args;
  ev.nargs = n;
  s_emit(&s, &ev);
  d = s_close(&s);
  {
    jc_val a = jc_get(d, s_record(d, 0), "args");
    assert_raw(d, jc_get(d, a, "i9"), "9223372036854775807");
    assert_raw(d, jc_get(d, a, "i10"), "-9223372036854775808");
    assert_raw(d, jc_get(d, a, "u4"), "4294967296");
    /* Above INT64_MAX: the nearest double, which Perfetto reads as
     * positive (an integer it would read as 2^64 less). */
    assert_raw(d, jc_get(d, a, "u5"), "9.2233720368547758e+18");
    assert_raw(d, jc_get(d, a, "u6"), "1.8446744073709552e+19");
    assert_raw(d, jc_get(d, a, "u7"), "1.8446744073709552e+19");
    assert_raw(d, jc_get(d, a, "i0"), "0");
    assert_raw(d, jc_get(d, a, "i7"), "-100");
  }
  s_done(&s, d);
}

static void test_args_doubles(void **state)
{
  static const double dv[] = {
    0.1, 1e300, -0.5, 5.0, 1e-7, 0.0, -1.0, 1.0 / 3.0, 2.0 / 3.0, 123456.789,
    DBL_MAX, -DBL_MAX, DBL_MIN, 5e-324, 1e-300, 1e21, 1e22, 123e-20,
    9007199254740992.0, 9007199254740994.0, 9223372036854775808.0,
    -9223372036854775808.0, 18446744073709551616.0, 0.30000000000000004,
    4.35, 2.5e-5, 1e15 + 0.5, 3.141592653589793, -2.718281828459045,
  };
  const size_t nd = sizeof dv / sizeof dv[0];
  tw_arg args[64];
  char names[64][8];
  static sess s;
  tw_event ev;
  jc_doc *d;
  jc_val a;
  (void)state;

  for (size_t i = 0; i < nd; i++) {
    snprintf(names[i], sizeof names[i], "d%zu", i);
    args[i] = tw_arg_double(names[i], dv[i]);
  }
  s_open(&s, NULL);
  ev = mkev_ts('X', "a", "doubles", 1);
  ev.args = args;
  ev.nargs = nd;
  s_emit(&s, &ev);           /* check_arg: jc_num == the double, exactly */
  ev = mkev_ts('C', "a", "counter", 2);
  ev.args = args;
  ev.nargs = nd;
  s_emit(&s, &ev);
  d = s_close(&s);
  a = jc_get(d, s_record(d, 0), "args");
  assert_raw(d, jc_get(d, a, "d3"), "5");          /* 5.0 written as 5 */
  assert_raw(d, jc_get(d, a, "d0"), "0.1");
  assert_raw(d, jc_get(d, a, "d2"), "-0.5");
  assert_raw(d, jc_get(d, a, "d5"), "0");
  assert_raw(d, jc_get(d, a, "d6"), "-1");
  s_done(&s, d);
}

static void test_args_bool_null_string(void **state)
{
  static sess s;
  tw_event ev;
  tw_arg args[8];
  (void)state;

  args[0] = tw_arg_bool("t", 1);
  args[1] = tw_arg_bool("f", 0);
  args[2] = tw_arg_bool("t2", -7);        /* nonzero is true */
  args[3] = tw_arg_null("n");
  args[4] = tw_arg_str("s", "text");
  args[5] = tw_arg_str("empty", "");
  args[6] = tw_arg_strn("prefix", "abcdef", 3);
  args[7] = tw_arg_str("", "empty key");
  s_open(&s, NULL);
  ev = mkev_ts('I', "a", "misc", 1);
  ev.args = args;
  ev.nargs = 8;
  s_emit(&s, &ev);
  s_finish(&s);
}

static void test_args_raw_json(void **state)
{
  static const char nested[] =
    "{\n  \"a\": [1, 2.5, -3e2, \"x\\ny\"],\r\n  \"b\": {\"c\": {\"d\": "
    "[true, false, null]}},\n  \"u\": \"\\u00e9\\ud83d\\ude00\\u0000\"\n}";
  static const char bigjson[] = "[1,2]garbage";
  static sess s;
  tw_event ev;
  tw_arg args[10];
  jc_doc *d;
  jc_val a, v, arr;
  size_t n;
  const char *str;
  (void)state;

  args[0] = tw_arg_json("nested", nested);
  args[1] = tw_arg_json("num", "-0.5e+10");
  args[2] = tw_arg_json("t", "true");
  args[3] = tw_arg_json("nul", "null");
  args[4] = tw_arg_json("str", "\"\\\"quoted\\\" \\/ \\b\\f\\n\\r\\t\"");
  args[5] = tw_arg_json("ws", " \t\n [ ] \r\n");
  args[6] = tw_arg_json("len", bigjson);
  args[6].len = 5;                          /* just "[1,2]" */
  args[7] = tw_arg_json("null_ptr", NULL);  /* NULL -> null */
  args[8] = tw_arg_json("empty_obj", "{}");
  args[9] = tw_arg_json("utf8", "\"\xc3\xa9\xe6\xbc\xa2\xf0\x9f\x98\x80\"");
  s_open(&s, NULL);
  ev = mkev_ts('X', "a", "json", 1);
  ev.args = args;
  ev.nargs = 10;
  s_emit(&s, &ev);            /* check_arg compares the raw text */
  d = s_close(&s);
  a = jc_get(d, s_record(d, 0), "args");
  v = jc_get(d, a, "nested");
  assert_int_equal(jc_len(d, v), 3);
  arr = jc_get(d, v, "a");
  assert_int_equal(jc_len(d, arr), 4);
  {
    int64_t i64;
    assert_int_equal(jc_int64(d, jc_index(d, arr, 0), &i64), 0);
    assert_int_equal(i64, 1);
  }
  assert_true(jc_num(d, jc_index(d, arr, 1)) == 2.5);
  assert_true(jc_num(d, jc_index(d, arr, 2)) == -300.0);
  assert_jstr(d, jc_index(d, arr, 3), "x\ny", 3, "a[3]");
  v = jc_get(d, jc_get(d, jc_get(d, v, "b"), "c"), "d");
  assert_int_equal(jc_len(d, v), 3);
  assert_int_equal(jc_type(d, jc_index(d, v, 0)), JC_TRUE);
  assert_int_equal(jc_type(d, jc_index(d, v, 1)), JC_FALSE);
  assert_int_equal(jc_type(d, jc_index(d, v, 2)), JC_NULL);
  v = jc_get(d, jc_get(d, a, "nested"), "u");
  str = jc_str(d, v, &n);
  assert_int_equal(n, 7);
  assert_memory_equal(str, "\xc3\xa9\xf0\x9f\x98\x80\0", 7);
  assert_jstr(d, jc_get(d, a, "str"), "\"quoted\" / \b\f\n\r\t", 16,
              "str");
  assert_raw(d, jc_get(d, a, "ws"), "[ ]");
  assert_raw(d, jc_get(d, a, "len"), "[1,2]");
  assert_int_equal(jc_type(d, jc_get(d, a, "null_ptr")), JC_NULL);
  assert_jstr(d, jc_get(d, a, "utf8"), "\xc3\xa9\xe6\xbc\xa2\xf0\x9f\x98\x80",
              9, "utf8");
  assert_true(jc_num(d, jc_get(d, a, "num")) == -0.5e10);
  s_done(&s, d);
}

static void test_args_max_args(void **state)
{
  tw_arg *args = pool_alloc((TW_MAX_ARGS + 1) * sizeof *args);
  char (*names)[8] = pool_alloc((TW_MAX_ARGS + 1) * sizeof *names);
  tw_arg *series = pool_alloc(TW_MAX_ARGS * sizeof *series);
  static sess s;
  tw_event ev;
  (void)state;

  assert_non_null(args);
  assert_non_null(names);
  for (size_t i = 0; i <= TW_MAX_ARGS; i++) {
    snprintf(names[i], sizeof names[i], "a%zu", i);
    switch (i % 5) {
    case 0: args[i] = tw_arg_int(names[i], -(int64_t)i); break;
    case 1: args[i] = tw_arg_uint(names[i], i * 1000003u); break;
    case 2: args[i] = tw_arg_double(names[i], (double)i + 0.25); break;
    case 3: args[i] = tw_arg_bool(names[i], (int)(i & 8)); break;
    default: args[i] = tw_arg_str(names[i], names[i]); break;
    }
  }
  s_open(&s, NULL);
  ev = mkev_ts('X', "a", "max", 1);
  ev.args = args;
  ev.nargs = TW_MAX_ARGS;
  s_emit(&s, &ev);
  /* One more is refused. */
  ev.nargs = TW_MAX_ARGS + 1;
  s_bad(&s, &ev, TW_ETOOMANY);
  /* A counter with TW_MAX_ARGS series (numbers only). */
  for (size_t i = 0; i < TW_MAX_ARGS; i++) {
    if (i % 5 == 3)
      series[i] = tw_arg_uint(names[i], UINT64_MAX - i);
    else if (i % 5 == 4)
      series[i] = tw_arg_double(names[i], -1.0 / (double)(i + 1));
    else
      series[i] = args[i];
  }
  ev = mkev_ts('C', "a", "max_series", 2);
  ev.args = series;
  ev.nargs = TW_MAX_ARGS;
  s_emit(&s, &ev);
  s_finish(&s);
  pool_free();
}

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
 * written with one check of room, field by field, or in the thread's
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

/* --------------------------------------------------------------- fuzz */

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
  /* xorshift64* */
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return rng * 2685821657736338717ULL;
}

static unsigned rn(unsigned n)
{
  return (unsigned)(rnd() % n);
}

/* Reference model, written from Unicode chapter 3 table 3-7 apart from
 * src/format.c: s[0..n) with every maximal ill-formed subpart replaced by
 * U+FFFD, into out (3n bytes); returns the length and sets *bad. */
static size_t ref_replace(const unsigned char *s, size_t n,
                          unsigned char *out, int *bad)
{
  size_t i = 0, o = 0;

  *bad = 0;
  while (i < n) {
    unsigned c = s[i], lo = 0x80, hi = 0xbf;
    size_t need, k;
    if (c < 0x80) {
      out[o++] = (unsigned char)c;
      i++;
      continue;
    }
    if (c >= 0xc2 && c <= 0xdf)
      need = 1;
    else if (c == 0xe0)
      need = 2, lo = 0xa0;
    else if ((c >= 0xe1 && c <= 0xec) || c == 0xee || c == 0xef)
      need = 2;
    else if (c == 0xed)
      need = 2, hi = 0x9f;
    else if (c == 0xf0)
      need = 3, lo = 0x90;
    else if (c >= 0xf1 && c <= 0xf3)
      need = 3;
    else if (c == 0xf4)
      need = 3, hi = 0x8f;
    else
      need = 0;
    k = 1;
    if (need) {
      while (k <= need && i + k < n && s[i + k] >= lo && s[i + k] <= hi) {
        k++;
        lo = 0x80;
        hi = 0xbf;
      }
    }
    if (need && k == need + 1) {
      memcpy(out + o, s + i, k);
      o += k;
    } else {
      memcpy(out + o, U_FFFD, 3);
      o += 3;
      *bad = 1;
    }
    i += k;
  }
  return o;
}

/* Where a string longer than max is cut: before a character that would
 * straddle the cut (at most 3 continuation bytes back); a longer run of
 * continuation bytes is junk and is cut where asked. */
static size_t ref_cut(const unsigned char *s, size_t max)
{
  size_t k = max;
  int back = 0;
  while (k > 0 && back < 3 && (s[k] & 0xc0) == 0x80) {
    k--;
    back++;
  }
  return (s[k] & 0xc0) == 0x80 ? max : k;
}

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
static int teardown(void **state)
{
  (void)state;
  if (cur_sess)
    s_done(cur_sess, NULL);
  pool_free();
  return 0;
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(test_first_record_default_name, teardown),
    cmocka_unit_test_teardown(test_first_record_custom_name, teardown),
    cmocka_unit_test_teardown(test_layout_array, teardown),
    cmocka_unit_test_teardown(test_layout_object, teardown),
    cmocka_unit_test_teardown(test_flush_then_more, teardown),
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
    cmocka_unit_test_teardown(test_ids_hex, teardown),
    cmocka_unit_test_teardown(test_timestamps_exact, teardown),
    cmocka_unit_test_teardown(test_numbers_every_length, teardown),
    cmocka_unit_test_teardown(test_args_integers, teardown),
    cmocka_unit_test_teardown(test_args_doubles, teardown),
    cmocka_unit_test_teardown(test_args_bool_null_string, teardown),
    cmocka_unit_test_teardown(test_args_raw_json, teardown),
    cmocka_unit_test_teardown(test_args_max_args, teardown),
    cmocka_unit_test_teardown(test_bad_null_name, teardown),
    cmocka_unit_test_teardown(test_bad_phase, teardown),
    cmocka_unit_test_teardown(test_bad_counter, teardown),
    cmocka_unit_test_teardown(test_bad_ids, teardown),
    cmocka_unit_test_teardown(test_bad_instant_scope, teardown),
    cmocka_unit_test_teardown(test_bad_args, teardown),
    cmocka_unit_test_teardown(test_bad_raw_json, teardown),
    cmocka_unit_test_teardown(test_nonfinite_null, teardown),
    cmocka_unit_test_teardown(test_nonfinite_reject, teardown),
    cmocka_unit_test_teardown(test_utf8_replace, teardown),
    cmocka_unit_test_teardown(test_utf8_reject, teardown),
    cmocka_unit_test_teardown(test_escapes_roundtrip, teardown),
    cmocka_unit_test_teardown(test_strings_every_length, teardown),
    cmocka_unit_test_teardown(test_head_room, teardown),
    cmocka_unit_test_teardown(test_embedded_nul, teardown),
    cmocka_unit_test_teardown(test_long_strings_truncate, teardown),
    cmocka_unit_test_teardown(test_long_strings_reject, teardown),
    cmocka_unit_test_teardown(test_too_big, teardown),
    cmocka_unit_test_teardown(test_big_event_scratch, teardown),
    cmocka_unit_test_teardown(test_null_event_pointer, teardown),
    cmocka_unit_test_teardown(test_null_string_values, teardown),
    cmocka_unit_test_teardown(test_null_writer, teardown),
    cmocka_unit_test_teardown(test_fuzz, teardown),
    cmocka_unit_test_teardown(test_numbers_viewer_limits, teardown),
    cmocka_unit_test_teardown(test_doubles_fraction_digits, teardown),
    cmocka_unit_test_teardown(test_shapes_every_viewer, teardown),
    cmocka_unit_test_teardown(test_required_args, teardown),
    cmocka_unit_test_teardown(test_event_under_max_event, teardown),
    cmocka_unit_test_teardown(test_library_names_not_cut, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
