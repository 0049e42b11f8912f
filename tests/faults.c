/* faults.c -- the fault injection harness of the test_faults_* programs:
 * failed allocations, system calls, zlib (see faults.h)
 *
 * Each test_faults_* program is built from the library's SOURCES (not
 * libtracewriter.la), this file and its tests, and linked with
 * -Wl,--wrap=SYM for every allocation function, output system call and
 * zlib entry point the library uses, so the linker sends
 * the library's calls to the __wrap_SYM functions below.  Each calls the
 * real function (__real_SYM) unless a test has programmed a fault for it:
 * fail the Nth call (and maybe some after it) with an errno, write only
 * part of a request, return EINTR once.  The allocation wrappers also keep
 * the set of live blocks, so a test asserts that a failed tw_open freed
 * everything it allocated (libexpat's allocator that fails the Nth
 * allocation, looped over N).  zlib allocates through its own malloc, out
 * of the linker's reach: the deflateInit2_ wrapper gives the stream
 * zalloc/zfree functions that go through the same wrappers.
 *
 * The wrappers see the test's own calls too (its malloc, close, pthread_
 * create...): a fault is programmed just before the library call it is
 * for, and counts compare live blocks before and after.
 *
 * Every file a test writes is read back with the strict checker (a gzip
 * file inflated by zlib first) and compared event by event with what was
 * emitted.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* fallocate, mremap */
#endif
#include "faults.h"
#include "gunzip.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zlib.h>

/* ------------------------------------------------------ the real functions */

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
ssize_t __real_write(int fd, const void *buf, size_t n);
ssize_t __real_writev(int fd, const struct iovec *iov, int n);
ssize_t __real_pwrite(int fd, const void *buf, size_t n, off_t off);
ssize_t __real_pwritev(int fd, const struct iovec *iov, int n, off_t off);
int __real_fallocate(int fd, int mode, off_t off, off_t len);
int __real_posix_fallocate(int fd, off_t off, off_t len);
int __real_close(int fd);
int __real_fdatasync(int fd);
int __real_msync(void *addr, size_t len, int flags);
void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd,
                  off_t off);
void *__real_mremap(void *old, size_t old_len, size_t new_len, int flags,
                    ...);
int __real_deflateInit2_(z_streamp strm, int level, int method,
                         int window_bits, int mem_level, int strategy,
                         const char *version, int stream_size);
int __real_deflate(z_streamp strm, int flush);
int __real_pthread_create(pthread_t *th, const pthread_attr_t *attr,
                          void *(*fn)(void *), void *arg);
int __real_openat(int dirfd, const char *path, int flags, ...);
int __real_linkat(int olddirfd, const char *old, int newdirfd,
                  const char *new_, int flags);
int __real_renameat(int olddirfd, const char *old, int newdirfd,
                    const char *new_);
int __real_unlinkat(int dirfd, const char *path, int flags);
int __real_fsync(int fd);

void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);
ssize_t __wrap_write(int fd, const void *buf, size_t n);
ssize_t __wrap_writev(int fd, const struct iovec *iov, int n);
ssize_t __wrap_pwrite(int fd, const void *buf, size_t n, off_t off);
ssize_t __wrap_pwritev(int fd, const struct iovec *iov, int n, off_t off);
int __wrap_fallocate(int fd, int mode, off_t off, off_t len);
int __wrap_posix_fallocate(int fd, off_t off, off_t len);
int __wrap_close(int fd);
int __wrap_fdatasync(int fd);
int __wrap_msync(void *addr, size_t len, int flags);
void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd,
                  off_t off);
void *__wrap_mremap(void *old, size_t old_len, size_t new_len, int flags,
                    ...);
int __wrap_deflateInit2_(z_streamp strm, int level, int method,
                         int window_bits, int mem_level, int strategy,
                         const char *version, int stream_size);
int __wrap_deflate(z_streamp strm, int flush);
int __wrap_pthread_create(pthread_t *th, const pthread_attr_t *attr,
                          void *(*fn)(void *), void *arg);
int __wrap_openat(int dirfd, const char *path, int flags, ...);
int __wrap_linkat(int olddirfd, const char *old, int newdirfd,
                  const char *new_, int flags);
int __wrap_renameat(int olddirfd, const char *old, int newdirfd,
                    const char *new_);
int __wrap_unlinkat(int dirfd, const char *path, int flags);
int __wrap_fsync(int fd);

/* ------------------------------------------------------------ the faults */

const char *const fk_names[FK_COUNT] = {
  "alloc", "write", "writev", "pwrite", "pwritev", "fallocate", "close",
  "fdatasync", "msync", "mmap", "mremap", "deflateInit2_", "deflate",
  "pthread_create", "openat", "linkat", "renameat", "unlinkat", "fsync"
};

