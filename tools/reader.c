/* reader.c -- stream the records of a tracewriter trace (.json, .json.gz)
 *
 * See reader.h for the contract.  How it works:
 *
 *  - A source gives the JSON text chunk by chunk: pread(2) of the plain
 *    file, or inflate of the gzip member as far as it goes (the output of
 *    its last bytes held back until the end: see gz_next).
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
 *  - Which front end reads the file is decided on its first chunk of
 *    JSON text (sniff): the library's head line followed by a record on
 *    one line is the crash-layout reader's; anything else goes to the
 *    general reader (jsonscan.c), which is fed the same chunks.
 *  - A record line of the layout (the most of them) is taken in one pass
 *    (layout_fast): checked, its members found and its end found by the
 *    checker, then only its padding and newline looked at; any other
 *    line goes the way above.  TWT_READ_LINES_ONLY in the environment at
 *    open turns that pass off (the tests compare both ways).
 *  - twt_reader_next feeds the current chunk to the scanner until a line
 *    ends with an item to yield, so records come one at a time, and the
 *    record's text is the chunk itself when the line lies whole in it
 *    (r->view: most lines, no copy), else the scanner's line buffer.
 */
#include "internal.h"     /* config.h first */
#include "layout.h"       /* tw__layout_head, tw__layout_tail */
#include "jsonscan.h"     /* the general front end; twt_json_check */
#include "reader.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#if defined(__GNUC__) || defined(__clang__)
# define PRINTF_LIKE(fmt, args) __attribute__((format(printf, fmt, args)))
#else
# define PRINTF_LIKE(fmt, args)
#endif

#define READ_BUF    ((size_t)64 * 1024)  /* input read size */
#define WS_KEEP     ((size_t)64 * 1024)  /* padding after text kept as is */
#define TAIL_MAX    ((size_t)4096)       /* longest tail line recognised */
#define HEAD_MAX    TW__LAYOUT_HEAD_ROOM /* the longest head */
#define MSG_MAX     (PATH_MAX + 256)
#define END_OF_DATA (-1)                 /* what ends the last line */
#define FOLLOW_MAX  16                   /* TWT_READ_FOLLOW's growths */
#define MEMBERS_MAX ((size_t)1024 * 1024) /* members of an object kept */

/* The gzip sink rewrites, at every commit, a stored final block holding
 * the tail and the trailer after the deflate data.  A commit cut within
 * its first bytes leaves the end of the old stored block and trailer
 * after the new data, and inflate may decode those stale bytes as data
 * before it fails (or runs out of input): garbage glued to the last
 * committed record would lose it.  So the output inflated from the last
 * GZ_GUARD bytes of the file (the old block and trailer are at most
 * 5 + 4 + 8 bytes) is held back.  At each block boundary among them, the
 * old block and trailer that a commit ending there would have written are
 * computed (each tail the library writes or wrote, the CRC and size of
 * the output so far); if the file is exactly that much longer and ends
 * with a suffix of them, the file is such a cut commit and only the
 * output up to that boundary is used.  Otherwise all the held output is
 * used, unless inflate failed.  The output of GZ_GUARD bytes of input is
 * bounded (258 bytes per 2 bits). */
#define GZ_GUARD    ((uint64_t)32)
#define GZ_HOLD_MAX ((size_t)256 * 1024)
#define GZ_TAILS    4                    /* the tails looked for */
#define GZ_TAIL_MAX 8                    /* room for "\n]}\n" */
_Static_assert(TW__LAYOUT_GZ_END_LEN(GZ_TAIL_MAX) <= GZ_GUARD,
               "the guard holds a whole stored block and trailer");

/* The state of inflating one gzip file. */
typedef struct gzsrc {
  z_stream z;
  int z_ready;             /* inflateInit2 done */
  unsigned char *out;      /* READ_BUF bytes: inflate's output */
  const unsigned char *in_next; /* unread input in the reader's ibuf */
  size_t in_left;
  int eof;                 /* the file is read to its size */
  uint64_t consumed;       /* compressed bytes consumed */
  int stuck;               /* calls without progress */
  int finished;            /* inflate is over */
  int released;            /* ... and the held output given */
  int clean;               /* inflate reached the end of the member */
  uint64_t guard;          /* output of input past this offset is held */
  unsigned char end[GZ_GUARD]; /* the file's last end_len bytes */
  size_t end_len;
  char tails[GZ_TAILS][GZ_TAIL_MAX]; /* the stored block's tail: "\n]"
                              and "\n]}", then 0.1's "\n]\n" and
                              "\n]}\n" */
  uLong tail_crc[GZ_TAILS]; /* crc32 of each tail */
  uLong crc;               /* crc32 of all output so far */
  uint64_t out_total;      /* all output so far */
  char *hold;              /* output held back (GZ_HOLD_MAX bytes) */
  size_t hold_len;
  size_t stale_at;         /* hold_len at the matching block boundary */
  int stale_found;         /* ... found */
  int overflow;            /* the hold overflowed: stop holding */
  const char *queued;      /* a chunk to give after the current one */
  size_t queued_len;
} gzsrc;

