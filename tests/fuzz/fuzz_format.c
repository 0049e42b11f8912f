/* fuzz_format.c -- fuzz the event formatter through the public API
 *
 * Each input is decoded into writer options and 1..8 tw_events (every
 * field, arg type, NaN/Inf bit patterns, invalid phases and types, NULL
 * strings, bad UTF-8, control bytes, raw JSON...).  The events are written
 * with a writer opened by tw_open_fd on a memfd, the writer is closed and
 * the file read back.  Then:
 *
 *  - the whole file passes the strict checker (tests/jsoncheck.c), has one
 *    record per line, the exact tail and nothing after it, no record
 *    longer than max_event;
 *  - it holds exactly the events whose tw_emit returned 0, plus the
 *    process_name record and the clock record;
 *  - every return code is 0 or a bad-input code that the event really
 *    deserves (an independent model of the rules of tracewriter.h says
 *    which codes are possible and whether one is required);
 *  - every field of every event reads back: strings byte-exact (after
 *    U+FFFD substitution of maximal invalid subparts, and the cut at
 *    max_string on a UTF-8 boundary), int/uint exactly, doubles exactly
 *    (NaN/Inf as null), raw JSON as given (newlines as spaces), no missing,
 *    extra or duplicate keys;
 *  - tw_close returns 0 and tw_stats agrees (events, rejected, bytes,
 *    strings_truncated, utf8_replaced);
 *  - between events the file is always a complete trace (the last commit:
 *    strict JSON, the exact tail at the end) holding at most the events
 *    emitted so far; all of them after tw_flush, and after every event
 *    with the mmap sink, which commits each record.
 *
 * Input layout (missing bytes read as 0, so every input is valid):
 *   byte 0: bit 0-2 reject utf8/nonfinite/long, bit 3-4 max_string
 *           {64,67,255,default}, bit 5-6 max_event {4096,4097,10000,
 *           default}, bit 7 object form
 *   byte 1: bit 0-1 buffer {256,1000,4096,default}, bit 2 mmap sink,
 *           bit 3 process_name from the input, bit 4-6 events - 1,
 *           bit 7 tw_flush after each event
 *   then the process_name (if asked), then each event:
 *   phase, scope, has (2 bytes, see decode_bits), optional-strings mask,
 *   name, the numbers the has bits ask for, cat/id_scope/cname (by the
 *   mask), nargs, args.
 *   make_corpus.py writes seeds in this layout.
 *
 * TW_FUZZ_VERBOSE=1 in the environment prints each event's result.
 */
#include "fuzz.h"

#include <math.h>
#include <sys/syscall.h>

#include "jsoncheck.h"
#include "viewer_rules.h"
#include "tracewriter.h"

#define MAX_EVENTS 8
#define MAX_DECODED_ARGS 8

/* ------------------------------------------------------------ allocations */

/* Everything allocated for one input; freed at its end. */
static void **pool;
static size_t npool, pool_cap;

static void *pool_alloc(size_t n)
{
  void *p;
  if (npool == pool_cap) {
    size_t cap = pool_cap ? 2 * pool_cap : 256;
    void **np = realloc(pool, cap * sizeof *np);
    if (!np)
      FZ_FAIL("harness: out of memory");
    pool = np;
    pool_cap = cap;
  }
  p = malloc(n ? n : 1);
  if (!p)
    FZ_FAIL("harness: out of memory");
  pool[npool++] = p;
  return p;
}

static void pool_free(void)
{
  while (npool)
    free(pool[--npool]);
}

/* ---------------------------------------------------------------- decoding */

typedef struct rd {
  const uint8_t *p, *e;
} rd;

static unsigned rd_u8(rd *r)
{
  return r->p < r->e ? *r->p++ : 0;
}

static uint64_t rd_le(rd *r, unsigned n)
{
  uint64_t v = 0;
  for (unsigned i = 0; i < n; i++)
    v |= (uint64_t)rd_u8(r) << (8 * i);
  return v;
}

static size_t rd_left(const rd *r)
{
  return (size_t)(r->e - r->p);
}

/* A length, then that many bytes: selector 0xff is NULL, 0xfe a 2-byte
 * length, anything else the length itself. */
static const uint8_t *rd_bytes(rd *r, size_t *len)
{
  unsigned sel = rd_u8(r);
  const uint8_t *p;
  size_t n;

  if (sel == 0xff) {
    *len = 0;
    return NULL;
  }
  n = sel == 0xfe ? (size_t)rd_le(r, 2) : sel;
  if (n > rd_left(r))
    n = rd_left(r);
  p = r->p;
  r->p += n;
  *len = n;
  return p;
}

/* A NUL-terminated string (cut at its first NUL), or NULL. */
static const char *rd_cstr(rd *r)
{
  size_t n;
  const uint8_t *p = rd_bytes(r, &n);
  char *s;
  if (!p)
    return NULL;
  s = pool_alloc(n + 1);
  memcpy(s, p, n);
  s[n] = '\0';
  return s;
}

/* A string with a length: allocated at exactly len bytes with no NUL
 * after it, so AddressSanitizer sees any read past the length.  With
 * nul_mode the copy is NUL-terminated and *len is TW_NUL_TERMINATED. */
static const char *rd_value(rd *r, int nul_mode, size_t *len)
{
  size_t n;
  const uint8_t *p = rd_bytes(r, &n);
  char *s;
  if (!p) {
    *len = nul_mode ? TW_NUL_TERMINATED : 0;
    return NULL;
  }
  s = pool_alloc(n + (nul_mode ? 1 : 0));
  memcpy(s, p, n);
  if (nul_mode) {
    s[n] = '\0';
    *len = TW_NUL_TERMINATED;
  } else {
    *len = n;
  }
  return s;
}

static const uint64_t special_u64[16] = {
  0, 1, 9, 10, 99, 100, 999, 1000, 1001, 999999, 1000000, UINT64_MAX,
  INT64_MAX, (uint64_t)INT64_MIN, 9007199254740993ull, 18446744073709550616ull
};

/* A 64-bit number: a special value, or 1..8 little-endian bytes,
 * optionally sign-extended. */
