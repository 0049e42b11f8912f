/* jsonscan.c -- the general front end (see jsonscan.h)
 *
 * How it works: a state machine over the document's structure outside
 * the records (the top-level object's keys, values skipped or kept, the
 * events array's separators), and inside a record a scan that tracks
 * only strings, escapes and nesting, driven by a table of the bytes that
 * matter, to find where the record ends.  The record's text is then
 * checked strictly (twt_json_check, no recursion).  A record that lies
 * within one chunk is yielded where it is, without a copy; one that
 * spans chunks is gathered into a buffer of at most max_record bytes.
 */
#include "config.h"

#include "jsonscan.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEPTH_MAX 512u     /* the deepest twt_json_check can check */

/* Eight bytes at a time (SWAR): whether a word holds a byte that ends a
 * run of plain string bytes. */
#define ONES  UINT64_C(0x0101010101010101)
#define HIGHS UINT64_C(0x8080808080808080)
#define HAS_ZERO(v) (((v) - ONES) & ~(v) & HIGHS)
#define HAS_BYTE(v, b) HAS_ZERO((v) ^ (ONES * (uint64_t)(b)))

/* How many bytes from p (up to e) come before a '"' or '\\', eight at
 * a time: the lowest bit of each mask is exact (a borrow only makes
 * false hits above a true one), and words are read little-endian. */
static inline size_t to_quote(const unsigned char *p, const unsigned char *e)
{
  const unsigned char *s = p;

  while (e - p >= 8) {
    uint64_t w, m;
    memcpy(&w, p, 8);
    if ((m = HAS_BYTE(w, '"') | HAS_BYTE(w, '\\')) != 0)
      return (size_t)(p - s) + (size_t)(__builtin_ctzll(m) >> 3);
    p += 8;
  }
  while (p < e && *p != '"' && *p != '\\')
    p++;
  return (size_t)(p - s);
}

/* The same for every byte that needs a closer look in a strict string:
 * '"', '\\', a control byte, or one of 0x80 and above (UTF-8). */
static inline size_t to_special(const unsigned char *p,
                                const unsigned char *e)
{
  const unsigned char *s = p;

  while (e - p >= 8) {
    uint64_t w, m;
    memcpy(&w, p, 8);
    m = (HAS_BYTE(w, '"') | HAS_BYTE(w, '\\') |
         ((w - ONES * 0x20) & ~w) | w) & HIGHS;
    if (m)
      return (size_t)(p - s) + (size_t)(__builtin_ctzll(m) >> 3);
    p += 8;
  }
  while (p < e && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\')
    p++;
  return (size_t)(p - s);
}
#define KEY_KEEP  16u      /* bytes of a key kept to compare */

/* ===================================================== the checker */

/* The length of the UTF-8 sequence at p[0..n) (its first byte >= 0x80),
 * or 0 if it is not a valid one (overlong, surrogate, past U+10FFFF,
 * cut). */
static size_t utf8_len(const unsigned char *p, size_t n)
{
  unsigned c = p[0];

  if (c >= 0xc2 && c <= 0xdf)
    return n >= 2 && (p[1] & 0xc0) == 0x80 ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    if (n < 3 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
      return 0;
    if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0))
      return 0;                     /* overlong; a surrogate */
    return 3;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    if (n < 4 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 ||
        (p[3] & 0xc0) != 0x80)
      return 0;
    if ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90))
      return 0;                     /* overlong; past U+10FFFF */
    return 4;
  }
  return 0;
}

static int hex4(const unsigned char *p, const unsigned char *e, unsigned *v)
{
  unsigned x = 0;

  if (e - p < 4)
    return -1;
  for (int i = 0; i < 4; i++) {
    unsigned c = p[i];
    if (c >= '0' && c <= '9')
      c -= '0';
    else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
      c = (c | 0x20) - 'a' + 10;
    else
      return -1;
    x = x << 4 | c;
  }
  *v = x;
  return 0;
}

/* The string at *pp (its opening quote): past its closing quote, or
 * NULL. */
