/* front_layout.c -- the crash-layout front end: the library's own
 * layout, one record per line, read whatever a crash left of it
 *
 * See reader.h for the contract, front.h for the reader's parts.  How it
 * works:
 *
 *  - It bids (sniff_layout) only on what it can prove is ours: the head
 *    line the library writes, then the process_name record and the
 *    clock record with the library's sync id, each on one line of its
 *    own -- or a prefix of that cut by a crash.  Anything else goes to
 *    the general front end, which reads any strict JSON.
 *  - A scanner sees the text line by line.  Line 1 must be the head
 *    exactly.  Between lines it skips padding and commas (counting them);
 *    a line then begins with "{" (a record), "]" (the tail) or anything
 *    else (junk).  A line ends at a newline, at a NUL (no record holds a
 *    raw NUL, and a zeroed block must not glue a complete record to what
 *    follows it), or at the end of the data.  Padding and commas at the
 *    end of a line are counted, not kept beyond WS_KEEP bytes.  A record
 *    line is yielded if its text is one strictly valid JSON object
 *    (twt_json_check, at most TWT_RECORD_DEPTH deep: the deepest record
 *    the library writes); otherwise it is dropped and counted.
 *  - The scanner also decides whether the input is already exactly valid
 *    (info.strict): the head, records separated by exactly one comma,
 *    padding only where JSON allows whitespace, one tail line and at most
 *    one newline after it (Perfetto rejects bytes after the final "]"
 *    that fall in a later read chunk).
 *  - A record line of the layout (the most of them) is taken in one pass
 *    (layout_fast): checked, its members found and its end found by the
 *    checker, then only its padding and newline looked at; any other
 *    line goes the way above.  TWT_READ_LINES_ONLY in the environment at
 *    open turns that pass off (the tests compare both ways).
 *  - The record's text is the chunk itself when the line lies whole in
 *    it (r->view: most lines, no copy), else the scanner's line buffer.
 */
#include "internal.h"     /* config.h first */
#include "layout.h"       /* tw__layout_head, tw__layout_tail */
#include "front.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ======================================================= byte classes */

#define SPACES UINT64_C(0x2020202020202020)

/* How many bytes from p are spaces or NULs, eight at a time; *nul is set
 * if one was a NUL.  A word whose bytes are all 0x20 or 0x00 has no bit
 * outside 0x20 in any byte; its NULs are the bytes without that bit. */
static size_t skip_space_nul(const char *p, size_t n, int *nul)
{
  uint64_t nuls = 0, a, b, c, d;
  size_t i = 0;

  while (n - i >= 32) {
    memcpy(&a, p + i, 8);
    memcpy(&b, p + i + 8, 8);
    memcpy(&c, p + i + 16, 8);
    memcpy(&d, p + i + 24, 8);
    if (((a | b | c | d) & ~SPACES) != 0)
      break;
    nuls |= ~(a & b & c & d) & SPACES;
    i += 32;
  }
  while (n - i >= 8) {
    memcpy(&a, p + i, 8);
    if ((a & ~SPACES) != 0)
      break;
    nuls |= ~a & SPACES;
    i += 8;
  }
  while (i < n && (p[i] == ' ' || p[i] == '\0')) {
    nuls |= p[i] == '\0';
    i++;
  }
  if (nuls)
    *nul = 1;
  return i;
}

/* 1 if the 32 bytes at p are all spaces. */
static int spaces32(const char *p)
{
  uint64_t a, b, c, d;

  memcpy(&a, p, 8);
  memcpy(&b, p + 8, 8);
  memcpy(&c, p + 16, 8);
  memcpy(&d, p + 24, 8);
  return ((a ^ SPACES) | (b ^ SPACES) | (c ^ SPACES) | (d ^ SPACES)) == 0;
}

/* 1 if p[0..n) are all spaces. */
static int all_spaces(const char *p, size_t n)
{
  for (; n >= 32; p += 32, n -= 32)
    if (!spaces32(p))
      return 0;
  for (; n > 0; p++, n--)
    if (*p != ' ')
      return 0;
  return 1;
}

/* The length k of p[0..n) without its trailing padding (space, tab, CR)
 * and, if commas is not NULL, commas (counted there).  *odd (if not NULL)
 * is set if that padding holds more than spaces. */
