/* jsoncheck.c -- strict JSON checking and reading, for the tests only
 *
 * jc_parse makes three linear passes:
 *  1. validate(): a hand-written checker of the whole RFC 8259 grammar,
 *     UTF-8 and \u surrogates included.  jsmn alone is not enough: even
 *     with JSMN_STRICT it accepts "[1,,2]", "{"a":1,}", "[tru]", several
 *     top-level values and raw control bytes in strings.  It also counts
 *     the tokens jsmn will make (one per value and one per key), so the
 *     token array is allocated once, at its exact size.
 *  2. jsmn tokenizes the validated text into that array.  Its count must
 *     match ours: a disagreement is reported rather than trusted.
 *  3. link_siblings() gives every value the index of the next one in its
 *     container, so walks are O(1) a step; decode_strings() resolves the
 *     escapes of every string once, into a buffer owned by the document.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* strtod_l (newlocale is POSIX 2008) */
#endif

#include "jsoncheck.h"

#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Static jsmn, strict, with parent links: without them jsmn searches back
 * over all earlier tokens at every closing bracket, which is O(n^2) on a
 * big array of objects; with them the search is bounded by the depth. */
#define JSMN_STATIC
#define JSMN_STRICT
#define JSMN_PARENT_LINKS
#include <jsmn.h>

/* jsmn keeps offsets in int: the longest input we take. */
#define JC_MAX_LEN ((size_t)INT_MAX - 1)

struct jc_doc {
  char *text;             /* copy of the input, NUL-terminated */
  size_t len;             /* input length, without that NUL */
  jsmntok_t *tok;         /* jsmn's tokens, in document order; for a string
                             (value or key) size holds its decoded length */
  int *next;              /* per value token: the next value in the same
                             container, or -1 (keys: -1) */
  int ntok;               /* number of tokens */
  char *dec;              /* decoded strings: token t's at dec + t.start */
  locale_t c_locale;      /* the "C" locale, for jc_num */
};

/* ------------------------------------------------------------ errors */

/* Format a message into err[0..errsize) if there is room; returns -1 so
 * callers can "return set_err(...)". */
static int set_err(char *err, size_t errsize, const char *fmt, ...)
{
  va_list ap;
  if (err == NULL || errsize == 0)
    return -1;
  va_start(ap, fmt);
  vsnprintf(err, errsize, fmt, ap);
  va_end(ap);
  return -1;
}

/* Describe byte c for a message into buf: 'x' when printable, else 0xNN;
 * returns buf. */
static const char *byte_name(unsigned char c, char buf[8])
{
  if (c >= 0x20 && c < 0x7f)
    snprintf(buf, 8, "'%c'", c);
  else
    snprintf(buf, 8, "0x%02x", c);
  return buf;
}

/* -------------------------------------------------------- validation */

/* Where validation is, and where to report its first error. */
typedef struct vstate {
  const unsigned char *s; /* the input */
  size_t len;
  size_t pos;             /* next byte to look at */
  size_t ntok;            /* tokens jsmn will make: values plus keys */
  char *err;
  size_t errsize;
} vstate;

