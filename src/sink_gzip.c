/* sink_gzip.c -- the gzip sink: one gzip member, valid after every commit
 *
 * In place (a seekable regular file without O_APPEND), the file is always
 * one complete gzip member:
 *
 *   header | deflate, sync-flushed | stored final block: tail | trailer
 *   10 B     all commits so far      01 LEN ~LEN "\n]"          CRC ISIZE
 *            ^ start + 10            ^ pos
 *
 * The header is written by hand and the records go through one continuous
 * raw-deflate stream (windowBits -15).  A commit deflates the new records
 * with Z_SYNC_FLUSH, which leaves the output byte-aligned at a block
 * boundary, and writes that output, a new stored final block holding the
 * tail and a new trailer (CRC-32 and ISIZE of every byte including the
 * tail) at pos, over the old stored block, in one pwritev.  The tail never
 * enters the compressor, so its history stays that of the records alone
 * and the next commit can overwrite the stored block and go on deflating.
 * If the pwritev fails, the old stored block and trailer are put back and
 * the file cut after them, so the last commit survives.  A stored block is
 * a valid final block, so close has nothing left to write.
 *
 * Streaming (pipe, FIFO, socket, terminal, O_APPEND, devices): a plain gzip
 * stream.  Each commit's deflate output is sync-flushed and written at
 * once, so a reader gets the records promptly; close deflates the tail
 * with Z_FINISH and writes the trailer.
 *
 * Parallel deflate (deflate_pool.h): a large commit, when deflate is
 * what bounds the writer, is cut into blocks that worker threads and the
 * committing thread deflate at once, each primed with the input before
 * it (16 KiB: deflate_pool.h) and sync-flushed; joined in order they are the same kind of
 * output as one stream's (byte-aligned, not final), so the rest of the
 * commit -- the stored final block, the trailer, the one pwritev -- is
 * unchanged, and the commit returns only once every block is written.
 * The workers start only when needed (gzip_threads, below: par_threads);
 * hist keeps the last 32 KiB of input, which primes the first block of a
 * parallel commit and, after one, the serial stream (zs_stale).
 *
 * The crash hook (gzip_crash_commit, from a signal handler) commits the
 * same way without allocating, on the serial stream only (never the
 * workers): when out is full it writes what out holds (in place: from pos
 * on, over the old end, which the final pwritev replaces) and goes on
 * deflating.  deflate is computation on this stream only; the writer's
 * commit token keeps every other call off it, and a parallel commit
 * holds the token until its blocks are all written.
 */
#include "internal.h"
#include "deflate_pool.h"
#include "fdio.h"
#include "layout.h"       /* tw__layout_gzip_end */
#include "sink.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define GZ_HEADER_LEN 10
#define GZ_TRAILER_LEN 8
#define GZ_STORED_HDR 5          /* 0x01 LEN(2) ~LEN(2) */
/* Input handed to deflate in one call: avail_in is a uInt. */
#define GZ_MAX_IN (1u << 30)
/* The output buffer is allocated at open with room for a commit of the
 * default buffer size; it grows (and stays grown) for larger commits. */
#define GZ_OUT_INITIAL (TW_DEFAULT_BUFFER_SIZE + TW_DEFAULT_BUFFER_SIZE / 8)
/* Room for a sync flush marker and pending bits, on top of deflateBound. */
#define GZ_FLUSH_SLACK 64
/* Commits smaller than this are deflated by one thread: split, their
 * blocks would cost more in size and hand-over than they save.  (A
 * default 64 KiB buffer makes commits just under 64 KiB.) */
#define GZ_PAR_MIN (48u * 1024u)
/* The smallest block a commit is cut into: a commit is split among at
 * most its size / GZ_BLOCK_MIN threads. */
#define GZ_BLOCK_MIN (GZ_PAR_MIN / 2)
/* gzip_threads=0 (auto) starts the workers when the writer spends at
 * least this share of its time in commits, and keeps splitting commits
 * while the share stays above GZ_DUTY_OFF. */
#define GZ_DUTY_ON 0.5
#define GZ_DUTY_OFF 0.25

