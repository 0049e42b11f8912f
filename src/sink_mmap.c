/* sink_mmap.c -- the mmap sink: threads copy records straight into the
 * file, each committed as its last byte lands
 *
 * The file, written through shared mappings, always reads
 *
 *     [ records <spaces> T          T: the tail "\n]" (or "\n]}")
 *
 * Whitespace before the `]` is valid JSON, so a record copied into the
 * space region is committed the moment its last byte is in place: no
 * syscall, no tail rewrite, no lock.
 *
 * Regions.  Each writing thread owns a region of the file, [at, end),
 * reserved for it under the sink's lock (once per region: a few KiB, not
 * once per record) and filled by that thread alone, front to back, with
 * whole records (tw__region_copy in sink.h).  Threads copy in parallel.
 * The space left at the end of a region that the next record did not fit
 * stays spaces: records of a file with several writing threads may be
 * separated by runs of spaces (valid JSON whitespace; one record per line
 * still).  A thread whose region is the last one reserved takes its
 * unused rest back when it needs more, so a file written by one thread
 * has no gaps.  Region sizes start at REGION_MIN and double up to
 * REGION_MAX for each new region of a thread, so an idle thread leaves
 * little unused.
 *
 * Windows.  The file is mapped in windows, one per growth, from the page
 * holding the end of what was reserved to the new end of the file
 * (windows overlap by that page; two shared mappings of a file see the
 * same page cache).  A region lies in the window current when it was
 * reserved and holds a lease on it; a window is unmapped once no region
 * holds it and it is no longer current, so the records behind leave the
 * process's RSS (their pages stay in the page cache).  Mappings never
 * move while a thread may be copying into them.
 *
 * Lifetime.  Each region also holds the sink, so the old file of a
 * rotation is finished (tail after its last record, cut to its exact
 * length) and freed only when its last region is released -- at once if
 * no thread holds one.  No record is copied into it once the rotation
 * has begun: the rotation waits for the copies under way, and a thread
 * that would begin one takes a region of the new file instead
 * (document.c, copies_stop).  Until its last region goes, a finished
 * file reads [ records <spaces> T, valid.
 *
 * What a process killed at any instant leaves behind matters here: SIGKILL
 * can land between any two instructions, and the page cache outlives the
 * process (a power loss needs the sync option).  T's core is its
 * non-whitespace part, "]" or "]}".
 *
 * Growth from size S to S' (under the lock):
 *
 *  1. fallocate(FALLOC_FL_KEEP_SIZE) reserves the blocks of [S, S')
 *     without changing the size, so a full disk is a clean -ENOSPC before
 *     the file is touched, and later stores into the mapping find their
 *     blocks (no SIGBUS; a copy-on-write file system such as btrfs can
 *     still fail them: its limit).  posix_fallocate is not used: it
 *     extends the size at once, so the new bytes would read as NULs after
 *     the `]` until overwritten.  Where KEEP_SIZE is unsupported the
 *     pwrite of step 3 allocates the blocks and reports a full disk.
 *  2. Map the new window (mapping past the end of the file is allowed;
 *     nothing touches it yet).
 *  3. One pwrite from the old core to S': the old core blanked, spaces, T
 *     at the new end.  Done: `[ A ws T`, valid and exact.  Cut short (the
 *     kernel stops a write between pages for a fatal signal; or a full
 *     disk): the old `]` is blanked and the new one not written yet, an
 *     array missing only its `]`, which Perfetto opens and `tracewriter
 *     repair` closes.  On an error the old state is put back (truncate to
 *     S, then the old core).
 *  4. madvise(MADV_POPULATE_WRITE) maps the new pages writable in one call
 *     instead of a page fault every page (Linux 5.14; best effort).
 *
 *     No order keeps the file strictly valid throughout a growth: the size
 *     grows before a `]` can exist at the new end, so either the old `]`
 *     is blanked first (an array without `]` while the write runs, the
 *     order above) or whitespace follows the old `]` until it moves.  That
 *     is valid JSON, but Perfetto rejects it ("tried to parse data after
 *     EOF"), and a kill lands in it far more often.
 *
 * Records: a new region's pages are touched first (a space stored over a
 * space) so that page faults happen while the file is valid; then each
 * record is copied front to back in 16-byte stores.  A kill inside a copy
 * leaves every complete record and a prefix of the record being copied
 * by each thread that was copying: at most one cut record per thread,
 * anywhere among complete ones, followed by the spaces of its region.
 * `tracewriter repair` keeps every complete record and drops the cut
 * ones.
 *
 * Finishing (close, or the last region of a rotated file): the tail's
 * whitespace right after the last record (valid); cut the file after it
 * (an array without `]`); the core (valid and exact).  Two syscalls, one
 * window of a truncated array.
 */