typedef struct fault {
  unsigned long calls;     /* calls since fault_reset() */
  unsigned long fail_at;   /* first call that fails (1-based); 0: none */
  unsigned long fail_n;    /* consecutive calls that fail (FOREVER) */
  int err;                 /* the errno (zlib, threads: return code) */
  unsigned long short_at;  /* this call writes only short_len bytes */
  size_t short_len;        /* ... or half its request (HALF) */
  size_t cap;              /* every call writes at most this (0: no cap;
                              HALF: half the request) */
  unsigned long cut_at;    /* after this call succeeds, the file is cut
                              to nothing (copytruncate) */
  unsigned long injected;  /* failures, short_at writes and cuts
                              injected */
} fault;

static fault faults[FK_COUNT];
static pthread_mutex_t fault_mu = PTHREAD_MUTEX_INITIALIZER;
/* Called (outside the lock, in the calling thread) just before a fault
 * is injected: a test snapshots the file there. */
static void (*fault_hook)(enum fk kind);

/* What a wrapper does with one call. */
typedef struct act {
  int fail;                /* fail with err */
  int err;
  size_t limit;            /* write at most this many bytes */
  int cut;                 /* then cut the file to nothing */
} act;

static size_t half(size_t n)
{
  return n > 1 ? n / 2 : n;
}

/* Count a call of kind k asking to write request bytes (0 if not a
 * write) and say what to do with it. */
static act decide(enum fk k, size_t request)
{
  act a = { 0, 0, SIZE_MAX, 0 };
  fault *f = &faults[k];
  void (*hook)(enum fk) = NULL;
  unsigned long n;

  pthread_mutex_lock(&fault_mu);
  n = ++f->calls;
  if (f->fail_at && n >= f->fail_at && n - f->fail_at < f->fail_n) {
    a.fail = 1;
    a.err = f->err;
    f->injected++;
    hook = fault_hook;
  } else if (f->short_at && f->short_at == n) {
    a.limit = f->short_len == HALF ? half(request) : f->short_len;
    f->injected++;
    hook = fault_hook;
  } else if (f->cap) {
    a.limit = f->cap == HALF ? half(request) : f->cap;
  }
  if (!a.fail && f->cut_at == n) {
    a.cut = 1;
    f->injected++;
  }
  pthread_mutex_unlock(&fault_mu);
  if (hook)
    hook(k);
  return a;
}

/* Forget every program and count from zero. */
void fault_reset(void)
{
  pthread_mutex_lock(&fault_mu);
  memset(faults, 0, sizeof faults);
  fault_hook = NULL;
  pthread_mutex_unlock(&fault_mu);
}

/* Calls at..at+n-1 of kind k (counted from the last reset) fail with
 * err. */
void fault_fail(enum fk k, unsigned long at, unsigned long n, int err)
{
  pthread_mutex_lock(&fault_mu);
  faults[k].fail_at = at;
  faults[k].fail_n = n;
  faults[k].err = err;
  pthread_mutex_unlock(&fault_mu);
}

/* Call at of kind k writes only len bytes (HALF: half its request). */
void fault_short(enum fk k, unsigned long at, size_t len)
{
  pthread_mutex_lock(&fault_mu);
  faults[k].short_at = at;
  faults[k].short_len = len;
  pthread_mutex_unlock(&fault_mu);
}

/* Every call of kind k writes at most cap bytes (HALF: half). */
void fault_cap(enum fk k, size_t cap)
{
  pthread_mutex_lock(&fault_mu);
  faults[k].cap = cap;
  pthread_mutex_unlock(&fault_mu);
}

/* After call at of kind k succeeds, its file is cut to nothing. */
void fault_cut(enum fk k, unsigned long at)
{
  pthread_mutex_lock(&fault_mu);
  faults[k].cut_at = at;
  pthread_mutex_unlock(&fault_mu);
}

/* What logrotate's copytruncate does to the file under fd, right after
 * a call that act a says to cut; passes rc through. */
static ssize_t cut_after(act a, int fd, ssize_t rc)
{
  int e = errno;

  if (a.cut && rc >= 0 && ftruncate(fd, 0) != 0) {
    static const char msg[] = "faults: ftruncate failed\n";
    (void)!__real_write(2, msg, sizeof msg - 1);
    abort();
  }
  errno = e;
  return rc;
}

unsigned long fault_calls(enum fk k)
{
  unsigned long n;
  pthread_mutex_lock(&fault_mu);
  n = faults[k].calls;
  pthread_mutex_unlock(&fault_mu);
  return n;
}