typedef struct gzip_sink {
  tw__sink base;
  int fd;
  int own_fd;              /* close fd at close */
  z_stream zs;             /* raw deflate (windowBits -15) */
  uLong crc;               /* CRC-32 of every record byte (not the tail) */
  uint32_t isize;          /* their count, mod 2^32 */
  unsigned char *out;      /* bytes not yet written: the header before the
                              first commit, then a commit's deflate output */
  size_t out_len;          /* bytes in out */
  size_t out_cap;          /* allocated size of out */
  int level;               /* 1..9 */
  /* In place only: */
  off_t start;             /* where the member begins */
  off_t pos;               /* where the stored final block begins: the end
                              of the sync-flushed deflate output */
  int committed;           /* the file holds a complete member */
  unsigned char *ends;     /* one allocation for the two below */
  unsigned char *end;      /* the stored block and trailer now at pos */
  unsigned char *next_end; /* the ones the commit in progress writes */
  size_t end_len;          /* GZ_STORED_HDR + tail_len + GZ_TRAILER_LEN */
  /* Parallel deflate: */
  unsigned max_threads;    /* the most threads deflating a commit (1: the
                              committing thread alone) */
  int adaptive;            /* gzip_threads=0: split only when busy */
  tw__dpool *pool;         /* the workers, once started (else NULL) */
  int pool_failed;         /* they could not start: one thread from now */
  unsigned char *hist;     /* the last TW__DEFLATE_WINDOW bytes of input */
  size_t hist_len;         /* how many (fewer at the start) */
  int zs_stale;            /* a parallel commit came after zs's input:
                              reset and prime it from hist before use */
  double duty;             /* share of time in commits, smoothed */
  uint64_t last_start;     /* when the last commit began (ns), 0: none */
  uint64_t last_busy;      /* how long it took (ns) */
} gzip_sink;

static void put_le32(unsigned char *p, uint32_t v)
{
  p[0] = (unsigned char)(v & 0xff);
  p[1] = (unsigned char)((v >> 8) & 0xff);
  p[2] = (unsigned char)((v >> 16) & 0xff);
  p[3] = (unsigned char)((v >> 24) & 0xff);
}

/* The gzip trailer for every record so far plus n more bytes at p. */
static void put_trailer(const gzip_sink *g, unsigned char *out,
                        const char *p, size_t n)
{
  /* (crc32 of a NULL buffer is not a no-op: it returns the initial 0.) */
  put_le32(out, (uint32_t)(n ? crc32_z(g->crc, (const Bytef *)p, n) : g->crc));
  put_le32(out + 4, g->isize + (uint32_t)n);
}

/* The stored final block holding the tail, then the trailer, into e
 * (end_len bytes). */
static void make_end(const gzip_sink *g, unsigned char *e)
{
  size_t n = g->base.tail_len;
  const char *p = g->base.tail;

  /* (crc32 of a NULL buffer is not a no-op: it returns the initial 0.) */
  tw__layout_gzip_end(e, p, n, (uint32_t)(n ? crc32_z(g->crc,
                                                      (const Bytef *)p, n)
                                            : g->crc),
                      g->isize + (uint32_t)n);
}

/* Make room for at least want more bytes in out.  Returns 0 or -ENOMEM. */
static int out_reserve(gzip_sink *g, size_t want)
{
  size_t cap = g->out_cap;
  unsigned char *p;

  if (want <= cap - g->out_len)
    return 0;
  if (want > SIZE_MAX / 2 - g->out_len)
    return -ENOMEM;
  while (cap - g->out_len < want)
    cap = cap < 4096 ? 4096 : cap * 2;
  if (!(p = realloc(g->out, cap)))
    return -ENOMEM;
  g->out = p;
  g->out_cap = cap;
  return 0;
}

/* Write out[0..out_len) at *at (advanced), or at the file position if
 * *at < 0, and empty out.  For the crash hook, which may not grow out.
 * Returns 0 or -errno. */
