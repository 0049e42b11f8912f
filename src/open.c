/* open.c -- a writer's life: open (which file, which sink; the first
 * document is document.c's), close, the sticky error, the stats
 */
#include "internal.h"
#include "fdio.h"
#include "document.h"
#include "rotate.h"
#include "writer.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The size of the first published tw_stats: every caller knows at least
 * these fields. */
#define STATS_V1_SIZE (offsetof(tw_stats, rotations) + sizeof(uint64_t))

/* Slots are this big at most: a thread's sealed slot is a commit's
 * piece, and the commit's size (buffer_size) a few of them. */
#define SLOT_MAX (16u * 1024u)

static uint64_t last_writer_id;      /* atomic: ids of writers */

/* open_in_place's answer when the path names another file by the time
 * the file opened is locked: tw_open opens the path again (never returned
 * to a caller). */
#define TW__EMOVED (-1996)

/* ------------------------------------------------ the open writers */

/* Every writer between the end of writer_create and tw_close, so that the
 * child of a fork lets go of their files at once: a descriptor it
 * inherits shares the parent's open file description, and with it the
 * parent's lock (one writer per file), which would otherwise outlive the
 * parent's tw_close for as long as the child lives; so does a mapping. */
static pthread_mutex_t open_writers_lock = PTHREAD_MUTEX_INITIALIZER;
static tw_writer *open_writers;       /* under open_writers_lock */
static pthread_once_t open_writers_once = PTHREAD_ONCE_INIT;
/* Sinks on no list: tw_open* between its first descriptor and its writer
 * on the list, tw_close between its writer off the list and its sink
 * closed.  fork waits until there are none, and no new one begins while
 * a fork waits (forks_waiting), or a thread opening and closing in a
 * loop could keep it waiting.  Under open_writers_lock. */
static unsigned unlisted, forks_waiting;
static pthread_cond_t unlisted_none = PTHREAD_COND_INITIALIZER;
static pthread_cond_t fork_done = PTHREAD_COND_INITIALIZER;
static sigset_t fork_mask;            /* the forking thread's signal mask */

/* Where a released writer's sink pointed: a sink that holds nothing.
 * Only abandon is ever called on it (every other path of a forked writer
 * stops at tw__forked first). */
static void released_abandon(tw__sink *s)
{
  (void)s;
}
static const tw__sink_ops released_ops = { .abandon = released_abandon };
static tw__sink released_sink = { &released_ops, 0, "", 0, TW_EFORKED, 0, 0 };

/* Before fork: no tw_open or tw_close under way, and every open
 * writer's lock and token, so that the child is a copy of writers between
 * two changes of their sinks.  A file opened or a window mapped
 * (rotation, a direct sink's growth, a region released) happens holding
 * one of them (writer.h); a copy taken in the middle, or of a sink on no
 * list yet or any more, would hold a descriptor or a mapping that no list
 * names, and with it the file's lock.  fork waits for an open, a close or
 * a commit under way.  SIGTERM stays blocked until fork has returned, as
 * whenever the token is held (commit.c). */
static void open_writers_prepare(void)
{
  sigset_t term;

  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  pthread_mutex_lock(&open_writers_lock);
  forks_waiting++;
  while (unlisted)
    pthread_cond_wait(&unlisted_none, &open_writers_lock);
  pthread_sigmask(SIG_BLOCK, &term, &fork_mask);
  for (tw_writer *w = open_writers; w; w = w->open_next) {
    tw__writer_lock(w);
    tw__token_acquire(w);
  }
}

static void open_writers_parent(void)
{
  for (tw_writer *w = open_writers; w; w = w->open_next) {
    tw__token_release(w);
    tw__writer_unlock(w);
  }
  if (--forks_waiting == 0)
    pthread_cond_broadcast(&fork_done);
  pthread_sigmask(SIG_SETMASK, &fork_mask, NULL);
  pthread_mutex_unlock(&open_writers_lock);
}

