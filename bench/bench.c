/* bench.c -- tracewriter's benchmark: one table, with baselines and ratios
 *
 * Run by `make bench` (never by `make check`).  Prints one table: for each
 * workload, each sink and each directory, the median of BENCH_REPS runs of
 * ns/event, MB/s, bytes/event, allocations/event, peak RSS, and a producer's
 * per-event latency; then the baselines measured in the same run with the
 * same events, the ratios to them; the throughput of the thread workloads
 * relative to one thread's; and each target of the performance issues
 * (5, 12) with PASS or MISS.  See bench/README.md.
 *
 * WORKLOADS -- fixed shapes: keep them exactly as they are, so figures stay
 * comparable across changes.  Every event carries an explicit ts (and dur),
 * so the bytes are the same in every sink and in every baseline; pid and
 * tid are the writer's defaults (getpid(), the kernel thread id); the
 * writer's process_name is "bench".
 *
 *   A  one thread; event i (0 <= i < N) is a complete event:
 *        tw_complete(w, "bench", NAME[i % 8], TS(i), DUR(i), NULL, 0)
 *      NAME = matmul softmax rms_norm rope attn mlp embed sample,
 *      TS(i) = i*1000 + 1234 ns, DUR(i) = 500 + i%7 ns.  About 93 bytes:
 *      {"ph":"X","name":"rope","cat":"bench","ts":3.234,"dur":0.503,
 *       "pid":123,"tid":123}
 *   B  as A with two args: {"tokens": i (int), "layer": "attn" (string)}.
 *   Ck as A from k = 2, 4, 8 or 16 threads (the main thread, producer 0,
 *      and k-1 more), N/k each: thread t writes the events i = k*j + t,
 *      j = 0 .. N/k-1, in order (N rounded down to a multiple of k).  The
 *      producers are created before the timed region and wait on a barrier
 *      that releases them right after tw_open.  C2 is the C of earlier
 *      versions (BENCH_WORKLOADS accepts C for it).
 *   D  the demo's mix of phases ("tracewriter demo"), on one thread, cut at
 *      exactly N events: 2 metadata events (thread_name, thread_sort_index),
 *      then per request r = 1, 2, ... (base = r * 10 ms, bits = mix(r)):
 *        b  async begin  cat request, the route's name, id r,
 *                        args {method, path}
 *        s  flow start   cat flow, "request", id r
 *        C  queue_depth {depth}     C  inflight {requests}
 *        X  accept       (10..40 us)
 *        C  queue_depth {depth}
 *        f  flow end     "bp":"e"
 *        X  parse (30..120 us)   X  db.query {sql, rows, cache_hit}
 *        X  render (40..200 us)  X  handle (the sum)
 *        I  slow request, scope g {id, path, ms (double)}: 1 request in 40
 *        e  async end {status (int)}
 *        C  inflight {requests}
 *      About 13 events per request, 117 bytes per event on average.
 *   E  the formatter's slower paths (--one only: make bench-callgrind; not
 *      in the table): one thread, event i is
 *        tw_complete(w, "bench", E_NAME[i % 8], TS(i), DUR(i), args, k)
 *      E_NAME = matmul, say "hi", C:\tmp\rope, größe (UTF-8), attn,
 *      mlp<TAB>fused, embed, 注意 (UTF-8): half of them escaped or
 *      checked as UTF-8; args {"ms": (i % 1000) * 0.5 (double: whole or
 *      .5), "hit": i % 3 == 0 (bool), "note": "cache \"miss\"\n" when
 *      i % 4 == 0, else "ok"}, and when i % 8 == 0 (k = 4, else 3) a
 *      fourth, "loss": (i % 1000) / 7.0 (a double of 16 or 17 digits).
 *   AT A's events with the library's timestamps (--one only: make
 *      bench-callgrind): event i is tw_begin (i even) or tw_end (i odd) of
 *      cat "bench", name NAMES[(i / 2) % 8], no args, ts not given.
 *   AS as AT through TW_SCOPE: event i is the 'X' of a span of NAMES[i % 8]
 *      (tw_span_begin, tw_span_end: two clock reads an event).
 *
 * SINKS -- options strings given to tw_options_parse:
 *   file     "sink=file,commit=inline"
 *   file-bg  "sink=file,commit=background"
 *   mmap     "sink=mmap"
 *   gzip     "sink=gzip" (level and commit: the library's defaults)
 * A sink whose tw_open returns TW_ESINK shows "n/a (sink not available)".
 *
 * WHAT IS TIMED -- a tracewriter run: from before tw_open to after tw_close
 * (the open, every event, the last commit and the close).  Each run is a
 * forked child of a parent that holds no large buffer, so its peak RSS is
 * the child's own (ru_maxrss from wait4).  The CPU time of the process
 * (CLOCK_PROCESS_CPUTIME_ID, every thread) over the same region is shown
 * too: it is what other load on the machine disturbs least.  Heap
 * allocations are counted by interposing malloc/calloc/realloc/memalign in
 * this program, between just after tw_open and just before tw_close; those
 * a producer makes inside its first event (its staging: the library
 * allocates it then) are counted apart, as startup allocations per
 * thread, so alloc/ev is the steady state.  Latency runs are separate
 * runs: each tw_* call of producer 0 (the main thread) is timed with rdtsc
 * (x86-64) or clock_gettime into a histogram; throughput runs are not.
 *
 * BASELINES, same run, same events, same directory:
 *   fprintf   one fprintf(3) per event to a FILE * with the default stdio
 *             buffer, printing the same fields in the same order (the same
 *             bytes: checked at start), head and tail included: a valid
 *             JSON file.  C2: both threads on one FILE *.  Not run for
 *             C4, C8, C16 (stdio's lock, not a baseline of interest).
 *   write(2)  the bytes the file sink produced, read into memory first (not
 *             timed), then open + write(2) in 64 KiB chunks + close.
 *   mmap-cpy  the same bytes: open + posix_fallocate(size) + mmap + one
 *             memcpy + munmap + close, all timed: the mmap sink must also
 *             reserve blocks and map them.
 *   zlib      the same bytes through zlib's deflate at the gzip sink's
 *             level (gzip wrapper), 64 KiB in and out, output written with
 *             write(2): one core, no formatting.  Timed as above.
 *   gzip -1, gzip -6   sizes only, of the same bytes, by gzip(1); /dev/shm,
 *             A, B, C2, D only.
 * A bound runs when a selected sink is measured against it (write(2): file
 * and file-bg; mmap-cpy: mmap; zlib: gzip).
 *
 * THREADS -- after the table, events per second of C2, C4, C8, C16 divided
 * by A's, per sink and directory (and their CPU time per event divided by
 * A's).
 *
 * PEAK RSS -- on /dev/shm, one run at N = 100k and one at BENCH_RSS_N: A
 * through every sink, and C8 through file and mmap.
 *
 * TARGETS -- issue 12's (threads) P1-P8, then issue 5's still in force
 * (T1, T2, T4, T7, T8, T12); T3, T9 and T10 became P6, P8 and P7, and
 * P1-P4 replace T5, T6 and T11.  The list is in bench/README.md.
 *
 * COST OF SERVER OPTIONS -- a section after the table: workload A on the
 * file-bg sink, in both directories, plain and with each of
 *   flush    "flush=100ms"          a commit at least every 100 ms
 *   sync     "sync"                 fdatasync at every commit
 *   rotate   "rotate=8MiB,keep=3"   a new file every 8 MiB, 3 kept
 * added to its options; the same reps, interleaved, timed as above; the
 * median ns/event of each and its ratio to plain's.  Options that
 * tw_options_parse or tw_open refuses make the rotate row "n/a (rotation
 * not available)" (an error for the others).  The files rotation made are
 * counted and removed after each run.
 *
 * Environment: BENCH_N (events per run, default 1000000), BENCH_REPS
 * (default 5), BENCH_REPS_MANY (the repetitions of C8 and C16, default
 * BENCH_REPS), BENCH_DIR (the disk directory, default /var/tmp), BENCH_SHM
 * (default /dev/shm), BENCH_RSS_N (the large N of the RSS check, default
 * 10000000), BENCH_WORKLOADS (default A,B,C2,C4,C8,C16,D: names, commas
 * optional, C alone is C2, so ABCD still works), BENCH_SINKS (default
 * file,file-bg,mmap,gzip; also file-bgc and gzip-c: file-bg and gzip
 * with formatter=committer, to compare), BENCH_OPTIONS (an options string added to every
 * sink's, for experiments: "buffer=1MiB"; the targets assume none),
 * BENCH_COSTS (the cost section's rows, default flush,sync,rotate; none
 * skips it).  BENCH_WORKLOADS=none skips the table, its checks and its
 * targets, leaving the cost section.
 *
 *   bench                 the whole benchmark
 *   bench --one W SINK DIR   one run in this process (for profilers),
 *                            N from BENCH_N; W: A B C2 C4 C8 C16 D (or C)
 */
#define _GNU_SOURCE
#include "tracewriter.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#if defined(__x86_64__) || defined(__i386__)
# include <x86intrin.h>
# define HAVE_RDTSC 1
#else
# define HAVE_RDTSC 0
#endif

#define MAX_REPS 25
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define CHUNK (64u * 1024u)      /* the write bound's write(2) size */

/* ================================================== heap allocation count */

/* Every malloc, calloc, realloc and memalign of the process, libraries
 * included: this program's definitions take precedence over glibc's.
 * A thread that points alloc_into at a counter of its own counts its
 * allocations there instead (a producer's first event: its staging). */
static unsigned long alloc_count;
static __thread unsigned long *alloc_into;
#if defined(__has_feature)
# if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
     __has_feature(memory_sanitizer)
#  define BENCH_SANITIZED 1
# endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
# define BENCH_SANITIZED 1
#endif

/* Not under a sanitizer: it has its own malloc. */
#if defined(__GLIBC__) && !defined(BENCH_SANITIZED)
# define HAVE_ALLOC_COUNT 1
void *memalign(size_t align, size_t n);  /* <malloc.h>; ours is below */
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t k, size_t n);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);

static inline void count_alloc(void)
{
  if (alloc_into)
    ++*alloc_into;
  else
    __atomic_fetch_add(&alloc_count, 1, __ATOMIC_RELAXED);
}

void *malloc(size_t n) { count_alloc(); return __libc_malloc(n); }
void *calloc(size_t k, size_t n) { count_alloc(); return __libc_calloc(k, n); }
void *realloc(void *p, size_t n) { count_alloc(); return __libc_realloc(p, n); }
void *memalign(size_t a, size_t n)
{
  count_alloc();
  return __libc_memalign(a, n);
}
void *aligned_alloc(size_t a, size_t n)
{
  count_alloc();
  return __libc_memalign(a, n);
}
int posix_memalign(void **out, size_t a, size_t n)
{
  void *p;
  if (a < sizeof(void *) || (a & (a - 1)))
    return EINVAL;
  count_alloc();
  if (!(p = __libc_memalign(a, n)))
    return ENOMEM;
  *out = p;
  return 0;
}
#else
# define HAVE_ALLOC_COUNT 0
#endif

static unsigned long allocs_now(void)
{
  return __atomic_load_n(&alloc_count, __ATOMIC_RELAXED);
}

/* ================================================================= timing */

static uint64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CPU time of the whole process (every thread), in ns. */
static uint64_t cpu_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The latency timer: ticks, and ticks -> ns as (t * tick_mult) >> 24. */
static uint64_t tick_mult = 1u << 24;
static double tick_ghz = 1.0;

static inline uint64_t ticks(void)
{
#if HAVE_RDTSC
  return __rdtsc();
#else
  return now_ns();
#endif
}

static void calibrate_ticks(void)
{
#if HAVE_RDTSC
  uint64_t t0 = now_ns(), c0 = ticks(), t1, c1;
  do
    t1 = now_ns();
  while (t1 - t0 < 50000000u);              /* 50 ms */
  c1 = ticks();
  tick_ghz = (double)(c1 - c0) / (double)(t1 - t0);
  tick_mult = (uint64_t)(16777216.0 / tick_ghz);
#endif
}

static inline uint64_t ticks_to_ns(uint64_t t)
{
  return (t * tick_mult) >> 24;
}

/* A latency histogram: 1 ns buckets below LIN_NS, then 16 per power of 2. */
#define LIN_NS 16384u
#define LOG_SUB 16u
#define HIST_SIZE (LIN_NS + 50u * LOG_SUB)
typedef struct hist {
  uint32_t b[HIST_SIZE];
  uint64_t total;
} hist;

static hist lat_hist;                       /* the producer's, in BSS */

static inline void hist_add(hist *h, uint64_t ns)
{
  unsigned i;
  if (ns < LIN_NS) {
    i = (unsigned)ns;
  } else {
    unsigned lg = 63u - (unsigned)__builtin_clzll(ns);     /* >= 14 */
    unsigned sub = (unsigned)(ns >> (lg - 4)) & (LOG_SUB - 1);
    i = LIN_NS + (lg - 14u) * LOG_SUB + sub;
    if (i >= HIST_SIZE)
      i = HIST_SIZE - 1;
  }
  h->b[i]++;
  h->total++;
}

/* The lower edge, in ns, of bucket i. */
static uint64_t hist_value(unsigned i)
{
  unsigned lg, sub;
  if (i < LIN_NS)
    return i;
  lg = (i - LIN_NS) / LOG_SUB + 14u;
  sub = (i - LIN_NS) % LOG_SUB;
  return ((uint64_t)1 << lg) + ((uint64_t)sub << (lg - 4));
}

static uint64_t hist_quantile(const hist *h, double q)
{
  uint64_t want = (uint64_t)(q * (double)h->total + 0.999999), seen = 0;
  if (want == 0)
    want = 1;
  for (unsigned i = 0; i < HIST_SIZE; i++) {
    seen += h->b[i];
    if (seen >= want)
      return hist_value(i);
  }
  return hist_value(HIST_SIZE - 1);
}

/* ============================================================== workloads */

