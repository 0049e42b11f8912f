/* repair.c -- "tracewriter repair": make a crashed trace strictly valid
 *
 * See repair.h for the contract.  How it works:
 *
 *  - The input (plain, or gzip inflated as far as it goes) is streamed
 *    through a scanner that sees it line by line: line 1 must be the head
 *    exactly; every later line is a record ("{...}" with separating commas
 *    and padding around it), padding (whitespace, commas), the tail ("]"
 *    or "]}" or any "]..." that closes the head), or junk.  A record line
 *    is kept if, stripped of its commas and padding, it is one strictly
 *    valid JSON object (tw__json_validate); the others are dropped and
 *    counted.  Records after a dropped line are kept too: the mmap sink
 *    commits every completed record, and a half-copied record may sit
 *    between complete ones.
 *  - The scanner also decides whether the input is already exactly valid:
 *    the head, records separated by exactly one comma, padding only where
 *    JSON allows whitespace, one tail line ending with a single newline
 *    and nothing after it (Perfetto rejects bytes after the final "]").
 *  - Pass 1 only checks; it runs when the file may be valid (a plain file
 *    that ends with "]\n" or "}\n", and every gzip file).  A valid file is
 *    left alone.  Otherwise pass 2 scans again and writes head + kept
 *    records + tail into a temporary file next to the target (created on
 *    the first record, so a file that is not a trace leaves nothing
 *    behind), fsyncs it and renames it over the target.
 *
 * Memory: a 64 KiB read buffer (and one for inflate), a 64 KiB output
 * buffer, zlib's state, and one line: at most max_line bytes of content
 * plus 64 KiB of trailing whitespace; longer padding (the mmap sink pads
 * with up to a chunk of spaces) is counted, not stored.
 */
#include "internal.h"     /* config.h first; tw__json_validate */
#include "repair.h"
#include "rotate.h"     /* tw__open_directory_of */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define PROGRAM "tracewriter"

#if defined(__GNUC__) || defined(__clang__)
# define PRINTF_LIKE(fmt, args) __attribute__((format(printf, fmt, args)))
#else
# define PRINTF_LIKE(fmt, args)
#endif

#define READ_BUF   ((size_t)64 * 1024)  /* input read size */
#define OUT_BUF    ((size_t)64 * 1024)  /* output buffer */
#define WS_KEEP    ((size_t)64 * 1024)  /* trailing whitespace kept as is */
#define TAIL_MAX   ((size_t)4096)       /* longest tail line recognised */
#define HEAD_MAX   16                   /* strlen of the object head */
#define HEAD_ARRAY "["
#define HEAD_OBJECT "{\"traceEvents\":["
#define TAIL_ARRAY "]"
#define TAIL_OBJECT "]}"
#define DEFAULT_GZIP_LEVEL 6

enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

/* ============================================================= the job */

/* One repair: where messages go and what is reported. */
typedef struct job {
  const char *in;          /* input path, named in messages */
  char *err;               /* message buffer (may be NULL) */
  size_t errsize;
  int failed;              /* a message was written: keep the first */
  struct tw_repair_report *rep;
  const struct tw_repair_options *opts;
} job;

/* Write "IN: message" into the job's error buffer (the first one only)
 * and return rc. */
PRINTF_LIKE(3, 4)
static int job_error(job *j, int rc, const char *fmt, ...)
{
  va_list ap;
  int n;

  if (j->failed || !j->err || j->errsize == 0)
    return rc;
  j->failed = 1;
  n = snprintf(j->err, j->errsize, "%s: ", j->in);
  if (n >= 0 && (size_t)n < j->errsize) {
    va_start(ap, fmt);
    vsnprintf(j->err + n, j->errsize - (size_t)n, fmt, ap);
    va_end(ap);
  }
  return rc;
}

/* A failed system call on path: -errno with "IN: what PATH: strerror". */
static int sys_error(job *j, const char *what, const char *path)
{
  int e = errno ? errno : EIO;

  if (path && strcmp(path, j->in) != 0)
    job_error(j, -e, "%s %s: %s", what, path, strerror(e));
  else
    job_error(j, -e, "%s: %s", what, strerror(e));
  return -e;
}

/* ========================================================== the output */

/* Where the repaired bytes go: a temporary file renamed over the target at
 * the end, or (direct) the target itself when it is not a regular file.
 * Opened lazily at the first byte.  Plain or gzip. */
typedef struct outfile {
  job *j;
  const char *target;      /* the final path */
  char *tmp;               /* the temporary file, while it exists */
  int fd;                  /* -1 until opened */
  int direct;              /* write target itself (a device, a FIFO) */
  int set_mode;            /* give the file mode (and owner) below */
  mode_t mode;
  int set_owner;
  uid_t uid;
  gid_t gid;
  int gzip;                /* deflate into one gzip member */
  int level;
  z_stream z;
  int z_ready;             /* deflateInit2 done */
  unsigned char *buf;      /* OUT_BUF bytes: the output buffer */
  size_t used;             /* bytes pending in buf */
  uint64_t bytes;          /* bytes written to the file */
} outfile;

/* Write all of data to fd, retrying EINTR and short writes.  0 or -1
 * (errno set). */
static int write_all(int fd, const void *data, size_t len)
{
  const char *p = data;

  while (len > 0) {
    ssize_t k = write(fd, p, len);
    if (k < 0) {
      if (errno == EINTR)
        continue;
      return -1;
    }
    if (k == 0) {
      errno = EIO;
      return -1;
    }
    p += k;
    len -= (size_t)k;
  }
  return 0;
}

/* A pseudo-random 32-bit value for temporary names. */
static uint32_t name_bits(unsigned attempt)
{
  static unsigned counter;
  struct timespec ts;
  uint64_t x;

  clock_gettime(CLOCK_REALTIME, &ts);
  x = (uint64_t)getpid() * UINT64_C(0x9E3779B97F4A7C15) ^
      (uint64_t)ts.tv_nsec * UINT64_C(0xBF58476D1CE4E5B9) ^
      (uint64_t)ts.tv_sec ^
      ((uint64_t)__atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED) << 40) ^
      attempt;
  x ^= x >> 31;
  x *= UINT64_C(0x94D049BB133111EB);
  x ^= x >> 29;
  return (uint32_t)x;
}

/* Create the temporary file ".NAME.repair-XXXXXXXX" beside target, with
 * mode 0666 less the umask.  0, or a negative errno with the message. */
static int create_temp(outfile *o)
{
  const char *slash = strrchr(o->target, '/');
  int dir_len = slash ? (int)(slash - o->target) + 1 : 0;
  const char *base = slash ? slash + 1 : o->target;
  size_t size = strlen(o->target) + 32;

  if (!(o->tmp = malloc(size)))
    return job_error(o->j, -ENOMEM, "out of memory");
  for (unsigned attempt = 0; attempt < 100; attempt++) {
    /* Keep the name under NAME_MAX however long base is. */
    snprintf(o->tmp, size, "%.*s.%.200s.repair-%08" PRIx32, dir_len,
             o->target, base, name_bits(attempt));
    o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (o->fd >= 0)
      return 0;
    if (errno != EEXIST)
      break;
  }
  {
    int rc = sys_error(o->j, "cannot create a temporary file", o->tmp);
    free(o->tmp);
    o->tmp = NULL;
    return rc;
  }
}

