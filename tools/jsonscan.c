/* jsonscan.c -- the general front end (see jsonscan.h)
 *
 * How it works: a state machine over the document's structure outside
 * the records (the top-level object's keys, values skipped or kept, the
 * events array's separators).  A record that lies within one chunk (most
 * of them) is taken in one pass of the project's one strict checker
 * (src/json.c, the writer's too: no recursion, strings sixteen bytes a
 * step with SSE2, eight without):
 * it is validated, its end found, its members reported and, when it
 * spreads over lines, its text without the whitespace between tokens
 * written out, all at once; it is yielded where it is when it needs no
 * change.  Otherwise (it goes on into the next chunk, or is invalid) a
 * scan that tracks only strings, escapes and nesting finds where it
 * ends, gathering it into a buffer of at most max_record bytes, and the
 * checker then takes the whole.
 */
#include "config.h"

#include "jsonscan.h"     /* json.h: the grammar */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_KEEP  16u      /* bytes of a key kept to compare */
#define DEPTH_MAX TW__JSON_DEPTH_MAX

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
  uint64_t key_off;        /* its offset (its opening quote) */
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

  int members_only;        /* records skipped, not checked nor held */
  uint64_t elements;       /* elements of the events array begun */
  uint64_t first_skip;     /* the first one that is no object (from 1) */
  char first_skip_c;       /* ... its first byte */

  tw__json_shapes *shapes; /* the records' shapes (NULL: none) */
  twt_member_fn on_member; /* each record's members, as checked */
  void *on_member_arg;

  /* The members kept. */
  char *mem;
  size_t mem_len, mem_cap, mem_start, mem_vstart;
  int mem_over;            /* the current member is not kept */
  uint64_t sk_end;         /* where the value skipped ended */
  struct twt_scan_big big[TWT_SCAN_BIG_MAX]; /* members too big to keep */
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
  s->shapes = tw__json_shapes_new();  /* (without: the checker alone) */
  return s;
}