#include "internal.h"
#include "busguard.h"
#include "fdio.h"
#include "sink.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

/* Bytes of spaces that pwrite repeats to fill a chunk. */
#define SPACES 4096
/* iovecs per pwritev call when filling (about SPACES * IOVS bytes). */
#define IOVS 64
/* A thread's regions: the first this big, each next one twice the last,
 * up to REGION_MAX (or the record's size, if larger). */
#define REGION_MIN 1024u
#define REGION_MAX (16u * 1024u)

/* One mapping of the file. */
typedef struct mmap_window {
  char *map;               /* maps file offsets [off, off + len) */
  off_t off;               /* a page boundary */
  size_t len;
  unsigned leases;         /* regions in it, +1 while it is current */
  struct mmap_window *next; /* the sink's live windows */
} mmap_window;

typedef struct mmap_sink {
  tw__sink base;
  int fd;
  int own_fd;              /* close fd at close */
  pthread_mutex_t lock;    /* guards all below: reserve, release, grow */
  mmap_window *cur;        /* where new regions go: covers [cur->off,
                              size) */
  mmap_window *windows;    /* every live window */
  mmap_window *spare;      /* window structs unmapped, for reuse */
  unsigned structs;        /* window structs allocated, live or spare */
  off_t start;             /* where the trace begins in the file */
  off_t end;               /* everything below is reserved: the next
                              region starts here */
  off_t size;              /* file size: the tail ends here */
  size_t chunk;            /* growth step */
  size_t page;             /* page size */
  size_t core_off;         /* the tail's non-whitespace bytes: */
  size_t core_len;         /*   tail[core_off .. core_off + core_len) */
  unsigned regions;        /* regions out */
  int has_tail;            /* the first record is in and the core stored */
  char first;              /* the byte at start, once has_tail */
  int broken;              /* a failed growth could not be undone: the
                              file past end is unknown (finish rewrites
                              it) */
  int closing;             /* the writer is done with the sink: finish and
                              free it with its last region */
  int unmapped;            /* a window was unmapped since the last sync */
  int cut;                 /* the file was cut under it: retired, it
                              writes nothing more (mmap_reopen) */
  int synced;              /* sync was asked for: finishing syncs too */
  char *tail_ws;           /* the tail with its core blanked */
  char spaces[SPACES];     /* what pwrite fills new chunks with */
} mmap_sink;

