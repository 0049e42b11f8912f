/* writer.c -- the writer: buffer, lock, commit, stats, sticky error
 *
 * An event is formatted outside the lock into a stack buffer (or, for a
 * large one, a per-thread scratch buffer), then copied into the writer's
 * buffer under the lock.  A full buffer, tw_flush and tw_close commit: the
 * buffered records go to the sink, which makes the file valid again.
 */
#include "internal.h"
#include "sink.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* One buffer of records waiting to be committed. */
typedef struct tw__buffer {
  char *data;
  size_t len;
} tw__buffer;

#define MAX_BUFFERS 8

struct tw_writer {
  pthread_mutex_t lock;    /* guards every field below but the atomics */
  tw__sink *sink;          /* where commits go; used by one thread at a
                              time: the committer, or the lock holder when
                              there is none */
  tw__buffer bufs[MAX_BUFFERS]; /* a ring: bufs[fill] is being filled, the
                              `queued` before it wait for the committer */
  unsigned nbufs;          /* buffers in the ring (1 when inline) */
  unsigned fill;           /* index of the buffer being filled */
  unsigned queued;         /* full buffers handed to the committer */
  size_t buf_cap;          /* size of each buffer (0: unbuffered sink) */
  int background;          /* 1: a committer thread does the sink writes */
  int committing;          /* the committer is writing, lock released */
  int stopping;            /* tw_close asks the committer to finish */
  int wake_committer;      /* a buffer was handed off: signal work once
                              the lock is released, so the committer does
                              not wake only to block on the lock */
  pthread_t committer;     /* the committer thread, if background */
  uint64_t interval_ns;    /* commit at least this often (0: no timer) */
  int drop_when_full;      /* on_full=drop */
  int sync_commits;        /* TW_OPT_SYNC */
  uint64_t drops_unreported; /* dropped since the last drop report */
  pthread_cond_t work;     /* committer waits: queued > 0 or stopping */
  pthread_cond_t done;     /* producers wait: a buffer was committed */
  int err;                 /* sticky error; read without the lock */
  unsigned fork_gen;       /* tw__fork_generation() at open */
  tw__fmt_config fmt;      /* what the formatter needs */
  size_t max_event;        /* largest record accepted */
  tw_stats_t stats;        /* events, bytes, commits: under the lock;
                              rejected, truncated, replaced: atomic */
};

/* ------------------------------------------------------ per-thread scratch */

/* Records up to this size are formatted on the stack. */
#define STACK_RECORD 4096

static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;
static pthread_key_t scratch_key;
static TW__THREAD char *scratch;
static TW__THREAD size_t scratch_cap;

static void scratch_key_init(void)
{
  (void)pthread_key_create(&scratch_key, free);
}

/* The calling thread's scratch buffer with at least want bytes, or NULL.
 * Grows by doubling, so a thread allocates O(log max_event) times in its
 * life; freed when the thread exits. */
static char *scratch_get(size_t want)
{
  size_t cap;
  char *p;

  if (want <= scratch_cap)
    return scratch;
  cap = scratch_cap ? scratch_cap : STACK_RECORD;
  while (cap < want)
    cap *= 2;
  pthread_once(&scratch_once, scratch_key_init);
  p = realloc(scratch, cap);
  if (!p)
    return NULL;
  scratch = p;
  scratch_cap = cap;
  (void)pthread_setspecific(scratch_key, p);
  return p;
}

/* ------------------------------------------------------------- internals */

static void set_error_locked(tw_writer *w, int err)
{
  if (!w->err)
    __atomic_store_n(&w->err, err, __ATOMIC_RELAXED);
}

/* Write bytes to the sink, which commits, then sync them if asked (an
 * unbuffered sink commits per record: it syncs at tw_flush only).  Called
 * by the one thread that may use the sink.  Returns 0 or an error. */
static int sink_commit(tw_writer *w, const char *data, size_t len)
{
  int rc = w->sink->ops->write(w->sink, data, len);
  if (rc == 0 && w->sync_commits && !w->sink->unbuffered &&
      w->sink->ops->sync)
    rc = w->sink->ops->sync(w->sink);
  return rc;
}

/* Write bytes to the sink and count the commit.  Lock held, and no
 * committer writing.  Returns 0 or the (now sticky) error. */