static int out_emit(gzip_sink *g, off_t *at)
{
  struct iovec iov = { g->out, g->out_len };
  int rc = g->out_len ? tw__write_all(g->fd, &iov, 1, *at) : 0;

  if (rc == 0 && *at >= 0)
    *at += (off_t)g->out_len;
  else if (rc == 0)
    g->base.out_bytes += g->out_len;   /* in place: counted when finished */
  if (rc == 0)
    g->out_len = 0;
  return rc;
}

/* Make room for want (at most GZ_FLUSH_SLACK) more bytes in out: grow
 * it; or, for the crash hook (at not NULL), which must not allocate,
 * write out what it holds (see out_emit).  Returns 0 or an error. */
static int out_room(gzip_sink *g, size_t want, off_t *at)
{
  if (!at)
    return out_reserve(g, want);
  return want <= g->out_cap - g->out_len ? 0 : out_emit(g, at);
}

/* The error for a zlib return code. */
static int zlib_error(int zr)
{
  return zr == Z_MEM_ERROR ? -ENOMEM : TW_EZLIB;
}

/* Deflate data[0..len) with flush (Z_NO_FLUSH, Z_SYNC_FLUSH or Z_FINISH)
 * and append the output to out, growing it as needed -- or, for the crash
 * hook (at not NULL), writing out whenever it is full (see out_emit), so
 * that nothing is allocated; fold the bytes into the CRC and the size.
 * Returns 0, -ENOMEM, TW_EZLIB or a write error; on error the stream is
 * in an unknown state and the caller makes the error sticky.  zlib's
 * deflate allocates only in deflateInit2, and deflate and crc32_z touch
 * nothing but the stream and their own constant tables: computation only,
 * safe in a signal handler when nobody else is using this stream. */
static int deflate_data(gzip_sink *g, const char *data, size_t len, int flush,
                        off_t *at)
{
  const char *p = data;
  size_t left = len;
  int rc, zr;

  /* Reserve the whole bound up front: one allocation at most per commit,
   * and deflate rarely runs out of room below. */
  if (!at && len <= GZ_MAX_IN &&
      (rc = out_reserve(g, deflateBound(&g->zs, (uLong)len) +
                        GZ_FLUSH_SLACK)) != 0)
    return rc;
  do {
    size_t n = left > GZ_MAX_IN ? GZ_MAX_IN : left;
    int fl = n == left ? flush : Z_NO_FLUSH;

    g->zs.next_in = (Bytef *)(uintptr_t)p;
    g->zs.avail_in = (uInt)n;
    for (;;) {
      size_t room;

      if ((rc = out_room(g, GZ_FLUSH_SLACK, at)) != 0)
        return rc;
      room = g->out_cap - g->out_len;
      if (room > UINT_MAX)
        room = UINT_MAX;
      g->zs.next_out = g->out + g->out_len;
      g->zs.avail_out = (uInt)room;
      zr = deflate(&g->zs, fl);
      g->out_len += room - g->zs.avail_out;
      if (zr == Z_STREAM_END)
        break;
      /* Z_BUF_ERROR only says no progress was possible: not fatal. */
      if (zr != Z_OK && zr != Z_BUF_ERROR)
        return zlib_error(zr);
      if (g->zs.avail_out != 0) {
        if (fl == Z_FINISH)            /* room left, yet not finished */
          return TW_EZLIB;
        break;
      }
    }
    if (g->zs.avail_in != 0)
      return TW_EZLIB;
    if (n) {                           /* a flush alone has data NULL */
      p += n;
      left -= n;
    }
  } while (left > 0);
  if (len)
    g->crc = crc32_z(g->crc, (const Bytef *)data, len);
  g->isize += (uint32_t)len;
  return 0;
}

/* Deflate iov[0..n) without flushing.  Returns 0 or an error. */
static int deflate_segments(gzip_sink *g, const struct iovec *iov, int n,
                            off_t *at)
{
  int rc = 0;

  for (int i = 0; i < n && rc == 0; i++)
    if (iov[i].iov_len)
      rc = deflate_data(g, iov[i].iov_base, iov[i].iov_len, Z_NO_FLUSH, at);
  return rc;
}