/* Report "offset N: message" for byte offset off; returns -1. */
static int fail(vstate *v, size_t off, const char *fmt, ...)
{
  char msg[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return set_err(v->err, v->errsize, "offset %zu: %s", off, msg);
}

/* Advance v->pos past JSON whitespace (space, tab, LF, CR only). */
static void skip_ws(vstate *v)
{
  while (v->pos < v->len) {
    unsigned char c = v->s[v->pos];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
      break;
    v->pos++;
  }
}

/* 1 if c is an ASCII digit, else 0. */
static int is_digit(unsigned char c)
{
  return c >= '0' && c <= '9';
}

/* Value of the 4 hex digits at s[i..i+4), or -1 if they are not all
 * there. */
static long hex4(const unsigned char *s, size_t len, size_t i)
{
  long value = 0;
  size_t k;
  if (len < 4 || i > len - 4)
    return -1;
  for (k = 0; k < 4; k++) {
    unsigned char c = s[i + k];
    int digit;
    if (c >= '0' && c <= '9')
      digit = c - '0';
    else if (c >= 'a' && c <= 'f')
      digit = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      digit = c - 'A' + 10;
    else
      return -1;
    value = value * 16 + digit;
  }
  return value;
}

/* Length (2..4) of the valid UTF-8 sequence whose non-ASCII lead byte is
 * s[i], or 0 if it is invalid: a bad lead or continuation byte, an
 * overlong form, an encoded surrogate, above U+10FFFF, or cut short. */
static size_t utf8_len(const unsigned char *s, size_t len, size_t i)
{
  unsigned char c = s[i];
  unsigned char lo = 0x80, hi = 0xbf; /* allowed range of the 2nd byte */
  size_t n, k;
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;                            /* 0xc0, 0xc1 only make overlongs */
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0)
      lo = 0xa0;                      /* below is overlong */
    else if (c == 0xed)
      hi = 0x9f;                      /* above is U+D800..U+DFFF */
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0)
      lo = 0x90;                      /* below is overlong */
    else if (c == 0xf4)
      hi = 0x8f;                      /* above is past U+10FFFF */
  } else {
    return 0;
  }
  if (len - i < n || s[i + 1] < lo || s[i + 1] > hi)
    return 0;
  for (k = 2; k < n; k++)
    if ((s[i + k] & 0xc0) != 0x80)
      return 0;
  return n;
}

/* Check the string whose opening quote is at v->pos and move past its
 * closing quote.  Returns 0 or -1. */
static int check_string(vstate *v)
{
  const unsigned char *s = v->s;
  size_t len = v->len, i = v->pos + 1;
  char name[8];
  for (;;) {
    unsigned char c;
    /* Fast path over plain ASCII. */
    while (i < len && s[i] >= 0x20 && s[i] < 0x80 && s[i] != '"' &&
           s[i] != '\\')
      i++;
    if (i >= len)
      return fail(v, v->pos, "unterminated string");
    c = s[i];
    if (c == '"') {
      v->pos = i + 1;
      return 0;
    }
    if (c < 0x20)
      return fail(v, i, "raw control byte %s in a string (must be escaped)",
                  byte_name(c, name));
    if (c >= 0x80) {
      size_t n = utf8_len(s, len, i);
      if (n == 0)
        return fail(v, i, "invalid UTF-8 sequence starting with byte %s",
                    byte_name(c, name));
      i += n;
      continue;
    }
    /* A backslash. */
    if (i + 1 >= len)
      return fail(v, v->pos, "unterminated string");
    switch (s[i + 1]) {
    case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r':
    case 't':
      i += 2;
      break;
    case 'u': {
      long cp = hex4(s, len, i + 2), low;
      if (cp < 0)
        return fail(v, i, "\\u escape needs 4 hex digits");
      if (cp >= 0xdc00 && cp <= 0xdfff)
        return fail(v, i, "lone low surrogate \\u%04lx", cp);
      if (cp >= 0xd800 && cp <= 0xdbff) {
        /* Must be followed at once by a \u low surrogate. */
        if (i + 7 >= len || s[i + 6] != '\\' || s[i + 7] != 'u' ||
            (low = hex4(s, len, i + 8)) < 0xdc00 || low > 0xdfff)
          return fail(v, i, "high surrogate \\u%04lx not followed by a "
                      "low surrogate escape", cp);
        i += 12;
      } else {
        i += 6;
      }
      break;
    }
    default:
      return fail(v, i, "invalid escape \\%s", byte_name(s[i + 1], name));
    }
  }
}

/* Check the number at v->pos (-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?)
 * and move past it.  Returns 0 or -1. */