/* In the child, the only thread: close the descriptors and unmap the
 * mappings of every writer of the parent (its sink abandoned: nothing
 * written, the parent's file position untouched), without unlocking the
 * file -- that lock is the parent's too.  The writers stay, disabled:
 * tw_close frees them.  Their lock and token are let go directly: the
 * thread has a new id here, which tw__writer_unlock would not know. */
static void open_writers_child(void)
{
  for (tw_writer *w = open_writers; w; w = w->open_next) {
    tw__sink *s = w->sink;
    if (s != &released_sink) {
      w->sink = &released_sink;
      s->ops->abandon(s);
    }
    tw__token_release(w);
#ifdef TW_DEBUG
    __atomic_store_n(&w->lock_owner, 0, __ATOMIC_RELAXED);
#endif
    pthread_mutex_unlock(&w->lock);
  }
  /* The parent's threads that waited on them are not here. */
  forks_waiting = 0;
  pthread_cond_init(&fork_done, NULL);
  pthread_cond_init(&unlisted_none, NULL);
  pthread_sigmask(SIG_SETMASK, &fork_mask, NULL);
  pthread_mutex_unlock(&open_writers_lock);
}

static void open_writers_init(void)
{
  (void)pthread_atfork(open_writers_prepare, open_writers_parent,
                       open_writers_child);
}

/* A sink about to be on no list (see unlisted), and when it is on one or
 * closed. */
static void unlisted_begin(void)
{
  pthread_once(&open_writers_once, open_writers_init);
  pthread_mutex_lock(&open_writers_lock);
  while (forks_waiting)
    pthread_cond_wait(&fork_done, &open_writers_lock);
  unlisted++;
  pthread_mutex_unlock(&open_writers_lock);
}

static void unlisted_end(void)
{
  pthread_mutex_lock(&open_writers_lock);
  if (--unlisted == 0)
    pthread_cond_broadcast(&unlisted_none);
  pthread_mutex_unlock(&open_writers_lock);
}

static int close_writer(tw_writer *w);

static void open_writers_add(tw_writer *w)
{
  pthread_mutex_lock(&open_writers_lock);
  w->open_prev = NULL;
  w->open_next = open_writers;
  if (open_writers)
    open_writers->open_prev = w;
  open_writers = w;
  pthread_mutex_unlock(&open_writers_lock);
}

static void open_writers_remove(tw_writer *w)
{
  pthread_mutex_lock(&open_writers_lock);
  if (w->open_prev)
    w->open_prev->open_next = w->open_next;
  else
    open_writers = w->open_next;
  if (w->open_next)
    w->open_next->open_prev = w->open_prev;
  pthread_mutex_unlock(&open_writers_lock);
}

/* The writer's lock guards a few hundred nanoseconds at a time: a thread
 * that finds it taken spins a little before it sleeps (glibc's adaptive
 * mutex), rather than paying a futex wait and wake.  Returns 0 or an
 * errno value. */
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

/* Free the writer's memory: slots, rotation, the crash hook's slot. */
static void writer_free(tw_writer *w)
{
  tw__slot *s, *next;

  tw__crash_unregister(w);
  tw__rotation_free(w->rot);
  if (w->meta) {
    tw__meta_free(w->meta);
    free(w->meta);
  }
  for (s = w->all_slots; s; s = next) {
    next = s->next_all;
    free(s->data);
    free(s);
  }
  free(w->drop_report);
  free(w->fmt_buf);
  free(w);
}

/* Rotation needs a path to name the files. */
static int rotates(const tw_options *o)
{
  return o->rotate_size || o->rotate_interval_ns;
}

/* How many slots the pool holds and how big they are, from the options:
 * a commit's worth (buffer_size) in slots of at most SLOT_MAX, twice over
 * so that threads go on while a commit is written, or buffer_count times
 * over with a committer. */
static void size_slots(tw_writer *w, const tw_options *o)
{
  size_t per_commit;

  w->commit_bytes = o->buffer_size;
  w->slot_size = o->buffer_size < SLOT_MAX ? o->buffer_size : SLOT_MAX;
  per_commit = (o->buffer_size + w->slot_size - 1) / w->slot_size;
  w->pool_slots = (unsigned)per_commit * (w->background ? o->buffer_count : 2);
}