unsigned long fault_injected(enum fk k)
{
  unsigned long n;
  pthread_mutex_lock(&fault_mu);
  n = faults[k].injected;
  pthread_mutex_unlock(&fault_mu);
  return n;
}

static void fault_set_hook(void (*hook)(enum fk))
{
  pthread_mutex_lock(&fault_mu);
  fault_hook = hook;
  pthread_mutex_unlock(&fault_mu);
}

/* -------------------------------------------------- the set of live blocks */

/* Every block the allocation wrappers returned and nobody freed yet: an
 * open-addressing hash set with linear probing. */
#define LIVE_BITS 18
#define LIVE_CAP ((size_t)1 << LIVE_BITS)
static void *live_tab[LIVE_CAP];
static size_t live_n;
static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;

static size_t live_slot(const void *p)
{
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 29;
  x *= 0x9e3779b97f4a7c15ull;
  return (size_t)(x >> (64 - LIVE_BITS));
}

static void live_add_locked(void *p)
{
  size_t i = live_slot(p);

  if (live_n >= LIVE_CAP / 4 * 3) {
    static const char msg[] = "faults: too many live blocks\n";
    (void)!__real_write(2, msg, sizeof msg - 1);
    abort();
  }
  while (live_tab[i])
    i = (i + 1) & (LIVE_CAP - 1);
  live_tab[i] = p;
  live_n++;
}

/* Remove p; returns 1 if it was there.  Backward-shift deletion keeps
 * every probe chain unbroken. */
static int live_del_locked(void *p)
{
  size_t i = live_slot(p), j, k;

  while (live_tab[i] != p) {
    if (!live_tab[i])
      return 0;
    i = (i + 1) & (LIVE_CAP - 1);
  }
  live_tab[i] = NULL;
  live_n--;
  for (j = i;;) {
    j = (j + 1) & (LIVE_CAP - 1);
    if (!live_tab[j])
      break;
    k = live_slot(live_tab[j]);
    /* Leave it if its home k lies cyclically in (i, j]. */
    if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
      continue;
    live_tab[i] = live_tab[j];
    live_tab[j] = NULL;
    i = j;
  }
  return 1;
}

size_t live_count(void)
{
  size_t n;
  pthread_mutex_lock(&live_mu);
  n = live_n;
  pthread_mutex_unlock(&live_mu);
  return n;
}

/* ------------------------------------------------------------ wrappers */

void *__wrap_malloc(size_t n)
{
  act a = decide(FK_ALLOC, 0);
  void *p;

  if (a.fail) {
    errno = ENOMEM;
    return NULL;
  }
  if ((p = __real_malloc(n)) != NULL) {
    pthread_mutex_lock(&live_mu);
    live_add_locked(p);
    pthread_mutex_unlock(&live_mu);
  }
  return p;
}

void *__wrap_calloc(size_t k, size_t n)
{
  act a = decide(FK_ALLOC, 0);
  void *p;

  if (a.fail) {
    errno = ENOMEM;
    return NULL;
  }
  if ((p = __real_calloc(k, n)) != NULL) {
    pthread_mutex_lock(&live_mu);
    live_add_locked(p);
    pthread_mutex_unlock(&live_mu);
  }
  return p;
}

void *__wrap_realloc(void *old, size_t n)
{
  act a = decide(FK_ALLOC, 0);
  int had = 0;
  void *p;

  if (a.fail) {
    errno = ENOMEM;
    return NULL;
  }
  /* Out of the set before the real realloc may free it (another thread
   * could be given the same address at once). */
  if (old) {
    pthread_mutex_lock(&live_mu);
    had = live_del_locked(old);
    pthread_mutex_unlock(&live_mu);
  }
  p = __real_realloc(old, n);
  pthread_mutex_lock(&live_mu);
  if (p)
    live_add_locked(p);
  else if (had && n != 0)
    live_add_locked(old);          /* failed: old is still the caller's */
  pthread_mutex_unlock(&live_mu);
  return p;
}

void __wrap_free(void *p)
{
  if (p) {
    pthread_mutex_lock(&live_mu);
    (void)live_del_locked(p);
    pthread_mutex_unlock(&live_mu);
  }
  __real_free(p);
}

/* Copy iov[0..n) into out, cut to limit bytes in all; returns the count
 * of entries. */
static int iov_cut(const struct iovec *iov, int n, size_t limit,
                   struct iovec *out)
{
  int k = 0;

  for (int i = 0; i < n && limit > 0; i++) {
    out[k] = iov[i];
    if (out[k].iov_len > limit)
      out[k].iov_len = limit;
    limit -= out[k].iov_len;
    k++;
  }
  return k;
}