static int check_number(vstate *v)
{
  const unsigned char *s = v->s;
  size_t len = v->len, i = v->pos;
  if (s[i] == '-')
    i++;
  if (i >= len || !is_digit(s[i]))
    return fail(v, i, "invalid number: a digit must follow '-'");
  if (s[i] == '0') {
    i++;
    if (i < len && is_digit(s[i]))
      return fail(v, v->pos, "invalid number: leading zero");
  } else {
    while (i < len && is_digit(s[i]))
      i++;
  }
  if (i < len && s[i] == '.') {
    i++;
    if (i >= len || !is_digit(s[i]))
      return fail(v, i, "invalid number: a digit must follow '.'");
    while (i < len && is_digit(s[i]))
      i++;
  }
  if (i < len && (s[i] == 'e' || s[i] == 'E')) {
    i++;
    if (i < len && (s[i] == '+' || s[i] == '-'))
      i++;
    if (i >= len || !is_digit(s[i]))
      return fail(v, i, "invalid number: the exponent needs digits");
    while (i < len && is_digit(s[i]))
      i++;
  }
  v->pos = i;
  return 0;
}

/* Check that true, false or null is spelled out at v->pos and move past
 * it.  Returns 0 or -1. */
static int check_literal(vstate *v)
{
  static const char *const words[] = { "true", "false", "null" };
  size_t k;
  for (k = 0; k < 3; k++) {
    size_t n = strlen(words[k]);
    if (v->s[v->pos] == (unsigned char)words[k][0]) {
      if (v->len - v->pos < n || memcmp(v->s + v->pos, words[k], n) != 0)
        return fail(v, v->pos, "invalid literal (expected %s)", words[k]);
      v->pos += n;
      return 0;
    }
  }
  return fail(v, v->pos, "invalid literal");
}

/* Check an object member's key and its ':' (after '{' or ','), leaving
 * v->pos where the value should start.  Returns 0 or -1. */
static int check_key(vstate *v)
{
  char name[8];
  skip_ws(v);
  if (v->pos >= v->len)
    return fail(v, v->pos, "unexpected end of input in an object");
  if (v->s[v->pos] != '"')
    return fail(v, v->pos, "expected a string key, found %s",
                byte_name(v->s[v->pos], name));
  if (check_string(v) < 0)
    return -1;
  v->ntok++;
  skip_ws(v);
  if (v->pos >= v->len)
    return fail(v, v->pos, "unexpected end of input in an object");
  if (v->s[v->pos] != ':')
    return fail(v, v->pos, "expected ':' after a key, found %s",
                byte_name(v->s[v->pos], name));
  v->pos++;
  return 0;
}

/* Check that the input is exactly one JSON value with only whitespace
 * around it, nested at most JC_MAX_DEPTH deep, counting tokens into
 * v->ntok.  *root_scalar is set to 1 when the value is a number or a
 * literal.  Returns 0 or -1. */
static int validate(vstate *v, int *root_scalar)
{
  unsigned char open[JC_MAX_DEPTH]; /* '{' or '[' of each open container */
  size_t depth = 0;
  char name[8];

  skip_ws(v);
  if (v->pos >= v->len)
    return fail(v, v->pos, "empty input (no JSON value)");
  *root_scalar = v->s[v->pos] != '{' && v->s[v->pos] != '[' &&
                 v->s[v->pos] != '"';

  for (;;) {
    unsigned char c;
    /* A value must start here. */
    skip_ws(v);
    if (v->pos >= v->len)
      return fail(v, v->pos, "unexpected end of input, expected a value");
    c = v->s[v->pos];
    v->ntok++;
    if (c == '{' || c == '[') {
      if (depth == JC_MAX_DEPTH)
        return fail(v, v->pos, "nesting deeper than %d", JC_MAX_DEPTH);
      open[depth++] = c;
      v->pos++;
      skip_ws(v);
      if (v->pos < v->len && v->s[v->pos] == (c == '{' ? '}' : ']')) {
        depth--;                      /* empty: a complete value */
        v->pos++;
      } else if (c == '{') {
        if (check_key(v) < 0)
          return -1;
        continue;
      } else {
        continue;
      }
    } else if (c == '"') {
      if (check_string(v) < 0)
        return -1;
    } else if (c == '-' || is_digit(c)) {
      if (check_number(v) < 0)
        return -1;
    } else if (c == 't' || c == 'f' || c == 'n') {
      if (check_literal(v) < 0)
        return -1;
    } else {
      return fail(v, v->pos, "expected a value, found %s",
                  byte_name(c, name));
    }

    /* After a complete value: close containers, until a ',' calls for
     * the next value or the top-level value is done. */
    for (;;) {
      unsigned char closer;
      skip_ws(v);
      if (depth == 0) {
        if (v->pos != v->len)
          return fail(v, v->pos, "unexpected %s after the JSON value",
                      byte_name(v->s[v->pos], name));
        return 0;
      }
      if (v->pos >= v->len)
        return fail(v, v->pos, "unexpected end of input, unterminated %s",
                    open[depth - 1] == '{' ? "object" : "array");
      closer = open[depth - 1] == '{' ? '}' : ']';
      c = v->s[v->pos];
      if (c == closer) {
        depth--;
        v->pos++;
        continue;
      }
      if (c != ',')
        return fail(v, v->pos, "expected ',' or '%c', found %s", closer,
                    byte_name(c, name));
      v->pos++;
      if (open[depth - 1] == '{' && check_key(v) < 0)
        return -1;
      break;
    }
  }
}