long tw__env_number(const char *name)
{
  const char *s = getenv(name);
  char *end;
  long v;

  if (!s || !*s)
    return -1;
  errno = 0;
  v = strtol(s, &end, 10);
  return *end || errno || v < 0 || v >= TW_RANK_AUTO ? -1 : v;
}

/* The clock of ts and the head, from the options: with timebase=kineto
 * the base that the PyTorch profiler floors the wall clock to, and the
 * offset that turns the monotonic clock into microseconds since it, read
 * once (no NTP step moves the trace afterwards); the rank, from the
 * options or RANK (and WORLD_SIZE, as torchrun sets them). */
static void set_time_and_rank(tw_writer *w, const tw_options *o)
{
  if (o->timebase == TW_TIMEBASE_KINETO) {
    const uint64_t period = (uint64_t)TW_KINETO_BASE_SECONDS * 1000000000u;
    uint64_t mono = tw_now_ns(), real;
    struct timespec rt;

    clock_gettime(CLOCK_REALTIME, &rt);
    real = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec;
    w->kineto_base_ns = real / period * period;
    w->ts_offset = (int64_t)(real - w->kineto_base_ns) - (int64_t)mono;
  }
  w->rank = o->rank != TW_RANK_AUTO ? o->rank : tw__env_number("RANK");
  w->head_len = tw__layout_build_head(w->object_form, w->kineto_base_ns,
                                      w->rank, w->rank >= 0 ?
                                      tw__env_number("WORLD_SIZE") : -1,
                                      w->head);
}

/* Create a writer on an opened sink and commit its head and first record.
 * path: the file's, for rotation; NULL for none.  Takes the sink: on
 * failure it is abandoned.  Returns the writer or NULL with *error set. */