static size_t iov_total(const struct iovec *iov, int n)
{
  size_t t = 0;
  for (int i = 0; i < n; i++)
    t += iov[i].iov_len;
  return t;
}

#define MAX_IOV 1024

ssize_t __wrap_write(int fd, const void *buf, size_t n)
{
  act a = decide(FK_WRITE, n);

  if (a.fail) {
    errno = a.err;
    return -1;
  }
  return cut_after(a, fd, __real_write(fd, buf, n < a.limit ? n : a.limit));
}

ssize_t __wrap_pwrite(int fd, const void *buf, size_t n, off_t off)
{
  act a = decide(FK_PWRITE, n);

  if (a.fail) {
    errno = a.err;
    return -1;
  }
  return cut_after(a, fd,
                   __real_pwrite(fd, buf, n < a.limit ? n : a.limit, off));
}

ssize_t __wrap_writev(int fd, const struct iovec *iov, int n)
{
  size_t total = n > 0 ? iov_total(iov, n) : 0;
  act a = decide(FK_WRITEV, total);
  struct iovec cut[MAX_IOV];

  if (a.fail) {
    errno = a.err;
    return -1;
  }
  if (a.limit < total && n <= MAX_IOV)
    return cut_after(a, fd,
                     __real_writev(fd, cut, iov_cut(iov, n, a.limit, cut)));
  return cut_after(a, fd, __real_writev(fd, iov, n));
}

ssize_t __wrap_pwritev(int fd, const struct iovec *iov, int n, off_t off)
{
  size_t total = n > 0 ? iov_total(iov, n) : 0;
  act a = decide(FK_PWRITEV, total);
  struct iovec cut[MAX_IOV];

  if (a.fail) {
    errno = a.err;
    return -1;
  }
  if (a.limit < total && n <= MAX_IOV)
    return cut_after(a, fd, __real_pwritev(fd, cut,
                                           iov_cut(iov, n, a.limit, cut),
                                           off));
  return cut_after(a, fd, __real_pwritev(fd, iov, n, off));
}

int __wrap_fallocate(int fd, int mode, off_t off, off_t len)
{
  act a = decide(FK_FALLOC, 0);

  if (a.fail) {
    errno = a.err;
    return -1;
  }
  return (int)cut_after(a, fd, __real_fallocate(fd, mode, off, len));
}

int __wrap_posix_fallocate(int fd, off_t off, off_t len)
{
  act a = decide(FK_FALLOC, 0);

  if (a.fail)
    return a.err;                /* posix_fallocate returns the error */
  return __real_posix_fallocate(fd, off, len);
}

int __wrap_close(int fd)
{
  act a = decide(FK_CLOSE, 0);

  if (a.fail) {
    /* Linux frees the descriptor even when close reports an error. */
    (void)__real_close(fd);
    errno = a.err;
    return -1;
  }
  return __real_close(fd);
}

/* No test needs its data on the disk itself, and a real fdatasync per
 * commit would make the program slow: a sync that does not fail succeeds
 * at once, unless this is set. */
static int sync_for_real;

int __wrap_fdatasync(int fd)
{
  act a = decide(FK_FDATASYNC, 0);

  if (a.fail) {
    errno = a.err;
    return -1;
  }
  return sync_for_real ? __real_fdatasync(fd) : 0;
}

int __wrap_msync(void *addr, size_t len, int flags)
{
  act a = decide(FK_MSYNC, 0);

  if (a.fail) {
    errno = a.err;
    return -1;
  }
  return sync_for_real ? __real_msync(addr, len, flags) : 0;
}

void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd,
                  off_t off)
{
  act a = decide(FK_MMAP, 0);

  if (a.fail) {
    errno = a.err;
    return MAP_FAILED;
  }
  return __real_mmap(addr, len, prot, flags, fd, off);
}

void *__wrap_mremap(void *old, size_t old_len, size_t new_len, int flags,
                    ...)
{
  act a = decide(FK_MREMAP, 0);

  if (a.fail) {
    errno = a.err;
    return MAP_FAILED;
  }
#ifdef MREMAP_FIXED
  if (flags & MREMAP_FIXED) {
    va_list ap;
    void *to;
    va_start(ap, flags);
    to = va_arg(ap, void *);
    va_end(ap);
    return __real_mremap(old, old_len, new_len, flags, to);
  }
#endif
  return __real_mremap(old, old_len, new_len, flags);
}

/* zlib's allocations, through the counted and tracked wrappers. */
static voidpf zalloc_wrapped(voidpf opaque, uInt items, uInt size)
{
  (void)opaque;
  return __wrap_calloc(items, size);
}

static void zfree_wrapped(voidpf opaque, voidpf p)
{
  (void)opaque;
  __wrap_free(p);
}