static uint64_t rd_u64(rd *r)
{
  unsigned t = rd_u8(r), k = t % 9;
  uint64_t v;
  if (k == 0)
    return special_u64[(t / 9) % 16];
  v = rd_le(r, k);
  if (((t / 9) & 1) && k < 8 && ((v >> (8 * k - 1)) & 1))
    v |= ~(uint64_t)0 << (8 * k);
  return v;
}

static const uint64_t special_double_bits[] = {
  0x7ff8000000000000ull, /* NaN */
  0xfff8000000000000ull, /* -NaN */
  0x7ff0000000000001ull, /* signalling NaN */
  0x7fffffffffffffffull, /* NaN, all payload bits */
  0x7ff0000000000000ull, /* +Inf */
  0xfff0000000000000ull, /* -Inf */
  0x0000000000000000ull, /* 0 */
  0x8000000000000000ull, /* -0 */
  0x0000000000000001ull, /* smallest subnormal */
  0x000fffffffffffffull, /* largest subnormal */
  0x0010000000000000ull, /* DBL_MIN */
  0x7fefffffffffffffull, /* DBL_MAX */
  0xffefffffffffffffull, /* -DBL_MAX */
  0x4340000000000000ull, /* 2^53 */
  0x4340000000000001ull, /* 2^53 + 2 */
  0x43e0000000000000ull, /* 2^63 */
  0xc3e0000000000000ull, /* -2^63 */
  0x3fb999999999999aull, /* 0.1 */
  0x3fd3333333333334ull, /* 0.30000000000000004 */
  0x3ff8000000000000ull, /* 1.5 */
  0x444b1ae4d6e2ef50ull, /* 1e21 */
  0x4480f0cf064dd592ull, /* 1e22 */
  0x3e7ad7f29abcaf48ull, /* 1e-7 */
  0x40fe240c9fbe76c9ull, /* 123456.789 */
};
#define N_SPECIAL_DOUBLES (sizeof special_double_bits / sizeof special_double_bits[0])

/* A double: a special bit pattern or 8 raw bytes (any NaN payload). */
static double rd_double(rd *r)
{
  unsigned t = rd_u8(r);
  uint64_t bits = (t & 1) ? rd_le(r, 8)
                          : special_double_bits[(t >> 1) % N_SPECIAL_DOUBLES];
  double d;
  memcpy(&d, &bits, sizeof d);
  return d;
}

/* One argument.  The type byte: 0xfc..0xff give invalid types (0, 8,
 * 100, -1), anything else 1 + t % 7, with bit 0 of t / 7 choosing TW_NUL_TERMINATED
 * for string/JSON and bit 1 the bool. */
static void rd_arg(rd *r, tw_arg *a)
{
  static const int bad_types[4] = { 0, 8, 100, -1 };
  unsigned t;

  memset(a, 0, sizeof *a);
  a->name = rd_cstr(r);
  t = rd_u8(r);
  if (t >= 0xfc) {
    a->type = bad_types[t - 0xfc];
    a->v.u = rd_u64(r);
    return;
  }
  a->type = 1 + (int)(t % 7);
  switch (a->type) {
  case TW_ARG_INT:
    a->v.i = (int64_t)rd_u64(r);
    break;
  case TW_ARG_UINT:
    a->v.u = rd_u64(r);
    break;
  case TW_ARG_DOUBLE:
    a->v.d = rd_double(r);
    break;
  case TW_ARG_BOOL:
    a->v.b = ((t / 7) & 2) ? (int)(t | 1) : 0;
    break;
  case TW_ARG_NULL:
    break;
  case TW_ARG_STRING:
  case TW_ARG_JSON:
    a->v.s = rd_value(r, (t / 7) & 1, &a->len);
    break;
  }
}

static const char phases[] = "XBEIiCbnestfMNODRc";

/* The has and flags bits every version defines. */
#define FZ_KNOWN_HAS (TW_HAS_TS | TW_HAS_PID | TW_HAS_TID | TW_HAS_TTS | \
                      TW_HAS_TDUR | TW_HAS_ID | TW_HAS_BIND_ID)
#define FZ_KNOWN_FLAGS (TW_EV_ID2_LOCAL | TW_EV_ID2_GLOBAL | TW_EV_FLOW_IN | \
                        TW_EV_FLOW_OUT | TW_EV_BP_ENCLOSING)

/* The input's two bytes of bits, in the corpus's own encoding (the 0.1
 * layout of tw_event.has, so the corpus keeps its meaning): 0x1f the
 * times, pid and tid; 0x20 id, 0x40 id2 local, 0x80 id2 global (each
 * sets TW_HAS_ID); 0x100 bind_id; 0x200 flow_in, 0x400 flow_out, 0x800
 * bp; 0x4000 clears TW_HAS_ID (an id2 form without an id); 0x8000 sets a
 * has bit no version defines. */
static void decode_bits(tw_event *ev, unsigned in)
{
  ev->has = in & (TW_HAS_TS | TW_HAS_PID | TW_HAS_TID | TW_HAS_TTS |
                  TW_HAS_TDUR);
  if (in & 0xe0u)
    ev->has |= TW_HAS_ID;
  if (in & 0x100u)
    ev->has |= TW_HAS_BIND_ID;
  ev->flags = (in & 0x40u ? TW_EV_ID2_LOCAL : 0) |
              (in & 0x80u ? TW_EV_ID2_GLOBAL : 0) |
              (in & 0x200u ? TW_EV_FLOW_IN : 0) |
              (in & 0x400u ? TW_EV_FLOW_OUT : 0) |
              (in & 0x800u ? TW_EV_BP_ENCLOSING : 0);
  if (in & 0x4000u)
    ev->has &= ~TW_HAS_ID;
  if (in & 0x8000u)
    ev->has |= 0x8000u;
}