static const char *const NAMES[8] = {
  "matmul", "softmax", "rms_norm", "rope", "attn", "mlp", "embed", "sample"
};
#define TS(i) ((uint64_t)(i) * 1000u + 1234u)
#define DUR(i) (500u + (uint64_t)(i) % 7u)
#define PROCESS_NAME "bench"

/* The workloads, in the table's order.  full: with the fprintf baseline
 * and the gzip(1) sizes (the thread workloads beyond C2 are measured
 * against the bounds only). */
typedef struct wldef {
  const char *name;
  int threads;             /* producers */
  int full;
} wldef;

static const wldef WLS[] = {
  { "A", 1, 1 }, { "B", 1, 1 }, { "C2", 2, 1 }, { "C4", 4, 0 },
  { "C8", 8, 0 }, { "C16", 16, 0 }, { "D", 1, 1 },
  { "E", 1, 0 }, { "AT", 1, 0 }, { "AS", 1, 0 },
};
/* The table's workloads are W_A .. W_D; E is measured by --one only (the
 * formatter's instructions, make bench-callgrind), so it has no fprintf
 * baseline. */
enum { W_A, W_B, W_C2, W_C4, W_C8, W_C16, W_D, NWLS, W_E = NWLS, W_AT, W_AS,
       NWLS_ONE };
#define MAX_THREADS 16
#define IS_THREADS(wl) ((wl) >= W_C2 && (wl) <= W_C16)

/* The events a run of workload wl writes for n asked: a multiple of its
 * threads. */
static uint64_t wl_events(int wl, uint64_t n)
{
  return n / (uint64_t)WLS[wl].threads * (uint64_t)WLS[wl].threads;
}

/* Workload name[0..len) (C alone is C2) among the first nwls, or -1. */
static int wl_find(const char *name, size_t len, int nwls)
{
  if (len == 1 && name[0] == 'C')
    return W_C2;
  for (int w = 0; w < nwls; w++)
    if (strlen(WLS[w].name) == len && strncmp(WLS[w].name, name, len) == 0)
      return w;
  return -1;
}

/* --- workload D: the demo's mix, deterministic */

struct route {
  const char *method;
  const char *name;
  const char *path;
  int with_id;
  const char *sql;
  int status;
};

static const struct route ROUTES[5] = {
  { "GET", "GET /api/users/:id", "/api/users/", 1,
    "SELECT * FROM users WHERE id = ?", 200 },
  { "GET", "GET /api/items", "/api/items", 0,
    "SELECT id, name, price FROM items ORDER BY name LIMIT 50", 200 },
  { "POST", "POST /api/orders", "/api/orders", 0,
    "INSERT INTO orders (user_id, item_id, qty) VALUES (?, ?, ?)", 201 },
  { "GET", "GET /api/orders/:id", "/api/orders/", 1,
    "SELECT * FROM orders WHERE id = ?", 200 },
  { "DELETE", "DELETE /api/sessions/:id", "/api/sessions/", 1,
    "DELETE FROM sessions WHERE id = ?", 200 },
};

/* Paths with ids, made once: no snprintf while events are produced. */
static char d_paths[5][64][40];

static void d_init_paths(void)
{
  for (int r = 0; r < 5; r++)
    for (int k = 0; k < 64; k++) {
      if (ROUTES[r].with_id)
        snprintf(d_paths[r][k], sizeof d_paths[r][k], "%s%u", ROUTES[r].path,
                 (unsigned)(k * 1543u + 17u));
      else
        snprintf(d_paths[r][k], sizeof d_paths[r][k], "%s", ROUTES[r].path);
    }
}

static uint64_t mix(uint64_t x)              /* splitmix64, as the demo */
{
  x += UINT64_C(0x9e3779b97f4a7c15);
  x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
  return x ^ (x >> 31);
}

static unsigned draw(uint64_t seed, unsigned salt, unsigned low,
                     unsigned spread)
{
  return low + (unsigned)(mix(seed + salt) % spread);
}

/* The generator's state: step 0 and 1 are the metadata events, then slot
 * 0..13 of request r. */
typedef struct dgen {
  uint64_t step;
  uint64_t r;
  int slot;
  uint64_t seed, base, w0, accept, parse, query, render, handle;
  const struct route *route;
  const char *path;
  int miss;
  tw_arg args[3];
} dgen;

static void dgen_init(dgen *g)
{
  memset(g, 0, sizeof *g);
  g->slot = 14;                              /* start a request next */
}

static void dgen_request(dgen *g)
{
  uint64_t r = ++g->r;
  g->seed = mix(r);
  g->route = &ROUTES[g->seed % 5];
  g->path = d_paths[g->seed % 5][(g->seed >> 8) & 63];
  g->miss = mix(g->seed + 4) % 40 == 0;
  g->base = r * 10000000u;
  g->accept = draw(g->seed, 10, 10, 40) * 1000u;
  g->parse = draw(g->seed, 7, 30, 120) * 1000u;
  g->query = (g->miss ? draw(g->seed, 5, 2500, 3000)
                      : draw(g->seed, 5, 80, 400)) * 1000u;
  g->render = draw(g->seed, 8, 40, 200) * 1000u;
  g->w0 = g->base + g->accept + 5000u;
  g->handle = 200u + g->parse + g->query + g->render + 100u;
  g->slot = 0;
}

/* The next event of workload D into *ev (args point into g). */
static void dgen_next(dgen *g, tw_event *ev)
{
  memset(ev, 0, sizeof *ev);
  if (g->step < 2) {
    ev->ph = 'M';
    ev->args = g->args;
    ev->nargs = 1;
    if (g->step++ == 0) {
      ev->name = "thread_name";
      g->args[0] = tw_arg_str("name", "acceptor");
    } else {
      ev->name = "thread_sort_index";
      g->args[0] = tw_arg_int("sort_index", 0);
    }
    return;
  }
  g->step++;
  if (g->slot >= 14)
    dgen_request(g);
  if (g->slot == 11 && !g->miss)
    g->slot++;                               /* only slow requests */
  ev->has = TW_HAS_TS;
  ev->args = g->args;
  switch (g->slot++) {
  case 0:
    ev->ph = 'b'; ev->cat = "request"; ev->name = g->route->name;
    ev->has |= TW_HAS_ID; ev->id = g->r; ev->ts = g->base + 1000u;
    g->args[0] = tw_arg_str("method", g->route->method);
    g->args[1] = tw_arg_str("path", g->path);
    ev->nargs = 2;
    break;
  case 1:
    ev->ph = 's'; ev->cat = "flow"; ev->name = "request";
    ev->has |= TW_HAS_ID; ev->id = g->r; ev->ts = g->base + 1500u;
    break;
  case 2:
    ev->ph = 'C'; ev->cat = "server"; ev->name = "queue_depth";
    ev->ts = g->base + 2000u;
    g->args[0] = tw_arg_uint("depth", g->r % 8);
    ev->nargs = 1;
    break;
  case 3:
    ev->ph = 'C'; ev->cat = "server"; ev->name = "inflight";
    ev->ts = g->base + 2000u;
    g->args[0] = tw_arg_uint("requests", 1 + g->r % 4);
    ev->nargs = 1;
    break;
  case 4:
    ev->ph = 'X'; ev->cat = "server"; ev->name = "accept";
    ev->ts = g->base; ev->dur = g->accept;
    break;
  case 5:
    ev->ph = 'C'; ev->cat = "server"; ev->name = "queue_depth";
    ev->ts = g->w0;
    g->args[0] = tw_arg_uint("depth", (g->r + 7) % 8);
    ev->nargs = 1;
    break;
  case 6:
    ev->ph = 'f'; ev->cat = "flow"; ev->name = "request";
    ev->has |= TW_HAS_ID; ev->flags |= TW_EV_BP_ENCLOSING; ev->id = g->r;
    ev->ts = g->w0 + 100u;
    break;
  case 7:
    ev->ph = 'X'; ev->cat = "server"; ev->name = "parse";
    ev->ts = g->w0 + 200u; ev->dur = g->parse;
    break;
  case 8:
    ev->ph = 'X'; ev->cat = "db"; ev->name = "db.query";
    ev->ts = g->w0 + 200u + g->parse; ev->dur = g->query;
    g->args[0] = tw_arg_str("sql", g->route->sql);
    g->args[1] = tw_arg_uint("rows", draw(g->seed, 6, 0, 50));
    g->args[2] = tw_arg_bool("cache_hit", !g->miss);
    ev->nargs = 3;
    break;
  case 9:
    ev->ph = 'X'; ev->cat = "server"; ev->name = "render";
    ev->ts = g->w0 + 200u + g->parse + g->query; ev->dur = g->render;
    break;
  case 10:
    ev->ph = 'X'; ev->cat = "server"; ev->name = "handle";
    ev->ts = g->w0; ev->dur = g->handle;
    break;
  case 11:
    ev->ph = 'I'; ev->instant_scope = 'g'; ev->cat = "server";
    ev->name = "slow request"; ev->ts = g->w0 + g->handle;
    g->args[0] = tw_arg_uint("id", g->r);
    g->args[1] = tw_arg_str("path", g->path);
    g->args[2] = tw_arg_double("ms", (double)(g->handle / 1000u) / 1000.0);
    ev->nargs = 3;
    break;
  case 12:
    ev->ph = 'e'; ev->cat = "request"; ev->name = g->route->name;
    ev->has |= TW_HAS_ID; ev->id = g->r; ev->ts = g->w0 + g->handle + 100u;
    g->args[0] = tw_arg_int("status", g->route->status);
    ev->nargs = 1;
    break;
  default:
    ev->ph = 'C'; ev->cat = "server"; ev->name = "inflight";
    ev->ts = g->w0 + g->handle + 100u;
    g->args[0] = tw_arg_uint("requests", g->r % 4);
    ev->nargs = 1;
    break;
  }
}

/* ======================================================= fprintf baseline */

typedef unsigned long long ull;
typedef long long sll;

#define US(t) (ull)((t) / 1000u), (ull)((t) % 1000u)

static void fp_head(FILE *f, sll pid, sll tid)
{
  fprintf(f, "[\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%lld,"
          "\"tid\":%lld,\"args\":{\"name\":\"" PROCESS_NAME "\"}}", pid, tid);
}

/* The array form's tail, as the library writes it: nothing after the
 * bracket. */
#define BENCH_TAIL "\n]"

static void fp_tail(FILE *f)
{
  fputs(BENCH_TAIL, f);
}

static inline void fp_a(FILE *f, uint64_t i, sll pid, sll tid)
{
  fprintf(f, ",\n{\"ph\":\"X\",\"name\":\"%s\",\"cat\":\"bench\","
          "\"ts\":%llu.%03llu,\"dur\":%llu.%03llu,\"pid\":%lld,\"tid\":%lld}",
          NAMES[i & 7], US(TS(i)), US(DUR(i)), pid, tid);
}

static inline void fp_b(FILE *f, uint64_t i, sll pid, sll tid)
{
  fprintf(f, ",\n{\"ph\":\"X\",\"name\":\"%s\",\"cat\":\"bench\","
          "\"ts\":%llu.%03llu,\"dur\":%llu.%03llu,\"pid\":%lld,\"tid\":%lld,"
          "\"args\":{\"tokens\":%lld,\"layer\":\"attn\"}}",
          NAMES[i & 7], US(TS(i)), US(DUR(i)), pid, tid, (sll)i);
}

/* One fprintf per event of workload D, by the shapes dgen_next makes. */
static void fp_d(FILE *f, const tw_event *e, sll pid, sll tid)
{
  const tw_arg *a = e->args;
  switch (e->ph) {
  case 'M':
    if (a[0].type == TW_ARG_STRING)
      fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%lld,\"tid\":%lld,"
              "\"args\":{\"%s\":\"%s\"}}", e->name, pid, tid, a[0].name,
              a[0].v.s);
    else
      fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%lld,\"tid\":%lld,"
              "\"args\":{\"%s\":%lld}}", e->name, pid, tid, a[0].name,
              (sll)a[0].v.i);
    break;
  case 'b':
    fprintf(f, ",\n{\"ph\":\"b\",\"name\":\"%s\",\"cat\":\"%s\","
            "\"ts\":%llu.%03llu,\"pid\":%lld,\"tid\":%lld,\"id\":\"0x%llx\","
            "\"args\":{\"%s\":\"%s\",\"%s\":\"%s\"}}", e->name, e->cat,
            US(e->ts), pid, tid, (ull)e->id, a[0].name, a[0].v.s, a[1].name,
            a[1].v.s);
    break;
  case 's':
    fprintf(f, ",\n{\"ph\":\"s\",\"name\":\"%s\",\"cat\":\"%s\","
            "\"ts\":%llu.%03llu,\"pid\":%lld,\"tid\":%lld,\"id\":\"0x%llx\"}",
            e->name, e->cat, US(e->ts), pid, tid, (ull)e->id);
    break;
  case 'f':
    fprintf(f, ",\n{\"ph\":\"f\",\"name\":\"%s\",\"cat\":\"%s\","
            "\"ts\":%llu.%03llu,\"pid\":%lld,\"tid\":%lld,\"id\":\"0x%llx\","
            "\"bp\":\"e\"}", e->name, e->cat, US(e->ts), pid, tid,
            (ull)e->id);
    break;
  case 'C':
    fprintf(f, ",\n{\"ph\":\"C\",\"name\":\"%s\",\"cat\":\"%s\","
            "\"ts\":%llu.%03llu,\"pid\":%lld,\"tid\":%lld,"
            "\"args\":{\"%s\":%llu}}", e->name, e->cat, US(e->ts), pid, tid,
            a[0].name, (ull)a[0].v.u);
    break;
  case 'X':
    if (e->nargs == 0)
      fprintf(f, ",\n{\"ph\":\"X\",\"name\":\"%s\",\"cat\":\"%s\","
              "\"ts\":%llu.%03llu,\"dur\":%llu.%03llu,\"pid\":%lld,"
              "\"tid\":%lld}", e->name, e->cat, US(e->ts), US(e->dur), pid,
              tid);
    else
      fprintf(f, ",\n{\"ph\":\"X\",\"name\":\"%s\",\"cat\":\"%s\","
              "\"ts\":%llu.%03llu,\"dur\":%llu.%03llu,\"pid\":%lld,"
              "\"tid\":%lld,\"args\":{\"%s\":\"%s\",\"%s\":%llu,\"%s\":%s}}",
              e->name, e->cat, US(e->ts), US(e->dur), pid, tid, a[0].name,
              a[0].v.s, a[1].name, (ull)a[1].v.u, a[2].name,
              a[2].v.b ? "true" : "false");
    break;
  case 'I':
    fprintf(f, ",\n{\"ph\":\"I\",\"name\":\"%s\",\"cat\":\"%s\","
            "\"ts\":%llu.%03llu,\"pid\":%lld,\"tid\":%lld,\"s\":\"%c\","
            "\"args\":{\"%s\":%llu,\"%s\":\"%s\",\"%s\":%.15g}}", e->name,
            e->cat, US(e->ts), pid, tid, e->instant_scope, a[0].name, (ull)a[0].v.u,
            a[1].name, a[1].v.s, a[2].name, a[2].v.d);
    break;
  case 'e':
    fprintf(f, ",\n{\"ph\":\"e\",\"name\":\"%s\",\"cat\":\"%s\","
            "\"ts\":%llu.%03llu,\"pid\":%lld,\"tid\":%lld,\"id\":\"0x%llx\","
            "\"args\":{\"%s\":%lld}}", e->name, e->cat, US(e->ts), pid, tid,
            (ull)e->id, a[0].name, (sll)a[0].v.i);
    break;
  default:
    abort();                                 /* dgen_next makes no other */
  }
}