static size_t segments_len(const struct iovec *iov, int n)
{
  size_t total = 0;

  for (int i = 0; i < n; i++)
    total += iov[i].iov_len;
  return total;
}

/* Make zs ready to go on after the input so far: after a parallel
 * commit, reset it and prime it with the last 32 KiB of input.
 * Computation only (no allocation): safe in the crash hook.  Returns 0
 * or TW_EZLIB. */
static int serial_ready(gzip_sink *g)
{
  if (!g->zs_stale)
    return 0;
  if (deflateReset(&g->zs) != Z_OK ||
      (g->hist_len &&
       deflateSetDictionary(&g->zs, g->hist, (uInt)g->hist_len) != Z_OK))
    return TW_EZLIB;
  g->zs_stale = 0;
  return 0;
}

/* Keep the last TW__DEFLATE_WINDOW bytes of the input so far, iov[0..n)
 * (total bytes) being the newest.  memcpy only: safe in the crash hook. */
static void hist_update(gzip_sink *g, const struct iovec *iov, int n,
                        size_t total)
{
  size_t add = total < TW__DEFLATE_WINDOW ? total : TW__DEFLATE_WINDOW;
  size_t keep = TW__DEFLATE_WINDOW - add;
  size_t skip = total - add;          /* input bytes older than kept */
  unsigned char *dst;

  if (keep > g->hist_len)
    keep = g->hist_len;
  memmove(g->hist, g->hist + g->hist_len - keep, keep);
  dst = g->hist + keep;
  for (int i = 0; i < n; i++) {
    size_t len = iov[i].iov_len;
    const char *p = iov[i].iov_base;

    if (skip >= len) {
      skip -= len;
      continue;
    }
    memcpy(dst, p + skip, len - skip);
    dst += len - skip;
    skip = 0;
  }
  g->hist_len = keep + add;
}