/* ------------------------------------------------ building the tree */

/* Set d->next for every value: the next value in the same container, or
 * -1.  Tokens come in document order, so the previous child of a token's
 * parent is on the path from the root to the previous token: one pass,
 * with the path kept in a small stack.  Returns 0, or -1 if jsmn's parent
 * links do not make a tree (never for validated input). */
static int link_siblings(jc_doc *d)
{
  /* Containers and keys alternate at most on a path, plus a leaf. */
  int path[2 * JC_MAX_DEPTH + 2];
  int top = 0, j;
  path[0] = 0;
  d->next[0] = -1;
  for (j = 1; j < d->ntok; j++) {
    int parent = d->tok[j].parent;
    int was = top;
    d->next[j] = -1;
    while (top >= 0 && path[top] != parent)
      top--;
    if (top < 0 || top + 1 >= (int)(sizeof path / sizeof path[0]))
      return -1;
    if (was > top) {
      int prev = path[top + 1];      /* the previous child of parent */
      if (d->tok[parent].type == JSMN_ARRAY)
        d->next[prev] = j;
      else if (d->tok[parent].type == JSMN_OBJECT)
        d->next[prev + 1] = j + 1;   /* keys: link their values */
      else
        return -1;                   /* a key has a single child */
    }
    path[++top] = j;
  }
  return 0;
}

/* Write code point cp as UTF-8 at o; returns the end of what was
 * written. */
