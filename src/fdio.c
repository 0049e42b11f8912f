/* fdio.c -- the descriptor I/O every sink shares: the write loop, what a
 * sink needs to know of its descriptor at open, and durability
 *
 * tw__write_all, tw__fd_cut, tw__fd_head_lost and tw__fd_sync are
 * async-signal-safe (bare system calls on the caller's memory): the
 * crash hook commits through them.  The rest -- tw__fd_probe, and the
 * file-naming helpers (tw__newfile_*), which allocate
 * -- are for open and rotation only.
 */
#include "internal.h"
#include "fdio.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <sys/sysmacros.h>
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

int tw__fd_lock(int fd)
{
#ifdef F_OFD_SETLK
  struct flock lk;

  memset(&lk, 0, sizeof lk);
  lk.l_type = F_WRLCK;
  lk.l_whence = SEEK_SET;              /* l_start, l_len 0: the whole file */
  while (fcntl(fd, F_OFD_SETLK, &lk) != 0) {
    if (errno == EINTR)
      continue;
    if (errno == EAGAIN || errno == EACCES)
      return TW_EBUSY;
    /* A file system without locks (some network ones): no lock, as
     * before there were locks. */
    if (errno == EINVAL || errno == ENOLCK || errno == EOPNOTSUPP)
      return 0;
    return -errno;
  }
#else
  (void)fd;
#endif
  return 0;
}

/* Whether the fdinfo file at path shows an OFD write lock on the file
 * with device maj:min and inode ino. */
static int fdinfo_locks(const char *path, unsigned maj, unsigned min,
                        unsigned long long ino)
{
  char line[256];
  int found = 0;
  FILE *f = fopen(path, "re");

  /* "lock:\t1: OFDLCK ADVISORY  WRITE -1 fe:00:5678 0 EOF": the device
   * in hex, the inode in decimal. */
  while (f && !found && fgets(line, sizeof line, f)) {
    unsigned a, b;
    unsigned long long i;
    char kind[16], rw[16];

    found = sscanf(line, "lock: %*d: %15s %*s %15s %*d %x:%x:%llu", kind,
                   rw, &a, &b, &i) == 5 && strcmp(kind, "OFDLCK") == 0 &&
            strcmp(rw, "WRITE") == 0 && a == maj && b == min && i == ino;
  }
  if (f)
    fclose(f);
  return found;
}

long tw__path_lock_holder(const char *path)
{
  char name[64];
  struct dirent *p, *fd;
  struct stat st;
  long holder = 0;
  DIR *procs, *fds;

  /* The kernel lists an OFD lock without its pid (/proc/locks says -1);
   * the descriptor that holds it shows it in its fdinfo. */
  if (stat(path, &st) != 0 || !(procs = opendir("/proc")))
    return 0;
  while (!holder && (p = readdir(procs)) != NULL) {
    char *end;
    long pid = strtol(p->d_name, &end, 10);

    if (pid <= 0 || *end)
      continue;
    snprintf(name, sizeof name, "/proc/%ld/fdinfo", pid);
    if (!(fds = opendir(name)))
      continue;
    while (!holder && (fd = readdir(fds)) != NULL) {
      if (fd->d_name[0] == '.')
        continue;
      snprintf(name, sizeof name, "/proc/%ld/fdinfo/%.20s", pid, fd->d_name);
      if (fdinfo_locks(name, major(st.st_dev), minor(st.st_dev),
                       (unsigned long long)st.st_ino))
        holder = pid;
    }
    closedir(fds);
  }
  closedir(procs);
  return holder;
}

int tw__named_fd(const char *path)
{
  static const char *const std[] = { "/dev/stdin", "/dev/stdout",
                                     "/dev/stderr" };
  static const char *const dirs[] = { "/dev/fd/", "/proc/self/fd/" };

  for (int i = 0; i < 3; i++)
    if (strcmp(path, std[i]) == 0)
      return i;
  for (int i = 0; i < 2; i++) {
    size_t n = strlen(dirs[i]);
    const char *p = path + n;
    long fd = 0;

    if (strncmp(path, dirs[i], n) != 0 || !*p)
      continue;
    for (; *p >= '0' && *p <= '9' && fd <= INT_MAX / 10; p++)
      fd = fd * 10 + (*p - '0');
    if (!*p && fd <= INT_MAX)
      return (int)fd;
  }
  return -1;
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

/* Link the O_TMPFILE file to name in its directory.  replace: a file of
 * that name (the temporary name's, left by a run that died) goes first;
 * else it stays and the link fails with -EEXIST.  Returns 0, TW__ENOLINK
 * or -errno. */
static int link_anonymous(tw__newfile *nf, const char *name, int replace)
{
  char proc[64];
  int tries = 0;

  snprintf(proc, sizeof proc, "/proc/self/fd/%d", nf->fd);
  for (;;) {
    if (linkat(AT_FDCWD, proc, nf->dirfd, name, AT_SYMLINK_FOLLOW) == 0)
      return 0;
#ifdef AT_EMPTY_PATH
    if (errno == ENOENT &&
        linkat(nf->fd, "", nf->dirfd, name, AT_EMPTY_PATH) == 0)
      return 0;
#endif
    if (errno == EEXIST && replace && tries++ == 0 &&
        unlinkat(nf->dirfd, name, 0) == 0)
      continue;
    return errno == ENOENT || errno == EPERM ? TW__ENOLINK : -errno;
  }
}

/* Rename from to to in dirfd unless to exists (-EEXIST then). */
static int rename_noreplace(int dirfd, const char *from, const char *to)
{
#ifdef RENAME_NOREPLACE
  if (renameat2(dirfd, from, dirfd, to, RENAME_NOREPLACE) == 0)
    return 0;
  if (errno != EINVAL && errno != ENOSYS)
    return -errno;
#endif
  /* Without renameat2: a link, which never replaces, then the old name
   * goes. */
  if (linkat(dirfd, from, dirfd, to, 0) != 0)
    return -errno;
  (void)unlinkat(dirfd, from, 0);
  return 0;
}

int tw__newfile_publish(tw__newfile *nf, int replace)
{
  int rc;

  if (!nf->named && !replace) {
    /* Straight to its name, which a link never replaces. */
    if ((rc = link_anonymous(nf, nf->name, 0)) != 0)
      return rc;
  } else {
    if (!nf->named) {
      if ((rc = link_anonymous(nf, nf->tmp, 1)) != 0)
        return rc;
      nf->named = 1;
    }
    if (replace ? (renameat(nf->dirfd, nf->tmp, nf->dirfd, nf->name) != 0 &&
                   (rc = -errno) != 0)
                : (rc = rename_noreplace(nf->dirfd, nf->tmp, nf->name)) != 0)
      return rc;
  }
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