static size_t trim_end(const char *p, size_t n, uint64_t *commas, int *odd)
{
  while (n > 0) {
    char c;

    if (n >= 32 && spaces32(p + n - 32)) {
      n -= 32;
      continue;
    }
    c = p[n - 1];
    if (c == ' ') {
      n--;
      continue;
    }
    if (c == ',' && commas)
      ++*commas;
    else if (c != '\t' && c != '\r')
      break;
    if (odd)
      *odd = 1;
    n--;
  }
  return n;
}

/* =========================================================== the line */

/* Make room for need bytes in the line buffer. */
static int line_reserve(twt_reader *r, size_t need)
{
  char *p;
  size_t cap;

  if (need <= r->cap)
    return 0;
  cap = r->cap ? r->cap : 4096;
  while (cap < need)
    cap = cap > SIZE_MAX / 2 ? need : cap * 2;
  if (!(p = realloc(r->line, cap)))
    return fail(r, -ENOMEM, "out of memory for a line of %zu bytes", need);
  r->line = p;
  r->cap = cap;
  return 0;
}


/* 1 if text[0..n) is the canonical tail of the form, or its start. */
static int is_tail_prefix(int object_form, const char *text, size_t n)
{
  size_t len;
  const char *bracket = twt_read_bracket(object_form, &len);

  return n <= len && memcmp(text, bracket, n) == 0;
}

/* Count a dropped line of bytes; yield it if asked to. */
static void drop(twt_reader *r, int record, uint64_t bytes)
{
  r->strict = 0;
  if (record) {
    r->info.dropped_records++;
    r->info.dropped_bytes += bytes;
  } else {
    r->info.junk_bytes += bytes;
  }
  if (r->flags & TWT_READ_DROPPED)
    yield(r, record ? TWT_ITEM_CUT : TWT_ITEM_JUNK, NULL, (size_t)bytes);
}

/* The first line of text after the head is not a complete record. */
static int first_line_error(twt_reader *r, int record_like)
{
  if (record_like)
    return fail(r, TWT_READ_ENORECORD, "its first record (line %" PRIu64
                ") is cut or invalid: no complete record to keep",
                r->line_no);
  return fail(r, TWT_READ_ENOTTRACE, "not a tracewriter trace: line %"
              PRIu64 " is not a JSON object", r->line_no);
}

/* Account for n more bytes of a skipped line (its padding and commas at
 * the end not counted). */
static void junk_add(twt_reader *r, const char *p, size_t n)
{
  uint64_t commas = 0;
  size_t k = trim_end(p, n, &commas, NULL);

  if (k > 0) {
    r->junk_content += r->junk_pad + k;
    r->junk_pad = n - k;
  } else {
    r->junk_pad += n;
  }
}

/* Stop storing the current line: it cannot be kept.  The first line of
 * text after the head must be the first record: fail there. */
static int to_junk(twt_reader *r)
{
  r->junk_record = r->state == ST_RECORD;
  r->junk_content = r->content;
  r->junk_pad = r->run.len;
  r->state = ST_JUNK;
  r->strict = 0;
  if (r->first_pending)
    return first_line_error(r, r->junk_record);
  return 0;
}

/* Add n bytes (no newline or NUL among them) to a record or tail line. */
static int line_add(twt_reader *r, const char *p, size_t n)
{
  int record = r->state == ST_RECORD, odd = 0;
  uint64_t commas = 0;
  size_t k = trim_end(p, n, record ? &commas : NULL, &odd), t, keep, limit;
  int rc;

  if (k > 0) {
    /* Text: the padding before it is part of the line after all. */
    uint64_t extra = r->run.extra;

    limit = record ? r->max_record : TAIL_MAX;
    if (r->run.extra_odd || extra > limit || r->len + extra > limit ||
        k > limit - r->len - (size_t)extra) {
      /* Over WS_KEEP bytes of padding with commas, tabs or CRs inside
       * the text, or too long: not a line the library writes, unless it
       * is a record longer than max_record. */
      if (record && !r->run.extra_odd)
        return fail(r, TWT_READ_ELINE, "line %" PRIu64 " (byte %" PRIu64
                    ") is a record of more than %zu bytes; raise "
                    "--max-line to read it", r->line_no, r->line_off,
                    r->max_record);
      if ((rc = to_junk(r)) != 0)
        return rc;
      junk_add(r, p, n);
      return 0;
    }
    if ((rc = line_reserve(r, r->len + (size_t)extra + k)) != 0)
      return rc;
    memset(r->line + r->len, ' ', (size_t)extra);
    memcpy(r->line + r->len + extra, p, k);
    r->len += (size_t)extra + k;
    r->content = r->len;
    memset(&r->run, 0, sizeof r->run);
  }
  /* The padding after it: kept up to WS_KEEP, counted beyond. */
  if ((t = n - k) == 0)
    return 0;
  keep = r->run.extra || r->run.len >= WS_KEEP ? 0 :
         WS_KEEP - (size_t)r->run.len;
  if (keep > t)
    keep = t;
  if (keep > 0) {
    if ((rc = line_reserve(r, r->len + keep)) != 0)
      return rc;
    memcpy(r->line + r->len, p + k, keep);
    r->len += keep;
  }
  if (t > keep && odd && !r->run.extra_odd &&
      !all_spaces(p + k + keep, t - keep))
    r->run.extra_odd = 1;
  r->run.extra += t - keep;
  r->run.len += t;
  r->run.commas += commas;
  return 0;
}