static tw_writer *writer_create(tw__sink *sink, const tw_options *o,
                                const char *path, int *error)
{
  tw__fmt_notes notes;
  tw_writer *w;
  int rc = -ENOMEM, locked = 0, conds = 0;

  if (!(w = calloc(1, sizeof *w)))
    goto fail;
  w->crash_slot = -1;
  w->sink = sink;
  w->id = __atomic_add_fetch(&last_writer_id, 1, __ATOMIC_RELAXED);
  w->object_form = o->format == TW_FORMAT_OBJECT;
  set_time_and_rank(w, o);
  w->direct = (sink->caps & TW__SINK_DIRECT) != 0;
  w->interval_ns = o->flush_interval_ns;
  w->drop_when_full = o->on_full == TW_ON_FULL_DROP;
  w->sync_commits = (o->flags & TW_OPT_SYNC) != 0;
  /* A timer needs the committer thread; so does a sink that deflates. */
  w->background = !w->direct &&
    (o->commit == TW_COMMIT_BACKGROUND || w->interval_ns ||
     (o->commit == TW_COMMIT_AUTO && (sink->caps & TW__SINK_DEFLATES)));
  size_slots(w, o);
  w->sealed_tail = &w->sealed;
  w->fmt.flags = o->flags;
  w->fmt.max_string = o->max_string;
  w->max_event = o->max_event;
  if (!(w->drop_report = malloc(TW__DROP_REPORT_ROOM)))
    goto fail;
  tw__install_fork_handler();
  w->fork_gen = tw__fork_generation();
  w->pid = tw__pid();
  /* The crash hook, for a sink that buffers (a direct one has nothing to
   * commit): a registry slot now, so that no slot is an error before the
   * file is touched; the writer goes into it once complete. */
  if (o->crash == TW_CRASH_COMMIT && !w->direct) {
    w->crash_hook = 1;
    if ((rc = tw__crash_reserve(w)) != 0)
      goto fail;
  }
  if ((rc = -init_writer_lock(&w->lock)) != 0)
    goto fail;
  if ((rc = -pthread_mutex_init(&w->meta_lock, NULL)) != 0) {
    pthread_mutex_destroy(&w->lock);
    goto fail;
  }
  locked = 1;
  if ((rc = -init_monotonic_cond(&w->work)) != 0)
    goto fail;
  if ((rc = -pthread_cond_init(&w->done, NULL)) != 0) {
    pthread_cond_destroy(&w->work);
    goto fail;
  }
  conds = 1;
  if (w->background && (rc = tw__committer_prepare(w)) != 0)
    goto fail;
  /* The pool of slots: allocated now, not per event. */
  tw__writer_lock(w);
  for (unsigned i = 0; i < w->pool_slots && rc == 0 && !w->direct; i++)
    rc = tw__slot_add(w);
  tw__writer_unlock(w);
  if (rc)
    goto fail;

  if (path && rotates(o)) {
    /* Only a regular file can be renamed and begun again (think of
     * /dev/null); anything else streams. */
    if (sink->caps & TW__SINK_STREAMING) {
      rc = TW_ESINK;
      goto fail;
    }
    if (!(w->rot = tw__rotation_new(path, o, &rc)))
      goto fail;
  }
  /* The store of the records every document begins with, and the first
   * document: the file is a valid trace from its first commit.  A
   * process name cut or repaired counts like any other string. */
  if (!(w->meta = malloc(sizeof *w->meta)) ||
      tw__meta_init(w->meta, TW__META_BYTES) != 0) {
    free(w->meta);
    w->meta = NULL;
    rc = -ENOMEM;
    goto fail;
  }
  if ((rc = tw__document_first(w, o->process_name, &notes)) != 0)
    goto fail;
  w->strings_truncated = notes.truncated;
  w->utf8_replaced = notes.replaced;
  if (w->background && (rc = tw__committer_start(w)) != 0)
    goto fail;
  tw__crash_register(w);
  open_writers_add(w);
  return w;

fail:
  if (w) {
    if (conds) {
      pthread_cond_destroy(&w->done);
      pthread_cond_destroy(&w->work);
    }
    if (locked) {
      pthread_mutex_destroy(&w->meta_lock);
      pthread_mutex_destroy(&w->lock);
    }
    writer_free(w);
  }
  sink->ops->abandon(sink);
  if (error)
    *error = rc;
  return NULL;
}

/* 1 if path ends in ".gz". */
static int gz_path(const char *path)
{
  size_t n = strlen(path);
  return n >= 3 && strcmp(path + n - 3, ".gz") == 0;
}

/* Open the sink, then the writer (path: for rotation, or NULL).  Takes
 * fd when own_fd.  Returns the writer or NULL with *error set. */
static tw_writer *open_fd(int fd, int own_fd, const tw_options *o,
                          const char *path, int *error)
{
  tw__sink *sink;
  int rc = tw__sink_open(fd, own_fd, o, &sink);

  if (rc) {
    if (error)
      *error = rc;
    return NULL;
  }
  return writer_create(sink, o, path, error);
}

/* Open path as it is, following symbolic links in the kernel (so that
 * its rules apply: permissions, protected_symlinks), for reading and
 * writing, or writing only where reading is refused and the sink does
 * not map the file; flags adds O_CREAT (with the options' mode).
 * Returns the fd or -errno. */
static int open_path(const char *path, const tw_options *o, int flags)
{
  int fd;

  do
    fd = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY | flags, o->file_mode);
  while (fd < 0 && errno == EINTR);
  if (fd < 0 && (errno == EACCES || errno == EISDIR) &&
      o->sink != TW_SINK_MMAP)
    do
      fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | flags, o->file_mode);
    while (fd < 0 && errno == EINTR);
  return fd >= 0 ? fd : -errno;
}

/* The name of the file that fd is open on, as the kernel resolved it
 * (rotation names its files beside it): malloc'ed, or NULL. */
static char *name_of_fd(int fd)
{
  char proc[64], buf[4096];
  ssize_t n;

  snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
  if ((n = readlink(proc, buf, sizeof buf - 1)) <= 0 || buf[0] != '/')
    return NULL;
  buf[n] = '\0';
  return strdup(buf);
}