static int sink_write_locked(tw_writer *w, const char *data, size_t len)
{
  int rc = sink_commit(w, data, len);
  if (rc) {
    set_error_locked(w, rc);
    return rc;
  }
  w->stats.commits++;
  return 0;
}

/* Wait until the committer has committed every buffer handed to it and
 * is idle.  Lock held.  Returns 0 or the sticky error. */
static int wait_idle_locked(tw_writer *w)
{
  while ((w->queued > 0 || w->committing) && !w->err)
    pthread_cond_wait(&w->done, &w->lock);
  return w->err;
}

static int hand_off_locked(tw_writer *w, int may_drop);
static void signal_committer_locked(tw_writer *w);
static void report_drops_locked(tw_writer *w);

/* The committer thread: commits full buffers, oldest first, with the lock
 * released so producers go on filling the next buffer. */
static void *committer_main(void *arg)
{
  tw_writer *w = arg;

  uint64_t deadline = w->interval_ns ? tw_now_ns() + w->interval_ns : 0;
#ifdef SCHED_BATCH
  struct sched_param batch = { 0 };

  /* A woken committer should not preempt the producer that woke it. */
  (void)pthread_setschedparam(pthread_self(), SCHED_BATCH, &batch);
#endif

  pthread_mutex_lock(&w->lock);
  for (;;) {
    while (w->queued == 0 && !w->stopping) {
      if (!w->interval_ns) {
        pthread_cond_wait(&w->work, &w->lock);
        continue;
      }
      uint64_t now = tw_now_ns();
      if (now >= deadline) {
        /* Time to commit what producers have buffered, even if idle. */
        deadline = now + w->interval_ns;
        if (w->bufs[w->fill].len && w->queued + 1 < w->nbufs) {
          (void)hand_off_locked(w, 0);
          w->wake_committer = 0;            /* we are the committer */
          continue;
        }
      }
      struct timespec ts = { (time_t)(deadline / 1000000000u),
                             (long)(deadline % 1000000000u) };
      pthread_cond_timedwait(&w->work, &w->lock, &ts);
    }
    if (w->queued == 0)
      break;                                /* stopping, nothing left */
    {
      tw__buffer *b = &w->bufs[(w->fill + w->nbufs - w->queued) % w->nbufs];
      int rc = 0;
      if (!w->err) {
        w->committing = 1;
        pthread_mutex_unlock(&w->lock);
        rc = sink_commit(w, b->data, b->len);
        pthread_mutex_lock(&w->lock);
        w->committing = 0;
        if (rc)
          set_error_locked(w, rc);
        else
          w->stats.commits++;
      }
      b->len = 0;
      w->queued--;
      pthread_cond_broadcast(&w->done);
    }
  }
  pthread_mutex_unlock(&w->lock);
  return NULL;
}

/* Commit the buffer being filled: inline, write it now; in the
 * background, hand it to the committer and take the next free buffer,
 * waiting for one if all are full -- or, if may_drop, returning
 * TW_EDROPPED at once.  Lock held.  Returns 0, TW_EDROPPED or the sticky
 * error. */
static int hand_off_locked(tw_writer *w, int may_drop)
{
  tw__buffer *b = &w->bufs[w->fill];
  int rc;

  if (w->err)
    return w->err;
  if (!w->background) {
    if ((rc = sink_write_locked(w, b->data, b->len)) == 0)
      b->len = 0;
    return rc;
  }
  if (b->len == 0)
    return 0;
  if (w->queued + 1 >= w->nbufs && may_drop)
    return TW_EDROPPED;
  if (w->queued + 1 >= w->nbufs)
    signal_committer_locked(w);
  while (w->queued + 1 >= w->nbufs && !w->err)
    pthread_cond_wait(&w->done, &w->lock);
  if (w->err)
    return w->err;
  w->queued++;
  w->fill = (w->fill + 1) % w->nbufs;
  w->bufs[w->fill].len = 0;
  w->wake_committer = 1;       /* signalled by the caller, after unlock */
  if (w->drops_unreported)
    report_drops_locked(w);
  return 0;
}

/* Wake the committer for the buffers handed off.  Lock held (the slow
 * paths; producers signal after unlocking instead). */