/* 1 if the record line so far is one JSON object: its length in *len;
 * *glued if the old tail follows it. */
static int record_complete(const twt_reader *r, size_t *len, int *glued)
{
  const char *t = r->view ? r->view : r->line;
  size_t q = r->content;

  *glued = 0;
  *len = q;
  twt_member_fn fn = (r->flags & TWT_READ_MEMBERS) ? twt_rec_take : NULL;

  if (fn)
    twt_rec_take((void *)&r->rec, NULL, 0, 0, 0);
  if (twt_json_check_ex(t, q, TWT_RECORD_DEPTH, NULL, fn,
                        (void *)&r->rec) == 0)
    return 1;
  /* The old tail glued after it: a commit that overwrote only the tail's
   * first byte leaves "{...},]" or "{...},]}". */
  if (q >= 2 && (t[q - 1] == ']' ||
                 (q >= 3 && t[q - 1] == '}' && t[q - 2] == ']'))) {
    uint64_t between = 0;           /* commas before the old tail */
    size_t g = trim_end(t, t[q - 1] == ']' ? q - 1 : q - 2, &between,
                        NULL);
    if (fn)
      twt_rec_take((void *)&r->rec, NULL, 0, 0, 0);
    if (g > 0 && twt_json_check_ex(t, g, TWT_RECORD_DEPTH, NULL, fn,
                                   (void *)&r->rec) == 0) {
      *glued = 1;
      *len = g;
      return 1;
    }
  }
  return 0;
}

/* A record line ended: yield it if its text is one JSON object. */
static int take_record(twt_reader *r, int term)
{
  const char *t = r->view ? r->view : r->line;
  size_t q;
  int glued, ok = record_complete(r, &q, &glued),
      terminated = term != END_OF_DATA;

  if (!ok) {
    if (r->first_pending)
      return first_line_error(r, 1);
    if (term == '\n' && !(r->flags & TWT_READ_LAYOUT) && !r->run.extra) {
      r->join_pending = 1;          /* maybe spread over lines */
      return 0;
    }
    drop(r, 1, q);
    return 0;
  }
  if (r->joined) {
    /* A record spread over lines, as other programs write them: one
     * line, without the whitespace between its tokens, and its members
     * found again in that text. */
    q = twt_json_compact(r->line, t, q);
    if (r->flags & TWT_READ_MEMBERS) {
      twt_rec_take(&r->rec, NULL, 0, 0, 0);
      (void)twt_json_check_ex(r->line, q, TWT_RECORD_DEPTH, NULL,
                              twt_rec_take, &r->rec);
    }
    r->strict = 0;
    r->info.joined_records++;
  }
  /* Exactly one comma between records, none before the first. */
  if (r->info.records == 0 ? r->commas != 0 : r->commas != 1)
    r->strict = 0;
  if (glued || !terminated)
    r->strict = 0;
  r->commas = glued ? 0 : r->run.commas;
  r->info.records++;
  yield(r, TWT_ITEM_RECORD, t, q);
  return 0;
}

/* A line beginning with "]" ended: the tail if head + its text is valid
 * JSON. */