/* Open the output: the temporary file (with the target's mode and owner)
 * or the target itself; set up deflate.  0 or a negative code. */
static int out_open(outfile *o)
{
  int rc;

  o->buf = malloc(OUT_BUF);
  if (!o->buf)
    return job_error(o->j, -ENOMEM, "out of memory");
  if (o->direct) {
    o->fd = open(o->target, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (o->fd < 0)
      return sys_error(o->j, "cannot open", o->target);
  } else {
    if ((rc = create_temp(o)) != 0)
      return rc;
    if (o->set_mode && fchmod(o->fd, o->mode) != 0)
      return sys_error(o->j, "cannot set the mode of", o->tmp);
    /* Keep the owner when we may (root repairing someone's trace). */
    if (o->set_owner && fchown(o->fd, o->uid, o->gid) != 0) {
      /* not an error: the file is ours */
    }
  }
  if (o->gzip) {
    memset(&o->z, 0, sizeof o->z);
    rc = deflateInit2(&o->z, o->level, Z_DEFLATED, 16 + 15, 8,
                      Z_DEFAULT_STRATEGY);
    if (rc != Z_OK)
      return job_error(o->j, rc == Z_MEM_ERROR ? -ENOMEM : TW_REPAIR_EZLIB,
                       "deflateInit2 failed (zlib %s)", zlibVersion());
    o->z_ready = 1;
  }
  return 0;
}

static int out_flush_buf(outfile *o)
{
  if (o->used && write_all(o->fd, o->buf, o->used) != 0)
    return sys_error(o->j, "write", o->tmp ? o->tmp : o->target);
  o->bytes += o->used;
  o->used = 0;
  return 0;
}

/* Deflate z's pending input with flush into buf, writing every full
 * buffer.  0 or a negative code. */
static int out_deflate(outfile *o, int flush)
{
  int rc;

  do {
    o->z.next_out = o->buf + o->used;
    o->z.avail_out = (uInt)(OUT_BUF - o->used);
    rc = deflate(&o->z, flush);
    if (rc == Z_STREAM_ERROR)
      return job_error(o->j, TW_REPAIR_EZLIB, "deflate failed");
    o->used = OUT_BUF - o->z.avail_out;
    if (o->used == OUT_BUF && (rc = out_flush_buf(o)) != 0)
      return rc;
    /* Z_BUF_ERROR: no progress possible, not fatal (more input comes). */
  } while (o->z.avail_in > 0 || (flush == Z_FINISH && rc != Z_STREAM_END) ||
           o->z.avail_out == 0);
  return 0;
}

/* Append len bytes to the output, opening it first if needed. */
static int out_write(outfile *o, const void *data, size_t len)
{
  int rc;

  if (o->fd < 0 && (rc = out_open(o)) != 0)
    return rc;
  if (o->gzip) {
    const unsigned char *p = data;
    while (len > 0) {               /* avail_in is a uInt */
      size_t part = len > (size_t)1 << 30 ? (size_t)1 << 30 : len;
      o->z.next_in = (unsigned char *)p;
      o->z.avail_in = (uInt)part;
      if ((rc = out_deflate(o, Z_NO_FLUSH)) != 0)
        return rc;
      p += part;
      len -= part;
    }
    return 0;
  }
  if (len > OUT_BUF - o->used) {
    if ((rc = out_flush_buf(o)) != 0)
      return rc;
    if (len >= OUT_BUF) {           /* a big record: straight through */
      if (write_all(o->fd, data, len) != 0)
        return sys_error(o->j, "write", o->tmp ? o->tmp : o->target);
      o->bytes += len;
      return 0;
    }
  }
  memcpy(o->buf + o->used, data, len);
  o->used += len;
  return 0;
}

/* fsync the directory holding path (best effort: the rename is done). */
static void sync_dir(const char *path)
{
  int fd = tw__open_directory_of(path);

  if (fd >= 0) {
    (void)fsync(fd);
    close(fd);
  }
}

/* Finish the output: end the gzip member, flush, fsync, close, rename the
 * temporary file over the target.  Opens an empty output if nothing was
 * written.  0 or a negative code (the caller then calls out_discard). */
static int out_commit(outfile *o)
{
  const char *name;
  int rc, fd;

  if (o->fd < 0 && (rc = out_open(o)) != 0)
    return rc;
  if (o->gzip) {
    o->z.next_in = NULL;
    o->z.avail_in = 0;
    if ((rc = out_deflate(o, Z_FINISH)) != 0)
      return rc;
  }
  if ((rc = out_flush_buf(o)) != 0)
    return rc;
  name = o->tmp ? o->tmp : o->target;
  if (fsync(o->fd) != 0 && !(o->direct && (errno == EINVAL ||
                                          errno == EROFS)))
    return sys_error(o->j, "fsync", name);
  fd = o->fd;
  o->fd = -1;
  if (close(fd) != 0 && errno != EINTR)
    return sys_error(o->j, "close", name);
  if (o->tmp) {
    if (rename(o->tmp, o->target) != 0)
      return sys_error(o->j, "cannot rename the repaired file to",
                       o->target);
    free(o->tmp);
    o->tmp = NULL;
    sync_dir(o->target);
  }
  return 0;
}

/* Release everything; remove the temporary file if it still exists. */
static void out_discard(outfile *o)
{
  if (o->z_ready)
    deflateEnd(&o->z);
  o->z_ready = 0;
  if (o->fd >= 0)
    close(o->fd);
  o->fd = -1;
  if (o->tmp) {
    unlink(o->tmp);
    free(o->tmp);
    o->tmp = NULL;
  }
  free(o->buf);
  o->buf = NULL;
}

/* ========================================================= the scanner */

/* The line-by-line reader of the JSON text.  Fed with scan_feed, closed
 * with scan_finish; writes head + records + tail to out (if not NULL). */
typedef struct scanner {
  job *j;
  outfile *out;            /* NULL: only check */
  size_t max_line;
  uint64_t offset;         /* JSON bytes fed so far */

  /* The head (line 1). */
  int in_head;
  int blank;               /* whitespace or NULs came before any head */
  char head[HEAD_MAX + 1];
  size_t head_len;
  int object_form;

  /* The current line (after the head).  line[0..content) is its text
   * from the first non-padding byte to the last one so far;
   * line[content..len) the padding after it, kept as is up to WS_KEEP;
   * extra_pad more padding bytes, counted only. */
  uint64_t line_no;        /* 1-based, counting newlines */
  uint64_t line_off;       /* offset of its first byte */
  uint64_t raw;            /* its bytes so far, without the newline */
  char *line;
  size_t len, cap, content;
  uint64_t extra_pad;
  int extra_odd;           /* extra_pad holds more than spaces */
  int started;             /* a non-padding byte was seen */
  int junk;                /* the line is being skipped, not stored */
  int junk_record;         /* ... and it began like a record */
  uint64_t junk_content;   /* its bytes up to the last non-padding one */
  uint64_t junk_pad;       /* its padding after that */

  /* The structure so far. */
  uint64_t records;        /* records kept */
  uint64_t commas;         /* commas after the last record */
  int strict;              /* the input is exactly valid so far */
  int first_pending;       /* no line with text after the head yet: the
                              first one must be a complete record */
  int after_tail;          /* a tail line ended with its newline */
  char tail[TAIL_MAX];     /* the last valid tail line */
  size_t tail_len;
  int have_tail;

  /* Dropped. */
  uint64_t dropped_records, dropped_bytes, junk_bytes;
} scanner;

/* Padding: JSON whitespace but the newline. */
static int is_pad(unsigned char c)
{
  return c == ' ' || c == '\t' || c == '\r';
}

static void scan_init(scanner *s, job *j, outfile *out, size_t max_line)
{
  memset(s, 0, sizeof *s);
  s->j = j;
  s->out = out;
  s->max_line = max_line;
  s->in_head = 1;
  s->line_no = 1;
  s->strict = 1;
  s->first_pending = 1;
}

static void scan_free(scanner *s)
{
  free(s->line);
  s->line = NULL;
}

static int emit(scanner *s, const char *data, size_t len)
{
  return s->out ? out_write(s->out, data, len) : 0;
}

/* Make room for need bytes in the line buffer. */
static int line_reserve(scanner *s, size_t need)
{
  char *p;
  size_t cap;

  if (need <= s->cap)
    return 0;
  cap = s->cap ? s->cap : 4096;
  while (cap < need)
    cap = cap > SIZE_MAX / 2 ? need : cap * 2;
  if (!(p = realloc(s->line, cap)))
    return job_error(s->j, -ENOMEM, "out of memory for a line of %zu bytes",
                     need);
  s->line = p;
  s->cap = cap;
  return 0;
}

/* The first line after the head is not a complete record. */
static int first_line_error(scanner *s, int record_like)
{
  if (record_like)
    return job_error(s->j, TW_REPAIR_ENORECORD,
                     "its first record (line %" PRIu64 ") is cut or "
                     "invalid: no complete record to keep", s->line_no);
  return job_error(s->j, TW_REPAIR_ENOTTRACE,
                   "not a tracewriter trace: line %" PRIu64 " is not a "
                   "JSON object", s->line_no);
}

/* 1 if the current line's text begins like a record: "{" after commas and
 * padding.  first: the first byte of the text when none is stored yet. */
static int begins_like_record(const scanner *s, int first)
{
  for (size_t i = 0; i < s->content; i++) {
    unsigned char c = (unsigned char)s->line[i];
    if (c != ',' && !is_pad(c))
      return c == '{';
  }
  return first == '{';
}

/* Account for n more bytes of a skipped line. */
static void junk_add(scanner *s, const char *p, size_t n)
{
  size_t k = n;

  while (k > 0 && is_pad((unsigned char)p[k - 1]))
    k--;
  if (k > 0) {
    s->junk_content += s->junk_pad + k;
    s->junk_pad = n - k;
  } else {
    s->junk_pad += n;
  }
}

/* Stop storing the current line: it cannot be kept.  first: as for
 * begins_like_record.  The first line of text after the head must be the
 * first record: fail there. */
static int start_junk(scanner *s, int first)
{
  s->junk = 1;
  s->junk_record = begins_like_record(s, first);
  s->junk_content = s->content;
  s->junk_pad = (s->len - s->content) + s->extra_pad;
  s->strict = 0;
  if (s->first_pending)
    return first_line_error(s, s->junk_record);
  return 0;
}

/* A line that starts like a record grew past max_line. */
static int too_long(scanner *s, int first)
{
  if (begins_like_record(s, first))
    return job_error(s->j, TW_REPAIR_ELINE,
                     "line %" PRIu64 " (byte %" PRIu64 ") is a record of "
                     "more than %zu bytes; raise --max-line to repair it",
                     s->line_no, s->line_off, s->max_line);
  return start_junk(s, first);
}

/* Add n bytes (no newline among them) to the current line. */
static int line_add(scanner *s, const char *p, size_t n)
{
  size_t k, t, keep;
  int rc;

  s->raw += n;
  if (s->after_tail)
    s->strict = 0;                  /* bytes after the tail */
  if (s->junk) {
    junk_add(s, p, n);
    return 0;
  }
  if (!s->started) {
    while (n > 0 && is_pad((unsigned char)*p)) {
      p++;
      n--;
    }
    if (n == 0)
      return 0;
    s->started = 1;
    if (*p != '{' && *p != ',' && *p != ']') {
      if ((rc = start_junk(s, (unsigned char)*p)) != 0)
        return rc;
      junk_add(s, p, n);
      return 0;
    }
  }

  /* Text up to the last non-padding byte: it joins the content, with the
   * padding before it. */
  for (k = n; k > 0 && is_pad((unsigned char)p[k - 1]); k--)
    continue;
  if (k > 0) {
    size_t need;
    int first = s->content ? 0 : (unsigned char)*p;

    if (s->extra_odd) {
      /* More than WS_KEEP bytes of padding with tabs or CRs inside the
       * text: not a line the library writes. */
      if ((rc = start_junk(s, first)) != 0)
        return rc;
      junk_add(s, p, n);
      return 0;
    }
    if (s->extra_pad > s->max_line ||
        s->len + (size_t)s->extra_pad > s->max_line ||
        k > s->max_line - s->len - (size_t)s->extra_pad) {
      if ((rc = too_long(s, first)) != 0)
        return rc;
      junk_add(s, p, n);
      return 0;
    }
    need = s->len + (size_t)s->extra_pad + k;
    if ((rc = line_reserve(s, need)) != 0)
      return rc;
    memset(s->line + s->len, ' ', (size_t)s->extra_pad);
    memcpy(s->line + s->len + s->extra_pad, p, k);
    s->len = s->content = need;
    s->extra_pad = 0;
  }

  /* The padding after it: kept up to WS_KEEP, counted beyond. */
  t = n - k;
  if (t > 0) {
    size_t kept = s->len - s->content;
    keep = s->extra_pad || kept >= WS_KEEP ? 0 : WS_KEEP - kept;
    if (keep > t)
      keep = t;
    if (keep > 0) {
      if ((rc = line_reserve(s, s->len + keep)) != 0)
        return rc;
      memcpy(s->line + s->len, p + k, keep);
      s->len += keep;
    }
    for (size_t i = k + keep; i < n; i++)
      if (p[i] != ' ')
        s->extra_odd = 1;
    s->extra_pad += t - keep;
  }
  return 0;
}

/* Count a dropped line. */
static void drop_line(scanner *s, int record, uint64_t bytes)
{
  s->strict = 0;
  if (record) {
    s->dropped_records++;
    s->dropped_bytes += bytes;
  } else {
    s->junk_bytes += bytes;
  }
}

/* The end of a record-like line r[0..n) (r[0] == '{'), with lead commas
 * before it. */
static int take_record(scanner *s, const char *r, size_t n, uint64_t lead,
                       int terminated)
{
  size_t q = n;
  uint64_t trail = 0;
  int ok, glued = 0, rc;

  while (q > 0 && (r[q - 1] == ',' || is_pad((unsigned char)r[q - 1]))) {
    trail += r[q - 1] == ',';
    q--;
  }
  ok = tw__json_validate(r, q) == 0;
  /* The old tail glued after it: a commit that overwrote only the tail's
   * first byte leaves "{...},]" or "{...},]}". */
  if (!ok && q >= 2 && (r[q - 1] == ']' ||
                        (q >= 3 && r[q - 1] == '}' && r[q - 2] == ']'))) {
    size_t g = r[q - 1] == ']' ? q - 1 : q - 2;
    while (g > 0 && (r[g - 1] == ',' || is_pad((unsigned char)r[g - 1])))
      g--;
    if (g > 0 && tw__json_validate(r, g) == 0) {
      ok = 1;
      glued = 1;
      q = g;
    }
  }
  if (!ok) {
    if (s->first_pending)
      return first_line_error(s, 1);
    drop_line(s, 1, q);             /* its text, without padding */
    return 0;
  }

  /* Exactly one comma between records, none before the first. */
  if (s->records == 0 ? s->commas + lead != 0 : s->commas + lead != 1)
    s->strict = 0;
  if (glued || !terminated)
    s->strict = 0;
  s->commas = trail;
  if (s->records == 0) {
    if ((rc = emit(s, s->head, s->head_len)) != 0 ||
        (rc = emit(s, "\n", 1)) != 0)
      return rc;
  } else if ((rc = emit(s, ",\n", 2)) != 0) {
    return rc;
  }
  if ((rc = emit(s, r, q)) != 0)
    return rc;
  s->records++;
  return 0;
}

/* A line t[0..n) starting with "]": the tail if head + t is valid JSON. */
static void take_tail(scanner *s, const char *t, size_t n, int terminated)
{
  char doc[HEAD_MAX + TAIL_MAX];

  if (n > TAIL_MAX) {
    drop_line(s, 0, n);
    return;
  }
  memcpy(doc, s->head, s->head_len);
  memcpy(doc + s->head_len, t, n);
  if (tw__json_validate(doc, s->head_len + n) != 0) {
    const char *canonical = s->object_form ? TAIL_OBJECT : TAIL_ARRAY;
    if (n < strlen(canonical) && memcmp(t, canonical, n) == 0)
      s->strict = 0;                /* the tail, cut: nothing lost */
    else
      drop_line(s, 0, n);
    return;
  }
  memcpy(s->tail, t, n);
  s->tail_len = n;
  s->have_tail = 1;
  /* Valid as it is: records before it, no comma left over, the tail
   * then one newline and nothing else (checked by after_tail). */
  if (s->records == 0 || s->commas != 0 || !terminated ||
      s->len != s->content || s->extra_pad != 0)
    s->strict = 0;
  if (terminated)
    s->after_tail = 1;
}

/* The current line ended: at a newline or a NUL (terminated: more data
 * follows), or at the end of the data.  Classify it and start the next
 * one.  A NUL ends a line too: no record holds a raw NUL, and a zeroed
 * block (a hole in the mmap sink's file) must not glue a complete record
 * to what follows it. */
static int line_end(scanner *s, int terminated)
{
  int rc = 0;

  if (s->after_tail)
    s->strict = 0;                  /* a line after the tail */
  if (s->junk) {
    drop_line(s, s->junk_record, s->junk_content);
  } else if (s->started) {
    const char *c = s->line;
    size_t n = s->content, p = 0;
    uint64_t lead = 0;

    while (p < n && (c[p] == ',' || is_pad((unsigned char)c[p]))) {
      lead += c[p] == ',';
      p++;
    }
    if (p < n && c[p] == '{') {
      rc = take_record(s, c + p, n - p, lead, terminated);
    } else if (s->first_pending) {
      rc = first_line_error(s, 0);
    } else if (p == n) {
      s->commas += lead;            /* a line of commas */
    } else if (c[p] == ']' && lead == 0) {
      take_tail(s, c + p, n - p, terminated);
    } else {
      drop_line(s, 0, n);
    }
    s->first_pending = 0;
  }
  s->raw = 0;
  s->len = s->content = 0;
  s->extra_pad = 0;
  s->extra_odd = s->started = s->junk = s->junk_record = 0;
  s->junk_content = s->junk_pad = 0;
  /* A huge line's buffer is not kept for the next one. */
  if (s->cap > 4 * WS_KEEP) {
    free(s->line);
    s->line = NULL;
    s->cap = 0;
  }
  return rc;
}

/* 1 if the first line read so far is exactly head (it may hold a NUL). */
static int is_head(const scanner *s, const char *head)
{
  return s->head_len == strlen(head) &&
         memcmp(s->head, head, s->head_len) == 0;
}

/* The head, line 1, complete: it must be exactly one of the two heads. */
static int check_head(scanner *s)
{
  if (is_head(s, HEAD_ARRAY))
    s->object_form = 0;
  else if (is_head(s, HEAD_OBJECT))
    s->object_form = 1;
  else
    return job_error(s->j, TW_REPAIR_ENOTTRACE,
                     "not a tracewriter trace: the first line is not "
                     "'" HEAD_ARRAY "' or '" HEAD_OBJECT "'");
  return 0;
}

/* Feed n bytes of JSON text.  0 or a negative code (stop then). */
static int scan_feed(scanner *s, const char *p, size_t n)
{
  int rc;

  while (n > 0 && s->in_head) {
    char c = *p++;
    n--;
    s->offset++;
    if (s->head_len == 0 &&
        (c == '\n' || c == '\0' || is_pad((unsigned char)c))) {
      s->blank = 1;                 /* whitespace (or NULs) before a head */
      continue;
    }
    if (s->blank) {
      return job_error(s->j, TW_REPAIR_ENOTTRACE,
                       "not a tracewriter trace: it does not start with "
                       "'" HEAD_ARRAY "' or '" HEAD_OBJECT "'");
    }
    if (c == '\n') {
      if ((rc = check_head(s)) != 0)
        return rc;
      s->in_head = 0;
      s->line_no = 2;
      s->line_off = s->offset;
    } else if (s->head_len == HEAD_MAX) {
      return job_error(s->j, TW_REPAIR_ENOTTRACE,
                       "not a tracewriter trace: the first line is not "
                       "'" HEAD_ARRAY "' or '" HEAD_OBJECT "'");
    } else {
      s->head[s->head_len++] = c;
    }
  }
  while (n > 0) {
    const char *nl = memchr(p, '\n', n);
    size_t seg = nl ? (size_t)(nl - p) : n;
    const char *nul = memchr(p, '\0', seg);

    if (nul) {
      seg = (size_t)(nul - p);
      nl = nul;
    }
    if (seg > 0 && (rc = line_add(s, p, seg)) != 0)
      return rc;
    s->offset += seg;
    p += seg;
    n -= seg;
    if (nl) {
      if (*nl == '\0')
        s->strict = 0;
      if ((rc = line_end(s, 1)) != 0)
        return rc;
      if (*nl == '\n')
        s->line_no++;
      s->offset++;
      s->line_off = s->offset;
      p++;
      n--;
    }
  }
  return 0;
}

/* The end of the data: classify the last line, write the tail.  0 or a
 * negative code. */
static int scan_finish(scanner *s)
{
  const char *tail;
  size_t tail_len;
  int rc;

  if (s->in_head) {
    if (s->offset == 0)
      return job_error(s->j, TW_REPAIR_ENOTTRACE,
                       "empty%s: not a trace",
                       s->j->rep && s->j->rep->was_gzip ?
                       " once decompressed" : " file");
    if (s->head_len == 0)           /* a writer killed as it opened it? */
      return job_error(s->j, TW_REPAIR_ENORECORD,
                       "only whitespace or NUL bytes: no record to keep");
    if (is_head(s, HEAD_ARRAY) || is_head(s, HEAD_OBJECT))
      return job_error(s->j, TW_REPAIR_ENORECORD,
                       "cut right after its head: no record to keep");
    return job_error(s->j, TW_REPAIR_ENOTTRACE,
                     "not a tracewriter trace: the first line is not "
                     "'" HEAD_ARRAY "' or '" HEAD_OBJECT "'");
  }
  if (s->raw > 0) {
    s->strict = 0;                  /* no newline at the end */
    if ((rc = line_end(s, 0)) != 0)
      return rc;
  }
  if (s->records == 0)
    return job_error(s->j, TW_REPAIR_ENORECORD,
                     "cut before the end of its first record: "
                     "no record to keep");
  if (!s->after_tail)
    s->strict = 0;
  if (s->have_tail) {
    tail = s->tail;
    tail_len = s->tail_len;
  } else {
    tail = s->object_form ? TAIL_OBJECT : TAIL_ARRAY;
    tail_len = strlen(tail);
  }
  if ((rc = emit(s, "\n", 1)) != 0 || (rc = emit(s, tail, tail_len)) != 0 ||
      (rc = emit(s, "\n", 1)) != 0)
    return rc;
  return 0;
}

/* ========================================================== the input */

/* What a gzip input looked like. */
typedef struct gz_info {
  int clean;               /* inflate reached the end of the member */
  int cut;                 /* the data ended before it */
  int corrupt;             /* inflate met invalid data */
  int stale;               /* the file ends with the old stored block and
                              trailer of an earlier commit */
  uint64_t trailing;       /* bytes after the member */
  uint64_t discarded;      /* bytes inflated from the damaged end, unused */
} gz_info;

/* read(2) retrying EINTR; a negative code with the message on error. */
static ssize_t read_some(job *j, int fd, void *buf, size_t size)
{
  for (;;) {
    ssize_t n = read(fd, buf, size);
    if (n >= 0)
      return n;
    if (errno != EINTR)
      return sys_error(j, "read", NULL);
  }
}

/* Stream the plain file fd (from its start) through s. */
static int scan_plain(job *j, int fd, scanner *s)
{
  char *buf = malloc(READ_BUF);
  ssize_t n;
  int rc = 0;

  if (!buf)
    return job_error(j, -ENOMEM, "out of memory");
  if (lseek(fd, 0, SEEK_SET) != 0) {
    free(buf);
    return sys_error(j, "seek", NULL);
  }
  while ((n = read_some(j, fd, buf, READ_BUF)) > 0)
    if ((rc = scan_feed(s, buf, (size_t)n)) != 0)
      break;
  if (n < 0)
    rc = (int)n;
  free(buf);
  return rc ? rc : scan_finish(s);
}

/* The gzip sink rewrites, at every commit, a stored final block holding
 * the tail and the trailer after the deflate data.  A commit cut within
 * its first bytes leaves the end of the old stored block and trailer
 * after the new data, and inflate may decode those stale bytes as data
 * before it fails (or runs out of input): garbage glued to the last
 * committed record would lose it.  So the output inflated from the last
 * GZ_GUARD bytes of the file (the old block and trailer are at most
 * 5 + 4 + 8 bytes) is held back.  At each block boundary among them, the
 * old block and trailer that a commit ending there would have written are
 * computed (the tail, the CRC and size of the output so far); if the file
 * is exactly that much longer and ends with a suffix of them, the file is
 * such a cut commit and only the output up to that boundary is used.
 * Otherwise all the held output is used, unless inflate failed.  The
 * output of GZ_GUARD bytes of input is bounded (258 bytes per 2 bits). */
#define GZ_GUARD ((uint64_t)32)
#define GZ_HOLD_MAX ((size_t)256 * 1024)

/* State of inflating one gzip file. */
typedef struct gz_reader {
  scanner *s;
  uint64_t size;           /* file size */
  uint64_t guard;          /* output of input past this offset is held */
  unsigned char end[GZ_GUARD]; /* the file's last end_len bytes */
  size_t end_len;
  uLong tail_crc[2];       /* crc32 of the two tails */
  uLong crc;               /* crc32 of all output so far */
  uint64_t out_total;      /* all output so far */
  char *hold;              /* output held back (GZ_HOLD_MAX bytes) */
  size_t hold_len;
  size_t stale_at;         /* hold_len at the matching block boundary */
  int stale;               /* ... found */
  int overflow;            /* the hold overflowed: stop holding */
} gz_reader;

static const char *const gz_tails[2] = { "\n" TAIL_ARRAY "\n",
                                         "\n" TAIL_OBJECT "\n" };

/* n bytes of output, inflated from input up to offset consumed. */
static int gz_output(job *j, gz_reader *r, const char *p, size_t n,
                     uint64_t consumed)
{
  int rc;

  if (n == 0)
    return 0;
  r->crc = crc32(r->crc, (const unsigned char *)p, (uInt)n);
  r->out_total += n;
  if (consumed <= r->guard || r->overflow)
    return scan_feed(r->s, p, n);
  if (!r->hold && !(r->hold = malloc(GZ_HOLD_MAX)))
    return job_error(j, -ENOMEM, "out of memory");
  if (n > GZ_HOLD_MAX - r->hold_len) {
    /* More than GZ_GUARD bytes can make: this is no stale tail. */
    r->overflow = 1;
    r->stale = 0;
    if ((rc = scan_feed(r->s, r->hold, r->hold_len)) != 0)
      return rc;
    r->hold_len = 0;
    return scan_feed(r->s, p, n);
  }
  memcpy(r->hold + r->hold_len, p, n);
  r->hold_len += n;
  return 0;
}

/* At a block boundary, consumed bytes into the file: is the rest of the
 * file what is left of the stored block and trailer that a commit ending
 * here wrote? */
static void gz_boundary(gz_reader *r, uint64_t consumed)
{
  if (r->overflow || consumed < r->guard)
    return;
  for (int i = 0; i < 2; i++) {
    size_t tl = strlen(gz_tails[i]), el = 5 + tl + 8, m;
    unsigned char e[5 + 4 + 8];
    uLong crc;
    uint64_t isize;

    if (r->size - consumed != el || el > r->end_len)
      continue;
    e[0] = 0x01;                    /* final stored block, LEN, ~LEN */
    e[1] = (unsigned char)(tl & 0xff);
    e[2] = (unsigned char)(tl >> 8);
    e[3] = (unsigned char)(~tl & 0xff);
    e[4] = (unsigned char)((~tl >> 8) & 0xff);
    memcpy(e + 5, gz_tails[i], tl);
    crc = crc32_combine(r->crc, r->tail_crc[i], (z_off_t)tl);
    isize = r->out_total + tl;
    for (int b = 0; b < 4; b++) {
      e[5 + tl + b] = (unsigned char)(crc >> (8 * b));
      e[9 + tl + b] = (unsigned char)(isize >> (8 * b));
    }
    for (m = 0; m < el && r->end[r->end_len - 1 - m] == e[el - 1 - m]; m++)
      continue;
    if (m > 0) {
      r->stale = 1;
      r->stale_at = r->hold_len;
    }
  }
}

/* Inflate the gzip file fd (size bytes, from its start) as far as it
 * goes and stream the result through s. */
static int scan_gzip(job *j, int fd, uint64_t size, scanner *s, gz_info *g)
{
  unsigned char *in = malloc(READ_BUF), *out = malloc(READ_BUF);
  unsigned char *in_next = in;
  size_t in_left = 0;
  uint64_t consumed = 0;
  gz_reader r;
  z_stream z;
  int eof = 0, rc = 0, zr, stuck = 0;

  memset(g, 0, sizeof *g);
  memset(&z, 0, sizeof z);
  memset(&r, 0, sizeof r);
  r.s = s;
  r.size = size;
  r.guard = size > GZ_GUARD ? size - GZ_GUARD : 0;
  r.crc = crc32(0, NULL, 0);
  for (int i = 0; i < 2; i++)
    r.tail_crc[i] = crc32(crc32(0, NULL, 0),
                          (const unsigned char *)gz_tails[i],
                          (uInt)strlen(gz_tails[i]));
  if (!in || !out) {
    rc = job_error(j, -ENOMEM, "out of memory");
    goto done;
  }
  r.end_len = (size_t)(size < GZ_GUARD ? size : GZ_GUARD);
  if (pread(fd, r.end, r.end_len, (off_t)(size - r.end_len)) !=
      (ssize_t)r.end_len)
    r.end_len = 0;
  if (lseek(fd, 0, SEEK_SET) != 0) {
    rc = sys_error(j, "seek", NULL);
    goto done;
  }
  if ((zr = inflateInit2(&z, 16 + 15)) != Z_OK) {
    rc = job_error(j, zr == Z_MEM_ERROR ? -ENOMEM : TW_REPAIR_EZLIB,
                   "inflateInit2 failed (zlib %s)", zlibVersion());
    goto done;
  }
  for (;;) {
    size_t give, used, produced;

    if (in_left == 0 && !eof) {
      ssize_t n = read_some(j, fd, in, READ_BUF);
      if (n < 0) {
        rc = (int)n;
        break;
      }
      eof = n == 0;
      in_next = in;
      in_left = (size_t)n;
    }
    /* Never cross the guard in one call: what comes before it is used at
     * once, what comes after it is held. */
    give = in_left;
    if (consumed < r.guard && give > r.guard - consumed)
      give = (size_t)(r.guard - consumed);
    z.next_in = in_next;
    z.avail_in = (uInt)give;
    z.next_out = out;
    z.avail_out = (uInt)READ_BUF;
    zr = inflate(&z, Z_BLOCK);
    used = give - z.avail_in;
    produced = READ_BUF - z.avail_out;
    in_next += used;
    in_left -= used;
    consumed += used;
    if (zr == Z_DATA_ERROR || zr == Z_NEED_DICT) {
      g->corrupt = 1;               /* keep what inflated before */
    }
    if ((rc = gz_output(j, &r, (char *)out, produced, consumed)) != 0)
      break;
    if (g->corrupt)
      break;
    if (zr == Z_STREAM_END) {
      g->clean = 1;
      g->trailing = size - consumed;
      break;
    }
    if (zr == Z_MEM_ERROR) {
      rc = job_error(j, -ENOMEM, "out of memory in inflate");
      break;
    }
    if (zr == Z_STREAM_ERROR) {
      rc = job_error(j, TW_REPAIR_EZLIB, "inflate failed");
      break;
    }
    if (z.data_type & 128)
      gz_boundary(&r, consumed);
    if (used == 0 && produced == 0) {
      if (eof && in_left == 0) {
        g->cut = 1;                 /* Z_BUF_ERROR: the data ended */
        break;
      }
      if (++stuck > 4) {            /* cannot happen; do not spin */
        g->corrupt = 1;
        break;
      }
    } else {
      stuck = 0;
    }
  }
  inflateEnd(&z);
  if (rc == 0) {
    /* The held output: all of it after a clean end or a plain cut; up to
     * the old commit's end after stale bytes; none after bad data. */
    size_t use = r.hold_len;
    if (!g->clean && r.stale) {
      use = r.stale_at;
      g->stale = 1;
    } else if (g->corrupt) {
      use = 0;
    }
    g->discarded = r.hold_len - use;
    if (use > 0)
      rc = scan_feed(s, r.hold, use);
  }
  if (rc == 0)
    rc = scan_finish(s);
  if (rc != 0 && (g->cut || g->corrupt) &&
      (rc == TW_REPAIR_ENOTTRACE || rc == TW_REPAIR_ENORECORD) &&
      j->err && j->errsize) {
    size_t l = strlen(j->err);
    snprintf(j->err + l, j->errsize - l, " (gzip data %s after %" PRIu64
             " bytes of JSON)", g->corrupt ? "corrupt" : "cut", s->offset);
  }
done:
  free(r.hold);
  free(in);
  free(out);
  return rc;
}

/* Scan the whole input once (to out, or only checking if out is NULL),
 * and fill the report. */
static int scan_input(job *j, int fd, uint64_t size, int gzip, outfile *out,
                      int *strict)
{
  struct tw_repair_report *rep = j->rep;
  scanner s;
  gz_info g;
  int rc;

  scan_init(&s, j, out, j->opts->max_line);
  if (gzip)
    rc = scan_gzip(j, fd, size, &s, &g);
  else
    rc = scan_plain(j, fd, &s);
  rep->kept_records = s.records;
  rep->dropped_records = s.dropped_records;
  rep->dropped_bytes = s.dropped_bytes;
  rep->junk_bytes = s.junk_bytes;
  rep->json_bytes = s.offset;
  rep->object_form = s.object_form;
  rep->had_tail = s.have_tail;
  if (gzip) {
    rep->gzip_cut = g.cut;
    rep->gzip_corrupt = g.corrupt;
    rep->gzip_trailing = g.trailing;
    rep->gzip_stale = g.stale;
    rep->gzip_discarded = g.discarded;
  }
  *strict = rc == 0 && s.strict && (!gzip || (g.clean && g.trailing == 0));
  scan_free(&s);
  return rc;
}

/* Copy fd (from its start) to out as it is. */
static int copy_input(job *j, int fd, outfile *out)
{
  char *buf = malloc(READ_BUF);
  ssize_t n;
  int rc = 0;

  if (!buf)
    return job_error(j, -ENOMEM, "out of memory");
  if (lseek(fd, 0, SEEK_SET) != 0) {
    free(buf);
    return sys_error(j, "seek", NULL);
  }
  while ((n = read_some(j, fd, buf, READ_BUF)) > 0)
    if ((rc = out_write(out, buf, (size_t)n)) != 0)
      break;
  if (n < 0)
    rc = (int)n;
  free(buf);
  return rc;
}

/* 1 if the plain file may be valid: it ends with "]\n" or "}\n". */
static int may_be_valid(int fd, uint64_t size)
{
  char end[2];

  if (size < 2 || pread(fd, end, 2, (off_t)size - 2) != 2)
    return 0;
  return end[1] == '\n' && (end[0] == ']' || end[0] == '}');
}

/* ========================================================= the API */

void tw_repair_options_init(struct tw_repair_options *opts)
{
  memset(opts, 0, sizeof *opts);
  opts->max_line = TW_REPAIR_DEFAULT_MAX_LINE;
  opts->gzip_level = DEFAULT_GZIP_LEVEL;
}

int tw_repair_file(const char *in, const char *out,
                   struct tw_repair_report *rep, char *err, size_t errsize)
{
  return tw_repair_file_ex(in, out, NULL, rep, err, errsize);
}

/* Decide where the output goes: fill o's target, direct, mode and owner;
 * *in_place if it replaces the input.  *target_mem is what to free. */
static int plan_output(job *j, const char *in, const struct stat *in_st,
                       const char *out, outfile *o, int *in_place,
                       char **target_mem)
{
  struct stat st;

  *in_place = 1;
  if (out) {
    if (stat(out, &st) == 0) {
      if (st.st_dev == in_st->st_dev && st.st_ino == in_st->st_ino) {
        out = NULL;                 /* -o naming the input itself */
      } else if (S_ISDIR(st.st_mode)) {
        errno = EISDIR;
        return sys_error(j, "cannot write", out);
      } else if (!S_ISREG(st.st_mode)) {
        *in_place = 0;
        o->target = out;
        o->direct = 1;
        return 0;
      } else {
        *in_place = 0;
        if (!(*target_mem = realpath(out, NULL)))
          return sys_error(j, "cannot resolve", out);
        o->target = *target_mem;
        o->set_mode = 1;
        o->mode = st.st_mode & 07777;
        return 0;
      }
    } else if (errno != ENOENT) {
      return sys_error(j, "cannot write", out);
    } else {
      *in_place = 0;
      o->target = out;              /* new file: 0666 less the umask */
      return 0;
    }
  }
  /* In place: replace the file itself, not a symbolic link to it. */
  if (!(*target_mem = realpath(in, NULL)))
    return sys_error(j, "cannot resolve", NULL);
  o->target = *target_mem;
  o->set_mode = 1;
  o->mode = in_st->st_mode & 07777;
  o->set_owner = in_st->st_uid != geteuid() || in_st->st_gid != getegid();
  o->uid = in_st->st_uid;
  o->gid = in_st->st_gid;
  return 0;
}

int tw_repair_file_ex(const char *in, const char *out,
                      const struct tw_repair_options *opts,
                      struct tw_repair_report *rep,
                      char *err, size_t errsize)
{
  struct tw_repair_options defaults;
  struct tw_repair_report local_rep;
  struct stat st;
  unsigned char magic[2];
  char *target_mem = NULL;
  outfile o;
  job j;
  int fd, gzip, in_place, strict = 0, rc;
  uint64_t size;

  if (!rep)
    rep = &local_rep;
  memset(rep, 0, sizeof *rep);
  if (err && errsize)
    err[0] = '\0';
  tw_repair_options_init(&defaults);
  if (opts) {
    defaults.max_line = opts->max_line < TW_REPAIR_MIN_MAX_LINE ?
                        TW_REPAIR_MIN_MAX_LINE : opts->max_line;
    if (defaults.max_line > SIZE_MAX / 4)  /* no overflow in the sums */
      defaults.max_line = SIZE_MAX / 4;
    defaults.dry_run = opts->dry_run;
    if (opts->gzip_level >= 1 && opts->gzip_level <= 9)
      defaults.gzip_level = opts->gzip_level;
  }
  memset(&j, 0, sizeof j);
  j.in = in ? in : "(null)";
  j.err = err;
  j.errsize = errsize;
  j.rep = rep;
  j.opts = &defaults;
  memset(&o, 0, sizeof o);
  o.j = &j;
  o.fd = -1;
  if (!in)
    return job_error(&j, -EINVAL, "no input file");

  if ((fd = open(in, O_RDONLY | O_CLOEXEC)) < 0)
    return sys_error(&j, "cannot open", NULL);
  if (fstat(fd, &st) != 0) {
    rc = sys_error(&j, "stat", NULL);
    goto done;
  }
  if (S_ISDIR(st.st_mode)) {
    rc = job_error(&j, -EISDIR, "is a directory");
    goto done;
  }
  if (!S_ISREG(st.st_mode)) {
    rc = job_error(&j, -EINVAL, "not a regular file");
    goto done;
  }
  size = (uint64_t)st.st_size;
  rep->input_bytes = size;
  if (size == 0) {
    rc = job_error(&j, TW_REPAIR_ENOTTRACE, "empty file: not a trace");
    goto done;
  }
  gzip = pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  rep->was_gzip = gzip;
  if ((rc = plan_output(&j, in, &st, out, &o, &in_place, &target_mem)) != 0)
    goto done;
  o.gzip = gzip;
  o.level = defaults.gzip_level;

  if (defaults.dry_run) {
    rc = scan_input(&j, fd, size, gzip, NULL, &strict);
    rep->was_valid = rc == 0 && strict;
    goto done;
  }
  /* Pass 1: only check, when the file may be valid as it is. */
  if (gzip || may_be_valid(fd, size)) {
    if ((rc = scan_input(&j, fd, size, gzip, NULL, &strict)) != 0)
      goto done;
    if (strict) {
      rep->was_valid = 1;
      if (!in_place) {
        o.gzip = 0;                 /* a copy, byte for byte */
        if ((rc = copy_input(&j, fd, &o)) == 0 &&
            (rc = out_commit(&o)) == 0) {
          rep->written = 1;
          rep->output_bytes = o.bytes;
        }
      }
      goto done;
    }
  }
  /* Pass 2: write head + records + tail. */
  if ((rc = scan_input(&j, fd, size, gzip, &o, &strict)) != 0)
    goto done;
  if ((rc = out_commit(&o)) != 0)
    goto done;
  rep->written = 1;
  rep->in_place = in_place;
  rep->output_bytes = o.bytes;

done:
  out_discard(&o);
  free(target_mem);
  close(fd);
  return rc;
}

/* "1 record" / "2 records" */
static const char *plural(uint64_t n, const char *one, const char *many)
{
  return n == 1 ? one : many;
}

void tw_repair_describe(const char *in, const char *out,
                        const struct tw_repair_report *rep,
                        char *buf, size_t size)
{
  size_t n = 0;

#define ADD(...)                                                        \
  do {                                                                  \
    if (n < size) {                                                     \
      int k_ = snprintf(buf + n, size - n, __VA_ARGS__);                \
      if (k_ > 0)                                                       \
        n += (size_t)k_;                                                \
    }                                                                   \
  } while (0)

  if (!buf || size == 0)
    return;
  buf[0] = '\0';
  if (rep->was_valid) {
    ADD("%s: already valid (%" PRIu64 " %s)", in, rep->kept_records,
        plural(rep->kept_records, "record", "records"));
    if (rep->written && out)
      ADD("; copied to %s", out);
    return;
  }
  ADD("%s: kept %" PRIu64 " %s", in, rep->kept_records,
      plural(rep->kept_records, "record", "records"));
  if (rep->dropped_records)
    ADD(", dropped %" PRIu64 " partial %s (%" PRIu64 " %s)",
        rep->dropped_records,
        plural(rep->dropped_records, "record", "records"),
        rep->dropped_bytes, plural(rep->dropped_bytes, "byte", "bytes"));
  if (rep->junk_bytes)
    ADD(", dropped %" PRIu64 " %s of other data", rep->junk_bytes,
        plural(rep->junk_bytes, "byte", "bytes"));
  if (!rep->dropped_records && !rep->junk_bytes)
    ADD(", dropped nothing");
  if (!rep->had_tail)
    ADD("; the tail was missing");
  if (rep->gzip_cut)
    ADD("; the gzip data was cut");
  if (rep->gzip_corrupt)
    ADD("; the gzip data was corrupt");
  if (rep->gzip_stale)
    ADD("; its end was stale bytes of an earlier commit");
  if (rep->gzip_discarded)
    ADD("; %" PRIu64 " inflated %s from the damaged end unused",
        rep->gzip_discarded, plural(rep->gzip_discarded, "byte", "bytes"));
  if (rep->gzip_trailing)
    ADD("; ignored %" PRIu64 " %s after the gzip data", rep->gzip_trailing,
        plural(rep->gzip_trailing, "byte", "bytes"));
  if (!rep->written)
    ADD("; nothing written (dry run)");
  else if (rep->in_place)
    ADD("; repaired in place");
  else
    ADD("; written to %s", out);
#undef ADD
}

/* ====================================================== the command */

static void repair_usage(FILE *out)
{
  fprintf(out,
    "Usage: " PROGRAM " repair [-o OUT] [-n] [-q] [--max-line SIZE] FILE\n"
    "\n"
    "Make a trace left by a crash strictly valid JSON again: keep every\n"
    "complete record, drop the one cut by the crash, write the tail.  A\n"
    "gzip trace (.json.gz) is inflated as far as it goes and written back\n"
    "as gzip.  A trace that is already valid is left untouched.  Repair a\n"
    "trace only once no process writes it any more.\n"
    "\n"
    "  -o, --output OUT     write the repaired trace to OUT and leave FILE\n"
    "                       alone (default: replace FILE, atomically)\n"
    "  -n, --dry-run        say what would be done, write nothing\n"
    "  -q, --quiet          print nothing but errors\n"
    "  -m, --max-line SIZE  the longest record to keep, in bytes (suffixes\n"
    "                       KiB, MiB, GiB; default: 64MiB)\n"
    "  -h, --help           show this help and exit\n"
    "\n"
    "Exit status: 0 repaired or already valid, 1 an error (I/O, not a\n"
    "trace, a record longer than --max-line), 2 a usage error.\n");
}

PRINTF_LIKE(1, 2)
static int repair_usage_error(const char *fmt, ...)
{
  va_list ap;

  fprintf(stderr, PROGRAM " repair: ");
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n\n");
  repair_usage(stderr);
  return EXIT_USAGE;
}

/* Parse "SIZE": digits, then nothing or k/KiB/m/MiB/g/GiB (powers of
 * 1024).  0 or -1. */
static int parse_size(const char *text, size_t *out)
{
  static const struct { const char *name; unsigned shift; } units[] = {
    { "", 0 }, { "k", 10 }, { "K", 10 }, { "KiB", 10 }, { "m", 20 },
    { "M", 20 }, { "MiB", 20 }, { "g", 30 }, { "G", 30 }, { "GiB", 30 },
  };
  unsigned long long v;
  char *end;

  if (text[0] < '0' || text[0] > '9')
    return -1;
  errno = 0;
  v = strtoull(text, &end, 10);
  if (errno != 0)
    return -1;
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
    if (strcmp(end, units[i].name) == 0) {
      if (v > (unsigned long long)(SIZE_MAX >> units[i].shift))
        return -1;
      *out = (size_t)v << units[i].shift;
      return 0;
    }
  }
  return -1;
}

