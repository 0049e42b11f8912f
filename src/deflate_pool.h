/* deflate_pool.h -- parallel deflate for the gzip sink, the way pigz does
 *
 * A commit's input is cut into blocks; each block is deflated by an
 * independent raw-deflate stream primed with the input that precedes it
 * (deflateSetDictionary: TW__DEFLATE_PRIME bytes) and ended with
 * Z_SYNC_FLUSH, so it
 * ends byte-aligned and not final.  Joined in order, the blocks are one
 * valid deflate stream, as good as one stream but for a block header and
 * a sync marker per block; the CRC-32 of the input is the blocks' CRCs
 * joined with crc32_combine.
 *
 * The thread that runs a commit deflates blocks too; the pool adds
 * worker threads (with every signal blocked, so that no signal handler
 * runs on them).  Nothing here is async-signal-safe: the crash hook
 * never uses the pool (sink_gzip.c deflates inline).
 */
#ifndef TW_DEFLATE_POOL_H
#define TW_DEFLATE_POOL_H

#include <stddef.h>
#include <sys/uio.h>
#include <zlib.h>

/* deflate's window: the most history that matters. */
#define TW__DEFLATE_WINDOW 32768u
/* The history a block is primed with: half the window.  Priming costs a
 * hash insertion per byte, and a dictionary and block that overflow
 * zlib's 64 KiB buffer a window slide on top.  Measured (zlib 1.2.13,
 * level 1, trace JSON; callgrind, 200k events): 32 KiB before 32 KiB
 * blocks took longer than deflating them, and 1.12x the instructions of
 * one stream with 128 KiB blocks; 16 KiB takes 0.93x-0.96x of one
 * stream's instructions, the file 0.05% larger than with 32 KiB. */
#define TW__DEFLATE_PRIME 16384u
/* The largest block: a commit of C compressing threads is cut into
 * blocks of its size / C, at most this (more blocks than threads keep
 * them all busy to the end). */
#define TW__DEFLATE_BLOCK_MAX (128u * 1024u)

typedef struct tw__dpool tw__dpool;

/* A pool of workers extra threads (1..TW__DEFLATE_WORKERS_MAX) deflating
 * at level, with their streams and buffers; the threads start here.
 * Returns 0 and *out, or -ENOMEM, TW_EZLIB or -errno (pthread_create). */
int tw__dpool_new(tw__dpool **out, int level, unsigned workers);
#define TW__DEFLATE_WORKERS_MAX 16u

/* How many threads deflate a commit: the workers and the caller. */
unsigned tw__dpool_threads(const tw__dpool *p);

/* Deflate iov[0..n) (total bytes) as blocks of about block bytes, the
 * first primed with hist[0..hist_len) (hist_len <= TW__DEFLATE_WINDOW:
 * the input that came before), and append the output, sync-flushed, to
 * *out (*out_len bytes used of *out_cap, grown with realloc).  *crc:
 * the CRC-32 so far, updated.  Waits for every block.  Returns 0,
 * -ENOMEM or TW_EZLIB; on error *out_len may have grown. */
int tw__dpool_deflate(tw__dpool *p, const struct iovec *iov, int n,
                      size_t total, size_t block,
                      const unsigned char *hist, size_t hist_len,
                      unsigned char **out, size_t *out_len, size_t *out_cap,
                      uLong *crc);

/* Stop the workers, join them and free p. */
void tw__dpool_free(tw__dpool *p);
/* In a child after fork (the workers are the parent's): free p's
 * memory without touching its threads. */
void tw__dpool_abandon(tw__dpool *p);

#endif /* TW_DEFLATE_POOL_H */