static void take_tail(twt_reader *r, int term)
{
  char doc[HEAD_MAX + TAIL_MAX];
  size_t n = r->content;

  memcpy(doc, r->head, r->head_len);
  memcpy(doc + r->head_len, r->line, n);
  if (twt_json_check(doc, r->head_len + n, TWT_RECORD_DEPTH, NULL) != 0) {
    if (is_tail_prefix(r->info.object_form, r->line, n)) {
      r->strict = 0;                /* the tail, cut: nothing lost */
    } else {
      /* "],..." not whole on its line: members after the events, which
       * the library never writes.  What follows is theirs, no event. */
      if (n > 1 && r->line[1] == ',')
        r->past_events = 1;
      drop(r, 0, n);
    }
    return;
  }
  memcpy(r->tail, r->line, n);
  r->info.tail = r->ext_tail_len ? r->ext_tail : r->tail;
  r->info.tail_len = r->ext_tail_len ? r->ext_tail_len : n;
  if (n > 2 && r->line[1] == ',') {
    /* Members after the events ("],\"k\":v}", as the tools write the
     * members of what they read): they count as the head's do. */
    size_t hm = r->ext_tail_len ? r->ext_tail_len - 2 : 0;
    memcpy(r->ctail, "]", 1);
    memcpy(r->ctail + 1, r->ext_tail + 1, hm);
    memcpy(r->ctail + 1 + hm, r->line + 1, n - 1);
    r->info.tail = r->ctail;
    r->info.tail_len = n + hm;
  }
  if (r->info.tail_len > 2) {
    r->ldoc.members = r->info.tail + 1;
    r->ldoc.members_len = r->info.tail_len - 2;
  }
  r->info.had_tail = 1;
  r->tail_last = 1;
  /* Valid as it is: records before it, no comma left over, nothing after
   * it on its line; at most a newline after it (after_tail). */
  if (r->info.records == 0 || r->commas != 0 || r->run.len != 0)
    r->strict = 0;
  if (term == '\n')
    r->after_tail = 1;
}

/* The current line ended at term: a newline, a NUL, or END_OF_DATA.
 * Classify it; the scanner goes back between lines. */
static int line_end(twt_reader *r, int term)
{
  enum state s = r->state;
  int rc = 0;

  r->state = ST_BETWEEN;
  if (term == '\0')
    r->strict = 0;
  if (s == ST_RECORD)
    rc = take_record(r, term);
  else if (s == ST_TAIL)
    take_tail(r, term);
  else
    drop(r, r->junk_record, r->junk_content);
  r->first_pending = 0;
  return rc;
}

/* A line of text begins with c at offset. */
static int line_begin(twt_reader *r, char c, uint64_t offset)
{
  r->line_off = offset;
  r->tail_last = 0;
  if (r->after_tail)
    r->strict = 0;                  /* a line after the tail */
  r->len = r->content = 0;
  r->view = NULL;
  r->joined = 0;
  memset(&r->run, 0, sizeof r->run);
  r->junk_record = 0;
  r->junk_content = r->junk_pad = 0;
  /* A huge line's buffer is not kept for the next one. */
  if (r->cap > 4 * WS_KEEP) {
    free(r->line);
    r->line = NULL;
    r->cap = 0;
  }
  if (r->first_pending && c != '{')
    return first_line_error(r, 0);
  if (c == '{' && !r->past_events)
    r->state = ST_RECORD;
  else if (c == ']' && r->lead == 0)
    r->state = ST_TAIL;
  else
    r->state = ST_JUNK;
  if (r->state == ST_JUNK)
    r->strict = 0;
  return 0;
}

/* ======================================================== the scanner */

/* The length of the head with members that p[0..n) begins with, the
 * object form's head that the library writes with timebase=kineto or a
 * rank (tw__layout_build_head): '{', members, then "traceEvents":[ at
 * the end of the line; 0 if it does not. */
static size_t members_head_len(const char *p, size_t n)
{
  static const char end[] = "\"traceEvents\":[";
  const size_t el = sizeof end - 1;
  const char *nl;
  size_t len;

  if (n < 2 || p[0] != '{' || p[1] != '"' ||
      !(nl = memchr(p, '\n', n < HEAD_MAX + 1 ? n : HEAD_MAX + 1)))
    return 0;
  len = (size_t)(nl - p);
  return len > el + 2 && memcmp(nl - el, end, el) == 0 ? len : 0;
}

/* 1 if line 1 so far is the head of the form: exactly the fixed one, or
 * (object form) one with members, valid JSON, whose members the tail to
 * write then keeps. */
