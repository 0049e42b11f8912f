/* test_format_fast.c -- the formatter's fast paths write what its general
 * path writes
 *
 * tw__format_event takes the common shapes (X, B, E, i, I with a few
 * plain args) by a path of its own, written straight into the buffer,
 * and strings, numbers and doubles by shortcuts of their own (SSE2 chunks,
 * short decimals).  tw__format_event_reference formats any event by the
 * general path only, through the cursor, every head measured before it
 * is written (the fast paths write it in place).  Here random
 * events -- mostly of the common shapes, with every kind of string (plain
 * at every length, escapes, UTF-8, invalid UTF-8), every type of arg,
 * the numbers at their bounds, every option that changes the output, and
 * buffers too small -- go through both: the return, the length, every
 * byte and the notes must be the same, and every record is one strict
 * JSON object (tests/jsoncheck.h).  The helpers' path
 * (tw__format_common, from the arguments of tw_complete, tw_begin,
 * tw_end, tw_instant) must write the same when it writes, and leave the
 * rest.  A record whose fields past the head ask for no more room than
 * they take fits a buffer of exactly its length by both paths
 * (test_head_exact_room).  The field-by-field checks of what
 * the records say are the other test_format_* programs'.
 *
 * The count (TW_TEST_SCALE divides it) and the seed (TW_TEST_SEED
 * replays it) are printed.  Linked with the library's internals
 * (libtw.la), and with format_test.c for its random numbers.
 */
#include "format_test.h"
#include "internal.h"

/* The strings of one event live here until it is formatted. */
#define ARENA 65536
static char arena[ARENA];
static size_t arena_used;

static char *arena_take(size_t n)
{
  char *p;
  assert_true(arena_used + n <= ARENA);
  p = arena + arena_used;
  arena_used += n;
  return p;
}

/* Pieces of strings: plain, to escape, valid and invalid UTF-8. */
static const char *const pieces[] = {
  "a", "attn", "matmul", "bench", "x y z", "\"", "\\", "\n", "\t", "\x01",
  "\x1f", "\x7f", " ", "/", "\xc3\xa9", "\xe6\xb3\xa8", "\xf0\x9f\x98\x80",
  "\x80", "\xff", "\xe2\x82", "\xed\xa0\x80", "\xc0\xaf", "\xf4\x90\x80\x80",
  "0123456789abcdef", "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
};
#define NPIECES (sizeof pieces / sizeof pieces[0])

/* A random NUL-terminated string in the arena: mostly plain ASCII of any
 * length up to 70 (the chunked copy's every case), else pieces; its
 * length in *n. */
static char *rstring(size_t *n)
{
  char tmp[512];
  size_t len = 0;

  if (rn(3) == 0) {
    size_t want = rn(71);
    for (size_t i = 0; i < want; i++)
      tmp[len++] = (char)('a' + rn(26));
    if (want && rn(2)) {                       /* one special byte */
      const char *p = pieces[5 + rn(NPIECES - 5)];
      size_t k = strlen(p), at = rn((unsigned)want);
      if (len + k < sizeof tmp) {
        memmove(tmp + at + k, tmp + at, len - at);
        memcpy(tmp + at, p, k);
        len += k;
      }
    }
  } else {
    unsigned np = rn(5);
    for (unsigned i = 0; i < np; i++) {
      const char *p = pieces[rn(NPIECES)];
      size_t k = strlen(p);
      memcpy(tmp + len, p, k);
      len += k;
    }
  }
  *n = len;
  char *s = arena_take(len + 1);
  memcpy(s, tmp, len);
  s[len] = '\0';
  return s;
}

static double rdouble(void)
{
  static const double special[] = {
    0.0, -0.0, 0.5, -1.25, 1e-4, 9.99e-5, 1e15, 999999999999999.5,
    9007199254740992.0, 9007199254740993.0, -9007199254740992.0, 1e300,
    5e-324, 0.1, 1.0 / 3,
  };
  uint64_t b = rnd();
  double v;

  switch (rn(6)) {
  case 0:
    memcpy(&v, &b, 8);                          /* any bits: NaN too */
    return v;
  case 1:
    return special[rn(sizeof special / sizeof *special)];
  case 2:
    return (double)(int64_t)(b >> 20);          /* whole */
  case 3:
    return rn(2) ? (rn(2) ? NAN : INFINITY) : -INFINITY;
  default: {                                    /* short decimals */
    static const double p10[] = { 1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7 };
    return (double)(int64_t)(b % 100000000) / p10[rn(8)] * (rn(2) ? 1 : -1);
  }
  }
}

