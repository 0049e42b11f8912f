/* format_test.c -- the helpers of the formatter's tests (format_test.h) */
#include "format_test.h"

/* ------------------------------------------------------------- helpers */

/* Reference model, written from Unicode chapter 3 table 3-7 apart from
 * src/format_string.c: s[0..n) with every maximal ill-formed subpart replaced by
 * U+FFFD, into out (3n bytes); returns the length and sets *bad. */
size_t ref_replace(const unsigned char *s, size_t n, unsigned char *out,
                   int *bad)
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
size_t ref_cut(const unsigned char *s, size_t max)
{
  size_t k = max;
  int back = 0;
  while (k > 0 && back < 3 && (s[k] & 0xc0) == 0x80) {
    k--;
    back++;
  }
  return (s[k] & 0xc0) == 0x80 ? max : k;
}

int64_t my_tid(void)
{
  return (int64_t)syscall(SYS_gettid);
}

/* s[0..n) made printable for a failure message (\xNN for the rest). */
const char *shown(const char *s, size_t n, char *out, size_t cap)
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
void assert_jstr(const jc_doc *d, jc_val v, const char *s, size_t n,
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
void assert_raw(const jc_doc *d, jc_val v, const char *text)
{
  size_t n;
  const char *raw = jc_raw(d, v, &n);
  assert_non_null(raw);
  if (n != strlen(text) || memcmp(raw, text, n) != 0)
    fail_msg("raw text \"%.*s\", expected \"%s\"", (int)n, raw, text);
}

void assert_hex(const jc_doc *d, jc_val v, uint64_t id,
                const char *what)
{
  char hex[32];
  snprintf(hex, sizeof hex, "0x%" PRIx64, id);
  assert_jstr(d, v, hex, strlen(hex), what);
}

int is_ws(char c)
{
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* A raw JSON arg: written as given, outer whitespace aside, with its
 * newlines turned into spaces. */
void assert_raw_json(const jc_doc *d, jc_val v, const char *in,
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
void key_str(const jc_doc *d, jc_val obj, const char *key,
             const char *s, size_t n, size_t *nkeys)
{
  assert_jstr(d, jc_get(d, obj, key), s, n, key);
  assert_int_equal(jc_count_key(d, obj, key), 1);
  (*nkeys)++;
}

void key_true(const jc_doc *d, jc_val obj, const char *key,
              size_t *nkeys)
{
  jc_val v = jc_get(d, obj, key);
  if (v < 0 || jc_type(d, v) != JC_TRUE)
    fail_msg("\"%s\" is not true", key);
  assert_int_equal(jc_count_key(d, obj, key), 1);
  (*nkeys)++;
}

/* One argument, member v of the args object, against what was emitted. */
void check_arg(const jc_doc *d, jc_val args, jc_val v, const tw_arg *a)
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
void check_event(const jc_doc *d, jc_val obj, const tw_event *ev,
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
void check_layout(const char *path, size_t nevents, int object_form)
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
      const char *one_rec = p;
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
        one_rec++;
        rn--;
      }
      assert_true(rn >= 2 && one_rec[0] == '{' && one_rec[rn - 1] == '}');
      one = tu_load_mem(one_rec, rn);
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

void *pool_alloc(size_t n)
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

void pool_free(void)
{
  for (size_t i = 0; i < npool; i++)
    free(pool[i]);
  free(pool);
  pool = NULL;
  npool = cappool = 0;
}

/* ------------------------------------------------------------- sessions */

sess *cur_sess;

uint64_t rng = 0x9e3779b97f4a7c15ULL;

uint64_t rnd(void)
{
  /* xorshift64* */
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return rng * 2685821657736338717ULL;
}

unsigned rn(unsigned n)
{
  return (unsigned)(rnd() % n);
}

void s_open(sess *s, const tw_options *o)
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

rec *s_add(sess *s, const tw_event *expected, uint64_t lo, uint64_t hi)
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

void rc_equal(int rc, int want, const char *what)
{
  if (rc != want)
    fail_msg("%s: returned %d (%s), expected %d (%s)", what, rc,
             tw_err_name(rc), want, tw_err_name(want));
}

/* Emit ev, which must succeed and be written as expected. */
void s_emit_as(sess *s, const tw_event *ev, const tw_event *expected)
{
  uint64_t lo = tw_now_ns();
  int rc = tw_emit(s->w, ev);
  uint64_t hi = tw_now_ns();
  rc_equal(rc, 0, "tw_emit");
  s_add(s, expected, lo, hi);
}

/* Emit ev, which must succeed and be written as it is. */
void s_emit(sess *s, const tw_event *ev)
{
  s_emit_as(s, ev, ev);
}

/* A helper call that must succeed and write exactly *expected. */
/* A plain, always-good event, to show that the writer goes on. */
void s_good(sess *s)
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
void s_bad(sess *s, const tw_event *ev, int code)
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

void s_stats(sess *s, tw_stats *st)
{
  assert_int_equal(tw_get_stats(s->w, st), 0);
}

int default_program_name(const char *s, size_t n)
{
  static const char stem[] = "test_format_";
  size_t k = 0;

  if (n > 3 && memcmp(s, "lt-", 3) == 0) {     /* libtool's wrapper */
    s += 3;
    n -= 3;
  }
  if (n <= sizeof stem - 1 || memcmp(s, stem, sizeof stem - 1) != 0)
    return 0;
  for (k = sizeof stem - 1; k < n; k++)
    if (s[k] < 'a' || s[k] > 'z')
      return 0;
  return 1;
}

/* The first record: the process_name metadata event. */
void check_first(const sess *s, const jc_doc *d, jc_val obj)
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
jc_doc *s_close(sess *s)
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
jc_val s_record(const jc_doc *d, size_t i)
{
  return jc_index(d, tu_events(d), i + 1);
}

/* Free the session and the document s_close returned (d may be NULL). */
void s_done(sess *s, jc_doc *d)
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

void s_finish(sess *s)
{
  s_done(s, s_close(s));
}

tw_event mkev(char ph, const char *cat, const char *name)
{
  tw_event ev;
  memset(&ev, 0, sizeof ev);
  ev.ph = ph;
  ev.cat = cat;
  ev.name = name;
  return ev;
}

/* An event with every default but ts (so the output is exact). */
tw_event mkev_ts(char ph, const char *cat, const char *name,
                 uint64_t ts)
{
  tw_event ev = mkev(ph, cat, name);
  ev.has = TW_HAS_TS;
  ev.ts = ts;
  return ev;
}

int teardown(void **state)
{
  (void)state;
  if (cur_sess)
    s_done(cur_sess, NULL);
  pool_free();
  return 0;
}
