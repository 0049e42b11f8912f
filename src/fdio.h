/* fdio.h -- descriptor I/O shared by the sinks (and the tools) */
#ifndef TW_FDIO_H
#define TW_FDIO_H

#include <sys/types.h>
#include <sys/uio.h>

/* Write all of iov[0..n) at offset (pwritev), or at the file position if
 * offset < 0 (writev), retrying EINTR and short writes.  Consumes iov.
 * Returns 0 or -errno (-EIO for a write of 0 bytes).  Async-signal-safe. */
int tw__write_all(int fd, struct iovec *iov, int n, off_t offset);

/* What a sink needs to know of the descriptor it is given. */
typedef struct tw__fd_info {
  int regular;             /* a regular file */
  int read_write;          /* open O_RDWR (a shared mapping needs it) */
  int append;              /* open O_APPEND: only streaming is possible */
  off_t size;              /* its size at open */
  off_t start;             /* rewritable in place (regular, no O_APPEND):
                              where the trace begins, its file position;
                              else -1 (the output streams) */
} tw__fd_info;

/* Fill *info for fd.  Returns 0, -EBADF for a descriptor open read-only,
 * or -errno of fstat, fcntl or lseek. */
int tw__fd_probe(int fd, tw__fd_info *info);

/* Nothing may follow a trace written in place: cut what the file holds
 * past info->start.  Returns 0 or -errno. */
int tw__fd_cut(int fd, const tw__fd_info *info);

/* fdatasync, where a descriptor that cannot be synced (pipe, socket,
 * terminal, read-only file system) has nothing to sync.  Returns 0 or
 * -errno.  Async-signal-safe. */
int tw__fd_sync(int fd);

#endif /* TW_FDIO_H */