static const unsigned char *check_string(const unsigned char *p,
                                         const unsigned char *e)
{
  for (p++; p < e;) {
    unsigned c;

    p += to_special(p, e);
    if (p >= e)
      break;
    c = *p;
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      p++;
      continue;
    }
    if (c == '"')
      return p + 1;
    if (c < 0x20)
      return NULL;
    if (c == '\\') {
      unsigned v, lo;
      if (++p >= e)
        return NULL;
      c = *p++;
      if (c == 'u') {
        if (hex4(p, e, &v))
          return NULL;
        p += 4;
        if (v >= 0xdc00 && v <= 0xdfff)
          return NULL;              /* a lone low surrogate */
        if (v >= 0xd800 && v <= 0xdbff) {
          if (e - p < 6 || p[0] != '\\' || p[1] != 'u' ||
              hex4(p + 2, e, &lo) || lo < 0xdc00 || lo > 0xdfff)
            return NULL;
          p += 6;
        }
      } else if (!memchr("\"\\/bfnrt", (int)c, 8)) {
        return NULL;
      }
      continue;
    }
    {
      size_t k = utf8_len(p, (size_t)(e - p));
      if (!k)
        return NULL;
      p += k;
    }
  }
  return NULL;
}

static const unsigned char *check_number(const unsigned char *p,
                                         const unsigned char *e)
{
  const unsigned char *s;

  if (p < e && *p == '-')
    p++;
  if (p >= e)
    return NULL;
  if (*p == '0') {
    p++;
  } else {
    for (s = p; p < e && *p >= '0' && *p <= '9'; p++)
      continue;
    if (p == s)
      return NULL;
  }
  if (p < e && *p == '.') {
    for (s = ++p; p < e && *p >= '0' && *p <= '9'; p++)
      continue;
    if (p == s)
      return NULL;
  }
  if (p < e && (*p == 'e' || *p == 'E')) {
    p++;
    if (p < e && (*p == '+' || *p == '-'))
      p++;
    for (s = p; p < e && *p >= '0' && *p <= '9'; p++)
      continue;
    if (p == s)
      return NULL;
  }
  return p;
}