/* Whether path (through its links) still names the file fd is open on.
 * Between open and lock, a rotating writer may have given that file its
 * numbered name, finished it and let go of its lock: such a file is never
 * written again. */
static int still_named(int fd, const char *path)
{
  struct stat by_fd, by_path;

  return fstat(fd, &by_fd) == 0 && stat(path, &by_path) == 0 &&
         by_fd.st_dev == by_path.st_dev && by_fd.st_ino == by_path.st_ino;
}

/* The writer on fd, open on the regular file at path, which it writes in
 * place: locked first (one writer per file) and checked to be still the
 * file that path names, its first document written right after the file
 * is cut (the sink cuts it at open).  Takes fd.  Returns the writer, or
 * NULL with *rc set: TW__EMOVED when path names another file now (open it
 * again). */
static tw_writer *open_in_place(int fd, const char *path,
                                const tw_options *o, int *rc)
{
  char *name = NULL;
  tw_writer *w;

  if ((*rc = tw__fd_lock(fd)) != 0) {
    close(fd);
    return NULL;
  }
  if (!still_named(fd, path)) {
    close(fd);
    *rc = TW__EMOVED;
    return NULL;
  }
  /* Rotation names its files beside the file itself, wherever a link
   * that path may be led: the kernel says where. */
  if (rotates(o)) {
    struct stat st;
    if (!(name = name_of_fd(fd)) &&
        (lstat(path, &st) != 0 || S_ISLNK(st.st_mode))) {
      close(fd);
      *rc = -EOPNOTSUPP;               /* no /proc to say where */
      return NULL;
    }
  }
  w = open_fd(fd, 1, o, name ? name : path, rc);
  free(name);
  return w;
}

/* The writer of a new file at path, begun complete -- head, first
 * record; for mmap the first chunk -- before the name points to it:
 * without a name (O_TMPFILE) first, then, if it cannot be linked, under
 * a temporary name; locked before it is named.  The name is never taken
 * from a file that appeared meanwhile (-EEXIST then).  Returns the
 * writer, or NULL with *rc set. */
static tw_writer *open_new(const char *path, const tw_options *o, int *rc)
{
  const char *slash = strrchr(path, '/');
  int dirfd = tw__open_directory_of(path);
  tw_writer *w = NULL;

  if (dirfd < 0) {
    *rc = dirfd;
    return NULL;
  }
  /* Read access too: a shared mapping needs it, and the other sinks read
   * back where the document begins after a commit, to see whether the
   * file was cut under them. */
  for (int anonymous = 1;; anonymous = 0) {
    tw__newfile nf;

    if ((*rc = tw__newfile_open(&nf, dirfd, slash ? slash + 1 : path,
                                O_RDWR | O_CLOEXEC, o->file_mode,
                                anonymous)) != 0)
      break;
    if ((*rc = tw__fd_lock(nf.fd)) == 0)
      w = open_fd(nf.fd, 1, o, path, rc); /* the writer's fd, or closed */
    else
      close(nf.fd);
    if (w && (*rc = tw__newfile_publish(&nf, 0)) == 0) {
      /* The new name durable too, with sync: a directory that cannot be
       * synced (no read access to it) is left as it is. */
      if (w->sync_commits && fsync(dirfd) != 0 && errno != EBADF &&
          errno != EINVAL) {
        *rc = -errno;
        (void)close_writer(w);
        w = NULL;
      }
      break;
    }
    if (w)
      (void)close_writer(w);
    w = NULL;
    nf.fd = -1;
    tw__newfile_discard(&nf);
    if (*rc != TW__ENOLINK || !anonymous)
      break;
  }
  close(dirfd);
  return w;
}

/* A path that names a descriptor (/dev/stdout, /dev/fd/N ...): the
 * writer on a duplicate of it, as tw_open_fd would write it.  Returns the
 * writer, or NULL with *rc set. */
