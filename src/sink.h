/* sink.h -- the internal interface between the writer and its outputs
 *
 * A sink receives whole records and makes its output a complete JSON
 * document again after each commit.  The writer asks a sink what it can
 * do (its caps), never which sink it is:
 *
 *  - A buffering sink (file, stream, gzip) is given records in commits:
 *    commit() appends segments of whole records and makes the output
 *    complete.  The writer calls it holding its commit token, so a sink
 *    needs no lock of its own; the crash hook calls crash_commit() the
 *    same way from a signal handler.
 *  - A direct sink (mmap) lets each thread copy its records straight into
 *    the output: reserve() gives a thread a region of the output, which
 *    the thread fills with whole records by itself (tw__region_copy), each
 *    committed once its last byte is in place.  commit() is used only for
 *    the start of a file (head and metadata).
 */
#ifndef TW_SINK_H
#define TW_SINK_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

#include "internal.h"

typedef struct tw__sink tw__sink;

/* What commit returns, having written nothing, when the output holds
 * less than what was committed to it: it was truncated under the writer
 * (see restart).  Not sticky. */
#define TW__ETRUNCATED (-1997)
/* How many cuts in a row a writer begins a document again after, before
 * the cut becomes an -EIO: each failed try needs a new cut (the check
 * after a try sees only a cut made during it), so only a file truncated
 * in a loop reaches it. */
#define TW__CUT_TRIES 64

/* Segments a commit or crash commit takes at most: callers with more make
 * several commits. */
#define TW__COMMIT_IOV 64

/* What a sink can do: bits of tw__sink.caps. */
#define TW__SINK_STREAMING 0x1u /* the tail can only be written at close */
#define TW__SINK_DIRECT    0x2u /* threads copy records into regions */
#define TW__SINK_DEFLATES  0x4u /* commits are CPU work (compression): keep
                                   them off the producers' threads */

/* A thread's region of a direct sink: [at, end) is its own to fill with
 * whole records, front to back.  Zeroed: no region. */
typedef struct tw__region {
  char *at;                /* where the next record goes */
  char *end;               /* the end of the region */
  size_t size;             /* the size it was reserved with */
  void *lease;             /* the sink's hold on what the region lies in */
  tw__sink *sink;          /* the sink it was reserved from (NULL: no
                              region) */
} tw__region;

typedef struct tw__sink_ops {
  /* Append iov[0..n) (n <= TW__COMMIT_IOV; whole records, possibly none)
   * and commit: then the output holds every byte appended so far followed
   * by the tail (a streaming sink: every byte so far; the tail at close).
   * Returns 0 or a negative error, sticky; on error the output keeps its
   * last commit when the sink can ensure it. */
  int (*commit)(tw__sink *s, const struct iovec *iov, int n);
  /* The crash hook's commit, from a signal handler: as commit, using only
   * async-signal-safe calls (no allocation, lock or stdio).  final: the
   * process is about to die, so a streaming sink writes its tail too.
   * NULL for a sink with nothing to commit (direct). */
  int (*crash_commit)(tw__sink *s, const struct iovec *iov, int n,
                      int final);
  /* Direct sinks: give r, whose records are all copied, room for len more
   * bytes (a new region, or r grown in place), leaving its records
   * committed.  r may be zeroed (a thread's first region) or from an
   * older sink (after a rotation), which it then releases.  len 0 only
   * checks whether the file was cut (TW__ETRUNCATED), r untouched.
   * Thread-safe.  Returns 0, TW__ETRUNCATED (a cut seen, also while the
   * file grew) or a negative error (sticky). */
  int (*reserve)(tw__sink *s, tw__region *r, size_t len);
  /* Direct sinks: reserve returned TW__ETRUNCATED (the file was cut
   * under the writer).  Make *next, a new sink on the same file from its
   * start, and retire s: from now on it writes nothing to the file (its
   * memory goes once closed and its last region released).  Returns 0 or
   * a negative error. */
  int (*reopen)(tw__sink *s, tw__sink **next);
  /* Direct sinks: the thread that owns r is done with it (r zeroed).
   * Thread-safe; may free r->sink if it was retired and this was its
   * last region. */
  void (*release)(tw__region *r);
  /* The output was cut under the writer (logrotate's copytruncate): commit
   * returned TW__ETRUNCATED, having written nothing.  Cut it back to where
   * the trace began and forget what was committed: the next commit begins
   * a new document there.  NULL for a sink that cannot tell (streaming).
   * Returns 0 or a negative error (sticky). */
  int (*restart)(tw__sink *s);
  /* Commit what is pending, write the final tail, release everything and
   * free s (a direct sink: once its last region is released, too).
   * Returns 0 or the first error met, close(2)'s included. */
  int (*close)(tw__sink *s);
  /* In a child after fork: free s without writing a byte or touching the
   * parent's file position. */
  void (*abandon)(tw__sink *s);
  /* Make every committed byte durable (fdatasync).  Returns 0 or a
   * negative error (sticky). */
  int (*sync)(tw__sink *s);
} tw__sink_ops;