static inline const unsigned char *skip_ws(const unsigned char *p,
                                           const unsigned char *e)
{
  while (p < e && *p <= ' ' &&
         (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
    p++;
  return p;
}

/* The checker; always inlined, so that without fn (a constant NULL) the
 * member reports cost nothing. */
static inline __attribute__((always_inline))
int check(const char *json, size_t len, unsigned max_depth, size_t *bad,
          twt_member_fn fn, void *arg)
{
  const unsigned char *s = (const unsigned char *)json, *p = s,
                      *e = s + len, *key = NULL, *kend = NULL, *val = NULL;
  uint64_t objs[DEPTH_MAX / 64];  /* bit d: level d+1 is an object */
  unsigned depth = 0;

  if (max_depth > DEPTH_MAX)
    max_depth = DEPTH_MAX;
  p = skip_ws(p, e);
value:
  if (p >= e)
    goto fail;
  switch (*p) {
  case '{':
  case '[': {
    int obj = *p == '{';
    if (depth >= max_depth)
      goto fail;
    if (obj)
      objs[depth / 64] |= UINT64_C(1) << (depth % 64);
    else
      objs[depth / 64] &= ~(UINT64_C(1) << (depth % 64));
    depth++;
    p = skip_ws(p + 1, e);
    if (p < e && *p == (obj ? '}' : ']')) {
      p++;
      depth--;
      goto after;
    }
    if (obj)
      goto key;
    goto value;
  }
  case '"':
    p = check_string(p, e);
    break;
  case 't':
    p = e - p >= 4 && memcmp(p, "true", 4) == 0 ? p + 4 : NULL;
    break;
  case 'f':
    p = e - p >= 5 && memcmp(p, "false", 5) == 0 ? p + 5 : NULL;
    break;
  case 'n':
    p = e - p >= 4 && memcmp(p, "null", 4) == 0 ? p + 4 : NULL;
    break;
  default:
    p = check_number(p, e);
    break;
  }
  if (!p)
    goto fail_unknown;
after:
  if (val && depth == 1) {          /* a member of the top object ended */
    fn(arg, (const char *)key + 1, (size_t)(kend - key) - 2,
       (size_t)(val - s), (size_t)(p - val));
    val = NULL;
  }
  p = skip_ws(p, e);
  if (depth == 0) {
    if (p != e)
      goto fail;
    return 0;
  }
  if (p >= e)
    goto fail;
  {
    int obj = (objs[(depth - 1) / 64] >> ((depth - 1) % 64)) & 1;
    if (*p == ',') {
      p = skip_ws(p + 1, e);
      if (obj)
        goto key;
      goto value;
    }
    if (*p != (obj ? '}' : ']'))
      goto fail;
    p++;
    depth--;
    goto after;
  }
key:
  if (fn && depth == 1)
    key = p;
  if (p >= e || *p != '"' || !(p = check_string(p, e)))
    goto fail_unknown;
  if (fn && depth == 1)
    kend = p;
  p = skip_ws(p, e);
  if (p >= e || *p != ':')
    goto fail;
  p = skip_ws(p + 1, e);
  if (fn && depth == 1)
    val = p;
  goto value;
fail_unknown:
  if (bad)
    *bad = len;                     /* somewhere in the last token */
  return -1;
fail:
  if (bad)
    *bad = (size_t)(p - s);
  return -1;
}

int twt_json_check(const char *json, size_t len, unsigned max_depth,
                   size_t *bad)
{
  return check(json, len, max_depth, bad, NULL, NULL);
}

int twt_json_check_ex(const char *json, size_t len, unsigned max_depth,
                      size_t *bad, twt_member_fn fn, void *arg)
{
  if (!fn)
    return check(json, len, max_depth, bad, NULL, NULL);
  return check(json, len, max_depth, bad, fn, arg);
}

/* ===================================================== the scanner */

enum state {
  ST_START,                /* before the document: BOM, whitespace */
  ST_BOM,                  /* inside a byte-order mark */
  ST_KEY,                  /* object: a key (or "}") expected */
  ST_KEYSTR,               /* ... inside the key */
  ST_COLON,                /* ... ":" expected */
  ST_VALUE,                /* ... the value expected */
  ST_OBJNEXT,              /* ... "," or "}" expected */
  ST_EVENTS,               /* the events array: an element, ",", "]" */
  ST_RECORD,               /* inside a record */
  ST_SKIP,                 /* inside a value skipped (or kept) */
  ST_END,                  /* after the document */
  ST_STOP                  /* after what made no sense: ignored */
};

struct twt_scan {
  enum state state;
  uint64_t off;            /* offset of the current feed's first byte */
  size_t max_record, max_members;
  struct twt_scan_info info;
  int err;
  char msg[200];

  int first;               /* no member / element yet in the container */
  int need_sep;            /* events: an element was read, "," expected */
  unsigned bom_i;          /* bytes of the BOM seen */
  uint64_t after_end;      /* whitespace bytes after the document */
  int after_nl;            /* ... of which newlines */

  /* The key being read. */
  char key[KEY_KEEP];
  size_t key_len;
  int key_esc, key_odd;    /* in an escape; escaped or too long */
  int is_events;

  /* A value skipped: strings, escapes, nesting counted. */
  uint64_t sk_depth;
  int sk_str, sk_esc, sk_scalar;
  int sk_keep;             /* keep it in the members */
  enum state sk_ret;       /* where to go after it */
  uint64_t sk_off;         /* its offset */

  /* The record being scanned. */
  uint64_t r_depth;
  int r_str, r_esc, r_ws;
  uint64_t r_off;
  size_t r_start;          /* in the current feed, when not yet copied */
  int r_inbuf;             /* its start is in buf */
  char *buf;
  size_t blen, bcap;

  twt_member_fn on_member; /* each record's members, as checked */
  void *on_member_arg;

  /* The members kept. */
  char *mem;
  size_t mem_len, mem_cap, mem_start, mem_vstart;
  int mem_over;            /* the current member is not kept */
};

/* Bytes that matter in a record: outside strings (1) and inside (2). */
static unsigned char cls[256];
static int cls_ready;

static void init_cls(void)
{
  if (cls_ready)
    return;
  cls['"'] = 1 | 2;
  cls['\\'] = 2;
  cls['{'] = cls['}'] = cls['['] = cls[']'] = 1;
  cls['\n'] = cls['\r'] = cls['\t'] = 1;
  cls_ready = 1;
}

twt_scan *twt_scan_new(size_t max_record, size_t max_members)
{
  twt_scan *s = calloc(1, sizeof *s);

  if (!s)
    return NULL;
  init_cls();
  s->max_record = max_record;
  s->max_members = max_members;
  s->state = ST_START;
  s->info.strict = 1;
  return s;
}

void twt_scan_on_member(twt_scan *s, twt_member_fn fn, void *arg)
{
  s->on_member = fn;
  s->on_member_arg = arg;
}

void twt_scan_free(twt_scan *s)
{
  if (!s)
    return;
  free(s->buf);
  free(s->mem);
  free(s);
}

const struct twt_scan_info *twt_scan_info(const twt_scan *s)
{
  return &s->info;
}

const char *twt_scan_error(const twt_scan *s)
{
  return s->msg;
}

__attribute__((format(printf, 3, 4)))
static int fail(twt_scan *s, int rc, const char *fmt, ...)
{
  va_list ap;

  if (s->err)
    return s->err;
  s->err = rc;
  va_start(ap, fmt);
  vsnprintf(s->msg, sizeof s->msg, fmt, ap);
  va_end(ap);
  return rc;
}

/* A printable form of byte c, for messages. */
static const char *show(int c, char *out)
{
  if (c > 0x20 && c < 0x7f && c != '\'')
    snprintf(out, 8, "'%c'", c);
  else
    snprintf(out, 8, "0x%02x", (unsigned)(c & 0xff));
  return out;
}

/* The text stopped making sense at offset, where want was expected.
 * Before any record that is an error: not a trace.  After, the rest is
 * ignored like a cut.  Returns 0 or the error. */
static int stop(twt_scan *s, uint64_t offset, int c, const char *want)
{
  char b[8];

  s->info.strict = 0;
  if (s->info.records == 0)
    return fail(s, TWT_SCAN_ENOTTRACE, "not a trace: byte %" PRIu64
                ": %s expected, found %s", offset, want,
                c < 0 ? "the end" : show(c, b));
  s->info.stopped = 1;
  s->info.stop_offset = offset;
  snprintf(s->info.stop_why, sizeof s->info.stop_why, "%s expected, "
           "found %s", want, c < 0 ? "the end" : show(c, b));
  s->state = ST_STOP;
  return 0;
}

/* Append p[0..n) to the members kept, unless over max_members (then the
 * member is dropped). */
static int mem_add(twt_scan *s, const char *p, size_t n)
{
  if (s->mem_over || n == 0)
    return 0;
  if (s->mem_len + n > s->max_members) {
    s->mem_over = 1;
    s->mem_len = s->mem_start;
    return 0;
  }
  if (s->mem_len + n > s->mem_cap) {
    size_t cap = s->mem_cap ? s->mem_cap : 1024;
    char *q;
    while (cap < s->mem_len + n)
      cap *= 2;
    if (cap > s->max_members)
      cap = s->max_members;
    if (!(q = realloc(s->mem, cap)))
      return fail(s, -ENOMEM, "out of memory");
    s->mem = q;
    s->mem_cap = cap;
  }
  memcpy(s->mem + s->mem_len, p, n);
  s->mem_len += n;
  s->info.members = s->mem;
  s->info.members_len = s->mem_len;
  return 0;
}

/* Append p[0..n) to the record buffer. */
static int buf_add(twt_scan *s, const char *p, size_t n)
{
  if (n > s->max_record - s->blen)
    return fail(s, TWT_SCAN_ETOOBIG, "byte %" PRIu64 ": a record of more "
                "than %zu bytes; raise --max-line to read it", s->r_off,
                s->max_record);
  if (s->blen + n > s->bcap) {
    size_t cap = s->bcap ? s->bcap : 4096;
    char *q;
    while (cap < s->blen + n)
      cap = cap > SIZE_MAX / 2 ? s->blen + n : cap * 2;
    if (!(q = realloc(s->buf, cap)))
      return fail(s, -ENOMEM, "out of memory for a record of %zu bytes",
                  s->blen + n);
    s->buf = q;
    s->bcap = cap;
  }
  memcpy(s->buf + s->blen, p, n);
  s->blen += n;
  return 0;
}

size_t twt_json_compact(char *d, const char *text, size_t n)
{
  const unsigned char *u = (const unsigned char *)text;
  size_t w = 0, i = 0;

  while (i < n) {
    char c = text[i];
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
      i++;
      continue;
    }
    if (c != '"') {
      d[w++] = c;
      i++;
      continue;
    }
    /* A string: copied whole, its end found 8 bytes at a time. */
    {
      size_t j = i + 1;
      for (;;) {
        j += to_quote(u + j, u + n);
        if (j >= n)
          break;
        if (text[j] == '"') {
          j++;
          break;
        }
        j += 2;                     /* an escape and the byte escaped */
      }
      if (j > n)
        j = n;
      memmove(d + w, text + i, j - i);
      w += j - i;
      i = j;
    }
  }
  return w;
}

/* A record's text is complete: check it, and yield it or what dropped
 * it. */
static int record_done(twt_scan *s, const char *text, size_t n,
                       twt_scan_rec *rec)
{
  if (s->r_ws) {
    if (!s->r_inbuf) {              /* make room, then compact into it */
      s->blen = 0;
      if (n > s->bcap) {
        char *q = realloc(s->buf, n);
        if (!q)
          return fail(s, -ENOMEM, "out of memory");
        s->buf = q;
        s->bcap = n;
      }
    }
    n = twt_json_compact(s->buf, text, n);
    text = s->buf;
  }
  memset(rec, 0, sizeof *rec);
  rec->offset = s->r_off;
  if (s->on_member)
    s->on_member(s->on_member_arg, NULL, 0, 0, 0);
  if (twt_json_check_ex(text, n, TWT_RECORD_DEPTH, NULL, s->on_member,
                        s->on_member_arg) != 0) {
    if (s->info.invalid++ == 0)
      s->info.first_invalid = s->r_off;
    s->info.invalid_bytes += n;
    s->info.strict = 0;
    rec->dropped = 1;
    rec->len = n;
  } else {
    s->info.records++;
    rec->text = text;
    rec->len = n;
  }
  s->state = ST_EVENTS;
  s->need_sep = 1;
  return 0;
}

/* Scan inside a record from p[i]; returns the new i (n: not over). */
static size_t record_scan(twt_scan *s, const char *p, size_t i, size_t n,
                          int *over)
{
  const unsigned char *u = (const unsigned char *)p;

  *over = 0;
  while (i < n) {
    if (s->r_esc) {
      s->r_esc = 0;
      i++;
      continue;
    }
    if (s->r_str) {
      i += to_quote(u + i, u + n);
      if (i == n)
        break;
      if (u[i] == '"')
        s->r_str = 0;
      else
        s->r_esc = 1;
      i++;
      continue;
    }
    while (i < n && !(cls[u[i]] & 1))
      i++;
    if (i == n)
      break;
    switch (u[i++]) {
    case '"':
      s->r_str = 1;
      break;
    case '{':
    case '[':
      s->r_depth++;
      break;
    case '}':
    case ']':
      if (--s->r_depth == 0) {
        *over = 1;
        return i;
      }
      break;
    default:                        /* newline, CR, tab */
      s->r_ws = 1;
      break;
    }
  }
  return i;
}

/* Scan a skipped value from p[i]; returns the new i; *over when it
 * ended (the byte that ends a number or literal is not used). */
static size_t skip_scan(twt_scan *s, const char *p, size_t i, size_t n,
                        int *over)
{
  *over = 0;
  while (i < n) {
    char c = p[i];
    if (s->sk_str) {
      i++;
      if (s->sk_esc)
        s->sk_esc = 0;
      else if (c == '\\')
        s->sk_esc = 1;
      else if (c == '"') {
        s->sk_str = 0;
        if (s->sk_depth == 0) {
          *over = 1;
          return i;
        }
      }
      continue;
    }
    if (s->sk_scalar) {
      if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
          (c >= 'A' && c <= 'Z') || c == '.' || c == '+' || c == '-') {
        i++;
        continue;
      }
      *over = 1;
      return i;
    }
    i++;
    if (c == '"')
      s->sk_str = 1;
    else if (c == '{' || c == '[')
      s->sk_depth++;
    else if ((c == '}' || c == ']') && --s->sk_depth == 0) {
      *over = 1;
      return i;
    }
  }
  return i;
}