static void rd_event(rd *r, tw_event *ev)
{
  unsigned t, mask, nsel;

  memset(ev, 0, sizeof *ev);
  t = rd_u8(r);
  ev->ph = t < 0xf0 ? phases[t % (sizeof phases - 1)] : (char)rd_u8(r);
  t = rd_u8(r);
  switch (t & 7) {
  case 1: ev->instant_scope = 'g'; break;
  case 2: ev->instant_scope = 'p'; break;
  case 3: ev->instant_scope = 't'; break;
  case 7: ev->instant_scope = (char)(t >> 3); break;   /* mostly invalid */
  default: ev->instant_scope = 0; break;
  }
  decode_bits(ev, (unsigned)rd_le(r, 2));
  mask = rd_u8(r);
  ev->name = rd_cstr(r);
  if (ev->has & TW_HAS_TS)
    ev->ts = rd_u64(r);
  if (ev->ph == 'X')
    ev->dur = rd_u64(r);
  if (ev->has & TW_HAS_TTS)
    ev->tts = rd_u64(r);
  if (ev->has & TW_HAS_TDUR)
    ev->tdur = rd_u64(r);
  if (ev->has & TW_HAS_PID)
    ev->pid = (int64_t)rd_u64(r);
  if (ev->has & TW_HAS_TID)
    ev->tid = (int64_t)rd_u64(r);
  if (ev->has & TW_HAS_ID || ev->flags & (TW_EV_ID2_LOCAL | TW_EV_ID2_GLOBAL))
    ev->id = rd_u64(r);
  if (ev->has & TW_HAS_BIND_ID)
    ev->bind_id = rd_u64(r);
  if (mask & 1)
    ev->cat = rd_cstr(r);
  if (mask & 2)
    ev->id_scope = rd_cstr(r);
  if (mask & 4)
    ev->cname = rd_cstr(r);

  /* The arguments: nsel < 0xfc is nsel % 9 of them; 0xfc..0xff: a NULL
   * array of 2, or 1024, 1025 or 100 made of a few decoded ones. */
  nsel = rd_u8(r);
  if (nsel < 0xfc) {
    size_t n = nsel % 9;
    tw_arg *args = pool_alloc(n * sizeof *args);
    for (size_t i = 0; i < n; i++)
      rd_arg(r, &args[i]);
    ev->args = args;
    ev->nargs = n;
  } else if (nsel == 0xfc) {
    ev->args = NULL;
    ev->nargs = 2;
  } else {
    static const size_t big[3] = { 1024, 1025, 100 };
    size_t n = big[nsel - 0xfd], k = 1 + rd_u8(r) % MAX_DECODED_ARGS;
    tw_arg *args = pool_alloc(n * sizeof *args);
    for (size_t i = 0; i < k; i++)
      rd_arg(r, &args[i]);
    for (size_t i = k; i < n; i++)
      args[i] = args[i % k];
    ev->args = args;
    ev->nargs = n;
  }
}

/* ---------------------------------------------------------------- the model
 *
 * What tracewriter.h promises, written from the header and the Unicode
 * standard, not from format.c.
 */

enum {
  K_EVENT = 1, K_UTF8 = 2, K_NONFINITE = 4, K_TOOLONG = 8, K_TOOBIG = 16,
  K_JSON = 32, K_TOOMANY = 64
};

static unsigned kind_of(int rc)
{
  switch (rc) {
  case TW_EEVENT: return K_EVENT;
  case TW_EUTF8: return K_UTF8;
  case TW_ENONFINITE: return K_NONFINITE;
  case TW_ETOOLONG: return K_TOOLONG;
  case TW_ETOOBIG: return K_TOOBIG;
  case TW_EJSON: return K_JSON;
  case TW_ETOOMANY: return K_TOOMANY;
  default: return 0;
  }
}

typedef struct model {
  unsigned flags;
  size_t max_string;
  size_t max_event;
  unsigned must;      /* the event must be refused with one of these... */
  unsigned may;       /* ...or may be refused with one of these */
  size_t size;        /* an upper bound of the formatted record */
} model;

/* The well-formed UTF-8 sequence at s[0..n) (Unicode table 3-7): its
 * length, or minus the length of its maximal invalid subpart. */
static int utf8_seq(const unsigned char *s, size_t n)
{
  unsigned c = s[0], lo = 0x80, hi = 0xbf;
  int need;

  if (c <= 0x7f)
    return 1;
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
    return -1;
  for (int i = 1; i <= need; i++) {
    if ((size_t)i >= n || s[i] < lo || s[i] > hi)
      return -i;
    lo = 0x80;
    hi = 0xbf;
  }
  return need + 1;
}

/* The offset of the first invalid UTF-8 sequence, or SIZE_MAX. */
static size_t utf8_first_invalid(const unsigned char *s, size_t n)
{
  size_t i = 0;
  while (i < n) {
    int k = utf8_seq(s + i, n - i);
    if (k < 0)
      return i;
    i += (size_t)k;
  }
  return SIZE_MAX;
}

/* s[0..n) with each maximal invalid subpart replaced by U+FFFD, into a
 * pool buffer; *replaced set to 1 if anything was. */
static char *utf8_replace(const unsigned char *s, size_t n, size_t *outlen,
                          int *replaced)
{
  char *out = pool_alloc(3 * n + 1), *d = out;
  size_t i = 0;
  *replaced = 0;
  while (i < n) {
    int k = utf8_seq(s + i, n - i);
    if (k > 0) {
      memcpy(d, s + i, (size_t)k);
      d += k;
      i += (size_t)k;
    } else {
      memcpy(d, "\xef\xbf\xbd", 3);
      d += 3;
      i += (size_t)-k;
      *replaced = 1;
    }
  }
  *outlen = (size_t)(d - out);
  return out;
}

/* Model one string (a field, a key or a string value): which errors it
 * may cause and how big it may get. */
static void model_string(model *m, const char *s, size_t len)
{
  const unsigned char *u = (const unsigned char *)s;
  size_t n = len == TW_NUL_TERMINATED ? strlen(s) : len;

  if (n > m->max_string) {
    if (m->flags & TW_OPT_REJECT_LONG_STRINGS) {
      m->must |= K_TOOLONG;
    } else if (m->flags & TW_OPT_REJECT_INVALID_UTF8) {
      /* Cut somewhere in [max-3, max] on a UTF-8 boundary: an invalid
       * sequence that starts before the cut is still there. */
      size_t p = utf8_first_invalid(u, m->max_string);
      if (p != SIZE_MAX && p + 3 < m->max_string)
        m->must |= K_UTF8;
      else if (p != SIZE_MAX)
        m->may |= K_UTF8;
    }
    n = m->max_string;
  } else if ((m->flags & TW_OPT_REJECT_INVALID_UTF8) &&
             utf8_first_invalid(u, n) != SIZE_MAX) {
    m->must |= K_UTF8;
  }
  m->size += 16 + 6 * n;
}