int __wrap_deflateInit2_(z_streamp strm, int level, int method,
                         int window_bits, int mem_level, int strategy,
                         const char *version, int stream_size)
{
  act a = decide(FK_DEFLATEINIT, 0);

  if (a.fail)
    return a.err;
  if (strm && !strm->zalloc && !strm->zfree) {
    strm->zalloc = zalloc_wrapped;
    strm->zfree = zfree_wrapped;
    strm->opaque = Z_NULL;
  }
  return __real_deflateInit2_(strm, level, method, window_bits, mem_level,
                              strategy, version, stream_size);
}

int __wrap_deflate(z_streamp strm, int flush)
{
  act a = decide(FK_DEFLATE, 0);

  if (a.fail)
    return a.err;
  return __real_deflate(strm, flush);
}

int __wrap_pthread_create(pthread_t *th, const pthread_attr_t *attr,
                          void *(*fn)(void *), void *arg)
{
  act a = decide(FK_THREAD, 0);

  if (a.fail)
    return a.err;
  return __real_pthread_create(th, attr, fn, arg);
}

/* Called after each change of a name in a directory (openat with
 * O_CREAT, linkat, renameat, unlinkat) that did not fail: a rotation
 * test checks the files there at every step. */
void (*names_changed)(void);

static void after_name_change(int rc)
{
  if (rc >= 0 && names_changed)
    names_changed();
}

/* Whether open(2) takes a mode argument with these flags. */
static int takes_mode(int flags)
{
#ifdef O_TMPFILE
  if ((flags & O_TMPFILE) == O_TMPFILE)
    return 1;
#endif
  return (flags & O_CREAT) != 0;
}

int __wrap_openat(int dirfd, const char *path, int flags, ...)
{
  act a = decide(FK_OPENAT, 0);
  mode_t mode = 0;
  int fd;

  if (a.fail) {
    errno = a.err;
    return -1;
  }
  /* open(2) reads a mode for O_TMPFILE too: without it the library's
   * unnamed files get mode 000, which only root can read back. */
  if (takes_mode(flags)) {
    va_list ap;
    va_start(ap, flags);
    mode = (mode_t)va_arg(ap, int);
    va_end(ap);
  }
  fd = __real_openat(dirfd, path, flags, mode);
  if (flags & O_CREAT)
    after_name_change(fd);
  return fd;
}

int __wrap_linkat(int olddirfd, const char *old, int newdirfd,
                  const char *new_, int flags)
{
  act a = decide(FK_LINKAT, 0);
  int rc;

  if (a.fail) {
    errno = a.err;
    return -1;
  }
  rc = __real_linkat(olddirfd, old, newdirfd, new_, flags);
  after_name_change(rc);
  return rc;
}

int __wrap_renameat(int olddirfd, const char *old, int newdirfd,
                    const char *new_)
{
  act a = decide(FK_RENAMEAT, 0);
  int rc;

  if (a.fail) {
    errno = a.err;
    return -1;
  }
  rc = __real_renameat(olddirfd, old, newdirfd, new_);
  after_name_change(rc);
  return rc;
}

int __wrap_unlinkat(int dirfd, const char *path, int flags)
{
  act a = decide(FK_UNLINKAT, 0);
  int rc;

  if (a.fail) {
    errno = a.err;
    return -1;
  }
  rc = __real_unlinkat(dirfd, path, flags);
  after_name_change(rc);
  return rc;
}

int __wrap_fsync(int fd)
{
  act a = decide(FK_FSYNC, 0);

  if (a.fail) {
    errno = a.err;
    return -1;
  }
  return __real_fsync(fd);
}

/* -------------------------------------------------------------- context */

char ctx[256];

/* Open descriptors of this process. */
int count_fds(void)
{
  DIR *d = opendir("/proc/self/fd");
  struct dirent *e;
  int n = 0;

  if (!d)
    return -1;
  while ((e = readdir(d)) != NULL)
    if (e->d_name[0] != '.')
      n++;
  closedir(d);
  return n - 1;                     /* the directory's own descriptor */
}

static size_t live_at_start;
static int fds_at_start;
static uint64_t started_ns;

int faults_setup(void **state)
{
  (void)state;
  started_ns = tw_now_ns();
  fault_reset();
  ctx[0] = '\0';
  tu_numbered_ctx = ctx;
  live_at_start = live_count();
  fds_at_start = count_fds();
  return 0;
}

