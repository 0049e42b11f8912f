/* test_faults.c -- fault injection: failed allocations, system calls, zlib
 *
 * This program is built from the library's SOURCES (not libtracewriter.la)
 * and linked with -Wl,--wrap=SYM for every allocation function, output
 * system call and zlib entry point the library uses, so the linker sends
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
#include "numbered.h"
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

/* What a fault can be programmed on.  One counter covers all allocation
 * functions, as "the Nth allocation". */
enum fk {
  FK_ALLOC,       /* malloc, calloc, realloc, zlib's allocations */
  FK_WRITE, FK_WRITEV, FK_PWRITE, FK_PWRITEV,
  FK_FALLOC,      /* fallocate and posix_fallocate */
  FK_CLOSE, FK_FDATASYNC, FK_MSYNC, FK_MMAP, FK_MREMAP,
  FK_DEFLATEINIT, FK_DEFLATE,   /* errors are zlib return codes */
  FK_THREAD,      /* pthread_create: errors are returned, not errno */
  FK_OPENAT, FK_LINKAT, FK_RENAMEAT, FK_UNLINKAT, /* rotation's names */
  FK_FSYNC,       /* a directory's, with rotation and sync */
  FK_COUNT
};

static const char *const fk_names[FK_COUNT] = {
  "alloc", "write", "writev", "pwrite", "pwritev", "fallocate", "close",
  "fdatasync", "msync", "mmap", "mremap", "deflateInit2_", "deflate",
  "pthread_create", "openat", "linkat", "renameat", "unlinkat", "fsync"
};

#define FOREVER ((unsigned long)-1)
#define HALF ((size_t)-1)

typedef struct fault {
  unsigned long calls;     /* calls since fault_reset() */
  unsigned long fail_at;   /* first call that fails (1-based); 0: none */
  unsigned long fail_n;    /* consecutive calls that fail (FOREVER) */
  int err;                 /* the errno (zlib, threads: return code) */
  unsigned long short_at;  /* this call writes only short_len bytes */
  size_t short_len;        /* ... or half its request (HALF) */
  size_t cap;              /* every call writes at most this (0: no cap;
                              HALF: half the request) */
  unsigned long injected;  /* failures and short_at writes injected */
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
} act;

static size_t half(size_t n)
{
  return n > 1 ? n / 2 : n;
}

/* Count a call of kind k asking to write request bytes (0 if not a
 * write) and say what to do with it. */
static act decide(enum fk k, size_t request)
{
  act a = { 0, 0, SIZE_MAX };
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
  pthread_mutex_unlock(&fault_mu);
  if (hook)
    hook(k);
  return a;
}

/* Forget every program and count from zero. */
static void fault_reset(void)
{
  pthread_mutex_lock(&fault_mu);
  memset(faults, 0, sizeof faults);
  fault_hook = NULL;
  pthread_mutex_unlock(&fault_mu);
}

/* Calls at..at+n-1 of kind k (counted from the last reset) fail with
 * err. */
static void fault_fail(enum fk k, unsigned long at, unsigned long n, int err)
{
  pthread_mutex_lock(&fault_mu);
  faults[k].fail_at = at;
  faults[k].fail_n = n;
  faults[k].err = err;
  pthread_mutex_unlock(&fault_mu);
}

/* Call at of kind k writes only len bytes (HALF: half its request). */
static void fault_short(enum fk k, unsigned long at, size_t len)
{
  pthread_mutex_lock(&fault_mu);
  faults[k].short_at = at;
  faults[k].short_len = len;
  pthread_mutex_unlock(&fault_mu);
}

/* Every call of kind k writes at most cap bytes (HALF: half). */
static void fault_cap(enum fk k, size_t cap)
{
  pthread_mutex_lock(&fault_mu);
  faults[k].cap = cap;
  pthread_mutex_unlock(&fault_mu);
}

static unsigned long fault_calls(enum fk k)
{
  unsigned long n;
  pthread_mutex_lock(&fault_mu);
  n = faults[k].calls;
  pthread_mutex_unlock(&fault_mu);
  return n;
}

static unsigned long fault_injected(enum fk k)
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
    static const char msg[] = "test_faults: too many live blocks\n";
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

static size_t live_count(void)
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
  return __real_write(fd, buf, n < a.limit ? n : a.limit);
}

ssize_t __wrap_pwrite(int fd, const void *buf, size_t n, off_t off)
{
  act a = decide(FK_PWRITE, n);

  if (a.fail) {
    errno = a.err;
    return -1;
  }
  return __real_pwrite(fd, buf, n < a.limit ? n : a.limit, off);
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
    return __real_writev(fd, cut, iov_cut(iov, n, a.limit, cut));
  return __real_writev(fd, iov, n);
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
    return __real_pwritev(fd, cut, iov_cut(iov, n, a.limit, cut), off);
  return __real_pwritev(fd, iov, n, off);
}

