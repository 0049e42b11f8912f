/* sink_mmap.c -- the mmap sink: every record is committed as it is copied
 *
 * The file, written through a shared mapping, always reads
 *
 *     [ records <spaces> \n]\n          (or \n]}\n in the object form)
 *
 * Whitespace before the `]` is valid JSON, so a record copied into the
 * space region is committed the moment its last byte is in place: no
 * syscall, no tail rewrite.  Only when a record does not fit before the
 * tail does the file grow, by whole chunks, with the tail moved to the new
 * end.  tw_close writes the tail right after the last record and truncates
 * the file to the exact length.
 *
 * The mapping is a window, not the whole file: from the page holding the
 * end of the records (the next record starts there) to the end of the
 * file.  Records behind it are never touched again, so each growth unmaps
 * them: their pages stay in the page cache but leave the process's RSS,
 * which is bounded by the window (a chunk, plus the largest record and a
 * page) however long the trace grows.  Offsets in the file are absolute
 * and the window starts on a page boundary of the file (mmap's offset
 * must be one), at or below the record end.
 *
 * The chunk (default TW_DEFAULT_MMAP_CHUNK, 1 MiB) is the growth step.
 * Bigger: fewer growths (a fallocate, a munmap and an mremap, a pwrite of
 * the chunk and a madvise each) and a bigger window.  A process that dies
 * leaves up to one chunk of spaces before the `]`: valid JSON whitespace,
 * but disk space; tw_close makes the file exact.  The time spent writing
 * spaces does not depend on the chunk (every byte of the file is written
 * as a space first), and neither does the chance that a kill lands inside
 * a growth.  A record never straddles the tail: one larger than a chunk
 * grows the file by as many chunks as it needs (and the window with it).
 *
 * What a process killed at any instant leaves behind matters here: SIGKILL
 * can land between any two instructions, is acted on when a syscall or
 * page fault returns, and the page cache outlives the process (a power
 * loss needs msync: the sync option).  T is the tail; its core is its
 * non-whitespace part, "]" or "]}".
 *
 * Growth from size S to S':
 *
 *  1. fallocate(FALLOC_FL_KEEP_SIZE) reserves the blocks of [S, S')
 *     without changing the size, so a full disk is a clean -ENOSPC before
 *     the file is touched, and later stores into the mapping find their
 *     blocks (no SIGBUS; a copy-on-write file system such as btrfs can
 *     still fail them: its limit).  posix_fallocate is not used: it
 *     extends the size at once, so the new bytes would read as NULs after
 *     the `]` until overwritten.  Where KEEP_SIZE is unsupported the
 *     pwrite of step 3 allocates the blocks and reports a full disk.
 *  2. Move the window: munmap its pages wholly behind the page holding
 *     the record end, then mremap the rest to cover S' (mapping past the
 *     end of a file is allowed; nothing touches it yet).  The page holding
 *     the record end stays mapped, as does everything after it: the old
 *     tail, which step 3 may have to put back.  The file is unchanged; a
 *     failed mremap leaves the smaller window, which still holds the
 *     record end and the old tail (all that close writes).
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
 *     EOF"), and a kill lands in it far more often: at the exit of each
 *     syscall of the growth and at the first fault on the new page.
 *     Measured with a child writing flat out and killed at random, 4 KiB
 *     chunks: 28% of the files had spaces after the `]` that way; about 9%
 *     lack the `]` this way (12% with 1 MiB chunks and 1 KiB records).
 *
 * Records: the pages a record will cover are touched first (a space
 * stored over a space) so that page faults, where a kill is acted on,
 * happen while the file is valid; then the record is copied front to back
 * in 16-byte stores (glibc's memcpy may store a block's end first).  A
 * kill inside the copy leaves every complete record and a prefix of the
 * last one (under 1% of random kills): no order of stores avoids that,
 * since between the last record and the `]` only a complete ",{...}" is
 * valid.
 *
 * tw_close: the tail's whitespace right after the last record (valid);
 * blank the old core (one store; an array without `]`); the core right
 * after the last record (one store; valid again, with the old padding
 * after the `]` for the few instructions up to the next syscall);
 * ftruncate to the exact length (a syscall completes before a kill is
 * acted on).  So close has one window, between two adjacent stores.
 *
 * One store is one store instruction: the core is 1 byte in the array
 * form, 2 ("]}") stored as one uint16_t in the object form (whose windows
 * Perfetto cannot open either way: it never loads a truncated object).
 * __atomic_signal_fence keeps the compiler from reordering the stores: the
 * order in which a killed thread executed them is what counts.
 */
#include "internal.h"
#include "sink.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

/* Bytes of spaces that pwrite repeats to fill a chunk. */
#define SPACES 4096
/* iovecs per pwritev call when filling (about SPACES * IOVS bytes). */
#define IOVS 64

