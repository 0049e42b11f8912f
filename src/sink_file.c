/* sink_file.c -- the file sink (pwritev in place) and the streaming sinks
 *
 * In place: the file always ends with the tail.  A commit writes the new
 * records over the old tail and a new tail after them, in one pwritev, so
 * the file is valid before and after it.  If the write fails, the old tail
 * is put back and the file cut after it, so the last commit survives.
 *
 * Streaming (pipes, sockets, terminals, O_APPEND, devices, stdio): records
 * are written as they come and the tail only at close.
 *
 * The crash hook's commit (from a signal handler) is the same commit with
 * the writer's buffers as an iovec: pwritev/writev, and on failure pwrite
 * and ftruncate, all async-signal-safe; the stdio sink writes to the
 * stream's descriptor, since stdio is not.
 */
#include "internal.h"
#include "fdio.h"
#include "sink.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

typedef struct file_sink {
  tw__sink base;
  int fd;
  int own_fd;              /* close fd at close */
  off_t start;             /* in place: where the trace begins */
  off_t end;               /* in place: offset of the tail, where the next
                              records go */
  int committed;           /* a commit has succeeded: there is a tail */
  char first;              /* in place: the first byte it committed at
                              start (the head's) */
} file_sink;

/* In place, after a failed commit: put the last commit back (its tail at
 * end, nothing after it), or, if nothing was ever committed, the file as
 * it was found.  Only pwrite and ftruncate: the crash hook uses it too. */
static void undo_commit(file_sink *f)
{
  if (!f->committed) {
    /* Nothing was ever committed: leave the file as it was found. */
    if (ftruncate(f->fd, f->end) != 0) {
      /* The error already reported is the one that matters. */
    }
  } else {
    /* Overwriting bytes that exist needs no new blocks, so this usually
     * succeeds even on a full disk; if not, repair handles the file. */
    struct iovec t = { (void *)f->base.tail, f->base.tail_len };
    if (tw__write_all(f->fd, &t, 1, f->end) == 0 &&
        ftruncate(f->fd, f->end + (off_t)f->base.tail_len) != 0) {
      /* As above: the write's error is reported. */
    }
  }
}

/* Write data[0..n) (n <= TW__COMMIT_IOV) and commit: in place, at end
 * and followed by the tail, in one pwritev; streaming, at the file
 * position, followed by the tail only if with_tail.  Returns 0 or the
 * (now sticky) error.  Async-signal-safe: pwritev/writev, pwrite and
 * ftruncate only. */
static int file_commit_tail(file_sink *f, const struct iovec *data, int n,
                            int with_tail)
{
  struct iovec iov[TW__COMMIT_IOV + 1];
  size_t len = 0;
  int k = 0, rc;

  if (f->base.err)
    return f->base.err;
  if (n < 0 || n > TW__COMMIT_IOV)
    return -EINVAL;
  for (int i = 0; i < n; i++)
    if (data[i].iov_len) {
      iov[k++] = data[i];
      len += data[i].iov_len;
    }
  if (!(f->base.caps & TW__SINK_STREAMING) || with_tail) {
    iov[k].iov_base = (void *)f->base.tail;
    iov[k++].iov_len = f->base.tail_len;
  }
  if (f->base.caps & TW__SINK_STREAMING) {
    rc = k ? tw__write_all(f->fd, iov, k, -1) : 0;
    if (rc == 0)
      f->base.out_bytes += len + (with_tail ? f->base.tail_len : 0);
  } else {
    rc = tw__write_all(f->fd, iov, k, f->end);
    if (rc == 0) {
      f->end += (off_t)len;
      f->base.out_bytes += len;
      f->committed = 1;
    } else {
      undo_commit(f);
    }
  }
  return tw__sink_fail(&f->base, rc);
}

/* Whether the file was cut under the writer (logrotate's copytruncate):
 * before a commit, it is shorter than what was committed; after one, a
 * cut that came between the check and the write left a hole where the
 * document began (its first byte reads NUL, or nothing). */
static int file_was_cut(file_sink *f, int after)
{
  struct stat st;

  if (!after)
    return fstat(f->fd, &st) == 0 && S_ISREG(st.st_mode) &&
           st.st_size < f->end + (f->committed ? (off_t)f->base.tail_len : 0);
  return tw__fd_head_lost(f->fd, f->start, f->first);
}

static int file_commit(tw__sink *s, const struct iovec *iov, int n)
{
  file_sink *f = (file_sink *)s;
  int rc, first = !f->committed;

  /* Cut under the writer: the caller begins a new document (restart)
   * and commits again, rather than write after a hole. */
  if (s->caps & TW__SINK_STREAMING)
    return file_commit_tail(f, iov, n, 0);
  if (!s->err && file_was_cut(f, 0))
    return TW__ETRUNCATED;
  if ((rc = file_commit_tail(f, iov, n, 0)) != 0)
    return rc;
  if (first)
    f->first = n > 0 && iov[0].iov_len ? *(const char *)iov[0].iov_base
                                       : s->tail[0];
  return file_was_cut(f, 1) ? TW__ETRUNCATED : 0;
}

static int file_restart(tw__sink *s)
{
  file_sink *f = (file_sink *)s;

  if (s->err)
    return s->err;
  if (ftruncate(f->fd, f->start) != 0)
    return tw__sink_fail(s, -errno);
  f->end = f->start;
  f->committed = 0;
  return 0;
}

/* The crash hook: the same commit, the tail included when final. */
static int file_crash_commit(tw__sink *s, const struct iovec *iov, int n,
                             int final)
{
  return file_commit_tail((file_sink *)s, iov, n, final);
}