static int is_head(twt_reader *r, int object_form)
{
  size_t len, el = sizeof "\"traceEvents\":[" - 1;
  const char *head = tw__layout_head(object_form, &len);
  char doc[HEAD_MAX + 3];

  if (r->head_len == len && memcmp(r->head, head, len) == 0)
    return 1;
  r->head[r->head_len] = '\n';
  if (!object_form || members_head_len(r->head, r->head_len + 1) == 0)
    return 0;
  memcpy(doc, r->head, r->head_len);
  memcpy(doc + r->head_len, "]}", 2);
  if (twt_json_check(doc, r->head_len + 2, TWT_RECORD_DEPTH, NULL) != 0)
    return 0;
  /* '{', "k":v,..., "traceEvents":[ -> "]", ,"k":v,..., "}" */
  len = r->head_len - el - 2;
  r->ext_tail[0] = ']';
  r->ext_tail[1] = ',';
  memcpy(r->ext_tail + 2, r->head + 1, len);
  r->ext_tail[2 + len] = '}';
  r->ext_tail_len = len + 3;
  return 1;
}

/* "not a tracewriter trace: the first line is not '[' or '{...['" */
static int not_head(twt_reader *r, const char *what)
{
  size_t l0, l1;
  const char *h0 = tw__layout_head(0, &l0), *h1 = tw__layout_head(1, &l1);

  return fail(r, TWT_READ_ENOTTRACE, "not a tracewriter trace: %s '%.*s' "
              "or '%.*s'", what, (int)l0, h0, (int)l1, h1);
}

/* Scan line 1 in p[0..n).  Returns the bytes used, or a negative code. */
static ptrdiff_t scan_head(twt_reader *r, const char *p, size_t n)
{
  size_t i = 0;

  while (i < n) {
    char c = p[i];

    if (r->head_len == 0 &&
        (c == ' ' || c == '\0' || c == '\n' || c == '\t' || c == '\r')) {
      int nul = 0;
      size_t k = skip_space_nul(p + i, n - i, &nul);
      r->blank = 1;                 /* whitespace or NULs before a head */
      i += k ? k : 1;
      continue;
    }
    if (r->blank)
      return not_head(r, "it does not start with");
    i++;
    if (c == '\n') {
      if (is_head(r, 0))
        r->info.object_form = 0;
      else if (is_head(r, 1))
        r->info.object_form = 1;
      else
        return not_head(r, "the first line is not");
      r->info.tail = twt_read_bracket(r->info.object_form,
                                      &r->info.tail_len);
      if (r->ext_tail_len) {
        r->info.tail = r->ext_tail;
        r->info.tail_len = r->ext_tail_len;
        r->ldoc.members = r->ext_tail + 1;
        r->ldoc.members_len = r->ldoc.members_before =
          r->ext_tail_len - 2;
      }
      r->state = ST_BETWEEN;
      r->line_no = 2;
      break;
    }
    if (r->head_len == HEAD_MAX)
      return not_head(r, "the first line is not");
    r->head[r->head_len++] = c;
  }
  return (ptrdiff_t)i;
}

/* Scan the padding between lines in p[0..n), up to the first byte of a
 * line's text (not used).  Returns the bytes used, or a negative code. */
/* The record line that ended with a newline before the record did
 * (join_pending): if the next line continues it -- it begins with
 * whitespace, a quote or a closing brace, as the inner lines of a
 * pretty-printed record do, where a new record ('{', ','), the tail
 * (']') or padding (NUL) does not -- it is joined to it (the newline
 * kept: the record is compacted once whole); otherwise it is dropped,
 * cut.  0, or a negative code. */
static int join_or_drop(twt_reader *r, int c)
{
  int rc;

  r->join_pending = 0;
  if (c != ' ' && c != '\t' && c != '\r' && c != '"' && c != '}') {
    drop(r, 1, r->content);
    r->item.line = r->line_no - 1;  /* the line its newline ended */
    return 0;
  }
  if (r->view) {                    /* the line so far was not copied */
    if ((rc = line_reserve(r, r->len + 1)) != 0)
      return rc;
    memcpy(r->line, r->view, r->len);
    r->view = NULL;
  } else if ((rc = line_reserve(r, r->len + 1)) != 0) {
    return rc;
  }
  r->line[r->len++] = '\n';
  r->content = r->len;
  memset(&r->run, 0, sizeof r->run);
  r->joined = 1;
  r->state = ST_RECORD;
  return 0;
}

