/* rotate.c -- rotation: when the live file is finished, and the names
 * of the files
 *
 * A rotating writer finishes its live file when it is big or old enough
 * (tw__rotation_due).  document.c then begins the next file: it opens it
 * here without a name (tw__rotation_next_open), writes its document, and
 * has it take the path (tw__rotation_publish) while the finished file
 * gets its numbered name, so that the path names a complete trace at
 * every moment.
 *
 * Also the directory's descriptor, which the rotating writer names its
 * files relative to (and tracewriter repair fsyncs after its rename).
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

int tw__rotated_name(char *out, size_t size, const char *path,
                     unsigned long n)
{
  size_t at = tw__layout_number_at(path);
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

/* A writer's rotation state.  Written holding the commit token (and,
 * what document.c writes at a rotation, the writer's lock too); the
 * fields marked atomic are read without either. */
struct rotation {
  int dirfd;               /* the directory of the files, opened at open:
                              names stay right if the program changes its
                              working directory */
  char *base;              /* the live file's name in it */
  char *name;              /* room for a numbered name */
  size_t name_size;
  tw_options opts;         /* to open the next file (process_name unset) */
  uint64_t size;           /* rotate_size */
  uint64_t interval_ns;    /* rotate_interval_ns */
  unsigned keep;           /* rotate_keep */
  unsigned long finished;  /* files finished (the newest is numbered so) */
  uint64_t began_ns;       /* when the live file was begun (atomic) */
  unsigned long long began_out; /* the sink's out_bytes then: the head and
                              the metadata records (atomic) */
  unsigned long long records; /* bytes of records committed to the live
                              file since (0: do not rotate an empty file;
                              atomic) */
  int closing;             /* tw_close is committing: no new file (atomic) */
  uint64_t rotations;      /* files begun after the first (atomic) */
};

int tw__rotation_due(const tw_writer *w, const tw__sink *sink)
{
  struct rotation *r = w->rot;
  unsigned long long out =
    __atomic_load_n(&sink->out_bytes, __ATOMIC_RELAXED) -
    __atomic_load_n(&r->began_out, __ATOMIC_RELAXED);

  /* Only once the file holds records, and the size is that of what it
   * holds past its metadata, so that a file is never begun only to be
   * finished.  A direct sink's threads count no commits: what was
   * reserved past the metadata is what the file holds. */
  if (!(w->direct ? out : __atomic_load_n(&r->records, __ATOMIC_RELAXED)) ||
      __atomic_load_n(&r->closing, __ATOMIC_ACQUIRE))
    return 0;
  if (r->size && out + sink->tail_len >= r->size)
    return 1;
  return r->interval_ns &&
    tw_now_ns() - __atomic_load_n(&r->began_ns, __ATOMIC_RELAXED) >=
    r->interval_ns;
}

void tw__rotation_count(tw_writer *w, size_t len)
{
  TW__ASSERT(tw__token_held(w));
  if (w->rot)
    __atomic_add_fetch(&w->rot->records, len, __ATOMIC_RELAXED);
}

const tw_options *tw__rotation_options(const struct rotation *r)
{
  return &r->opts;
}