/* ================================================================= sinks */

typedef struct sinkdef {
  const char *name;
  const char *options;
  const char *ext;
} sinkdef;

static const sinkdef SINKS[] = {
  { "file",    "sink=file,commit=inline",     ".json" },
  { "file-bg", "sink=file,commit=background", ".json" },
  { "mmap",    "sink=mmap",                   ".json" },
  { "gzip",    "sink=gzip",                   ".json.gz" },
  /* Issue 22 item 2: the same with formatting on the committer, beside
   * the default (formatting on the producers). */
  { "file-bgc", "sink=file,commit=background,formatter=committer", ".json" },
  { "gzip-c",  "sink=gzip,formatter=committer", ".json.gz" },
};
#define NSINKS 6
enum { S_FILE, S_FILEBG, S_MMAP, S_GZIP, S_FILEBGC, S_GZIPC };

/* The cost section: workload A on the file-bg sink, with these options
 * added (name: for BENCH_COSTS; "plain" is always run with the others). */
typedef struct costdef {
  const char *name;
  const char *options;
} costdef;

static const costdef COSTS[] = {
  { "plain",  NULL },
  { "flush",  "flush=100ms" },
  { "sync",   "sync" },
  { "rotate", "rotate=8MiB,keep=3" },
};
#define NCOSTS 4
#define COST_KEEP 3u             /* keep= of the rotate row */
enum { C_PLAIN, C_FLUSH, C_SYNC, C_ROTATE };

/* ================================================================= runs */

/* What one run measured, sent from the child to the parent. */
typedef struct result {
  int status;              /* 0, TW_ESINK (n/a), or another error */
  char msg[160];           /* what failed */
  uint64_t ns;             /* the timed region, wall clock */
  uint64_t cpu;            /* CPU time of the process in that region */
  uint64_t events;
  uint64_t json_bytes;     /* uncompressed bytes, head and tail included */
  uint64_t file_bytes;     /* size of the output */
  uint64_t allocs;         /* allocations in the counted window, but ... */
  uint64_t startup_allocs; /* ... those of the producers' first events */
  int threads;             /* producers */
  uint64_t commits;        /* tw_stats commits */
  int has_lat;
  uint64_t p50, p99, p999, pmax;
  long maxrss_kib;         /* filled by the parent from wait4 */
} result;

enum kind { K_TW, K_FPRINTF, K_WRITE, K_MMAPCPY, K_ZLIB, K_GZIP1, K_GZIP6,
            K_CHECK, K_IDLE };
static const char *const KIND_NAME[] = {
  "", "fprintf", "write(2)", "mmap-cpy", "zlib", "gzip -1", "gzip -6",
  "check", "idle"
};

typedef struct job {
  int kind;                /* enum kind */
  int wl;                  /* index into WLS */
  int sink;                /* K_TW: index into SINKS */
  uint64_t n;              /* events */
  int latency;             /* time each call of the producer */
  const char *ref;         /* bounds: the reference JSON file */
  const char *extra;       /* K_TW: options added to the sink's (the cost
                              section), or NULL */
  char out[PATH_MAX];      /* the output file */
} job;

static void fail_msg(result *res, int status, const char *fmt, ...)
{
  va_list ap;
  res->status = status ? status : -1;
  va_start(ap, fmt);
  vsnprintf(res->msg, sizeof res->msg, fmt, ap);
  va_end(ap);
}

/* The producers of a tracewriter run. */
typedef struct tw_run {
  tw_writer *w;
  int wl;
  uint64_t n;
  int rc;                  /* first error of an event call */
  pthread_barrier_t start, stop;
  unsigned long startup[MAX_THREADS]; /* allocations of each producer's
                              first event */
} tw_run;

/* --- workload E: the formatter's slower paths, one thread */

static const char *const E_NAMES[8] = {
  "matmul", "say \"hi\"", "C:\\tmp\\rope", "gr\xc3\xb6\xc3\x9f" "e",
  "attn", "mlp\tfused", "embed", "\xe6\xb3\xa8\xe6\x84\x8f"
};
#define E_NOTE(i) ((i) % 4 == 0 ? "cache \"miss\"\n" : "ok")

/* A producer besides the main one: the run and its number. */
typedef struct producer {
  void *run;               /* tw_run or fp_run */
  int t;
} producer;

/* Events [first, n) step stride of workload A/B/C on w; lat: time each
 * call into lat_hist.  Inlined with lat constant, so the throughput loop
 * carries no timing code. */
static inline __attribute__((always_inline)) int
produce_ab(tw_writer *w, int with_args, uint64_t first, uint64_t n,
           uint64_t stride, int lat)
{
  tw_arg args[2];
  int rc = 0;

  for (uint64_t i = first; i < n; i += stride) {
    uint64_t t0 = 0;
    int r;
    if (lat)
      t0 = ticks();
    if (with_args) {
      args[0] = tw_arg_int("tokens", (int64_t)i);
      args[1] = tw_arg_str("layer", "attn");
      r = tw_complete(w, "bench", NAMES[i & 7], TS(i), DUR(i), args, 2);
    } else {
      r = tw_complete(w, "bench", NAMES[i & 7], TS(i), DUR(i), NULL, 0);
    }
    if (lat)
      hist_add(&lat_hist, ticks_to_ns(ticks() - t0));
    if (UNLIKELY(r) && !rc)
      rc = r;
  }
  return rc;
}

/* Events [0, n) of workload E on w. */
static inline __attribute__((always_inline)) int
produce_e(tw_writer *w, uint64_t n, unsigned long *startup, int lat)
{
  tw_arg args[4];
  int rc = 0;

  for (uint64_t i = 0; i < n; i++) {
    uint64_t t0 = 0;
    int r;
    if (i == 1)
      alloc_into = NULL;
    else if (i == 0)
      alloc_into = startup;
    if (lat)
      t0 = ticks();
    args[0] = tw_arg_double("ms", (double)(i % 1000) * 0.5);
    args[1] = tw_arg_bool("hit", i % 3 == 0);
    args[2] = tw_arg_str("note", E_NOTE(i));
    args[3] = tw_arg_double("loss", (double)(i % 1000) / 7.0);
    r = tw_complete(w, "bench", E_NAMES[i & 7], TS(i), DUR(i), args,
                    i % 8 == 0 ? 4 : 3);
    if (lat)
      hist_add(&lat_hist, ticks_to_ns(ticks() - t0));
    if (UNLIKELY(r) && !rc)
      rc = r;
  }
  alloc_into = NULL;
  return rc;
}

/* Events [0, n) of workload AT (scope 0) or AS (scope 1) on w, their
 * times read by the library.  AT: A's names as tw_begin / tw_end pairs
 * (one clock read an event); AS: A's events through TW_SCOPE (two). */
static inline __attribute__((always_inline)) int
produce_library_ts(tw_writer *w, uint64_t n, int scope)
{
  int rc = 0;

  for (uint64_t i = 0; i < n; i++) {
    int r;
    if (scope) {                   /* TW_SCOPE's calls, the result kept */
      tw_span span = tw_span_begin(w, "bench", NAMES[i & 7]);
      r = tw_span_end(&span);
    } else {
      r = (i & 1) ? tw_end(w, "bench", NAMES[(i >> 1) & 7], NULL, 0)
                  : tw_begin(w, "bench", NAMES[(i >> 1) & 7], NULL, 0);
    }
    if (UNLIKELY(r) && !rc)
      rc = r;
  }
  return rc;
}

/* The next event of workload D on w. */
static inline __attribute__((always_inline)) int
emit_d(tw_writer *w, dgen *g, int lat)
{
  tw_event ev;
  uint64_t t0 = 0;
  int r;

  dgen_next(g, &ev);
  if (lat)
    t0 = ticks();
  r = tw_emit(w, &ev);
  if (lat)
    hist_add(&lat_hist, ticks_to_ns(ticks() - t0));
  return r;
}

static inline __attribute__((always_inline)) int
produce_d(tw_writer *w, uint64_t n, unsigned long *startup, int lat)
{
  dgen g;
  int rc;

  dgen_init(&g);
  alloc_into = startup;
  rc = emit_d(w, &g, lat);
  alloc_into = NULL;
  for (uint64_t i = 1; i < n; i++) {
    int r = emit_d(w, &g, lat);
    if (UNLIKELY(r) && !rc)
      rc = r;
  }
  return rc;
}

/* Producer t's events of workload A, B or Ck (k producers: 1 for A and
 * B), n asked, its first event's allocations counted into *startup.
 * Inlined with with_args, lat (and k for A and B) constant. */
static inline __attribute__((always_inline)) int
produce_abc(tw_writer *w, int with_args, uint64_t k, uint64_t n, int t,
            unsigned long *startup, int lat)
{
  uint64_t first = (uint64_t)t;
  int rc, r;

  n = n / k * k;
  alloc_into = startup;
  rc = produce_ab(w, with_args, first, first + 1 < n ? first + 1 : n, 1, lat);
  alloc_into = NULL;
  r = produce_ab(w, with_args, first + k, n, k, lat);
  return rc ? rc : r;
}

static int produce(tw_writer *w, int wl, uint64_t n, int t,
                   unsigned long *startup, int lat)
{
  uint64_t k = (uint64_t)WLS[wl].threads;

  lat = lat && t == 0;                       /* producer 0's calls */
  switch (wl) {
  case W_A:
    return lat ? produce_abc(w, 0, 1, n, t, startup, 1)
               : produce_abc(w, 0, 1, n, t, startup, 0);
  case W_B:
    return lat ? produce_abc(w, 1, 1, n, t, startup, 1)
               : produce_abc(w, 1, 1, n, t, startup, 0);
  case W_D:
    return lat ? produce_d(w, n, startup, 1) : produce_d(w, n, startup, 0);
  case W_E:
    return lat ? produce_e(w, n, startup, 1) : produce_e(w, n, startup, 0);
  case W_AT:
    return produce_library_ts(w, n, 0);
  case W_AS:
    return produce_library_ts(w, n, 1);
  default:
    return lat ? produce_abc(w, 0, k, n, t, startup, 1)
               : produce_abc(w, 0, k, n, t, startup, 0);
  }
}

static void *other_producer(void *arg)
{
  producer *p = arg;
  tw_run *run = p->run;
  int rc;
  pthread_barrier_wait(&run->start);
  rc = produce(run->w, run->wl, run->n, p->t, &run->startup[p->t], 0);
  if (rc)
    __atomic_store_n(&run->rc, rc, __ATOMIC_RELAXED);
  pthread_barrier_wait(&run->stop);
  return NULL;
}

/* Start producers 1 .. threads-1 of a run, waiting on barriers of
 * threads; they get p[t] and run fn.  Returns 0 or -errno (and then
 * exits the child if some were started: they would wait forever). */
static int start_producers(int threads, pthread_barrier_t *start,
                           pthread_barrier_t *stop, void *run, producer *p,
                           pthread_t *th, void *(*fn)(void *))
{
  pthread_barrier_init(start, NULL, (unsigned)threads);
  pthread_barrier_init(stop, NULL, (unsigned)threads);
  for (int t = 1; t < threads; t++) {
    int rc;
    p[t].run = run;
    p[t].t = t;
    if ((rc = pthread_create(&th[t], NULL, fn, &p[t])) != 0) {
      if (t > 1)
        _exit(3);
      return -rc;
    }
  }
  return 0;
}

/* Join producers 1 .. threads-1. */
static void join_producers(int threads, pthread_t *th)
{
  for (int t = 1; t < threads; t++)
    pthread_join(th[t], NULL);
}