static uint64_t now_ns(void)
{
  struct timespec t;

  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* How many threads deflate a commit of total bytes beginning at now.
 * Workers only where there is work: a commit below GZ_PAR_MIN gets one;
 * with gzip_threads=0 the workers start once the writer spends
 * GZ_DUTY_ON of its time in commits (deflate bounds it), and commits are
 * split while it spends GZ_DUTY_OFF; with gzip_threads=N they start at
 * the first commit big enough to split.  Failing to start them is no
 * error: the commit is deflated by one thread, as are all later ones. */
static unsigned par_threads(gzip_sink *g, size_t total, uint64_t now)
{
  if (g->last_start && now > g->last_start) {
    double d = (double)g->last_busy / (double)(now - g->last_start);

    g->duty = (3 * g->duty + (d > 1 ? 1 : d)) / 4;
  }
  if (g->max_threads <= 1 || total < GZ_PAR_MIN || g->pool_failed)
    return 1;
  if (g->adaptive && g->duty < (g->pool ? GZ_DUTY_OFF : GZ_DUTY_ON))
    return 1;
  if (!g->pool && tw__dpool_new(&g->pool, g->level, g->max_threads - 1)) {
    g->pool = NULL;
    g->pool_failed = 1;
    return 1;
  }
  return tw__dpool_threads(g->pool);
}

/* Deflate a commit's iov[0..n) and sync-flush, appending to out: by
 * several threads when par_threads says so, else on zs.  Returns 0 or
 * an error (the caller makes it sticky). */
static int deflate_commit(gzip_sink *g, const struct iovec *iov, int n)
{
  size_t total = segments_len(iov, n);
  uint64_t start = now_ns();
  unsigned threads = par_threads(g, total, start);
  int rc;

  if (threads > total / GZ_BLOCK_MIN)
    threads = (unsigned)(total / GZ_BLOCK_MIN);
  if (threads > 1) {
    size_t block = (total + threads - 1) / threads;

    rc = tw__dpool_deflate(g->pool, iov, n, total, block, g->hist,
                           g->hist_len, &g->out, &g->out_len, &g->out_cap,
                           &g->crc);
    if (rc == 0) {
      g->isize += (uint32_t)total;
      g->zs_stale = 1;
    }
  } else if ((rc = serial_ready(g)) == 0 &&
             (rc = deflate_segments(g, iov, n, NULL)) == 0) {
    rc = deflate_data(g, NULL, 0, Z_SYNC_FLUSH, NULL);
  }
  if (rc == 0)
    hist_update(g, iov, n, total);
  g->last_start = start;
  g->last_busy = now_ns() - start;
  return rc;
}

/* ------------------------------------------------------------- in place */

/* After a failed commit: put the last commit's end back at pos
 * (overwriting existing bytes needs no new blocks, so this usually works
 * even on a full disk) and drop whatever the commit wrote past it.  Makes
 * rc sticky and returns it.  pwrite and ftruncate only. */
static int undo_commit(gzip_sink *g, int rc)
{
  off_t keep = g->pos;

  if (g->committed) {
    struct iovec e = { g->end, g->end_len };
    keep = tw__write_all(g->fd, &e, 1, g->pos) == 0
           ? g->pos + (off_t)g->end_len : -1;
  }
  if (keep >= 0 && ftruncate(g->fd, keep) != 0) {
    /* The write's error is the one reported. */
  }
  return tw__sink_fail(&g->base, rc);
}

/* The end of an in-place commit whose deflate output is in out, the part
 * of it already written (by the crash hook) ending at at: write the rest
 * of out, a new stored block and trailer at at, in one pwritev.  Returns 0
 * or the (sticky) error, the last commit put back. */
static int finish_inplace(gzip_sink *g, off_t at)
{
  struct iovec iov[2];
  unsigned char *t;
  int rc;

  make_end(g, g->next_end);
  iov[0].iov_base = g->out;
  iov[0].iov_len = g->out_len;
  iov[1].iov_base = g->next_end;
  iov[1].iov_len = g->end_len;
  if ((rc = tw__write_all(g->fd, iov, 2, at)) != 0)
    return undo_commit(g, rc);
  g->base.out_bytes += (unsigned long long)(at + (off_t)g->out_len - g->pos);
  g->pos = at + (off_t)g->out_len;
  g->out_len = 0;
  t = g->end;
  g->end = g->next_end;
  g->next_end = t;
  g->committed = 1;
  return 0;
}

static int gzip_commit_inplace(gzip_sink *g, const struct iovec *iov, int n)
{
  int rc;

  if (segments_len(iov, n) == 0 && g->committed)
    return 0;                         /* the file is complete already */
  if ((rc = deflate_commit(g, iov, n)) != 0)
    return tw__sink_fail(&g->base, rc);
  return finish_inplace(g, g->pos);
}

/* ------------------------------------------------------------ streaming */

/* Write out[0..out_len) at the file position and empty it. */
static int flush_out(gzip_sink *g)
{
  struct iovec iov = { g->out, g->out_len };
  int rc = g->out_len ? tw__write_all(g->fd, &iov, 1, -1) : 0;

  if (rc == 0)
    g->base.out_bytes += g->out_len;
  g->out_len = 0;
  return rc;
}

static int gzip_commit_stream(gzip_sink *g, const struct iovec *iov, int n)
{
  int rc;

  /* An empty commit writes nothing (but the header, the first time). */
  if (segments_len(iov, n) && (rc = deflate_commit(g, iov, n)) != 0)
    return tw__sink_fail(&g->base, rc);
  if ((rc = flush_out(g)) != 0)
    return tw__sink_fail(&g->base, rc);
  return 0;
}

/* Deflate the tail with Z_FINISH, add the trailer and write both. */
static int finish_stream(gzip_sink *g)
{
  int rc;

  if ((rc = serial_ready(g)) != 0 ||
      (rc = deflate_data(g, g->base.tail, g->base.tail_len, Z_FINISH,
                         NULL)) != 0 ||
      (rc = out_reserve(g, GZ_TRAILER_LEN)) != 0)
    return rc;
  put_trailer(g, g->out + g->out_len, NULL, 0);   /* tail already folded in */
  g->out_len += GZ_TRAILER_LEN;
  return flush_out(g);
}

/* ------------------------------------------------------------ crash hook */

/* Called from a signal handler (see sink.h): deflate iov[0..n) without
 * allocating, writing the output as out fills, then commit as a write
 * would: in place, sync-flush and a new end at pos; streaming, a sync
 * flush, or, when final, the tail with Z_FINISH and the trailer. */
static int gzip_crash_commit(tw__sink *s, const struct iovec *iov, int n,
                             int final)
{
  gzip_sink *g = (gzip_sink *)s;
  int streaming = (s->caps & TW__SINK_STREAMING) != 0;
  off_t at = streaming ? -1 : g->pos;
  int rc;

  if (s->err)
    return s->err;
  if (!streaming && segments_len(iov, n) == 0 && g->committed)
    return 0;                         /* the file is complete already */
  if ((rc = serial_ready(g)) == 0 &&
      (rc = deflate_segments(g, iov, n, &at)) == 0)
    hist_update(g, iov, n, segments_len(iov, n));
  if (streaming) {
    if (rc == 0 && final) {
      rc = deflate_data(g, s->tail, s->tail_len, Z_FINISH, &at);
      if (rc == 0 && (rc = out_room(g, GZ_TRAILER_LEN, &at)) == 0) {
        put_trailer(g, g->out + g->out_len, NULL, 0);
        g->out_len += GZ_TRAILER_LEN;
      }
    } else if (rc == 0) {
      rc = deflate_data(g, NULL, 0, Z_SYNC_FLUSH, &at);
    }
    if (rc == 0)
      rc = out_emit(g, &at);
    return rc ? tw__sink_fail(s, rc) : 0;
  }
  if (rc == 0)
    rc = deflate_data(g, NULL, 0, Z_SYNC_FLUSH, &at);
  return rc ? undo_commit(g, rc) : finish_inplace(g, at);
}

/* ----------------------------------------------------------- operations */

/* The header, waiting in out to be written with the first commit. */
static void put_header(gzip_sink *g)
{
  /* ID1 ID2 CM=deflate FLG=0 MTIME=0 XFL OS=3 (Unix) */
  unsigned char header[GZ_HEADER_LEN] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3 };

  header[8] = g->level == 9 ? 2 : g->level == 1 ? 4 : 0;    /* XFL */
  memcpy(g->out, header, sizeof header);
  g->out_len = sizeof header;
  g->crc = crc32(0L, Z_NULL, 0);
  g->isize = 0;
}

