/* deflate_pool.c -- parallel deflate for the gzip sink (deflate_pool.h)
 *
 * A run (one commit) numbers its blocks 0..njobs-1.  Threads -- the
 * workers and the caller -- claim the next block under the pool's lock
 * and deflate it into one of ring job records (block j into record
 * j % ring), unlocked; the caller appends the records' output to the
 * commit's in block order as each is done, and a record is claimed again
 * only once the caller has taken its output (j < taken + ring).
 *
 * Lock: p->lock guards everything below it in struct tw__dpool and the
 * job records' done and err; a job record's output is written only by the
 * thread that claimed it, and read by the caller after it saw done (both
 * under the lock, which orders them).  The input (iov, hist) is the
 * caller's and stays put until the run ends: the caller waits for every
 * claimed block, even after an error.
 */
#include "internal.h"
#include "deflate_pool.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* Room past deflateBound for the sync flush marker and pending bits. */
#define DP_FLUSH_SLACK 64

/* One thread's deflate state. */
typedef struct dp_ctx {
  tw__dpool *pool;         /* the pool it belongs to */
  z_stream zs;             /* raw deflate (windowBits -15) */
  int zs_ok;               /* zs was initialised */
  unsigned char *dict;     /* TW__DEFLATE_PRIME bytes: a block's history */
} dp_ctx;

/* A block's result. */
typedef struct dp_job {
  unsigned char *out;      /* its deflate output (out_cap bytes) */
  size_t out_len;          /* bytes of it */
  uLong crc;               /* CRC-32 of the block's input */
  size_t len;              /* the block's input bytes */
  size_t done;             /* block number + 1 once deflated (lock) */
  int err;                 /* 0 or its error (lock) */
} dp_job;

struct tw__dpool {
  unsigned workers;        /* worker threads */
  pthread_t *tids;         /* theirs */
  unsigned started;        /* how many were started */
  dp_ctx *ctx;             /* workers + 1: [0] is the caller's */
  dp_job *jobs;            /* ring records */
  unsigned ring;           /* how many */
  size_t out_cap;          /* bytes of each record's out */
  unsigned char *mem;      /* one allocation for dicts and outs */

  pthread_mutex_t lock;
  pthread_cond_t work;     /* workers wait for a block to claim */
  pthread_cond_t done;     /* the caller waits for a block to be done */
  int stop;                /* the workers are to exit */
  int running;             /* a run is under way */
  /* The run under way: */
  const struct iovec *iov; /* its input */
  int n;
  size_t total;            /* bytes of input */
  size_t block;            /* bytes of each block (the last: what is left) */
  const unsigned char *hist; /* the input before iov */
  size_t hist_len;
  size_t njobs;            /* blocks */
  size_t next;             /* the next block to claim */
  size_t taken;            /* blocks whose output the caller has taken */
  unsigned busy;           /* blocks claimed and not done */
  int failed;              /* an error: claim no more blocks */
};

/* Copy the run's logical input [from, from + len) into dst: offsets
 * below 0 are in hist (which ends at offset 0), the rest in iov. */
static void copy_range(const tw__dpool *p, long long from, size_t len,
                       unsigned char *dst)
{
  if (from < 0) {
    size_t h = (size_t)-from < len ? (size_t)-from : len;

    memcpy(dst, p->hist + p->hist_len - (size_t)-from, h);
    dst += h;
    len -= h;
    from = 0;
  }
  for (int i = 0; i < p->n && len > 0; i++) {
    size_t seg = p->iov[i].iov_len;

    if ((size_t)from >= seg) {
      from -= (long long)seg;
      continue;
    }
    size_t k = seg - (size_t)from < len ? seg - (size_t)from : len;
    memcpy(dst, (const char *)p->iov[i].iov_base + from, k);
    dst += k;
    len -= k;
    from = 0;
  }
}

/* Deflate next_in..avail_in of c's stream with flush into job's out.
 * Returns 0 or TW_EZLIB. */
static int dp_deflate(dp_ctx *c, dp_job *job, size_t out_cap, int flush)
{
  int zr;

  c->zs.next_out = job->out + job->out_len;
  c->zs.avail_out = (uInt)(out_cap - job->out_len);
  zr = deflate(&c->zs, flush);
  job->out_len = out_cap - c->zs.avail_out;
  /* The record holds the bound: the input is all taken, room is left. */
  if ((zr != Z_OK && zr != Z_BUF_ERROR) || c->zs.avail_in != 0 ||
      c->zs.avail_out == 0)
    return TW_EZLIB;
  return 0;
}

/* Deflate block j of the run into job with c.  Unlocked; returns 0 or an
 * error. */