static char *put_utf8(char *o, unsigned long cp)
{
  if (cp < 0x80) {
    *o++ = (char)cp;
  } else if (cp < 0x800) {
    *o++ = (char)(0xc0 | (cp >> 6));
    *o++ = (char)(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    *o++ = (char)(0xe0 | (cp >> 12));
    *o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
    *o++ = (char)(0x80 | (cp & 0x3f));
  } else {
    *o++ = (char)(0xf0 | (cp >> 18));
    *o++ = (char)(0x80 | ((cp >> 12) & 0x3f));
    *o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
    *o++ = (char)(0x80 | (cp & 0x3f));
  }
  return o;
}

/* Decode the (validated) raw string text raw[0..n) into out, which has
 * room for n + 1 bytes (decoding never lengthens), and NUL-terminate it.
 * Returns the decoded length. */
static size_t decode_string(const char *raw, size_t n, char *out)
{
  const unsigned char *s = (const unsigned char *)raw;
  char *o = out;
  size_t i = 0;
  /* Copy up to the first escape (usually the whole string) in one tight
   * loop: faster than memchr + memcpy on short strings. */
  while (i < n && raw[i] != '\\') {
    out[i] = raw[i];
    i++;
  }
  o += i;
  while (i < n) {
    unsigned long cp;
    if (s[i] != '\\') {
      *o++ = (char)s[i++];
      continue;
    }
    switch (s[i + 1]) {
    case 'b': *o++ = '\b'; i += 2; break;
    case 'f': *o++ = '\f'; i += 2; break;
    case 'n': *o++ = '\n'; i += 2; break;
    case 'r': *o++ = '\r'; i += 2; break;
    case 't': *o++ = '\t'; i += 2; break;
    case 'u':
      cp = (unsigned long)hex4(s, n, i + 2);
      i += 6;
      if (cp >= 0xd800 && cp <= 0xdbff) { /* validated: a low one follows */
        unsigned long low = (unsigned long)hex4(s, n, i + 2);
        cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
        i += 6;
      }
      o = put_utf8(o, cp);
      break;
    default:                         /* \" \\ \/ */
      *o++ = (char)s[i + 1];
      i += 2;
      break;
    }
  }
  *o = '\0';
  return (size_t)(o - out);
}

/* Decode every string token into d->dec at its start offset and store the
 * decoded length in its size (a decoded string is never longer than the
 * raw one, so its NUL lands at most on the closing quote's offset). */
static void decode_strings(jc_doc *d)
{
  int t;
  for (t = 0; t < d->ntok; t++) {
    jsmntok_t *k = &d->tok[t];
    if (k->type == JSMN_STRING)
      k->size = (int)decode_string(d->text + k->start,
                                   (size_t)(k->end - k->start),
                                   d->dec + k->start);
  }
}

/* Parse text[0..len), which is malloc'ed with text[len] == '\0' and is
 * taken over (freed on failure).  Returns the document or NULL. */
static jc_doc *parse_owned(char *text, size_t len, char *err, size_t errsize)
{
  vstate v;
  jc_doc *d;
  int root_scalar = 0;

  if (len > JC_MAX_LEN) {
    free(text);
    set_err(err, errsize, "offset 0: input too large (%zu bytes)", len);
    return NULL;
  }
  v.s = (const unsigned char *)text;
  v.len = len;
  v.pos = 0;
  v.ntok = 0;
  v.err = err;
  v.errsize = errsize;
  if (validate(&v, &root_scalar) < 0) {
    free(text);
    return NULL;
  }

  d = calloc(1, sizeof *d);
  if (d == NULL) {
    free(text);
    set_err(err, errsize, "offset 0: out of memory");
    return NULL;
  }
  d->text = text;
  d->len = len;
  d->ntok = (int)v.ntok;             /* at most len tokens */
  d->tok = malloc(v.ntok * sizeof *d->tok);
  d->next = malloc(v.ntok * sizeof *d->next);
  d->dec = malloc(len + 1);
  d->c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
  if (d->tok == NULL || d->next == NULL || d->dec == NULL ||
      d->c_locale == (locale_t)0) {
    jc_free(d);
    set_err(err, errsize, "offset 0: out of memory");
    return NULL;
  }

  if (root_scalar) {
    /* Strict jsmn wants a delimiter after a primitive, so it refuses a
     * bare top-level number or literal; that one token is made here. */
    size_t start = 0;
    while (text[start] == ' ' || text[start] == '\t' || text[start] == '\n' ||
           text[start] == '\r')
      start++;
    d->tok[0].type = JSMN_PRIMITIVE;
    d->tok[0].start = (int)start;
    d->tok[0].end = (int)start;
    while (d->tok[0].end < (int)len && text[d->tok[0].end] != ' ' &&
           text[d->tok[0].end] != '\t' && text[d->tok[0].end] != '\n' &&
           text[d->tok[0].end] != '\r')
      d->tok[0].end++;
    d->tok[0].size = 0;
    d->tok[0].parent = -1;
  } else {
    jsmn_parser p;
    int r;
    jsmn_init(&p);
    r = jsmn_parse(&p, text, len, d->tok, (unsigned)d->ntok);
    if (r != d->ntok) {
      jc_free(d);
      set_err(err, errsize, "offset 0: internal error: jsmn returned %d "
              "where the validator counted %zu tokens", r, v.ntok);
      return NULL;
    }
  }

  if (link_siblings(d) < 0) {
    jc_free(d);
    set_err(err, errsize, "offset 0: internal error: jsmn's parent links "
            "do not form a tree");
    return NULL;
  }
  decode_strings(d);
  return d;
}

/* ---------------------------------------------------------- public */

/* Copy and parse buf[0..len); returns the document or NULL (err set). */
jc_doc *jc_parse(const char *buf, size_t len, char *err, size_t errsize)
{
  char *text;
  if (len > JC_MAX_LEN) {
    set_err(err, errsize, "offset 0: input too large (%zu bytes)", len);
    return NULL;
  }
  text = malloc(len + 1);
  if (text == NULL) {
    set_err(err, errsize, "offset 0: out of memory");
    return NULL;
  }
  if (len > 0)
    memcpy(text, buf, len);
  text[len] = '\0';
  return parse_owned(text, len, err, errsize);
}

/* Read the file at path and parse it; returns the document or NULL. */
jc_doc *jc_parse_file(const char *path, char *err, size_t errsize)
{
  FILE *f = fopen(path, "rb");
  char *buf;
  size_t cap = 65536, len = 0, n;
  long size;

  if (f == NULL) {
    set_err(err, errsize, "cannot open %s: %s", path, strerror(errno));
    return NULL;
  }
  /* The size, when it can be known, spares regrowing the buffer. */
  if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 &&
      fseek(f, 0, SEEK_SET) == 0 && (size_t)size < JC_MAX_LEN)
    cap = (size_t)size + 1;          /* +1: meet EOF without regrowing */
  buf = malloc(cap + 1);             /* +1: the NUL */
  if (buf == NULL) {
    fclose(f);
    set_err(err, errsize, "%s: out of memory", path);
    return NULL;
  }
  while ((n = fread(buf + len, 1, cap - len, f)) > 0) {
    len += n;
    if (len == cap) {
      char *bigger;
      if (cap > JC_MAX_LEN) {
        free(buf);
        fclose(f);
        set_err(err, errsize, "%s: too large (over %zu bytes)", path,
                JC_MAX_LEN);
        return NULL;
      }
      cap *= 2;
      bigger = realloc(buf, cap + 1);
      if (bigger == NULL) {
        free(buf);
        fclose(f);
        set_err(err, errsize, "%s: out of memory", path);
        return NULL;
      }
      buf = bigger;
    }
  }
  if (ferror(f)) {
    int e = errno;
    free(buf);
    fclose(f);
    set_err(err, errsize, "cannot read %s: %s", path, strerror(e));
    return NULL;
  }
  fclose(f);
  buf[len] = '\0';
  return parse_owned(buf, len, err, errsize);
}