static ptrdiff_t scan_between(twt_reader *r, const char *p, size_t n)
{
  size_t i = 0;
  int rc;

  if (r->join_pending && n > 0) {
    if ((rc = join_or_drop(r, p[0])) != 0)
      return rc;
    if (r->state == ST_RECORD)
      return 0;                     /* the line goes on */
  }

  if (r->after_tail)
    r->strict = 0;                  /* bytes after the tail's newline */
  while (i < n) {
    int nul = 0;

    i += skip_space_nul(p + i, n - i, &nul);
    if (nul) {
      r->strict = 0;
      r->lead = 0;                  /* a NUL ends a line */
    }
    if (i == n)
      break;
    switch (p[i]) {
    case '\n':
      r->line_no++;
      r->lead = 0;
      i++;
      break;
    case '\t':
    case '\r':
      i++;
      break;
    case ',':
      if (r->first_pending)
        return first_line_error(r, 0);
      r->commas++;
      r->lead++;
      i++;
      break;
    default:
      rc = line_begin(r, p[i], r->offset + i);
      return rc ? rc : (ptrdiff_t)i;
    }
  }
  return (ptrdiff_t)i;
}

/* Scan the inside of a line in p[0..n), up to and including its newline
 * or NUL.  Returns the bytes used, or a negative code. */
static ptrdiff_t scan_line(twt_reader *r, const char *p, size_t n)
{
  const char *end = memchr(p, '\n', n);
  size_t seg = end ? (size_t)(end - p) : n;
  const char *nul = memchr(p, '\0', seg);
  int rc;

  if (nul) {
    seg = (size_t)(nul - p);
    end = nul;
  }
  if (seg > 0 && end && r->state == ST_RECORD && r->len == 0 &&
      r->run.len == 0) {
    /* A record line that lies whole in the chunk (most of them): used
     * where it is, as line_add would have kept it. */
    uint64_t commas = 0;
    size_t k = trim_end(p, seg, &commas, NULL);
    if (k > 0 && k <= r->max_record && seg - k <= WS_KEEP) {
      r->view = p;
      r->content = k;
      r->len = seg;
      r->run.len = seg - k;
      r->run.commas = commas;
    }
  }
  if (seg > 0 && !r->view) {
    if (r->state == ST_JUNK)
      junk_add(r, p, seg);
    else if ((rc = line_add(r, p, seg)) != 0)
      return rc;
  }
  if (!end)
    return (ptrdiff_t)seg;
  if ((rc = line_end(r, *end)) != 0)
    return rc;
  if (*end == '\n')
    r->line_no++;
  r->lead = 0;
  return (ptrdiff_t)seg + 1;
}

/* The first records of every document the library writes (src/layout.h):
 * the process_name record, then the clock record, each on a line of its
 * own, exactly so. */
#define FIRST_REC "{\"ph\":\"M\",\"name\":\"process_name\""
#define CLOCK_REC "{\"ph\":\"c\",\"name\":\"" TW__LAYOUT_CLOCK_NAME "\""
#define CLOCK_ID  "\"" TW__LAYOUT_CLOCK_KEY_ID "\":\"" \
                  TW__LAYOUT_CLOCK_SYNC_ID "\""
/* The head with members that the library writes (tw__layout_build_head)
 * begins so. */
#define MEMBERS_HEAD "{\"schemaVersion\":1,\"displayTimeUnit\":\"ms\","
#define SNIFF_MAX   ((size_t)1024 * 1024) /* bytes read to decide */

/* How p[0..n) compares with the start of want: 1 it begins with all of
 * want, 0 it differs, -1 it is a prefix of want (more is needed); a NUL
 * where it differs is a block of zeros after a cut (2: ours, cut). */
static int starts(const char *p, size_t n, const char *want)
{
  size_t wl = strlen(want), i;

  for (i = 0; i < n && i < wl; i++)
    if (p[i] != want[i])
      return p[i] == '\0' ? 2 : 0;
  return i == wl ? 1 : -1;
}

/* 1 if the text that begins with p[0..n) (all of it if at_end) is
 * provably the library's own: its head line (one of the heads it
 * writes), then the process_name record and the clock record with the
 * library's sync id, each on one line -- or a prefix of that, cut by a
 * crash (the data ends, or NULs or padding follow: a crash's leftovers,
 * which the crash-layout reader explains); 0 if it is anything else
 * (every other document goes to the general reader, which reads any
 * strict JSON, indented or not); -1 if more bytes are needed to tell. */