/* The part every sink starts with. */
struct tw__sink {
  const tw__sink_ops *ops;
  unsigned caps;           /* TW__SINK_* */
  const char *tail;        /* the document's end (layout.h) */
  size_t tail_len;
  int err;                 /* the first error: later calls fail fast */
  unsigned long long out_bytes; /* bytes committed to the output, the tail
                              (gzip: the final stored block and trailer)
                              and padding not counted: compressed bytes
                              for gzip.  Buffering sinks update it at each
                              commit; a direct sink counts what reserve
                              handed out */
  int retiring;            /* a direct sink being rotated away: no copy
                              may begin into its regions (atomic; see
                              tw__stage.copying in writer.h) */
};

/* Make rc the sink's sticky error unless it has one; returns the sticky
 * error (rc if it was the first).  Every sink path sets errors through
 * it. */
static inline int tw__sink_fail(tw__sink *s, int rc)
{
  if (rc && !s->err)
    s->err = rc;
  return s->err ? s->err : rc;
}

/* Copy a record into a direct sink's region (room checked by the caller)
 * front to back, so that a kill in the middle leaves a prefix of it: a
 * record cut short, which repair drops; memcpy may store a block's end
 * first.  16 bytes per store. */
static inline void tw__region_copy(tw__region *r, const char *src,
                                   size_t len)
{
  char *dst = r->at;
  size_t i;

  if (len < 16) {
    for (i = 0; i < len; i++) {
      dst[i] = src[i];
      __atomic_signal_fence(__ATOMIC_SEQ_CST);
    }
  } else {
    for (i = 0; i + 16 <= len; i += 16) {
      memcpy(dst + i, src + i, 16);
      __atomic_signal_fence(__ATOMIC_SEQ_CST);
    }
    if (i < len)              /* the last 16, overlapping: same bytes */
      memcpy(dst + len - 16, src + len - 16, 16);
  }
  r->at = dst + len;
}

/* File sink on fd.  own_fd: close fd at close.  A seekable fd without
 * O_APPEND is rewritten in place from its current offset; anything else
 * streams.  Returns 0 and *out, or a negative error. */
int tw__sink_file_open(tw__sink **out, int fd, int own_fd,
                       const char *tail, size_t tail_len);

/* Streaming sink on a stdio stream (never closed, flushed at each
 * commit). */
int tw__sink_stream_open(tw__sink **out, FILE *stream,
                         const char *tail, size_t tail_len);

/* mmap sink on fd (a regular file open O_RDWR without O_APPEND, else
 * TW_ESINK): direct; the file grows by chunk bytes of spaces. */
int tw__sink_mmap_open(tw__sink **out, int fd, int own_fd,
                       const char *tail, size_t tail_len, size_t chunk);

/* gzip sink on fd: one gzip member, valid after every commit on a
 * seekable regular file; a plain gzip stream finished at close on
 * anything else.  level 1..9; threads: gzip_threads (tw_options). */
int tw__sink_gzip_open(tw__sink **out, int fd, int own_fd,
                       const char *tail, size_t tail_len, int level,
                       unsigned threads);

/* The factory (sink.c): the sink o->sink names (resolved: not
 * TW_SINK_AUTO) on fd, with the tail of o's format.  Takes fd when
 * own_fd (closed on failure).  Returns 0 and *out, or an error. */
int tw__sink_open(int fd, int own_fd, const tw_options *o, tw__sink **out);
/* The same for a stdio stream (tw_open_stream): always streaming. */
int tw__sink_open_stream(FILE *stream, const tw_options *o, tw__sink **out);

#endif /* TW_SINK_H */