static void rarg(tw_arg *a)
{
  size_t n;

  a->name = rn(50) ? rstring(&n) : NULL;
  a->len = 0;
  switch (rn(9)) {
  case 0:
    a->type = TW_ARG_INT;
    a->v.i = (int64_t)rnd() >> rn(64);
    break;
  case 1:
    a->type = TW_ARG_UINT;
    a->v.u = rnd() >> rn(64);
    break;
  case 2: case 3:
    a->type = TW_ARG_DOUBLE;
    a->v.d = rdouble();
    break;
  case 4:
    a->type = TW_ARG_BOOL;
    a->v.b = (int)rn(3);
    break;
  case 5:
    a->type = TW_ARG_NULL;
    a->v.i = 0;
    break;
  case 6: case 7:
    a->type = TW_ARG_STRING;
    a->v.s = rn(20) ? rstring(&n) : NULL;
    if (a->v.s && rn(3) == 0) {
      a->len = n;                               /* an explicit length */
      if (n > 2 && rn(4) == 0)
        ((char *)a->v.s)[rn((unsigned)n)] = '\0';   /* a NUL inside */
    } else {
      a->len = TW_NUL_TERMINATED;
    }
    break;
  default:
    if (rn(4)) {
      static const char *const json[] = { "{\"a\":[1,2]}", "[1,,2]", "3",
                                          "\"x\"\n", "tru" };
      a->type = TW_ARG_JSON;
      a->v.s = json[rn(5)];
      a->len = TW_NUL_TERMINATED;
    } else {
      a->type = 99;                             /* no such type */
      a->v.i = 0;
    }
  }
}

static void revent(tw_event *ev, tw_arg *args, tw__fmt_defaults *def)
{
  static const char common[] = "XBEiI";
  static const char other[] = "MCbnesRc";
  size_t n;

  memset(ev, 0, sizeof *ev);
  ev->ph = rn(10) ? common[rn(5)] : other[rn(8)];
  if (rn(2))
    ev->instant_scope = "gpt\0x"[rn(5)];
  ev->name = rn(30) ? rstring(&n) : NULL;
  ev->cat = rn(5) ? rstring(&n) : NULL;
  if (rn(4)) {
    ev->has |= TW_HAS_TS;
    ev->ts = rn(50) ? rnd() >> rn(64) : (UINT64_C(1) << 63) - rn(3);
  }
  ev->dur = rn(50) ? rnd() >> (1 + rn(63)) : rnd();
  if (rn(8) == 0) {
    ev->has |= TW_HAS_PID;
    ev->pid = rn(10) ? (int64_t)rn(100000) : (int64_t)(rnd() >> rn(64));
  }
  if (rn(8) == 0) {
    ev->has |= TW_HAS_TID;
    ev->tid = rn(10) ? (int64_t)rn(100000) : (int64_t)(rnd() >> rn(64));
  }
  if (rn(20) == 0) {
    ev->has |= TW_HAS_ID;
    ev->id = rnd();
  }
  if (rn(40) == 0)
    ev->cname = "good";
  ev->nargs = rn(4) ? rn(5) : rn(20);
  for (size_t i = 0; i < ev->nargs; i++)
    rarg(&args[i]);
  ev->args = ev->nargs || rn(2) ? args : NULL;
  def->ts = rnd() >> rn(64);
  def->pid = 1 + rn(4000000);
  def->tid = rn(20) ? def->pid : 1 + rn(4000000);
}

/* A random event (revent) and options: every option that changes the
 * output, max_string mostly out of reach, else short. */
static void rcase(tw_event *ev, tw_arg *args, tw__fmt_defaults *def,
                  tw__fmt_config *cfg)
{
  arena_used = 0;
  revent(ev, args, def);
  cfg->flags = rn(3) ? 0 : (unsigned)rn(8);
  cfg->max_string = rn(4) ? 1 << 20 : 4 + rn(40);
}

/* 1 if ev has the shape of the helpers' events (tw__format_common's:
 * pid and tid are the calling thread's, so none given). */
