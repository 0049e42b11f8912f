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
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct tw_writer {
  pthread_mutex_t lock;    /* guards every field below but the atomics */
  tw__sink *sink;          /* where commits go */
  char *buf;               /* records not yet committed */
  size_t buf_len;          /* bytes in buf */
  size_t buf_cap;          /* size of buf (options.buffer_size) */
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
static __thread char *scratch;
static __thread size_t scratch_cap;

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

/* Hand the buffered records to the sink, which commits.  Lock held.
 * Returns 0 or the (now sticky) error. */
static int commit_locked(tw_writer *w)
{
  int rc;

  if (w->err)
    return w->err;
  rc = w->sink->ops->write(w->sink, w->buf, w->buf_len);
  if (rc) {
    set_error_locked(w, rc);
    return rc;
  }
  w->buf_len = 0;
  w->stats.commits++;
  return 0;
}

/* Copy one formatted record into the buffer, committing first if it does
 * not fit; a record larger than the whole buffer goes to the sink as it
 * is.  Returns 0 or the sticky error. */
static int append_record(tw_writer *w, const char *rec, size_t len)
{
  int rc = 0;

  pthread_mutex_lock(&w->lock);
  if (w->err) {
    rc = w->err;
    goto out;
  }
  if (len > w->buf_cap - w->buf_len) {
    if ((rc = commit_locked(w)) != 0)
      goto out;
    if (len > w->buf_cap) {
      rc = w->sink->ops->write(w->sink, rec, len);
      if (rc) {
        set_error_locked(w, rc);
        goto out;
      }
      w->stats.commits++;
      goto counted;
    }
  }
  memcpy(w->buf + w->buf_len, rec, len);
  w->buf_len += len;
counted:
  w->stats.events++;
  w->stats.bytes += len;
out:
  pthread_mutex_unlock(&w->lock);
  return rc;
}

static int forked(const tw_writer *w)
{
  return w->fork_gen != tw__fork_generation();
}

/* Format ev with its defaults resolved into *rec (the stack buffer, or
 * the thread's scratch when it is too small).  Returns 0 with *rec and
 * *len set, or the error for the caller. */
static int format_record(tw_writer *w, const tw_event *ev, char *stackbuf,
                         char **rec, size_t *len)
{
  tw_event e = *ev;
  tw__fmt_notes notes;
  char *buf = stackbuf;
  size_t cap = STACK_RECORD;
  int rc;

  if (!(e.has & TW_HAS_TS) && e.ph != 'M')
    e.ts = tw_now_ns();
  if (!(e.has & TW_HAS_PID))
    e.pid = tw__pid();
  if (!(e.has & TW_HAS_TID))
    e.tid = tw__tid();
  for (;;) {
    memset(&notes, 0, sizeof notes);
    rc = tw__format_event(&e, &w->fmt, buf, cap, len, &notes);
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
  if ((rc = format_record(w, ev, stackbuf, &rec, &len)) != 0)
    return rc;
  return append_record(w, rec, len);
}

/* Create a writer on an opened sink and commit its head and first record.
 * Takes the sink: on failure it is closed.  Returns the writer or NULL
 * with *error set. */
static tw_writer *writer_create(tw__sink *sink, const tw_options *o,
                                int *error)
{
  static const char process_name[] = "process_name";
  tw_writer *w;
  tw_arg arg;
  tw_event ev;
  char stackbuf[STACK_RECORD];
  char *rec;
  size_t len;
  const char *head = o->format == TW_FORMAT_OBJECT ? "{\"traceEvents\":[" : "[";
  size_t head_len = strlen(head);
  int rc;

  if (!(w = calloc(1, sizeof *w)) || !(w->buf = malloc(o->buffer_size))) {
    rc = -ENOMEM;
    goto fail;
  }
  if ((rc = pthread_mutex_init(&w->lock, NULL)) != 0) {
    rc = -rc;
    goto fail;
  }
  w->sink = sink;
  w->buf_cap = o->buffer_size;
  w->fork_gen = tw__fork_generation();
  w->fmt.flags = o->flags;
  w->fmt.max_string = o->max_string;
  w->max_event = o->max_event;

  memset(&ev, 0, sizeof ev);
  ev.ph = 'M';
  ev.name = process_name;
  arg = tw_arg_str("name", o->process_name ? o->process_name
                                           : tw__program_name());
  ev.args = &arg;
  ev.nargs = 1;
  if ((rc = format_record(w, &ev, stackbuf, &rec, &len)) != 0)
    goto fail_locked;
  /* The head, then the first record without its leading comma. */
  if (head_len + len - 1 > w->buf_cap) {
    rc = TW_ETOOBIG;
    goto fail_locked;
  }
  memcpy(w->buf, head, head_len);
  memcpy(w->buf + head_len, rec + 1, len - 1);
  w->buf_len = head_len + len - 1;
  w->stats.events = 1;
  w->stats.bytes = w->buf_len;
  if ((rc = commit_locked(w)) != 0)
    goto fail_locked;
  return w;

fail_locked:
  pthread_mutex_destroy(&w->lock);
fail:
  if (w)
    free(w->buf);
  free(w);
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

/* Check the options; returns 0 with *o filled, or an error. */
static int prepare_options(tw_options *o, const tw_options *in, int streaming)
{
  int rc = tw__options_import(o, in);
  if (rc)
    return rc;
  if (o->sink == TW_SINK_AUTO)
    o->sink = TW_SINK_FILE;
  if (o->sink != TW_SINK_FILE || (streaming && o->sink != TW_SINK_FILE))
    return TW_ESINK;
  return 0;
}

static tw_writer *open_fd(int fd, int own_fd, const tw_options *in,
                          int *error)
{
  tw_options o;
  tw__sink *sink;
  size_t tail_len;
  const char *tail;
  int rc;

  if ((rc = prepare_options(&o, in, 0)) != 0)
    goto fail;
  tail = tail_of(&o, &tail_len);
  if ((rc = tw__sink_file_open(&sink, fd, own_fd, tail, tail_len)) != 0)
    goto fail;
  return writer_create(sink, &o, error);
fail:
  if (own_fd)
    close(fd);
  if (error)
    *error = rc;
  return NULL;
}

tw_writer *tw_open(const char *path, const tw_options *opts, int *error)
{
  tw_options o;
  int fd, rc;

  if (!path) {
    if (error)
      *error = -EINVAL;
    return NULL;
  }
  if ((rc = prepare_options(&o, opts, 0)) != 0) {
    if (error)
      *error = rc;
    return NULL;
  }
  do
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, o.file_mode);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    if (error)
      *error = -errno;
    return NULL;
  }
  return open_fd(fd, 1, &o, error);
}

tw_writer *tw_open_fd(int fd, const tw_options *opts, int *error)
{
  if (fd < 0) {
    if (error)
      *error = -EBADF;
    return NULL;
  }
  return open_fd(fd, 0, opts, error);
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
  else if ((rc = prepare_options(&o, opts, 1)) == 0) {
    tail = tail_of(&o, &tail_len);
    if ((rc = tw__sink_stream_open(&sink, stream, tail, tail_len)) == 0)
      return writer_create(sink, &o, error);
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
  rc = commit_locked(w);
  pthread_mutex_unlock(&w->lock);
  return rc;
}

int tw_close(tw_writer *w)
{
  int rc, rc2;

  if (!w)
    return 0;
  if (forked(w)) {
    /* The parent's lock may be held by a thread that no longer exists
     * here, and the file is the parent's: touch neither. */
    w->sink->ops->abandon(w->sink);
    free(w->buf);
    free(w);
    return 0;
  }
  pthread_mutex_lock(&w->lock);
  rc = commit_locked(w);
  rc2 = w->sink->ops->close(w->sink);
  if (!rc)
    rc = rc2;
  pthread_mutex_unlock(&w->lock);
  pthread_mutex_destroy(&w->lock);
  free(w->buf);
  free(w);
  return rc;
}

int tw_errcode(const tw_writer *w)
{
  return w ? __atomic_load_n(&w->err, __ATOMIC_RELAXED) : 0;
}

int tw_stats_sized(tw_writer *w, tw_stats_t *stats, size_t size)
{
  tw_stats_t s;

  if (!stats)
    return -EINVAL;
  if (size != sizeof(tw_stats_t))
    return TW_EVERSION;
  memset(&s, 0, sizeof s);
  if (w) {
    pthread_mutex_lock(&w->lock);
    s = w->stats;
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
