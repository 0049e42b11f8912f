/* rotate.c -- what rotation needs besides the writer: the names of the
 * finished files, and the metadata records repeated at the top of each
 * new file
 *
 * Each file of a rotated trace must be a complete trace on its own, so
 * the 'M' records (process and thread names, sort indexes, labels)
 * emitted so far are kept and written again after the head of every new
 * file.  They are kept in one allocation made at open, bounded: a record
 * with the same name and the same process (and thread, for thread_*
 * metadata) replaces the older one in its place, and when the store is
 * full the oldest records but the first (the writer's own process name,
 * remembered at open) are forgotten to make room.
 *
 * Also the directory's descriptor, which the rotating writer names its
 * files relative to (and tracewriter repair fsyncs after its rename).
 *
 * And rotation itself: at the commit that is due, a new file complete
 * with its head and metadata takes the path, and the old one gets its
 * numbered name (rotate()).
 */
#include "internal.h"     /* config.h first */
#include "fdio.h"
#include "layout.h"
#include "rotate.h"
#include "writer.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int tw__meta_init(tw__meta *m, size_t cap)
{
  memset(m, 0, sizeof *m);
  m->ent = calloc(TW__META_MAX_ENTRIES, sizeof *m->ent);
  m->data = malloc(TW__META_GAP + cap);
  if (!m->ent || !m->data) {
    free(m->ent);
    free(m->data);
    return -ENOMEM;
  }
  m->cap = cap;
  return 0;
}

void tw__meta_free(tw__meta *m)
{
  free(m->ent);
  free(m->data);
  m->ent = NULL;
  m->data = NULL;
}

/* FNV-1a: the name part of a record's key. */
static uint64_t name_hash(const char *s)
{
  uint64_t h = 14695981039346656037ull;

  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* Forget entry i, closing the gap in data and in ent. */
static void forget(tw__meta *m, unsigned i)
{
  char *recs = m->data + TW__META_GAP;
  size_t off = m->ent[i].off, len = m->ent[i].len;

  memmove(recs + off, recs + off + len, m->len - off - len);
  m->len -= len;
  memmove(&m->ent[i], &m->ent[i + 1], (m->n - i - 1) * sizeof *m->ent);
  m->n--;
  for (unsigned k = i; k < m->n; k++)
    m->ent[k].off -= (uint32_t)len;
}

/* Give entry i len bytes in place (its later records move). */
static void resize(tw__meta *m, unsigned i, size_t len)
{
  char *recs = m->data + TW__META_GAP;
  size_t end = m->ent[i].off + m->ent[i].len;
  uint32_t delta = (uint32_t)len - m->ent[i].len; /* modulo 2^32 */

  memmove(recs + m->ent[i].off + len, recs + end, m->len - end);
  m->len = m->len - m->ent[i].len + len;
  m->ent[i].len = (uint32_t)len;
  for (unsigned k = i + 1; k < m->n; k++)
    m->ent[k].off += delta;
}

void tw__meta_remember(tw__meta *m, const char *name, int64_t pid,
                       int64_t tid, const char *rec, size_t len)
{
  uint64_t h = name_hash(name);
  unsigned i;

  /* Process metadata is per process, whichever thread sets it. */
  if (strncmp(name, "thread_", 7) != 0)
    tid = 0;
  for (i = 0; i < m->n; i++)
    if (m->ent[i].name_hash == h && m->ent[i].pid == pid &&
        m->ent[i].tid == tid)
      break;
  /* What cannot fit beside the first record is not kept, and nothing is
   * forgotten for it: the older record, if any, stays. */
  if (len > m->cap || (i != 0 && m->n && m->ent[0].len + len > m->cap))
    return;
  if (i < m->n) {
    /* A newer value: in the older one's place, so that the first record
     * (the writer's own process name) stays first. */
    for (unsigned v = 1; m->len - m->ent[i].len + len > m->cap && v < m->n;)
      if (v == i)
        v++;
      else {
        forget(m, v);
        i -= v < i;
      }
    if (m->len - m->ent[i].len + len > m->cap)
      return;
    resize(m, i, len);
    memcpy(m->data + TW__META_GAP + m->ent[i].off, rec, len);
    return;
  }
  /* The oldest records but the first make room; the store is never left
   * empty, so a new file always has a record after its head. */
  while (m->n > 1 && (m->len + len > m->cap || m->n == TW__META_MAX_ENTRIES))
    forget(m, 1);
  if (m->len + len > m->cap || m->n == TW__META_MAX_ENTRIES)
    return;
  memcpy(m->data + TW__META_GAP + m->len, rec, len);
  m->ent[m->n].off = (uint32_t)m->len;
  m->ent[m->n].len = (uint32_t)len;
  m->ent[m->n].name_hash = h;
  m->ent[m->n].pid = pid;
  m->ent[m->n].tid = tid;
  m->n++;
  m->len += len;
}

char *tw__meta_document_start(tw__meta *m, int object_form, size_t *len)
{
  char *first = m->data + TW__META_GAP;

  /* The first record's leading comma gives way to the head. */
  m->saved = first[0];
  return tw__layout_document(object_form, first, m->len, len);
}

void tw__meta_document_done(tw__meta *m)
{
  m->data[TW__META_GAP] = m->saved;
}

/* Where the ".NNNNNN" goes in the base name of path: before ".json.gz",
 * ".json" or ".gz", else before the last extension, else at the end. */
static size_t number_at(const char *path)
{
  static const char *const known[] = { ".json.gz", ".json", ".gz" };
  const char *base = strrchr(path, '/');
  size_t n = strlen(path), b;
  const char *dot;

  b = base ? (size_t)(base - path) + 1 : 0;
  for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) {
    size_t kl = strlen(known[k]);
    if (n - b > kl && strcmp(path + n - kl, known[k]) == 0)
      return n - kl;
  }
  dot = strrchr(path + b, '.');
  return dot && dot > path + b ? (size_t)(dot - path) : n;
}