static void signal_committer_locked(tw_writer *w)
{
  if (w->wake_committer) {
    w->wake_committer = 0;
    pthread_cond_signal(&w->work);
  }
}

/* Commit everything emitted so far and wait until it is in the file.
 * Lock held.  Returns 0 or the sticky error. */
static int commit_all_locked(tw_writer *w)
{
  int rc;

  /* Drops since the last report are reported in this commit: in the
   * buffer being filled, or, if it has no room left, in the next one. */
  if (w->drops_unreported && !w->err) {
    report_drops_locked(w);
    if (w->drops_unreported && (rc = hand_off_locked(w, 0)) != 0)
      return rc;
  }
  rc = hand_off_locked(w, 0);
  if (rc || !w->background)
    return rc;
  signal_committer_locked(w);
  return wait_idle_locked(w);
}

/* Copy one formatted record into the buffer being filled, committing it
 * first if the record does not fit.  A record larger than a whole buffer
 * goes to the sink on its own, after everything before it.  Returns 0 or
 * the sticky error. */
static int append_record(tw_writer *w, const char *rec, size_t len)
{
  tw__buffer *b;
  int rc = 0, wake;

  pthread_mutex_lock(&w->lock);
  if (w->err) {
    rc = w->err;
    goto out;
  }
  b = &w->bufs[w->fill];
  if (len > w->buf_cap - b->len) {
    if (b->len && (rc = hand_off_locked(w, w->drop_when_full)) != 0)
      goto dropped;
    b = &w->bufs[w->fill];
    if (len > w->buf_cap - b->len) {
      /* Larger than a buffer (or than the room a drop report left): it
       * goes to the sink by itself, after everything before it. */
      if (w->drop_when_full && (w->queued || w->committing)) {
        rc = TW_EDROPPED;
        goto dropped;
      }
      signal_committer_locked(w);
      if ((rc = wait_idle_locked(w)) != 0)
        goto out;
      if (b->len) {
        if ((rc = sink_write_locked(w, b->data, b->len)) != 0)
          goto out;
        b->len = 0;
      }
      if ((rc = sink_write_locked(w, rec, len)) != 0)
        goto out;
      goto counted;
    }
  }
  memcpy(b->data + b->len, rec, len);
  b->len += len;
counted:
  w->stats.events++;
  w->stats.bytes += len;
  goto out;
dropped:
  if (rc == TW_EDROPPED) {
    w->stats.dropped++;
    w->drops_unreported++;
  }
out:
  wake = w->wake_committer;
  w->wake_committer = 0;
  pthread_mutex_unlock(&w->lock);
  if (wake)
    pthread_cond_signal(&w->work);
  return rc;
}

static int forked(const tw_writer *w)
{
  return w->fork_gen != tw__fork_generation();
}

/* Format ev with its defaults resolved into *rec (stackbuf of stackcap bytes, or
 * the thread's scratch when it is too small).  Returns 0 with *rec and
 * *len set, or the error for the caller. */
static int format_record(tw_writer *w, const tw_event *ev, char *stackbuf,
                         size_t stackcap, char **rec, size_t *len)
{
  tw__fmt_defaults def;
  tw__fmt_notes notes;
  char *buf = stackbuf;
  size_t cap = stackcap;
  int rc;

  def.ts = (ev->has & TW_HAS_TS) || ev->ph == 'M' ? 0 : tw_now_ns();
  def.pid = (ev->has & TW_HAS_PID) ? 0 : tw__pid();
  def.tid = (ev->has & TW_HAS_TID) ? 0 : tw__tid();
  for (;;) {
    notes.truncated = notes.replaced = 0;
    rc = tw__format_event(ev, &def, &w->fmt, buf, cap, len, &notes);
    if (rc != TW__ENOROOM)
      break;
    if (cap >= w->max_event) {
      rc = TW_ETOOBIG;
      break;
    }
    cap = *len < w->max_event ? *len : w->max_event;
    if (!(buf = scratch_get(cap))) {
      rc = -ENOMEM;
      break;
    }
  }
  if (rc == 0 && *len > w->max_event)
    rc = TW_ETOOBIG;
  if (rc) {
    __atomic_fetch_add(&w->stats.rejected, 1, __ATOMIC_RELAXED);
    return rc;
  }
  if (notes.truncated)
    __atomic_fetch_add(&w->stats.strings_truncated, notes.truncated,
                       __ATOMIC_RELAXED);
  if (notes.replaced)
    __atomic_fetch_add(&w->stats.utf8_replaced, notes.replaced,
                       __ATOMIC_RELAXED);
  *rec = buf;
  return 0;
}