/* Free d and all it owns. */
void jc_free(jc_doc *d)
{
  if (d == NULL)
    return;
  if (d->c_locale != (locale_t)0)
    freelocale(d->c_locale);
  free(d->dec);
  free(d->next);
  free(d->tok);
  free(d->text);
  free(d);
}

/* The token of v, or NULL if v is not a token of d. */
static const jsmntok_t *token(const jc_doc *d, jc_val v)
{
  if (d == NULL || v < 0 || v >= d->ntok)
    return NULL;
  return &d->tok[v];
}

/* The root value, or -1 without a document. */
jc_val jc_root(const jc_doc *d)
{
  return d == NULL ? -1 : 0;
}

/* The type of v (JC_NULL for an invalid v). */
enum jc_type jc_type(const jc_doc *d, jc_val v)
{
  const jsmntok_t *t = token(d, v);
  if (t == NULL)
    return JC_NULL;
  switch (t->type) {
  case JSMN_OBJECT:
    return JC_OBJECT;
  case JSMN_ARRAY:
    return JC_ARRAY;
  case JSMN_STRING:
    return JC_STRING;
  default:
    break;
  }
  switch (d->text[t->start]) {
  case 't':
    return JC_TRUE;
  case 'f':
    return JC_FALSE;
  case 'n':
    return JC_NULL;
  default:
    return JC_NUMBER;
  }
}

/* Children of a container; 0 otherwise. */
size_t jc_len(const jc_doc *d, jc_val v)
{
  const jsmntok_t *t = token(d, v);
  if (t == NULL || (t->type != JSMN_OBJECT && t->type != JSMN_ARRAY))
    return 0;
  return (size_t)t->size;
}