int tw__rotation_next_open(struct rotation *r, tw__newfile *nf,
                           int anonymous)
{
  int rc;

  if ((rc = tw__rotated_name(r->name, r->name_size, r->base,
                             r->finished + 1)) != 0)
    return rc;
  /* Read access too, as tw_open's (open.c). */
  if ((rc = tw__newfile_open(nf, r->dirfd, r->base, O_RDWR | O_CLOEXEC,
                             r->opts.file_mode, anonymous)) != 0)
    return rc;
  /* Locked before it is named, like the first file (one writer per
   * file), and with the live file's mode and owner, which may be the
   * user's own rather than the options' (tw_open writes an existing file
   * in place).  An owner only root may give is left to the process. */
  if ((rc = tw__fd_lock(nf->fd)) == 0) {
    struct stat st;
    if (fstatat(r->dirfd, r->base, &st, 0) == 0) {
      if (fchmod(nf->fd, st.st_mode & 07777) != 0)
        rc = -errno;
      else if (fchown(nf->fd, st.st_uid, st.st_gid) != 0 &&
               errno != EPERM)
        rc = -errno;
    }
  }
  if (rc != 0)
    tw__newfile_discard(nf);
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

int tw__rotation_publish(struct rotation *r, tw__newfile *nf, int sync)
{
  int linked = link_finished(r), rc;

  if (linked < 0)
    return linked;
  /* The new file (unnamed, or base.next) is renamed over base. */
  if ((rc = tw__newfile_publish(nf, 1)) != 0) {
    if (linked)
      (void)unlinkat(r->dirfd, r->name, 0);
    else
      (void)renameat(r->dirfd, r->name, r->dirfd, r->base);
    return rc;
  }
  /* The new names durable too: a directory that cannot be synced (no
   * read access to it) is left as it is. */
  if (sync && fsync(r->dirfd) != 0 && errno != EBADF && errno != EINVAL)
    return -errno;
  return 0;
}

void tw__rotation_finished(tw_writer *w)
{
  struct rotation *r = w->rot;
  unsigned long n = ++r->finished;

  TW__ASSERT(tw__lock_held(w) && tw__token_held(w));
  __atomic_add_fetch(&r->rotations, 1, __ATOMIC_RELAXED);
  /* A file already gone (deleted by someone else) is no error. */
  if (r->keep && n > r->keep &&
      tw__rotated_name(r->name, r->name_size, r->base, n - r->keep) == 0)
    (void)unlinkat(r->dirfd, r->name, 0);
}

void tw__rotation_free(struct rotation *r)
{
  if (!r)
    return;
  if (r->dirfd >= 0)
    close(r->dirfd);
  free(r->base);
  free(r->name);
  free(r);
}
/* The rotation state for a writer on path, or NULL with *rc set: an
 * error now rather than at the first rotation if the names of the files
 * cannot be made.  path is the file itself (tw_open passes the name the
 * kernel resolved for a link), so the files go beside it. */
struct rotation *tw__rotation_new(const char *path, const tw_options *o,
                                  int *rc)
{
  struct rotation *r;
  const char *slash, *base;
  long name_max;

  slash = strrchr(path, '/');
  base = slash ? slash + 1 : path;
  *rc = -ENOMEM;
  if (!(r = calloc(1, sizeof *r)))
    return NULL;
  r->dirfd = -1;
  /* Room for a number of any size: ".", 20 digits. */
  r->name_size = strlen(base) + 32;
  r->base = strdup(base);
  r->name = malloc(r->name_size);
  *rc = -ENOMEM;
  if (!r->base || !r->name)
    goto fail;
  if ((r->dirfd = tw__open_directory_of(path)) < 0) {
    *rc = r->dirfd;
    goto fail;
  }
  errno = 0;
  if ((name_max = fpathconf(r->dirfd, _PC_NAME_MAX)) < 0)
    name_max = errno ? NAME_MAX : LONG_MAX;      /* -1, errno 0: no limit */
  if (tw__rotated_name(r->name, r->name_size, r->base, ULONG_MAX) != 0 ||
      strlen(r->name) > (size_t)name_max ||
      strlen(r->base) + sizeof ".next" - 1 > (size_t)name_max) {
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
  return NULL;
}

void tw__rotation_began(tw_writer *w, const tw__sink *sink)
{
  struct rotation *r = w->rot;

  TW__ASSERT(tw__token_held(w));
  if (r) {
    __atomic_store_n(&r->began_ns, tw_now_ns(), __ATOMIC_RELAXED);
    __atomic_store_n(&r->began_out,
                     __atomic_load_n(&sink->out_bytes, __ATOMIC_RELAXED),
                     __ATOMIC_RELAXED);
    __atomic_store_n(&r->records, 0, __ATOMIC_RELAXED);
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