/* Put a global instant "tracewriter: events dropped" with the count at
 * the start of the buffer just begun, so the loss shows in the viewer.
 * Lock held; the buffer is empty and larger than the record. */
static void report_drops_locked(tw_writer *w)
{
  tw__buffer *b = &w->bufs[w->fill];
  tw_arg arg = tw_arg_uint("dropped", w->drops_unreported);
  tw__fmt_notes notes = { 0, 0 };
  tw_event ev;
  size_t len;

  tw__fmt_defaults def = { tw_now_ns(), tw__pid(), tw__tid() };

  memset(&ev, 0, sizeof ev);
  ev.ph = 'I';
  ev.scope = 'g';
  ev.name = "tracewriter: events dropped";
  ev.cat = "tracewriter";
  ev.args = &arg;
  ev.nargs = 1;
  if (tw__format_event(&ev, &def, &w->fmt, b->data + b->len,
                       w->buf_cap - b->len, &len, &notes) == 0) {
    b->len += len;
    w->stats.events++;
    w->stats.bytes += len;
    w->drops_unreported = 0;
  }
}

/* ------------------------------------------------------------ public API */

int tw_emit(tw_writer *w, const tw_event *ev)
{
  char stackbuf[STACK_RECORD];
  char *rec;
  size_t len;
  int rc;

  if (!w)
    return 0;
  if (!ev)
    return -EINVAL;
  if (TW__UNLIKELY(forked(w)))
    return TW_EFORKED;
  if ((rc = __atomic_load_n(&w->err, __ATOMIC_RELAXED)) != 0)
    return rc;
  if ((rc = format_record(w, ev, stackbuf, sizeof stackbuf, &rec, &len)) != 0)
    return rc;
  return append_record(w, rec, len);
}

/* A condition variable whose timed waits use CLOCK_MONOTONIC, the clock
 * of tw_now_ns.  Returns 0 or an errno value. */
static int init_monotonic_cond(pthread_cond_t *cond)
{
  pthread_condattr_t attr;
  int rc = pthread_condattr_init(&attr);
  if (rc)
    return rc;
  rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  if (!rc)
    rc = pthread_cond_init(cond, &attr);
  pthread_condattr_destroy(&attr);
  return rc;
}

/* Free what writer_create allocated (lock and conditions excepted). */
static void writer_free(tw_writer *w)
{
  for (unsigned i = 0; i < w->nbufs; i++)
    free(w->bufs[i].data);
  free(w);
}

/* Create a writer on an opened sink and commit its head and first record.
 * Takes the sink: on failure it is abandoned.  Returns the writer or NULL
 * with *error set. */