/* The first element / member value of a container, or -1. */
jc_val jc_first(const jc_doc *d, jc_val container)
{
  const jsmntok_t *t = token(d, container);
  if (t == NULL || t->size == 0)
    return -1;
  if (t->type == JSMN_ARRAY)
    return container + 1;
  if (t->type == JSMN_OBJECT)
    return container + 2;            /* past the first key */
  return -1;
}

/* The next sibling value of v, or -1. */
jc_val jc_next(const jc_doc *d, jc_val v)
{
  return token(d, v) == NULL ? -1 : d->next[v];
}

/* The i-th element / member value of a container, or -1 (O(i)). */
jc_val jc_index(const jc_doc *d, jc_val arr, size_t i)
{
  jc_val v;
  if (i >= jc_len(d, arr))
    return -1;
  for (v = jc_first(d, arr); i > 0; i--)
    v = d->next[v];
  return v;
}

/* The undecoded key of the member whose value is v, or NULL. */
const char *jc_key_raw(const jc_doc *d, jc_val member_value, size_t *len)
{
  const jsmntok_t *t = token(d, member_value), *key;
  if (len != NULL)
    *len = 0;
  if (t == NULL || t->parent < 0 || d->tok[t->parent].type != JSMN_STRING)
    return NULL;
  key = &d->tok[t->parent];
  if (len != NULL)
    *len = (size_t)(key->end - key->start);
  return d->text + key->start;
}

/* 1 if token t is a string whose decoded value is s[0..n), else 0. */
static int decoded_equals(const jc_doc *d, const jsmntok_t *t, const char *s,
                          size_t n)
{
  return t->type == JSMN_STRING && (size_t)t->size == n &&
         memcmp(d->dec + t->start, s, n) == 0;
}

/* The value of obj's first member with this decoded key, or -1. */
jc_val jc_get(const jc_doc *d, jc_val obj, const char *key)
{
  const jsmntok_t *t = token(d, obj);
  size_t n = strlen(key);
  jc_val v;
  if (t == NULL || t->type != JSMN_OBJECT)
    return -1;
  for (v = jc_first(d, obj); v >= 0; v = d->next[v])
    if (decoded_equals(d, &d->tok[v - 1], key, n))  /* v - 1: its key */
      return v;
  return -1;
}

/* How many members of obj have this decoded key. */
size_t jc_count_key(const jc_doc *d, jc_val obj, const char *key)
{
  const jsmntok_t *t = token(d, obj);
  size_t n = strlen(key), count = 0;
  jc_val v;
  if (t == NULL || t->type != JSMN_OBJECT)
    return 0;
  for (v = jc_first(d, obj); v >= 0; v = d->next[v])
    count += (size_t)decoded_equals(d, &d->tok[v - 1], key, n);
  return count;
}

/* The decoded string v, or NULL if v is not a string. */
const char *jc_str(const jc_doc *d, jc_val v, size_t *len)
{
  const jsmntok_t *t = token(d, v);
  if (len != NULL)
    *len = 0;
  if (t == NULL || t->type != JSMN_STRING)
    return NULL;
  if (len != NULL)
    *len = (size_t)t->size;
  return d->dec + t->start;
}

/* 1 if v is a string decoding to exactly s, else 0. */
int jc_streq(const jc_doc *d, jc_val v, const char *s)
{
  const jsmntok_t *t = token(d, v);
  return t != NULL && decoded_equals(d, t, s, strlen(s));
}

/* The raw input text of v, or NULL for an invalid v. */
const char *jc_raw(const jc_doc *d, jc_val v, size_t *len)
{
  const jsmntok_t *t = token(d, v);
  int quote;
  if (len != NULL)
    *len = 0;
  if (t == NULL)
    return NULL;
  quote = t->type == JSMN_STRING;    /* jsmn leaves the quotes out */
  if (len != NULL)
    *len = (size_t)(t->end - t->start + 2 * quote);
  return d->text + t->start - quote;
}

