/* writer.c -- the writer: buffer, lock, commit, stats, sticky error, and
 * the crash hook
 *
 * An event is formatted outside the lock into a stack buffer (or, for a
 * large one, a per-thread scratch buffer), then copied into the writer's
 * buffer under the lock.  A full buffer, tw_flush and tw_close commit: the
 * buffered records go to the sink, which makes the file valid again.
 *
 * The crash hook (crash=commit) commits from a signal handler, which may
 * take no lock: a crashed thread may hold the writer's.  So the state it
 * reads is published with atomics -- a buffer's length is stored (release)
 * only after its records are copied in, and a buffer's seq says whether
 * and in which order it waits to be committed -- and the sink is guarded
 * by the commit token, an atomic owner id that every commit holds from its
 * first write to the sink until the buffers it wrote are marked committed.
 * The handler waits for the token (a commit in flight in another thread
 * ends by itself), and skips the writer if its own thread holds it.
 */
#include "internal.h"
#include "rotate.h"
#include "sink.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* One buffer of records waiting to be committed. */
typedef struct tw__buffer {
  char *data;
  size_t len;              /* bytes of whole records; written under the
                              lock, with release: the crash hook reads it
                              without the lock (acquire) */
  uint64_t seq;            /* 0: free (its records are committed); else
                              when it was begun, so the crash hook commits
                              the buffers in use oldest first.  Set under
                              the lock (release), cleared holding the
                              commit token */
} tw__buffer;

/* The size of the first published tw_stats: every caller knows at least
 * these fields. */
#define STATS_V1_SIZE (offsetof(tw_stats, rotations) + sizeof(uint64_t))

#define MAX_BUFFERS 8       /* TW_MAX_BUFFER_COUNT: the crash hook gives a
                               sink at most that many segments */

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
  tw_stats stats;          /* events, bytes, commits: under the lock;
                              rejected, truncated, replaced: atomic */
  uint64_t next_seq;       /* the seq of the last buffer begun */
  int64_t pid;             /* the process that opened the writer */
  int crash_hook;          /* crash=commit, on a sink that buffers */
  int crash_slot;          /* the crash hook's registry slot, or -1 */
  int commit_owner;        /* the commit token: the kernel thread id of
                              the thread writing to the sink, 0 if none
                              (atomic) */
  unsigned crash_waiting;  /* crash handlers waiting for the token
                              (atomic): commits hold back meanwhile */
  size_t crash_ahead;      /* bytes at the start of the uncommitted
                              records that a crash commit has already given
                              the sink (the process survived the signal):
                              later commits skip them.  Token held */
  unsigned long long out_done; /* output bytes of the finished files */
  unsigned long long out_bytes; /* out_done + the sink's, after each commit
                              (atomic: the committer writes it unlocked) */
  struct rotation *rot;    /* NULL: no rotation */
};

/* Rotation state: used holding the commit token, but meta (meta_lock). */
struct rotation {
  int dirfd;               /* the directory of the files, opened at open:
                              names stay right if the program changes its
                              working directory */
  char *base;              /* the live file's name in it */
  char *next;              /* the next file's name until it is begun:
                              base + ".next" */
  char *name;              /* room for a numbered name */
  size_t name_size;
  tw_options opts;         /* to open the next file (process_name unset) */
  uint64_t size;           /* rotate_size */
  uint64_t interval_ns;    /* rotate_interval_ns */
  unsigned keep;           /* rotate_keep */
  unsigned long finished;  /* files finished (the newest is numbered so) */
  uint64_t began_ns;       /* when the live file was begun */
  unsigned long long began_out; /* the sink's out_bytes then: the head and
                              the metadata records */
  unsigned long long records; /* bytes of records committed to the live
                              file since (0: do not rotate an empty file) */
  int closing;             /* tw_close is committing: no new file (atomic) */
  uint64_t rotations;      /* files begun after the first (atomic) */
  pthread_mutex_t meta_lock;
  tw__meta meta;
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

/* With the crash hook, block SIGTERM in the calling thread (*old keeps
 * the mask for unblock_sigterm) while it holds something that the
 * handler would wait for. */
static void block_sigterm(const tw_writer *w, sigset_t *old)
{
  if (w->crash_hook) {
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &term, old);
  }
}