static int gzip_commit(tw__sink *s, const struct iovec *iov, int n)
{
  gzip_sink *g = (gzip_sink *)s;
  struct stat st;

  if (s->err)
    return s->err;
  /* Cut under the writer (logrotate's copytruncate): the caller begins
   * a new member (restart) and commits again, rather than write after a
   * hole; a cut between this check and the write leaves a hole where
   * the member began, seen after it. */
  if (!(s->caps & TW__SINK_STREAMING)) {
    int rc;
    if (fstat(g->fd, &st) == 0 && S_ISREG(st.st_mode) &&
        st.st_size < g->pos + (g->committed ? (off_t)g->end_len : 0))
      return TW__ETRUNCATED;
    if ((rc = gzip_commit_inplace(g, iov, n)) != 0)
      return rc;
    return tw__fd_head_lost(g->fd, g->start, 0x1f) ? TW__ETRUNCATED : 0;
  }
  return gzip_commit_stream(g, iov, n);
}

/* Free everything but the fd; the workers stopped and joined, or (after
 * fork, when they are the parent's) only forgotten. */
static void gzip_free(gzip_sink *g, int join)
{
  if (join)
    tw__dpool_free(g->pool);
  else
    tw__dpool_abandon(g->pool);
  (void)deflateEnd(&g->zs);
  free(g->out);
  free(g->ends);
  free(g->hist);
  free(g);
}

static int gzip_close(tw__sink *s)
{
  gzip_sink *g = (gzip_sink *)s;
  int rc = gzip_commit(s, NULL, 0);

  /* In place, the stored final block ends the member already: the file
   * is complete and exactly as long as it must be. */
  if (!rc && (s->caps & TW__SINK_STREAMING) && (rc = finish_stream(g)) != 0)
    tw__sink_fail(s, rc);
  if (g->own_fd && close(g->fd) != 0 && !rc && errno != EINTR)
    rc = -errno;
  gzip_free(g, 1);
  return rc;
}