int tw__rotated_name(char *out, size_t size, const char *path,
                     unsigned long n)
{
  size_t at = number_at(path);
  int k = snprintf(out, size, "%.*s.%06lu%s", (int)at, path, n, path + at);

  return k < 0 || (size_t)k >= size ? -ENAMETOOLONG : 0;
}

int tw__open_directory_of(const char *path)
{
  const char *slash = strrchr(path, '/');
  char *dir;
  int fd;

  if (!slash)
    dir = strdup(".");
  else if (slash == path)
    dir = strdup("/");
  else
    dir = strndup(path, (size_t)(slash - path));
  if (!dir)
    return -ENOMEM;
  fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
#ifdef O_PATH
  if (fd < 0 && errno == EACCES)
    fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
#endif
  fd = fd >= 0 ? fd : -errno;
  free(dir);
  return fd;
}

/* ------------------------------------------------------------ rotation */

/* A writer's rotation state: used holding the commit token (buffering
 * sinks) or the writer's lock (direct ones), but meta (meta_lock). */
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
};


/* Whether the live file is to be finished now, after a commit: only once
 * it holds records, and the size is that of what it holds past its
 * metadata, so that a file is never begun only to be finished. */
int tw__rotation_due(const tw_writer *w)
{
  struct rotation *r = w->rot;
  tw__sink *sink = __atomic_load_n(&w->sink, __ATOMIC_ACQUIRE);
  unsigned long long out =
    __atomic_load_n(&sink->out_bytes, __ATOMIC_RELAXED) -
    __atomic_load_n(&r->began_out, __ATOMIC_RELAXED);

  /* A direct sink's threads count no commits: what was reserved past
   * the metadata is what the file holds. */
  if (!(w->direct ? out : r->records) ||
      __atomic_load_n(&r->closing, __ATOMIC_ACQUIRE))
    return 0;
  if (r->size && out + sink->tail_len >= r->size)
    return 1;
  return r->interval_ns &&
    tw_now_ns() - __atomic_load_n(&r->began_ns, __ATOMIC_RELAXED) >=
    r->interval_ns;
}

