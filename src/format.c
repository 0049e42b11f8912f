/* format.c -- one tw_event to the bytes of one JSON record
 *
 * Pure code: no I/O, no locks, no allocation.  A record is formatted into a
 * caller's buffer; when the buffer is too small the formatter keeps counting
 * so the caller learns how much room to give it next time.  Everything is
 * checked while formatting, and nothing is written to the trace unless the
 * whole record formatted, so bad input never leaves half a record.
 */
#include "internal.h"

#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The output cursor.  Once something does not fit, nothing more is
 * written (end is pulled back to p, so every later room() fails on one
 * compare) but need keeps counting: it is then an upper bound of the room
 * the record needs. */
typedef struct cursor {
  char *p;                 /* next byte to write */
  char *end;               /* end of the buffer (p, once over) */
  char *start;             /* the buffer */
  size_t need;             /* once over: bytes needed in all */
  int over;                /* 1 once something did not fit */
} cursor;

/* Room for n bytes at o->p; returns where to write, or NULL (counted). */
static inline char *room(cursor *o, size_t n)
{
  if (TW__LIKELY((size_t)(o->end - o->p) >= n))
    return o->p;
  if (!o->over) {
    o->over = 1;
    o->need = (size_t)(o->p - o->start);
    o->end = o->p;
  }
  o->need += n;
  return NULL;
}

/* Take k bytes of the room just granted. */
static inline void advance(cursor *o, size_t k)
{
  o->p += k;
}

static inline void put(cursor *o, const char *s, size_t n)
{
  char *d = room(o, n);
  if (d) {
    memcpy(d, s, n);
    advance(o, n);
  }
}

#define PUTLIT(o, lit) put((o), (lit), sizeof(lit) - 1)

/* ---------------------------------------------------------------- numbers */

static const char digit_pairs[201] =
  "00010203040506070809101112131415161718192021222324252627282930313233343536"
  "37383940414243444546474849505152535455565758596061626364656667686970717273"
  "74757677787980818283848586878889909192939495969798"
  "99";

/* The number of decimal digits of v. */
static inline unsigned dec_digits(uint64_t v)
{
  unsigned n = 1;
  while (v >= 10000) {
    v /= 10000;
    n += 4;
  }
  return n + (v >= 10) + (v >= 100) + (v >= 1000);
}

/* Decimal digits of v into out (20 bytes of room); returns the length.
 * Two digits at a time from a table, written from the end. */
static inline size_t u64_to_dec(uint64_t v, char *out)
{
  unsigned n = dec_digits(v);
  char *p = out + n;

  while (v >= 100) {
    unsigned i = (unsigned)(v % 100) * 2;
    v /= 100;
    p -= 2;
    p[0] = digit_pairs[i];
    p[1] = digit_pairs[i + 1];
  }
  if (v >= 10) {
    p[-2] = digit_pairs[v * 2];
    p[-1] = digit_pairs[v * 2 + 1];
  } else {
    p[-1] = (char)('0' + v);
  }
  return n;
}

static void put_u64(cursor *o, uint64_t v)
{
  char *d = room(o, 20);
  if (d)
    advance(o, u64_to_dec(v, d));
}

static void put_i64(cursor *o, int64_t v)
{
  char *d = room(o, 21);
  if (!d)
    return;
  if (v < 0) {
    *d = '-';
    advance(o, 1 + u64_to_dec((uint64_t)0 - (uint64_t)v, d + 1));
  } else {
    advance(o, u64_to_dec((uint64_t)v, d));
  }
}

/* Nanoseconds as microseconds with exactly three decimals: 1234567891 ->
 * "1234567.891".  Integer arithmetic only: no rounding, no locale. */
static void put_us(cursor *o, uint64_t ns)
{
  char *d = room(o, 24);
  size_t n;
  unsigned frac;

  if (!d)
    return;
  n = u64_to_dec(ns / 1000, d);
  frac = (unsigned)(ns % 1000);
  d[n] = '.';
  d[n + 1] = (char)('0' + frac / 100);
  memcpy(d + n + 2, digit_pairs + frac % 100 * 2, 2);
  advance(o, n + 4);
}

/* ,"pid":P,"tid":T -- the same for every event of a thread, so each
 * thread keeps its last one formatted. */