static void gzip_abandon(tw__sink *s)
{
  gzip_sink *g = (gzip_sink *)s;

  if (g->own_fd)
    close(g->fd);
  gzip_free(g, 0);
}

static int gzip_sync(tw__sink *s)
{
  gzip_sink *g = (gzip_sink *)s;

  if (s->err)
    return s->err;
  return tw__sink_fail(s, tw__fd_sync(g->fd));
}

static int gzip_restart(tw__sink *s)
{
  gzip_sink *g = (gzip_sink *)s;
  int zr;

  if (s->err)
    return s->err;
  if (ftruncate(g->fd, g->start) != 0)
    return tw__sink_fail(s, -errno);
  if ((zr = deflateReset(&g->zs)) != Z_OK)
    return tw__sink_fail(s, zlib_error(zr));
  g->pos = g->start;
  g->committed = 0;
  g->hist_len = 0;
  g->zs_stale = 0;
  put_header(g);
  return 0;
}

static const tw__sink_ops gzip_ops = {
  .commit = gzip_commit, .crash_commit = gzip_crash_commit,
  .restart = gzip_restart, .close = gzip_close, .abandon = gzip_abandon,
  .sync = gzip_sync
};

/* The most threads deflating a commit for gzip_threads=threads. */
static unsigned threads_for(unsigned threads)
{
  long cpus;

  if (threads == 0) {
    cpus = sysconf(_SC_NPROCESSORS_ONLN);
    threads = cpus > 0 ? (unsigned)(cpus < INT_MAX ? cpus : INT_MAX) : 1;
  }
  return threads < TW__DEFLATE_WORKERS_MAX + 1
         ? threads : TW__DEFLATE_WORKERS_MAX + 1;
}

int tw__sink_gzip_open(tw__sink **out, int fd, int own_fd,
                       const char *tail, size_t tail_len, int level,
                       unsigned threads)
{
  tw__fd_info info;
  gzip_sink *g;
  int zr, rc;

  if (level < 1 || level > 9)
    return TW_EOPTION;
  if (tail_len > 0xffff)
    return -EINVAL;                  /* a stored block holds 65535 bytes */
  if ((rc = tw__fd_probe(fd, &info)) != 0)
    return rc;

  if (!(g = calloc(1, sizeof *g)))
    return -ENOMEM;
  g->end_len = GZ_STORED_HDR + tail_len + GZ_TRAILER_LEN;
  g->out_cap = GZ_OUT_INITIAL;
  if (!(g->out = malloc(g->out_cap)) ||
      !(g->ends = malloc(2 * g->end_len)) ||
      !(g->hist = malloc(TW__DEFLATE_WINDOW))) {
    free(g->out);
    free(g->ends);
    free(g);
    return -ENOMEM;
  }
  g->end = g->ends;
  g->next_end = g->ends + g->end_len;
  zr = deflateInit2(&g->zs, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
  if (zr != Z_OK) {
    free(g->out);
    free(g->ends);
    free(g->hist);
    free(g);
    return zlib_error(zr);
  }
  /* Nothing may follow the member: drop what the file held past here.
   * Last, so that a failed open leaves the file alone. */
  if ((rc = tw__fd_cut(fd, &info)) != 0) {
    gzip_free(g, 1);
    return rc;
  }
  g->level = level;
  g->max_threads = threads_for(threads);
  g->adaptive = threads == 0;
  put_header(g);                  /* written with the first commit */
  g->base.ops = &gzip_ops;
  g->base.tail = tail;
  g->base.tail_len = tail_len;
  g->base.caps = TW__SINK_DEFLATES |
                 (info.start < 0 ? TW__SINK_STREAMING : 0);
  g->fd = fd;
  g->own_fd = own_fd;
  g->start = g->pos = info.start;
  *out = &g->base;
  return 0;
}