enum state {
  ST_HEAD,                 /* line 1 */
  ST_BETWEEN,              /* between lines: padding, commas, newlines */
  ST_RECORD,               /* in a line that began with "{" */
  ST_TAIL,                 /* in a line that began with "]" */
  ST_JUNK,                 /* in a line being skipped */
  ST_DONE                  /* the end: info final */
};

/* The padding and commas after the text of the current line so far.  The
 * first WS_KEEP bytes are kept in line[content..len); the rest counted. */
typedef struct run {
  uint64_t len;            /* bytes */
  uint64_t commas;         /* commas among them */
  uint64_t extra;          /* bytes not kept */
  int extra_odd;           /* ... some of them not spaces */
} run;

struct twt_reader {
  /* The file. */
  char *name;              /* named in messages */
  int fd;
  int own_fd;              /* close fd at the end */
  uint64_t size;           /* its size when opened (or rewound) */
  uint64_t pos;            /* the next offset to read */
  unsigned follows;        /* times size grew (TWT_READ_FOLLOW) */
  size_t max_record;
  unsigned flags;          /* TWT_READ_* */
  int err;                 /* the first error: sticky */
  char msg[MSG_MAX];       /* its message */

  /* The source of JSON text. */
  unsigned char *ibuf;     /* READ_BUF bytes read from the file */
  const char *chunk;       /* the chunk being scanned */
  size_t chunk_len, chunk_pos;
  int src_end;             /* no more chunks */
  gzsrc gz;

  /* The scanner. */
  enum state state;
  uint64_t offset;         /* JSON bytes scanned */
  int blank;               /* whitespace or NULs came before any head */
  char head[HEAD_MAX + 1];
  size_t head_len;
  char ctail[HEAD_MAX + TAIL_MAX + 4]; /* the head's members and those
                              of a tail line "],\"k\":v}" together */
  int past_events;         /* a line "],..." was read: no more events */
  char ext_tail[HEAD_MAX + 4]; /* a head with members (timebase=kineto,
                              rank): the tail that keeps them, "]",
                              members, "}" */
  size_t ext_tail_len;
  uint64_t line_no;        /* the current line, from 1 */
  uint64_t line_off;       /* offset of its text's first byte */
  char *line;              /* its text, then kept padding */
  const char *view;        /* or, for a record line that lies whole in
                              the chunk, its text there (not copied) */
  int join_pending;        /* a record line ended with a newline before
                              the record did: joined to the next line if
                              that one continues it (see can_join) */
  int joined;              /* the record line spans several lines */
  size_t len, cap, content;
  run run;
  int junk_record;         /* a junk line that began with "{" */
  uint64_t junk_content;   /* its bytes up to the last non-padding one */
  uint64_t junk_pad;       /* its padding after that */
  uint64_t commas;         /* commas since the last record */
  uint64_t lead;           /* commas on this line before its text */
  int first_pending;       /* no line of text after the head yet: the
                              first one must be a complete record */
  int after_tail;          /* a valid tail line ended with its newline */
  int tail_last;           /* the last line was a valid tail */
  int strict;              /* exactly valid so far */
  char tail[TAIL_MAX];     /* the last valid tail line */

  struct twt_read_info info;
  twt_read_item item;       /* the item to yield */
  int ready;               /* ... is there */

  twt_rec rec;              /* the members of the record yielded */

  int lines_only;          /* no layout_fast: TWT_READ_LINES_ONLY was
                              set at open (tests compare both ways) */

  /* The front end. */
  int mode;                /* MODE_*: decided on the first chunk */
  twt_scan *js;            /* the general reader */
  char *sniff;             /* the first bytes, while they do not tell
                              which front end reads them (sniff) */
  size_t sniff_len, sniff_cap;
  char *gtail;             /* its tail: "]", members, "}" */
};

enum { MODE_UNKNOWN, MODE_LAYOUT, MODE_GENERAL };

/* =========================================================== errors */