/* 1 if json[0..n) is what the library must accept as raw JSON. */
static int json_ok(const char *json, size_t n)
{
  jc_doc *d = jc_parse(json, n, NULL, 0);
  int ok = d != NULL && fz_json_depth(json, n) <= TW_MAX_JSON_DEPTH;
  jc_free(d);
  return ok;
}

static int is_numeric(int type)
{
  return type == TW_ARG_INT || type == TW_ARG_UINT || type == TW_ARG_DOUBLE;
}

/* Fill m->must, m->may and m->size for ev. */
static void model_event(model *m, const tw_event *ev)
{
  const char *needs_name = "XBRMcIiCbnestfNOD";
  const char *needs_id = "bnestfNOD";
  int known = ev->ph != 0 && strchr("XBEIiCbnestfMNODRc", ev->ph) != NULL;
  int instant = ev->ph == 'I' || ev->ph == 'i';
  int counter = ev->ph == 'C';
  unsigned id2 = ev->flags & (TW_EV_ID2_LOCAL | TW_EV_ID2_GLOBAL);
  int has_id = (ev->has & TW_HAS_ID) != 0;

  m->must = m->may = 0;
  m->size = 600;
  if (!known)
    m->must |= K_EVENT;
  if (known && strchr(needs_name, ev->ph) && !ev->name)
    m->must |= K_EVENT;
  if (known && strchr(needs_id, ev->ph) && !has_id)
    m->must |= K_EVENT;
  if (id2 && (!has_id || (id2 & (id2 - 1))))  /* a form without an id,
                                                 or two forms */
    m->must |= K_EVENT;
  if ((ev->has & ~FZ_KNOWN_HAS) || (ev->flags & ~FZ_KNOWN_FLAGS))
    m->must |= K_EVENT;
  if (instant && ev->instant_scope && ev->instant_scope != 'g' &&
      ev->instant_scope != 'p' && ev->instant_scope != 't')
    m->must |= K_EVENT;
  if (counter && ev->nargs == 0)
    m->must |= K_EVENT;
  if (ev->nargs > TW_MAX_ARGS)
    m->must |= K_TOOMANY;
  if (ev->nargs && !ev->args)
    m->must |= K_EVENT;
  /* The default ts is read at the call, a little later than now: a dur
   * that ends within an hour of 2^63 ns may go either way. */
  if (vr_numbers_refused(ev, tw_now_ns()) || vr_catapult_refuses(ev))
    m->must |= K_EVENT;
  else if (vr_numbers_refused(ev,
                              tw_now_ns() + UINT64_C(3600000000000)))
    m->may |= K_EVENT;

  if (ev->name)
    model_string(m, ev->name, TW_NUL_TERMINATED);
  if (ev->cat)
    model_string(m, ev->cat, TW_NUL_TERMINATED);
  if (ev->id_scope)
    model_string(m, ev->id_scope, TW_NUL_TERMINATED);
  if (ev->cname)
    model_string(m, ev->cname, TW_NUL_TERMINATED);
  for (size_t i = 0; ev->args && i < ev->nargs; i++) {
    const tw_arg *a = &ev->args[i];
    m->size += 48;
    if (!a->name)
      m->must |= K_EVENT;
    else
      model_string(m, a->name, TW_NUL_TERMINATED);
    if (counter && !is_numeric(a->type))
      m->must |= K_EVENT;
    switch (a->type) {
    case TW_ARG_INT: case TW_ARG_UINT: case TW_ARG_BOOL: case TW_ARG_NULL:
      break;
    case TW_ARG_DOUBLE:
      if (!isfinite(a->v.d) && (m->flags & TW_OPT_REJECT_NONFINITE))
        m->must |= K_NONFINITE;
      break;
    case TW_ARG_STRING:
      if (a->v.s)
        model_string(m, a->v.s, a->len);
      break;
    case TW_ARG_JSON:
      if (a->v.s) {
        size_t n = a->len == TW_NUL_TERMINATED ? strlen(a->v.s) : a->len;
        if (!json_ok(a->v.s, n))
          m->must |= K_JSON;
        m->size += n;
      }
      break;
    default:
      m->must |= K_EVENT;
      break;
    }
  }
  if (m->size > m->max_event)
    m->may |= K_TOOBIG;
}

/* --------------------------------------------------------------- checking */

typedef struct expect {
  const model *m;
  uint64_t truncated;     /* strings cut to max_string */
  uint64_t replaced_min;  /* strings with U+FFFD put in: at least... */
  uint64_t replaced_max;  /* ...and at most (a cut string with invalid
                             UTF-8 and a literal U+FFFD can be read as
                             two different cuts) */
} expect;

/* Decode the JSON string text raw[0..n) (no quotes) into a pool buffer. */
static char *decode_key(const char *raw, size_t n, size_t *outlen)
{
  char *out = pool_alloc(n + 1), *d = out;
  size_t i = 0;
  while (i < n) {
    if (raw[i] != '\\') {
      *d++ = raw[i++];
      continue;
    }
    i++;
    switch (raw[i++]) {
    case '"': *d++ = '"'; break;
    case '\\': *d++ = '\\'; break;
    case '/': *d++ = '/'; break;
    case 'b': *d++ = '\b'; break;
    case 'f': *d++ = '\f'; break;
    case 'n': *d++ = '\n'; break;
    case 'r': *d++ = '\r'; break;
    case 't': *d++ = '\t'; break;
    case 'u': {
      unsigned long cp = strtoul((char[5]){ raw[i], raw[i + 1], raw[i + 2],
                                            raw[i + 3], 0 }, NULL, 16);
      i += 4;
      if (cp >= 0xd800 && cp <= 0xdbff) {
        unsigned long lo = strtoul((char[5]){ raw[i + 2], raw[i + 3],
                                              raw[i + 4], raw[i + 5], 0 },
                                   NULL, 16);
        i += 6;
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
      }
      /* Escapes always come out of a checked document, so cp is valid. */
      if (cp < 0x80) {
        *d++ = (char)cp;
      } else if (cp < 0x800) {
        *d++ = (char)(0xc0 | (cp >> 6));
        *d++ = (char)(0x80 | (cp & 0x3f));
      } else if (cp < 0x10000) {
        *d++ = (char)(0xe0 | (cp >> 12));
        *d++ = (char)(0x80 | ((cp >> 6) & 0x3f));
        *d++ = (char)(0x80 | (cp & 0x3f));
      } else {
        *d++ = (char)(0xf0 | (cp >> 18));
        *d++ = (char)(0x80 | ((cp >> 12) & 0x3f));
        *d++ = (char)(0x80 | ((cp >> 6) & 0x3f));
        *d++ = (char)(0x80 | (cp & 0x3f));
      }
      break;
    }
    default:
      FZ_FAIL("bad escape in a key the checker accepted");
    }
  }
  *outlen = (size_t)(d - out);
  return out;
}