static int is_ws(char c)
{
  return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

/* Replace window w's pages with anonymous ones: stores into it go
 * nowhere (a sink whose file was cut: its regions must not write into
 * the new document). */
static void window_anonymize(mmap_window *w)
{
  (void)mmap(w->map, w->len, PROT_READ | PROT_WRITE,
             MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

/* File offset of address p of window w. */
static off_t offset_in(const mmap_window *w, const char *p)
{
  return w->off + (off_t)(p - w->map);
}

/* Address of file offset off in window w (which covers it). */
static char *addr_in(const mmap_window *w, off_t off)
{
  return w->map + (off - w->off);
}

/* Store n bytes, as one store instruction when n is 1 or 2 (a tail
 * core): a kill cannot land between its bytes. */
static void store(char *dst, const char *src, size_t n)
{
  if (n == 1) {
    *(volatile char *)dst = *src;
  } else if (n == 2) {
    uint16_t v;                /* one 16-bit load, one 16-bit store */
    memcpy(&v, src, 2);
    memcpy(dst, &v, 2);
  } else {
    memcpy(dst, src, n);
  }
}

/* Drop a lease on w; unmap it if it was the last.  Lock held. */
static void window_unlease(mmap_sink *m, mmap_window *w)
{
  mmap_window **p;

  if (--w->leases)
    return;
  for (p = &m->windows; *p != w; p = &(*p)->next)
    continue;
  *p = w->next;
  tw__bus_guard_remove(w->map, w->len);
  (void)munmap(w->map, w->len);
  /* Kept for the next window: no allocation per growth. */
  w->next = m->spare;
  m->spare = w;
  m->unmapped = 1;
}

/* Enough window structs that no growth allocates: each region leases
 * at most one window, and a growth maps the new current window before
 * the old one goes.  Called as a region holder comes (a thread's first
 * event): allocation then, not in the growths after.  A failure here
 * only defers it to window_new, which reports it. */
static void spares_top_up(mmap_sink *m)
{
  while (m->structs < m->regions + 3) {
    mmap_window *w = malloc(sizeof *w);
    if (!w)
      return;
    w->next = m->spare;
    m->spare = w;
    m->structs++;
  }
}

static void free_spares(mmap_sink *m)
{
  while (m->spare) {
    mmap_window *w = m->spare;
    m->spare = w->next;
    free(w);
  }
}

/* Map [off, to) as a new current window (off a page boundary).  Returns
 * 0 or -errno; the current window is then unchanged. */
static int window_new(mmap_sink *m, off_t off, off_t to)
{
  mmap_window *w;
  void *p;

  if ((uint64_t)(to - off) > SIZE_MAX)
    return -EFBIG;
  if ((w = m->spare) != NULL)
    m->spare = w->next;
  else if ((w = malloc(sizeof *w)) != NULL)
    m->structs++;
  else
    return -ENOMEM;
  p = mmap(NULL, (size_t)(to - off), PROT_READ | PROT_WRITE, MAP_SHARED,
           m->fd, off);
  if (p == MAP_FAILED) {
    int e = errno;
    w->next = m->spare;
    m->spare = w;
    return e == EACCES || e == ENODEV || e == EPERM ? TW_ESINK : -e;
  }
  w->map = p;
  w->off = off;
  w->len = (size_t)(to - off);
  w->leases = 1;
  w->next = m->windows;
  m->windows = w;
  tw__bus_guard_add(w->map, w->len);
  if (m->cur) {
    /* Still leased by threads' regions, the old window stays mapped
     * until their last record: its pages leave the process's RSS now
     * (the page cache keeps them, dirty or not), and a region that
     * stores there again faults its page back in.  So RSS does not grow
     * with the threads. */
    if (m->cur->leases > 1)
      (void)madvise(m->cur->map, m->cur->len, MADV_DONTNEED);
    window_unlease(m, m->cur);
  }
  m->cur = w;
  return 0;
}

/* Write [from, to) with pwrite: pre[0..plen), then spaces, then the tail
 * t (tail_len bytes) ending at to; to - from > plen + tail_len.  Returns
 * 0 or -errno (part of it may be written). */
static int fill(mmap_sink *m, off_t from, const char *pre, size_t plen,
                const char *t, off_t to)
{
  struct iovec iov[IOVS + 2];
  size_t tl = m->base.tail_len;
  off_t pos = from;
  int n = 0, rc;

  if (plen) {
    iov[n].iov_base = (void *)pre;
    iov[n++].iov_len = plen;
    pos += (off_t)plen;
  }
  for (;;) {
    size_t piece = (size_t)(to - (off_t)tl - pos);
    if (piece > SPACES)
      piece = SPACES;
    if (piece) {
      iov[n].iov_base = m->spaces;
      iov[n++].iov_len = piece;
      pos += (off_t)piece;
    }
    if (pos == to - (off_t)tl) {
      iov[n].iov_base = (void *)t;
      iov[n++].iov_len = tl;
      return tw__write_all(m->fd, iov, n, from);
    }
    if (n == IOVS) {
      if ((rc = tw__write_all(m->fd, iov, n, from)) != 0)
        return rc;
      from = pos;
      n = 0;
    }
  }
}

/* Grow the file by whole chunks so that it holds need bytes before the
 * tail, and move the tail to the new end (see the top of the file for the
 * order).  On error the file is as before when that can be ensured.  Lock
 * held.  Returns 0 or -errno. */
static int grow(mmap_sink *m, off_t need)
{
  size_t tl = m->base.tail_len;
  off_t old = m->size, new_size, from;
  uint64_t chunks;
  int rc;

  chunks = ((uint64_t)(need + (off_t)tl - old) + m->chunk - 1) / m->chunk;
  if (chunks > (uint64_t)INT64_MAX / m->chunk ||
      (uint64_t)old > (uint64_t)INT64_MAX - chunks * m->chunk)
    return -EFBIG;
  new_size = old + (off_t)(chunks * m->chunk);

#ifdef FALLOC_FL_KEEP_SIZE
  /* 1. Reserve the blocks, keeping the size. */
  do
    rc = fallocate(m->fd, FALLOC_FL_KEEP_SIZE, old, new_size - old);
  while (rc != 0 && errno == EINTR);
  if (rc != 0 && errno != EOPNOTSUPP && errno != ENOSYS) {
    rc = -errno;
    if (ftruncate(m->fd, old) != 0) {
      /* Releasing a partial reservation is best effort. */
    }
    return rc;
  }
#endif
  /* 2. The new window, from the page holding the end of what is
   *    reserved. */
  if ((rc = window_new(m, m->end - m->end % (off_t)m->page, new_size)) != 0)
    return rc;
  /* 3. One write from the old core to the new end.  Before the first
   *    record there is no tail yet: only whitespace, the core comes after
   *    the record. */
  if (m->has_tail) {
    from = old - (off_t)tl + (off_t)m->core_off;
    rc = fill(m, from, m->tail_ws + m->core_off, tl - m->core_off,
              m->base.tail, new_size);
  } else {
    from = old;
    rc = fill(m, from, NULL, 0, m->tail_ws, new_size);
  }
  if (rc != 0) {
    /* Back to the old size, then the old core back. */
    struct iovec core = { (void *)(m->base.tail + m->core_off), m->core_len };
    if (ftruncate(m->fd, old) != 0 ||
        (m->has_tail && tw__write_all(m->fd, &core, 1, from) != 0))
      m->broken = 1;
    return rc;
  }
  __atomic_store_n(&m->size, new_size, __ATOMIC_RELEASE);
  /* A cut (copytruncate) between two of the fill's writes leaves a hole
   * below what the last one wrote, and a file of the right size: the
   * head (or, before the first record, the fill's first space) reads
   * NUL.  Seen now, since nothing later would see it. */
  if (tw__fd_head_lost(m->fd, m->has_tail ? m->start : from,
                       m->has_tail ? m->first : ' '))
    return TW__ETRUNCATED;
#ifdef MADV_POPULATE_WRITE
  /* 4. Map the new pages writable now, in one call, rather than taking a
   *    page fault every 4 KiB of records (Linux 5.14; best effort). */
  {
    off_t first = from - (from - m->cur->off) % (off_t)m->page;
    (void)madvise(addr_in(m->cur, first), (size_t)(new_size - first),
                  MADV_POPULATE_WRITE);
  }
#endif
  return 0;
}

/* Move the tail from file offset from back to to (to < from; the ranges
 * may overlap) through window w, which covers both: the document valid
 * before and after and, between the two core stores, an array missing
 * only its `]` (see the top of the file). */
static void move_tail_back(mmap_sink *m, mmap_window *w, off_t from, off_t to)
{
  const char *t = m->base.tail;
  size_t tl = m->base.tail_len, cs = m->core_off, cl = m->core_len, i;
  off_t old_core = from + (off_t)cs, new_core = to + (off_t)cs;
  char blank[2];

  /* 1. The new tail's whitespace, and spaces where its core goes, except
   *    over the old core. */
  for (i = 0; i < tl; i++) {
    off_t p = to + (off_t)i;
    if (p >= old_core && p < old_core + (off_t)cl)
      continue;
    *addr_in(w, p) = i >= cs && i < cs + cl ? ' ' : t[i];
  }
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  /* 2. Blank the old core (with the new tail's whitespace where the new
   *    tail covers it): the one store that opens the window. */
  for (i = 0; i < cl; i++) {
    off_t p = old_core + (off_t)i;
    blank[i] = p >= to + (off_t)tl || p < to || (p >= new_core &&
               p < new_core + (off_t)cl) ? ' ' : t[p - to];
  }
  store(addr_in(w, old_core), blank, cl);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  /* 3. The new core: the one store that closes it. */
  store(addr_in(w, new_core), t + cs, cl);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* Finish the file: the tail right after the last record, the file cut to
 * its exact length: stores that cannot fail through a mapping, then one
 * ftruncate (see the top of the file).  Every region released.  Returns
 * 0 or the first error. */
static int finish(mmap_sink *m)
{
  size_t tl = m->base.tail_len;
  off_t exact = m->end + (off_t)tl;
  int rc = m->base.err;

  if (!m->has_tail) {
    /* Nothing was ever committed: leave the file as it was found. */
    if (ftruncate(m->fd, m->start) != 0 && !rc)
      rc = -errno;
    return rc;
  }
  /* Cut under the writer at the last moment: leave the file to whoever
   * cut it rather than write past a hole. */
  {
    struct stat st;
    if (fstat(m->fd, &st) == 0 && st.st_size < m->size)
      return rc;
  }
  if (!m->broken && exact != m->size) {
    /* The current window reaches back to where the reserved space
     * ended at the last growth; the records may end before it. */
    if (m->cur->off > m->end) {
      off_t base = m->end - m->end % (off_t)m->page;
      int rc2 = window_new(m, base, m->size);
      if (rc2 != 0)
        m->broken = 1;        /* written with pwrite below instead */
    }
    if (!m->broken) {
      move_tail_back(m, m->cur, m->size - (off_t)tl, m->end);
      if (ftruncate(m->fd, exact) != 0 && !rc)
        rc = -errno;
      return rc;
    }
  }
  if (m->broken) {
    /* What follows the records is unknown: cut, then write the tail. */
    struct iovec t = { (void *)m->base.tail, tl };
    int rc2 = ftruncate(m->fd, exact) != 0 ? -errno
              : tw__write_all(m->fd, &t, 1, m->end);
    if (rc2 && !rc)
      rc = rc2;
  }
  return rc;
}

/* Finish and free the sink.  Lock held on entry, released. */
static int destroy(mmap_sink *m)
{
  /* A sink whose file was cut under it leaves the file to its successor
   * (mmap_reopen). */
  int rc = m->cut ? 0 : finish(m);

  /* If the writer syncs, the final tail and length must be durable too. */
  if (m->synced && !rc && fdatasync(m->fd) != 0)
    rc = -errno;

  while (m->windows) {
    mmap_window *w = m->windows;
    m->windows = w->next;
    tw__bus_guard_remove(w->map, w->len);
    (void)munmap(w->map, w->len);
    free(w);
  }
  free_spares(m);
  pthread_mutex_unlock(&m->lock);
  pthread_mutex_destroy(&m->lock);
  if (m->own_fd && close(m->fd) != 0 && !rc && errno != EINTR)
    rc = -errno;
  free(m);
  return rc;
}

/* Release r (of this sink): what it did not use goes back if it was the
 * last region reserved.  Lock held. */
static void release_locked(mmap_sink *m, tw__region *r)
{
  mmap_window *w = r->lease;
  off_t used = offset_in(w, r->at), end = offset_in(w, r->end);

  if (end == m->end) {
    m->end = used;
    __atomic_sub_fetch(&m->base.out_bytes, (unsigned long long)(end - used),
                       __ATOMIC_RELAXED);
  }
  window_unlease(m, w);
  m->regions--;
  memset(r, 0, sizeof *r);
}

static void mmap_release(tw__region *r)
{
  mmap_sink *m = (mmap_sink *)r->sink;

  if (!m)
    return;
  pthread_mutex_lock(&m->lock);
  release_locked(m, r);
  if (m->closing && m->regions == 0)
    (void)destroy(m);     /* a rotated file: nobody to report to */
  else
    pthread_mutex_unlock(&m->lock);
}

/* Touch every page of [p, p + len) (a space over a space) so that the
 * faults happen now, while the file is valid. */
static void touch_pages(mmap_sink *m, char *p, size_t len)
{
  for (size_t k = 0; k < len; k += m->page)
    *(volatile char *)(p + k) = ' ';
  if (len)
    *(volatile char *)(p + len - 1) = ' ';
}

/* Reserve [off, off + size) for r in the current window, growing the file
 * as needed.  Lock held.  Returns 0 or an error (sticky). */
static int reserve_locked(mmap_sink *m, tw__region *r, off_t off,
                          size_t size)
{
  off_t need;
  int rc;

  if ((uint64_t)size > (uint64_t)INT64_MAX - (uint64_t)off -
      m->base.tail_len)
    return tw__sink_fail(&m->base, -EFBIG);
  need = off + (off_t)size;
  if (need + (off_t)m->base.tail_len > m->size &&
      (rc = grow(m, need)) != 0)
    return rc == TW__ETRUNCATED ? rc : tw__sink_fail(&m->base, rc);
  /* A region given back moves the end back, maybe below the current
   * window: a window from there. */
  if (off < m->cur->off &&
      (rc = window_new(m, off - off % (off_t)m->page, m->size)) != 0)
    return tw__sink_fail(&m->base, rc);
  r->lease = m->cur;
  m->cur->leases++;
  r->sink = &m->base;
  r->at = addr_in(m->cur, off);
  r->end = r->at + size;
  r->size = size;
  /* Read by the writer's threads without the lock (rotation's size). */
  __atomic_add_fetch(&m->base.out_bytes, (unsigned long long)(need - m->end),
                     __ATOMIC_RELAXED);
  m->end = need;
  m->regions++;
  touch_pages(m, r->at, size);
  return 0;
}

/* The size of the region after one of size prev (0: none). */
static size_t region_size(size_t prev, size_t len)
{
  size_t want = prev < REGION_MIN ? REGION_MIN : prev * 2;

  if (want > REGION_MAX)
    want = REGION_MAX;
  return len > want ? len : want;
}

/* Whether the file was cut under the writer: shorter than it was made,
 * or cut and made longer again (by a growth, or a store into a page a
 * fault had fixed), which leaves a hole where the document began.
 * Without the lock, so that the two system calls do not hold up the
 * other threads' reservations: the size is read before fstat and only
 * grows, and start and first no longer change once has_tail is set. */
static int was_cut(mmap_sink *m)
{
  struct stat st;
  off_t size;

  if (!__atomic_load_n(&m->has_tail, __ATOMIC_ACQUIRE))
    return 0;
  size = __atomic_load_n(&m->size, __ATOMIC_ACQUIRE);
  return (fstat(m->fd, &st) == 0 && st.st_size < size) ||
         tw__fd_head_lost(m->fd, m->start, m->first);
}

static int mmap_reserve(tw__sink *s, tw__region *r, size_t len)
{
  mmap_sink *m = (mmap_sink *)s;
  size_t prev = 0;
  off_t off;
  int cut, rc;

  /* A region of another (rotated) sink goes back to it first. */
  if (r->sink && r->sink != s)
    mmap_release(r);
  /* Cut under the writer (logrotate's copytruncate): the writer begins a
   * new document on a new sink (mmap_reopen).  len 0 asks only that. */
  cut = was_cut(m);
  pthread_mutex_lock(&m->lock);
  if (m->base.err || cut || len == 0) {
    rc = m->base.err ? m->base.err : cut ? TW__ETRUNCATED : 0;
    goto out;
  }
  if (r->sink) {
    prev = r->size;            /* the size r had decides the next one's */
    release_locked(m, r);
  } else {
    spares_top_up(m);
  }
  off = m->end;
  rc = reserve_locked(m, r, off, region_size(prev, len));
out:
  pthread_mutex_unlock(&m->lock);
  return rc;
}

/* Append iov as whole records at the end, as a region of their exact size
 * that the sink fills and gives back: the start of a file.  Then, the
 * first time, store the tail's core.  Returns 0 or an error (sticky). */
static int mmap_commit(tw__sink *s, const struct iovec *iov, int n)
{
  mmap_sink *m = (mmap_sink *)s;
  tw__region r;
  size_t len = 0;
  int rc;

  for (int i = 0; i < n; i++)
    len += iov[i].iov_len;
  pthread_mutex_lock(&m->lock);
  if ((rc = m->base.err) != 0 || len == 0)
    goto out;
  memset(&r, 0, sizeof r);
  if ((rc = reserve_locked(m, &r, m->end, len)) != 0)
    goto out;
  for (int i = 0; i < n; i++)
    tw__region_copy(&r, iov[i].iov_base, iov[i].iov_len);
  if (!m->has_tail) {
    /* The first records (head, metadata): the tail's whitespace is in
     * place since the growth, the core completes the document, in one
     * store (no syscall to fail or to be killed in). */
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    store(addr_in(m->cur, m->size - (off_t)s->tail_len + (off_t)m->core_off),
          s->tail + m->core_off, m->core_len);
    for (int i = 0; i < n; i++)
      if (iov[i].iov_len) {
        m->first = *(const char *)iov[i].iov_base;
        break;
      }
    __atomic_store_n(&m->has_tail, 1, __ATOMIC_RELEASE);
  }
  release_locked(m, &r);
out:
  pthread_mutex_unlock(&m->lock);
  return rc;
}

static int mmap_close(tw__sink *s)
{
  mmap_sink *m = (mmap_sink *)s;

  pthread_mutex_lock(&m->lock);
  m->closing = 1;
  if (m->regions == 0)
    return destroy(m);
  /* Threads still hold regions (a rotation): the last one finishes. */
  pthread_mutex_unlock(&m->lock);
  return 0;
}

/* msync of the live windows: on Linux an fdatasync of their ranges, which
 * also covers what the growths wrote there with pwrite (the same page
 * cache).  Records of windows unmapped since the last sync lie where
 * msync cannot reach them: then fdatasync the whole file. */
static int mmap_sync(tw__sink *s)
{
  mmap_sink *m = (mmap_sink *)s;
  int rc = 0;

  if (s->err)
    return s->err;
  pthread_mutex_lock(&m->lock);
  for (mmap_window *w = m->windows; w && rc == 0; w = w->next) {
    size_t len = w->off + (off_t)w->len > m->size ? (size_t)(m->size - w->off)
                                                  : w->len;
    if (w->off < m->size && msync(w->map, len, MS_SYNC) != 0)
      rc = -errno;
  }
  if (rc == 0 && m->unmapped)
    rc = tw__fd_sync(m->fd);
  if (rc == 0)
    m->unmapped = 0;
  m->synced = 1;
  pthread_mutex_unlock(&m->lock);
  return tw__sink_fail(s, rc);
}

static void mmap_abandon(tw__sink *s)
{
  mmap_sink *m = (mmap_sink *)s;

  /* In a child, the mappings are the parent's file: unmap them untouched.
   * (MADV_DONTFORK would keep them out of the child altogether, but then
   * these munmaps could hit whatever the child mapped at those
   * addresses.) */
  while (m->windows) {
    mmap_window *w = m->windows;
    m->windows = w->next;
    tw__bus_guard_remove(w->map, w->len);
    (void)munmap(w->map, w->len);
    free(w);
  }
  free_spares(m);
  if (m->own_fd)
    close(m->fd);
  free(m);
}

static int mmap_reopen(tw__sink *s, tw__sink **next)
{
  mmap_sink *m = (mmap_sink *)s;
  int fd, rc;

  /* The new sink on the same file (a descriptor of its own, at the same
   * position: where the trace began), from an empty file. */
  if ((fd = fcntl(m->fd, F_DUPFD_CLOEXEC, 0)) < 0)
    return -errno;
  if (ftruncate(fd, m->start) != 0) {
    rc = -errno;
    close(fd);
    return rc;
  }
  if ((rc = tw__sink_mmap_open(next, fd, 1, s->tail, s->tail_len,
                               m->chunk)) != 0) {
    close(fd);
    return rc;
  }
  /* This one writes nothing more: its windows become anonymous memory,
   * so a thread still copying into its region writes nowhere. */
  pthread_mutex_lock(&m->lock);
  m->cut = 1;
  for (mmap_window *w = m->windows; w; w = w->next)
    window_anonymize(w);
  pthread_mutex_unlock(&m->lock);
  return 0;
}

static const tw__sink_ops mmap_ops = {
  .commit = mmap_commit, .reserve = mmap_reserve, .reopen = mmap_reopen,
  .release = mmap_release, .close = mmap_close, .abandon = mmap_abandon,
  .sync = mmap_sync
};

int tw__sink_mmap_open(tw__sink **out, int fd, int own_fd,
                       const char *tail, size_t tail_len, size_t chunk)
{
  tw__fd_info info;
  mmap_sink *m;
  long page = sysconf(_SC_PAGESIZE);
  size_t i;
  int rc;

  if ((rc = tw__fd_probe(fd, &info)) != 0)
    return rc;
  /* A shared writable mapping needs a regular file open for reading and
   * writing; O_APPEND asks for a stream, which a mapping cannot be. */
  if (!info.regular || !info.read_write || info.start < 0)
    return TW_ESINK;
  if (page <= 0)
    page = 4096;
  if (chunk < 4096)
    chunk = TW_DEFAULT_MMAP_CHUNK;
  if ((rc = tw__bus_guard_install()) != 0)
    return rc;

  if (!(m = calloc(1, sizeof *m + tail_len)))
    return -ENOMEM;
  m->base.ops = &mmap_ops;
  m->base.caps = TW__SINK_DIRECT;
  m->base.tail = tail;
  m->base.tail_len = tail_len;
  m->fd = fd;
  m->own_fd = own_fd;
  m->start = m->end = m->size = info.start;
  m->chunk = chunk;
  m->page = (size_t)page;
  m->tail_ws = (char *)(m + 1);
  memset(m->spaces, ' ', sizeof m->spaces);
  /* The tail must be whitespace, a core of 1 or 2 bytes, whitespace. */
  for (i = 0; i < tail_len && is_ws(tail[i]); i++)
    ;
  m->core_off = i;
  for (; i < tail_len && !is_ws(tail[i]); i++)
    ;
  m->core_len = i - m->core_off;
  for (; i < tail_len && is_ws(tail[i]); i++)
    ;
  if (m->core_len == 0 || m->core_len > 2 || i != tail_len ||
      tail_len >= 4096 || (rc = -pthread_mutex_init(&m->lock, NULL)) != 0) {
    free(m);
    return -EINVAL;
  }
  memcpy(m->tail_ws, tail, tail_len);
  memset(m->tail_ws + m->core_off, ' ', m->core_len);

  /* Map the page holding start now, past the end of the file if need be
   * (mapping there is allowed, touching is not): a file that cannot be
   * mapped is refused before anything is written.  The first commit
   * grows the file. */
  if ((rc = window_new(m, info.start - info.start % page,
                       info.start - info.start % page + page)) != 0) {
    free_spares(m);
    pthread_mutex_destroy(&m->lock);
    free(m);
    return rc;
  }
  /* Nothing may follow the tail: drop what the file held past start. */
  if ((rc = tw__fd_cut(fd, &info)) != 0) {
    tw__bus_guard_remove(m->cur->map, m->cur->len);
    (void)munmap(m->cur->map, m->cur->len);
    free(m->cur);
    pthread_mutex_destroy(&m->lock);
    free(m);
    return rc;
  }
  *out = &m->base;
  return 0;
}