static int sniff_layout(const char *p, size_t n, int at_end)
{
  const char *q, *nl;
  size_t hl = 0, k;
  int c;

  if (n == 0)
    return at_end ? 1 : -1;
  if (p[0] == '\0')
    return 1;                       /* a writer killed as it began */
  /* The head line. */
  for (int form = 0; form < 2 && !hl; form++) {
    size_t l;
    const char *head = tw__layout_head(form, &l);
    if ((c = starts(p, n, head)) == -1 || c == 2)
      return at_end || c == 2 ? 1 : -1;
    if (c == 1 && n > l && p[l] == '\n')
      hl = l;
    else if (c == 1 && n == l)
      return at_end ? 1 : -1;
  }
  if (!hl) {
    if ((c = starts(p, n, MEMBERS_HEAD)) == -1 || c == 2)
      return at_end || c == 2 ? 1 : -1;
    if (c == 0)
      return 0;
    if (!(hl = members_head_len(p, n))) {
      if (n > HEAD_MAX || memchr(p, '\n', n))
        return 0;                   /* a line that is no head of ours */
      return at_end ? 1 : -1;
    }
  }
  /* Line 2: the process_name record; line 3: the clock record. */
  q = p + hl + 1;
  k = n - hl - 1;
  for (int line = 0; line < 2; line++) {
    size_t pad = 0;
    while (pad < k && (q[pad] == ' ' || q[pad] == '\0'))
      pad++;
    if (pad == k)
      return at_end ? 1 : -1;       /* cut here, padding after it */
    if (pad > 0)
      return memchr(q, '\0', pad) ? 1 : 0;   /* indented: not ours */
    c = starts(q, k, line ? CLOCK_REC : FIRST_REC);
    if (c != 1)
      return c == -1 ? (at_end ? 1 : -1) : c == 2;
    nl = memchr(q, '\n', k);
    if (memchr(q, '\0', nl ? (size_t)(nl - q) : k))
      return 1;                     /* cut, then zeros */
    if (!nl)
      return at_end ? 1 : -1;
    if (line && !memmem(q, (size_t)(nl - q), CLOCK_ID, sizeof CLOCK_ID - 1))
      return 0;
    k -= (size_t)(nl - q) + 1;
    q = nl + 1;
  }
  return 1;
}


/* The line the library writes most, between lines: p[0..n) begins with a
 * record that ends, on its line, with at most padding and commas, and
 * the line's newline is in p.  Then what scan_between, scan_line and
 * take_record would do, in one pass: the record checked (and its
 * members found) as its end is found, instead of finding the newline,
 * trimming the line and checking it.  Returns the bytes used (the
 * newline's too), or 0 to leave the line to them (anything else: a
 * record cut, invalid, glued to the old tail, spread over lines, too
 * long). */
static size_t layout_fast(twt_reader *r, const char *p, size_t n)
{
  size_t end, j, lim = n < r->max_record ? n : r->max_record;
  uint64_t commas = 0;
  int members = (r->flags & TWT_READ_MEMBERS) != 0;
  struct tw__json_res res;

  if (members)
    twt_rec_take(&r->rec, NULL, 0, 0, 0);
  if (!r->shapes)                 /* (out of memory: the checker alone) */
    r->shapes = tw__json_shapes_new();
  if (tw__json_check_shaped(r->shapes, p, lim, TWT_RECORD_DEPTH,
                            TW__JSON_PREFIX |
                            (members ? TW__JSON_MEMBERS : 0), NULL, 0,
                            twt_rec_take, &r->rec, &res) != 0 || res.nl)
    return 0;                       /* (spread: joined by scan_line) */
  end = res.end;
  for (j = end; j < n && j - end <= WS_KEEP; j++) {
    if (p[j] == ',')
      commas++;
    else if (p[j] != ' ' && p[j] != '\t' && p[j] != '\r')
      break;
  }
  if (j >= n || p[j] != '\n' || j - end > WS_KEEP)
    return 0;
  if (line_begin(r, '{', r->offset) != 0)
    return 0;
  r->view = p;
  r->content = end;
  r->len = j;
  r->run.len = j - end;
  r->run.commas = commas;
  /* take_record, the record known complete and not spread over lines */
  r->state = ST_BETWEEN;
  if (r->info.records == 0 ? r->commas != 0 : r->commas != 1)
    r->strict = 0;
  r->commas = commas;
  r->info.records++;
  yield(r, TWT_ITEM_RECORD, p, end);
  r->first_pending = 0;
  r->line_no++;
  r->lead = 0;
  return j + 1;
}