/* Check that the written string out[0..olen) is what input s (len, or
 * TW_NUL_TERMINATED) must become; count cuts and replacements into *x. */
static void check_string(expect *x, const char *what, const char *out,
                         size_t olen, const char *s, size_t len)
{
  const unsigned char *u = (const unsigned char *)s;
  size_t n = len == TW_NUL_TERMINATED ? strlen(s) : len;
  size_t max = x->m->max_string;
  int replaced = 0;

  FZ_CHECK(out != NULL, "%s: not a string", what);
  if (n > max) {
    x->truncated++;
    if (utf8_first_invalid(u, n) == SIZE_MAX) {
      /* Valid: cut at the last boundary at or before max. */
      size_t c = max;
      while (c > 0 && (u[c] & 0xc0) == 0x80)
        c--;
      if (olen != c || memcmp(out, s, c) != 0) {
        fz_dump("input", s, n);
        fz_dump("written", out, olen);
        FZ_FAIL("%s: valid UTF-8 of %zu bytes not cut to %zu bytes at a "
                "boundary (max_string %zu)", what, n, c, max);
      }
    } else {
      /* Invalid: some cut in [max-3, max], then U+FFFD substitution.
       * More than one cut may give the same text ("\xe2" and "\xe2\x82"
       * both give U+FFFD; so may "\xef" and a literal U+FFFD), so count
       * the replacement as a range. */
      int found = 0, rmin = 1, rmax = 0;
      for (size_t c = max >= 3 ? max - 3 : 0; c <= max; c++) {
        size_t rlen;
        char *r = utf8_replace(u, c, &rlen, &replaced);
        if (rlen == olen && memcmp(r, out, olen) == 0) {
          found = 1;
          rmin = replaced < rmin ? replaced : rmin;
          rmax = replaced > rmax ? replaced : rmax;
        }
      }
      if (found) {
        x->replaced_min += (unsigned)rmin;
        x->replaced_max += (unsigned)rmax;
        return;
      }
      fz_dump("input", s, n);
      fz_dump("written", out, olen);
      FZ_FAIL("%s: a string of %zu bytes with invalid UTF-8 is not a cut "
              "at %zu-3..%zu with U+FFFD substitution", what, n, max, max);
    }
  } else {
    size_t rlen;
    char *r = utf8_replace(u, n, &rlen, &replaced);
    if (rlen != olen || memcmp(r, out, olen) != 0) {
      fz_dump("input", s, n);
      fz_dump("expected", r, rlen);
      fz_dump("written", out, olen);
      FZ_FAIL("%s: string does not round-trip", what);
    }
  }
  x->replaced_min += (unsigned)replaced;
  x->replaced_max += (unsigned)replaced;
}

static void check_str_val(expect *x, const jc_doc *d, jc_val v,
                          const char *what, const char *s, size_t len)
{
  size_t olen;
  const char *out;
  FZ_CHECK(v >= 0 && jc_type(d, v) == JC_STRING, "%s: missing or not a string",
           what);
  out = jc_str(d, v, &olen);
  check_string(x, what, out, olen, s, len);
}

static void check_us(const jc_doc *d, jc_val obj, const char *key,
                     uint64_t ns)
{
  uint64_t got;
  FZ_CHECK(jc_us_to_ns(d, jc_get(d, obj, key), &got) == 0 && got == ns,
           "\"%s\" is not %llu ns", key, (unsigned long long)ns);
}

static void check_i64(const jc_doc *d, jc_val v, int64_t want,
                      const char *what)
{
  int64_t got;
  FZ_CHECK(jc_int64(d, v, &got) == 0 && got == want,
           "%s is not %lld", what, (long long)want);
}

static void check_hex(const jc_doc *d, jc_val v, uint64_t id, const char *what)
{
  char want[24];
  snprintf(want, sizeof want, "0x%llx", (unsigned long long)id);
  FZ_CHECK(jc_streq(d, v, want), "%s is not \"%s\"", what, want);
}

static void check_true(const jc_doc *d, jc_val obj, const char *key)
{
  FZ_CHECK(jc_type(d, jc_get(d, obj, key)) == JC_TRUE && jc_get(d, obj, key) >= 0,
           "\"%s\" is not true", key);
}

/* The raw JSON text as it must be written: newlines as spaces, without
 * the whitespace around the value. */
static void check_raw_json(const jc_doc *d, jc_val v, const char *json,
                           size_t len)
{
  size_t n = len == TW_NUL_TERMINATED ? strlen(json) : len, b = 0, e = n, rlen;
  const char *raw = jc_raw(d, v, &rlen);
  char *want;

  while (b < e && strchr(" \t\r\n", json[b]) && json[b])
    b++;
  while (e > b && strchr(" \t\r\n", json[e - 1]) && json[e - 1])
    e--;
  want = pool_alloc(e - b + 1);
  for (size_t i = b; i < e; i++)
    want[i - b] = (json[i] == '\n' || json[i] == '\r') ? ' ' : json[i];
  if (!raw || rlen != e - b || memcmp(raw, want, rlen) != 0) {
    fz_dump("raw json", json, n);
    fz_dump("written", raw ? raw : "", raw ? rlen : 0);
    FZ_FAIL("raw JSON argument not written as given");
  }
}