/* Begin skipping the value that begins with c.  0, or not a value. */
static int skip_begin(twt_scan *s, char c, uint64_t offset, int keep,
                      enum state ret)
{
  s->sk_depth = 0;                  /* the scan takes the first byte */
  s->sk_str = s->sk_esc = s->sk_scalar = 0;
  if (c == '"' || c == '{' || c == '[')
    ;
  else if (c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' ||
           c == 'n')
    s->sk_scalar = 1;
  else
    return -1;
  s->sk_keep = keep;
  s->sk_ret = ret;
  s->sk_off = offset;
  s->state = ST_SKIP;
  return 0;
}

static int is_ws(char c)
{
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* The document's last bracket was read. */
static void doc_done(twt_scan *s)
{
  s->info.done = 1;
  s->state = ST_END;
}

/* A skipped value ended: a member kept is checked. */
static int skip_done(twt_scan *s)
{
  s->state = s->sk_ret;
  if (!s->sk_keep)
    return 0;
  if (s->mem_over) {
    s->info.members_dropped++;
    s->info.strict = 0;
    return 0;
  }
  if (twt_json_check(s->mem + s->mem_vstart, s->mem_len - s->mem_vstart,
                     DEPTH_MAX, NULL) != 0) {
    s->mem_len = s->mem_start;
    s->info.members_len = s->mem_len;
    return stop(s, s->sk_off, s->mem[s->mem_vstart] & 0xff,
                "a valid JSON value");
  }
  return 0;
}

ptrdiff_t twt_scan_feed(twt_scan *s, const char *p, size_t n,
                        twt_scan_rec *rec, int *ready)
{
  static const unsigned char bom[3] = { 0xef, 0xbb, 0xbf };
  size_t i = 0;
  int rc, over;

  *ready = 0;
  if (s->err)
    return s->err;
  if (s->state == ST_RECORD) {      /* a record continued from before */
    s->r_start = 0;
  }
  while (i < n) {
    char c = p[i];
    uint64_t at = s->off + i;

    switch (s->state) {
    case ST_START:
      if (at == 0 && (unsigned char)c == bom[0]) {
        s->state = ST_BOM;
        s->bom_i = 1;
        s->info.bom = 1;
        s->info.strict = 0;
        i++;
        break;
      }
      if (is_ws(c)) {
        i++;
        break;
      }
      if (c == '[') {
        s->info.events_found = 1;
        s->state = ST_EVENTS;
        s->first = 1;
        s->need_sep = 0;
      } else if (c == '{') {
        s->info.object_form = 1;
        s->state = ST_KEY;
        s->first = 1;
      } else {
        rc = fail(s, TWT_SCAN_ENOTTRACE, "not a trace: byte %" PRIu64 ": "
                  "a JSON array of events or an object with traceEvents "
                  "expected, found %s", at, show(c, (char[8]){ 0 }));
        return rc;
      }
      i++;
      break;
    case ST_BOM:
      if ((unsigned char)c != bom[s->bom_i])
        return fail(s, TWT_SCAN_ENOTTRACE, "not a trace: byte %" PRIu64
                    ": not UTF-8 text", at);
      if (++s->bom_i == 3)
        s->state = ST_START;
      i++;
      break;
    case ST_KEY:
      if (is_ws(c)) {
        i++;
        break;
      }
      if (c == '}') {
        if (!s->first) {
          s->info.stray_commas++;
          s->info.strict = 0;
        }
        doc_done(s);
        i++;
        break;
      }
      if (c != '"') {
        if ((rc = stop(s, at, c, "a key")) != 0)
          return rc;
        break;
      }
      s->key_len = 0;
      s->key_esc = s->key_odd = 0;
      s->mem_start = s->mem_len;
      s->mem_over = 0;
      if ((rc = mem_add(s, ",\"", 2)) != 0)
        return rc;
      s->state = ST_KEYSTR;
      i++;
      break;
    case ST_KEYSTR: {
      size_t j = i;
      for (; j < n; j++) {
        char k = p[j];
        if (s->key_esc) {
          s->key_esc = 0;
          continue;
        }
        if (k == '\\') {
          s->key_esc = s->key_odd = 1;
          continue;
        }
        if (k == '"')
          break;
        if (s->key_len < KEY_KEEP)
          s->key[s->key_len++] = k;
        else
          s->key_odd = 1;
      }
      if ((rc = mem_add(s, p + i, j < n ? j + 1 - i : j - i)) != 0)
        return rc;
      if (j == n) {
        i = n;
        break;
      }
      i = j + 1;
      s->is_events = !s->key_odd && s->key_len == 11 &&
                     memcmp(s->key, "traceEvents", 11) == 0;
      if (s->is_events) {
        s->mem_len = s->mem_start;  /* not a member kept */
        s->info.members_len = s->mem_len;
      }
      s->state = ST_COLON;
      break;
    }
    case ST_COLON:
      if (is_ws(c)) {
        i++;
        break;
      }
      if (c != ':') {
        if ((rc = stop(s, at, c, "':'")) != 0)
          return rc;
        break;
      }
      if (!s->is_events && (rc = mem_add(s, ":", 1)) != 0)
        return rc;
      s->mem_vstart = s->mem_len;
      s->state = ST_VALUE;
      i++;
      break;
    case ST_VALUE:
      if (is_ws(c)) {
        i++;
        break;
      }
      if (s->is_events) {
        if (c != '[') {
          if ((rc = stop(s, at, c, "the array of traceEvents")) != 0)
            return rc;
          break;
        }
        s->info.events_found = 1;
        s->state = ST_EVENTS;
        s->first = 1;
        s->need_sep = 0;
        i++;
        break;
      }
      if (skip_begin(s, c, at, 1, ST_OBJNEXT) != 0) {
        if ((rc = stop(s, at, c, "a value")) != 0)
          return rc;
        break;
      }
      break;                        /* the first byte is taken in ST_SKIP */
    case ST_OBJNEXT:
      if (is_ws(c)) {
        i++;
        break;
      }
      if (c == ',') {
        s->first = 0;
        s->state = ST_KEY;
      } else if (c == '}') {
        doc_done(s);
      } else if ((rc = stop(s, at, c, "',' or '}'")) != 0) {
        return rc;
      } else {
        break;
      }
      i++;
      break;
    case ST_EVENTS:
      if (is_ws(c)) {
        i++;
        break;
      }
      if (c == ']') {
        if (!s->first && !s->need_sep) {  /* a trailing comma */
          s->info.stray_commas++;
          s->info.strict = 0;
        }
        if (s->info.object_form) {
          s->state = ST_OBJNEXT;
        } else {
          doc_done(s);
        }
        i++;
        break;
      }
      if (c == ',') {
        if (!s->need_sep) {
          s->info.stray_commas++;
          s->info.strict = 0;
        }
        s->need_sep = 0;
        s->first = 0;
        i++;
        break;
      }
      if (s->need_sep)
        s->info.strict = 0;         /* no comma between two elements */
      s->first = 0;
      if (c == '{') {
        s->state = ST_RECORD;
        s->r_depth = 1;
        s->r_str = s->r_esc = s->r_ws = 0;
        s->r_off = at;
        s->r_start = i;
        s->r_inbuf = 0;
        s->blen = 0;
        i++;
        break;
      }
      if (skip_begin(s, c, at, 0, ST_EVENTS) != 0) {
        if ((rc = stop(s, at, c, "an event (an object)")) != 0)
          return rc;
        break;
      }
      s->info.skipped++;
      s->info.strict = 0;           /* not checked */
      break;
    case ST_RECORD: {
      size_t j = record_scan(s, p, i, n, &over);
      if (!over) {
        i = n;
        break;
      }
      if (s->r_inbuf) {
        if ((rc = buf_add(s, p, j)) != 0)
          return rc;
        rc = record_done(s, s->buf, s->blen, rec);
      } else {
        if (j - s->r_start > s->max_record)
          return fail(s, TWT_SCAN_ETOOBIG, "byte %" PRIu64 ": a record "
                      "of more than %zu bytes; raise --max-line to read "
                      "it", s->r_off, s->max_record);
        rc = record_done(s, p + s->r_start, j - s->r_start, rec);
      }
      if (rc != 0)
        return rc;
      *ready = 1;
      s->off += j;
      return (ptrdiff_t)j;
    }
    case ST_SKIP: {
      size_t j = skip_scan(s, p, i, n, &over);
      if (s->sk_keep && (rc = mem_add(s, p + i, j - i)) != 0)
        return rc;
      i = j;
      if (over && (rc = skip_done(s)) != 0)
        return rc;
      break;
    }
    case ST_END:
      if (is_ws(c)) {
        s->after_end++;
        s->after_nl += c == '\n';
        if (s->after_end > 1 || c != '\n')
          s->info.strict = 0;
        i++;
        break;
      }
      s->info.strict = 0;           /* bytes after the document */
      s->info.stopped = 1;
      s->info.stop_offset = at;
      snprintf(s->info.stop_why, sizeof s->info.stop_why,
               "bytes after the end of the document");
      s->state = ST_STOP;
      break;
    case ST_STOP:
      i = n;
      break;
    }
  }
  /* The feed ends inside a record: keep what it holds. */
  if (s->state == ST_RECORD) {
    size_t from = s->r_inbuf ? 0 : s->r_start;
    if ((rc = buf_add(s, p + from, n - from)) != 0)
      return rc;
    s->r_inbuf = 1;
  }
  s->off += n;
  return (ptrdiff_t)n;
}

int twt_scan_end(twt_scan *s)
{
  struct twt_scan_info *in = &s->info;

  if (s->err)
    return s->err;
  switch (s->state) {
  case ST_START:
  case ST_BOM:
    return fail(s, TWT_SCAN_ENOTTRACE, "%s: not a trace",
                s->off ? "only whitespace" : "empty");
  case ST_END:
    break;
  case ST_STOP:
    break;
  case ST_SKIP:
    if (s->sk_scalar && s->sk_ret == ST_EVENTS) {
      /* A number ends with the data: still cut. */
    }
    /* fall through */
  default:
    if (s->state == ST_KEYSTR || s->state == ST_COLON ||
        s->state == ST_VALUE || (s->state == ST_SKIP && s->sk_keep)) {
      s->mem_len = s->mem_start;    /* a member cut: not kept */
      in->members_len = s->mem_len;
    }
    if (s->state == ST_RECORD) {
      if (in->invalid++ == 0)
        in->first_invalid = s->r_off;
      in->invalid_bytes += s->blen;
    }
    in->cut = 1;
    in->strict = 0;
    in->stop_offset = s->off;
    snprintf(in->stop_why, sizeof in->stop_why, "the data ended inside "
             "the document");
    break;
  }
  if (in->object_form && !in->events_found)
    return fail(s, TWT_SCAN_ENOTTRACE, "not a trace: a JSON object "
                "without traceEvents%s (byte %" PRIu64 ")",
                in->cut ? ", cut before it" : "", s->off);
  if (in->records == 0 && in->invalid == 0 && in->skipped > 0)
    return fail(s, TWT_SCAN_ENOTTRACE, "not a trace: its %" PRIu64
                " events are not objects", in->skipped);
  return 0;
}