static tw_writer *open_named_fd(int n, const tw_options *o, int *rc)
{
  int fd;

  if (rotates(o)) {
    *rc = TW_EOPTION;                  /* as tw_open_fd */
    return NULL;
  }
  if ((fd = fcntl(n, F_DUPFD_CLOEXEC, 3)) < 0) {
    *rc = -errno;
    return NULL;
  }
  return open_fd(fd, 1, o, NULL, rc);
}

/* How many times tw_open opens the path at most. */
#define OPEN_TRIES 8

static tw_writer *open_path_writer(const char *path, const tw_options *opts,
                                   int *error)
{
  tw_writer *w = NULL;
  struct stat st;
  tw_options o;
  int fd, n, rc;

  if (!path) {
    rc = -EINVAL;
    goto out;
  }
  if ((rc = tw__options_import(&o, opts)) != 0)
    goto out;
  if (o.sink == TW_SINK_AUTO)
    o.sink = gz_path(path) ? TW_SINK_GZIP : TW_SINK_FILE;
  /* The standard streams and /dev/fd/N: the descriptor itself, as the
   * caller's shell set it up (appended to after ">>"), never a file made
   * in its place. */
  if ((n = tw__named_fd(path)) >= 0) {
    w = open_named_fd(n, &o, &rc);
    goto out;
  }
  /* Again, a few times at most, when a new file that another writer made
   * first is then found existing, or the file opened was renamed away
   * before it was locked (a rotating writer's). */
  for (int tries = 0; tries < OPEN_TRIES && !w; tries++) {
    /* A FIFO, a device: opened for writing only, as it is (a FIFO
     * opened for reading too would never wait for its reader), and
     * streamed. */
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
      /* A FIFO's open waits for its reader, which may be the child a
       * fork in another thread is making: no fork waits for it (it holds
       * no descriptor yet). */
      unlisted_end();
      do
        fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
      while (fd < 0 && errno == EINTR);
      unlisted_begin();
      if (fd >= 0)
        w = open_fd(fd, 1, &o, path, &rc);
      else
        rc = -errno;
      break;
    }
    /* An existing file, reached through links by the kernel: written in
     * place (its inode, mode, owner and links stay). */
    if ((fd = open_path(path, &o, 0)) >= 0) {
      if ((w = open_in_place(fd, path, &o, &rc)) || rc != TW__EMOVED)
        break;
      continue;
    }
    if ((rc = fd) != -ENOENT)
      break;
    /* A link to nothing: the kernel makes the file it points to, where
     * its rules allow. */
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
      if ((fd = open_path(path, &o, O_CREAT)) >= 0)
        w = open_in_place(fd, path, &o, &rc);
      else
        rc = fd;
      if (w || rc != TW__EMOVED)
        break;
      continue;
    }
    /* A new file: made complete before the path names it. */
    w = open_new(path, &o, &rc);
    /* A directory where no file can be made: the file itself is made
     * (its own permissions may allow it), written in place. */
    if (!w && (rc == -EACCES || rc == -EPERM || rc == -EROFS)) {
      if ((fd = open_path(path, &o, O_CREAT)) >= 0)
        w = open_in_place(fd, path, &o, &rc);
      else
        rc = fd;
      if (w || rc != TW__EMOVED)
        break;
      continue;
    }
    if (rc != -EEXIST && rc != TW__EMOVED)
      break;
  }
  /* Renamed away at every try: another writer rotates that path as fast
   * as it can be opened. */
  if (!w && rc == TW__EMOVED)
    rc = TW_EBUSY;
out:
  if (!w && error)
    *error = rc;
  return w;
}

static tw_writer *open_fd_writer(int fd, const tw_options *opts,
                                 int *error)
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

static tw_writer *open_stream_writer(FILE *stream, const tw_options *opts,
                                     int *error)
{
  tw_options o;
  tw__sink *sink;
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
      if ((rc = tw__sink_open_stream(stream, &o, &sink)) == 0)
        return writer_create(sink, &o, NULL, error);
    }
  }
  if (error)
    *error = rc;
  return NULL;
}