static void unblock_sigterm(const tw_writer *w, const sigset_t *old)
{
  if (w->crash_hook)
    pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* Take the commit token: the right to write to the sink and to mark what
 * was written committed.  Commits are serialised by the lock and the
 * committer's protocol already, so the token is only ever contended by
 * the crash hook, which cannot take the lock; a commit lets a waiting
 * crash handler go first.  With the hook, SIGTERM is blocked in the
 * holder until token_give (*old keeps the mask), so that a SIGTERM goes
 * to another thread, whose handler waits for this commit to end, rather
 * than cut into it (a handler skips a commit of its own thread). */
static void token_take(tw_writer *w, sigset_t *old)
{
  int me = (int)tw__tid();

  block_sigterm(w, old);
  for (;;) {
    int free_token = 0;
    if (!__atomic_load_n(&w->crash_waiting, __ATOMIC_SEQ_CST) &&
        __atomic_compare_exchange_n(&w->commit_owner, &free_token, me, 0,
                                    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
      return;
    sched_yield();
  }
}

static void token_give(tw_writer *w, const sigset_t *old)
{
  __atomic_store_n(&w->commit_owner, 0, __ATOMIC_RELEASE);
  unblock_sigterm(w, old);
}

/* Publish a buffer's length (records copied in first). */
static void set_len(tw__buffer *b, size_t len)
{
  __atomic_store_n(&b->len, len, __ATOMIC_RELEASE);
}

/* Make b, empty, the newest buffer in use.  Lock held. */
static void begin_buffer(tw_writer *w, tw__buffer *b)
{
  set_len(b, 0);
  __atomic_store_n(&b->seq, ++w->next_seq, __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------- rotation */

static int open_at(int dirfd, const char *path, const tw_options *o);
static int open_sink(int fd, int own_fd, const tw_options *o,
                     tw__sink **out);
static const char *head_of(const tw_options *o, size_t *len);

/* Whether the live file is to be finished now, after a commit: only once
 * it holds records, and the size is that of what it holds past its
 * metadata, so that a file is never begun only to be finished. */
static int rotation_due(const tw_writer *w)
{
  struct rotation *r = w->rot;

  if (!r->records || __atomic_load_n(&r->closing, __ATOMIC_ACQUIRE))
    return 0;
  if (r->size && w->sink->out_bytes - r->began_out + w->sink->tail_len >=
      r->size)
    return 1;
  return r->interval_ns && tw_now_ns() - r->began_ns >= r->interval_ns;
}

/* Give a new file the head and the metadata records: a complete trace. */
static int begin_file(tw_writer *w, tw__sink *next)
{
  struct rotation *r = w->rot;
  const char *head, *doc;
  size_t head_len, len;
  sigset_t mask;
  int rc;

  head = head_of(&r->opts, &head_len);
  block_sigterm(w, &mask);
  pthread_mutex_lock(&r->meta_lock);
  doc = tw__meta_document_start(&r->meta, head, head_len, &len);
  rc = next->ops->write(next, doc, len);
  tw__meta_document_done(&r->meta);
  pthread_mutex_unlock(&r->meta_lock);
  unblock_sigterm(w, &mask);
  if (rc == 0 && w->sync_commits && next->ops->sync)
    rc = next->ops->sync(next);
  return rc;
}

/* Give the live file its numbered name r->name as well: a second link,
 * so that the path keeps naming it.  Returns 1, or, where the file
 * system has no hard links, 0 with the file renamed; or an error. */
static int link_finished(struct rotation *r)
{
  int tries = 0;

  while (linkat(r->dirfd, r->base, r->dirfd, r->name, 0) != 0) {
    /* A numbered file of an earlier run with the same path goes. */
    if (errno == EEXIST && tries++ == 0 &&
        unlinkat(r->dirfd, r->name, 0) == 0)
      continue;
    if (errno != EPERM && errno != ENOTSUP && errno != EOPNOTSUPP &&
        errno != EMLINK && errno != ENOSYS)
      return -errno;
    return renameat(r->dirfd, r->base, r->dirfd, r->name) == 0 ? 0 : -errno;
  }
  return 1;
}

/* Finish the live file and begin the next, so that the path names a
 * complete trace at every moment: the new file is made complete (head and
 * metadata records) under a name of its own, the live file gets its
 * numbered name as a second link, and the new file is renamed over the
 * path, in one step.  Then the old sink is closed, which completes the
 * finished file, and the finished file keep below the newest is deleted.
 * If a step fails, what was done is undone: the live file stays live.
 * Holding the token.  Returns 0 or an error for the sticky error. */
static int rotate(tw_writer *w)
{
  struct rotation *r = w->rot;
  unsigned long n = r->finished + 1;
  tw__sink *old = w->sink, *next;
  int fd, rc, linked, close_rc;

  if ((rc = tw__rotated_name(r->name, r->name_size, r->base, n)) != 0)
    return rc;
  /* A failed open may still have created the name (valgrind checks the
   * descriptor limit after the call): it is ours, remove it too. */
  if ((rc = fd = open_at(r->dirfd, r->next, &r->opts)) < 0)
    goto drop_next;
  if ((rc = open_sink(fd, 1, &r->opts, &next)) != 0)
    goto drop_next;
  if ((rc = begin_file(w, next)) != 0 || (rc = linked = link_finished(r)) < 0)
    goto abandon_next;
  if (renameat(r->dirfd, r->next, r->dirfd, r->base) != 0) {
    rc = -errno;
    if (linked)
      (void)unlinkat(r->dirfd, r->name, 0);
    else
      (void)renameat(r->dirfd, r->name, r->dirfd, r->base);
    goto abandon_next;
  }
  rc = 0;
  /* The new names durable too: a directory that cannot be synced (no
   * read access to it) is left as it is. */
  if (w->sync_commits && fsync(r->dirfd) != 0 && errno != EBADF &&
      errno != EINVAL)
    rc = -errno;
  w->sink = next;
  w->out_done += old->out_bytes;
  if ((close_rc = old->ops->close(old)) != 0 && rc == 0)
    rc = close_rc;
  r->finished = n;
  r->began_ns = tw_now_ns();
  r->began_out = next->out_bytes;
  r->records = 0;
  __atomic_add_fetch(&r->rotations, 1, __ATOMIC_RELAXED);
  /* A file already gone (deleted by someone else) is no error. */
  if (r->keep && n > r->keep &&
      tw__rotated_name(r->name, r->name_size, r->base, n - r->keep) == 0)
    (void)unlinkat(r->dirfd, r->name, 0);
  return rc;

abandon_next:
  next->ops->abandon(next);
drop_next:
  (void)unlinkat(r->dirfd, r->next, 0);
  return rc;
}

/* After a commit of len bytes of records, holding the token: rotate if
 * it is time.  Not while a crash commit's records are still to be
 * skipped: they are the live file's.  Returns 0 or an error. */
static int rotate_if_due(tw_writer *w, size_t len)
{
  int rc;

  if (!w->rot)
    return 0;
  w->rot->records += len;
  if (w->crash_ahead || !rotation_due(w))
    return 0;
  rc = rotate(w);
  __atomic_store_n(&w->out_bytes, w->out_done + w->sink->out_bytes,
                   __ATOMIC_RELAXED);
  return rc;
}

/* Remember an 'M' record, to begin every later file with it. */
static void remember_metadata(tw_writer *w, const tw_event *ev,
                              const char *rec, size_t len)
{
  struct rotation *r = w->rot;
  int64_t pid = (ev->has & TW_HAS_PID) ? ev->pid : tw__pid();
  int64_t tid = (ev->has & TW_HAS_TID) ? ev->tid : tw__tid();
  sigset_t mask;

  /* rotate() waits for meta_lock holding the token, which a SIGTERM
   * handler in this thread would wait for in turn. */
  block_sigterm(w, &mask);
  pthread_mutex_lock(&r->meta_lock);
  tw__meta_remember(&r->meta, ev->name, pid, tid, rec, len);
  pthread_mutex_unlock(&r->meta_lock);
  unblock_sigterm(w, &mask);
}

static void rotation_free(struct rotation *r)
{
  if (!r)
    return;
  pthread_mutex_destroy(&r->meta_lock);
  tw__meta_free(&r->meta);
  if (r->dirfd >= 0)
    close(r->dirfd);
  free(r->base);
  free(r->next);
  free(r->name);
  free(r);
}

/* The rotation state for a writer on path, or NULL with *rc set: an
 * error now rather than at the first rotation if the names of the files
 * cannot be made.  A symbolic link is followed: the files are named after
 * the file it points to, which stays the live one, so the link goes on
 * naming the live file rather than being replaced. */
static struct rotation *rotation_new(const char *path, const tw_options *o,
                                     int *rc)
{
  struct rotation *r;
  char *target = NULL;
  const char *slash, *base;
  struct stat st;
  long name_max;

  if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
    if (!(target = realpath(path, NULL))) {
      *rc = -errno;
      return NULL;
    }
    path = target;
  }
  slash = strrchr(path, '/');
  base = slash ? slash + 1 : path;
  *rc = -ENOMEM;
  if (!(r = calloc(1, sizeof *r))) {
    free(target);
    return NULL;
  }
  r->dirfd = -1;
  if (tw__meta_init(&r->meta, TW__META_BYTES) != 0) {
    free(r);
    free(target);
    return NULL;
  }
  if ((*rc = -pthread_mutex_init(&r->meta_lock, NULL)) != 0) {
    tw__meta_free(&r->meta);
    free(r);
    free(target);
    return NULL;
  }
  /* Room for a number of any size: ".", 20 digits. */
  r->name_size = strlen(base) + 32;
  r->base = strdup(base);
  r->name = malloc(r->name_size);
  r->next = malloc(strlen(base) + sizeof ".next");
  *rc = -ENOMEM;
  if (!r->base || !r->name || !r->next)
    goto fail;
  strcat(strcpy(r->next, base), ".next");
  if ((r->dirfd = tw__open_directory_of(path)) < 0) {
    *rc = r->dirfd;
    goto fail;
  }
  free(target);
  target = NULL;
  errno = 0;
  if ((name_max = fpathconf(r->dirfd, _PC_NAME_MAX)) < 0)
    name_max = errno ? NAME_MAX : LONG_MAX;      /* -1, errno 0: no limit */
  if (tw__rotated_name(r->name, r->name_size, r->base, ULONG_MAX) != 0 ||
      strlen(r->name) > (size_t)name_max || strlen(r->next) > (size_t)name_max) {
    *rc = -ENAMETOOLONG;
    goto fail;
  }
  r->opts = *o;
  r->opts.process_name = NULL;       /* the caller's; not needed again */
  r->size = o->rotate_size;
  r->interval_ns = o->rotate_interval_ns;
  r->keep = o->rotate_keep;
  *rc = 0;
  return r;

fail:
  rotation_free(r);
  free(target);
  return NULL;
}

/* ----------------------------------------------------------------- commit */

/* Write bytes to the sink, which commits, then sync them if asked (an
 * unbuffered sink commits per record: it syncs at tw_flush only).  The
 * first bytes that a crash commit already gave the sink are skipped.
 * Called by the one thread that may use the sink, holding the token (once
 * the writer is open).  Returns 0 or an error. */
static int sink_commit(tw_writer *w, const char *data, size_t len)
{
  size_t skip = w->crash_ahead < len ? w->crash_ahead : len;
  int rc;

  w->crash_ahead -= skip;
  /* data is NULL (and len 0) for an unbuffered sink: no offset then. */
  rc = w->sink->ops->write(w->sink, skip ? data + skip : data, len - skip);
  if (rc == 0 && w->sync_commits && !w->sink->unbuffered &&
      w->sink->ops->sync)
    rc = w->sink->ops->sync(w->sink);
  __atomic_store_n(&w->out_bytes, w->out_done + w->sink->out_bytes,
                   __ATOMIC_RELAXED);
  return rc;
}

/* Write bytes to the sink and count the commit; if b is not NULL, the
 * bytes are b's records and b is emptied with the token still held; then
 * rotate if it is time (a rotation that fails leaves the commit done).
 * Lock held, and no committer writing.  Returns 0 or the (now sticky)
 * error. */
static int sink_write_locked(tw_writer *w, const char *data, size_t len,
                             tw__buffer *b)
{
  sigset_t mask;
  int rc;

  token_take(w, &mask);
  rc = sink_commit(w, data, len);
  if (rc == 0) {
    if (b)
      set_len(b, 0);
    w->stats.commits++;
    rc = rotate_if_due(w, len);
  }
  token_give(w, &mask);
  if (rc)
    set_error_locked(w, rc);
  return rc;
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
      sigset_t mask;
      int rc = 0, rotate_rc = 0;
      if (!w->err) {
        w->committing = 1;
        pthread_mutex_unlock(&w->lock);
        token_take(w, &mask);
        rc = sink_commit(w, b->data, b->len);
        __atomic_store_n(&b->seq, 0, __ATOMIC_RELEASE);
        if (rc == 0)
          rotate_rc = rotate_if_due(w, b->len);
        token_give(w, &mask);
        pthread_mutex_lock(&w->lock);
        w->committing = 0;
        if (rc == 0)
          w->stats.commits++;
        if (rc || rotate_rc)
          set_error_locked(w, rc ? rc : rotate_rc);
      }
      __atomic_store_n(&b->seq, 0, __ATOMIC_RELEASE);
      set_len(b, 0);
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

  if (w->err)
    return w->err;
  if (!w->background)
    return sink_write_locked(w, b->data, b->len, b);
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
  begin_buffer(w, &w->bufs[w->fill]);
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
      if (b->len && (rc = sink_write_locked(w, b->data, b->len, b)) != 0)
        goto out;
      if ((rc = sink_write_locked(w, rec, len, NULL)) != 0)
        goto out;
      goto counted;
    }
  }
  memcpy(b->data + b->len, rec, len);
  set_len(b, b->len + len);
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
  ev.instant_scope = 'g';
  ev.name = "tracewriter: events dropped";
  ev.cat = "tracewriter";
  ev.args = &arg;
  ev.nargs = 1;
  if (tw__format_event(&ev, &def, &w->fmt, b->data + b->len,
                       w->buf_cap - b->len, &len, &notes) == 0) {
    set_len(b, b->len + len);
    w->stats.events++;
    w->stats.bytes += len;
    w->drops_unreported = 0;
  }
}

/* ------------------------------------------------------------ crash hook
 *
 * Async-signal-safety of the handler, call by call: getpid, sigaction,
 * raise, nanosleep, write, pwrite and ftruncate are on POSIX's list of
 * async-signal-safe functions; writev and pwritev are not listed (they
 * came later) but glibc documents them AS-Safe: like syscall(SYS_gettid)
 * they are bare system calls that touch no lock and no memory of the
 * library's.  memcpy (struct copies, zlib) is on the list since POSIX
 * 2016.  deflate and crc32_z are computation on the sink's own stream and
 * constant tables (zlib allocates only in deflateInit2).  The __atomic
 * operations are lock-free (checked below).  Nothing else is called: no
 * malloc, no stdio, no pthread_mutex_*, no condition variables.
 *
 * What the handler reads is what it can read safely without the lock:
 * the registry (atomic pointers), a writer's pid, fork generation, error,
 * buffer seqs and lengths (atomic), and, holding the token, the sink.
 * Records a producer is still copying lie past the length it has
 * published, so a crash in the middle of a copy (in this thread or
 * another) loses that one record and no other.
 */

#define NCRASH_SIGNALS 6
static const int crash_signals[NCRASH_SIGNALS] = {
  SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM
};

/* The program's actions, put back by the handler before it re-raises.
 * Written under crash_lock, only while the action in place is not the
 * hook's (so no handler of ours is reading it). */
static struct sigaction crash_prev[NCRASH_SIGNALS];
/* The writers with the hook (atomic), CRASH_RESERVED while one opens. */
static tw_writer *crash_slots[TW_CRASH_MAX_WRITERS];
static char crash_reserved_mark;
#define CRASH_RESERVED ((tw_writer *)&crash_reserved_mark)
/* Handlers running (atomic): tw_close waits for 0 before freeing. */
static unsigned crash_active;
static pthread_mutex_t crash_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t crash_once = PTHREAD_ONCE_INIT;

#if !defined(__GCC_ATOMIC_INT_LOCK_FREE) || __GCC_ATOMIC_INT_LOCK_FREE != 2 || \
    !defined(__GCC_ATOMIC_POINTER_LOCK_FREE) || \
    __GCC_ATOMIC_POINTER_LOCK_FREE != 2 || \
    !defined(__GCC_ATOMIC_LLONG_LOCK_FREE) || __GCC_ATOMIC_LLONG_LOCK_FREE != 2
# error "the crash hook needs lock-free atomic int, pointer and long long"
#endif

/* The writer's commit from the handler, holding the token: the buffers
 * in use, oldest first, less what an earlier crash commit gave already.
 * A buffer is in use from begin_buffer until the commit that wrote it
 * clears its seq; no commit can run while the handler holds the token,
 * so only the newest buffer seen can still grow (every older one was
 * complete before the newer one's seq was published), and reading its
 * length at any moment gives whole records. */
static void crash_commit_held(tw_writer *w, int final)
{
  struct iovec iov[MAX_BUFFERS];
  unsigned order[MAX_BUFFERS], n = 0, k;
  uint64_t seqs[MAX_BUFFERS];
  size_t skip = w->crash_ahead, total = 0;
  int niov = 0;

  if (w->nbufs > MAX_BUFFERS)
    return;                            /* corrupted: touch nothing */
  for (unsigned i = 0; i < w->nbufs; i++) {
    uint64_t seq = __atomic_load_n(&w->bufs[i].seq, __ATOMIC_ACQUIRE);
    if (!seq)
      continue;
    for (k = n; k > 0 && seqs[k - 1] > seq; k--) {
      seqs[k] = seqs[k - 1];
      order[k] = order[k - 1];
    }
    seqs[k] = seq;
    order[k] = i;
    n++;
  }
  for (k = 0; k < n; k++) {
    tw__buffer *b = &w->bufs[order[k]];
    size_t len = __atomic_load_n(&b->len, __ATOMIC_ACQUIRE);
    if (len > w->buf_cap)
      return;                          /* corrupted: touch nothing */
    if (skip >= len) {
      skip -= len;
      continue;
    }
    iov[niov].iov_base = b->data + skip;
    iov[niov].iov_len = len - skip;
    total += len - skip;
    skip = 0;
    niov++;
  }
  if (w->sink->crash_commit(w->sink, iov, niov, final) == 0) {
    w->crash_ahead += total;
    if (w->sync_commits && w->sink->ops->sync)
      (void)w->sink->ops->sync(w->sink);    /* fdatasync */
  }
}

/* Commit one registered writer from the handler, if it is this
 * process's and well: wait (at most TW_CRASH_WAIT_MS) for the token,
 * unless this very thread holds it -- then the handler interrupted the
 * writer's own commit, which it leaves as it is.  When the process is
 * sure to die (final), the token is kept: other threads go on running
 * until the signal ends the process, and a commit of theirs started now
 * would be cut by the death (a large write stops at a page boundary when
 * the process is killed), leaving a torn record after the good tail. */
static void crash_commit_writer(tw_writer *w, int64_t pid, int me, int final)
{
  struct timespec ms = { 0, 1000000 };
  int got = 0;

  /* Not w->sink: a rotation may be replacing it until the token is ours. */
  if (w->pid != pid || w->fork_gen != tw__fork_generation() ||
      __atomic_load_n(&w->err, __ATOMIC_RELAXED) || !w->crash_hook)
    return;
  __atomic_add_fetch(&w->crash_waiting, 1, __ATOMIC_SEQ_CST);
  for (unsigned t = 0; t <= TW_CRASH_WAIT_MS; t++) {
    int owner = 0;
    if (__atomic_compare_exchange_n(&w->commit_owner, &owner, me, 0,
                                    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
      got = 1;
      break;
    }
    if (owner == me)
      break;
    (void)nanosleep(&ms, NULL);
  }
  if (got) {
    crash_commit_held(w, final);
    if (!final)
      __atomic_store_n(&w->commit_owner, 0, __ATOMIC_RELEASE);
  }
  __atomic_sub_fetch(&w->crash_waiting, 1, __ATOMIC_SEQ_CST);
}

/* 1 if returning from the handler executes the faulting instruction
 * again, which raises the same signal anew under the program's action:
 * a core dump or the program's own handler then sees the original fault
 * (its address in si_addr).  Otherwise (sent by kill, raise, abort, or
 * by the kernel not for an instruction) the handler re-raises. */
static int crash_refaults(int sig, const siginfo_t *si)
{
  if (!si || si->si_code <= 0)
    return 0;
#ifdef SI_KERNEL
  if (si->si_code == SI_KERNEL)
    return 0;
#endif
  switch (sig) {
  case SIGSEGV:
  case SIGFPE:
  case SIGILL:
    return 1;
  case SIGBUS:
#ifdef BUS_MCEERR_AO
    return si->si_code != BUS_MCEERR_AO;    /* not this instruction's */
#else
    return 1;
#endif
  default:
    return 0;
  }
}

/* The hook: commit every writer of this process, put the program's
 * action back, re-raise (or return to fault again).  Every signal is
 * blocked while it runs (sa_mask), so no other handler cuts into a
 * commit; a fault inside it kills the process at once (the kernel
 * resets a blocked synchronous signal to its default). */
static void crash_handler(int sig, siginfo_t *si, void *ctx)
{
  int saved_errno = errno, i, final;
  struct sigaction prev;
  int64_t pid;
  int me;

  (void)ctx;
  for (i = 0; i < NCRASH_SIGNALS && crash_signals[i] != sig; i++)
    continue;
  if (i == NCRASH_SIGNALS)
    return;
  prev = crash_prev[i];
  /* Only the default action is sure to end the process: then a
   * streaming output gets its tail. */
  final = !(prev.sa_flags & SA_SIGINFO) && prev.sa_handler == SIG_DFL;
  pid = (int64_t)getpid();
  me = (int)syscall(SYS_gettid);
  __atomic_add_fetch(&crash_active, 1, __ATOMIC_SEQ_CST);
  for (unsigned k = 0; k < TW_CRASH_MAX_WRITERS; k++) {
    tw_writer *w = __atomic_load_n(&crash_slots[k], __ATOMIC_SEQ_CST);
    if (w && w != CRASH_RESERVED)
      crash_commit_writer(w, pid, me, final);
  }
  __atomic_sub_fetch(&crash_active, 1, __ATOMIC_SEQ_CST);
  (void)sigaction(sig, &prev, NULL);
  if (!crash_refaults(sig, si))
    (void)raise(sig);             /* pending until the handler returns */
  errno = saved_errno;
}

/* In the child after fork, no handler runs (it has one thread). */
static void crash_after_fork(void)
{
  __atomic_store_n(&crash_active, 0, __ATOMIC_RELAXED);
}

static void crash_init(void)
{
  (void)pthread_atfork(NULL, NULL, crash_after_fork);
}

/* Install the hook for each signal whose action is neither the hook
 * already nor SIG_IGN, keeping the action it replaces.  Returns 0 or
 * -errno. */
static int crash_install(void)
{
  int rc = 0;

  pthread_once(&crash_once, crash_init);
  pthread_mutex_lock(&crash_lock);
  for (int i = 0; i < NCRASH_SIGNALS && !rc; i++) {
    struct sigaction cur, ours;

    if (sigaction(crash_signals[i], NULL, &cur) != 0) {
      rc = -errno;
      break;
    }
    if (cur.sa_flags & SA_SIGINFO ? cur.sa_sigaction == crash_handler
                                  : cur.sa_handler == SIG_IGN)
      continue;
    memset(&ours, 0, sizeof ours);
    ours.sa_sigaction = crash_handler;
    sigfillset(&ours.sa_mask);
    ours.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    crash_prev[i] = cur;
    if (sigaction(crash_signals[i], &ours, NULL) != 0)
      rc = -errno;
  }
  pthread_mutex_unlock(&crash_lock);
  return rc;
}

/* Reserve a registry slot.  Returns its index, or -1 if all are taken. */
static int crash_reserve(void)
{
  for (int i = 0; i < (int)TW_CRASH_MAX_WRITERS; i++) {
    tw_writer *none = NULL;
    if (__atomic_compare_exchange_n(&crash_slots[i], &none, CRASH_RESERVED,
                                    0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
      return i;
  }
  return -1;
}

/* Take w out of the registry, then wait until no handler can still be
 * using it.  A handler counts itself in (crash_active) before it reads a
 * slot, and every access here is sequentially consistent: either it saw
 * the slot empty or this loop sees it running. */
static void crash_unregister(tw_writer *w)
{
  if (w->crash_slot < 0)
    return;
  __atomic_store_n(&crash_slots[w->crash_slot], NULL, __ATOMIC_SEQ_CST);
  w->crash_slot = -1;
  while (__atomic_load_n(&crash_active, __ATOMIC_SEQ_CST))
    sched_yield();                 /* a crash handler is committing */
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
  if (TW__UNLIKELY(ev->ph == 'M') && w->rot)
    remember_metadata(w, ev, rec, len);
  return append_record(w, rec, len);
}

/* The writer's lock guards a few hundred nanoseconds of copying at a
 * time: a thread that finds it taken spins a little before it sleeps
 * (glibc's adaptive mutex), rather than paying a futex wait and wake.
 * Returns 0 or an errno value. */
static int init_writer_lock(pthread_mutex_t *lock)
{
#ifdef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
  pthread_mutexattr_t attr;
  int rc;

  if ((rc = pthread_mutexattr_init(&attr)) != 0)
    return rc;
  if ((rc = pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP)) == 0)
    rc = pthread_mutex_init(lock, &attr);
  pthread_mutexattr_destroy(&attr);
  return rc;
#else
  return pthread_mutex_init(lock, NULL);
#endif
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

/* Free what writer_create allocated (lock and conditions excepted), and
 * its crash hook slot. */
static void writer_free(tw_writer *w)
{
  crash_unregister(w);
  rotation_free(w->rot);
  for (unsigned i = 0; i < w->nbufs; i++)
    free(w->bufs[i].data);
  free(w);
}

/* Rotation needs a path to name the files. */
static int rotates(const tw_options *o)
{
  return o->rotate_size || o->rotate_interval_ns;
}

static const char *head_of(const tw_options *o, size_t *len)
{
  const char *h = o->format == TW_FORMAT_OBJECT ? "{\"traceEvents\":[" : "[";
  *len = strlen(h);
  return h;
}

/* Create a writer on an opened sink and commit its head and first record.
 * path: the file's, for rotation; NULL for none.  Takes the sink: on
 * failure it is abandoned.  Returns the writer or NULL with *error set. */
static tw_writer *writer_create(tw__sink *sink, const tw_options *o,
                                const char *path, int *error)
{
  size_t head_len;
  const char *head = head_of(o, &head_len);
  char stackbuf[STACK_RECORD];
  struct rotation *rot = NULL;
  tw_writer *w;
  tw_arg arg;
  tw_event ev;
  char *rec;
  size_t len;
  int rc = -ENOMEM;

  if (!(w = calloc(1, sizeof *w)))
    goto fail;
  w->crash_slot = -1;
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
  w->bufs[0].seq = w->next_seq = 1;
  tw__install_fork_handler();
  w->fork_gen = tw__fork_generation();
  w->pid = tw__pid();
  /* The crash hook, for a sink that buffers (mmap has nothing to do):
   * a slot now, so that no slot is an error before the file is touched;
   * the writer goes into it once complete. */
  if (o->crash == TW_CRASH_COMMIT && w->buf_cap && sink->crash_commit) {
    w->crash_hook = 1;
    if ((w->crash_slot = crash_reserve()) < 0) {
      rc = TW_EOPTION;
      goto fail;
    }
    if ((rc = crash_install()) != 0)
      goto fail;
  }
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
  if (path && rotates(o)) {
    /* Only a regular file can be renamed and begun again (think of
     * /dev/null); anything else streams. */
    if (sink->streaming) {
      rc = TW_ESINK;
      goto fail;
    }
    if (!(rot = rotation_new(path, o, &rc)))
      goto fail;
    tw__meta_remember(&rot->meta, ev.name, w->pid, 0, rec, len);
  }
  memcpy(rec + 1 - head_len, head, head_len);
  rc = sink_commit(w, rec + 1 - head_len, head_len + len - 1);
  /* Rotation from the next commit on. */
  if ((w->rot = rot) != NULL) {
    rot->began_ns = tw_now_ns();
    rot->began_out = sink->out_bytes;
  }
  if (rc)
    goto fail;
  w->stats.events = 1;
  w->stats.bytes = head_len + len - 1;
  w->stats.commits = 1;

  if ((rc = -init_writer_lock(&w->lock)) != 0)
    goto fail;
  if ((rc = -init_monotonic_cond(&w->work)) != 0)
    goto fail_mutex;
  if ((rc = -pthread_cond_init(&w->done, NULL)) != 0)
    goto fail_work;
  if (w->background &&
      (rc = -pthread_create(&w->committer, NULL, committer_main, w)) != 0)
    goto fail_done;
  if (w->crash_slot >= 0)
    __atomic_store_n(&crash_slots[w->crash_slot], w, __ATOMIC_SEQ_CST);
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

/* Open (create, truncate) path, relative to dirfd, as tw_open does.
 * Returns the fd or -errno. */
static int open_at(int dirfd, const char *path, const tw_options *o)
{
  /* A shared writable mapping needs read access too. */
  int mode = o->sink == TW_SINK_MMAP ? O_RDWR : O_WRONLY, fd;

  do
    fd = openat(dirfd, path, mode | O_CREAT | O_TRUNC | O_CLOEXEC, o->file_mode);
  while (fd < 0 && errno == EINTR);
  return fd >= 0 ? fd : -errno;
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

/* Open the sink the options ask for on fd.  Takes fd when own_fd (closed
 * on failure).  Returns 0 and *out, or an error. */
static int open_sink(int fd, int own_fd, const tw_options *o, tw__sink **out)
{
  size_t tail_len;
  const char *tail = tail_of(o, &tail_len);
  int rc;

  switch (o->sink) {
  case TW_SINK_MMAP:
    rc = tw__sink_mmap_open(out, fd, own_fd, tail, tail_len, o->mmap_chunk);
    break;
  case TW_SINK_GZIP:
    rc = tw__sink_gzip_open(out, fd, own_fd, tail, tail_len, o->gzip_level);
    break;
  default:
    rc = tw__sink_file_open(out, fd, own_fd, tail, tail_len);
    break;
  }
  if (rc && own_fd)
    close(fd);
  return rc;
}

/* Open the sink, then the writer (path: for rotation, or NULL).  Takes
 * fd when own_fd.  Returns the writer or NULL with *error set. */
static tw_writer *open_fd(int fd, int own_fd, const tw_options *o,
                          const char *path, int *error)
{
  tw__sink *sink;
  int rc = open_sink(fd, own_fd, o, &sink);

  if (rc) {
    if (error)
      *error = rc;
    return NULL;
  }
  return writer_create(sink, o, path, error);
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
    if ((fd = open_at(AT_FDCWD, path, &o)) >= 0)
      return open_fd(fd, 1, &o, path, error);
    rc = fd;
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
  else if ((rc = tw__options_import(&o, opts)) == 0 &&
           (rc = rotates(&o) ? TW_EOPTION : 0) == 0) {
    if (o.sink == TW_SINK_AUTO)
      o.sink = TW_SINK_FILE;
    return open_fd(fd, 0, &o, NULL, error);
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
    if (rotates(&o))
      rc = TW_EOPTION;
    else if (o.sink != TW_SINK_AUTO && o.sink != TW_SINK_FILE)
      rc = TW_ESINK;
    else {
      o.sink = TW_SINK_FILE;
      tail = tail_of(&o, &tail_len);
      if ((rc = tw__sink_stream_open(&sink, stream, tail, tail_len)) == 0)
        return writer_create(sink, &o, NULL, error);
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
  if (w->rot)      /* the last commit is not to begin a file of its own */
    __atomic_store_n(&w->rot->closing, 1, __ATOMIC_RELEASE);
  rc = commit_all_locked(w);
  if (w->background) {
    w->stopping = 1;
    pthread_cond_signal(&w->work);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->committer, NULL);
    pthread_mutex_lock(&w->lock);
  }
  /* Everything is committed: the sink is closed without the hook. */
  crash_unregister(w);
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

int tw_get_stats_sized(tw_writer *w, tw_stats *stats, size_t size)
{
  tw_stats s;

  if (!stats)
    return -EINVAL;
  if (size < STATS_V1_SIZE)
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
    s.output_bytes = __atomic_load_n(&w->out_bytes, __ATOMIC_RELAXED);
    s.rotations = w->rot ? __atomic_load_n(&w->rot->rotations,
                                           __ATOMIC_RELAXED) : 0;
    s.rejected = __atomic_load_n(&w->stats.rejected, __ATOMIC_RELAXED);
    s.strings_truncated =
      __atomic_load_n(&w->stats.strings_truncated, __ATOMIC_RELAXED);
    s.utf8_replaced =
      __atomic_load_n(&w->stats.utf8_replaced, __ATOMIC_RELAXED);
    s.error = tw_errcode(w);
  }
  /* A newer caller's fields past ours are zero; an older one gets the
   * fields it knows. */
  if (size > sizeof s) {
    memset((char *)stats + sizeof s, 0, size - sizeof s);
    size = sizeof s;
  }
  memcpy(stats, &s, size);
  return 0;
}