static void check_arg(expect *x, const jc_doc *d, jc_val v, const tw_arg *a)
{
  switch (a->type) {
  case TW_ARG_INT:
    check_i64(d, v, a->v.i, "an int arg");
    break;
  case TW_ARG_UINT: {
    uint64_t got;
    size_t rlen;
    const char *raw = jc_raw(d, v, &rlen);
    if (a->v.u > (uint64_t)INT64_MAX) {
      /* The nearest double, in exponent form: Perfetto reads an integer
       * from 2^63 as negative. */
      FZ_CHECK(jc_type(d, v) == JC_NUMBER && raw && memchr(raw, 'e', rlen) &&
               jc_num(d, v) == (double)a->v.u,
               "uint %llu written as %.*s", (unsigned long long)a->v.u,
               (int)rlen, raw ? raw : "");
      break;
    }
    FZ_CHECK(jc_uint64(d, v, &got) == 0 && got == a->v.u,
             "a uint arg is not %llu", (unsigned long long)a->v.u);
    break;
  }
  case TW_ARG_DOUBLE:
    if (!isfinite(a->v.d)) {
      FZ_CHECK(v >= 0 && jc_type(d, v) == JC_NULL, "NaN/Inf not written as null");
    } else {
      size_t rlen;
      const char *raw = jc_raw(d, v, &rlen), *dot;
      FZ_CHECK(jc_type(d, v) == JC_NUMBER && jc_num(d, v) == a->v.d,
               "double %.17g written as %.*s", a->v.d, (int)rlen,
               raw ? raw : "");
      /* Perfetto misreads more than 19 digits after the point. */
      dot = memchr(raw, '.', rlen);
      FZ_CHECK(!dot || memchr(raw, 'e', rlen) ||
               (size_t)(raw + rlen - dot - 1) <= 19,
               "double written as %.*s: over 19 fraction digits",
               (int)rlen, raw);
    }
    break;
  case TW_ARG_BOOL:
    FZ_CHECK(v >= 0 && jc_type(d, v) == (a->v.b ? JC_TRUE : JC_FALSE),
             "bool arg");
    break;
  case TW_ARG_NULL:
    FZ_CHECK(v >= 0 && jc_type(d, v) == JC_NULL, "null arg");
    break;
  case TW_ARG_STRING:
    if (!a->v.s)
      FZ_CHECK(v >= 0 && jc_type(d, v) == JC_NULL, "NULL string arg not null");
    else
      check_str_val(x, d, v, "string arg", a->v.s, a->len);
    break;
  case TW_ARG_JSON:
    if (!a->v.s)
      FZ_CHECK(v >= 0 && jc_type(d, v) == JC_NULL, "NULL JSON arg not null");
    else
      check_raw_json(d, v, a->v.s, a->len);
    break;
  default:
    FZ_FAIL("an arg of bad type %d was written", a->type);
  }
}

/* Check one written event object against the event given to tw_emit. */
static void check_event(expect *x, const jc_doc *d, jc_val obj,
                        const tw_event *ev)
{
  static const char *const keys[] = {
    "ph", "name", "cat", "ts", "dur", "tts", "tdur", "pid", "tid", "s", "id",
    "id2", "scope", "bp", "bind_id", "flow_in", "flow_out", "cname", "args"
  };
  unsigned has = ev->has;
  int instant = ev->ph == 'I' || ev->ph == 'i';
  size_t nkeys = 0;
  char ph[2] = { instant ? 'I' : ev->ph, 0 };
  jc_val v;

  FZ_CHECK(jc_type(d, obj) == JC_OBJECT && obj >= 0, "event is not an object");
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    size_t c = jc_count_key(d, obj, keys[i]);
    FZ_CHECK(c <= 1, "duplicate key \"%s\"", keys[i]);
    nkeys += c;
  }
  FZ_CHECK(nkeys == jc_len(d, obj), "event has keys it should not have");

  FZ_CHECK(jc_streq(d, jc_get(d, obj, "ph"), ph), "\"ph\" is not \"%s\"", ph);
  if (ev->name)
    check_str_val(x, d, jc_get(d, obj, "name"), "name", ev->name, TW_NUL_TERMINATED);
  else
    FZ_CHECK(jc_get(d, obj, "name") < 0, "\"name\" written for a NULL name");
  if (ev->cat)
    check_str_val(x, d, jc_get(d, obj, "cat"), "cat", ev->cat, TW_NUL_TERMINATED);
  else if (ev->ph == 'b' || ev->ph == 'n' || ev->ph == 'e')
    FZ_CHECK(jc_streq(d, jc_get(d, obj, "cat"), "default"),
             "an async event without cat did not get \"default\"");
  else
    FZ_CHECK(jc_get(d, obj, "cat") < 0, "\"cat\" written for a NULL cat");

  if (has & TW_HAS_TS) {
    check_us(d, obj, "ts", ev->ts);
  } else if (ev->ph == 'M') {
    FZ_CHECK(jc_get(d, obj, "ts") < 0, "metadata without ts got a \"ts\"");
  } else {
    uint64_t now;
    FZ_CHECK(jc_us_to_ns(d, jc_get(d, obj, "ts"), &now) == 0,
             "default \"ts\" missing or not microseconds");
  }
  if (ev->ph == 'X')
    check_us(d, obj, "dur", ev->dur);
  else
    FZ_CHECK(jc_get(d, obj, "dur") < 0, "\"dur\" on a '%c' event", ev->ph);
  if (has & TW_HAS_TTS)
    check_us(d, obj, "tts", ev->tts);
  else
    FZ_CHECK(jc_get(d, obj, "tts") < 0, "\"tts\" not asked for");
  if (has & TW_HAS_TDUR)
    check_us(d, obj, "tdur", ev->tdur);
  else
    FZ_CHECK(jc_get(d, obj, "tdur") < 0, "\"tdur\" not asked for");
  check_i64(d, jc_get(d, obj, "pid"),
            (has & TW_HAS_PID) ? ev->pid : (int64_t)getpid(), "\"pid\"");
  check_i64(d, jc_get(d, obj, "tid"),
            (has & TW_HAS_TID) ? ev->tid : (int64_t)syscall(SYS_gettid),
            "\"tid\"");

  if (instant) {
    char s[2] = { ev->instant_scope ? ev->instant_scope : 't', 0 };
    FZ_CHECK(jc_streq(d, jc_get(d, obj, "s"), s), "instant scope \"s\"");
  } else {
    FZ_CHECK(jc_get(d, obj, "s") < 0, "\"s\" on a non-instant");
  }

  if ((has & TW_HAS_ID) &&
      !(ev->flags & (TW_EV_ID2_LOCAL | TW_EV_ID2_GLOBAL))) {
    check_hex(d, jc_get(d, obj, "id"), ev->id, "\"id\"");
    FZ_CHECK(jc_get(d, obj, "id2") < 0, "both id and id2");
  } else if (has & TW_HAS_ID) {
    const char *k = (ev->flags & TW_EV_ID2_LOCAL) ? "local" : "global";
    jc_val id2 = jc_get(d, obj, "id2");
    FZ_CHECK(jc_type(d, id2) == JC_OBJECT && id2 >= 0 && jc_len(d, id2) == 1,
             "\"id2\" is not an object of one member");
    check_hex(d, jc_get(d, id2, k), ev->id, "\"id2\"");
    FZ_CHECK(jc_get(d, obj, "id") < 0, "both id and id2");
  } else {
    FZ_CHECK(jc_get(d, obj, "id") < 0 && jc_get(d, obj, "id2") < 0,
             "an id without TW_HAS_ID*");
  }
  if (ev->id_scope)
    check_str_val(x, d, jc_get(d, obj, "scope"), "scope", ev->id_scope, TW_NUL_TERMINATED);
  else
    FZ_CHECK(jc_get(d, obj, "scope") < 0, "\"scope\" for a NULL id_scope");
  if (ev->flags & TW_EV_BP_ENCLOSING)
    FZ_CHECK(jc_streq(d, jc_get(d, obj, "bp"), "e"), "\"bp\" is not \"e\"");
  else
    FZ_CHECK(jc_get(d, obj, "bp") < 0, "\"bp\" not asked for");
  if (has & TW_HAS_BIND_ID)
    check_hex(d, jc_get(d, obj, "bind_id"), ev->bind_id, "\"bind_id\"");
  else
    FZ_CHECK(jc_get(d, obj, "bind_id") < 0, "\"bind_id\" not asked for");
  if (ev->flags & TW_EV_FLOW_IN)
    check_true(d, obj, "flow_in");
  else
    FZ_CHECK(jc_get(d, obj, "flow_in") < 0, "\"flow_in\" not asked for");
  if (ev->flags & TW_EV_FLOW_OUT)
    check_true(d, obj, "flow_out");
  else
    FZ_CHECK(jc_get(d, obj, "flow_out") < 0, "\"flow_out\" not asked for");
  if (ev->cname)
    check_str_val(x, d, jc_get(d, obj, "cname"), "cname", ev->cname, TW_NUL_TERMINATED);
  else
    FZ_CHECK(jc_get(d, obj, "cname") < 0, "\"cname\" for a NULL cname");

  v = jc_get(d, obj, "args");
  if (ev->nargs == 0) {
    FZ_CHECK(v < 0, "\"args\" written for no args");
    return;
  }
  FZ_CHECK(v >= 0 && jc_type(d, v) == JC_OBJECT && jc_len(d, v) == ev->nargs,
           "\"args\" is not an object of %zu members", ev->nargs);
  v = jc_first(d, v);
  for (size_t i = 0; i < ev->nargs; i++, v = jc_next(d, v)) {
    size_t rawlen, klen;
    const char *raw = jc_key_raw(d, v, &rawlen);
    char *key;
    FZ_CHECK(raw != NULL, "arg %zu has no key", i);
    key = decode_key(raw, rawlen, &klen);
    check_string(x, "arg key", key, klen, ev->args[i].name, TW_NUL_TERMINATED);
    check_arg(x, d, v, &ev->args[i]);
  }
}