static int helper_shape(const tw_event *ev)
{
  return ev->ph && strchr("XBEiI", ev->ph) &&
         !(ev->has & ~(unsigned)TW_HAS_TS) && !ev->flags && !ev->id_scope &&
         !ev->cname;
}

/* tw__format_common on ev's fields (its ts, or the default's; pid and
 * tid the thread's): when it writes (returns 0), what the reference
 * writes with those defaults, nothing cut; else it returns 1.  Returns
 * 1 if it wrote. */
static int check_helper_path(const tw_event *ev, const tw__fmt_defaults *d,
                             const tw__fmt_config *cfg, size_t cap,
                             unsigned long i)
{
  static char fast[65536], want[65536];
  uint64_t ts = (ev->has & TW_HAS_TS) ? ev->ts : d->ts;
  tw__fmt_defaults def = { d->ts, tw__pid(), tw__tid() };
  tw__fmt_notes nw = { 0, 0 };
  tw__fmt_out out = { fast, cap, 0, 0 };
  size_t lw = 0;
  int rw = tw__format_event_reference(ev, &def, cfg, want, cap, &lw, &nw);
  int rf = tw__format_common(cfg, &out,
                             TW__SHAPE(ev->ph, ev->instant_scope), ev->cat,
                             ev->name, ts, ev->dur, ev->args, ev->nargs);

  if (rf == 1)
    return 0;
  assert_int_equal(rf, 0);
  if (rw != 0 || out.len != lw || memcmp(fast, want, lw) != 0 ||
      nw.truncated || out.replaced != nw.replaced)
    fail_msg("event %lu (ph %c): tw__format_common wrote %.*s, the "
             "reference returned %d: %.*s", i, ev->ph, (int)out.len, fast,
             rw, (int)lw, want);
  return 1;
}

static void test_fast_as_reference(void **state)
{
  static char got[65536], want[65536];
  static tw_arg args[32];
  unsigned long n = tu_scaled(400000UL), ok = 0, refused = 0, short_ = 0;
  unsigned long common_ok = 0, common_tried = 0;
  unsigned long complete_ok = 0, complete_tried = 0;
  (void)state;

  rng = 0x9e3779b97f4a7c15ULL ^ tu_seed("fast vs reference");  /* not 0 */
  for (unsigned long i = 0; i < n; i++) {
    tw_event ev;
    tw__fmt_defaults def;
    tw__fmt_config cfg;
    tw__fmt_notes ng = { 0, 0 }, nw = { 0, 0 };
    size_t cap, lg = 0, lw = 0;
    int rg, rw;

    rcase(&ev, args, &def, &cfg);
    cap = rn(6) ? sizeof got : rn(600);
    memset(got, 0, cap);
    rg = tw__format_event(&ev, &def, &cfg, got, cap, &lg, &ng);
    rw = tw__format_event_reference(&ev, &def, &cfg, want, cap, &lw, &nw);
    if (helper_shape(&ev)) {
      int wrote = check_helper_path(&ev, &def, &cfg, cap, i);
      /* The complete event has a copy of the path of its own. */
      if (ev.ph == 'X') {
        complete_tried++;
        complete_ok += wrote;
      } else {
        common_tried++;
        common_ok += wrote;
      }
    }
    if (rg != rw)
      fail_msg("event %lu (ph %c): returned %d, the reference %d", i,
               ev.ph ? ev.ph : '0', rg, rw);
    if (rg == TW__ENOROOM) {
      size_t lbig = 0;
      tw__fmt_notes nb = { 0, 0 };
      /* Both say how much room to give; with it, the record fits. */
      assert_true(lg > cap);
      if (tw__format_event(&ev, &def, &cfg, got, sizeof got, &lbig,
                           &nb) == 0)
        assert_true(lbig <= lg);
      short_++;
      continue;
    }
    if (rg != 0) {
      refused++;
      continue;
    }
    if (lg != lw || memcmp(got, want, lg) != 0) {
      want[lw < sizeof want ? lw : sizeof want - 1] = '\0';
      got[lg < sizeof got ? lg : sizeof got - 1] = '\0';
      fail_msg("event %lu: wrote\n%s\nthe reference\n%s", i, got, want);
    }
    assert_int_equal(ng.truncated, nw.truncated);
    assert_int_equal(ng.replaced, nw.replaced);
    /* ",\n{...}": one strict JSON object after the separator. */
    {
      char err[128];
      jc_doc *d;
      assert_true(lg > 3 && got[0] == ',' && got[1] == '\n');
      d = jc_parse(got + 2, lg - 2, err, sizeof err);
      if (!d)
        fail_msg("event %lu: not strict JSON (%s): %.*s", i, err,
                 (int)lg - 2, got + 2);
      assert_int_equal(jc_type(d, jc_root(d)), JC_OBJECT);
      jc_free(d);
    }
    ok++;
  }
  print_message("  %lu events: %lu written, %lu refused, %lu short of room\n",
                n, ok, refused, short_);
  print_message("  the helpers' path: %lu of %lu B, E, i, I written, %lu "
                "of %lu X\n", common_ok, common_tried, complete_ok,
                complete_tried);
  assert_true(common_ok > common_tried / 4);
  assert_true(complete_ok > complete_tried / 4);
  /* The generator reaches every outcome. */
  assert_true(ok > n / 4);
  assert_true(refused > 0);
  assert_true(short_ > 0);
}