static tw_writer *writer_create(tw__sink *sink, const tw_options *o,
                                int *error)
{
  const char *head = o->format == TW_FORMAT_OBJECT ? "{\"traceEvents\":[" : "[";
  size_t head_len = strlen(head);
  char stackbuf[STACK_RECORD];
  tw_writer *w;
  tw_arg arg;
  tw_event ev;
  char *rec;
  size_t len;
  int rc = -ENOMEM;

  if (!(w = calloc(1, sizeof *w)))
    goto fail;
  w->sink = sink;
  w->interval_ns = o->flush_interval_ns;
  w->drop_when_full = o->on_full == TW_ON_FULL_DROP;
  w->sync_commits = (o->flags & TW_OPT_SYNC) != 0;
  /* A timer needs the committer thread; so do gzip's deflates. */
  w->background = !sink->unbuffered &&
    (o->commit == TW_COMMIT_BACKGROUND || w->interval_ns ||
     (o->commit == TW_COMMIT_AUTO && o->sink == TW_SINK_GZIP));
  w->nbufs = w->background ? o->buffer_count : 1;
  w->buf_cap = sink->unbuffered ? 0 : o->buffer_size;
  for (unsigned i = 0; i < w->nbufs; i++)
    if (w->buf_cap && !(w->bufs[i].data = malloc(w->buf_cap)))
      goto fail;
  tw__install_fork_handler();
  w->fork_gen = tw__fork_generation();
  w->fmt.flags = o->flags;
  w->fmt.max_string = o->max_string;
  w->max_event = o->max_event;

  /* The head and the first record (without its leading comma) in one
   * write, so the file is a valid trace from the start. */
  memset(&ev, 0, sizeof ev);
  ev.ph = 'M';
  ev.name = "process_name";
  arg = tw_arg_str("name", o->process_name ? o->process_name
                                           : tw__program_name());
  ev.args = &arg;
  ev.nargs = 1;
  if ((rc = format_record(w, &ev, stackbuf + head_len,
                          sizeof stackbuf - head_len, &rec, &len)) != 0)
    goto fail;
  if (rec != stackbuf + head_len) {
    rc = TW_ETOOBIG;                      /* a process name of > 4 KiB */
    goto fail;
  }
  memcpy(rec + 1 - head_len, head, head_len);
  if ((rc = sink_commit(w, rec + 1 - head_len, head_len + len - 1)))
    goto fail;
  w->stats.events = 1;
  w->stats.bytes = head_len + len - 1;
  w->stats.commits = 1;

  if ((rc = -pthread_mutex_init(&w->lock, NULL)) != 0)
    goto fail;
  if ((rc = -init_monotonic_cond(&w->work)) != 0)
    goto fail_mutex;
  if ((rc = -pthread_cond_init(&w->done, NULL)) != 0)
    goto fail_work;
  if (w->background &&
      (rc = -pthread_create(&w->committer, NULL, committer_main, w)) != 0)
    goto fail_done;
  return w;

fail_done:
  pthread_cond_destroy(&w->done);
fail_work:
  pthread_cond_destroy(&w->work);
fail_mutex:
  pthread_mutex_destroy(&w->lock);
fail:
  if (w)
    writer_free(w);
  sink->ops->abandon(sink);
  if (error)
    *error = rc;
  return NULL;
}

static const char *tail_of(const tw_options *o, size_t *len)
{
  const char *t = o->format == TW_FORMAT_OBJECT ? "\n]}\n" : "\n]\n";
  *len = strlen(t);
  return t;
}

/* 1 if path ends in ".gz". */
static int gz_path(const char *path)
{
  size_t n = strlen(path);
  return n >= 3 && strcmp(path + n - 3, ".gz") == 0;
}

/* Open the sink the options ask for on fd, then the writer.  Takes fd
 * when own_fd.  Returns the writer or NULL with *error set. */
static tw_writer *open_fd(int fd, int own_fd, const tw_options *o,
                          int *error)
{
  tw__sink *sink;
  size_t tail_len;
  const char *tail = tail_of(o, &tail_len);
  int rc;

  switch (o->sink) {
  case TW_SINK_MMAP:
    rc = tw__sink_mmap_open(&sink, fd, own_fd, tail, tail_len, o->mmap_chunk);
    break;
  case TW_SINK_GZIP:
    rc = tw__sink_gzip_open(&sink, fd, own_fd, tail, tail_len, o->gzip_level);
    break;
  default:
    rc = tw__sink_file_open(&sink, fd, own_fd, tail, tail_len);
    break;
  }
  if (rc) {
    if (own_fd)
      close(fd);
    if (error)
      *error = rc;
    return NULL;
  }
  return writer_create(sink, o, error);
}

tw_writer *tw_open(const char *path, const tw_options *opts, int *error)
{
  tw_options o;
  int fd, rc;

  if (!path)
    rc = -EINVAL;
  else if ((rc = tw__options_import(&o, opts)) == 0) {
    if (o.sink == TW_SINK_AUTO)
      o.sink = gz_path(path) ? TW_SINK_GZIP : TW_SINK_FILE;
    /* A shared writable mapping needs read access too. */
    int mode = o.sink == TW_SINK_MMAP ? O_RDWR : O_WRONLY;
    do
      fd = open(path, mode | O_CREAT | O_TRUNC | O_CLOEXEC, o.file_mode);
    while (fd < 0 && errno == EINTR);
    if (fd >= 0)
      return open_fd(fd, 1, &o, error);
    rc = -errno;
  }
  if (error)
    *error = rc;
  return NULL;
}