/* --------------------------------------------------------------- the test */

static const size_t max_strings[4] = { 64, 67, 255, TW_DEFAULT_MAX_STRING };
static const size_t max_events[4] = { 4096, 4097, 10000, TW_DEFAULT_MAX_EVENT };
static const size_t buffers[4] = { 256, 1000, 4096, TW_DEFAULT_BUFFER_SIZE };

/* The file as the writer left it between two calls: a strictly valid
 * trace ending with the tail, holding from min to max events. */
static void check_committed(int fd, const char *tail, size_t min, size_t max)
{
  size_t len, tail_len = strlen(tail), n;
  char *file = fz_read_all(fd, &len), msg[200];
  jc_doc *d = jc_parse(file, len, msg, sizeof msg);

  if (!d) {
    fz_dump("file", file, len);
    FZ_FAIL("between events, the file is not strict JSON: %s", msg);
  }
  FZ_CHECK(len >= tail_len && memcmp(file + len - tail_len, tail, tail_len) == 0,
           "between events, the file does not end with the tail");
  n = jc_len(d, jc_trace_events(d));
  FZ_CHECK(n >= min && n <= max, "between events, %zu events committed, "
           "expected %zu..%zu", n, min, max);
  jc_free(d);
  free(file);
}

/* TW_FUZZ_VERBOSE set: print each event's result to stderr. */
static int verbose = -1;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  rd r = { data, data + size };
  tw_event events[MAX_EVENTS];
  int rcs[MAX_EVENTS];
  model m;
  expect x;
  tw_options o;
  tw_writer *w;
  tw_stats st;
  unsigned b0, b1, nevents, ok = 0, bad = 0;
  const char *pname = "fuzz";
  const char *tail;
  int fd, err = 0, rc;
  char *file, errbuf[200];
  size_t flen, tail_len, lines;
  jc_doc *d;
  jc_val evs, v;

  if (verbose < 0)
    verbose = getenv("TW_FUZZ_VERBOSE") != NULL;
  b0 = rd_u8(&r);
  b1 = rd_u8(&r);
  tw_options_init(&o);
  o.flags = b0 & 7;
  o.max_string = max_strings[(b0 >> 3) & 3];
  o.max_event = max_events[(b0 >> 5) & 3];
  o.format = (b0 & 0x80) ? TW_FORMAT_OBJECT : TW_FORMAT_ARRAY;
  o.buffer_size = buffers[b1 & 3];
  if (b1 & 4) {
    o.sink = TW_SINK_MMAP;
    o.mmap_chunk = 4096;
  }
  o.commit = TW_COMMIT_INLINE;
  if (b1 & 8)
    pname = rd_cstr(&r);
  o.process_name = pname;
  nevents = 1 + ((b1 >> 4) & 7);
  for (unsigned i = 0; i < nevents; i++)
    rd_event(&r, &events[i]);

  memset(&m, 0, sizeof m);
  m.flags = o.flags;
  m.max_string = o.max_string;
  m.max_event = o.max_event;
  memset(&x, 0, sizeof x);
  x.m = &m;

  fd = fz_file();
  w = tw_open_fd(fd, &o, &err);
  if (!w) {
    /* Only a bad process_name may make the open fail. */
    unsigned k = kind_of(err);
    m.must = m.may = 0;
    m.size = 200;
    if (pname)
      model_string(&m, pname, TW_NUL_TERMINATED);
    if (m.size > 4096 - 32)
      m.may |= K_TOOBIG;
    FZ_CHECK(k != 0 && ((m.must | m.may) & k), "tw_open_fd failed: %s (%d)",
             tw_err_name(err), err);
    pool_free();
    return 0;
  }

  tail = o.format == TW_FORMAT_OBJECT ? "\n]}" : "\n]";
  check_committed(fd, tail, 2, 2);     /* process_name, the clock */
  for (unsigned i = 0; i < nevents; i++) {
    unsigned k;
    model_event(&m, &events[i]);
    rcs[i] = rc = tw_emit(w, &events[i]);
    k = kind_of(rc);
    if (verbose)
      fprintf(stderr, "event %u: ph 0x%02x, %zu args: %s (model must 0x%x "
              "may 0x%x)\n", i, (unsigned char)events[i].ph,
              events[i].nargs, tw_err_name(rc), m.must, m.may);
    if (rc == 0) {
      ok++;
      FZ_CHECK(m.must == 0, "event %u ('%c') accepted, but it must be refused "
               "(model bits 0x%x)", i, events[i].ph, m.must);
    } else {
      bad++;
      FZ_CHECK(k != 0, "event %u: tw_emit returned %s (%d), not a bad-input "
               "code", i, tw_err_name(rc), rc);
      FZ_CHECK((m.must | m.may) & k, "event %u ('%c'): refused with %s, which "
               "it does not deserve (model must 0x%x may 0x%x)", i,
               events[i].ph, tw_err_name(rc), m.must, m.may);
    }
    if (b1 & 0x80) {
      rc = tw_flush(w);
      FZ_CHECK(rc == 0, "tw_flush: %s (%d)", tw_err_name(rc), rc);
    }
    /* + 2: the document's own records, process_name and the clock. */
    check_committed(fd, tail, (b1 & 0x80) || o.sink == TW_SINK_MMAP ? ok + 2 : 2,
                    ok + 2);
  }
  FZ_CHECK(tw_get_stats(w, &st) == 0, "tw_stats");
  rc = tw_close(w);
  FZ_CHECK(rc == 0, "tw_close returned %s (%d)", tw_err_name(rc), rc);

  /* The file: strictly valid, one record per line, the exact tail. */
  file = fz_read_all(fd, &flen);
  d = jc_parse(file, flen, errbuf, sizeof errbuf);
  if (!d) {
    fz_dump("file", file, flen);
    FZ_FAIL("the trace is not strict JSON: %s", errbuf);
  }
  tail_len = strlen(tail);
  FZ_CHECK(flen >= tail_len && memcmp(file + flen - tail_len, tail, tail_len) == 0,
           "the file does not end with the tail");
  FZ_CHECK(memchr(file, '\0', flen) == NULL, "a NUL byte in the file");
  lines = 0;
  for (const char *p = file, *nl; (nl = memchr(p, '\n', flen - (size_t)(p - file)));
       p = nl + 1) {
    size_t ll = (size_t)(nl - p);
    if (lines >= 3 && lines <= ok + 2) {
      /* An event's record ",\n{...}": the line is "{...}" and the next
       * record's comma. */
      size_t rec = ll + 2 - (ll && p[ll - 1] == ',');
      FZ_CHECK(ll && p[0] == '{', "line %zu does not start a record", lines);
      FZ_CHECK(rec <= o.max_event, "a record of %zu bytes > max_event %zu",
               rec, o.max_event);
    }
    lines++;
  }
  lines++;                         /* the tail's, with no newline after it */
  FZ_CHECK(lines == ok + 4, "%zu lines for %u events (one record per line)",
           lines, ok + 2);

  evs = jc_trace_events(d);
  FZ_CHECK(evs >= 0 && jc_len(d, evs) == ok + 2,
           "%zu events in the file, %u emitted + 2", jc_len(d, evs), ok);
  v = jc_first(d, evs);
  FZ_CHECK(jc_streq(d, jc_get(d, v, "ph"), "M") &&
           jc_streq(d, jc_get(d, v, "name"), "process_name"),
           "the first record is not process_name");
  if (pname)
    check_str_val(&x, d, jc_get(d, jc_get(d, v, "args"), "name"),
                  "process_name", pname, TW_NUL_TERMINATED);
  v = jc_next(d, v);
  FZ_CHECK(jc_streq(d, jc_get(d, v, "ph"), "c") &&
           jc_streq(d, jc_get(d, v, "name"), "clock_sync"),
           "the second record is not the clock record");
  for (unsigned i = 0; i < nevents; i++) {
    if (rcs[i] != 0)
      continue;
    v = jc_next(d, v);
    check_event(&x, d, v, &events[i]);
  }

  FZ_CHECK(st.events == ok + 2, "stats.events %llu", (unsigned long long)st.events);
  FZ_CHECK(st.rejected == bad, "stats.rejected %llu, %u refused",
           (unsigned long long)st.rejected, bad);
  FZ_CHECK(st.bytes == flen - tail_len, "stats.bytes %llu, file %zu",
           (unsigned long long)st.bytes, flen);
  FZ_CHECK(st.strings_truncated == x.truncated,
           "stats.strings_truncated %llu, expected %llu",
           (unsigned long long)st.strings_truncated,
           (unsigned long long)x.truncated);
  FZ_CHECK(st.utf8_replaced >= x.replaced_min &&
           st.utf8_replaced <= x.replaced_max,
           "stats.utf8_replaced %llu, expected %llu..%llu",
           (unsigned long long)st.utf8_replaced,
           (unsigned long long)x.replaced_min,
           (unsigned long long)x.replaced_max);
  FZ_CHECK(st.error == 0, "stats.error %d", st.error);

  jc_free(d);
  free(file);
  pool_free();
  return 0;
}