static uint64_t file_size(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static const char *env_str(const char *name, const char *dflt);

/* The options of a sink's runs: its options string, then cost (the cost
 * section's options, or NULL), then BENCH_OPTIONS (for experiments, e.g.
 * "buffer=1MiB"; printed in the header). */
static int open_options(tw_options *o, int sink, const char *cost, char *err,
                        size_t errsize)
{
  const char *extra = env_str("BENCH_OPTIONS", NULL);
  int rc;

  tw_options_init(o);
  o->process_name = PROCESS_NAME;
  if ((rc = tw_options_parse(o, SINKS[sink].options, err, errsize)) != 0)
    return rc;
  if (cost && (rc = tw_options_parse(o, cost, err, errsize)) != 0)
    return rc;
  return extra ? tw_options_parse(o, extra, err, errsize) : 0;
}

/* One tracewriter run: open, produce, close. */
static void run_tw(const job *j, result *res)
{
  tw_options o;
  tw_run run;
  tw_stats st;
  producer p[MAX_THREADS];
  pthread_t th[MAX_THREADS];
  unsigned long a0, a1;
  uint64_t t0, t1, c0, c1;
  char err[128];
  int rc, threads = WLS[j->wl].threads;

  memset(&run, 0, sizeof run);
  if ((rc = open_options(&o, j->sink, j->extra, err, sizeof err)) != 0) {
    fail_msg(res, rc, "options: %s", err);
    return;
  }
  run.wl = j->wl;
  run.n = j->n;
  if ((rc = start_producers(threads, &run.start, &run.stop, &run, p, th,
                            other_producer)) != 0) {
    fail_msg(res, rc, "pthread_create: %s", strerror(-rc));
    return;
  }
  c0 = cpu_ns();
  t0 = now_ns();
  run.w = tw_open(j->out, &o, &rc);
  if (!run.w) {
    if (threads > 1) {                       /* let the threads go */
      pthread_barrier_wait(&run.start);
      pthread_barrier_wait(&run.stop);
      join_producers(threads, th);
    }
    fail_msg(res, rc, "tw_open: %s", tw_strerror(rc));
    return;
  }
  a0 = allocs_now();
  if (threads > 1)
    pthread_barrier_wait(&run.start);
  rc = produce(run.w, j->wl, j->n, 0, &run.startup[0], j->latency);
  if (threads > 1)
    pthread_barrier_wait(&run.stop);
  a1 = allocs_now();
  if (!rc)
    rc = __atomic_load_n(&run.rc, __ATOMIC_RELAXED);
  tw_get_stats(run.w, &st);
  {
    int rc2 = tw_close(run.w);
    if (!rc)
      rc = rc2;
  }
  t1 = now_ns();
  c1 = cpu_ns();
  join_producers(threads, th);
  if (rc) {
    fail_msg(res, rc, "%s", tw_strerror(rc));
    return;
  }
  res->ns = t1 - t0;
  res->cpu = c1 - c0;
  res->events = wl_events(j->wl, j->n);
  res->json_bytes = st.bytes + strlen(BENCH_TAIL);
  res->file_bytes = file_size(j->out);
  res->allocs = a1 - a0;
  for (int t = 0; t < threads; t++)
    res->startup_allocs += run.startup[t];
  res->threads = threads;
  res->commits = st.commits;
  if (j->latency) {
    res->has_lat = 1;
    res->p50 = hist_quantile(&lat_hist, 0.50);
    res->p99 = hist_quantile(&lat_hist, 0.99);
    res->p999 = hist_quantile(&lat_hist, 0.999);
    res->pmax = hist_quantile(&lat_hist, 1.0);
  }
}

/* ------------------------------------------------------ fprintf baseline */

typedef struct fp_run {
  FILE *f;
  int wl;
  uint64_t n;
  sll pid;
  pthread_barrier_t start, stop;
} fp_run;

static sll gettid_ll(void)
{
  return (sll)syscall(SYS_gettid);
}

static void fp_produce(FILE *f, int wl, uint64_t n, int t, sll pid)
{
  sll tid = gettid_ll();
  uint64_t k = (uint64_t)WLS[wl].threads;
  switch (wl) {
  case W_A:
    for (uint64_t i = 0; i < n; i++)
      fp_a(f, i, pid, tid);
    break;
  case W_B:
    for (uint64_t i = 0; i < n; i++)
      fp_b(f, i, pid, tid);
    break;
  case W_D: {
    dgen g;
    tw_event ev;
    dgen_init(&g);
    for (uint64_t i = 0; i < n; i++) {
      dgen_next(&g, &ev);
      fp_d(f, &ev, pid, tid);
    }
    break;
  }
  default:
    n = wl_events(wl, n);
    for (uint64_t i = (uint64_t)t; i < n; i += k)
      fp_a(f, i, pid, tid);
  }
}

static void *fp_other(void *arg)
{
  producer *p = arg;
  fp_run *run = p->run;
  pthread_barrier_wait(&run->start);
  fp_produce(run->f, run->wl, run->n, p->t, run->pid);
  pthread_barrier_wait(&run->stop);
  return NULL;
}

static void run_fprintf(const job *j, result *res)
{
  fp_run run;
  producer p[MAX_THREADS];
  pthread_t th[MAX_THREADS];
  uint64_t t0, t1, c0, c1;
  int rc, threads = WLS[j->wl].threads, bad;

  memset(&run, 0, sizeof run);
  run.wl = j->wl;
  run.n = j->n;
  run.pid = (sll)getpid();
  if ((rc = start_producers(threads, &run.start, &run.stop, &run, p, th,
                            fp_other)) != 0) {
    fail_msg(res, rc, "pthread_create: %s", strerror(-rc));
    return;
  }
  c0 = cpu_ns();
  t0 = now_ns();
  if (!(run.f = fopen(j->out, "w"))) {
    fail_msg(res, -errno, "fopen %s: %s", j->out, strerror(errno));
    if (threads > 1)
      _exit(3);                              /* the threads wait forever */
    return;
  }
  fp_head(run.f, run.pid, gettid_ll());
  if (threads > 1)
    pthread_barrier_wait(&run.start);
  fp_produce(run.f, j->wl, j->n, 0, run.pid);
  if (threads > 1)
    pthread_barrier_wait(&run.stop);
  fp_tail(run.f);
  bad = ferror(run.f);
  if (fclose(run.f) != 0)
    bad = 1;
  t1 = now_ns();
  c1 = cpu_ns();
  join_producers(threads, th);
  if (bad) {
    fail_msg(res, -EIO, "fprintf to %s failed", j->out);
    return;
  }
  res->ns = t1 - t0;
  res->cpu = c1 - c0;
  res->events = wl_events(j->wl, j->n);
  res->file_bytes = res->json_bytes = file_size(j->out);
}

/* ---------------------------------------------------------------- bounds */

static int write_all(int fd, const char *p, size_t n)
{
  while (n > 0) {
    ssize_t k = write(fd, p, n);
    if (k < 0) {
      if (errno == EINTR)
        continue;
      return -errno;
    }
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

/* The whole file at path in a fresh mapping (every page touched), or NULL. */
static char *read_file(const char *path, size_t *len, result *res)
{
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  char *buf;
  size_t got = 0;

  if (fd < 0 || fstat(fd, &st) != 0) {
    fail_msg(res, -errno, "%s: %s", path, strerror(errno));
    if (fd >= 0)
      close(fd);
    return NULL;
  }
  buf = mmap(NULL, (size_t)st.st_size + 1, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (buf == MAP_FAILED) {
    fail_msg(res, -errno, "mmap: %s", strerror(errno));
    close(fd);
    return NULL;
  }
  while (got < (size_t)st.st_size) {
    ssize_t k = read(fd, buf + got, (size_t)st.st_size - got);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      break;
    got += (size_t)k;
  }
  close(fd);
  *len = got;
  return buf;
}

static void run_write_bound(const job *j, result *res)
{
  size_t len, off;
  char *buf = read_file(j->ref, &len, res);
  uint64_t t0, t1, c0;
  int fd, rc = 0;

  if (!buf)
    return;
  c0 = cpu_ns();
  t0 = now_ns();
  fd = open(j->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    fail_msg(res, -errno, "%s: %s", j->out, strerror(errno));
    return;
  }
  for (off = 0; off < len && !rc; off += CHUNK)
    rc = write_all(fd, buf + off, len - off < CHUNK ? len - off : CHUNK);
  if (close(fd) != 0 && !rc)
    rc = -errno;
  t1 = now_ns();
  if (rc) {
    fail_msg(res, rc, "write: %s", strerror(-rc));
    return;
  }
  res->ns = t1 - t0;
  res->cpu = cpu_ns() - c0;
  res->json_bytes = res->file_bytes = len;
}

static void run_mmap_bound(const job *j, result *res)
{
  size_t len;
  char *buf = read_file(j->ref, &len, res), *map;
  uint64_t t0, t1, c0;
  int fd, rc;

  if (!buf)
    return;
  c0 = cpu_ns();
  t0 = now_ns();
  fd = open(j->out, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    fail_msg(res, -errno, "%s: %s", j->out, strerror(errno));
    return;
  }
  if ((rc = posix_fallocate(fd, 0, (off_t)len)) != 0) {
    fail_msg(res, -rc, "posix_fallocate: %s", strerror(rc));
    close(fd);
    return;
  }
  map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) {
    fail_msg(res, -errno, "mmap: %s", strerror(errno));
    close(fd);
    return;
  }
  memcpy(map, buf, len);
  munmap(map, len);
  close(fd);
  t1 = now_ns();
  res->ns = t1 - t0;
  res->cpu = cpu_ns() - c0;
  res->json_bytes = res->file_bytes = len;
}

static int gzip_level(void)
{
  tw_options o;
  open_options(&o, S_GZIP, NULL, NULL, 0);
  return o.gzip_level;
}

static void run_zlib_bound(const job *j, result *res)
{
  static unsigned char out[CHUNK];
  size_t len, off = 0;
  char *buf = read_file(j->ref, &len, res);
  uint64_t t0, t1, c0, total = 0;
  z_stream z;
  int fd, rc = 0, zr;

  if (!buf)
    return;
  memset(&z, 0, sizeof z);
  c0 = cpu_ns();
  t0 = now_ns();
  fd = open(j->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    fail_msg(res, -errno, "%s: %s", j->out, strerror(errno));
    return;
  }
  if (deflateInit2(&z, gzip_level(), Z_DEFLATED, 15 + 16, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK) {
    fail_msg(res, -ENOMEM, "deflateInit2 failed");
    close(fd);
    return;
  }
  do {
    size_t piece = len - off < CHUNK ? len - off : CHUNK;
    int flush = off + piece >= len ? Z_FINISH : Z_NO_FLUSH;
    z.next_in = (unsigned char *)buf + off;
    z.avail_in = (unsigned)piece;
    off += piece;
    do {
      z.next_out = out;
      z.avail_out = CHUNK;
      zr = deflate(&z, flush);
      if (zr == Z_STREAM_ERROR) {
        rc = -EIO;
        break;
      }
      total += CHUNK - z.avail_out;
      if (!rc)
        rc = write_all(fd, (char *)out, CHUNK - z.avail_out);
    } while (z.avail_out == 0 && !rc);
    if (flush == Z_FINISH)
      break;
  } while (!rc);
  deflateEnd(&z);
  if (close(fd) != 0 && !rc)
    rc = -errno;
  t1 = now_ns();
  if (rc) {
    fail_msg(res, rc, "zlib bound: %s", strerror(-rc));
    return;
  }
  res->ns = t1 - t0;
  res->cpu = cpu_ns() - c0;
  res->json_bytes = len;
  res->file_bytes = total;
}

/* The size of gzip -LEVEL of the reference file, by gzip(1). */
static void run_gzip_size(const job *j, result *res, int level)
{
  int p[2], in, status;
  char lv[4], buf[CHUNK];
  uint64_t t0, total = 0;
  pid_t pid;

  snprintf(lv, sizeof lv, "-%d", level);
  if ((in = open(j->ref, O_RDONLY | O_CLOEXEC)) < 0 || pipe(p) != 0) {
    fail_msg(res, -errno, "%s: %s", j->ref, strerror(errno));
    return;
  }
  t0 = now_ns();
  if ((pid = fork()) == 0) {
    dup2(in, 0);
    dup2(p[1], 1);
    close(p[0]);
    close(p[1]);
    execlp("gzip", "gzip", lv, "-c", (char *)NULL);
    _exit(127);
  }
  close(p[1]);
  close(in);
  for (;;) {
    ssize_t k = read(p[0], buf, sizeof buf);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      break;
    total += (uint64_t)k;
  }
  close(p[0]);
  if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    fail_msg(res, TW_ESINK, "gzip(1) not available");
    return;
  }
  res->ns = now_ns() - t0;
  res->json_bytes = file_size(j->ref);
  res->file_bytes = total;
}

/* ------------------------------------------------ the byte-identity check */

/* The bytes of a gzip file, inflated (into a fresh mapping), or NULL. */
static char *read_gz(const char *path, size_t *len)
{
  size_t cap = 1u << 20, got = 0;
  char *buf = malloc(cap);
  gzFile gz = gzopen(path, "rb");
  int k;

  if (!gz || !buf) {
    free(buf);
    if (gz)
      gzclose(gz);
    return NULL;
  }
  while ((k = gzread(gz, buf + got, (unsigned)(cap - got))) > 0) {
    got += (size_t)k;
    if (got == cap) {
      char *nb = realloc(buf, cap *= 2);
      if (!nb)
        break;
      buf = nb;
    }
  }
  gzclose(gz);
  *len = got;
  return buf;
}

/* "same", or where the bytes first differ. */
static const char *compare(const char *a, size_t alen, const char *b,
                           size_t blen, char *out, size_t outsize)
{
  size_t i = 0;
  if (alen == blen && memcmp(a, b, alen) == 0)
    return "same";
  while (i < alen && i < blen && a[i] == b[i])
    i++;
  snprintf(out, outsize, "DIFFER at byte %zu (%zu vs %zu bytes)", i, alen,
           blen);
  return out;
}

/* Leave out the clock record (the library's second record: the clocks
 * as read at open, different in every file; fprintf writes none). */
static void drop_clock_record(char *buf, size_t *len)
{
  static const char rec[] = "\n{\"ph\":\"c\",\"name\":\"clock_sync\"";
  char *at = memmem(buf, *len, rec, sizeof rec - 1), *nl;

  if (at && (nl = memchr(at + 1, '\n', *len - (size_t)(at + 1 - buf)))) {
    memmove(at, nl, *len - (size_t)(nl - buf));
    *len -= (size_t)(nl - at);
  }
}

#define CHECK_N 5000u

/* Write workload wl with N = CHECK_N through the file sink, fprintf, mmap
 * and gzip, all in this process (same pid and tid), and compare the bytes
 * with the file sink's.  The summary goes into res->msg. */
static void run_check(const job *j, result *res)
{
  char diff[3][96];
  char *ref = NULL, *other;
  size_t reflen = 0, len;
  const char *verdict[3];
  int kinds[3] = { K_FPRINTF, K_TW, K_TW };
  int sinks[3] = { 0, S_MMAP, S_GZIP };

  for (int k = -1; k < 3; k++) {
    job sub = *j;
    result r;
    memset(&r, 0, sizeof r);
    sub.n = CHECK_N;
    sub.kind = k < 0 ? K_TW : kinds[k];
    sub.sink = k < 0 ? S_FILE : sinks[k];
    if (snprintf(sub.out, sizeof sub.out, "%s.%d%s", j->out, k + 1,
                 sub.sink == S_GZIP && sub.kind == K_TW ? ".gz" : "")
        >= (int)sizeof sub.out)
      abort();                               /* paths are short here */
    if (sub.kind == K_TW)
      run_tw(&sub, &r);
    else
      run_fprintf(&sub, &r);
    if (k >= 0 && r.status == TW_ESINK) {
      verdict[k] = "n/a";
      unlink(sub.out);
      continue;
    }
    if (r.status) {
      fail_msg(res, r.status, "check %s: %s", WLS[j->wl].name, r.msg);
      unlink(sub.out);
      return;
    }
    other = sub.sink == S_GZIP && sub.kind == K_TW
            ? read_gz(sub.out, &len) : read_file(sub.out, &len, &r);
    unlink(sub.out);
    if (!other) {
      fail_msg(res, -EIO, "check %s: cannot read back %s",
               WLS[j->wl].name, sub.out);
      return;
    }
    drop_clock_record(other, &len);
    if (k < 0) {
      ref = other;
      reflen = len;
    } else {
      verdict[k] = compare(ref, reflen, other, len, diff[k], sizeof diff[k]);
    }
  }
  snprintf(res->msg, sizeof res->msg, "fprintf %s, mmap %s, gzip %s",
           verdict[0], verdict[1], verdict[2]);
  res->file_bytes = reflen;
  res->status = 0;
}

/* The latency timer's own cost (p50, p99 of an empty interval); the RSS
 * of a child that does nothing else. */
static void run_idle(result *res)
{
  for (int i = 0; i < 200000; i++) {
    uint64_t t0 = ticks();
    hist_add(&lat_hist, ticks_to_ns(ticks() - t0));
  }
  res->has_lat = 1;
  res->p50 = hist_quantile(&lat_hist, 0.50);
  res->p99 = hist_quantile(&lat_hist, 0.99);
  res->p999 = hist_quantile(&lat_hist, 0.999);
}

/* ------------------------------------------------------------ the child */

static void run_job_here(const job *j, result *res)
{
  memset(res, 0, sizeof *res);
  switch (j->kind) {
  case K_TW:      run_tw(j, res); break;
  case K_FPRINTF: run_fprintf(j, res); break;
  case K_WRITE:   run_write_bound(j, res); break;
  case K_MMAPCPY: run_mmap_bound(j, res); break;
  case K_ZLIB:    run_zlib_bound(j, res); break;
  case K_GZIP1:   run_gzip_size(j, res, 1); break;
  case K_GZIP6:   run_gzip_size(j, res, 6); break;
  case K_CHECK:   run_check(j, res); break;
  default:        run_idle(res); break;
  }
  if (res->events == 0)
    res->events = j->n;
}

/* Run j in a forked child; its result, with the child's peak RSS.
 * Returns res->status. */
static int run_job(const job *j, result *res)
{
  int p[2], status;
  struct rusage ru;
  size_t got = 0;
  pid_t pid;

  memset(res, 0, sizeof *res);
  fflush(stdout);
  fflush(stderr);
  if (pipe(p) != 0 || (pid = fork()) < 0) {
    fail_msg(res, -errno, "fork: %s", strerror(errno));
    return res->status;
  }
  if (pid == 0) {
    result r;
    close(p[0]);
    run_job_here(j, &r);
    write_all(p[1], (const char *)&r, sizeof r);
    _exit(0);
  }
  close(p[1]);
  while (got < sizeof *res) {
    ssize_t k = read(p[0], (char *)res + got, sizeof *res - got);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      break;
    got += (size_t)k;
  }
  close(p[0]);
  while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
    continue;
  if (got != sizeof *res || !WIFEXITED(status) || WEXITSTATUS(status)) {
    memset(res, 0, sizeof *res);
    if (WIFSIGNALED(status))
      fail_msg(res, -EIO, "child killed by signal %d", WTERMSIG(status));
    else
      fail_msg(res, -EIO, "child exited with %d", WEXITSTATUS(status));
  }
  res->maxrss_kib = ru.ru_maxrss;
  return res->status;
}

/* ========================================================= the benchmark */

static struct {
  uint64_t n;              /* events per run */
  uint64_t rss_small, rss_big; /* N of the RSS check */
  int reps;
  int reps_many;           /* repetitions of C8 and C16 */
  const char *base[2];     /* shm, disk */
  char dir[2][1024];       /* our directories under them ("" if unusable) */
  int wl_on[NWLS];         /* BENCH_WORKLOADS */
  int any_wl;              /* 0 for BENCH_WORKLOADS=none */
  int sink_on[NSINKS];
  int cost_on[NCOSTS];     /* the cost section's rows (COSTS) */
} cfg;

static const char *const DIR_NAME[2] = { "shm", "disk" };

/* One line of the table: a tracewriter sink or a baseline, for one
 * workload in one directory. */
typedef struct row {
  int wl;                  /* index into WLS */
  int dir;
  int kind;                /* enum kind */
  int sink;                /* K_TW */
  int state;               /* 0 measured, 1 n/a, 2 error */
  char msg[160];
  int nreps;
  result reps[MAX_REPS];
  result lat;              /* the latency run (lat.has_lat) */
  /* medians over reps */
  uint64_t ns, cpu, events, json_bytes, file_bytes, allocs, max_allocs;
  uint64_t startup_allocs;
  long rss;
  double spread;           /* (max - min) / median of ns */
  char targets[64];        /* "T1:PASS ..." */
} row;

#define MAX_ROWS 200
static row rows[MAX_ROWS];
static int nrows;
static int errors;

static row *find_row(int wl, int dir, int kind, int sink)
{
  for (int i = 0; i < nrows; i++)
    if (rows[i].wl == wl && rows[i].dir == dir && rows[i].kind == kind &&
        (kind != K_TW || rows[i].sink == sink))
      return &rows[i];
  return NULL;
}

static row *add_row(int wl, int dir, int kind, int sink)
{
  row *r = &rows[nrows++];
  memset(r, 0, sizeof *r);
  r->wl = wl;
  r->dir = dir;
  r->kind = kind;
  r->sink = sink;
  return r;
}

static const char *row_name(const row *r)
{
  return r->kind == K_TW ? SINKS[r->sink].name : KIND_NAME[r->kind];
}

static void job_for(job *j, const row *r, const char *ref)
{
  memset(j, 0, sizeof *j);
  j->kind = r->kind;
  j->wl = r->wl;
  j->sink = r->sink;
  j->n = cfg.n;
  j->ref = ref;
  snprintf(j->out, sizeof j->out, "%s/%s-%s%s", cfg.dir[r->dir],
           WLS[r->wl].name,
           r->kind == K_TW ? SINKS[r->sink].name : KIND_NAME[r->kind],
           (r->kind == K_TW && r->sink == S_GZIP) || r->kind == K_ZLIB
           ? ".json.gz" : ".json");
  for (char *p = strrchr(j->out, '/'); p && *p; p++)
    if (*p == ' ' || *p == '(' || *p == ')')
      *p = '_';
}

/* Record one run's result in r. */
static void take(row *r, const result *res, int latency)
{
  if (res->status == TW_ESINK && (r->kind == K_TW || r->kind == K_GZIP1 ||
                                  r->kind == K_GZIP6)) {
    r->state = 1;
    snprintf(r->msg, sizeof r->msg, "%s", r->kind == K_TW
             ? "n/a (sink not available)" : "n/a (gzip(1) not available)");
  } else if (res->status) {
    r->state = 2;
    snprintf(r->msg, sizeof r->msg, "ERROR %.150s", res->msg);
    errors++;
  } else if (latency) {
    r->lat = *res;
  } else if (r->nreps < MAX_REPS) {
    r->reps[r->nreps++] = *res;
  }
}

static void progress(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fflush(stderr);
}

/* Whether a selected sink is measured against the bound of kind k. */
static int bound_needed(int k)
{
  switch (k) {
  case K_WRITE:   return cfg.sink_on[S_FILE] || cfg.sink_on[S_FILEBG];
  case K_MMAPCPY: return cfg.sink_on[S_MMAP];
  default:        return cfg.sink_on[S_GZIP];   /* zlib, gzip(1) */
  }
}

/* The repetitions of workload wl's rows. */
static int reps_of(int wl)
{
  return wl == W_C8 || wl == W_C16 ? cfg.reps_many : cfg.reps;
}

/* Every run of workload wl in directory d: a reference run of the file
 * sink (whose bytes the bounds write), then reps rounds of every row, in
 * turn (so a slow phase of the machine hits all rows alike), then one
 * latency run per sink, then (shm only) the gzip(1) sizes. */
static void measure_block(int wl, int d)
{
  static const int bounds[3] = { K_WRITE, K_MMAPCPY, K_ZLIB };
  char ref[PATH_MAX];
  row *block[16];
  int nb = 0, ref_ok;
  result res;
  job j;

  if (!cfg.dir[d][0])
    return;
  progress("bench: workload %s, %s: ", WLS[wl].name, DIR_NAME[d]);
  snprintf(ref, sizeof ref, "%s/%s-reference.json", cfg.dir[d],
           WLS[wl].name);
  {
    row tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.wl = wl;
    tmp.dir = d;
    tmp.kind = K_TW;
    tmp.sink = S_FILE;
    job_for(&j, &tmp, NULL);
    snprintf(j.out, sizeof j.out, "%s", ref);
    ref_ok = run_job(&j, &res) == 0;
  }
  for (int s = 0; s < NSINKS; s++)
    if (cfg.sink_on[s])
      block[nb++] = add_row(wl, d, K_TW, s);
  if (WLS[wl].full)
    block[nb++] = add_row(wl, d, K_FPRINTF, 0);
  for (int b = 0; b < 3; b++)
    if (bound_needed(bounds[b]))
      block[nb++] = add_row(wl, d, bounds[b], 0);
  if (!ref_ok)
    for (int i = 0; i < nb; i++)
      if (block[i]->kind != K_TW && block[i]->kind != K_FPRINTF) {
        block[i]->state = 2;
        errors++;
        snprintf(block[i]->msg, sizeof block[i]->msg,
                 "ERROR no reference file: %.130s", res.msg);
      }
  for (int rep = 0; rep < reps_of(wl); rep++) {
    progress("%d ", rep + 1);
    for (int i = 0; i < nb; i++) {
      if (block[i]->state)
        continue;
      job_for(&j, block[i], ref);
      run_job(&j, &res);
      unlink(j.out);
      take(block[i], &res, 0);
    }
  }
  progress("latency ");
  for (int i = 0; i < nb; i++) {
    if (block[i]->kind != K_TW || block[i]->state)
      continue;
    job_for(&j, block[i], ref);
    j.latency = 1;
    run_job(&j, &res);
    unlink(j.out);
    take(block[i], &res, 1);
  }
  if (d == 0 && ref_ok && WLS[wl].full && bound_needed(K_GZIP1)) {
    progress("gzip(1) ");
    for (int k = K_GZIP1; k <= K_GZIP6; k++) {
      row *r = add_row(wl, d, k, 0);
      job_for(&j, r, ref);
      run_job(&j, &res);
      take(r, &res, 0);
    }
  }
  unlink(ref);
  progress("\n");
}

static int cmp_u64(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static uint64_t median_u64(uint64_t *v, int n)
{
  qsort(v, (size_t)n, sizeof *v, cmp_u64);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void summarize(row *r)
{
  uint64_t v[MAX_REPS];
  int n = r->nreps;

  if (r->state || n == 0)
    return;
#define MEDIAN_OF(field) \
  (({ for (int i = 0; i < n; i++) v[i] = (uint64_t)r->reps[i].field; }), \
   median_u64(v, n))
  r->ns = MEDIAN_OF(ns);
  r->spread = r->ns ? (double)(v[n - 1] - v[0]) / (double)r->ns : 0;
  r->cpu = MEDIAN_OF(cpu);
  r->events = MEDIAN_OF(events);
  r->json_bytes = MEDIAN_OF(json_bytes);
  r->file_bytes = MEDIAN_OF(file_bytes);
  r->allocs = MEDIAN_OF(allocs);
  r->max_allocs = v[n - 1];
  r->startup_allocs = MEDIAN_OF(startup_allocs);
  r->rss = (long)MEDIAN_OF(maxrss_kib);
#undef MEDIAN_OF
}

static int measured(const row *r)
{
  return r && r->state == 0 && r->nreps > 0;
}

static double ns_per_event(const row *r)
{
  return (double)r->ns / (double)r->events;
}

/* ---------------------------------------------------------------- targets */

typedef struct target_line {
  char id[8];
  char text[200];
} target_line;

#define MAX_TLINES 96
static target_line tlines[MAX_TLINES];
static int ntlines;
static int misses;

/* One target's verdict: a line for the targets list, and "ID:VERDICT" in
 * the row it concerns (if r).  known: the figure could be measured. */
static void target(row *r, const char *id, int known, int pass,
                   const char *what, const char *fmt, ...)
{
  char figure[96] = "n/a";
  const char *verdict = !known ? "n/a" : pass ? "PASS" : "MISS";
  va_list ap;

  if (known) {
    va_start(ap, fmt);
    vsnprintf(figure, sizeof figure, fmt, ap);
    va_end(ap);
  }
  if (known && !pass)
    misses++;
  if (ntlines < MAX_TLINES) {
    target_line *t = &tlines[ntlines++];
    snprintf(t->id, sizeof t->id, "%s", id);
    snprintf(t->text, sizeof t->text, "%-4s %-66s %-46s %s", id, what,
             figure, verdict);
  }
  if (r && known) {
    size_t len = strlen(r->targets);
    snprintf(r->targets + len, sizeof r->targets - len, "%s%s:%s",
             len ? " " : "", id, verdict);
  }
}

/* The peak-RSS check: workload wl through sink at two N, on /dev/shm. */
typedef struct rss_run {
  int wl, sink;
  int state;               /* 0 measured, 1 n/a, 2 error, 3 not run */
  long small, big;         /* KiB */
  uint64_t allocs[2];      /* after the first events, small and big */
} rss_run;
static rss_run rss_runs[NSINKS + 2];
static int nrss;

/* Events per second of row c divided by row a's. */
static double speedup(const row *c, const row *a)
{
  return ((double)c->events / (double)c->ns) /
         ((double)a->events / (double)a->ns);
}

/* Target id: workload wl's events per second >= want x A's, through sink
 * s on /dev/shm. */
static void target_scaling(const char *id, int wl, int s, double want)
{
  row *a = find_row(W_A, 0, K_TW, s), *c = find_row(wl, 0, K_TW, s);
  int k = measured(a) && measured(c);
  char what[120];

  if (!cfg.sink_on[s] || !cfg.wl_on[wl])
    return;
  snprintf(what, sizeof what, "%s (%d threads) >= %.1fx A's events/s (%s, "
           "shm)", WLS[wl].name, WLS[wl].threads, want, SINKS[s].name);
  target(c, id, k, k && speedup(c, a) >= want, what,
         "%.2fx (%.2f vs %.2f Mev/s)", k ? speedup(c, a) : 0,
         k ? 1e3 * (double)c->events / (double)c->ns : 0,
         k ? 1e3 * (double)a->events / (double)a->ns : 0);
}

/* Target id: workload wl's events per second >= want x those of workload
 * base, both through sink s on /dev/shm. */
static void target_threads(const char *id, int wl, int base, int s,
                           double want)
{
  row *b = find_row(base, 0, K_TW, s), *c = find_row(wl, 0, K_TW, s);
  int k = measured(b) && measured(c);
  char what[120];

  if (!cfg.sink_on[s] || !cfg.wl_on[wl] || !cfg.wl_on[base])
    return;
  snprintf(what, sizeof what, "%s (%d threads) >= %.1fx %s's events/s (%s, "
           "shm)", WLS[wl].name, WLS[wl].threads, want, WLS[base].name,
           SINKS[s].name);
  target(c, id, k, k && speedup(c, b) >= want, what,
         "%.2fx (%.2f vs %.2f Mev/s)", k ? speedup(c, b) : 0,
         k ? 1e3 * (double)c->events / (double)c->ns : 0,
         k ? 1e3 * (double)b->events / (double)b->ns : 0);
}

/* Target id: workload A through sink s on /dev/shm within want x the
 * time of its bound (a row of kind bound). */
static void target_bound(const char *id, int s, int bound, double want,
                         const char *what)
{
  row *r = find_row(W_A, 0, K_TW, s), *b = find_row(W_A, 0, bound, 0);
  int k = measured(r) && measured(b);

  target(r, id, k, k && r->ns <= want * (double)b->ns, what,
         "%.2fx (%.1f vs %.1f ns/ev)", k ? (double)r->ns / (double)b->ns : 0,
         k ? ns_per_event(r) : 0, k ? ns_per_event(b) : 0);
}

/* P7: no allocation once every producer has made its first event (the
 * stage and slot it allocates then are shown apart, per thread), per
 * sink, over every run of the table. */
static void target_allocs(void)
{
  char what[120];

  for (int s = 0; s < NSINKS; s++) {
    uint64_t steady = 0, startup = 0, events = 0, threads = 0;
    row *worst = NULL;
    if (!cfg.sink_on[s])
      continue;
    for (int i = 0; i < nrows; i++) {
      row *r = &rows[i];
      if (r->kind != K_TW || r->sink != s || !measured(r))
        continue;
      for (int x = 0; x < r->nreps; x++) {
        steady += r->reps[x].allocs;
        startup += r->reps[x].startup_allocs;
        threads += (uint64_t)r->reps[x].threads;
        events += r->reps[x].events;
      }
      if (r->max_allocs && (!worst || r->max_allocs > worst->max_allocs))
        worst = r;
    }
    snprintf(what, sizeof what, "no allocation after each thread's first "
             "event (%s, all runs)", SINKS[s].name);
    target(worst, "P7", HAVE_ALLOC_COUNT && events > 0, steady == 0, what,
           "%" PRIu64 " in %.3g ev, <= %" PRIu64 " a run; %.1f/thr at "
           "start", steady, (double)events, worst ? worst->max_allocs : 0,
           threads ? (double)startup / (double)threads : 0);
  }
}

/* P8: peak RSS flat from N = 100k to N = 10M. */
static void target_rss(void)
{
  char what[120];

  if (cfg.rss_big == 0) {
    target(NULL, "P8", 0, 0, "peak RSS flat from N = 100k to BENCH_RSS_N "
           "(BENCH_RSS_N=0: not run)", "");
    return;
  }

  for (int i = 0; i < nrss; i++) {
    rss_run *q = &rss_runs[i];
    if (q->state == 1)
      continue;
    snprintf(what, sizeof what, "RSS(N=%" PRIu64 ") - RSS(N=%" PRIu64
             ") <= 256 KiB (%s %s shm)", cfg.rss_big, cfg.rss_small,
             WLS[q->wl].name, SINKS[q->sink].name);
    target(NULL, "P8", q->state == 0, q->big - q->small <= 256, what,
           "%+ld KiB (%ld vs %ld)", q->big - q->small, q->big, q->small);
  }
}

/* The targets of issue 12: threads (P1-P8). */
static void evaluate_thread_targets(void)
{
  static const int p3_wl[2] = { W_C8, W_C16 };
  static const int p3_sink[3] = { S_FILE, S_FILEBG, S_MMAP };

  target_scaling("P1", W_C2, S_FILEBG, 1.7);
  target_scaling("P1", W_C2, S_MMAP, 1.7);
  target_scaling("P2", W_C2, S_FILE, 1.5);
  for (int w = 0; w < 2; w++)
    for (int x = 0; x < 3; x++)
      target_scaling("P3", p3_wl[w], p3_sink[x], 1.5);
  /* Issue 31: more threads than cores cost the mmap sink nothing. */
  target_threads("M1", W_C8, W_C2, S_MMAP, 1.0);
  for (int s = 0; s < NSINKS; s++) {
    row *r = find_row(W_C2, 0, K_TW, s);
    char what[120];
    int k = measured(r) && r->lat.has_lat;
    if ((s != S_FILEBG && s != S_MMAP) || !cfg.sink_on[s] ||
        !cfg.wl_on[W_C2])
      continue;
    snprintf(what, sizeof what, "C2 %s shm: producer 0's p99.9 <= 1 us",
             SINKS[s].name);
    target(r, "P4", k, k && r->lat.p999 <= 1000, what,
           "p99.9 = %" PRIu64 " ns (p99 %" PRIu64 ")", k ? r->lat.p999 : 0,
           k ? r->lat.p99 : 0);
  }
  /* Issue 22 item 2: the producer's latency with formatting on the
   * committer. */
  if (cfg.sink_on[S_FILEBGC] && cfg.wl_on[W_A]) {
    row *r = find_row(W_A, 0, K_TW, S_FILEBGC);
    int k = measured(r) && r->lat.has_lat;
    target(r, "F1", k, k && r->lat.p50 <= 15 && r->lat.p999 <= 1000,
           "A file-bgc shm: producer 0's p50 <= 15 ns, p99.9 <= 1 us",
           "p50 = %" PRIu64 " ns, p99.9 = %" PRIu64 " ns",
           k ? r->lat.p50 : 0, k ? r->lat.p999 : 0);
  }
  if (cfg.sink_on[S_FILEBG])
    target_bound("P5", S_FILEBG, K_WRITE, 1.5,
                 "A file-bg /dev/shm: <= 1.5x the write bound");
  if (cfg.sink_on[S_MMAP])
    target_bound("P6", S_MMAP, K_MMAPCPY, 1.3,
                 "A mmap /dev/shm: <= 1.3x its bound (mmap-cpy; was T3)");
  target_allocs();
  target_rss();
}

/* The targets of issue 5 still in force (T3, T9, T10: now P6, P8, P7;
 * T5, T6, T11: replaced by P1-P4). */
static void evaluate_targets(void)
{
  row *a = find_row(W_A, 0, K_TW, S_FILE), *b, *z, *g;
  row *fp = find_row(W_A, 0, K_FPRINTF, 0);
  char what[120];
  int k;

  evaluate_thread_targets();
  if (cfg.sink_on[S_FILE]) {
    target_bound("T1", S_FILE, K_WRITE, 1.5,
                 "A file /dev/shm: <= 1.5x the write bound");
    k = measured(a) && measured(fp);
    target(a, "T2", k, k && fp->ns >= 10.0 * a->ns,
           "A file /dev/shm: >= 10x faster than fprintf",
           "%.1fx faster", k ? (double)fp->ns / a->ns : 0);
  }
  if (cfg.wl_on[W_A] && cfg.wl_on[W_B])
    for (int s = 0; s < NSINKS; s++) {
      double ra, rb;
      if (!cfg.sink_on[s])
        continue;
      a = find_row(W_A, 0, K_TW, s);
      b = find_row(W_B, 0, K_TW, s);
      k = measured(a) && measured(b);
      ra = k ? (double)a->ns / a->json_bytes : 0;
      rb = k ? (double)b->ns / b->json_bytes : 0;
      snprintf(what, sizeof what,
               "B within 1.5x of A per byte written (%s, shm)",
               SINKS[s].name);
      target(b, "T4", k, k && rb <= 1.5 * ra, what,
             "%.2fx (%.3f vs %.3f ns/B)", k ? rb / ra : 0, rb, ra);
    }
  if (cfg.sink_on[S_GZIP])
    for (int w = 0; w < NWLS; w++) {
      if (!cfg.wl_on[w])
        continue;
      g = find_row(w, 0, K_TW, S_GZIP);
      z = find_row(w, 0, K_ZLIB, 0);
      k = measured(g) && measured(z);
      snprintf(what, sizeof what,
               "%s gzip: events/s >= 0.9x zlib alone on the same bytes",
               WLS[w].name);
      target(g, "T7", k, k && (double)z->ns >= 0.9 * g->ns, what,
             "%.2fx (%.1f vs %.1f ns/ev)", k ? (double)z->ns / g->ns : 0,
             k ? ns_per_event(g) : 0, k ? ns_per_event(z) : 0);
      if (!WLS[w].full)
        continue;                            /* no gzip(1) run */
      z = find_row(w, 0, K_GZIP1, 0);
      k = measured(g) && measured(z);
      snprintf(what, sizeof what, "%s gzip: size <= 1.05x gzip -1",
               WLS[w].name);
      target(g, "T8", k, k && g->file_bytes <= 1.05 * z->file_bytes, what,
             "%.3fx (%.1f vs %.1f B/ev)",
             k ? (double)g->file_bytes / z->file_bytes : 0,
             k ? (double)g->file_bytes / g->events : 0,
             k ? (double)z->file_bytes / z->events : 0);
    }
  if (!cfg.sink_on[S_FILE])
    return;
  a = find_row(W_A, 0, K_TW, S_FILE);
  k = measured(a) && measured(fp);
  target(fp, "T12", k, k && a->file_bytes <= fp->file_bytes,
         "A: bytes/event no larger than the fprintf baseline's",
         "%.2f vs %.2f B/ev", k ? (double)a->file_bytes / a->events : 0,
         k ? (double)fp->file_bytes / fp->events : 0);
}

/* ---------------------------------------------------------------- output */

/* The 1, 5 and 15 minute load averages, as /proc/loadavg shows them. */
static const char *load_average(void)
{
  static char buf[64];
  FILE *f = fopen("/proc/loadavg", "r");
  int a = 0;

  strcpy(buf, "unknown");
  if (f) {
    if (fgets(buf, sizeof buf, f))
      for (char *p = buf; *p; p++)
        if (*p == ' ' && ++a == 3) {
          *p = 0;
          break;
        }
    fclose(f);
  }
  buf[strcspn(buf, "\n")] = 0;
  return buf;
}

static void print_header(const result *idle)
{
  char model[128] = "unknown", line[256], date[64];
  FILE *f = fopen("/proc/cpuinfo", "r");
  struct utsname u;
  struct statfs sf;
  time_t t = time(NULL);
  tw_options o;

  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "model name", 10) == 0) {
      char *p = strchr(line, ':');
      if (p) {
        p += 1 + (p[1] == ' ');
        p[strcspn(p, "\n")] = 0;
        snprintf(model, sizeof model, "%s", p);
      }
      break;
    }
  if (f)
    fclose(f);
  uname(&u);
  strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S %Z", localtime(&t));
  open_options(&o, S_FILE, NULL, NULL, 0);
  printf("tracewriter benchmark -- %s\n", date);
  printf("machine: %s, nproc %ld, %s %s %s, zlib %s; load average %s\n",
         model, sysconf(_SC_NPROCESSORS_ONLN), u.sysname, u.release,
         u.machine, zlibVersion(), load_average());
  if (o.flush_interval_ns)
    snprintf(line, sizeof line, "and every %.3f ms",
             (double)o.flush_interval_ns / 1e6);
  else
    snprintf(line, sizeof line, "no flush interval");
  printf("library: tracewriter %s; commit: every full buffer of %zu KiB, "
         "%s, tw_flush, tw_close;\n"
         "         background commit: %u buffers; mmap chunk %zu KiB; gzip "
         "level %d (commit: background)\n",
         tw_version(), o.buffer_size / 1024, line, o.buffer_count,
         o.mmap_chunk / 1024, gzip_level());
  if (env_str("BENCH_OPTIONS", NULL))
    printf("BENCH_OPTIONS: \"%s\" added to every sink's options\n",
           env_str("BENCH_OPTIONS", NULL));
  printf("runs: N = %" PRIu64 " events, median of %d repetitions (C8 and "
         "C16: %d), each in a forked child,\n      interleaved\n", cfg.n,
         cfg.reps, cfg.reps_many);
  for (int d = 0; d < 2; d++) {
    const char *fs = "?";
    if (!cfg.dir[d][0]) {
      printf("%-4s: %s not usable: skipped\n", DIR_NAME[d], cfg.base[d]);
      continue;
    }
    if (statfs(cfg.dir[d], &sf) == 0)
      fs = sf.f_type == 0x01021994 ? "tmpfs" :
           sf.f_type == 0xEF53 ? "ext2/3/4" : sf.f_type == 0x58465342 ?
           "xfs" : sf.f_type == 0x9123683E ? "btrfs" : "other";
    printf("%-4s: %s (%s)%s\n", DIR_NAME[d], cfg.base[d], fs,
           d ? ", page cache, no fsync" : ", CPU cost");
  }
  printf("latency: %s at %.3f GHz, every call of producer 0 (the main "
         "thread), separate run;\n         timer overhead p50 %" PRIu64
         " ns, p99 %" PRIu64 " ns (included in the figures)\n",
         HAVE_RDTSC ? "rdtsc" : "clock_gettime", tick_ghz, idle->p50,
         idle->p99);
  printf("peak RSS: ru_maxrss of the child; a child that only runs the "
         "timer: %ld KiB\n", idle->maxrss_kib);
  printf("allocations: %s\n", HAVE_ALLOC_COUNT
         ? "malloc/calloc/realloc/memalign interposed, counted from after "
           "tw_open to before tw_close;\n             those inside each "
           "producer's first event (its staging) apart"
         : "not counted (not glibc)");
}

static void print_table(void)
{
  printf("\n%-3s %-8s %-4s %8s %5s %7s %7s %7s %8s %9s %8s %7s %7s %6s "
         "%6s %7s  %s\n", "wl", "sink", "dir", "ns/ev", "+-%", "cpu/ev",
         "MB/s", "B/ev", "x bound", "x fprintf", "alloc/ev", "1st/thr",
         "RSS KiB", "p50", "p99", "p99.9", "targets");
  for (int i = 0; i < nrows; i++) {
    row *r = &rows[i], *fp, *bound = NULL;
    char xb[16] = "", xf[16] = "", al[16] = "", al0[16] = "", rss[24];
    char p[3][12] = { "", "", "" };

    if (i > 0 && (rows[i - 1].wl != r->wl || rows[i - 1].dir != r->dir))
      printf("\n");
    printf("%-3s %-8s %-4s ", WLS[r->wl].name, row_name(r), DIR_NAME[r->dir]);
    if (r->state || !measured(r)) {
      printf("%s\n", r->state ? r->msg : "not run");
      continue;
    }
    if (r->kind == K_GZIP1 || r->kind == K_GZIP6) {
      printf("%8s %5s %7s %7s %7.1f %8s  (size only, of the same JSON)\n",
             "-", "", "", "", (double)r->file_bytes / r->events, "");
      continue;
    }
    fp = find_row(r->wl, r->dir, K_FPRINTF, 0);
    if (r->kind == K_TW)
      bound = find_row(r->wl, r->dir, r->sink == S_MMAP ? K_MMAPCPY :
                       r->sink == S_GZIP ? K_ZLIB : K_WRITE, 0);
    if (measured(bound))
      snprintf(xb, sizeof xb, "%.2fx", (double)r->ns / bound->ns);
    if (measured(fp))
      snprintf(xf, sizeof xf, "%.1fx", (double)fp->ns / r->ns);
    if (r->kind == K_TW && HAVE_ALLOC_COUNT) {
      snprintf(al, sizeof al, r->allocs ? "%.1e" : "0",
               (double)r->allocs / r->events);
      snprintf(al0, sizeof al0, "%.1f", (double)r->startup_allocs /
               WLS[r->wl].threads);
    }
    if (r->lat.has_lat) {
      snprintf(p[0], sizeof p[0], "%" PRIu64, r->lat.p50);
      snprintf(p[1], sizeof p[1], "%" PRIu64, r->lat.p99);
      snprintf(p[2], sizeof p[2], "%" PRIu64, r->lat.p999);
    }
    if (r->kind == K_TW || r->kind == K_FPRINTF)
      snprintf(rss, sizeof rss, "%ld", r->rss);
    else
      snprintf(rss, sizeof rss, "-");        /* it holds the bytes */
    printf("%8.1f %5.1f %7.1f %7.0f %7.1f %8s %9s %8s %7s %7s %6s %6s %7s"
           "  %s\n", ns_per_event(r), r->spread * 100,
           (double)r->cpu / r->events, (double)r->json_bytes * 1e3 / r->ns,
           (double)r->file_bytes / r->events, xb, xf, al, al0, rss, p[0],
           p[1], p[2], r->targets);
  }
}

/* Throughput of the thread workloads relative to one thread's (A), per
 * sink and directory: events/s, and CPU time per event. */
static void print_threads(void)
{
  int any = 0, width = 0;

  for (int w = W_C2; w <= W_C16; w++)
    any |= cfg.wl_on[w];
  if (!any)
    return;
  printf("\nthreads: events/s of Ck / events/s of A (one thread), medians, "
         "same sink and directory;\ncpu x A: CPU time per event / A's "
         "(all threads); this machine has %ld CPUs\n",
         sysconf(_SC_NPROCESSORS_ONLN));
  if (!cfg.wl_on[W_A]) {
    printf("  not computed: BENCH_WORKLOADS has no A\n");
    return;
  }
  for (int w = W_C2; w <= W_C16; w++)
    width += cfg.wl_on[w] ? 7 : 0;
  printf("\n%-8s %-4s %8s   %-*s   %s\n", "", "", "", width, "events/s x A",
         "cpu/ev x A");
  printf("%-8s %-4s %8s ", "sink", "dir", "A Mev/s");
  for (int pass = 0; pass < 2; pass++) {
    printf("  ");
    for (int w = W_C2; w <= W_C16; w++)
      if (cfg.wl_on[w])
        printf(" %6s", WLS[w].name);
  }
  printf("\n");
  for (int d = 0; d < 2; d++) {
    if (!cfg.dir[d][0])
      continue;
    for (int s = 0; s < NSINKS; s++) {
      row *a = find_row(W_A, d, K_TW, s);
      if (!cfg.sink_on[s])
        continue;
      printf("%-8s %-4s ", SINKS[s].name, DIR_NAME[d]);
      if (!measured(a)) {
        printf("%8s  %s\n", "-", a && a->state ? a->msg : "A not measured");
        continue;
      }
      printf("%8.2f ", 1e3 * (double)a->events / (double)a->ns);
      for (int pass = 0; pass < 2; pass++) {
        printf("  ");
        for (int w = W_C2; w <= W_C16; w++) {
          row *c = find_row(w, d, K_TW, s);
          char cell[16] = "-";
          if (!cfg.wl_on[w])
            continue;
          if (measured(c))
            snprintf(cell, sizeof cell, "%.2fx", pass == 0 ? speedup(c, a)
                     : ((double)c->cpu / (double)c->events) /
                       ((double)a->cpu / (double)a->events));
          printf(" %6s", cell);
        }
      }
      printf("\n");
    }
  }
}

static void print_notes(void)
{
  const char *group = "";

  printf("\nns/ev: median wall time per event (tw_open .. tw_close); +-%%: "
         "(max - min) / median of the runs;\n"
         "cpu/ev: median CPU time (all threads, user + system) per event "
         "in the same region;\n"
         "MB/s: uncompressed JSON bytes per second; B/ev: bytes of the "
         "output file per event;\n"
         "x bound: time / the bound's time (file: write(2), mmap: mmap-cpy, "
         "gzip: zlib); x fprintf: fprintf's time / time;\n"
         "alloc/ev: heap allocations per event, but those of each "
         "producer's first event: 1st/thr, per thread;\n"
         "p50/p99/p99.9: ns per call of producer 0 (the main thread), "
         "separate run; RSS KiB: median peak RSS of the runs\n"
         "(not shown for the bounds, which hold the whole output in "
         "memory).\n");
  print_threads();
  printf("\npeak RSS, /dev/shm, one run each (and the allocations after "
         "each thread's first event):\n");
  for (int i = 0; i < nrss; i++) {
    rss_run *q = &rss_runs[i];
    printf("  %-3s %-8s ", WLS[q->wl].name, SINKS[q->sink].name);
    if (q->state == 1)
      printf("n/a (sink not available)\n");
    else if (q->state == 3)
      printf("not run\n");
    else if (q->state)
      printf("ERROR\n");
    else
      printf("N=%-9" PRIu64 " %7ld KiB %5" PRIu64 " al.   N=%-9" PRIu64
             " %7ld KiB %5" PRIu64 " al.   difference %+ld KiB\n",
             cfg.rss_small, q->small, q->allocs[0], cfg.rss_big, q->big,
             q->allocs[1], q->big - q->small);
  }
  printf("\ntargets (medians on this machine)\n");
  for (int i = 0; i < ntlines; i++) {
    if (tlines[i].id[0] != group[0]) {
      group = tlines[i].id[0] == 'P' ? "P" : "T";
      printf("%s", i ? "\n" : "");
      printf(*group == 'P' ? "  issue 12, threads (P):\n"
                           : "  issue 5 (T):\n");
    }
    printf("  %s\n", tlines[i].text);
  }
  printf("\n%d target(s) missed; %d run(s) failed; load average at the end "
         "%s\n", misses, errors, load_average());
}

/* ================================================ cost of server options */

/* Workload A through the file sink with the background committer (the
 * file-bg row of the table), plain and with each option of COSTS, in both
 * directories: the same reps, interleaved, so the ratios to plain are
 * measured under the same conditions.  Runs after the table, printed
 * after it. */

typedef struct cost_row {
  row r;                   /* the runs (kind K_TW, sink S_FILEBG) */
  int cost;                /* index into COSTS */
  uint64_t commits;        /* median, counted before tw_close */
  uint64_t rotations;      /* most in a run: the highest file number */
  unsigned kept;           /* most rotated files left after a run */
} cost_row;

static cost_row cost_rows[2][NCOSTS];
static int cost_measured;
static int cost_errors;    /* the section's failures (not in errors) */

static void configure_costs(const char *list)
{
  if (strcmp(list, "none") == 0)
    return;
  for (const char *p = list; p && *p;
       p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
    size_t n = strcspn(p, ",");
    int c;
    for (c = 1; c < NCOSTS; c++)
      if (strlen(COSTS[c].name) == n && strncmp(p, COSTS[c].name, n) == 0)
        break;
    if (c == NCOSTS) {
      fprintf(stderr, "bench: BENCH_COSTS: only flush, sync, rotate, or "
              "none\n");
      exit(2);
    }
    cfg.cost_on[c] = cfg.cost_on[C_PLAIN] = 1;
  }
}

/* Remove the files that rotation made from path (DIR/STEM.EXT ->
 * DIR/STEM.NNNNNN.EXT); the highest NNNNNN into *highest (0 if none) and
 * how many there were into *count. */
static void remove_rotated(const char *path, uint64_t *highest,
                           unsigned *count)
{
  char dir[PATH_MAX], name[PATH_MAX];
  const char *base = strrchr(path, '/'), *ext;
  size_t stem;
  struct dirent *e;
  DIR *dp;

  *highest = 0;
  *count = 0;
  base = base ? base + 1 : path;
  snprintf(dir, sizeof dir, "%.*s", (int)(base - path), path);
  if (!dir[0])
    strcpy(dir, ".");
  ext = strchr(base, '.');
  stem = ext ? (size_t)(ext - base) : strlen(base);
  if (!ext)
    ext = "";
  if (!(dp = opendir(dir)))
    return;
  while ((e = readdir(dp)) != NULL) {
    const char *p = e->d_name + stem + 1;
    char *end;
    unsigned long long k;
    if (strncmp(e->d_name, base, stem) != 0 || e->d_name[stem] != '.' ||
        *p < '0' || *p > '9')
      continue;
    k = strtoull(p, &end, 10);
    if (end - p < 6 || strcmp(end, ext) != 0)
      continue;
    snprintf(name, sizeof name, "%s/%s", dir, e->d_name);
    if (unlink(name) == 0) {
      ++*count;
      if (k > *highest)
        *highest = k;
    }
  }
  closedir(dp);
}

static void cost_job(job *j, int d, int c)
{
  memset(j, 0, sizeof *j);
  j->kind = K_TW;
  j->wl = W_A;
  j->sink = S_FILEBG;
  j->n = cfg.n;
  j->extra = COSTS[c].options;
  snprintf(j->out, sizeof j->out, "%s/A-cost-%s.json", cfg.dir[d],
           COSTS[c].name);
}

static void measure_costs(void)
{
  char err[160];
  tw_options o;
  result res;
  job j;
  int errors_before = errors;    /* take() counts into errors */

  for (int d = 0; d < 2; d++) {
    int on = 0;
    if (!cfg.dir[d][0])
      continue;
    for (int c = 0; c < NCOSTS; c++) {
      cost_row *cr = &cost_rows[d][c];
      memset(cr, 0, sizeof *cr);
      cr->cost = c;
      cr->r.wl = W_A;
      cr->r.dir = d;
      cr->r.kind = K_TW;
      cr->r.sink = S_FILEBG;
      if (!cfg.cost_on[c])
        continue;
      on = 1;
      /* Options this library does not know: the row is n/a for rotation
       * (being added), an error for the others. */
      if (open_options(&o, S_FILEBG, COSTS[c].options, err, sizeof err)) {
        cr->r.state = c == C_ROTATE ? 1 : 2;
        if (c == C_ROTATE)
          snprintf(cr->r.msg, sizeof cr->r.msg,
                   "n/a (rotation not available)");
        else {
          snprintf(cr->r.msg, sizeof cr->r.msg, "ERROR options: %.140s",
                   err);
          cost_errors++;
        }
      }
    }
    if (!on)
      continue;
    cost_measured = 1;
    progress("bench: cost of server options, %s: ", DIR_NAME[d]);
    cost_job(&j, d, C_PLAIN);                /* warm-up, not counted */
    run_job(&j, &res);
    unlink(j.out);
    for (int rep = 0; rep < cfg.reps; rep++) {
      progress("%d ", rep + 1);
      for (int c = 0; c < NCOSTS; c++) {
        cost_row *cr = &cost_rows[d][c];
        uint64_t highest;
        unsigned kept;
        if (!cfg.cost_on[c] || cr->r.state)
          continue;
        cost_job(&j, d, c);
        run_job(&j, &res);
        unlink(j.out);
        remove_rotated(j.out, &highest, &kept);
        if (highest > cr->rotations)
          cr->rotations = highest;
        if (kept > cr->kept)
          cr->kept = kept;
        if (res.status == TW_EOPTION && c == C_ROTATE) {
          cr->r.state = 1;                   /* tw_open refused it */
          snprintf(cr->r.msg, sizeof cr->r.msg,
                   "n/a (rotation not available)");
        } else {
          take(&cr->r, &res, 0);
        }
      }
    }
    progress("\n");
  }
  for (int d = 0; d < 2; d++)
    for (int c = 0; c < NCOSTS; c++) {
      cost_row *cr = &cost_rows[d][c];
      uint64_t v[MAX_REPS];
      if (!measured(&cr->r))
        continue;
      for (int i = 0; i < cr->r.nreps; i++)
        v[i] = cr->r.reps[i].commits;
      cr->commits = median_u64(v, cr->r.nreps);
      summarize(&cr->r);
      if (c == C_ROTATE && cr->kept > COST_KEEP)
        cost_errors++;                       /* keep= not honoured */
    }
  cost_errors += errors - errors_before;
  errors = errors_before;
}

static void print_costs(void)
{
  tw_options o;

  if (!cost_measured)
    return;
  open_options(&o, S_FILEBG, NULL, NULL, 0);
  printf("\ncost of server options: workload A, N = %" PRIu64 ", sink "
         "\"%s\", buffer %zu KiB x %u,\nmedian of %d repetitions, "
         "interleaved; x plain: this row's median / plain's, same "
         "directory\n", cfg.n, SINKS[S_FILEBG].options,
         o.buffer_size / 1024, o.buffer_count, cfg.reps);
  printf("\n%-20s %-4s %8s %5s %7s %8s %8s %8s\n", "options", "dir",
         "ns/ev", "+-%", "cpu/ev", "x plain", "cpu x", "commits");
  for (int d = 0, lines = 0; d < 2; d++) {
    const cost_row *plain = &cost_rows[d][C_PLAIN];
    if (!cfg.dir[d][0])
      continue;
    if (lines)
      printf("\n");
    for (int c = 0; c < NCOSTS; c++) {
      const cost_row *cr = &cost_rows[d][c];
      char xp[16] = "", xc[16] = "", note[80] = "";
      if (!cfg.cost_on[c])
        continue;
      lines++;
      printf("%-20s %-4s ", c == C_PLAIN ? "(plain)" : COSTS[c].options,
             DIR_NAME[d]);
      if (cr->r.state || !measured(&cr->r)) {
        printf("%s\n", cr->r.state ? cr->r.msg : "not run");
        continue;
      }
      if (measured(&plain->r)) {
        snprintf(xp, sizeof xp, "%.2fx", (double)cr->r.ns / plain->r.ns);
        snprintf(xc, sizeof xc, "%.2fx", (double)cr->r.cpu / plain->r.cpu);
      }
      if (c == C_ROTATE)
        snprintf(note, sizeof note, "%" PRIu64 " rotations, %u kept "
                 "(keep=%u)%s", cr->rotations, cr->kept, COST_KEEP,
                 cr->kept > COST_KEEP ? ": TOO MANY" : "");
      printf("%8.1f %5.1f %7.1f %8s %8s %8" PRIu64 "%s%s\n",
             ns_per_event(&cr->r), cr->r.spread * 100,
             (double)cr->r.cpu / cr->r.events, xp, xc, cr->commits,
             note[0] ? "  " : "", note);
    }
  }
  printf("\nshm: %s (no device: sync costs only the calls); disk: %s; "
         "commits: tw_stats before tw_close\n", cfg.base[0], cfg.base[1]);
  printf("cost section: %d run(s) failed\n", cost_errors);
}

/* ------------------------------------------------------------------ setup */

static uint64_t env_u64(const char *name, uint64_t dflt, uint64_t min)
{
  const char *s = getenv(name);
  char *end;
  unsigned long long v;
  if (!s || !*s)
    return dflt;
  errno = 0;
  v = strtoull(s, &end, 10);
  if (errno || *end || v < min) {
    fprintf(stderr, "bench: bad %s=%s (a number >= %" PRIu64 ")\n", name, s,
            min);
    exit(2);
  }
  return v;
}

static const char *env_str(const char *name, const char *dflt)
{
  const char *s = getenv(name);
  return s && *s ? s : dflt;
}

static void remove_dirs(void)
{
  for (int d = 0; d < 2; d++)
    if (cfg.dir[d][0])
      rmdir(cfg.dir[d]);                     /* empty by then */
}

/* BENCH_WORKLOADS: names (A B C2 C4 C8 C16 D; C alone is C2), commas
 * optional ("ABCD", "A,C2,C8"), or none. */
static void configure_workloads(const char *list)
{
  if (strcmp(list, "none") == 0)
    return;                                  /* the cost section alone */
  for (const char *p = list; *p;) {
    size_t n = 1;
    int w;
    if (*p == ',') {
      p++;
      continue;
    }
    while (p[n] >= '0' && p[n] <= '9')
      n++;
    if ((w = wl_find(p, n, NWLS)) < 0) {
      fprintf(stderr, "bench: BENCH_WORKLOADS: unknown workload \"%.*s\" "
              "(A B C2 C4 C8 C16 D, C for C2, or none)\n", (int)n, p);
      exit(2);
    }
    cfg.wl_on[w] = cfg.any_wl = 1;
    p += n;
  }
}

static void configure(void)
{
  const char *sinks;

  cfg.n = env_u64("BENCH_N", 1000000, 100);
  cfg.reps = (int)env_u64("BENCH_REPS", 5, 1);
  if (cfg.reps > MAX_REPS)
    cfg.reps = MAX_REPS;
  cfg.reps_many = (int)env_u64("BENCH_REPS_MANY", (uint64_t)cfg.reps, 1);
  if (cfg.reps_many > MAX_REPS)
    cfg.reps_many = MAX_REPS;
  cfg.rss_small = 100000;
  cfg.rss_big = env_u64("BENCH_RSS_N", 10000000, 0);
  cfg.base[0] = env_str("BENCH_SHM", "/dev/shm");
  cfg.base[1] = env_str("BENCH_DIR", "/var/tmp");
  configure_workloads(env_str("BENCH_WORKLOADS", "A,B,C2,C4,C8,C16,D"));
  sinks = env_str("BENCH_SINKS", "file,file-bg,mmap,gzip");
  for (int s = 0; s < NSINKS; s++) {
    size_t n = strlen(SINKS[s].name);
    for (const char *p = sinks; p && *p;
         p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
      if (strncmp(p, SINKS[s].name, n) == 0 && (p[n] == ',' || !p[n]))
        cfg.sink_on[s] = 1;
  }
  configure_costs(env_str("BENCH_COSTS", "flush,sync,rotate"));
  for (int d = 0; d < 2; d++) {
    snprintf(cfg.dir[d], sizeof cfg.dir[d], "%s/tw-bench.XXXXXX", cfg.base[d]);
    if (!mkdtemp(cfg.dir[d])) {
      fprintf(stderr, "bench: %s: %s\n", cfg.base[d], strerror(errno));
      cfg.dir[d][0] = 0;
    }
  }
  atexit(remove_dirs);
}

/* The peak-RSS check, on /dev/shm: workload A through every selected
 * sink and, if C8 is selected, C8 through file and mmap, each once at
 * N = rss_small and once at N = rss_big. */
static void measure_rss(void)
{
  result res;
  job j;

  for (int s = 0; s < NSINKS; s++)
    if (cfg.sink_on[s])
      rss_runs[nrss++] = (rss_run){ W_A, s, 3, 0, 0, { 0, 0 } };
  for (int s = 0; s < NSINKS; s++)
    if (cfg.wl_on[W_C8] && cfg.sink_on[s] && (s == S_FILE || s == S_MMAP))
      rss_runs[nrss++] = (rss_run){ W_C8, s, 3, 0, 0, { 0, 0 } };
  if (!cfg.dir[0][0] || cfg.rss_big == 0)
    return;
  progress("bench: peak RSS: ");
  for (int i = 0; i < nrss; i++) {
    rss_run *q = &rss_runs[i];
    progress("%s-%s ", WLS[q->wl].name, SINKS[q->sink].name);
    memset(&j, 0, sizeof j);
    j.kind = K_TW;
    j.wl = q->wl;
    j.sink = q->sink;
    snprintf(j.out, sizeof j.out, "%s/%s-rss%s", cfg.dir[0],
             WLS[q->wl].name, SINKS[q->sink].ext);
    q->state = 0;
    for (int big = 0; big < 2; big++) {
      j.n = big ? cfg.rss_big : cfg.rss_small;
      run_job(&j, &res);
      unlink(j.out);
      if (res.status) {
        q->state = res.status == TW_ESINK ? 1 : 2;
        if (q->state == 2)
          errors++;
        break;
      }
      *(big ? &q->big : &q->small) = res.maxrss_kib;
      q->allocs[big] = res.allocs;
    }
  }
  progress("\n");
}

/* bench --one W SINK DIR: one run in this process, for profilers. */
static int one(int argc, char **argv)
{
  job j;
  result res;
  int s, w;

  if (argc != 5 || (w = wl_find(argv[2], strlen(argv[2]), NWLS_ONE)) < 0) {
    fprintf(stderr,
            "usage: bench --one A|B|C2|C4|C8|C16|D|E|AT|AS SINK DIR\n");
    return 2;
  }
  for (s = 0; s < NSINKS && strcmp(SINKS[s].name, argv[3]); s++)
    continue;
  if (s == NSINKS) {
    fprintf(stderr, "bench: unknown sink %s\n", argv[3]);
    return 2;
  }
  d_init_paths();
  memset(&j, 0, sizeof j);
  j.kind = K_TW;
  j.wl = w;
  j.sink = s;
  j.n = env_u64("BENCH_N", 1000000, 100);
  snprintf(j.out, sizeof j.out, "%s/tw-bench-one.%d%s", argv[4],
           (int)getpid(), SINKS[s].ext);
  memset(&res, 0, sizeof res);
  run_tw(&j, &res);
  unlink(j.out);
  if (res.status) {
    printf("%s %s: %s\n", WLS[w].name, SINKS[s].name, res.status == TW_ESINK
           ? "n/a (sink not available)" : res.msg);
    return res.status == TW_ESINK ? 0 : 1;
  }
  printf("%s %s %s: %" PRIu64 " events, %.1f ns/event, %.1f B/event, ",
         WLS[w].name, SINKS[s].name, argv[4], res.events,
         (double)res.ns / res.events, (double)res.file_bytes / res.events);
  if (HAVE_ALLOC_COUNT)
    printf("%" PRIu64 " allocations (and %" PRIu64 " in the first events "
           "of %d thread(s))\n", res.allocs, res.startup_allocs, res.threads);
  else
    printf("allocations not counted\n");
  return 0;
}

int main(int argc, char **argv)
{
  result idle, res;
  job j;

  if (argc > 1 && strcmp(argv[1], "--one") == 0)
    return one(argc, argv);
  if (argc > 1) {
    fprintf(stderr, "usage: bench [--one A|B|C2|C4|C8|C16|D|E|AT|AS SINK DIR]\n"
            "environment: BENCH_N BENCH_REPS BENCH_REPS_MANY BENCH_DIR "
            "BENCH_SHM BENCH_RSS_N\n             BENCH_WORKLOADS BENCH_SINKS "
            "BENCH_OPTIONS BENCH_COSTS\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  configure();
  d_init_paths();
  calibrate_ticks();
  memset(&j, 0, sizeof j);
  j.kind = K_IDLE;
  run_job(&j, &idle);
  print_header(&idle);

  /* The baselines must write the same bytes as the library. */
  if (cfg.dir[0][0])
    for (int w = 0; w < NWLS; w++) {
      if (!cfg.wl_on[w] || IS_THREADS(w))
        continue;                   /* the order of threads varies */
      memset(&j, 0, sizeof j);
      j.kind = K_CHECK;
      j.wl = w;
      snprintf(j.out, sizeof j.out, "%s/%s-check.json", cfg.dir[0],
               WLS[w].name);
      run_job(&j, &res);
      if (res.status) {
        errors++;
        printf("check %s (N=%u): ERROR %s\n", WLS[w].name, CHECK_N,
               res.msg);
      } else {
        printf("check %s (N=%u): bytes vs the file sink's: %s\n",
               WLS[w].name, CHECK_N, res.msg);
        if (strstr(res.msg, "DIFFER"))
          errors++;
      }
    }
  fflush(stdout);

  for (int w = 0; w < NWLS; w++)
    if (cfg.wl_on[w])
      for (int d = 0; d < 2; d++)
        measure_block(w, d);

  if (cfg.any_wl)
    measure_rss();

  measure_costs();

  if (cfg.any_wl) {
    for (int i = 0; i < nrows; i++)
      summarize(&rows[i]);
    evaluate_targets();
    print_table();
    print_notes();
  }
  print_costs();
  return errors || cost_errors ? 1 : 0;
}
