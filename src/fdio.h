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

/* Whether a document that began at start with the byte first was cut
 * under the writer (logrotate's copytruncate) and written again past the
 * cut: the byte at start now reads NUL (a hole) or nothing.  0 when it
 * cannot tell (a descriptor not open for reading, as tw_open_fd may
 * give). */
int tw__fd_head_lost(int fd, off_t start, char first);

/* fdatasync, where a descriptor that cannot be synced (pipe, socket,
 * terminal, read-only file system) has nothing to sync.  Returns 0 or
 * -errno.  Async-signal-safe. */
int tw__fd_sync(int fd);

/* Take the advisory write lock of the whole file on fd (an open file
 * description lock, F_OFD_SETLK: held as long as any descriptor of this
 * open stays open, so across dup and fork), which every tracewriter
 * writer takes on the file it writes.  Returns 0 (also where the file
 * system has no locks), TW_EBUSY if another open of the file holds it
 * (another writer, in this process or another), or -errno. */
int tw__fd_lock(int fd);

/* The pid of a process that holds the lock of tw__fd_lock on the file
 * at path, from the lock lines of /proc/PID/fdinfo; 0 if it cannot be
 * known.  Scans every process's descriptors: for messages only. */
long tw__path_lock_holder(const char *path);

/* The file descriptor that a path names by itself: /dev/stdin,
 * /dev/stdout, /dev/stderr, /dev/fd/N or /proc/self/fd/N; -1 for any
 * other path. */
int tw__named_fd(const char *path);

/* A file made complete before a name points to it: opened without a name
 * (O_TMPFILE) or, where the file system cannot, under a temporary name
 * in the same directory; tw__newfile_publish then gives it its name in
 * one step.  So the name never points to a file that is being begun. */
typedef struct tw__newfile {
  int fd;                  /* the file, or -1 */
  int dirfd;               /* its directory (the caller's) */
  const char *name;        /* the name it is to take in dirfd */
  char *tmp;               /* the temporary name: name + ".next" */
  int named;               /* 1: it has the temporary name already (no
                              O_TMPFILE) */
} tw__newfile;

/* Open a new file for name in dirfd with flags (O_WRONLY or O_RDWR, plus
 * O_CLOEXEC) and mode.  anonymous: try O_TMPFILE first (0: go straight to
 * the temporary name).  Returns 0 (nf->fd open) or -errno. */
int tw__newfile_open(tw__newfile *nf, int dirfd, const char *name,
                     int flags, int mode, int anonymous);

/* Give the file its name in one step.  replace (rotation): a file of
 * that name is replaced (a link from the temporary name, made for an
 * O_TMPFILE file, then renameat over name).  Else (a new trace at open)
 * a file of that name stays and the call fails with -EEXIST (a link, or
 * renameat2 with RENAME_NOREPLACE).  The descriptor stays open; nf holds
 * nothing else after success.  Returns 0; TW__ENOLINK if an O_TMPFILE
 * file could not be linked (no /proc and no privilege: open again with
 * anonymous 0); or -errno (nothing named then). */
#define TW__ENOLINK (-1998)
int tw__newfile_publish(tw__newfile *nf, int replace);

/* Forget a file never published: close it and remove its temporary name.
 * (The caller may have closed fd already: pass -1 in nf->fd.) */
void tw__newfile_discard(tw__newfile *nf);

#endif /* TW_FDIO_H */