/* Every test must give back every block and descriptor it took. */
int faults_teardown(void **state)
{
  size_t live = live_count();
  int fds = count_fds();

  (void)state;
  fault_reset();
  if (getenv("TW_FAULTS_VERBOSE"))
    print_message("%.3f s\n", (double)(tw_now_ns() - started_ns) / 1e9);
  if (live != live_at_start) {
    fprintf(stderr, "leak: %zu blocks live after the test, %zu before\n",
            live, live_at_start);
    return -1;
  }
  if (fds != fds_at_start) {
    fprintf(stderr, "leak: %d descriptors open after the test, %d before\n",
            fds, fds_at_start);
    return -1;
  }
  return 0;
}

/* --------------------------------------------------------------- events */

/* The pad of event i in a workload: varied, and every 16th record larger
 * than a whole buffer. */
size_t pad_of(int i)
{
  return i % 16 == 7 ? BIG_PAD : (size_t)(i * 37) % 120;
}

/* The events of these tests (numbered.h): by this process, from any
 * thread. */
const tu_family F = { "fault", PNAME, pad_of, 0, -1, 0 };

/* ------------------------------------------------------------------ gzip */

/* Inflate buf as exactly one complete gzip member with nothing after it
 * (fails the test otherwise).  Returns the bytes (free them). */
char *gunzip_exact(const char *buf, size_t len, size_t *outlen)
{
  char why[256];
  char *out = tu_gunzip_why(buf, len, outlen, why, sizeof why);

  if (!out)
    fail_msg("%s: %s", ctx, why);
  return out;
}

/* -------------------------------------------------------------- targets */

#define SINK(x) TW_SINK_##x
#define COMMIT(x) TW_COMMIT_##x
const cfg FILE_IN =
  { "file inline", SINK(FILE), COMMIT(INLINE), PATH, 0, 0 };
const cfg FILE_BG =
  { "file background", SINK(FILE), COMMIT(BACKGROUND), PATH, 0, 0 };
const cfg GZIP_IN =
  { "gzip inline", SINK(GZIP), COMMIT(INLINE), PATH, 0, 0 };
const cfg GZIP_BG =
  { "gzip background", SINK(GZIP), COMMIT(BACKGROUND), PATH, 0, 0 };
const cfg MMAP_IN =
  { "mmap inline", SINK(MMAP), COMMIT(INLINE), PATH, 0, 0 };
const cfg MMAP_BG =
  { "mmap background", SINK(MMAP), COMMIT(BACKGROUND), PATH, 0, 0 };
const cfg FILE_APP =
  { "file O_APPEND", SINK(FILE), COMMIT(INLINE), APPEND, 0, 0 };
const cfg FILE_APP_BG =
  { "file O_APPEND background", SINK(FILE), COMMIT(BACKGROUND), APPEND, 0, 0 };
const cfg FILE_PIPE =
  { "file pipe", SINK(FILE), COMMIT(INLINE), PIPE, 0, 0 };
const cfg GZIP_APP =
  { "gzip O_APPEND", SINK(GZIP), COMMIT(INLINE), APPEND, 0, 0 };
const cfg GZIP_PIPE =
  { "gzip pipe", SINK(GZIP), COMMIT(BACKGROUND), PIPE, 0, 0 };
const cfg FILE_SYNC =
  { "file sync", SINK(FILE), COMMIT(INLINE), PATH, TW_OPT_SYNC, 0 };
const cfg FILE_SYNC_BG =
  { "file sync bg", SINK(FILE), COMMIT(BACKGROUND), PATH, TW_OPT_SYNC, 0 };
const cfg GZIP_SYNC =
  { "gzip sync", SINK(GZIP), COMMIT(BACKGROUND), PATH, TW_OPT_SYNC, 0 };
const cfg MMAP_SYNC =
  { "mmap sync", SINK(MMAP), COMMIT(INLINE), PATH, TW_OPT_SYNC, 0 };
const cfg GZIP_ROTATE =         /* hourly: only its opening counts */
  { "gzip rotate", SINK(GZIP), COMMIT(BACKGROUND), PATH, 0, 3600000000000u };
#undef SINK
#undef COMMIT

tw_options opts_of(const cfg *c)
{
  tw_options o;

  assert_int_equal(tw_options_init(&o), 0);
  o.sink = c->sink;
  o.commit = c->commit;
  o.flags = c->flags;
  o.rotate_interval_ns = c->rotate_ns;
  o.buffer_size = 512;
  o.buffer_count = 2;
  o.mmap_chunk = 4096;
  o.gzip_level = 1;
  o.process_name = PNAME;
  return o;
}

void t_init(target *t, const cfg *c)
{
  int p[2];

  memset(t, 0, sizeof *t);
  t->c = c;
  t->fd = -1;
  t->rd.fd = -1;
  t->path = tu_tmppath(c->sink == TW_SINK_GZIP ? ".json.gz" : ".json");
  if (c->how == PIPE) {
    /* The pipe and its reader exist before any fault is programmed. */
    assert_int_equal(pipe(p), 0);
    t->fd = p[1];
    tu_pipe_reader_start(&t->rd, p[0]);
    t->reading = 1;
  }
}

