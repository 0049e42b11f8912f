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
#include "sink.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

typedef struct file_sink {
  tw__sink base;
  int fd;
  int own_fd;              /* close fd at close */
  off_t end;               /* in place: offset of the tail, where the next
                              records go */
  int committed;           /* a commit has succeeded: there is a tail */
  int err;                 /* first error; later writes fail fast */
} file_sink;

/* Write all of iov at offset (pwritev) or at the file position (offset
 * < 0, writev), retrying short writes and EINTR.  Consumes iov.  Returns 0
 * or -errno. */
static int write_all(int fd, struct iovec *iov, int n, off_t offset)
{
  while (n > 0) {
    ssize_t k = offset >= 0 ? pwritev(fd, iov, n, offset) : writev(fd, iov, n);
    if (k < 0) {
      if (errno == EINTR)
        continue;
      return -errno;
    }
    if (k == 0)
      return -EIO;
    if (offset >= 0)
      offset += k;
    while (n > 0 && (size_t)k >= iov->iov_len) {
      k -= (ssize_t)iov->iov_len;
      iov++;
      n--;
    }
    if (n > 0) {
      iov->iov_base = (char *)iov->iov_base + k;
      iov->iov_len -= (size_t)k;
    }
  }
  return 0;
}

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
    if (write_all(f->fd, &t, 1, f->end) == 0 &&
        ftruncate(f->fd, f->end + (off_t)f->base.tail_len) != 0) {
      /* As above: the write's error is reported. */
    }
  }
}

/* Segments a crash commit gets at most: one per buffer of the writer. */
#define SEGMENTS ((int)TW_MAX_BUFFER_COUNT)

/* Write iov[0..n) (n <= SEGMENTS) and commit: in place, at end and
 * followed by the tail, in one pwritev; streaming, at the file position,
 * followed by the tail only if with_tail.  Returns 0 or the (now sticky)
 * error.  Async-signal-safe: pwritev/writev, pwrite and ftruncate only. */
static int file_commit(file_sink *f, const struct iovec *data, int n,
                       int with_tail)
{
  struct iovec iov[SEGMENTS + 1];
  size_t len = 0;
  int k = 0, rc;

  if (f->err)
    return f->err;
  if (n < 0 || n > SEGMENTS)
    return -EINVAL;
  for (int i = 0; i < n; i++)
    if (data[i].iov_len) {
      iov[k++] = data[i];
      len += data[i].iov_len;
    }
  if (!f->base.streaming || with_tail) {
    iov[k].iov_base = (void *)f->base.tail;
    iov[k++].iov_len = f->base.tail_len;
  }
  if (f->base.streaming) {
    rc = k ? write_all(f->fd, iov, k, -1) : 0;
    if (rc == 0)
      f->base.out_bytes += len + (with_tail ? f->base.tail_len : 0);
  } else {
    rc = write_all(f->fd, iov, k, f->end);
    if (rc == 0) {
      f->end += (off_t)len;
      f->base.out_bytes += len;
      f->committed = 1;
    } else {
      undo_commit(f);
    }
  }
  if (rc)
    f->err = rc;
  return rc;
}

static int file_write(tw__sink *s, const char *data, size_t len)
{
  struct iovec iov = { (void *)data, len };

  return file_commit((file_sink *)s, &iov, 1, 0);
}

/* The crash hook: the same commit, the tail included when final. */
static int file_crash_commit(tw__sink *s, const struct iovec *iov, int n,
                             int final)
{
  return file_commit((file_sink *)s, iov, n, final);
}

static int file_close(tw__sink *s)
{
  file_sink *f = (file_sink *)s;
  int rc = f->err;

  if (!rc && s->streaming) {
    struct iovec t = { (void *)s->tail, s->tail_len };
    rc = write_all(f->fd, &t, 1, -1);
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

  if (f->err)
    return f->err;
  /* Pipes, sockets and terminals have nothing to sync. */
  if (fdatasync(f->fd) != 0 && errno != EINVAL && errno != EROFS)
    f->err = -errno;
  return f->err;
}

static const tw__sink_ops file_ops = {
  "file", file_write, file_close, file_abandon, file_sync
};

int tw__sink_file_open(tw__sink **out, int fd, int own_fd,
                       const char *tail, size_t tail_len)
{
  file_sink *f;
  struct stat st;
  int flags;
  off_t start = -1;

  if (fstat(fd, &st) != 0 || (flags = fcntl(fd, F_GETFL)) < 0)
    return -errno;
  if ((flags & O_ACCMODE) == O_RDONLY)
    return -EBADF;
  if (S_ISREG(st.st_mode) && !(flags & O_APPEND)) {
    if ((start = lseek(fd, 0, SEEK_CUR)) < 0)
      return -errno;
    /* Nothing may follow the tail: drop what the file held past here. */
    if (st.st_size > start && ftruncate(fd, start) != 0)
      return -errno;
  }
  if (!(f = calloc(1, sizeof *f)))
    return -ENOMEM;
  f->base.ops = &file_ops;
  f->base.tail = tail;
  f->base.tail_len = tail_len;
  f->base.streaming = start < 0;
  f->base.crash_commit = file_crash_commit;
  f->fd = fd;
  f->own_fd = own_fd;
  f->end = start;
  *out = &f->base;
  return 0;
}

/* ---------------------------------------------------------- stdio stream */

typedef struct stream_sink {
  tw__sink base;
  FILE *stream;
  int fd;                  /* fileno(stream), or -1: for the crash hook */
  int err;
} stream_sink;

/* The error of a failed stdio call: errno when it says something. */
static int stdio_error(void)
{
  return errno ? -errno : -EIO;
}

static int stream_write(tw__sink *s, const char *data, size_t len)
{
  stream_sink *st = (stream_sink *)s;

  if (st->err)
    return st->err;
  errno = 0;
  if ((len && fwrite(data, 1, len, st->stream) != len) ||
      fflush(st->stream) != 0)
    st->err = stdio_error();
  else
    s->out_bytes += len;
  return st->err;
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
  struct iovec iov[SEGMENTS + 1];
  int k = 0;

  if (st->err)
    return st->err;
  if (st->fd < 0 || n < 0 || n > SEGMENTS)
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
  if (k && (st->err = write_all(st->fd, iov, k, -1)) != 0)
    return st->err;
  s->out_bytes += len;
  return 0;
}

static int stream_close(tw__sink *s)
{
  stream_sink *st = (stream_sink *)s;
  int rc = st->err;

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

  if (!st->err && fdatasync(fileno(st->stream)) != 0 && errno != EINVAL &&
      errno != EROFS && errno != EBADF)
    st->err = -errno;
  return st->err;
}

static const tw__sink_ops stream_ops = {
  "stream", stream_write, stream_close, stream_abandon, stream_sync
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
  st->base.streaming = 1;
  st->base.crash_commit = stream_crash_commit;
  st->stream = stream;
  st->fd = fileno(stream);
  *out = &st->base;
  return 0;
}