typedef struct mmap_sink {
  tw__sink base;
  int fd;
  int own_fd;              /* close fd at close */
  char *map;               /* shared mapping of the file from map_off: the
                              window (see the top of the file) */
  size_t map_len;          /* bytes mapped (may reach past the file end;
                              map_off + map_len >= size always) */
  off_t map_off;           /* page boundary at or below start, then at or
                              below end: the window's start */
  off_t sync_off;          /* map_off at the last sync: bytes below map_off
                              written since left the window unsynced */
  off_t start;             /* where the trace begins in the file */
  off_t end;               /* where the next record goes */
  off_t size;              /* file size: the tail ends here */
  size_t chunk;            /* growth step */
  size_t page;             /* page size */
  size_t core_off;         /* the tail's non-whitespace bytes: */
  size_t core_len;         /*   tail[core_off .. core_off + core_len) */
  int has_tail;            /* the first record is in and the core stored */
  int broken;              /* a failed growth could not be undone: the
                              file past end is unknown (close rewrites it) */
  int synced;              /* sync was asked for: close syncs its result */
  int err;                 /* first error; later writes fail fast */
  char *tail_ws;           /* the tail with its core blanked */
  char spaces[SPACES];     /* what pwrite fills new chunks with */
} mmap_sink;

/* Keep the stores before and after in program order. */
#define ORDER() __atomic_signal_fence(__ATOMIC_SEQ_CST)

/* Address of file offset off in the mapping. */
static char *at(const mmap_sink *m, off_t off)
{
  return m->map + (off - m->map_off);
}

static int is_ws(char c)
{
  return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

/* Store n bytes, as one store instruction when n is 1 or 2 (a tail core). */
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

/* Store a space at dst (over whitespace, so the document stays valid) to
 * take the page fault, if any, now. */
static void touch(char *dst)
{
  *(volatile char *)dst = ' ';
}

/* Copy a record front to back, 16 bytes per store, so that a kill in the
 * middle leaves a prefix of it (a record cut short, as Perfetto expects of
 * a truncated trace): memcpy may store the end of a block first. */
static void copy_forward(char *dst, const char *src, size_t len)
{
  size_t i;

  if (len < 16) {
    for (i = 0; i < len; i++) {
      dst[i] = src[i];
      ORDER();
    }
    return;
  }
  for (i = 0; i + 16 <= len; i += 16) {
    memcpy(dst + i, src + i, 16);
    ORDER();
  }
  if (i < len)                 /* the last 16, overlapping: same bytes */
    memcpy(dst + len - 16, src + len - 16, 16);
}

/* Write all iov at off, retrying EINTR and short writes.  Consumes iov.
 * Returns 0 or -errno. */
static int pwrite_all(int fd, struct iovec *iov, int n, off_t off)
{
  while (n > 0) {
    ssize_t k = pwritev(fd, iov, n, off);
    if (k < 0) {
      if (errno == EINTR)
        continue;
      return -errno;
    }
    if (k == 0)
      return -EIO;
    off += k;
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
      return pwrite_all(m->fd, iov, n, from);
    }
    if (n == IOVS) {
      if ((rc = pwrite_all(m->fd, iov, n, from)) != 0)
        return rc;
      from = pos;
      n = 0;
    }
  }
}

/* Move the window to [base, new_size): base is the page boundary at or
 * below end, new_size the file's size after the growth.  Returns 0 or
 * -errno; on error the window still covers [map_off, size) with map_off
 * at or below base (the records behind it may be unmapped already). */
static int move_window(mmap_sink *m, off_t base, off_t new_size)
{
  void *p;

#ifdef MREMAP_MAYMOVE
  /* What lies wholly behind base is never written again.  (Unmapping the
   * front of a mapping cannot need a new one; if it fails all the same,
   * the window only stays bigger.) */
  if (base > m->map_off &&
      munmap(m->map, (size_t)(base - m->map_off)) == 0) {
    m->map += base - m->map_off;
    m->map_len -= (size_t)(base - m->map_off);
    m->map_off = base;
  }
  if ((uint64_t)(new_size - m->map_off) > SIZE_MAX)
    return -EFBIG;
  if ((size_t)(new_size - m->map_off) <= m->map_len)
    return 0;
  /* The kept pages move with their page tables: no fault again. */
  p = mremap(m->map, m->map_len, (size_t)(new_size - m->map_off),
             MREMAP_MAYMOVE);
  if (p == MAP_FAILED)
    return -errno;
  m->map = p;
  m->map_len = (size_t)(new_size - m->map_off);
#else
  if ((uint64_t)(new_size - base) > SIZE_MAX)
    return -EFBIG;
  p = mmap(NULL, (size_t)(new_size - base), PROT_READ | PROT_WRITE,
           MAP_SHARED, m->fd, base);
  if (p == MAP_FAILED)
    return -errno;
  (void)munmap(m->map, m->map_len);
  m->map = p;
  m->map_off = base;
  m->map_len = (size_t)(new_size - base);
#endif
  return 0;
}

