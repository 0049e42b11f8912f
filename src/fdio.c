/* fdio.c -- the descriptor I/O every sink shares: the write loop, what a
 * sink needs to know of its descriptor at open, and durability
 *
 * tw__write_all, tw__fd_cut, tw__fd_head_lost and tw__fd_sync are
 * async-signal-safe (bare system calls on the caller's memory): the
 * crash hook commits through them.  The rest -- tw__fd_probe, and the
 * file-naming helpers (tw__link_target, tw__newfile_*), which allocate
 * -- are for open and rotation only.
 */
#include "internal.h"
#include "fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int tw__write_all(int fd, struct iovec *iov, int n, off_t offset)
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

int tw__fd_probe(int fd, tw__fd_info *info)
{
  struct stat st;
  int flags;

  if (fstat(fd, &st) != 0 || (flags = fcntl(fd, F_GETFL)) < 0)
    return -errno;
  if ((flags & O_ACCMODE) == O_RDONLY)
    return -EBADF;
  info->regular = S_ISREG(st.st_mode) != 0;
  info->read_write = (flags & O_ACCMODE) == O_RDWR;
  info->append = (flags & O_APPEND) != 0;
  info->size = st.st_size;
  info->start = -1;
  /* Only a regular file without O_APPEND can be rewritten in place. */
  if (info->regular && !info->append &&
      (info->start = lseek(fd, 0, SEEK_CUR)) < 0)
    return -errno;
  return 0;
}

int tw__fd_cut(int fd, const tw__fd_info *info)
{
  if (info->start >= 0 && info->size > info->start &&
      ftruncate(fd, info->start) != 0)
    return -errno;
  return 0;
}

int tw__fd_head_lost(int fd, off_t start, char first)
{
  char c;

  switch (pread(fd, &c, 1, start)) {
  case 1:
    return c != first;
  case 0:
    return 1;
  default:
    return 0;
  }
}

int tw__fd_sync(int fd)
{
  /* Pipes, sockets and terminals have nothing to sync. */
  if (fdatasync(fd) != 0 && errno != EINVAL && errno != EROFS)
    return -errno;
  return 0;
}

char *tw__link_target(const char *path)
{
  char *cur = strdup(path);
  struct stat st;

  if (!cur)
    return NULL;
  for (int hops = 0; lstat(cur, &st) == 0 && S_ISLNK(st.st_mode); hops++) {
    char buf[4096], *next;
    const char *slash = strrchr(cur, '/');
    ssize_t n;

    if (hops == 40 || (n = readlink(cur, buf, sizeof buf - 1)) < 0) {
      if (hops == 40)
        errno = ELOOP;
      free(cur);
      return NULL;
    }
    buf[n] = '\0';
    /* A relative target is relative to the link's directory. */
    if (buf[0] != '/' && slash) {
      size_t dl = (size_t)(slash - cur) + 1;
      if ((next = malloc(dl + (size_t)n + 1)) != NULL) {
        memcpy(next, cur, dl);
        memcpy(next + dl, buf, (size_t)n + 1);
      }
    } else {
      next = strdup(buf);
    }
    free(cur);
    if (!(cur = next))
      return NULL;
  }
  if (strcmp(cur, path) == 0) {        /* not a link */
    free(cur);
    errno = 0;
    return NULL;
  }
  return cur;
}

int tw__newfile_open(tw__newfile *nf, int dirfd, const char *name,
                     int flags, int mode, int anonymous)
{
  size_t n = strlen(name);
  int fd = -1;

  nf->fd = -1;
  nf->dirfd = dirfd;
  nf->name = name;
  nf->named = 0;
  if (!(nf->tmp = malloc(n + sizeof ".next")))
    return -ENOMEM;
  memcpy(nf->tmp, name, n);
  memcpy(nf->tmp + n, ".next", sizeof ".next");
#ifdef O_TMPFILE
  if (anonymous) {
    do
      fd = openat(dirfd, ".", flags | O_TMPFILE, mode);
    while (fd < 0 && errno == EINTR);
    /* A file system without O_TMPFILE says so in several ways. */
    if (fd < 0 && errno != EOPNOTSUPP && errno != EISDIR &&
        errno != EINVAL && errno != ENOENT) {
      int rc = -errno;
      free(nf->tmp);
      nf->tmp = NULL;
      return rc;
    }
  }
#else
  (void)anonymous;
#endif
  if (fd < 0) {
    do
      fd = openat(dirfd, nf->tmp, flags | O_CREAT | O_TRUNC, mode);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
      int rc = -errno;
      /* A failed open may still have made the name: it is ours. */
      (void)unlinkat(dirfd, nf->tmp, 0);
      free(nf->tmp);
      nf->tmp = NULL;
      return rc;
    }
    nf->named = 1;
  }
  nf->fd = fd;
  return 0;
}

/* Link the O_TMPFILE file to the temporary name (an older one of a run
 * that died goes).  Returns 0, TW__ENOLINK or -errno. */
static int link_anonymous(tw__newfile *nf)
{
  char proc[64];
  int tries = 0;

  snprintf(proc, sizeof proc, "/proc/self/fd/%d", nf->fd);
  for (;;) {
    if (linkat(AT_FDCWD, proc, nf->dirfd, nf->tmp, AT_SYMLINK_FOLLOW) == 0)
      return 0;
#ifdef AT_EMPTY_PATH
    if (errno == ENOENT &&
        linkat(nf->fd, "", nf->dirfd, nf->tmp, AT_EMPTY_PATH) == 0)
      return 0;
#endif
    if (errno == EEXIST && tries++ == 0 &&
        unlinkat(nf->dirfd, nf->tmp, 0) == 0)
      continue;
    return errno == ENOENT || errno == EPERM ? TW__ENOLINK : -errno;
  }
}

int tw__newfile_publish(tw__newfile *nf)
{
  int rc;

  if (!nf->named) {
    if ((rc = link_anonymous(nf)) != 0)
      return rc;
    nf->named = 1;
  }
  if (renameat(nf->dirfd, nf->tmp, nf->dirfd, nf->name) != 0)
    return -errno;
  nf->named = 0;                 /* the temporary name is gone */
  free(nf->tmp);
  nf->tmp = NULL;
  return 0;
}

void tw__newfile_discard(tw__newfile *nf)
{
  if (nf->fd >= 0)
    close(nf->fd);
  if (nf->named && nf->tmp)
    (void)unlinkat(nf->dirfd, nf->tmp, 0);
  free(nf->tmp);
  nf->tmp = NULL;
  nf->fd = -1;
}