tw_writer *tw_open_fd(int fd, const tw_options *opts, int *error)
{
  tw_options o;
  int rc;

  if (fd < 0)
    rc = -EBADF;
  else if ((rc = tw__options_import(&o, opts)) == 0) {
    if (o.sink == TW_SINK_AUTO)
      o.sink = TW_SINK_FILE;
    return open_fd(fd, 0, &o, error);
  }
  if (error)
    *error = rc;
  return NULL;
}

tw_writer *tw_open_stream(FILE *stream, const tw_options *opts, int *error)
{
  tw_options o;
  tw__sink *sink;
  size_t tail_len;
  const char *tail;
  int rc;

  if (!stream)
    rc = -EINVAL;
  else if ((rc = tw__options_import(&o, opts)) == 0) {
    if (o.sink != TW_SINK_AUTO && o.sink != TW_SINK_FILE)
      rc = TW_ESINK;
    else {
      o.sink = TW_SINK_FILE;
      tail = tail_of(&o, &tail_len);
      if ((rc = tw__sink_stream_open(&sink, stream, tail, tail_len)) == 0)
        return writer_create(sink, &o, error);
    }
  }
  if (error)
    *error = rc;
  return NULL;
}

int tw_flush(tw_writer *w)
{
  int rc;

  if (!w)
    return 0;
  if (forked(w))
    return TW_EFORKED;
  pthread_mutex_lock(&w->lock);
  rc = commit_all_locked(w);
  if (!rc && w->sync_commits && w->sink->unbuffered && w->sink->ops->sync &&
      (rc = w->sink->ops->sync(w->sink)) != 0)
    set_error_locked(w, rc);
  pthread_mutex_unlock(&w->lock);
  return rc;
}

int tw_close(tw_writer *w)
{
  int rc, rc2;

  if (!w)
    return 0;
  if (forked(w)) {
    /* The parent's lock may be held by a thread that does not exist
     * here, and the file is the parent's: touch neither. */
    w->sink->ops->abandon(w->sink);
    writer_free(w);
    return 0;
  }
  pthread_mutex_lock(&w->lock);
  rc = commit_all_locked(w);
  if (w->background) {
    w->stopping = 1;
    pthread_cond_signal(&w->work);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->committer, NULL);
    pthread_mutex_lock(&w->lock);
  }
  if (!rc && w->sync_commits && w->sink->unbuffered && w->sink->ops->sync &&
      (rc = w->sink->ops->sync(w->sink)) != 0)
    set_error_locked(w, rc);
  rc2 = w->sink->ops->close(w->sink);
  if (!rc)
    rc = rc2 ? rc2 : w->err;
  pthread_mutex_unlock(&w->lock);
  pthread_cond_destroy(&w->done);
  pthread_cond_destroy(&w->work);
  pthread_mutex_destroy(&w->lock);
  writer_free(w);
  return rc;
}

int tw_errcode(const tw_writer *w)
{
  if (!w)
    return 0;
  if (forked(w))
    return TW_EFORKED;
  return __atomic_load_n(&w->err, __ATOMIC_RELAXED);
}

int tw_stats_sized(tw_writer *w, tw_stats_t *stats, size_t size)
{
  tw_stats_t s;

  if (!stats)
    return -EINVAL;
  if (size != sizeof(tw_stats_t))
    return TW_EVERSION;
  memset(&s, 0, sizeof s);
  if (w && forked(w)) {
    s.error = TW_EFORKED;          /* the parent's lock is not ours to take */
  } else if (w) {
    pthread_mutex_lock(&w->lock);
    s.events = w->stats.events;
    s.bytes = w->stats.bytes;
    s.commits = w->stats.commits;
    s.dropped = w->stats.dropped;
    pthread_mutex_unlock(&w->lock);
    s.rejected = __atomic_load_n(&w->stats.rejected, __ATOMIC_RELAXED);
    s.strings_truncated =
      __atomic_load_n(&w->stats.strings_truncated, __ATOMIC_RELAXED);
    s.utf8_replaced =
      __atomic_load_n(&w->stats.utf8_replaced, __ATOMIC_RELAXED);
    s.error = tw_errcode(w);
  }
  memcpy(stats, &s, sizeof s);
  return 0;
}
