/* sink.h -- the internal interface between the writer and its outputs
 *
 * A sink receives bytes that are whole records (the writer never hands it
 * half a record) and is responsible for making the output a complete JSON
 * document again after each tw__sink_write: that is the commit.  The writer
 * calls every operation with its lock held, or as the one committer thread,
 * and always holding its commit token, so a sink needs no locking of its
 * own for these calls -- crash_commit included, which the crash hook calls
 * from a signal handler.  Nothing outside the sink knows which sink it is.
 */
#ifndef TW_SINK_H
#define TW_SINK_H

#include <stddef.h>
#include <stdio.h>
#include <sys/uio.h>

typedef struct tw__sink tw__sink;

typedef struct tw__sink_ops {
  const char *name;
  /* Append len bytes of complete records (possibly 0) and commit: after it
   * returns 0 the output holds every byte appended so far followed by the
   * tail (for a streaming sink: every byte so far, tail only at close).
   * Returns 0 or a negative error; on error the output keeps its last
   * commit when the sink can ensure it. */
  int (*write)(tw__sink *s, const char *data, size_t len);
  /* Commit (as write with no data), write the final tail, release every
   * resource and free s.  Returns 0 or the first error met, that of
   * close(2) included. */
  int (*close)(tw__sink *s);
  /* In a child after fork: free s and its memory without writing a byte
   * or touching the parent's file position. */
  void (*abandon)(tw__sink *s);
  /* Make every committed byte durable (fdatasync, msync).  Returns 0 or
   * a negative error.  NULL: the sink has nothing to sync. */
  int (*sync)(tw__sink *s);
} tw__sink_ops;

/* The part every sink starts with. */
struct tw__sink {
  const tw__sink_ops *ops;
  const char *tail;        /* "\n]\n" or "\n]}\n": the document's end */
  size_t tail_len;
  int streaming;           /* 1: the tail can only be written at close */
  int unbuffered;          /* 1: give each record to write() at once (the
                              sink commits per record, e.g. mmap) */
  unsigned long long out_bytes; /* bytes the sink has committed to its
                              output, the tail (gzip: the final stored
                              block and trailer) not counted: compressed
                              bytes for gzip.  Updated by the sink */
  /* The crash hook's commit, called from a signal handler: append the
   * bytes of iov[0..n) (whole records; n <= TW_MAX_BUFFER_COUNT, one
   * segment per buffer of the writer) exactly as write() would, and
   * commit.  Only async-signal-safe calls: no allocation, no lock, no
   * stdio.  The writer makes sure no other call runs on s meanwhile (its
   * commit token).  final: the process is about to die, so a streaming
   * sink writes its tail too; without final it writes only the records
   * and can go on.  Returns 0 or a negative error (then sticky, as for
   * write).  Set at open by the sinks that buffer; NULL (as calloc leaves
   * it) for a sink with nothing to commit, such as mmap.  A field rather
   * than an op, so that a sink's ops table need not know of it. */
  int (*crash_commit)(tw__sink *s, const struct iovec *iov, int n,
                      int final);
};

/* File sink on fd.  own_fd: close fd at close.  A seekable fd without
 * O_APPEND is rewritten in place from its current offset; anything else
 * streams.  Returns 0 and *out, or a negative error. */
int tw__sink_file_open(tw__sink **out, int fd, int own_fd,
                       const char *tail, size_t tail_len);

/* Streaming sink on a stdio stream (never closed, flushed at each commit). */
int tw__sink_stream_open(tw__sink **out, FILE *stream,
                         const char *tail, size_t tail_len);

/* mmap sink on fd (a seekable regular file, else TW_ESINK): the file
 * grows by chunk bytes of spaces and each record is committed as soon as
 * it is copied in.  Unbuffered. */
int tw__sink_mmap_open(tw__sink **out, int fd, int own_fd,
                       const char *tail, size_t tail_len, size_t chunk);

/* gzip sink on fd: one gzip member, valid after every commit on a
 * seekable regular file; a plain gzip stream finished at close on
 * anything else.  level 1..9. */
int tw__sink_gzip_open(tw__sink **out, int fd, int own_fd,
                       const char *tail, size_t tail_len, int level);

#endif /* TW_SINK_H */