static int dp_block(tw__dpool *p, dp_ctx *c, size_t j, dp_job *job)
{
  size_t start = j * p->block;
  size_t end = start + p->block < p->total ? start + p->block : p->total;
  size_t dlen = p->hist_len + start;
  size_t off = start, left = end - start;
  int rc = 0;

  if (dlen > TW__DEFLATE_PRIME)
    dlen = TW__DEFLATE_PRIME;
  job->out_len = 0;
  job->len = left;
  job->crc = crc32(0L, Z_NULL, 0);
  if (deflateReset(&c->zs) != Z_OK)
    return TW_EZLIB;
  if (dlen) {
    copy_range(p, (long long)start - (long long)dlen, dlen, c->dict);
    if (deflateSetDictionary(&c->zs, c->dict, (uInt)dlen) != Z_OK)
      return TW_EZLIB;
  }
  for (int i = 0; i < p->n && left > 0 && rc == 0; i++) {
    size_t seg = p->iov[i].iov_len;

    if (off >= seg) {
      off -= seg;
      continue;
    }
    size_t k = seg - off < left ? seg - off : left;
    const Bytef *src = (const Bytef *)p->iov[i].iov_base + off;

    c->zs.next_in = (Bytef *)(uintptr_t)src;
    c->zs.avail_in = (uInt)k;
    rc = dp_deflate(c, job, p->out_cap, Z_NO_FLUSH);
    job->crc = crc32_z(job->crc, src, k);
    left -= k;
    off = 0;
  }
  if (rc == 0) {
    c->zs.next_in = Z_NULL;
    c->zs.avail_in = 0;
    rc = dp_deflate(c, job, p->out_cap, Z_SYNC_FLUSH);
  }
  return rc;
}

/* Whether a block can be claimed now.  Lock held. */
static int dp_claimable(const tw__dpool *p)
{
  return p->running && !p->failed && p->next < p->njobs &&
         p->next < p->taken + p->ring;
}

/* Claim the next block, deflate it with c, mark it done.  Lock held on
 * entry and exit, released while deflating. */
static void dp_claim_and_run(tw__dpool *p, dp_ctx *c)
{
  size_t j = p->next++;
  dp_job *job = &p->jobs[j % p->ring];
  int rc;

  p->busy++;
  pthread_mutex_unlock(&p->lock);
  rc = dp_block(p, c, j, job);
  pthread_mutex_lock(&p->lock);
  job->err = rc;
  job->done = j + 1;
  if (rc)
    p->failed = 1;
  p->busy--;
}

static void *dp_worker(void *arg)
{
  dp_ctx *c = arg;
  tw__dpool *p = c->pool;

  pthread_mutex_lock(&p->lock);
  for (;;) {
    while (!p->stop && !dp_claimable(p))
      pthread_cond_wait(&p->work, &p->lock);
    if (p->stop)
      break;
    dp_claim_and_run(p, c);
    pthread_cond_signal(&p->done);
  }
  pthread_mutex_unlock(&p->lock);
  return NULL;
}

unsigned tw__dpool_threads(const tw__dpool *p)
{
  return p->workers + 1;
}

int tw__dpool_deflate(tw__dpool *p, const struct iovec *iov, int n,
                      size_t total, size_t block,
                      const unsigned char *hist, size_t hist_len,
                      unsigned char **out, size_t *out_len, size_t *out_cap,
                      uLong *crc)
{
  int rc = 0;

  if (block > TW__DEFLATE_BLOCK_MAX)
    block = TW__DEFLATE_BLOCK_MAX;
  if (block == 0 || total == 0)
    return 0;
  /* Room for every block's output at once: one allocation at most. */
  {
    size_t nb = (total + block - 1) / block;
    size_t want = nb * p->out_cap;
    if (want / p->out_cap != nb || want > SIZE_MAX / 2 - *out_len)
      return -ENOMEM;
    if (*out_cap - *out_len < want) {
      size_t cap = *out_len + want;
      unsigned char *q = realloc(*out, cap);
      if (!q)
        return -ENOMEM;
      *out = q;
      *out_cap = cap;
    }
  }
  pthread_mutex_lock(&p->lock);
  p->iov = iov;
  p->n = n;
  p->total = total;
  p->block = block;
  p->hist = hist;
  p->hist_len = hist_len > TW__DEFLATE_WINDOW ? TW__DEFLATE_WINDOW : hist_len;
  if (hist_len > p->hist_len)
    p->hist += hist_len - p->hist_len;
  p->njobs = (total + block - 1) / block;
  p->next = p->taken = 0;
  p->failed = 0;
  for (unsigned i = 0; i < p->ring; i++)
    p->jobs[i].done = 0;             /* not the last run's blocks */
  p->running = 1;
  pthread_cond_broadcast(&p->work);
  while (p->taken < p->njobs) {
    dp_job *job = &p->jobs[p->taken % p->ring];

    if (job->done == p->taken + 1) {
      if (job->err) {
        rc = job->err;
        break;
      }
      /* The record is not claimed again before taken grows: copy it out
       * unlocked. */
      pthread_mutex_unlock(&p->lock);
      memcpy(*out + *out_len, job->out, job->out_len);
      *out_len += job->out_len;
      *crc = crc32_combine(*crc, job->crc, (z_off_t)job->len);
      pthread_mutex_lock(&p->lock);
      p->taken++;
      if (dp_claimable(p))
        pthread_cond_signal(&p->work);
    } else if (p->failed) {
      rc = TW_EZLIB;                 /* an earlier block's, reported below */
      for (size_t j = p->taken; j < p->next; j++)
        if (p->jobs[j % p->ring].done == j + 1 && p->jobs[j % p->ring].err)
          rc = p->jobs[j % p->ring].err;
      if (p->busy == 0)
        break;
      pthread_cond_wait(&p->done, &p->lock);
    } else if (dp_claimable(p)) {
      dp_claim_and_run(p, &p->ctx[0]);
    } else {
      pthread_cond_wait(&p->done, &p->lock);
    }
  }
  /* After an error, wait until no worker reads the input. */
  p->failed = 1;
  while (p->busy)
    pthread_cond_wait(&p->done, &p->lock);
  p->running = 0;
  p->iov = NULL;
  p->hist = NULL;
  pthread_mutex_unlock(&p->lock);
  return rc;
}