/* Record the first error, "NAME: message", and return rc. */
PRINTF_LIKE(3, 4)
static int fail(twt_reader *r, int rc, const char *fmt, ...)
{
  va_list ap;
  int n;

  if (r->err)
    return r->err;
  r->err = rc;
  n = snprintf(r->msg, sizeof r->msg, "%s: ", r->name);
  if (n >= 0 && (size_t)n < sizeof r->msg) {
    va_start(ap, fmt);
    vsnprintf(r->msg + n, sizeof r->msg - (size_t)n, fmt, ap);
    va_end(ap);
  }
  return rc;
}

/* A failed system call: -errno, "NAME: what: strerror". */
static int sys_fail(twt_reader *r, const char *what)
{
  int e = errno ? errno : EIO;

  return fail(r, -e, "%s: %s", what, strerror(e));
}

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

const char *twt_read_bracket(int object_form, size_t *len)
{
  size_t n;
  const char *t = tw__layout_tail(object_form, &n);

  while (n > 0 && t[0] == '\n') {
    t++;
    n--;
  }
  while (n > 0 && t[n - 1] == '\n')
    n--;
  *len = n;
  return t;
}

/* 1 if text[0..n) is the canonical tail of the form, or its start. */
static int is_tail_prefix(int object_form, const char *text, size_t n)
{
  size_t len;
  const char *bracket = twt_read_bracket(object_form, &len);

  return n <= len && memcmp(text, bracket, n) == 0;
}