/* Make room before the tail for the bytes up to file offset need: grow
 * the file by whole chunks and move the tail to the new end (see the top
 * of the file for the order).  On error the file is as before when that
 * can be ensured, and the window covers it from the record end.  Returns
 * 0 or -errno. */
static int grow(mmap_sink *m, off_t need)
{
  size_t tl = m->base.tail_len;
  off_t old = m->size, new_size, from;
  uint64_t chunks;
  int rc;

  chunks = ((uint64_t)(need - old) + m->chunk - 1) / m->chunk;
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
  /* 2. Unmap the records behind the record end's page, map the new end
   *    before it exists. */
  if ((rc = move_window(m, m->end - m->end % (off_t)m->page,
                        new_size)) != 0)
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
    if (ftruncate(m->fd, old) != 0)
      m->broken = 1;
    else if (m->has_tail)
      store(at(m, from), m->base.tail + m->core_off, m->core_len);
    return rc;
  }
  m->size = new_size;
#ifdef MADV_POPULATE_WRITE
  /* 4. Map the new pages writable now, in one call, rather than taking a
   *    page fault every 4 KiB of records (Linux 5.14; best effort). */
  {
    off_t first = from - (from - m->map_off) % (off_t)m->page;
    (void)madvise(at(m, first), (size_t)(new_size - first),
                  MADV_POPULATE_WRITE);
  }
#endif
  return 0;
}

static int mmap_write(tw__sink *s, const char *data, size_t len)
{
  mmap_sink *m = (mmap_sink *)s;
  size_t k;
  off_t need;
  char *dst;
  int rc;

  if (m->err)
    return m->err;
  if (len == 0)
    return 0;                  /* every record is committed already */
  if ((uint64_t)len > (uint64_t)INT64_MAX - (uint64_t)m->end - s->tail_len) {
    m->err = -EFBIG;
    return m->err;
  }
  need = m->end + (off_t)len + (off_t)s->tail_len;
  if (need > m->size && (rc = grow(m, need)) != 0) {
    m->err = rc;
    return rc;
  }
  /* Fault in every page the record covers while the file is valid. */
  dst = at(m, m->end);
  for (k = len - 1; k >= m->page; k -= m->page)
    touch(dst + k);
  touch(dst + k);
  touch(dst);
  ORDER();
  copy_forward(dst, data, len);
  m->end += (off_t)len;
  s->out_bytes += len;
  if (!m->has_tail) {
    /* The first write (head and first record): the tail's whitespace is
     * in place since the growth, the core completes the document. */
    ORDER();
    store(at(m, m->size - (off_t)s->tail_len + (off_t)m->core_off),
          s->tail + m->core_off, m->core_len);
    m->has_tail = 1;
  }
  return 0;
}

/* Move the tail from file offset from back to to (to < from; the ranges
 * may overlap), the document valid before and after and, between the two
 * core stores, an array missing only its `]`.  See the top of the file. */
static void move_tail_back(mmap_sink *m, off_t from, off_t to)
{
  const char *t = m->base.tail;
  size_t tl = m->base.tail_len, cs = m->core_off, cl = m->core_len, i;
  off_t old_core = from + (off_t)cs, new_core = to + (off_t)cs;
  char blank[2];

  /* 1. The new tail's whitespace, and spaces where its core goes (which
   *    also faults its pages in), except over the old core. */
  for (i = 0; i < tl; i++) {
    off_t p = to + (off_t)i;
    if (p >= old_core && p < old_core + (off_t)cl)
      continue;
    *at(m, p) = i >= cs && i < cs + cl ? ' ' : t[i];
  }
  ORDER();
  /* 2. Blank the old core (with the new tail's whitespace where the new
   *    tail covers it): the one store that opens the window. */
  if (cl <= sizeof blank) {
    for (i = 0; i < cl; i++) {
      off_t p = old_core + (off_t)i;
      blank[i] = p >= to + (off_t)tl || p < to || (p >= new_core &&
                 p < new_core + (off_t)cl) ? ' ' : t[p - to];
    }
    store(at(m, old_core), blank, cl);
  } else {
    memset(at(m, old_core), ' ', cl);
  }
  ORDER();
  /* 3. The new core: the one store that closes it. */
  store(at(m, new_core), t + cs, cl);
  ORDER();
}