/* Open the writer as the configuration says.  Returns it (also in t->w),
 * or NULL with *err set. */
tw_writer *t_open(target *t, int *err)
{
  tw_options o = opts_of(t->c);

  *err = 0;
  switch (t->c->how) {
  case APPEND:
    t->fd = open(t->path, O_WRONLY | O_APPEND | O_TRUNC | O_CLOEXEC);
    assert_true(t->fd >= 0);
    t->w = tw_open_fd(t->fd, &o, err);
    break;
  case PIPE:
    t->w = tw_open_fd(t->fd, &o, err);
    break;
  default:
    t->w = tw_open(t->path, &o, err);
    break;
  }
  return t->w;
}

/* After tw_close (or a failed open): close the caller's fd, stop the
 * reader. */
void t_finish(target *t)
{
  if (t->fd >= 0) {
    /* tw_open_fd never closes the caller's fd, even when it fails. */
    EXPECT(fcntl(t->fd, F_GETFD) >= 0);
    close(t->fd);
    t->fd = -1;
  }
  if (t->reading) {
    (void)tu_pipe_reader_join(&t->rd, NULL);
    t->reading = 0;
    close(t->rd.fd);
    t->rd.fd = -1;
  }
}

int t_close(target *t)
{
  int rc = tw_close(t->w);
  t->w = NULL;
  t_finish(t);
  return rc;
}

/* The bytes written (the file, or what came through the pipe). */
char *t_bytes(target *t, size_t *len)
{
  char *b;

  if (t->c->how != PIPE)
    return tu_read_file(t->path, len);
  b = malloc(t->rd.len + 1);
  assert_non_null(b);
  memcpy(b, t->rd.buf, t->rd.len);
  b[t->rd.len] = '\0';
  *len = t->rd.len;
  return b;
}

/* The JSON text of raw output bytes (inflated for gzip). */
char *json_of(const cfg *c, char *raw, size_t len, size_t *outlen)
{
  char *j;

  if (c->sink != TW_SINK_GZIP) {
    *outlen = len;
    return raw;
  }
  j = gunzip_exact(raw, len, outlen);
  free(raw);
  return j;
}

/* 1 if text[0..n) ends with the array form's tail, its last byte the
 * bracket. */
int has_tail(const char *text, size_t n)
{
  size_t tl = strlen(TU_TAIL(0));

  return n >= tl && memcmp(text + n - tl, TU_TAIL(0), tl) == 0;
}

/* The output, strictly parsed (gzip: inflated as one exact member); its
 * text must end with exactly the tail. */
jc_doc *t_load(target *t)
{
  size_t len, n;
  char *raw = t_bytes(t, &len);
  char *json = json_of(t->c, raw, len, &n);
  jc_doc *d;

  EXPECT(has_tail(json, n));
  d = tu_load_mem(json, n);
  free(json);
  return d;
}

void t_cleanup(target *t)
{
  if (t->w)
    (void)tw_close(t->w);
  t->w = NULL;
  t_finish(t);
  free(t->rd.buf);
  t->rd.buf = NULL;
  tu_cleanup(t->path);
  t->path = NULL;
}

/* ------------------------------------------------------------- workload */

/* A call returned rc: the first error sticks, every later call must
 * return it too. */
void note(run *r, int rc, const char *what, int i)
{
  if (r->err) {
    if (rc != r->err)
      fail_msg("%s: %s %d after the error %s returned %s: not sticky", ctx,
               what, i, tw_err_name(r->err), tw_err_name(rc));
  } else {
    r->err = rc;
  }
}

/* Emit NEV events, with a tw_flush every FLUSH_EVERY and at the end, and
 * check that an error, once met, sticks. */
void workload(tw_writer *w, run *r)
{
  memset(r, 0, sizeof *r);
  for (int i = 0; i < NEV; i++) {
    note(r, tu_emit(&F, w, i), "emit", i);
    if (!r->err)
      r->ok = i + 1;
    if ((i + 1) % FLUSH_EVERY == 0 || i + 1 == NEV) {
      note(r, tw_flush(w), "tw_flush", i);
      if (!r->err)
        r->flushed = i + 1;
    }
  }
  EXPECT_RC(tw_errcode(w), r->err);
}

/* Run the workload with no fault; check the output is complete.  Returns
 * the calls of kind k, in all and (*at_open) during tw_open. */