/* Scan p[0..n) until an item is ready (the descriptor's feed).  Returns
 * the bytes used, or a negative code. */
static ptrdiff_t layout_feed(twt_reader *r, const char *p, size_t n)
{
  size_t used = 0;

  while (used < n && !r->ready) {
    ptrdiff_t k;

    switch (r->state) {
    case ST_HEAD:
      k = scan_head(r, p + used, n - used);
      break;
    case ST_BETWEEN:
      if (p[used] == '{' && !r->lines_only && !r->join_pending &&
          !r->after_tail && !r->past_events &&
          !r->first_pending &&
          (k = (ptrdiff_t)layout_fast(r, p + used, n - used)) > 0)
        break;
      k = scan_between(r, p + used, n - used);
      break;
    case ST_RECORD:
    case ST_TAIL:
    case ST_JUNK:
      k = scan_line(r, p + used, n - used);
      break;
    default:
      k = (ptrdiff_t)(n - used);
      break;
    }
    if (k < 0)
      return k;
    used += (size_t)k;
    r->offset += (uint64_t)k;
  }
  return (ptrdiff_t)used;
}

static int layout_finish(twt_reader *r)
{
  int rc;

  if (r->state == ST_HEAD) {
    if (r->offset == 0)
      rc = fail(r, TWT_READ_ENOTTRACE, "empty%s: not a trace",
                r->info.gzip ? " once decompressed" : " file");
    else if (r->head_len == 0)      /* a writer killed as it opened it? */
      rc = fail(r, TWT_READ_ENORECORD,
                "only whitespace or NUL bytes: no record to keep");
    else if (is_head(r, 0) || is_head(r, 1))
      rc = fail(r, TWT_READ_ENORECORD,
                "cut right after its head: no record to keep");
    else
      rc = not_head(r, "the first line is not");
    twt__src_note_gzip(r);
    return rc;
  }
  if (r->join_pending && (rc = join_or_drop(r, END_OF_DATA)) != 0)
    return rc;
  if (r->state != ST_BETWEEN)
    return line_end(r, END_OF_DATA);
  if (r->info.records == 0) {
    rc = fail(r, TWT_READ_ENORECORD, "cut before the end of its first "
              "record: no record to keep");
    twt__src_note_gzip(r);
    return rc;
  }
  r->state = ST_DONE;
  r->info.ended = 1;
  r->info.strict = r->strict && r->tail_last;  /* and the source whole */
  return 0;
}

/* ======================================================= the sources */

/* 1 inside a record line that is not yet a complete record (one being
 * appended: TWT_READ_FOLLOW reads on).  Not inside a line that may be
 * complete: the bytes after it may be those of a commit that has since
 * overwritten the old tail after it. */
static int layout_in_record(const twt_reader *r)
{
  size_t len;
  int glued;

  return r->state == ST_RECORD && !record_complete(r, &len, &glued);
}

/* Chosen: read from line 1. */
static int layout_start(twt_reader *r)
{
  free(r->line);
  r->line = NULL;
  r->len = r->cap = r->content = 0;
  memset(&r->run, 0, sizeof r->run);
  r->state = ST_HEAD;
  r->blank = 0;
  r->head_len = 0;
  r->line_no = 1;
  r->line_off = 0;
  r->junk_record = 0;
  r->junk_content = r->junk_pad = 0;
  r->commas = r->lead = 0;
  r->first_pending = 1;
  r->after_tail = r->tail_last = 0;
  r->past_events = 0;
  r->ext_tail_len = 0;
  r->join_pending = r->joined = 0;
  r->view = NULL;
  r->strict = 1;
  return 0;
}

/* What it bids: sure when the text is provably ours, nothing else. */
static int layout_bid(const char *p, size_t n, int at_end)
{
  int v = sniff_layout(p, n, at_end);

  return v == 1 ? TWT_BID_PROVED : v;
}

static void layout_end(twt_reader *r)
{
  free(r->line);
  r->line = NULL;
  r->len = r->cap = r->content = 0;
}

const struct twt_front twt__front_layout = {
  "crash layout", layout_bid, layout_start, layout_feed, layout_finish,
  layout_in_record, layout_end,
};