static int mmap_close(tw__sink *s)
{
  mmap_sink *m = (mmap_sink *)s;
  size_t tl = s->tail_len;
  off_t exact = m->start;
  int rc = m->err;

  if (m->has_tail) {
    exact = m->end + (off_t)tl;
    if (!m->broken) {
      /* The tail right after the last record, then cut what follows. */
      if (m->end != m->size - (off_t)tl)
        move_tail_back(m, m->size - (off_t)tl, m->end);
      if (ftruncate(m->fd, exact) != 0 && !rc)
        rc = -errno;
    } else {
      /* What follows the records is unknown: cut, then write the tail. */
      struct iovec t = { (void *)s->tail, tl };
      int rc2 = ftruncate(m->fd, exact) != 0 ? -errno
                : pwrite_all(m->fd, &t, 1, m->end);
      if (rc2 && !rc)
        rc = rc2;
    }
  } else if (ftruncate(m->fd, exact) != 0 && !rc) {
    rc = -errno;
  }
  /* If the writer syncs, the final tail and length must be durable too. */
  if (m->synced && !rc && fdatasync(m->fd) != 0)
    rc = -errno;
  if (munmap(m->map, m->map_len) != 0 && !rc)
    rc = -errno;
  if (m->own_fd && close(m->fd) != 0 && !rc && errno != EINTR)
    rc = -errno;
  free(m);
  return rc;
}

/* msync of the window: on Linux an fdatasync of that range, which also
 * covers what the growths wrote there with pwrite (the same page cache).
 * If the window has moved since the last sync, records written in
 * between may lie behind it, dirty in the page cache but no longer
 * mapped, where msync cannot reach them: fdatasync the whole file. */
static int mmap_sync(tw__sink *s)
{
  mmap_sink *m = (mmap_sink *)s;

  if (m->err)
    return m->err;
  m->synced = 1;
  if (m->size > m->map_off &&
      msync(m->map, (size_t)(m->size - m->map_off), MS_SYNC) != 0)
    m->err = -errno;
  else if (m->map_off > m->sync_off && fdatasync(m->fd) != 0)
    m->err = -errno;
  else
    m->sync_off = m->map_off;
  return m->err;
}

static void mmap_abandon(tw__sink *s)
{
  mmap_sink *m = (mmap_sink *)s;

  /* In a child, the mapping is the parent's file: unmap it untouched.
   * (MADV_DONTFORK would keep it out of the child altogether, but then
   * this munmap could hit whatever the child mapped at that address.) */
  (void)munmap(m->map, m->map_len);
  if (m->own_fd)
    close(m->fd);
  free(m);
}

static const tw__sink_ops mmap_ops = {
  "mmap", mmap_write, mmap_close, mmap_abandon, mmap_sync
};

int tw__sink_mmap_open(tw__sink **out, int fd, int own_fd,
                       const char *tail, size_t tail_len, size_t chunk)
{
  mmap_sink *m;
  struct stat st;
  long page = sysconf(_SC_PAGESIZE);
  int flags;
  off_t start;
  size_t i;
  void *p;

  if (fstat(fd, &st) != 0 || (flags = fcntl(fd, F_GETFL)) < 0)
    return -errno;
  /* A shared writable mapping needs a regular file open for reading and
   * writing; O_APPEND asks for a stream, which a mapping cannot be. */
  if (!S_ISREG(st.st_mode) || (flags & O_ACCMODE) != O_RDWR ||
      (flags & O_APPEND))
    return TW_ESINK;
  if ((start = lseek(fd, 0, SEEK_CUR)) < 0)
    return TW_ESINK;
  if (page <= 0)
    page = 4096;
  if (chunk < 4096)
    chunk = TW_DEFAULT_MMAP_CHUNK;

  if (!(m = calloc(1, sizeof *m + tail_len)))
    return -ENOMEM;
  m->base.ops = &mmap_ops;
  m->base.tail = tail;
  m->base.tail_len = tail_len;
  m->base.streaming = 0;
  m->base.unbuffered = 1;
  m->fd = fd;
  m->own_fd = own_fd;
  m->start = m->end = m->size = start;
  m->map_off = m->sync_off = start - start % page;
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
      tail_len >= 4096) {
    free(m);
    return -EINVAL;
  }
  memcpy(m->tail_ws, tail, tail_len);
  memset(m->tail_ws + m->core_off, ' ', m->core_len);

  /* Map the page holding start now, past the end of the file if need be
   * (mapping there is allowed, touching is not): a file that cannot be
   * mapped is refused before anything is written.  The first write grows
   * the file. */
  m->map_len = (size_t)(start - m->map_off) + (size_t)page;
  p = mmap(NULL, m->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
           m->map_off);
  if (p == MAP_FAILED) {
    int e = errno;
    free(m);
    return e == EACCES || e == ENODEV || e == EPERM ? TW_ESINK : -e;
  }
  m->map = p;
  /* Nothing may follow the tail: drop what the file held past start. */
  if (st.st_size > start && ftruncate(fd, start) != 0) {
    int e = errno;
    (void)munmap(m->map, m->map_len);
    free(m);
    return -e;
  }
  *out = &m->base;
  return 0;
}