/* Yield an item at the end of the current call. */
static void yield(twt_reader *r, int kind, const char *text, size_t len)
{
  r->item.rec = NULL;
  if (kind == TWT_ITEM_RECORD && (r->flags & TWT_READ_MEMBERS)) {
    r->rec.text = text;
    r->rec.len = len;
    r->item.rec = &r->rec;
  }
  r->item.kind = kind;
  r->item.text = text;
  r->item.len = len;
  r->item.offset = r->line_off;
  r->item.line = r->line_no;
  r->ready = 1;
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
    r->info.members = r->info.tail + 1;
    r->info.members_len = r->info.tail_len - 2;
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
        r->info.members = r->ext_tail + 1;
        r->info.members_len = r->info.members_before =
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

static void note_gzip(twt_reader *r);
static int next_chunk(twt_reader *r);

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

/* Feed p[0..n) to the general reader until an item is ready. */
static ptrdiff_t scan_general(twt_reader *r, const char *p, size_t n)
{
  twt_scan_rec rec;
  int ready;
  ptrdiff_t k = twt_scan_feed(r->js, p, n, &rec, &ready);

  r->info.object_form = twt_scan_info(r->js)->object_form;
  r->info.members = twt_scan_info(r->js)->members;
  r->info.members_len = twt_scan_info(r->js)->members_len;
  r->info.big = twt_scan_info(r->js)->big;
  r->info.nbig = twt_scan_info(r->js)->nbig;
  r->info.members_before = twt_scan_info(r->js)->events_found ?
                           twt_scan_info(r->js)->members_before :
                           r->info.members_len;

  if (k < 0) {
    int rc = (int)k == TWT_SCAN_ETOOBIG ? TWT_READ_ELINE :
             (int)k == TWT_SCAN_ENOTTRACE ? TWT_READ_ENOTTRACE : (int)k;
    return fail(r, rc, "%s", twt_scan_error(r->js));
  }
  if (ready) {
    r->line_off = rec.offset;
    r->line_no = 0;
    if (rec.dropped) {
      r->info.dropped_records++;
      r->info.dropped_bytes += rec.len;
      if (r->flags & TWT_READ_DROPPED)
        yield(r, TWT_ITEM_CUT, NULL, rec.len);
    } else {
      r->info.records++;
      yield(r, TWT_ITEM_RECORD, rec.text, rec.len);
    }
  }
  return k;
}

/* The end of the data, for the general reader. */
static int finish_general(twt_reader *r)
{
  const struct twt_scan_info *in = twt_scan_info(r->js);
  int rc = twt_scan_end(r->js);
  size_t len;

  if (rc != 0) {
    rc = rc == TWT_SCAN_ENOTTRACE ? TWT_READ_ENOTTRACE : rc;
    fail(r, rc, "%s", twt_scan_error(r->js));
    note_gzip(r);
    return rc;
  }
  if (in->records == 0 && in->cut) {
    rc = fail(r, TWT_READ_ENORECORD, "cut before the end of its first "
              "record: no record to keep");
    note_gzip(r);
    return rc;
  }
  r->info.object_form = in->object_form;
  r->info.bom = in->bom;
  r->info.skipped = in->skipped;
  r->info.stray_commas = in->stray_commas;
  r->info.members_dropped = in->members_dropped;
  r->info.cut = in->cut;
  r->info.stopped = in->stopped;
  r->info.stop_offset = in->stop_offset;
  r->info.stop_why = in->stop_why;
  r->info.had_tail = in->done;
  /* The tail to write: the bracket, and for the object form the other
   * members, without the whitespace between their tokens. */
  free(r->gtail);
  len = in->members_len;
  if (!(r->gtail = malloc(len + 3)))
    return fail(r, -ENOMEM, "out of memory");
  r->gtail[0] = ']';
  len = 1 + twt_json_compact(r->gtail + 1, in->members ? in->members : "",
                             len);
  if (len > 1) {                  /* in the order of their keys */
    char *sorted = malloc(len);
    if (sorted && twt_rec_sort_members(sorted, r->gtail + 1, len - 1))
      memcpy(r->gtail + 1, sorted, len - 1);
    free(sorted);
  }
  if (in->object_form)
    r->gtail[len++] = '}';
  r->gtail[len] = '\0';
  r->info.tail = r->gtail;
  r->info.tail_len = len;
  r->state = ST_DONE;
  r->info.ended = 1;
  r->info.strict = in->strict && in->done &&
                   (!r->info.gzip || (r->gz.clean &&
                                      r->info.gzip_members == 1 &&
                                      r->info.gzip_trailing == 0));
  return 0;
}

/* Set the front end: the crash-layout reader (layout) or the general
 * one, unless a flag forces one. */
static int choose(twt_reader *r, int layout)
{
  if (r->flags & TWT_READ_LAYOUT)
    r->mode = MODE_LAYOUT;
  else if (r->flags & (TWT_READ_GENERAL | TWT_READ_MEMBERS_ONLY))
    r->mode = MODE_GENERAL;
  else
    r->mode = layout ? MODE_LAYOUT : MODE_GENERAL;
  if (r->mode == MODE_GENERAL) {
    r->info.general = 1;
    if (!(r->js = twt_scan_new(r->max_record, MEMBERS_MAX)))
      return fail(r, -ENOMEM, "out of memory");
    if (r->flags & TWT_READ_MEMBERS_ONLY)
      twt_scan_members_only(r->js);
    else if (r->flags & TWT_READ_MEMBERS)
      twt_scan_on_member(r->js, twt_rec_take, &r->rec);
  }
  return 0;
}

/* Decide the front end on the text's first bytes: the current chunk, or
 * (when it does not tell) as many more as it takes, up to SNIFF_MAX,
 * kept in r->sniff, which then becomes the chunk scanned.  0 or a
 * code. */
static int sniff(twt_reader *r)
{
  int v, rc;

  if (r->flags & (TWT_READ_LAYOUT | TWT_READ_GENERAL |
                  TWT_READ_MEMBERS_ONLY))
    return choose(r, 0);
  for (;;) {
    const char *p = r->chunk ? r->chunk + r->chunk_pos : "";
    size_t n = r->chunk_len - r->chunk_pos;

    if (!r->sniff_len && (v = sniff_layout(p, n, r->src_end)) >= 0)
      return choose(r, v);          /* the chunk tells: scanned in place */
    if (n > 0) {
      if (r->sniff_len + n > r->sniff_cap) {
        size_t cap = r->sniff_len + n + READ_BUF;
        char *q = realloc(r->sniff, cap);
        if (!q)
          return fail(r, -ENOMEM, "out of memory");
        r->sniff = q;
        r->sniff_cap = cap;
      }
      memcpy(r->sniff + r->sniff_len, p, n);
      r->sniff_len += n;
      r->chunk_pos = r->chunk_len;
    }
    v = sniff_layout(r->sniff, r->sniff_len, r->src_end);
    if (v >= 0 || r->src_end || r->sniff_len >= SNIFF_MAX) {
      r->chunk = r->sniff;
      r->chunk_len = r->sniff_len;
      r->chunk_pos = 0;
      return choose(r, v == 1);
    }
    if ((rc = next_chunk(r)) != 0)
      return rc;
  }
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
  int members = (r->flags & TWT_READ_MEMBERS) != 0, spread;

  if (members)
    twt_rec_take(&r->rec, NULL, 0, 0, 0);
  if (twt_json_check_prefix(p, lim, TWT_RECORD_DEPTH, &end, &spread, NULL,
                            members ? twt_rec_take : NULL, &r->rec) != 0 ||
      spread)
    return 0;                       /* (spread: joined by scan_line) */
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

/* Scan p[0..n) until an item is ready.  Returns the bytes used, or a
 * negative code. */
static ptrdiff_t scan(twt_reader *r, const char *p, size_t n)
{
  size_t used = 0;

  if (r->mode == MODE_GENERAL) {
    ptrdiff_t k = scan_general(r, p, n);
    if (k > 0)
      r->offset += (uint64_t)k;
    return k;
  }

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

/* Add to the message of an error at the end of a damaged gzip member. */
static void note_gzip(twt_reader *r)
{
  size_t l = strlen(r->msg);

  if (r->gz.finished && (r->info.gzip_cut || r->info.gzip_corrupt))
    snprintf(r->msg + l, sizeof r->msg - l, " (gzip data %s after %"
             PRIu64 " bytes of JSON)", r->info.gzip_corrupt ? "corrupt" :
             "cut", r->offset);
}

/* The end of the data: classify the last line, then check the whole. */
static int scan_finish(twt_reader *r)
{
  int rc;

  if (r->mode == MODE_GENERAL)
    return finish_general(r);
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
    note_gzip(r);
    return rc;
  }
  if (r->join_pending && (rc = join_or_drop(r, END_OF_DATA)) != 0)
    return rc;
  if (r->state != ST_BETWEEN)
    return line_end(r, END_OF_DATA);
  if (r->info.records == 0) {
    rc = fail(r, TWT_READ_ENORECORD, "cut before the end of its first "
              "record: no record to keep");
    note_gzip(r);
    return rc;
  }
  r->state = ST_DONE;
  r->info.ended = 1;
  r->info.strict = r->strict && r->tail_last &&
                   (!r->info.gzip || (r->gz.clean &&
                                      r->info.gzip_members == 1 &&
                                      r->info.gzip_trailing == 0));
  return 0;
}

/* ======================================================= the sources */

/* With TWT_READ_FOLLOW, at the end of a plain file's size inside a record
 * line that is not yet a complete record (one being appended): 1 if the
 * file has grown since, and size with it.  Not inside a line that may be
 * complete: the bytes after it may be those of a commit that has since
 * overwritten the old tail after it. */
static int follow(twt_reader *r)
{
  struct stat st;
  size_t len;
  int glued;

  if (!(r->flags & TWT_READ_FOLLOW) || r->info.gzip ||
      r->follows >= FOLLOW_MAX || r->state != ST_RECORD ||
      record_complete(r, &len, &glued) || fstat(r->fd, &st) != 0 ||
      (uint64_t)st.st_size <= r->size)
    return 0;
  r->follows++;
  r->size = (uint64_t)st.st_size;
  r->info.input_bytes = r->size;
  return 1;
}

/* pread(2) of up to size bytes at r->pos, not past the file's size at
 * open, retrying EINTR.  The bytes read, 0 at the end, or a code. */
static ssize_t read_at(twt_reader *r, void *buf, size_t size)
{
  if (r->pos >= r->size && !follow(r))
    return 0;
  if (size > r->size - r->pos)
    size = (size_t)(r->size - r->pos);
  for (;;) {
    ssize_t n = pread(r->fd, buf, size, (off_t)r->pos);
    if (n == 0 && size > 0 && !(r->flags & TWT_READ_FOLLOW)) {
      /* Its end came before the size it had at open: another program
       * cut it (or emptied it) while it was read. */
      struct stat st;
      uint64_t now = fstat(r->fd, &st) == 0 ? (uint64_t)st.st_size : 0;
      return fail(r, TWT_READ_ESHRANK, "the file shrank while it was "
                  "read: %" PRIu64 " bytes at open, %" PRIu64 " at byte %"
                  PRIu64 " (another program cut or rewrote it); read it "
                  "again", r->size, now, r->pos);
    }
    if (n >= 0) {
      r->pos += (uint64_t)n;
      return n;
    }
    if (errno != EINTR)
      return sys_fail(r, "read");
  }
}

/* The next chunk of a plain file: *n = 0 at the end.  0 or a code. */
static int plain_next(twt_reader *r, const char **p, size_t *n)
{
  ssize_t k = read_at(r, r->ibuf, READ_BUF);

  if (k < 0)
    return (int)k;
  *p = (const char *)r->ibuf;
  *n = (size_t)k;
  return 0;
}

static void gz_end(twt_reader *r)
{
  if (r->gz.z_ready)
    inflateEnd(&r->gz.z);
  r->gz.z_ready = 0;
  free(r->gz.hold);
  free(r->gz.out);
  r->gz.hold = NULL;
  r->gz.out = NULL;
}

static int gz_start(twt_reader *r)
{
  gzsrc *g = &r->gz;
  int zr;

  memset(g, 0, sizeof *g);
  g->guard = r->size > GZ_GUARD ? r->size - GZ_GUARD : 0;
  g->crc = crc32(0, NULL, 0);
  for (int i = 0; i < GZ_TAILS; i++) {
    size_t len;
    const char *bracket = twt_read_bracket(i % 2, &len);
    snprintf(g->tails[i], GZ_TAIL_MAX, "\n%.*s%s", (int)len, bracket,
             i < 2 ? "" : "\n");
    g->tail_crc[i] = crc32(crc32(0, NULL, 0),
                           (const unsigned char *)g->tails[i],
                           (uInt)strlen(g->tails[i]));
  }
  g->end_len = (size_t)(r->size < GZ_GUARD ? r->size : GZ_GUARD);
  if (pread(r->fd, g->end, g->end_len, (off_t)(r->size - g->end_len)) !=
      (ssize_t)g->end_len)
    g->end_len = 0;
  if (!(g->out = malloc(READ_BUF)))
    return fail(r, -ENOMEM, "out of memory");
  if ((zr = inflateInit2(&g->z, 16 + 15)) != Z_OK)
    return fail(r, zr == Z_MEM_ERROR ? -ENOMEM : TWT_READ_EZLIB,
                "inflateInit2 failed (zlib %s)", zlibVersion());
  g->z_ready = 1;
  return 0;
}

/* n bytes of output, inflated from input up to g->consumed: given at once
 * (*p, *pn) or held back. */
static int gz_output(twt_reader *r, const char *out, size_t n,
                     const char **p, size_t *pn)
{
  gzsrc *g = &r->gz;

  if (n == 0)
    return 0;
  g->crc = crc32(g->crc, (const unsigned char *)out, (uInt)n);
  g->out_total += n;
  if (g->consumed <= g->guard || g->overflow) {
    *p = out;
    *pn = n;
    return 0;
  }
  if (!g->hold && !(g->hold = malloc(GZ_HOLD_MAX)))
    return fail(r, -ENOMEM, "out of memory");
  if (n > GZ_HOLD_MAX - g->hold_len) {
    /* More than GZ_GUARD bytes can make: this is no stale tail.  Give
     * what was held, then this. */
    g->overflow = 1;
    g->stale_found = 0;
    *p = g->hold;
    *pn = g->hold_len;
    g->hold_len = 0;                /* not held any more */
    g->queued = out;
    g->queued_len = n;
    return 0;
  }
  memcpy(g->hold + g->hold_len, out, n);
  g->hold_len += n;
  return 0;
}

/* At a block boundary, consumed bytes into the file: is the rest of the
 * file what is left of the stored block and trailer that a commit ending
 * here wrote? */
static void gz_boundary(twt_reader *r)
{
  gzsrc *g = &r->gz;

  if (g->overflow || g->consumed < g->guard)
    return;
  for (int i = 0; i < GZ_TAILS; i++) {
    size_t tl = strlen(g->tails[i]), el = TW__LAYOUT_GZ_END_LEN(tl), m;
    unsigned char e[TW__LAYOUT_GZ_END_LEN(GZ_TAIL_MAX)];
    uLong crc;

    if (r->size - g->consumed != el || el > g->end_len)
      continue;
    crc = crc32_combine(g->crc, g->tail_crc[i], (z_off_t)tl);
    tw__layout_gzip_end(e, g->tails[i], tl, (uint32_t)crc,
                        (uint32_t)(g->out_total + tl));
    for (m = 0; m < el && g->end[g->end_len - 1 - m] == e[el - 1 - m]; m++)
      continue;
    if (m > 0) {
      g->stale_found = 1;
      g->stale_at = g->hold_len;
    }
  }
}

/* Inflate is over: decide what of the held output is used. */
static void gz_finish(twt_reader *r)
{
  gzsrc *g = &r->gz;
  size_t use = g->hold_len;

  g->finished = 1;
  if (!g->clean && g->stale_found) {
    use = g->stale_at;
    r->info.gzip_stale = 1;
  } else if (r->info.gzip_corrupt) {
    use = 0;
  }
  r->info.gzip_discarded = g->hold_len - use;
  g->hold_len = use;
  if (g->z_ready)
    inflateEnd(&g->z);
  g->z_ready = 0;
}

/* At the end of a gzip member: 1 if another one follows (its magic
 * bytes), with inflate ready for it, as gzip -d reads several. */
static int gz_next_member(twt_reader *r)
{
  gzsrc *g = &r->gz;
  unsigned char magic[2];

  if (r->size - g->consumed < 18 ||
      pread(r->fd, magic, 2, (off_t)g->consumed) != 2 ||
      magic[0] != 0x1f || magic[1] != 0x8b ||
      inflateReset(&g->z) != Z_OK)
    return 0;
  g->crc = crc32(0, NULL, 0);
  g->out_total = 0;
  return 1;
}

/* The next chunk of a gzip file: *n = 0 at the end.  0 or a code. */
static int gz_next(twt_reader *r, const char **p, size_t *n)
{
  gzsrc *g = &r->gz;

  *n = 0;
  if (g->queued) {
    *p = g->queued;
    *n = g->queued_len;
    g->queued = NULL;
    return 0;
  }
  while (!g->finished) {
    size_t give, used, produced;
    int zr, rc;

    if (g->in_left == 0 && !g->eof) {
      ssize_t k = read_at(r, r->ibuf, READ_BUF);
      if (k < 0)
        return (int)k;
      g->eof = k == 0;
      g->in_next = r->ibuf;
      g->in_left = (size_t)k;
    }
    /* Never cross the guard in one call: what comes before it is given
     * at once, what comes after it is held. */
    give = g->in_left;
    if (g->consumed < g->guard && give > g->guard - g->consumed)
      give = (size_t)(g->guard - g->consumed);
    g->z.next_in = (unsigned char *)g->in_next;
    g->z.avail_in = (uInt)give;
    g->z.next_out = g->out;
    g->z.avail_out = (uInt)READ_BUF;
    zr = inflate(&g->z, Z_BLOCK);
    used = give - g->z.avail_in;
    produced = READ_BUF - g->z.avail_out;
    g->in_next += used;
    g->in_left -= used;
    g->consumed += used;
    if (zr == Z_DATA_ERROR || zr == Z_NEED_DICT)
      r->info.gzip_corrupt = 1;     /* keep what inflated before */
    if ((rc = gz_output(r, (char *)g->out, produced, p, n)) != 0)
      return rc;
    if (r->info.gzip_corrupt) {
      gz_finish(r);
    } else if (zr == Z_STREAM_END && ++r->info.gzip_members &&
               gz_next_member(r)) {
      g->clean = 0;                 /* another member follows */
    } else if (zr == Z_STREAM_END) {
      g->clean = 1;
      r->info.gzip_trailing = r->size - g->consumed;
      gz_finish(r);
    } else if (zr == Z_MEM_ERROR) {
      return fail(r, -ENOMEM, "out of memory in inflate");
    } else if (zr == Z_STREAM_ERROR) {
      return fail(r, TWT_READ_EZLIB, "inflate failed");
    } else {
      if (g->z.data_type & 128)
        gz_boundary(r);
      if (used == 0 && produced == 0) {
        if (g->eof && g->in_left == 0)
          r->info.gzip_cut = 1;     /* Z_BUF_ERROR: the data ended */
        else if (++g->stuck > 4)    /* cannot happen; do not spin */
          r->info.gzip_corrupt = 1;
        if (r->info.gzip_cut || r->info.gzip_corrupt)
          gz_finish(r);
      } else {
        g->stuck = 0;
      }
    }
    if (*n > 0)
      return 0;
  }
  if (!g->released) {
    g->released = 1;
    *p = g->hold;
    *n = g->hold_len;
  }
  return 0;
}

/* Make the next chunk current; r->src_end at the end. */
static int next_chunk(twt_reader *r)
{
  const char *p = NULL;
  size_t n = 0;
  int rc = r->info.gzip ? gz_next(r, &p, &n) : plain_next(r, &p, &n);

  if (rc != 0)
    return rc;
  r->chunk = p;
  r->chunk_len = n;
  r->chunk_pos = 0;
  if (n == 0)
    r->src_end = 1;
  return 0;
}

/* ============================================================ the API */

/* Reset the reader to the start of its file. */
static int start(twt_reader *r)
{
  unsigned char magic[2];
  struct stat st;

  gz_end(r);
  free(r->line);
  r->line = NULL;
  r->len = r->cap = r->content = 0;
  r->err = 0;
  r->msg[0] = '\0';
  memset(&r->info, 0, sizeof r->info);
  memset(&r->run, 0, sizeof r->run);
  r->pos = 0;
  r->follows = 0;
  r->chunk = NULL;
  r->chunk_len = r->chunk_pos = 0;
  r->src_end = 0;
  r->state = ST_HEAD;
  r->offset = 0;
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
  r->ready = 0;
  r->mode = MODE_UNKNOWN;
  r->sniff_len = 0;
  twt_scan_free(r->js);
  r->js = NULL;

  if (fstat(r->fd, &st) != 0)
    return sys_fail(r, "stat");
  if (S_ISDIR(st.st_mode))
    return fail(r, -EISDIR, "is a directory");
  if (!S_ISREG(st.st_mode))
    return fail(r, -EINVAL, "not a regular file");
  r->size = (uint64_t)st.st_size;
  r->info.input_bytes = r->size;
  if (r->size == 0)
    return fail(r, TWT_READ_ENOTTRACE, "empty file: not a trace");
  r->info.gzip = pread(r->fd, magic, 2, 0) == 2 && magic[0] == 0x1f &&
                 magic[1] == 0x8b;
  if (r->info.gzip)
    return gz_start(r);
  return 0;
}

/* The reader of fd, named name: allocated and started, or NULL with the
 * message in err. */
static int open_reader(twt_reader **rp, int fd, int own_fd, const char *name,
                       const struct twt_read_options *opts,
                       char *err, size_t errsize)
{
  twt_reader *r = calloc(1, sizeof *r);
  int rc;

  *rp = NULL;
  if (!r || !(r->name = strdup(name)) || !(r->ibuf = malloc(READ_BUF))) {
    if (r) {
      free(r->name);
      free(r);
    }
    if (own_fd)
      close(fd);
    if (err && errsize)
      snprintf(err, errsize, "%s: out of memory", name);
    return -ENOMEM;
  }
  r->fd = fd;
  r->own_fd = own_fd;
  r->lines_only = getenv("TWT_READ_LINES_ONLY") != NULL;
  r->max_record = TWT_READ_DEFAULT_MAX_RECORD;
  if (opts) {
    if (opts->max_record)
      r->max_record = opts->max_record < TWT_READ_MIN_MAX_RECORD ?
                      TWT_READ_MIN_MAX_RECORD : opts->max_record;
    if (r->max_record > SIZE_MAX / 4)  /* no overflow in the sums */
      r->max_record = SIZE_MAX / 4;
    r->flags = opts->flags;
  }
  if ((rc = start(r)) != 0) {
    if (err && errsize)
      snprintf(err, errsize, "%s", r->msg);
    twt_reader_close(r);
    return rc;
  }
  *rp = r;
  return 0;
}

int twt_reader_open(twt_reader **rp, const char *path,
                    const struct twt_read_options *opts,
                    char *err, size_t errsize)
{
  int fd, flags;

  if (err && errsize)
    err[0] = '\0';
  *rp = NULL;
  if (!path) {
    if (err && errsize)
      snprintf(err, errsize, "(null): no file name");
    return -EINVAL;
  }
  /* O_NONBLOCK: a FIFO must not block the open; it is refused below. */
  if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0) {
    int e = errno;
    if (err && errsize)
      snprintf(err, errsize, "%s: cannot open: %s", path, strerror(e));
    return -e;
  }
  if ((flags = fcntl(fd, F_GETFL)) >= 0)
    (void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return open_reader(rp, fd, 1, path, opts, err, errsize);
}

int twt_reader_open_fd(twt_reader **rp, int fd, const char *name,
                       const struct twt_read_options *opts,
                       char *err, size_t errsize)
{
  if (err && errsize)
    err[0] = '\0';
  return open_reader(rp, fd, 0, name ? name : "(fd)", opts, err, errsize);
}

int twt_reader_next(twt_reader *r, twt_read_item *item)
{
  int rc;

  while (!r->err) {
    if (r->ready) {
      r->ready = 0;
      *item = r->item;
      return 1;
    }
    if (r->state == ST_DONE)
      return 0;
    if (r->mode == MODE_UNKNOWN && (r->chunk_pos < r->chunk_len ||
                                    r->src_end)) {
      if ((rc = sniff(r)) != 0)
        return rc;
      continue;
    }
    if (r->chunk_pos < r->chunk_len) {
      ptrdiff_t k = scan(r, r->chunk + r->chunk_pos,
                         r->chunk_len - r->chunk_pos);
      if (k < 0)
        return (int)k;
      r->chunk_pos += (size_t)k;
    } else if (!r->src_end) {
      if ((rc = next_chunk(r)) != 0)
        return rc;
    } else if ((rc = scan_finish(r)) != 0) {
      return rc;
    }
    r->info.json_bytes = r->offset;
  }
  return r->err;
}

int twt_reader_rewind(twt_reader *r)
{
  return start(r);
}

const struct twt_read_info *twt_reader_info(const twt_reader *r)
{
  return &r->info;
}

const char *twt_reader_error(const twt_reader *r)
{
  return r->msg;
}

int twt_reader_fd(const twt_reader *r)
{
  return r->fd;
}

void twt_reader_close(twt_reader *r)
{
  if (!r)
    return;
  gz_end(r);
  if (r->own_fd && r->fd >= 0)
    close(r->fd);
  twt_scan_free(r->js);
  free(r->sniff);
  free(r->gtail);
  free(r->line);
  free(r->ibuf);
  free(r->name);
  free(r);
}