/* The public ways in and out, each with its sink on no list for a while
 * (see unlisted): fork waits for them. */
tw_writer *tw_open(const char *path, const tw_options *opts, int *error)
{
  tw_writer *w;

  unlisted_begin();
  w = open_path_writer(path, opts, error);
  unlisted_end();
  return w;
}

tw_writer *tw_open_fd(int fd, const tw_options *opts, int *error)
{
  tw_writer *w;

  unlisted_begin();
  w = open_fd_writer(fd, opts, error);
  unlisted_end();
  return w;
}

tw_writer *tw_open_stream(FILE *stream, const tw_options *opts, int *error)
{
  tw_writer *w;

  unlisted_begin();
  w = open_stream_writer(stream, opts, error);
  unlisted_end();
  return w;
}

int tw_close(tw_writer *w)
{
  int rc;

  if (!w)
    return 0;
  unlisted_begin();
  rc = close_writer(w);
  unlisted_end();
  return rc;
}

static int close_writer(tw_writer *w)
{
  int rc, rc2;

  open_writers_remove(w);
  if (tw__forked(w)) {
    /* The parent's lock may be held by a thread that does not exist
     * here, and the file is the parent's: touch neither.  (Its sink was
     * abandoned at the fork already: open_writers_child.) */
    w->sink->ops->abandon(w->sink);
    tw__stages_free(w);
    writer_free(w);
    return 0;
  }
  tw__writer_lock(w);
  tw__rotation_closing(w);      /* the last commit begins no new file */
  rc = tw__commit_locked(w, TW__COLLECT_ALL, NULL, 0, 1);
  if (w->background)
    tw__committer_stop_locked(w);
  /* Everything is committed: the sink is closed without the hook. */
  tw__crash_unregister(w);
  if (w->direct) {
    tw__stages_release_regions(w);
    if (!rc && (rc = tw__direct_check_cut(w)) != 0)
      tw__writer_fail(w, rc);
    if (!rc && w->sync_commits && (rc = w->sink->ops->sync(w->sink)) != 0)
      tw__writer_fail(w, rc);
  }
  rc2 = w->sink->ops->close(w->sink);
  if (!rc)
    rc = rc2 ? rc2 : w->err;
  tw__writer_unlock(w);
  tw__stages_free(w);
  pthread_cond_destroy(&w->done);
  pthread_cond_destroy(&w->work);
  pthread_mutex_destroy(&w->meta_lock);
  pthread_mutex_destroy(&w->lock);
  writer_free(w);
  return rc;
}

int tw_errcode(const tw_writer *w)
{
  if (!w)
    return 0;
  if (tw__forked(w))
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
  if (w && tw__forked(w)) {
    s.error = TW_EFORKED;          /* the parent's lock is not ours to take */
  } else if (w) {
    tw__writer_lock(w);
    tw__stages_count(w, &s.events, &s.bytes);
    s.commits = __atomic_load_n(&w->commits, __ATOMIC_RELAXED);
    tw__writer_unlock(w);
    s.dropped = __atomic_load_n(&w->dropped, __ATOMIC_RELAXED);
    s.output_bytes = __atomic_load_n(&w->out_bytes, __ATOMIC_RELAXED);
    /* A direct sink's records are committed as they are copied: each is
     * a commit. */
    if (w->direct) {
      s.output_bytes = s.bytes +
        __atomic_load_n(&w->meta_out, __ATOMIC_RELAXED);
      s.commits = s.events;
    }
    s.rotations = tw__rotations(w);
    s.restarts = __atomic_load_n(&w->restarts, __ATOMIC_RELAXED);
    s.rejected = __atomic_load_n(&w->rejected, __ATOMIC_RELAXED);
    s.strings_truncated =
      __atomic_load_n(&w->strings_truncated, __ATOMIC_RELAXED);
    s.utf8_replaced = __atomic_load_n(&w->utf8_replaced, __ATOMIC_RELAXED);
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
