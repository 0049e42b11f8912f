/* source.c -- the trace reader's byte sources: the JSON text of a
 * plain file read with pread(2), or of a gzip file inflated
 *
 * A source gives the JSON text chunk by chunk (twt__src_next): pread(2)
 * of the plain file up to the size it had at open (TWT_READ_FOLLOW: on
 * as it grows while a record is being appended), or inflate of the gzip
 * members as far as they go, the output of the last bytes held back
 * until the end (see front.h on GZ_GUARD, and gz_next).  There is no
 * source for standard input: a command's inputs are regular files, by
 * name ("-" is a file named so).  See front.h for the reader's other
 * parts.
 */
#include "internal.h"     /* config.h first */
#include "layout.h"       /* tw__layout_gzip_end */
#include "front.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void twt__src_note_gzip(twt_reader *r)
{
  size_t l = strlen(r->msg);

  if (r->gz.finished && (r->info.gzip_cut || r->info.gzip_corrupt))
    snprintf(r->msg + l, sizeof r->msg - l, " (gzip data %s after %"
             PRIu64 " bytes of JSON)", r->info.gzip_corrupt ? "corrupt" :
             "cut", r->offset);
}

/* The end of the data: classify the last line, then check the whole. */

/* With TWT_READ_FOLLOW, at the end of a plain file's size inside a record
 * not yet complete (one being appended, as the front end says): 1 if the
 * file has grown since, and size with it. */
static int follow(twt_reader *r)
{
  struct stat st;

  if (!(r->flags & TWT_READ_FOLLOW) || r->info.gzip ||
      r->follows >= FOLLOW_MAX || !r->front || !r->front->in_record ||
      !r->front->in_record(r) || fstat(r->fd, &st) != 0 ||
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

void twt__src_end(twt_reader *r)
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
int twt__src_next(twt_reader *r)
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

/* 1 if the text came whole from the file: a plain file, or one gzip
 * member inflated to its end and nothing after it. */
int twt__src_whole(const twt_reader *r)
{
  return !r->info.gzip || (r->gz.clean && r->info.gzip_members == 1 &&
                           r->info.gzip_trailing == 0);
}

/* The file's size, and whether it is gzip (its magic bytes): the source
 * ready to give the first chunk.  0 or a code. */
int twt__src_start(twt_reader *r)
{
  unsigned char magic[2];
  struct stat st;

  twt__src_end(r);
  r->pos = 0;
  r->follows = 0;
  r->chunk = NULL;
  r->chunk_len = r->chunk_pos = 0;
  r->src_end = 0;
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