void twt_scan_members_only(twt_scan *s)
{
  s->members_only = 1;
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
  tw__json_shapes_free(s->shapes);
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
/* The member being read is not kept: the members end before it. */
static void forget_member(twt_scan *s)
{
  s->mem_len = s->mem_start;
  s->info.members_len = s->mem_len;
}

/* The reading ends (cut or stopped) in state st: a member being read is
 * not kept. */
static void drop_partial_member(twt_scan *s, int st)
{
  if (st == ST_KEYSTR || st == ST_COLON || st == ST_VALUE ||
      (st == ST_SKIP && s->sk_keep))
    forget_member(s);
}

static int stop(twt_scan *s, uint64_t offset, int c, const char *want)
{
  char b[8];

  drop_partial_member(s, s->state);
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
    forget_member(s);
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

/* Make room for need bytes in the record buffer (its contents are not
 * kept).  0, or -1 when out of memory. */
static int buf_room(twt_scan *s, size_t need)
{
  char *q;

  if (need <= s->bcap)
    return 0;
  if (!(q = realloc(s->buf, need)))
    return -1;
  s->buf = q;
  s->bcap = need;
  return 0;
}

/* Check the record text[0..n) (prefix: the record begins text, and may
 * be followed by anything) in one pass: valid, where it ends, its
 * members for on_member, and its text without the whitespace between
 * its tokens in s->buf when a newline, CR or tab was among it.  Returns
 * 0 with *out, *outlen (and *end for prefix), or -1 with *bad. */
static int record_check(twt_scan *s, const char *text, size_t n, int prefix,
                        const char **out, size_t *outlen, size_t *end,
                        size_t *bad)
{
  struct tw__json_res res;
  unsigned members = s->on_member ? TW__JSON_MEMBERS : 0;
  int rc;

  if (text == s->buf) {
    /* Gathered into buf (a record over two chunks): compacting in place
     * would lose the text as read, so check first, and compact only
     * when it spreads over lines; then find its members again. */
    if (s->on_member)
      s->on_member(s->on_member_arg, NULL, 0, 0, 0);
    rc = tw__json_check_shaped(s->shapes, text, n, TWT_RECORD_DEPTH,
                               members, NULL, 0, s->on_member,
                               s->on_member_arg, &res);
    if (rc != 0) {
      *bad = res.bad;
      return -1;
    }
    *out = text;
    *outlen = *end = n;
    if (res.nl) {
      *outlen = twt_json_compact(s->buf, text, n);
      if (s->on_member) {
        s->on_member(s->on_member_arg, NULL, 0, 0, 0);
        (void)tw__json_check_full(*out, *outlen, TWT_RECORD_DEPTH,
                                  TW__JSON_MEMBERS, NULL, 0, s->on_member,
                                  s->on_member_arg, &res);
      }
    }
    return 0;
  }
  if (s->on_member)
    s->on_member(s->on_member_arg, NULL, 0, 0, 0);
  rc = tw__json_check_shaped(s->shapes, text, n, TWT_RECORD_DEPTH,
                             TW__JSON_COMPACT | members |
                             (prefix ? TW__JSON_PREFIX : 0), s->buf,
                             s->bcap, s->on_member, s->on_member_arg, &res);
  if (rc != 0) {
    *bad = res.bad;
    return -1;
  }
  *end = prefix ? res.end : n;
  if (res.nl) {
    *out = s->buf;
    *outlen = res.wlen;
  } else {
    *out = text;
    *outlen = *end;
  }
  if (res.overflow) {               /* many members: found again */
    s->on_member(s->on_member_arg, NULL, 0, 0, 0);
    (void)tw__json_check_full(*out, *outlen, TWT_RECORD_DEPTH,
                              TW__JSON_MEMBERS, NULL, 0, s->on_member,
                              s->on_member_arg, &res);
  }
  return 0;
}

/* Yield the record text[0..n) (checked), which began at offset. */
static void record_yield(twt_scan *s, const char *text, size_t n,
                         uint64_t offset, twt_scan_rec *rec)
{
  memset(rec, 0, sizeof *rec);
  rec->offset = offset;
  s->info.records++;
  rec->text = text;
  rec->len = n;
  s->state = ST_EVENTS;
  s->need_sep = 1;
}

/* A record's text is complete: check it, and yield it or what dropped
 * it. */
static int record_done(twt_scan *s, const char *text, size_t n,
                       twt_scan_rec *rec)
{
  const char *out;
  size_t outlen, end, bad;

  /* Compacted into buf: in place when the text is there already. */
  if (text != s->buf && buf_room(s, n) != 0)
    return fail(s, -ENOMEM, "out of memory");
  if (record_check(s, text, n, 0, &out, &outlen, &end, &bad) == 0) {
    record_yield(s, out, outlen, s->r_off, rec);
    return 0;
  }
  memset(rec, 0, sizeof *rec);
  rec->offset = s->r_off;
  if (s->info.invalid++ == 0)
    s->info.first_invalid = s->r_off;
  s->info.invalid_bytes += n;
  s->info.strict = 0;
  rec->dropped = 1;
  rec->len = n;
  s->state = ST_EVENTS;
  s->need_sep = 1;
  return 0;
}

/* A record begins at p[0] and the text read goes on to p[n]: if the
 * record ends there and is valid, yield it at once (one pass: checked,
 * its end found, compacted); 1 and its length in *used.  0 otherwise
 * (it goes on past p[n], is invalid, or longer than max_record): the
 * byte-by-byte path then takes it. */
static int record_fast(twt_scan *s, const char *p, size_t n, uint64_t at,
                       twt_scan_rec *rec, size_t *used)
{
  const char *out;
  size_t outlen, end, bad;

  if (n > s->max_record)
    n = s->max_record;
  if (buf_room(s, n) != 0 ||
      record_check(s, p, n, 1, &out, &outlen, &end, &bad) != 0)
    return 0;
  record_yield(s, out, outlen, at, rec);
  *used = end;
  return 1;
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
      i += tw__json_to_quote(u + i, u + n);
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
    /* Too big to keep: where it is, for a command to copy it from the
     * file (twt_jstream checks it as it goes). */
    s->info.strict = 0;
    if (s->info.nbig < TWT_SCAN_BIG_MAX) {
      s->big[s->info.nbig].off = s->key_off;
      s->big[s->info.nbig].len = s->sk_end - s->key_off;
      s->info.nbig++;
      s->info.big = s->big;
    } else {
      s->info.members_dropped++;
    }
    return 0;
  }
  /* The key too: a member kept is written back as it is, between the
   * comma and the colon the scanner added. */
  if (twt_json_check(s->mem + s->mem_start + 1,
                     s->mem_vstart - 1 - (s->mem_start + 1), 0, NULL) != 0) {
    forget_member(s);
    return stop(s, s->key_off, '"', "a valid JSON string (a key)");
  }
  if (twt_json_check(s->mem + s->mem_vstart, s->mem_len - s->mem_vstart,
                     DEPTH_MAX, NULL) != 0) {
    forget_member(s);
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
      s->key_off = at;
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
      if (s->is_events)
        forget_member(s);           /* not a member kept */
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
        s->info.members_before = s->mem_len;
        s->info.events_at = at;
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
      if (is_ws(c)) {               /* the run at once (pretty-printed:
                                       a newline and indentation) */
        for (i++; i < n && is_ws(p[i]); i++)
          continue;
        break;
      }
      if (c == ']') {
        if (!s->first && !s->need_sep) {  /* a trailing comma */
          s->info.stray_commas++;
          s->info.strict = 0;
        }
        s->info.events_end = at;
        s->info.events_ended = 1;
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
      s->elements++;
      if (c == '{') {
        size_t used;
        if (!s->members_only &&
            record_fast(s, p + i, n - i, at, rec, &used)) {
          *ready = 1;
          i += used;
          s->off += i;
          return (ptrdiff_t)i;
        }
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
      if (s->info.skipped++ == 0) {
        s->first_skip = s->elements;
        s->first_skip_c = c;
      }
      s->info.strict = 0;           /* not checked */
      break;
    case ST_RECORD: {
      size_t j = record_scan(s, p, i, n, &over);
      if (!over) {
        i = n;
        break;
      }
      if (s->members_only) {        /* only where it ends matters */
        s->state = ST_EVENTS;
        s->need_sep = 1;
        s->info.records++;
        i = j;
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
      s->sk_end = s->off + j;
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
  if (s->state == ST_RECORD && !s->members_only) {
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
    drop_partial_member(s, s->state);
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
  if (in->records == 0 && in->invalid == 0 && in->skipped > 0) {
    char c = s->first_skip_c;
    return fail(s, TWT_SCAN_ENOTTRACE, "not a trace: element %" PRIu64
                " is %s, not an event object (none of its %" PRIu64
                " elements is)", s->first_skip,
                c == '[' ? "an array" : c == '"' ? "a string" :
                c == 't' || c == 'f' ? "a boolean" : c == 'n' ? "null" :
                "a number", in->skipped);
  }
  return 0;
}