int tw_tool_repair_main(int argc, char **argv)
{
  static const struct option long_options[] = {
    { "output",   required_argument, NULL, 'o' },
    { "dry-run",  no_argument,       NULL, 'n' },
    { "quiet",    no_argument,       NULL, 'q' },
    { "max-line", required_argument, NULL, 'm' },
    { "help",     no_argument,       NULL, 'h' },
    { NULL, 0, NULL, 0 }
  };
  struct tw_repair_options opts;
  struct tw_repair_report rep;
  const char *output = NULL, *input;
  char message[PATH_MAX + 256], summary[2 * PATH_MAX + 256];
  int opt, quiet = 0;

  tw_repair_options_init(&opts);
  optind = 0;                       /* glibc: start afresh on every call */
  opterr = 0;                       /* our messages name the command */
  while ((opt = getopt_long(argc, argv, ":o:nqm:h", long_options,
                            NULL)) != -1) {
    switch (opt) {
    case 'o':
      output = optarg;
      break;
    case 'n':
      opts.dry_run = 1;
      break;
    case 'q':
      quiet = 1;
      break;
    case 'm':
      if (parse_size(optarg, &opts.max_line) != 0 ||
          opts.max_line < TW_REPAIR_MIN_MAX_LINE)
        return repair_usage_error("bad --max-line '%s' (at least %zu)",
                                  optarg, TW_REPAIR_MIN_MAX_LINE);
      break;
    case 'h':
      repair_usage(stdout);
      return EXIT_OK;
    case ':':
      return repair_usage_error("option '%s' needs a value",
                                argv[optind - 1]);
    default:
      if (optopt) {
        char short_option[3] = { '-', (char)optopt, '\0' };
        return repair_usage_error("unknown option '%s'", short_option);
      }
      return repair_usage_error("unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind >= argc)
    return repair_usage_error("no FILE to repair");
  if (optind + 1 < argc)
    return repair_usage_error("unexpected argument '%s'", argv[optind + 1]);
  input = argv[optind];
  if (output && output[0] == '\0')
    return repair_usage_error("empty output name");

  if (tw_repair_file_ex(input, output, &opts, &rep, message,
                        sizeof message) != 0) {
    fprintf(stderr, PROGRAM " repair: %s\n", message);
    return EXIT_RUNTIME;
  }
  if (!quiet) {
    tw_repair_describe(input, output, &rep, summary, sizeof summary);
    printf("%s\n", summary);
  }
  return EXIT_OK;
}