/* The number v read in the "C" locale, or NAN. */
double jc_num(const jc_doc *d, jc_val v)
{
  if (token(d, v) == NULL || jc_type(d, v) != JC_NUMBER)
    return NAN;
  /* The number ends at a delimiter or at the text's NUL. */
  return strtod_l(d->text + d->tok[v].start, NULL, d->c_locale);
}

/* Read the decimal digits s[0..n) into *out; returns 0, or -1 if n is 0,
 * a byte is not a digit, or the value does not fit uint64_t. */
static int read_digits(const char *s, size_t n, uint64_t *out)
{
  uint64_t value = 0;
  size_t i;
  if (n == 0)
    return -1;
  for (i = 0; i < n; i++) {
    unsigned digit = (unsigned)(s[i] - '0');
    if (digit > 9 || value > (UINT64_MAX - digit) / 10)
      return -1;
    value = value * 10 + digit;
  }
  *out = value;
  return 0;
}

/* The raw text of number v in *s, *n; returns 0, or -1 if v is not a
 * number. */
static int number_text(const jc_doc *d, jc_val v, const char **s, size_t *n)
{
  if (token(d, v) == NULL || jc_type(d, v) != JC_NUMBER)
    return -1;
  *s = d->text + d->tok[v].start;
  *n = (size_t)(d->tok[v].end - d->tok[v].start);
  return 0;
}

/* 0 with *out = integer v if it fits int64_t, else -1. */
int jc_int64(const jc_doc *d, jc_val v, int64_t *out)
{
  const char *s;
  size_t n;
  uint64_t mag;
  if (number_text(d, v, &s, &n) < 0)
    return -1;
  if (s[0] == '-') {
    if (read_digits(s + 1, n - 1, &mag) < 0 ||
        mag > (uint64_t)INT64_MAX + 1)
      return -1;
    /* -(INT64_MAX + 1) without signed overflow. */
    *out = mag == 0 ? 0 : -(int64_t)(mag - 1) - 1;
    return 0;
  }
  if (read_digits(s, n, &mag) < 0 || mag > (uint64_t)INT64_MAX)
    return -1;
  *out = (int64_t)mag;
  return 0;
}

/* 0 with *out = integer v if it fits uint64_t, else -1. */
int jc_uint64(const jc_doc *d, jc_val v, uint64_t *out)
{
  const char *s;
  size_t n;
  if (number_text(d, v, &s, &n) < 0)
    return -1;
  return read_digits(s, n, out);     /* refuses '-', '.', 'e' */
}

/* 0 with *ns = microseconds v (<= 3 decimals) in ns, else -1. */
int jc_us_to_ns(const jc_doc *d, jc_val v, uint64_t *ns)
{
  static const uint64_t scale[4] = { 1000, 100, 10, 1 };
  const char *s, *dot;
  size_t n, whole_len, frac_len = 0;
  uint64_t whole, frac = 0;
  if (number_text(d, v, &s, &n) < 0)
    return -1;
  dot = memchr(s, '.', n);
  whole_len = dot == NULL ? n : (size_t)(dot - s);
  if (read_digits(s, whole_len, &whole) < 0)   /* refuses '-' and 'e' */
    return -1;
  if (dot != NULL) {
    frac_len = n - whole_len - 1;
    if (frac_len > 3 || read_digits(dot + 1, frac_len, &frac) < 0)
      return -1;
  }
  frac *= scale[frac_len];
  if (whole > (UINT64_MAX - frac) / 1000)
    return -1;
  *ns = whole * 1000 + frac;
  return 0;
}

/* The trace's events array (root or root.traceEvents), or -1. */
jc_val jc_trace_events(const jc_doc *d)
{
  jc_val root = jc_root(d), events;
  if (root < 0)
    return -1;
  if (jc_type(d, root) == JC_ARRAY)
    return root;
  if (jc_type(d, root) != JC_OBJECT)
    return -1;
  events = jc_get(d, root, "traceEvents");
  return events >= 0 && jc_type(d, events) == JC_ARRAY ? events : -1;
}
