/* fdio.c -- the descriptor I/O every sink shares: the write loop, what a
 * sink needs to know of its descriptor at open, and durability
 *
 * Everything here but tw__fd_probe is async-signal-safe (bare system
 * calls on the caller's memory): the crash hook commits through it.
 */
#include "internal.h"
#include "fdio.h"

#include <errno.h>
#include <fcntl.h>
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

int tw__fd_sync(int fd)
{
  /* Pipes, sockets and terminals have nothing to sync. */
  if (fdatasync(fd) != 0 && errno != EINVAL && errno != EROFS)
    return -errno;
  return 0;
}