int __wrap_fallocate(int fd, int mode, off_t off, off_t len)
{
  act a = decide(FK_FALLOC, 0);

  if (a.fail) {
    errno = a.err;
    return -1;
  }
  return __real_fallocate(fd, mode, off, len);
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
static void (*names_changed)(void);

static void after_name_change(int rc)
{
  if (rc >= 0 && names_changed)
    names_changed();
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
  if (flags & O_CREAT) {
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

/* What the test is doing, for failure messages inside loops. */
static char ctx[256];

#define EXPECT(cond)                                                      \
  do {                                                                    \
    if (!(cond))                                                          \
      fail_msg("%s: expected %s (line %d)", ctx, #cond, __LINE__);        \
  } while (0)

#define EXPECT_RC(got, want)                                              \
  do {                                                                    \
    long long g_ = (long long)(got), w_ = (long long)(want);              \
    if (g_ != w_)                                                         \
      fail_msg("%s: %s is %lld (%s), expected %lld (%s) (line %d)", ctx,  \
               #got, g_, tw_err_name((int)g_), w_, tw_err_name((int)w_),  \
               __LINE__);                                                 \
  } while (0)

/* Open descriptors of this process. */
static int count_fds(void)
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

static int setup(void **state)
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
static int teardown(void **state)
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

#define PNAME "faults-test"
#define NEV 72             /* events of a workload */
#define FLUSH_EVERY 9      /* a workload's tw_flush period */
#define BIG_PAD 600        /* larger than a 512-byte buffer */

/* The pad of event i in a workload: varied, and every 16th record larger
 * than a whole buffer. */
static size_t pad_of(int i)
{
  return i % 16 == 7 ? BIG_PAD : (size_t)(i * 37) % 120;
}

/* The events of these tests (numbered.h): by this process, from any
 * thread. */
static const tu_family F = { "fault", PNAME, pad_of, 0, -1, 0 };

/* ------------------------------------------------------------------ gzip */

/* Inflate buf as exactly one complete gzip member with nothing after it
 * (fails the test otherwise).  Returns the bytes (free them). */
static char *gunzip_exact(const char *buf, size_t len, size_t *outlen)
{
  char why[256];
  char *out = tu_gunzip_why(buf, len, outlen, why, sizeof why);

  if (!out)
    fail_msg("%s: %s", ctx, why);
  return out;
}

/* -------------------------------------------------------------- targets */

/* How a test reaches the output. */
enum how {
  PATH,      /* tw_open(path): the writer owns the fd */
  APPEND,    /* tw_open_fd on the file opened with O_APPEND: streams */
  PIPE       /* tw_open_fd on a pipe, read by a thread: streams */
};

typedef struct cfg {
  const char *name;
  int sink;                /* TW_SINK_FILE, _GZIP or _MMAP */
  int commit;              /* TW_COMMIT_INLINE or _BACKGROUND */
  int how;                 /* enum how */
  unsigned flags;          /* TW_OPT_* */
  uint64_t rotate_ns;      /* rotate_interval_ns */
} cfg;

#define SINK(x) TW_SINK_##x
#define COMMIT(x) TW_COMMIT_##x
static const cfg FILE_IN =
  { "file inline", SINK(FILE), COMMIT(INLINE), PATH, 0, 0 };
static const cfg FILE_BG =
  { "file background", SINK(FILE), COMMIT(BACKGROUND), PATH, 0, 0 };
static const cfg GZIP_IN =
  { "gzip inline", SINK(GZIP), COMMIT(INLINE), PATH, 0, 0 };
static const cfg GZIP_BG =
  { "gzip background", SINK(GZIP), COMMIT(BACKGROUND), PATH, 0, 0 };
static const cfg MMAP_IN =
  { "mmap inline", SINK(MMAP), COMMIT(INLINE), PATH, 0, 0 };
static const cfg MMAP_BG =
  { "mmap background", SINK(MMAP), COMMIT(BACKGROUND), PATH, 0, 0 };
static const cfg FILE_APP =
  { "file O_APPEND", SINK(FILE), COMMIT(INLINE), APPEND, 0, 0 };
static const cfg FILE_APP_BG =
  { "file O_APPEND background", SINK(FILE), COMMIT(BACKGROUND), APPEND, 0, 0 };
static const cfg FILE_PIPE =
  { "file pipe", SINK(FILE), COMMIT(INLINE), PIPE, 0, 0 };
static const cfg GZIP_APP =
  { "gzip O_APPEND", SINK(GZIP), COMMIT(INLINE), APPEND, 0, 0 };
static const cfg GZIP_PIPE =
  { "gzip pipe", SINK(GZIP), COMMIT(BACKGROUND), PIPE, 0, 0 };
static const cfg FILE_SYNC =
  { "file sync", SINK(FILE), COMMIT(INLINE), PATH, TW_OPT_SYNC, 0 };
static const cfg FILE_SYNC_BG =
  { "file sync bg", SINK(FILE), COMMIT(BACKGROUND), PATH, TW_OPT_SYNC, 0 };
static const cfg GZIP_SYNC =
  { "gzip sync", SINK(GZIP), COMMIT(BACKGROUND), PATH, TW_OPT_SYNC, 0 };
static const cfg MMAP_SYNC =
  { "mmap sync", SINK(MMAP), COMMIT(INLINE), PATH, TW_OPT_SYNC, 0 };
static const cfg GZIP_ROTATE =         /* hourly: only its opening counts */
  { "gzip rotate", SINK(GZIP), COMMIT(BACKGROUND), PATH, 0, 3600000000000u };
#undef SINK
#undef COMMIT

static tw_options opts_of(const cfg *c)
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

typedef struct target {
  const cfg *c;
  char *path;              /* the file (PATH, APPEND) */
  int fd;                  /* given to tw_open_fd (APPEND, PIPE), or -1 */
  int reading;             /* PIPE: the reader thread runs */
  tu_pipe_reader rd;
  tw_writer *w;
} target;

static void t_init(target *t, const cfg *c)
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
static tw_writer *t_open(target *t, int *err)
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
static void t_finish(target *t)
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

static int t_close(target *t)
{
  int rc = tw_close(t->w);
  t->w = NULL;
  t_finish(t);
  return rc;
}

/* The bytes written (the file, or what came through the pipe). */
static char *t_bytes(target *t, size_t *len)
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
static char *json_of(const cfg *c, char *raw, size_t len, size_t *outlen)
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
static int has_tail(const char *text, size_t n)
{
  size_t tl = strlen(TU_TAIL(0));

  return n >= tl && memcmp(text + n - tl, TU_TAIL(0), tl) == 0;
}

/* The output, strictly parsed (gzip: inflated as one exact member); its
 * text must end with exactly the tail. */
static jc_doc *t_load(target *t)
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

static void t_cleanup(target *t)
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

typedef struct run {
  int ok;                  /* emits that returned 0 before any error */
  int err;                 /* the first error any call returned */
  int flushed;             /* events before the last successful tw_flush */
} run;

/* A call returned rc: the first error sticks, every later call must
 * return it too. */
static void note(run *r, int rc, const char *what, int i)
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
static void workload(tw_writer *w, run *r)
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
static unsigned long count_calls(const cfg *c, enum fk k,
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

/* ------------------------------------------------------------ snapshots */

/* The file as it was just before the first injected fault: the last
 * commit, which a failed commit must leave (or put back). */
static const char *snap_path;
static char *snap;
static size_t snap_len, snap_cap;
static int snap_taken;

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

static void snap_arm(const char *path)
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

/* ---------------------------------------------- failed tw_open, in turn */

/* For each call of kind k that a successful tw_open makes, in turn: make
 * it fail with err (once, or from there on if persistent) and check that
 * tw_open returns NULL with want, frees every block it allocated, closes
 * what it opened, and leaves the file empty or a valid trace holding only
 * the first record.  Returns the number of calls tried. */
static unsigned long open_fail_each(const cfg *c, enum fk k, int err,
                                    int want, int persistent)
{
  unsigned long n_open = 0, n;

  /* (This first, successful run also warms up one-time initialisations
   * before blocks are counted.) */
  (void)count_calls(c, k, &n_open);
  for (n = 1; n <= n_open; n++) {
    target t;
    size_t live0, len;
    int fds0, rc;
    char *raw, bad[160] = "";

    snprintf(ctx, sizeof ctx, "%s: %s call %lu of %lu at tw_open fails "
             "with %s%s", c->name, fk_names[k], n, n_open,
             k == FK_DEFLATEINIT || k == FK_DEFLATE ? zError(err)
                                                    : strerror(err),
             persistent ? " (and every later one)" : "");
    live0 = live_count();
    fds0 = count_fds();
    t_init(&t, c);
    fault_reset();
    fault_fail(k, n, persistent ? FOREVER : 1, err);
    EXPECT(t_open(&t, &rc) == NULL);
    EXPECT_RC(rc, want);
    EXPECT(fault_injected(k) >= 1);
    fault_reset();
    t_finish(&t);
    /* What is left of the file: nothing, or the head and first record. */
    raw = t_bytes(&t, &len);
    if (len > 0) {
      size_t jn;
      char *json = json_of(c, raw, len, &jn);
      char why[96];
      jc_doc *d = tu_parse_trace(json, jn, why, sizeof why);
      if (d) {
        EXPECT(tu_check_prefix(&F, d) == 0);
        jc_free(d);
      } else {
        size_t bl = 0;
        bl += (size_t)snprintf(bad, sizeof bad, "\"");
        for (size_t i = 0; i < jn && bl + 8 < sizeof bad / 2; i++)
          bl += (size_t)snprintf(bad + bl, sizeof bad - bl,
                                 json[i] == '\n' ? "\\n" : "%c", json[i]);
        snprintf(bad + bl, sizeof bad - bl, "\" (%zu bytes; %s)", jn, why);
      }
      free(json);
    } else {
      free(raw);
    }
    t_cleanup(&t);
    if (bad[0])
      fail_msg("%s: tw_open failed and left a file that is neither empty "
               "nor a valid trace: %s", ctx, bad);
    if (live_count() != live0)
      fail_msg("%s: %zu blocks leaked", ctx, live_count() - live0);
    EXPECT(count_fds() == fds0);
  }
  return n_open;
}

/* Every allocation of tw_open, for every sink and commit mode. */
static void test_open_alloc_each(void **state)
{
  static const cfg *const cs[] = {
    &FILE_IN, &FILE_BG, &GZIP_IN, &GZIP_BG, &MMAP_IN, &MMAP_BG,
    &FILE_APP, &GZIP_PIPE, &FILE_SYNC, &GZIP_ROTATE
  };
  (void)state;

  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
    unsigned long n = open_fail_each(cs[i], FK_ALLOC, ENOMEM, -ENOMEM, 0);
    EXPECT(n >= 1);
    /* gzip: zlib's own allocations are counted too. */
    if (cs[i]->sink == TW_SINK_GZIP)
      EXPECT(n >= 5);
    (void)open_fail_each(cs[i], FK_ALLOC, ENOMEM, -ENOMEM, 1);
  }
}

/* The committer thread cannot start. */
static void test_open_thread_fails(void **state)
{
  (void)state;
  EXPECT(open_fail_each(&FILE_BG, FK_THREAD, EAGAIN, -EAGAIN, 0) == 1);
  EXPECT(open_fail_each(&GZIP_BG, FK_THREAD, EAGAIN, -EAGAIN, 0) == 1);
}

/* zlib's deflateInit2 fails: ENOMEM for Z_MEM_ERROR, TW_EZLIB else. */
static void test_open_deflateinit_fails(void **state)
{
  (void)state;
  EXPECT(open_fail_each(&GZIP_IN, FK_DEFLATEINIT, Z_MEM_ERROR, -ENOMEM,
                        0) == 1);
  EXPECT(open_fail_each(&GZIP_BG, FK_DEFLATEINIT, Z_STREAM_ERROR, TW_EZLIB,
                        0) == 1);
  EXPECT(open_fail_each(&GZIP_PIPE, FK_DEFLATEINIT, Z_VERSION_ERROR,
                        TW_EZLIB, 0) == 1);
}

/* The mmap sink cannot map the file. */
static void test_open_mmap_fails(void **state)
{
  (void)state;
  EXPECT(open_fail_each(&MMAP_IN, FK_MMAP, ENOMEM, -ENOMEM, 0) >= 1);
}

/* The first commit (head and first record) cannot be written: tw_open
 * fails with the error, and the file is left empty (or valid) -- never a
 * bare tail.  Every output syscall of tw_open in turn. */
static void test_open_write_fails(void **state)
{
  (void)state;
  EXPECT(open_fail_each(&GZIP_IN, FK_PWRITEV, EIO, -EIO, 0) >= 1);
  EXPECT(open_fail_each(&GZIP_BG, FK_DEFLATE, Z_STREAM_ERROR, TW_EZLIB,
                        0) >= 1);
  EXPECT(open_fail_each(&MMAP_IN, FK_PWRITEV, EIO, -EIO, 0) >= 1);
  EXPECT(open_fail_each(&MMAP_IN, FK_FALLOC, ENOSPC, -ENOSPC, 0) >= 1);
  EXPECT(open_fail_each(&FILE_APP, FK_WRITEV, EIO, -EIO, 0) >= 1);
  EXPECT(open_fail_each(&GZIP_PIPE, FK_WRITEV, EPIPE, -EPIPE, 0) >= 1);
  EXPECT(open_fail_each(&FILE_SYNC, FK_FDATASYNC, EIO, -EIO, 0) >= 1);
}

/* The same for the in-place file sink (kept apart: see the report). */
static void test_open_write_fails_file(void **state)
{
  (void)state;
  EXPECT(open_fail_each(&FILE_IN, FK_PWRITEV, EIO, -EIO, 0) >= 1);
  EXPECT(open_fail_each(&FILE_BG, FK_PWRITEV, ENOSPC, -ENOSPC, 0) >= 1);
}

/* ------------------------------------------------ big event, no memory */

/* The pads of the big-event test: two records above 4 KiB. */
static const size_t big_pads[5] = { 10, 6000, 20, 12000, 30 };

typedef struct big_arg {
  tw_writer *w;
  int rc[11];              /* what each step returned */
  unsigned long injected;  /* allocation faults injected by step 1 */
} big_arg;

/* Runs in a new thread, whose scratch buffer starts empty (cmocka's
 * assertions stay on the test's thread: this only records). */
static void *big_main(void *arg)
{
  big_arg *b = arg;
  tw_writer *w = b->w;

  b->rc[0] = tu_emit_pad(&F, w, 0, big_pads[0]);
  fault_fail(FK_ALLOC, fault_calls(FK_ALLOC) + 1, 1, ENOMEM);
  b->rc[1] = tu_emit_pad(&F, w, 1, big_pads[1]);         /* -ENOMEM */
  b->injected = fault_injected(FK_ALLOC);
  b->rc[2] = tw_errcode(w);                       /* not sticky */
  b->rc[3] = tu_emit_pad(&F, w, 1, big_pads[1]);         /* again: works */
  b->rc[4] = tu_emit_pad(&F, w, 2, big_pads[2]);
  b->rc[5] = tw_flush(w);
  fault_reset();
  fault_fail(FK_ALLOC, 1, FOREVER, ENOMEM);
  b->rc[6] = tu_emit_pad(&F, w, 3, big_pads[3]);         /* must grow: -ENOMEM */
  b->rc[7] = tu_emit_pad(&F, w, 3, big_pads[3]);
  b->rc[8] = tw_errcode(w);
  fault_reset();
  b->rc[9] = tu_emit_pad(&F, w, 3, big_pads[3]);
  b->rc[10] = tu_emit_pad(&F, w, 4, big_pads[4]);
  return NULL;
}

/* A second thread after big_main's: one small event. */
enum { SMALL_PAD = 40 };

static void *small_main(void *arg)
{
  big_arg *b = arg;

  b->rc[0] = tu_emit_pad(&F, b->w, 5, SMALL_PAD);
  return NULL;
}

/* A record above 4 KiB is formatted into the thread's scratch buffer; its
 * allocation fails: -ENOMEM, not sticky, the same event again works, and
 * so does a still bigger one after a second failure.  The file holds
 * every event that returned 0. */
static void test_emit_big_alloc_fails(void **state)
{
  static const cfg *const cs[] = { &FILE_IN, &FILE_BG, &GZIP_BG, &MMAP_IN };
  static const int want[11] = { 0, -ENOMEM, 0, 0, 0, 0, -ENOMEM, -ENOMEM,
                                0, 0, 0 };
  (void)state;

  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
    big_arg b, b2;
    target t;
    pthread_t th;
    size_t live1;
    tw_stats st;
    jc_doc *d;
    jc_val e;
    size_t live0;
    int err;

    snprintf(ctx, sizeof ctx, "%s: big event, scratch allocation fails",
             cs[i]->name);
    t_init(&t, cs[i]);
    EXPECT(t_open(&t, &err) != NULL);
    memset(&b, 0, sizeof b);
    b.w = t.w;
    live0 = live_count();
    assert_int_equal(pthread_create(&th, NULL, big_main, &b), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    fault_reset();
    /* The thread's scratch buffer is freed when it exits; its stage is
     * freed by the next commit, which writes what it staged.  The writer
     * keeps at most the thread's slot (a block and its buffer) for the
     * next thread, which then leaves nothing more behind. */
    EXPECT_RC(tw_flush(t.w), 0);
    live1 = live_count();
    EXPECT(live1 >= live0 && live1 - live0 <= 2);
    memset(&b2, 0, sizeof b2);
    b2.w = t.w;
    assert_int_equal(pthread_create(&th, NULL, small_main, &b2), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    EXPECT_RC(b2.rc[0], 0);
    EXPECT_RC(tw_flush(t.w), 0);
    EXPECT(live_count() == live1);
    for (int k = 0; k < 11; k++)
      if (b.rc[k] != want[k])
        fail_msg("%s: step %d returned %s, expected %s", ctx, k,
                 tw_err_name(b.rc[k]), tw_err_name(want[k]));
    EXPECT(b.injected == 1);
    EXPECT_RC(tw_get_stats(t.w, &st), 0);
    EXPECT(st.rejected == 3 && st.error == 0);
    EXPECT_RC(t_close(&t), 0);
    d = t_load(&t);
    e = jc_first(d, tu_events(d));
    tu_check_pname(&F, d, e);
    for (int k = 0; k < 5; k++) {
      e = jc_next(d, e);
      EXPECT(e >= 0);
      tu_check_event_pad(&F, d, e, k, big_pads[k]);
    }
    e = jc_next(d, e);
    EXPECT(e >= 0);
    tu_check_event_pad(&F, d, e, 5, SMALL_PAD);
    EXPECT(jc_next(d, e) < 0);
    jc_free(d);
    t_cleanup(&t);
  }
}

/* ------------------------------------------------------- EINTR, retried */

/* Each call of kind k, in turn, returns EINTR once: retried, no error, a
 * complete file. */
static void eintr_each(const cfg *c, enum fk k)
{
  unsigned long total = count_calls(c, k, NULL);

  EXPECT(total >= 1);
  for (unsigned long n = 1; n <= total; n++) {
    target t;
    run r;
    jc_doc *d;
    int err;

    snprintf(ctx, sizeof ctx, "%s: %s call %lu of %lu returns EINTR once",
             c->name, fk_names[k], n, total);
    t_init(&t, c);
    fault_reset();
    fault_fail(k, n, 1, EINTR);
    EXPECT(t_open(&t, &err) != NULL);
    workload(t.w, &r);
    EXPECT_RC(r.err, 0);
    EXPECT_RC(t_close(&t), 0);
    EXPECT(fault_injected(k) == 1);
    d = t_load(&t);
    EXPECT(tu_check_prefix(&F, d) == NEV);
    jc_free(d);
    t_cleanup(&t);
  }
}

static void test_eintr_file(void **state)
{
  (void)state;
  eintr_each(&FILE_IN, FK_PWRITEV);
  eintr_each(&FILE_BG, FK_PWRITEV);
  eintr_each(&FILE_APP, FK_WRITEV);
  eintr_each(&FILE_PIPE, FK_WRITEV);
}

static void test_eintr_gzip(void **state)
{
  (void)state;
  eintr_each(&GZIP_IN, FK_PWRITEV);
  eintr_each(&GZIP_BG, FK_PWRITEV);
  eintr_each(&GZIP_APP, FK_WRITEV);
  eintr_each(&GZIP_PIPE, FK_WRITEV);
}

static void test_eintr_mmap(void **state)
{
  (void)state;
  eintr_each(&MMAP_IN, FK_PWRITEV);
  eintr_each(&MMAP_IN, FK_FALLOC);
}

/* close(2) interrupted: the descriptor is gone on Linux, not an error. */
static void test_eintr_close(void **state)
{
  static const cfg *const cs[] = { &FILE_IN, &GZIP_BG, &MMAP_IN };
  (void)state;

  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
    target t;
    run r;
    jc_doc *d;
    int err, fds0 = count_fds();

    snprintf(ctx, sizeof ctx, "%s: close returns EINTR", cs[i]->name);
    t_init(&t, cs[i]);
    EXPECT(t_open(&t, &err) != NULL);
    workload(t.w, &r);
    fault_reset();
    fault_fail(FK_CLOSE, 1, 1, EINTR);
    EXPECT_RC(t_close(&t), 0);
    EXPECT(fault_injected(FK_CLOSE) == 1);
    EXPECT(count_fds() == fds0);
    d = t_load(&t);
    EXPECT(tu_check_prefix(&F, d) == NEV);
    jc_free(d);
    t_cleanup(&t);
  }
}

/* ------------------------------------------------------- short writes */

/* Every call of kind k writes at most cap bytes (HALF: half of what it
 * is asked): all retried, the output complete. */
static void short_writes(const cfg *c, enum fk k, size_t cap)
{
  target t;
  run r;
  jc_doc *d;
  int err;

  if (cap == HALF)
    snprintf(ctx, sizeof ctx, "%s: every %s writes half", c->name,
             fk_names[k]);
  else
    snprintf(ctx, sizeof ctx, "%s: every %s writes at most %zu bytes",
             c->name, fk_names[k], cap);
  t_init(&t, c);
  fault_reset();
  fault_cap(k, cap);
  EXPECT(t_open(&t, &err) != NULL);
  workload(t.w, &r);
  EXPECT_RC(r.err, 0);
  EXPECT_RC(t_close(&t), 0);
  EXPECT(fault_calls(k) > 0);
  fault_reset();
  d = t_load(&t);
  EXPECT(tu_check_prefix(&F, d) == NEV);
  jc_free(d);
  t_cleanup(&t);
}

static void test_short_writes(void **state)
{
  static const struct { const cfg *c; enum fk k; } cs[] = {
    { &FILE_IN, FK_PWRITEV }, { &FILE_BG, FK_PWRITEV },
    { &GZIP_IN, FK_PWRITEV }, { &GZIP_BG, FK_PWRITEV },
    { &MMAP_IN, FK_PWRITEV },
    { &FILE_APP, FK_WRITEV }, { &FILE_APP_BG, FK_WRITEV },
    { &FILE_PIPE, FK_WRITEV },
    { &GZIP_APP, FK_WRITEV }, { &GZIP_PIPE, FK_WRITEV },
  };
  (void)state;

  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
    short_writes(cs[i].c, cs[i].k, 7);
    short_writes(cs[i].c, cs[i].k, HALF);
  }
}

/* ------------------------------------------- a failed commit, in turn */

/* For each call of kind k after tw_open, in turn: fail it with err (if
 * cut_first, a write kind: it writes half its request, and the retry
 * fails).  The error is sticky (every later emit and flush, tw_errcode,
 * tw_close return want), and the file holds exactly the last commit
 * before it, strictly valid: byte for byte what it held before the failed
 * call (the sink puts the old tail back over what the cut write left), or
 * for mmap every event whose emit returned 0. */
static unsigned long fail_each(const cfg *c, enum fk k, int err, int want,
                               int cut_first)
{
  unsigned long at_open = 0, total = count_calls(c, k, &at_open);

  for (unsigned long n = at_open + 1; n <= total; n++) {
    target t;
    run r;
    jc_doc *d;
    int rc, m, e;

    snprintf(ctx, sizeof ctx, "%s: %s call %lu of %lu %sfails with %s",
             c->name, fk_names[k], n, total,
             cut_first ? "writes half, the retry " : "",
             k == FK_DEFLATE ? zError(err) : strerror(err));
    t_init(&t, c);
    fault_reset();
    snap_arm(t.path);
    if (cut_first) {
      fault_short(k, n, HALF);
      fault_fail(k, n + 1, 1, err);
    } else {
      fault_fail(k, n, 1, err);
    }
    EXPECT(t_open(&t, &rc) != NULL);
    workload(t.w, &r);
    if (r.err) {
      /* Already now, before tw_close (a process killed here keeps this
       * file): the last commit, strictly valid. */
      d = t_load(&t);
      m = tu_check_prefix(&F, d);
      jc_free(d);
      if (m < r.flushed || m > r.ok + (k == FK_FDATASYNC || k == FK_MSYNC))
        fail_msg("%s: before tw_close, %d events in the file; %d were "
                 "flushed and %d emitted before the error", ctx, m,
                 r.flushed, r.ok);
      if (c->sink == TW_SINK_MMAP)
        EXPECT(m == r.ok);
    }
    rc = t_close(&t);
    EXPECT(fault_injected(k) == 1u + (cut_first != 0));
    fault_reset();
    /* The error: met by an emit or flush (then tw_close returns it too),
     * or by tw_close's own commit. */
    e = r.err ? r.err : rc;
    EXPECT_RC(e, want);
    EXPECT_RC(rc, e);
    d = t_load(&t);
    m = tu_check_prefix(&F, d);
    jc_free(d);
    /* A failed sync comes after the write: the record of the emit that
     * met it may be in the file (one larger than a buffer is written by
     * that emit itself). */
    if (m < r.flushed || m > r.ok + (k == FK_FDATASYNC || k == FK_MSYNC))
      fail_msg("%s: %d events in the file; %d were flushed and %d emitted "
               "before the error", ctx, m, r.flushed, r.ok);
    if (c->sink == TW_SINK_MMAP) {
      /* Every record is committed as it is copied. */
      EXPECT(m == r.ok);
    } else if (k != FK_FDATASYNC && k != FK_MSYNC) {
      size_t len;
      char *raw = t_bytes(&t, &len);
      EXPECT(snap_taken == 1);
      if (len != snap_len || memcmp(raw, snap, len) != 0) {
        free(raw);
        fail_msg("%s: the file (%zu bytes) is not the last commit (%zu "
                 "bytes)", ctx, len, snap_len);
      }
      free(raw);
    }
    t_cleanup(&t);
  }
  return total - at_open;
}

static void test_eio_file(void **state)
{
  (void)state;
  EXPECT(fail_each(&FILE_IN, FK_PWRITEV, EIO, -EIO, 0) > 0);
  EXPECT(fail_each(&FILE_BG, FK_PWRITEV, EIO, -EIO, 0) > 0);
  EXPECT(fail_each(&FILE_IN, FK_PWRITEV, EIO, -EIO, 1) > 0);
  EXPECT(fail_each(&FILE_BG, FK_PWRITEV, ENOSPC, -ENOSPC, 1) > 0);
}

static void test_eio_gzip(void **state)
{
  (void)state;
  EXPECT(fail_each(&GZIP_IN, FK_PWRITEV, EIO, -EIO, 0) > 0);
  EXPECT(fail_each(&GZIP_BG, FK_PWRITEV, EIO, -EIO, 0) > 0);
  EXPECT(fail_each(&GZIP_IN, FK_PWRITEV, ENOSPC, -ENOSPC, 1) > 0);
  EXPECT(fail_each(&GZIP_BG, FK_PWRITEV, EIO, -EIO, 1) > 0);
}

static void test_eio_mmap(void **state)
{
  (void)state;
  EXPECT(fail_each(&MMAP_IN, FK_PWRITEV, EIO, -EIO, 0) > 0);
  EXPECT(fail_each(&MMAP_IN, FK_PWRITEV, ENOSPC, -ENOSPC, 1) > 0);
}

/* The mmap sink grows the file: a full disk at fallocate is a sticky
 * -ENOSPC and a valid file, not a SIGBUS. */
static void test_enospc_mmap(void **state)
{
  (void)state;
  EXPECT(fail_each(&MMAP_IN, FK_FALLOC, ENOSPC, -ENOSPC, 0) > 0);
  /* (A sink that grows its mapping without mremap makes no such call.) */
  (void)fail_each(&MMAP_IN, FK_MREMAP, ENOMEM, -ENOMEM, 0);
}

/* The file system cannot reserve blocks (EOPNOTSUPP): the growth still
 * works, the pwrite allocates them. */
static void test_fallocate_unsupported_mmap(void **state)
{
  target t;
  run r;
  jc_doc *d;
  int err;
  (void)state;

  snprintf(ctx, sizeof ctx, "mmap: fallocate unsupported");
  t_init(&t, &MMAP_IN);
  fault_fail(FK_FALLOC, 1, FOREVER, EOPNOTSUPP);
  EXPECT(t_open(&t, &err) != NULL);
  workload(t.w, &r);
  EXPECT_RC(r.err, 0);
  EXPECT_RC(t_close(&t), 0);
  EXPECT(fault_injected(FK_FALLOC) >= 2);
  d = t_load(&t);
  EXPECT(tu_check_prefix(&F, d) == NEV);
  jc_free(d);
  t_cleanup(&t);
}

/* fdatasync (the sync option) fails: sticky; the data was written, so the
 * file is valid and holds at least every flushed event. */
static void test_fdatasync_fails(void **state)
{
  (void)state;
  EXPECT(fail_each(&FILE_SYNC, FK_FDATASYNC, EIO, -EIO, 0) > 0);
  EXPECT(fail_each(&FILE_SYNC_BG, FK_FDATASYNC, EIO, -EIO, 0) > 0);
  EXPECT(fail_each(&GZIP_SYNC, FK_FDATASYNC, EIO, -EIO, 0) > 0);
  EXPECT(fail_each(&MMAP_SYNC, FK_MSYNC, EIO, -EIO, 0) > 0);
  EXPECT(fail_each(&MMAP_SYNC, FK_FDATASYNC, EIO, -EIO, 0) > 0);
}

/* deflate fails in a commit: sticky TW_EZLIB, the file keeps the last
 * commit. */
static void test_deflate_fails(void **state)
{
  (void)state;
  EXPECT(fail_each(&GZIP_IN, FK_DEFLATE, Z_STREAM_ERROR, TW_EZLIB, 0) > 0);
  EXPECT(fail_each(&GZIP_BG, FK_DEFLATE, Z_STREAM_ERROR, TW_EZLIB, 0) > 0);
}

/* ------------------------------------------ the restore write fails too */

/* A commit's pwritev fails and so does the one that puts the old tail
 * back (nothing written by either): the file is still the last commit. */
static void restore_fails_nothing_written(const cfg *c)
{
  unsigned long at_open = 0, total = count_calls(c, FK_PWRITEV, &at_open);

  for (unsigned long n = at_open + 1; n <= total; n++) {
    target t;
    run r;
    jc_doc *d;
    size_t len;
    char *raw;
    int rc, m;

    snprintf(ctx, sizeof ctx, "%s: pwritev calls %lu and %lu of %lu fail",
             c->name, n, n + 1, total);
    t_init(&t, c);
    fault_reset();
    snap_arm(t.path);
    fault_fail(FK_PWRITEV, n, 2, EIO);
    EXPECT(t_open(&t, &rc) != NULL);
    workload(t.w, &r);
    rc = t_close(&t);
    EXPECT(fault_injected(FK_PWRITEV) == 2);
    fault_reset();
    EXPECT_RC(r.err ? r.err : rc, -EIO);
    EXPECT_RC(rc, -EIO);
    d = t_load(&t);
    m = tu_check_prefix(&F, d);
    jc_free(d);
    EXPECT(m >= r.flushed && m <= r.ok);
    raw = t_bytes(&t, &len);
    EXPECT(snap_taken == 1 && len == snap_len && memcmp(raw, snap, len) == 0);
    free(raw);
    t_cleanup(&t);
  }
}

/* The "repair" view of a cut trace: the text up to the end of the last
 * complete record line, its trailing comma dropped, and the tail.  Parsed
 * strictly.  (repair itself is not linked: this is its idea.) */
static jc_doc *repaired(const char *buf, size_t len)
{
  for (size_t end = len; end > 0; end--) {
    size_t n;
    char *fixed;
    jc_doc *d;
    char err[128];

    /* A record line ends at a newline (or the end of the data). */
    if (end < len && buf[end] != '\n')
      continue;
    n = end;
    if (n > 0 && buf[n - 1] == ',')
      n--;
    if (n == 0 || buf[n - 1] != '}')
      continue;
    fixed = malloc(n + strlen(TU_TAIL(0)));
    assert_non_null(fixed);
    memcpy(fixed, buf, n);
    memcpy(fixed + n, TU_TAIL(0), strlen(TU_TAIL(0)));
    d = tu_parse_trace(fixed, n + strlen(TU_TAIL(0)), err, sizeof err);
    free(fixed);
    if (d)
      return d;
  }
  fail_msg("%s: no complete record line to cut at", ctx);
  return NULL;
}

/* A commit's pwritev writes half of its request, the retry fails, and so
 * does the write that would put the old tail back: the file is then the
 * last commit (without its tail) followed by a piece of the new one.
 * Every committed byte is still in place, and cutting at the last
 * complete line gives the committed events followed by some of the new
 * ones (for gzip: the stream inflates to at least the committed text). */
static void restore_fails_cut(const cfg *c)
{
  unsigned long at_open = 0, total = count_calls(c, FK_PWRITEV, &at_open);

  for (unsigned long n = at_open + 1; n <= total; n++) {
    target t;
    run r;
    jc_doc *d;
    size_t len, jn, sn;
    char *raw, *json, *sjson;
    int rc, m, committed;

    snprintf(ctx, sizeof ctx, "%s: pwritev call %lu of %lu writes half, "
             "the retry and the restore fail", c->name, n, total);
    t_init(&t, c);
    fault_reset();
    snap_arm(t.path);
    fault_short(FK_PWRITEV, n, HALF);
    fault_fail(FK_PWRITEV, n + 1, 2, EIO);
    EXPECT(t_open(&t, &rc) != NULL);
    workload(t.w, &r);
    rc = t_close(&t);
    EXPECT(fault_injected(FK_PWRITEV) == 3);
    fault_reset();
    EXPECT_RC(r.err ? r.err : rc, -EIO);
    EXPECT_RC(rc, -EIO);
    EXPECT(snap_taken == 1);

    /* The last commit, as it was. */
    sjson = malloc(snap_len + 1);
    assert_non_null(sjson);
    memcpy(sjson, snap, snap_len);
    sjson = json_of(c, sjson, snap_len, &sn);
    d = tu_load_mem(sjson, sn);
    committed = tu_check_prefix(&F, d);
    jc_free(d);
    EXPECT(committed >= r.flushed && committed <= r.ok);
    EXPECT(has_tail(sjson, sn));
    sn -= strlen(TU_TAIL(0));      /* the committed text, without tail */

    raw = t_bytes(&t, &len);
    if (c->sink == TW_SINK_GZIP) {
      /* As much as decodes: the failed commit may have cut it. */
      json = tu_gunzip_prefix(raw, len, &jn, NULL);
      assert_non_null(json);
      free(raw);
    } else {
      json = raw;
      jn = len;
    }
    if (jn < sn || memcmp(json, sjson, sn) != 0)
      fail_msg("%s: the committed text (%zu bytes) is not a prefix of the "
               "file (%zu bytes)", ctx, sn, jn);
    if (c->sink != TW_SINK_GZIP) {
      d = repaired(json, jn);
      m = tu_check_prefix(&F, d);
      jc_free(d);
      EXPECT(m >= committed && m <= r.ok);
    }
    free(json);
    free(sjson);
    t_cleanup(&t);
  }
}

static void test_restore_fails_file(void **state)
{
  (void)state;
  restore_fails_nothing_written(&FILE_IN);
  restore_fails_nothing_written(&FILE_BG);
  restore_fails_cut(&FILE_IN);
  restore_fails_cut(&FILE_BG);
}

static void test_restore_fails_gzip(void **state)
{
  (void)state;
  restore_fails_nothing_written(&GZIP_IN);
  restore_fails_nothing_written(&GZIP_BG);
  restore_fails_cut(&GZIP_IN);
  restore_fails_cut(&GZIP_BG);
}

/* ------------------------------------------------------ close(2) fails */

/* tw_open owns the fd: close(2) failing with EIO at tw_close is its
 * return value; the file is complete all the same.  tw_open_fd's fd is
 * the caller's: tw_close does not close it. */
static void test_close_fails(void **state)
{
  static const cfg *const cs[] = { &FILE_IN, &FILE_BG, &GZIP_IN, &GZIP_BG,
                                   &MMAP_IN, &FILE_SYNC, &MMAP_SYNC };
  (void)state;

  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
    target t;
    run r;
    jc_doc *d;
    int err, fds0 = count_fds();

    snprintf(ctx, sizeof ctx, "%s: close(2) fails with EIO", cs[i]->name);
    t_init(&t, cs[i]);
    EXPECT(t_open(&t, &err) != NULL);
    workload(t.w, &r);
    EXPECT_RC(r.err, 0);
    fault_reset();
    fault_fail(FK_CLOSE, 1, 1, EIO);
    EXPECT_RC(t_close(&t), -EIO);
    EXPECT(fault_calls(FK_CLOSE) == 1);
    fault_reset();
    EXPECT(count_fds() == fds0);
    d = t_load(&t);
    EXPECT(tu_check_prefix(&F, d) == NEV);
    jc_free(d);
    t_cleanup(&t);
  }
  {
    target t;
    run r;
    jc_doc *d;
    int err;

    snprintf(ctx, sizeof ctx, "tw_open_fd: tw_close does not close");
    t_init(&t, &FILE_APP);
    EXPECT(t_open(&t, &err) != NULL);
    workload(t.w, &r);
    fault_reset();
    fault_fail(FK_CLOSE, 1, FOREVER, EIO);
    EXPECT_RC(tw_close(t.w), 0);
    t.w = NULL;
    EXPECT(fault_calls(FK_CLOSE) == 0);
    fault_reset();
    t_finish(&t);
    d = t_load(&t);
    EXPECT(tu_check_prefix(&F, d) == NEV);
    jc_free(d);
    t_cleanup(&t);
  }
}

/* ------------------------------------------------------------- rotation */

/* A directory of its own for a rotating writer's files. */
typedef struct rot_dir {
  char dir[256];
  char path[300];          /* the live file */
  char live[32];           /* its name */
  int gz;
} rot_dir;

static void rot_dir_new(rot_dir *r, const cfg *c)
{
  const char *tmp = getenv("TMPDIR");

  snprintf(r->dir, sizeof r->dir, "%s/twfault-XXXXXX",
           tmp && *tmp ? tmp : "/tmp");
  assert_non_null(mkdtemp(r->dir));
  r->gz = c->sink == TW_SINK_GZIP;
  snprintf(r->live, sizeof r->live, "trace.json%s", r->gz ? ".gz" : "");
  snprintf(r->path, sizeof r->path, "%s/%s", r->dir, r->live);
}

static void rot_dir_remove(rot_dir *r)
{
  DIR *dp = opendir(r->dir);
  struct dirent *de;
  char full[600];

  assert_non_null(dp);
  while ((de = readdir(dp)) != NULL)
    if (de->d_name[0] != '.') {
      snprintf(full, sizeof full, "%s/%s", r->dir, de->d_name);
      (void)unlink(full);
    }
  closedir(dp);
  assert_int_equal(rmdir(r->dir), 0);
}

/* One file of a rotated trace: it must be a complete trace (gzip: one
 * exact member) that begins with the process name and holds workload
 * events first..first+n-1 in order, each as emitted.  Returns n, with
 * *first (-1 when n is 0).  An empty file passes only if may_be_empty. */
static int rot_file_events(const rot_dir *r, const char *name, int *first,
                           int may_be_empty)
{
  char full[600], why[96];
  size_t len, jn;
  char *raw, *json;
  jc_doc *d;
  jc_val e;
  int n = 0;

  snprintf(full, sizeof full, "%s/%s", r->dir, name);
  raw = tu_read_file(full, &len);
  *first = -1;
  if (len == 0 && may_be_empty) {
    free(raw);
    return 0;
  }
  if (r->gz) {
    json = gunzip_exact(raw, len, &jn);
    free(raw);
  } else {
    json = raw;
    jn = len;
  }
  if (!(d = tu_parse_trace(json, jn, why, sizeof why)))
    fail_msg("%s: %s is not strict JSON: %s", ctx, name, why);
  EXPECT(has_tail(json, jn));
  free(json);
  e = jc_first(d, tu_events(d));
  EXPECT(e >= 0);
  tu_check_pname(&F, d, e);
  for (e = jc_next(d, e); e >= 0; e = jc_next(d, e), n++) {
    int64_t i;
    if (n == 0) {
      EXPECT(jc_int64(d, jc_get(d, jc_get(d, e, "args"), "i"), &i) == 0);
      *first = (int)i;
    }
    tu_check_event_pad(&F, d, e, *first + n, pad_of(*first + n));
  }
  jc_free(d);
  return n;
}

static int cmp_ulong(const void *a, const void *b)
{
  unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;
  return x < y ? -1 : x > y;
}

/* Check every file in r's directory: the live file, the numbered ones,
 * and (only if next_ok) the next file being begun, which may be empty;
 * nothing else.  Every file must be a complete trace.  If whole: the
 * numbered files in order, then the live one, hold consecutive events
 * from *lowest on (the older ones deleted by keep), *count in all;
 * *numbered is the count of numbered files. */
static void rot_check_dir(const rot_dir *r, int next_ok, int whole,
                          int *lowest, int *count, int *numbered)
{
  char next_name[48], fmt[48], name[64];
  unsigned long nums[256];
  int nn = 0, live = 0, next = -1, first, n;
  DIR *dp = opendir(r->dir);
  struct dirent *de;

  assert_non_null(dp);
  snprintf(next_name, sizeof next_name, "%s.next", r->live);
  snprintf(fmt, sizeof fmt, "trace.%%lu.json%s%%n", r->gz ? ".gz" : "");
  while ((de = readdir(dp)) != NULL) {
    unsigned long k;
    int end = 0;
    if (de->d_name[0] == '.')
      continue;
    if (strcmp(de->d_name, r->live) == 0) {
      live = 1;
    } else if (strcmp(de->d_name, next_name) == 0) {
      if (!next_ok)
        fail_msg("%s: %s left behind", ctx, next_name);
      EXPECT(rot_file_events(r, next_name, &first, 1) == 0);
    } else if (sscanf(de->d_name, fmt, &k, &end) == 1 &&
               de->d_name[end] == '\0' && nn < 256) {
      nums[nn++] = k;
    } else {
      fail_msg("%s: unexpected file %s", ctx, de->d_name);
    }
  }
  closedir(dp);
  if (!live)
    fail_msg("%s: no file at the path", ctx);
  qsort(nums, (size_t)nn, sizeof nums[0], cmp_ulong);
  if (lowest)
    *lowest = -1;
  for (int f = 0; f <= nn; f++) {
    if (f < nn)
      snprintf(name, sizeof name, "trace.%06lu.json%s", nums[f],
               r->gz ? ".gz" : "");
    else
      snprintf(name, sizeof name, "%s", r->live);
    n = rot_file_events(r, name, &first, 0);
    if (!whole || n == 0)
      continue;
    if (next < 0)
      *lowest = first;
    else if (first != next)
      fail_msg("%s: %s begins with event %d, expected %d", ctx, name,
               first, next);
    next = first + n;
  }
  if (whole) {
    *count = next < 0 ? 0 : next - *lowest;
    *numbered = nn;
  }
}

static const rot_dir *watched;
static unsigned long watch_checks;

/* At every change of a name: every file complete, the next file may be
 * half begun (empty), events may show twice (the live file and its
 * numbered name are one file for a moment). */
static void watch_names(void)
{
  watch_checks++;
  rot_check_dir(watched, 1, 0, NULL, NULL, NULL);
}

static tw_options rot_opts(const cfg *c, uint64_t every_ns, unsigned keep)
{
  tw_options o = opts_of(c);

  o.rotate_interval_ns = every_ns;
  o.rotate_keep = keep;
  return o;
}

/* Rotation at every commit, on each sink: at every step of every
 * rotation, each file in the directory is a complete trace, and the path
 * always names one. */
static void test_rotate_names_always_complete(void **state)
{
  static const cfg *const cs[] = {
    &FILE_IN, &FILE_BG, &GZIP_IN, &GZIP_BG, &MMAP_IN, &FILE_SYNC
  };
  (void)state;

  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
    tw_options o = rot_opts(cs[i], 1, 3);
    int lowest, count, numbered, err;
    rot_dir r;
    run rr;
    tw_writer *w;

    snprintf(ctx, sizeof ctx, "%s: rotating at every commit", cs[i]->name);
    rot_dir_new(&r, cs[i]);
    w = tw_open(r.path, &o, &err);
    EXPECT(w != NULL);
    watched = &r;
    watch_checks = 0;
    names_changed = watch_names;
    workload(w, &rr);
    EXPECT_RC(rr.err, 0);
    EXPECT_RC(tw_close(w), 0);
    names_changed = NULL;
    /* openat, linkat, renameat at each; an unlinkat past keep */
    EXPECT(watch_checks >= 3 * 8);
    rot_check_dir(&r, 0, 1, &lowest, &count, &numbered);
    EXPECT(numbered == 3);
    EXPECT(lowest > 0 && lowest + count == NEV);
    rot_dir_remove(&r);
  }
}

/* Every call that a rotation makes fails in turn: the call returns the
 * error, which sticks; no file is left half made; the path names a
 * complete trace; and the files hold the events emitted, once each --
 * all of them, or (a buffered sink whose data commit failed) none of
 * them, or (mmap, which commits each record) at least every one
 * acknowledged. */
static void test_rotate_step_fails(void **state)
{
  static const cfg *const cs[] = { &FILE_IN, &GZIP_IN, &MMAP_IN,
                                   &FILE_SYNC };
  static const struct { enum fk k; int err; } ks[] = {
    { FK_OPENAT, EMFILE }, { FK_LINKAT, EIO }, { FK_RENAMEAT, EIO },
    { FK_UNLINKAT, EIO }, { FK_FSYNC, EIO }, { FK_PWRITEV, ENOSPC },
    { FK_PWRITE, ENOSPC }, { FK_FALLOC, ENOSPC }, { FK_MMAP, ENOMEM },
    { FK_CLOSE, EIO }, { FK_FDATASYNC, EIO }, { FK_ALLOC, ENOMEM },
    { FK_DEFLATE, Z_STREAM_ERROR },
  };
  enum { K = 5 };
  (void)state;

  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
    for (size_t j = 0; j < sizeof ks / sizeof ks[0]; j++) {
      tw_options o = rot_opts(cs[i], 1, 0);
      unsigned long calls = 0;

      o.buffer_size = 65536;         /* the flush is the one commit */
      for (unsigned long n = 0; n <= calls; n++) {
        int lowest, count, numbered, err;
        rot_dir r;
        run rr;
        tw_writer *w;

        snprintf(ctx, sizeof ctx, "%s: %s call %lu of %lu fails",
                 cs[i]->name, fk_names[ks[j].k], n, calls);
        rot_dir_new(&r, cs[i]);
        w = tw_open(r.path, &o, &err);
        EXPECT(w != NULL);
        memset(&rr, 0, sizeof rr);
        /* The thread's first event allocates its staging: before the
         * faults, which are for the rotating flush. */
        note(&rr, tu_emit(&F, w, 0), "emit", 0);
        rr.ok = 1;
        fault_reset();
        if (n > 0)
          fault_fail(ks[j].k, n, 1, ks[j].err);
        for (int e = 1; e < K; e++) {
          note(&rr, tu_emit(&F, w, e), "emit", e);
          if (!rr.err)
            rr.ok = e + 1;
        }
        note(&rr, tw_flush(w), "tw_flush", K);
        if (n == 0) {
          calls = fault_calls(ks[j].k);
          if (getenv("TW_FAULTS_VERBOSE"))
            print_message("%s: %lu %s calls\n", cs[i]->name, calls,
                          fk_names[ks[j].k]);
        }
        fault_reset();
        EXPECT_RC(tw_errcode(w), rr.err);
        EXPECT_RC(tw_close(w), rr.err);
        rot_check_dir(&r, 0, 1, &lowest, &count, &numbered);
        EXPECT(count == 0 || lowest == 0);
        if (!rr.err)
          EXPECT(count == K && numbered >= 1);
        else if (cs[i]->sink == TW_SINK_MMAP)
          EXPECT(count >= rr.ok && count <= K);
        else
          EXPECT(count == 0 || count == K);
        rot_dir_remove(&r);
      }
    }
}

/* Where the file system has no hard links, the live file is renamed to
 * its numbered name instead; a failure after that puts it back. */
static void test_rotate_without_links(void **state)
{
  static const cfg *const cs[] = { &FILE_IN, &GZIP_IN, &MMAP_IN };
  (void)state;

  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
    for (int fail_rename = 0; fail_rename <= 1; fail_rename++) {
      tw_options o = rot_opts(cs[i], 1, 0);
      int mmap = cs[i]->sink == TW_SINK_MMAP;
      int lowest, count, numbered, err;
      rot_dir r;
      run rr;
      tw_writer *w;

      snprintf(ctx, sizeof ctx, "%s: linkat fails with EPERM%s",
               cs[i]->name, fail_rename ? ", then renameat" : "");
      o.buffer_size = 65536;
      rot_dir_new(&r, cs[i]);
      w = tw_open(r.path, &o, &err);
      EXPECT(w != NULL);
      fault_fail(FK_LINKAT, 1, FOREVER, EPERM);
      /* renameat 1 names the live file, 2 the new one, 3 puts back */
      if (fail_rename)
        fault_fail(FK_RENAMEAT, 2, 1, EIO);
      memset(&rr, 0, sizeof rr);
      for (int e = 0; e < 3; e++) {
        note(&rr, tu_emit(&F, w, e), "emit", e);
        if (!rr.err)
          rr.ok = e + 1;
      }
      note(&rr, tw_flush(w), "tw_flush", 3);
      EXPECT_RC(rr.err, fail_rename ? -EIO : 0);
      EXPECT(fault_injected(FK_LINKAT) >= 1);
      fault_reset();
      EXPECT_RC(tw_close(w), rr.err);
      rot_check_dir(&r, 0, 1, &lowest, &count, &numbered);
      /* mmap rotates after each record: the first one's rotation fails */
      EXPECT(lowest == 0 && count == (mmap && fail_rename ? 1 : 3));
      EXPECT(numbered == (fail_rename ? 0 : mmap ? 3 : 1));
      rot_dir_remove(&r);
    }
}

/* ------------------------------------------------------------ sanity */

/* The wrappers really sit between the library and libc: a run without
 * faults makes the calls they count.  (If this fails, the program was not
 * linked from the library's sources with -Wl,--wrap=...) */
static void test_wrappers_see_library(void **state)
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

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
  const struct CMUnitTest tests[] = {
    T(test_wrappers_see_library),
    T(test_open_alloc_each),
    T(test_open_thread_fails),
    T(test_open_deflateinit_fails),
    T(test_open_mmap_fails),
    T(test_open_write_fails),
    T(test_open_write_fails_file),
    T(test_emit_big_alloc_fails),
    T(test_eintr_file),
    T(test_eintr_gzip),
    T(test_eintr_mmap),
    T(test_eintr_close),
    T(test_short_writes),
    T(test_eio_file),
    T(test_eio_gzip),
    T(test_eio_mmap),
    T(test_enospc_mmap),
    T(test_fallocate_unsupported_mmap),
    T(test_fdatasync_fails),
    T(test_deflate_fails),
    T(test_restore_fails_file),
    T(test_restore_fails_gzip),
    T(test_close_fails),
    T(test_rotate_names_always_complete),
    T(test_rotate_step_fails),
    T(test_rotate_without_links),
  };
#undef T
  /* Some 2000 files are written and removed: on a disk file system the
   * unlinks alone can take seconds, so prefer tmpfs unless TMPDIR says
   * where to go. */
  {
    const char *dir = getenv("TMPDIR");
    if ((!dir || !*dir) && access("/dev/shm", W_OK | X_OK) == 0)
      setenv("TMPDIR", "/dev/shm", 1);
  }
  return cmocka_run_group_tests(tests, NULL, NULL);
}