/* Free what tw__dpool_new allocated, ending the streams it began. */
static void dp_release(tw__dpool *p)
{
  for (unsigned i = 0; i <= p->workers; i++)
    if (p->ctx[i].zs_ok)
      (void)deflateEnd(&p->ctx[i].zs);
  free(p->mem);
  free(p->ctx);
  free(p->jobs);
  free(p->tids);
  free(p);
}

int tw__dpool_new(tw__dpool **out, int level, unsigned workers)
{
  tw__dpool *p;
  sigset_t all, old;
  size_t per;
  int rc = 0;

  if (workers < 1 || workers > TW__DEFLATE_WORKERS_MAX)
    return -EINVAL;
  if (!(p = calloc(1, sizeof *p)))
    return -ENOMEM;
  p->workers = workers;
  p->ring = 2 * (workers + 1);
  if (!(p->ctx = calloc(workers + 1, sizeof *p->ctx)) ||
      !(p->jobs = calloc(p->ring, sizeof *p->jobs)) ||
      !(p->tids = calloc(workers, sizeof *p->tids))) {
    dp_release(p);
    return -ENOMEM;
  }
  for (unsigned i = 0; i <= workers; i++) {
    int zr = deflateInit2(&p->ctx[i].zs, level, Z_DEFLATED, -15, 8,
                          Z_DEFAULT_STRATEGY);
    if (zr != Z_OK) {
      dp_release(p);
      return zr == Z_MEM_ERROR ? -ENOMEM : TW_EZLIB;
    }
    p->ctx[i].zs_ok = 1;
  }
  p->out_cap = deflateBound(&p->ctx[0].zs, TW__DEFLATE_BLOCK_MAX) +
               DP_FLUSH_SLACK;
  per = TW__DEFLATE_PRIME;
  if (!(p->mem = malloc((workers + 1) * per + p->ring * p->out_cap))) {
    dp_release(p);
    return -ENOMEM;
  }
  for (unsigned i = 0; i <= workers; i++) {
    p->ctx[i].pool = p;
    p->ctx[i].dict = p->mem + i * per;
  }
  for (unsigned i = 0; i < p->ring; i++)
    p->jobs[i].out = p->mem + (workers + 1) * per + i * p->out_cap;
  if (pthread_mutex_init(&p->lock, NULL) != 0) {
    dp_release(p);
    return -ENOMEM;
  }
  if (pthread_cond_init(&p->work, NULL) != 0) {
    pthread_mutex_destroy(&p->lock);
    dp_release(p);
    return -ENOMEM;
  }
  if (pthread_cond_init(&p->done, NULL) != 0) {
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->lock);
    dp_release(p);
    return -ENOMEM;
  }
  /* The workers start with every signal blocked (they inherit the mask):
   * a process-directed signal goes to another thread, and the crash
   * hook's handler never runs on a worker. */
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  for (unsigned i = 0; i < workers && rc == 0; i++) {
    rc = -pthread_create(&p->tids[i], NULL, dp_worker, &p->ctx[i + 1]);
    if (rc == 0)
      p->started++;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc) {
    tw__dpool_free(p);
    return rc;
  }
  *out = p;
  return 0;
}

void tw__dpool_free(tw__dpool *p)
{
  if (!p)
    return;
  pthread_mutex_lock(&p->lock);
  p->stop = 1;
  pthread_cond_broadcast(&p->work);
  pthread_mutex_unlock(&p->lock);
  for (unsigned i = 0; i < p->started; i++)
    pthread_join(p->tids[i], NULL);
  pthread_cond_destroy(&p->done);
  pthread_cond_destroy(&p->work);
  pthread_mutex_destroy(&p->lock);
  dp_release(p);
}

void tw__dpool_abandon(tw__dpool *p)
{
  if (p)
    dp_release(p);           /* the lock and threads are the parent's */
}