/* Give a new file the head and the metadata records: a complete trace. */
static int begin_file(tw_writer *w, tw__sink *next)
{
  int rc = tw__begin_document(w, next);

  if (rc == 0 && w->sync_commits)
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
  int flags = O_RDWR | O_CLOEXEC;        /* as tw_open's (open.c) */
  tw__sink *old = w->sink, *next;
  int rc, linked, close_rc, anonymous = 1;
  tw__newfile nf;

  if ((rc = tw__rotated_name(r->name, r->name_size, r->base, n)) != 0)
    return rc;
again:
  /* The new file, without a name until it is complete (or, where the
   * file system cannot, as base.next). */
  if ((rc = tw__newfile_open(&nf, r->dirfd, r->base, flags,
                             r->opts.file_mode, anonymous)) != 0)
    return rc;
  rc = tw__sink_open(nf.fd, 1, &r->opts, &next);
  if (rc != 0) {
    nf.fd = -1;                      /* closed by tw__sink_open */
    goto drop_next;
  }
  if ((rc = begin_file(w, next)) != 0 || (rc = linked = link_finished(r)) < 0)
    goto abandon_next;
  /* base.next appears complete and is renamed over base. */
  if ((rc = tw__newfile_publish(&nf)) != 0) {
    if (linked)
      (void)unlinkat(r->dirfd, r->name, 0);
    else
      (void)renameat(r->dirfd, r->name, r->dirfd, r->base);
    goto abandon_next;
  }
  /* The new names durable too: a directory that cannot be synced (no
   * read access to it) is left as it is. */
  if (w->sync_commits && fsync(r->dirfd) != 0 && errno != EBADF &&
      errno != EINVAL)
    rc = -errno;
  /* Threads of a direct sink see the new sink at their next record. */
  __atomic_store_n(&w->sink, next, __ATOMIC_RELEASE);
  w->out_done += __atomic_load_n(&old->out_bytes, __ATOMIC_RELAXED);
  if ((close_rc = old->ops->close(old)) != 0 && rc == 0)
    rc = close_rc;
  r->finished = n;
  __atomic_store_n(&r->began_ns, tw_now_ns(), __ATOMIC_RELAXED);
  __atomic_store_n(&r->began_out,
                   __atomic_load_n(&next->out_bytes, __ATOMIC_RELAXED),
                   __ATOMIC_RELAXED);
  r->records = 0;
  __atomic_add_fetch(&r->rotations, 1, __ATOMIC_RELAXED);
  /* A file already gone (deleted by someone else) is no error. */
  if (r->keep && n > r->keep &&
      tw__rotated_name(r->name, r->name_size, r->base, n - r->keep) == 0)
    (void)unlinkat(r->dirfd, r->name, 0);
  return rc;

abandon_next:
  next->ops->abandon(next);          /* closes nf.fd */
  nf.fd = -1;
drop_next:
  tw__newfile_discard(&nf);
  /* No /proc and no privilege to link an anonymous file: named. */
  if (rc == TW__ENOLINK && anonymous) {
    anonymous = 0;
    goto again;
  }
  return rc;
}

int tw__rotate_if_due(tw_writer *w, size_t len)
{
  int rc;

  if (!w->rot)
    return 0;
  w->rot->records += len;
  if (!tw__rotation_due(w))
    return 0;
  rc = rotate(w);
  __atomic_store_n(&w->out_bytes, w->out_done +
                   __atomic_load_n(&w->sink->out_bytes, __ATOMIC_RELAXED),
                   __ATOMIC_RELAXED);
  return rc;
}

void tw__rotation_free(struct rotation *r)
{
  if (!r)
    return;
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
struct rotation *tw__rotation_new(const char *path, const tw_options *o,
                                  int *rc)
{
  struct rotation *r;
  char *target = NULL;
  const char *slash, *base;
  long name_max;

  if ((target = tw__link_target(path)) != NULL) {
    path = target;
  } else if (errno) {
    *rc = -errno;
    return NULL;
  }
  slash = strrchr(path, '/');
  base = slash ? slash + 1 : path;
  *rc = -ENOMEM;
  if (!(r = calloc(1, sizeof *r))) {
    free(target);
    return NULL;
  }
  r->dirfd = -1;
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
  tw__rotation_free(r);
  free(target);
  return NULL;
}

void tw__rotation_began(tw_writer *w)
{
  if (w->rot) {
    __atomic_store_n(&w->rot->began_ns, tw_now_ns(), __ATOMIC_RELAXED);
    __atomic_store_n(&w->rot->began_out,
                     __atomic_load_n(&w->sink->out_bytes, __ATOMIC_RELAXED),
                     __ATOMIC_RELAXED);
  }
}

void tw__rotation_closing(tw_writer *w)
{
  if (w->rot)
    __atomic_store_n(&w->rot->closing, 1, __ATOMIC_RELEASE);
}

uint64_t tw__rotations(const tw_writer *w)
{
  return w->rot ? __atomic_load_n(&w->rot->rotations, __ATOMIC_RELAXED) : 0;
}