static void put_pid_tid(cursor *o, int64_t pid, int64_t tid)
{
  static TW__THREAD struct {
    int64_t pid, tid;
    unsigned char len;     /* 0: nothing cached */
    char text[64];
  } cache;
  char *d = room(o, sizeof cache.text);

  if (!d)
    return;
  if (cache.len == 0 || cache.pid != pid || cache.tid != tid) {
    cursor c = { cache.text, cache.text + sizeof cache.text, cache.text,
                 0, 0 };
    PUTLIT(&c, ",\"pid\":");
    put_i64(&c, pid);
    PUTLIT(&c, ",\"tid\":");
    put_i64(&c, tid);
    cache.pid = pid;
    cache.tid = tid;
    cache.len = (unsigned char)(c.p - c.start);
  }
  memcpy(d, cache.text, cache.len);
  advance(o, cache.len);
}

/* An id as a quoted lowercase hex string: "0x1a". */
static void put_hex_id(cursor *o, uint64_t v)
{
  static const char hex[] = "0123456789abcdef";
  char tmp[16];
  char *d = room(o, 20);
  int n = 0;

  if (!d)
    return;
  do {
    tmp[n++] = hex[v & 15];
    v >>= 4;
  } while (v);
  d[0] = '"';
  d[1] = '0';
  d[2] = 'x';
  for (int i = 0; i < n; i++)
    d[3 + i] = tmp[n - 1 - i];
  d[3 + n] = '"';
  advance(o, (size_t)n + 4);
}

static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static locale_t c_locale;