/* 1 if every field of ev's record past its head asks only for the room
 * it takes: no numbers among the args (each asks for its widest) and no
 * ids (the same). */
static int exact_tail(const tw_event *ev)
{
  if (ev->has & (TW_HAS_ID | TW_HAS_BIND_ID))
    return 0;
  for (size_t i = 0; i < ev->nargs; i++)
    if (ev->args[i].type == TW_ARG_INT || ev->args[i].type == TW_ARG_UINT ||
        ev->args[i].type == TW_ARG_DOUBLE)
      return 0;
  return 1;
}

/* The head takes the room it writes, not the most its fields could take:
 * a record whose other fields ask for no more than they write fits a
 * buffer of exactly its length, by either path, with the same bytes and
 * notes (a buffer of its own, so that a write past it is caught under
 * ASan and valgrind), and one byte less is too small, with room enough
 * asked for.  (The head used to ask for each time's and pid's widest,
 * and for 6 bytes a byte of its strings when short of room.) */
static void test_head_exact_room(void **state)
{
  static char big[65536];
  static tw_arg args[32];
  unsigned long n = tu_scaled(100000UL), tried = 0;
  tw_event ev;
  tw__fmt_defaults def;
  tw__fmt_config cfg;
  (void)state;

  rng = 0x9e3779b97f4a7c15ULL ^ tu_seed("head exact room");  /* not 0 */
  for (unsigned long i = 0; i < n; i++) {
    tw__fmt_notes nb = { 0, 0 };
    size_t lb = 0;

    rcase(&ev, args, &def, &cfg);
    if (!exact_tail(&ev) ||
        tw__format_event(&ev, &def, &cfg, big, sizeof big, &lb, &nb) != 0)
      continue;
    tried++;
    for (int ref = 0; ref < 2; ref++) {
      int (*format)(const tw_event *, const tw__fmt_defaults *,
                    const tw__fmt_config *, char *, size_t, size_t *,
                    tw__fmt_notes *) =
        ref ? tw__format_event_reference : tw__format_event;
      char *exact = malloc(lb);
      tw__fmt_notes ne = { 0, 0 }, ns = { 0, 0 };
      size_t le = 0, ls = 0;
      int rc;

      assert_non_null(exact);
      rc = format(&ev, &def, &cfg, exact, lb, &le, &ne);
      if (rc != 0 || le != lb || memcmp(exact, big, lb) != 0)
        fail_msg("event %lu (ph %c, %s): in %zu bytes returned %d, %zu "
                 "bytes: %.*s", i, ev.ph, ref ? "reference" : "format",
                 lb, rc, le, (int)lb, big);
      assert_int_equal(ne.truncated, nb.truncated);
      assert_int_equal(ne.replaced, nb.replaced);
      rc = format(&ev, &def, &cfg, exact, lb - 1, &ls, &ns);
      assert_int_equal(rc, TW__ENOROOM);
      assert_true(ls >= lb);
      free(exact);
    }
  }
  print_message("  %lu of %lu events in exactly their room\n", tried, n);
  assert_true(tried > n / 20);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_fast_as_reference),
    cmocka_unit_test(test_head_exact_room),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