static int file_close(tw__sink *s)
{
  file_sink *f = (file_sink *)s;
  int rc = s->err;

  if (!rc && (s->caps & TW__SINK_STREAMING)) {
    struct iovec t = { (void *)s->tail, s->tail_len };
    rc = tw__write_all(f->fd, &t, 1, -1);
  }
  if (f->own_fd && close(f->fd) != 0 && !rc && errno != EINTR)
    rc = -errno;
  free(f);
  return rc;
}

static void file_abandon(tw__sink *s)
{
  file_sink *f = (file_sink *)s;

  if (f->own_fd)
    close(f->fd);
  free(f);
}

static int file_sync(tw__sink *s)
{
  file_sink *f = (file_sink *)s;

  if (s->err)
    return s->err;
  return tw__sink_fail(s, tw__fd_sync(f->fd));
}

static const tw__sink_ops file_ops = {
  .commit = file_commit, .crash_commit = file_crash_commit,
  .restart = file_restart, .close = file_close, .abandon = file_abandon,
  .sync = file_sync
};

int tw__sink_file_open(tw__sink **out, int fd, int own_fd,
                       const char *tail, size_t tail_len)
{
  tw__fd_info info;
  file_sink *f;
  int rc;

  if ((rc = tw__fd_probe(fd, &info)) != 0 || (rc = tw__fd_cut(fd, &info)))
    return rc;
  if (!(f = calloc(1, sizeof *f)))
    return -ENOMEM;
  f->base.ops = &file_ops;
  f->base.tail = tail;
  f->base.tail_len = tail_len;
  f->base.caps = info.start < 0 ? TW__SINK_STREAMING : 0;
  f->fd = fd;
  f->own_fd = own_fd;
  f->start = f->end = info.start;
  *out = &f->base;
  return 0;
}

/* ---------------------------------------------------------- stdio stream */

typedef struct stream_sink {
  tw__sink base;
  FILE *stream;
  int fd;                  /* fileno(stream), or -1: for the crash hook */
} stream_sink;

/* The error of a failed stdio call: errno when it says something. */
static int stdio_error(void)
{
  return errno ? -errno : -EIO;
}

static int stream_commit(tw__sink *s, const struct iovec *iov, int n)
{
  stream_sink *st = (stream_sink *)s;

  if (s->err)
    return s->err;
  errno = 0;
  for (int i = 0; i < n; i++) {
    if (iov[i].iov_len &&
        fwrite(iov[i].iov_base, 1, iov[i].iov_len, st->stream) !=
        iov[i].iov_len)
      return tw__sink_fail(s, stdio_error());
    s->out_bytes += iov[i].iov_len;
  }
  if (fflush(st->stream) != 0)
    return tw__sink_fail(s, stdio_error());
  return 0;
}

/* The crash hook: stdio is not async-signal-safe, so write to the
 * stream's descriptor directly.  The stream's buffer is empty (every
 * commit ends with fflush, and nobody else writes to the stream), so the
 * bytes land where the next fwrite would have put them.  A stream without
 * a descriptor (fmemopen, fopencookie) gets nothing. */
static int stream_crash_commit(tw__sink *s, const struct iovec *data, int n,
                               int final)
{
  stream_sink *st = (stream_sink *)s;
  struct iovec iov[TW__COMMIT_IOV + 1];
  int k = 0, rc;

  if (s->err)
    return s->err;
  if (st->fd < 0 || n < 0 || n > TW__COMMIT_IOV)
    return -EBADF;                /* nothing written: the stream goes on */
  size_t len = 0;
  for (int i = 0; i < n; i++)
    if (data[i].iov_len) {
      iov[k++] = data[i];
      len += data[i].iov_len;
    }
  if (final) {
    iov[k].iov_base = (void *)s->tail;
    iov[k++].iov_len = s->tail_len;
    len += s->tail_len;
  }
  if (k && (rc = tw__write_all(st->fd, iov, k, -1)) != 0)
    return tw__sink_fail(s, rc);
  s->out_bytes += len;
  return 0;
}

static int stream_close(tw__sink *s)
{
  stream_sink *st = (stream_sink *)s;
  int rc = s->err;

  if (!rc) {
    errno = 0;
    if (fwrite(s->tail, 1, s->tail_len, st->stream) != s->tail_len ||
        fflush(st->stream) != 0)
      rc = stdio_error();
  }
  free(st);
  return rc;
}

static void stream_abandon(tw__sink *s)
{
  free(s);
}

static int stream_sync(tw__sink *s)
{
  stream_sink *st = (stream_sink *)s;
  int rc;

  if (s->err)
    return s->err;
  /* A stream without a descriptor (fmemopen) has nothing to sync. */
  rc = st->fd < 0 ? 0 : tw__fd_sync(st->fd);
  return tw__sink_fail(s, rc == -EBADF ? 0 : rc);
}

static const tw__sink_ops stream_ops = {
  .commit = stream_commit, .crash_commit = stream_crash_commit,
  .close = stream_close, .abandon = stream_abandon, .sync = stream_sync
};

int tw__sink_stream_open(tw__sink **out, FILE *stream,
                         const char *tail, size_t tail_len)
{
  stream_sink *st = calloc(1, sizeof *st);

  if (!st)
    return -ENOMEM;
  st->base.ops = &stream_ops;
  st->base.tail = tail;
  st->base.tail_len = tail_len;
  st->base.caps = TW__SINK_STREAMING;
  st->stream = stream;
  st->fd = fileno(stream);
  *out = &st->base;
  return 0;
}