static void c_locale_init(void)
{
  c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

/* Shortest of %.15g/%.17g that reads back as v, in the C locale whatever
 * the program's locale is.  Returns the length written into buf[32]. */
static int format_double(double v, char *buf)
{
  locale_t old = (locale_t)0;
  int n;

  pthread_once(&c_locale_once, c_locale_init);
  if (c_locale)
    old = uselocale(c_locale);
  n = snprintf(buf, 32, "%.15g", v);
  if (strtod(buf, NULL) != v)
    n = snprintf(buf, 32, "%.17g", v);
  if (c_locale)
    uselocale(old);
  return n;
}

/* A double; NaN and infinities become null or TW_ENONFINITE. */
static int put_double(cursor *o, double v, const tw__fmt_config *cfg)
{
  char *d;

  if (!isfinite(v)) {
    if (cfg->flags & TW_OPT_REJECT_NONFINITE)
      return TW_ENONFINITE;
    PUTLIT(o, "null");
    return 0;
  }
  /* Whole numbers (the common case for counters) skip snprintf. */
  if (v >= -9007199254740992.0 && v <= 9007199254740992.0 &&
      v == (double)(int64_t)v) {
    put_i64(o, (int64_t)v);
    return 0;
  }
  d = room(o, 32);
  if (d)
    advance(o, (size_t)format_double(v, d));
  return 0;
}

/* ---------------------------------------------------------------- strings */

/* For each byte: 0 copied as is, 1 escaped (quote, backslash, control),
 * 2 the start of a UTF-8 sequence (or junk) to check. */
#define C16(x) x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x
static const unsigned char byte_class[256] = {
  C16(1), C16(1),                                     /* 0x00-0x1f */
  0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,     /* 0x20-0x2f: " */
  C16(0), C16(0),                                     /* 0x30-0x4f */
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,     /* 0x50-0x5f: \ */
  C16(0), C16(0),                                     /* 0x60-0x7f */
  C16(2), C16(2), C16(2), C16(2),                     /* 0x80-0xbf */
  C16(2), C16(2), C16(2), C16(2)                      /* 0xc0-0xff */
};
#undef C16

/* The length of the valid UTF-8 sequence at s (n > 0 bytes available), or
 * minus the length of its maximal invalid subpart (at least 1), as Unicode
 * chapter 3 (U+FFFD substitution of maximal subparts) counts it. */
static int utf8_sequence(const unsigned char *s, size_t n)
{
  unsigned c = s[0];
  unsigned lo = 0x80, hi = 0xbf;
  int len, i;

  if (c < 0x80)
    return 1;
  if (c >= 0xc2 && c <= 0xdf)
    len = 2;
  else if (c >= 0xe0 && c <= 0xef) {
    len = 3;
    if (c == 0xe0)
      lo = 0xa0;
    else if (c == 0xed)
      hi = 0x9f;          /* no UTF-16 surrogates */
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4;
    if (c == 0xf0)
      lo = 0x90;
    else if (c == 0xf4)
      hi = 0x8f;          /* nothing above U+10FFFF */
  } else
    return -1;
  for (i = 1; i < len; i++) {
    if ((size_t)i >= n || s[i] < lo || s[i] > hi)
      return -i;
    lo = 0x80;
    hi = 0xbf;
  }
  return len;
}

/* The longest prefix of s of at most max bytes that does not end inside a
 * UTF-8 sequence. */
static size_t utf8_cut(const unsigned char *s, size_t max)
{
  size_t cut = max;
  int back = 0;

  while (cut > 0 && back < 3 && (s[cut] & 0xc0) == 0x80) {
    cut--;
    back++;
  }
  /* A lone continuation run longer than 3 is junk: cut where asked. */
  return (s[cut] & 0xc0) == 0x80 ? max : cut;
}

/* The exact length of s[0..n) once escaped (without the quotes), invalid
 * UTF-8 counted as U+FFFD. */
static size_t escaped_len(const unsigned char *s, size_t n)
{
  const unsigned char *p = s, *e = s + n;
  size_t len = 0;

  while (p < e) {
    unsigned c = *p;
    if (byte_class[c] == 0) {
      len++;
      p++;
    } else if (byte_class[c] == 1) {
      len += (c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' ||
              c == '\b' || c == '\f') ? 2 : 6;
      p++;
    } else {
      int k = utf8_sequence(p, (size_t)(e - p));
      len += k > 0 ? (size_t)k : 3;
      p += k > 0 ? k : -k;
    }
  }
  return len;
}

/* A JSON string: quoted, escaped, UTF-8 checked, cut to max_string. */
static int put_string(cursor *o, const char *str, size_t n,
                      const tw__fmt_config *cfg, tw__fmt_notes *notes)
{
  static const char hex[] = "0123456789abcdef";
  const unsigned char *p = (const unsigned char *)str;
  const unsigned char *e;
  char *d, *start;
  int replaced = 0;

  if (n == TW_NUL) {
    /* Fast path for the common short, plain NUL-terminated string: copy
     * while scanning, no strlen, no memcpy call.  Anything else (a byte
     * to escape or check, a long string, little room) takes the general
     * path below. */
    size_t limit = (size_t)(o->end - o->p);
    if (limit > 2) {
      size_t max = limit - 2 < cfg->max_string ? limit - 2 : cfg->max_string;
      size_t i = 0;
      d = o->p + 1;
      while (i < max && byte_class[p[i]] == 0) {
        d[i] = (char)p[i];
        i++;
      }
      if (p[i] == '\0') {
        o->p[0] = '"';
        d[i] = '"';
        advance(o, i + 2);
        return 0;
      }
    }
    n = strlen(str);
  }
  if (n > cfg->max_string) {
    if (cfg->flags & TW_OPT_REJECT_LONG_STRINGS)
      return TW_ETOOLONG;
    n = utf8_cut(p, cfg->max_string);
    notes->truncated++;
  }
  /* Worst case: every byte becomes \u00XX.  When that much room is not
   * there, count exactly, so a long string that fits is not refused. */
  if (o->over || (size_t)(o->end - o->p) < n * 6 + 2) {
    if (!room(o, escaped_len(p, n) + 2))
      return 0;
  }
  start = d = o->p;
  e = p + n;
  *d++ = '"';
  while (p < e) {
    unsigned c = *p;
    switch (byte_class[c]) {
    case 0:
      *d++ = (char)c;
      p++;
      break;
    case 1:
      *d++ = '\\';
      switch (c) {
      case '"':  *d++ = '"'; break;
      case '\\': *d++ = '\\'; break;
      case '\n': *d++ = 'n'; break;
      case '\r': *d++ = 'r'; break;
      case '\t': *d++ = 't'; break;
      case '\b': *d++ = 'b'; break;
      case '\f': *d++ = 'f'; break;
      default:
        *d++ = 'u';
        *d++ = '0';
        *d++ = '0';
        *d++ = hex[c >> 4];
        *d++ = hex[c & 15];
      }
      p++;
      break;
    default: {
      int k = utf8_sequence(p, (size_t)(e - p));
      if (k > 0) {
        memcpy(d, p, (size_t)k);
        d += k;
        p += k;
      } else {
        if (cfg->flags & TW_OPT_REJECT_INVALID_UTF8)
          return TW_EUTF8;
        memcpy(d, "\xef\xbf\xbd", 3);   /* U+FFFD */
        d += 3;
        p += -k;
        replaced = 1;
      }
    }
    }
  }
  *d++ = '"';
  advance(o, (size_t)(d - start));
  notes->replaced += (unsigned)replaced;
  return 0;
}

/* ------------------------------------------------------------- raw JSON */

typedef struct jscan {
  const unsigned char *p;
  const unsigned char *e;
  unsigned depth;
} jscan;

static void j_ws(jscan *j)
{
  while (j->p < j->e &&
         (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
    j->p++;
}

static int j_hex4(jscan *j, unsigned *cp)
{
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    unsigned c;
    if (j->p >= j->e)
      return -1;
    c = *j->p++;
    if (c >= '0' && c <= '9')
      c -= '0';
    else if (c >= 'a' && c <= 'f')
      c -= 'a' - 10;
    else if (c >= 'A' && c <= 'F')
      c -= 'A' - 10;
    else
      return -1;
    v = v << 4 | c;
  }
  *cp = v;
  return 0;
}

static int j_string(jscan *j)
{
  j->p++;                                  /* the opening quote */
  while (j->p < j->e) {
    unsigned c = *j->p;
    if (c == '"') {
      j->p++;
      return 0;
    }
    if (c < 0x20)
      return -1;
    if (c == '\\') {
      unsigned cp, lo;
      if (++j->p >= j->e)
        return -1;
      c = *j->p++;
      if (c == 'u') {
        if (j_hex4(j, &cp))
          return -1;
        if (cp >= 0xdc00 && cp <= 0xdfff)
          return -1;                       /* lone low surrogate */
        if (cp >= 0xd800 && cp <= 0xdbff) {
          if (j->e - j->p < 2 || j->p[0] != '\\' || j->p[1] != 'u')
            return -1;
          j->p += 2;
          if (j_hex4(j, &lo) || lo < 0xdc00 || lo > 0xdfff)
            return -1;
        }
      } else if (!strchr("\"\\/bfnrt", (int)c) || c == 0) {
        return -1;
      }
    } else if (c >= 0x80) {
      int k = utf8_sequence(j->p, (size_t)(j->e - j->p));
      if (k < 0)
        return -1;
      j->p += k;
    } else {
      j->p++;
    }
  }
  return -1;
}

static int j_digits(jscan *j)
{
  const unsigned char *s = j->p;
  while (j->p < j->e && *j->p >= '0' && *j->p <= '9')
    j->p++;
  return j->p > s ? 0 : -1;
}

static int j_number(jscan *j)
{
  if (*j->p == '-')
    j->p++;
  if (j->p >= j->e)
    return -1;
  if (*j->p == '0')
    j->p++;
  else if (j_digits(j))
    return -1;
  if (j->p < j->e && *j->p == '.') {
    j->p++;
    if (j_digits(j))
      return -1;
  }
  if (j->p < j->e && (*j->p == 'e' || *j->p == 'E')) {
    j->p++;
    if (j->p < j->e && (*j->p == '+' || *j->p == '-'))
      j->p++;
    if (j_digits(j))
      return -1;
  }
  return 0;
}

static int j_literal(jscan *j, const char *lit, size_t n)
{
  if ((size_t)(j->e - j->p) < n || memcmp(j->p, lit, n) != 0)
    return -1;
  j->p += n;
  return 0;
}

static int j_value(jscan *j);

/* Members or elements of an object or array, after its opening bracket. */
static int j_container(jscan *j, int is_object)
{
  unsigned char close = is_object ? '}' : ']';

  if (++j->depth > TW_MAX_JSON_DEPTH)
    return -1;
  j->p++;
  j_ws(j);
  if (j->p < j->e && *j->p == close) {
    j->p++;
    j->depth--;
    return 0;
  }
  for (;;) {
    if (is_object) {
      if (j->p >= j->e || *j->p != '"' || j_string(j))
        return -1;
      j_ws(j);
      if (j->p >= j->e || *j->p++ != ':')
        return -1;
      j_ws(j);
    }
    if (j_value(j))
      return -1;
    j_ws(j);
    if (j->p >= j->e)
      return -1;
    if (*j->p == ',') {
      j->p++;
      j_ws(j);
      continue;
    }
    if (*j->p++ != close)
      return -1;
    j->depth--;
    return 0;
  }
}

static int j_value(jscan *j)
{
  if (j->p >= j->e)
    return -1;
  switch (*j->p) {
  case '{': return j_container(j, 1);
  case '[': return j_container(j, 0);
  case '"': return j_string(j);
  case 't': return j_literal(j, "true", 4);
  case 'f': return j_literal(j, "false", 5);
  case 'n': return j_literal(j, "null", 4);
  default:
    if (*j->p == '-' || (*j->p >= '0' && *j->p <= '9'))
      return j_number(j);
    return -1;
  }
}

int tw__json_validate(const char *json, size_t len)
{
  jscan j = { (const unsigned char *)json, (const unsigned char *)json + len,
              0 };
  j_ws(&j);
  if (j_value(&j))
    return TW_EJSON;
  j_ws(&j);
  return j.p == j.e ? 0 : TW_EJSON;
}

/* Raw JSON, checked, with its whitespace newlines turned into spaces so the
 * record stays on one line (a valid document has no raw newline inside a
 * string, so every newline is whitespace). */
static int put_json(cursor *o, const char *json, size_t n)
{
  char *d;

  if (n == TW_NUL)
    n = strlen(json);
  if (tw__json_validate(json, n))
    return TW_EJSON;
  d = room(o, n);
  if (!d)
    return 0;
  for (size_t i = 0; i < n; i++) {
    char c = json[i];
    d[i] = (c == '\n' || c == '\r') ? ' ' : c;
  }
  advance(o, n);
  return 0;
}

/* ----------------------------------------------------------------- events */

/* What each phase requires. */
#define NEED_NAME 0x1u
#define NEED_ID   0x2u
#define COUNTER   0x4u
#define INSTANT   0x8u
#define KNOWN     0x10u

static unsigned phase_rules(char ph)
{
  switch (ph) {
  case 'X': case 'B': case 'R': case 'M': case 'c':
    return KNOWN | NEED_NAME;
  case 'E':
    return KNOWN;
  case 'I': case 'i':
    return KNOWN | NEED_NAME | INSTANT;
  case 'C':
    return KNOWN | NEED_NAME | COUNTER;
  case 'b': case 'n': case 'e': case 's': case 't': case 'f':
  case 'N': case 'O': case 'D':
    return KNOWN | NEED_NAME | NEED_ID;
  default:
    return 0;
  }
}

static int put_arg(cursor *o, const tw_arg *a, const tw__fmt_config *cfg,
                   tw__fmt_notes *notes)
{
  switch (a->type) {
  case TW_ARG_INT:
    put_i64(o, a->v.i);
    return 0;
  case TW_ARG_UINT:
    put_u64(o, a->v.u);
    return 0;
  case TW_ARG_DOUBLE:
    return put_double(o, a->v.d, cfg);
  case TW_ARG_BOOL:
    if (a->v.b)
      PUTLIT(o, "true");
    else
      PUTLIT(o, "false");
    return 0;
  case TW_ARG_NULL:
    PUTLIT(o, "null");
    return 0;
  case TW_ARG_STRING:
    if (!a->v.s) {
      PUTLIT(o, "null");
      return 0;
    }
    return put_string(o, a->v.s, a->len, cfg, notes);
  case TW_ARG_JSON:
    if (!a->v.s) {
      PUTLIT(o, "null");
      return 0;
    }
    return put_json(o, a->v.s, a->len);
  default:
    return TW_EEVENT;
  }
}

static int put_args(cursor *o, const tw_event *ev, unsigned rules,
                    const tw__fmt_config *cfg, tw__fmt_notes *notes)
{
  int rc;

  PUTLIT(o, ",\"args\":{");
  for (size_t i = 0; i < ev->nargs; i++) {
    const tw_arg *a = &ev->args[i];
    if (!a->name)
      return TW_EEVENT;
    if ((rules & COUNTER) && a->type != TW_ARG_INT &&
        a->type != TW_ARG_UINT && a->type != TW_ARG_DOUBLE)
      return TW_EEVENT;
    if (i)
      PUTLIT(o, ",");
    if ((rc = put_string(o, a->name, TW_NUL, cfg, notes)) != 0)
      return rc;
    PUTLIT(o, ":");
    if ((rc = put_arg(o, a, cfg, notes)) != 0)
      return rc;
  }
  PUTLIT(o, "}");
  return 0;
}

int tw__format_event(const tw_event *ev, const tw__fmt_defaults *def,
                     const tw__fmt_config *cfg, char *buf, size_t cap,
                     size_t *len, tw__fmt_notes *notes)
{
  cursor o = { buf, buf + cap, buf, 0, 0 };
  unsigned rules = phase_rules(ev->ph);
  unsigned has = ev->has;
  unsigned ids = has & (TW_HAS_ID | TW_HAS_ID2_LOCAL | TW_HAS_ID2_GLOBAL);
  char *d;
  int rc;

  if (!rules)
    return TW_EEVENT;
  if ((rules & NEED_NAME) && !ev->name)
    return TW_EEVENT;
  if (ids & (ids - 1))                      /* more than one kind of id */
    return TW_EEVENT;
  if ((rules & NEED_ID) && !ids)
    return TW_EEVENT;
  if ((rules & INSTANT) && ev->scope && ev->scope != 'g' &&
      ev->scope != 'p' && ev->scope != 't')
    return TW_EEVENT;
  if ((rules & COUNTER) && ev->nargs == 0)
    return TW_EEVENT;
  if (ev->nargs > TW_MAX_ARGS)
    return TW_ETOOMANY;
  if (ev->nargs && !ev->args)
    return TW_EEVENT;

  /* DevTools' trace engine draws only the uppercase instant. */
  d = room(&o, 11);
  if (d) {
    memcpy(d, ",\n{\"ph\":\"", 9);
    d[9] = (rules & INSTANT) ? 'I' : ev->ph;
    d[10] = '"';
    advance(&o, 11);
  }
  if (ev->name) {
    PUTLIT(&o, ",\"name\":");
    if ((rc = put_string(&o, ev->name, TW_NUL, cfg, notes)) != 0)
      return rc;
  }
  if (ev->cat) {
    PUTLIT(&o, ",\"cat\":");
    if ((rc = put_string(&o, ev->cat, TW_NUL, cfg, notes)) != 0)
      return rc;
  }
  if (ev->ph != 'M' || (has & TW_HAS_TS)) {
    PUTLIT(&o, ",\"ts\":");
    put_us(&o, (has & TW_HAS_TS) ? ev->ts : def->ts);
  }
  if (ev->ph == 'X') {
    PUTLIT(&o, ",\"dur\":");
    put_us(&o, ev->dur);
  }
  if (has & TW_HAS_TTS) {
    PUTLIT(&o, ",\"tts\":");
    put_us(&o, ev->tts);
  }
  if (has & TW_HAS_TDUR) {
    PUTLIT(&o, ",\"tdur\":");
    put_us(&o, ev->tdur);
  }
  put_pid_tid(&o, (has & TW_HAS_PID) ? ev->pid : def->pid,
              (has & TW_HAS_TID) ? ev->tid : def->tid);
  if (rules & INSTANT) {
    d = room(&o, 9);
    if (d) {
      memcpy(d, ",\"s\":\"", 6);
      d[6] = ev->scope ? ev->scope : 't';
      d[7] = '"';
      advance(&o, 8);
    }
  }
  if (has & TW_HAS_ID) {
    PUTLIT(&o, ",\"id\":");
    put_hex_id(&o, ev->id);
  } else if (has & TW_HAS_ID2_LOCAL) {
    PUTLIT(&o, ",\"id2\":{\"local\":");
    put_hex_id(&o, ev->id);
    PUTLIT(&o, "}");
  } else if (has & TW_HAS_ID2_GLOBAL) {
    PUTLIT(&o, ",\"id2\":{\"global\":");
    put_hex_id(&o, ev->id);
    PUTLIT(&o, "}");
  }
  if (ev->id_scope) {
    PUTLIT(&o, ",\"scope\":");
    if ((rc = put_string(&o, ev->id_scope, TW_NUL, cfg, notes)) != 0)
      return rc;
  }
  if (has & TW_BP_ENCLOSING)
    PUTLIT(&o, ",\"bp\":\"e\"");
  if (has & TW_HAS_BIND_ID) {
    PUTLIT(&o, ",\"bind_id\":");
    put_hex_id(&o, ev->bind_id);
  }
  if (has & TW_FLOW_IN)
    PUTLIT(&o, ",\"flow_in\":true");
  if (has & TW_FLOW_OUT)
    PUTLIT(&o, ",\"flow_out\":true");
  if (ev->cname) {
    PUTLIT(&o, ",\"cname\":");
    if ((rc = put_string(&o, ev->cname, TW_NUL, cfg, notes)) != 0)
      return rc;
  }
  if (ev->nargs && (rc = put_args(&o, ev, rules, cfg, notes)) != 0)
    return rc;
  PUTLIT(&o, "}");

  *len = o.over ? o.need : (size_t)(o.p - buf);
  return o.over ? TW__ENOROOM : 0;
}