unsigned long count_calls(const cfg *c, enum fk k,
                          unsigned long *at_open)
{
  target t;
  run r;
  unsigned long n;
  jc_doc *d;
  int err;

  snprintf(ctx, sizeof ctx, "%s: counting %s calls", c->name, fk_names[k]);
  t_init(&t, c);
  fault_reset();
  EXPECT(t_open(&t, &err) != NULL);
  if (at_open)
    *at_open = fault_calls(k);
  workload(t.w, &r);
  EXPECT_RC(r.err, 0);
  EXPECT_RC(t_close(&t), 0);
  n = fault_calls(k);
  if (getenv("TW_FAULTS_VERBOSE"))
    print_message("%s: %lu %s calls, %lu of them in tw_open\n", c->name, n,
                  fk_names[k], at_open ? *at_open : 0);
  d = t_load(&t);
  EXPECT(tu_check_prefix(&F, d) == NEV);
  jc_free(d);
  t_cleanup(&t);
  return n;
}

void close_fails_once(const cfg *c, int err, int want)
{
  target t;
  run r;
  jc_doc *d;
  int rc, fds0 = count_fds();

  snprintf(ctx, sizeof ctx, "%s: close(2) fails with %s", c->name,
           tw_err_name(-err));
  t_init(&t, c);
  EXPECT(t_open(&t, &rc) != NULL);
  workload(t.w, &r);
  EXPECT_RC(r.err, 0);
  fault_reset();
  fault_fail(FK_CLOSE, 1, 1, err);
  EXPECT_RC(t_close(&t), want);
  EXPECT(fault_calls(FK_CLOSE) == 1 && fault_injected(FK_CLOSE) == 1);
  fault_reset();
  EXPECT(count_fds() == fds0);
  d = t_load(&t);
  EXPECT(tu_check_prefix(&F, d) == NEV);
  jc_free(d);
  t_cleanup(&t);
}

/* ------------------------------------------------------------ snapshots */

/* The file as it was just before the first injected fault: the last
 * commit, which a failed commit must leave (or put back). */
static const char *snap_path;
char *snap;
size_t snap_len;
static size_t snap_cap;
int snap_taken;

static void snap_hook(enum fk kind)
{
  int fd;
  ssize_t k;

  (void)kind;
  if (snap_taken || !snap_path)
    return;
  snap_taken = 1;
  snap_len = 0;
  fd = open(snap_path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    snap_taken = -1;
    return;
  }
  while ((k = read(fd, snap + snap_len, snap_cap - snap_len)) > 0)
    snap_len += (size_t)k;
  if (k < 0 || snap_len == snap_cap)
    snap_taken = -1;                  /* unreadable, or too big */
  (void)__real_close(fd);
}

void snap_arm(const char *path)
{
  if (!snap) {
    snap_cap = 4u << 20;
    snap = __real_malloc(snap_cap);   /* kept for the whole run */
    assert_non_null(snap);
  }
  snap_path = path;
  snap_taken = 0;
  snap_len = 0;
  fault_set_hook(snap_hook);
}

/* ------------------------------------------------------------ sanity */

/* The wrappers really sit between the library and libc: a run without
 * faults makes the calls they count.  (If this fails, the program was not
 * linked from the library's sources with -Wl,--wrap=...) */
void test_wrappers_see_library(void **state)
{
  unsigned long n;
  (void)state;

  EXPECT(count_calls(&FILE_IN, FK_PWRITEV, &n) > 1 && n == 1);
  EXPECT(count_calls(&FILE_IN, FK_ALLOC, &n) >= 1 && n >= 2);
  EXPECT(count_calls(&GZIP_BG, FK_THREAD, &n) == 1 && n == 1);
  EXPECT(count_calls(&GZIP_BG, FK_DEFLATEINIT, &n) == 1 && n == 1);
  EXPECT(count_calls(&GZIP_IN, FK_DEFLATE, NULL) >= 1);
  EXPECT(count_calls(&MMAP_IN, FK_MMAP, &n) >= 1 && n >= 1);
  EXPECT(count_calls(&MMAP_IN, FK_FALLOC, NULL) >= 2);
  EXPECT(count_calls(&FILE_PIPE, FK_WRITEV, NULL) >= 2);
  EXPECT(count_calls(&FILE_SYNC, FK_FDATASYNC, &n) >= 2 && n == 1);
}

void faults_prefer_tmpfs(void)
{
  /* Some 2000 files are written and removed: on a disk file system the
   * unlinks alone can take seconds, so prefer tmpfs unless TMPDIR says
   * where to go. */
  const char *dir = getenv("TMPDIR");

  if ((!dir || !*dir) && access("/dev/shm", W_OK | X_OK) == 0)
    setenv("TMPDIR", "/dev/shm", 1);
}
