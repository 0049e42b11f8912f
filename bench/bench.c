/* bench.c -- tracewriter's benchmark: one table, with baselines and ratios
 *
 * Run by `make bench` (never by `make check`).  Prints one table: for each
 * workload, each sink and each directory, the median of BENCH_REPS runs of
 * ns/event, MB/s, bytes/event, allocations/event, peak RSS, and a producer's
 * per-event latency; then the baselines measured in the same run with the
 * same events, the ratios to them, and each target of the performance issue
 * with PASS or MISS.  See bench/README.md.
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
 *   C  as A from 2 threads (the main thread and one more), N/2 each:
 *      thread t writes the events i = 2*j + t, j = 0 .. N/2-1, in order.
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
 * this program, between just after tw_open and just before tw_close.
 * Latency runs are separate runs:
 * each tw_* call of the producer (the main thread) is timed with rdtsc
 * (x86-64) or clock_gettime into a histogram; throughput runs are not.
 *
 * BASELINES, same run, same events, same directory:
 *   fprintf   one fprintf(3) per event to a FILE * with the default stdio
 *             buffer, printing the same fields in the same order (the same
 *             bytes: checked at start), head and tail included: a valid
 *             JSON file.  C: both threads on one FILE *.
 *   write(2)  the bytes the file sink produced, read into memory first (not
 *             timed), then open + write(2) in 64 KiB chunks + close.
 *   mmap-cpy  the same bytes: open + posix_fallocate(size) + mmap + one
 *             memcpy + munmap + close, all timed: the mmap sink must also
 *             reserve blocks and map them.
 *   zlib      the same bytes through zlib's deflate at the gzip sink's
 *             level (gzip wrapper), 64 KiB in and out, output written with
 *             write(2): one core, no formatting.  Timed as above.
 *   gzip -1, gzip -6   sizes only, of the same bytes, by gzip(1).
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
 * (default 5), BENCH_DIR (the disk directory, default /var/tmp), BENCH_SHM
 * (default /dev/shm), BENCH_RSS_N (the large N of the RSS check, default
 * 10000000), BENCH_WORKLOADS (default ABCD), BENCH_SINKS (default
 * file,file-bg,mmap,gzip), BENCH_OPTIONS (an options string added to every
 * sink's, for experiments: "buffer=1MiB"; the targets assume none),
 * BENCH_COSTS (the cost section's rows, default flush,sync,rotate; none
 * skips it).  BENCH_WORKLOADS=none skips the table, its checks and its
 * targets, leaving the cost section.
 *
 *   bench                 the whole benchmark
 *   bench --one W SINK DIR   one run in this process (for profilers),
 *                            N from BENCH_N
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
 * included: this program's definitions take precedence over glibc's. */
static unsigned long alloc_count;
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

static void fp_tail(FILE *f)
{
  fputs("\n]\n", f);
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
};
#define NSINKS 4
enum { S_FILE, S_FILEBG, S_MMAP, S_GZIP };

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
  uint64_t allocs;         /* allocations in the counted window */
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
  char wl;                 /* 'A'..'D' */
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
  char wl;
  uint64_t n;
  int rc;                  /* first error of an event call */
  pthread_barrier_t start, stop;
} tw_run;

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

static inline __attribute__((always_inline)) int
produce_d(tw_writer *w, uint64_t n, int lat)
{
  dgen g;
  tw_event ev;
  int rc = 0;

  dgen_init(&g);
  for (uint64_t i = 0; i < n; i++) {
    uint64_t t0 = 0;
    int r;
    dgen_next(&g, &ev);
    if (lat)
      t0 = ticks();
    r = tw_emit(w, &ev);
    if (lat)
      hist_add(&lat_hist, ticks_to_ns(ticks() - t0));
    if (UNLIKELY(r) && !rc)
      rc = r;
  }
  return rc;
}

static int produce(tw_writer *w, char wl, uint64_t n, int thread, int lat)
{
  switch (wl) {
  case 'A':
    return lat ? produce_ab(w, 0, 0, n, 1, 1) : produce_ab(w, 0, 0, n, 1, 0);
  case 'B':
    return lat ? produce_ab(w, 1, 0, n, 1, 1) : produce_ab(w, 1, 0, n, 1, 0);
  case 'C':
    n = n / 2 * 2;
    if (lat && thread == 0)
      return produce_ab(w, 0, (uint64_t)thread, n, 2, 1);
    return produce_ab(w, 0, (uint64_t)thread, n, 2, 0);
  default:
    return lat ? produce_d(w, n, 1) : produce_d(w, n, 0);
  }
}

static void *second_producer(void *arg)
{
  tw_run *run = arg;
  int rc;
  pthread_barrier_wait(&run->start);
  rc = produce(run->w, run->wl, run->n, 1, 0);
  if (rc)
    run->rc = rc;
  pthread_barrier_wait(&run->stop);
  return NULL;
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
  pthread_t th;
  unsigned long a0, a1;
  uint64_t t0, t1, c0, c1;
  char err[128];
  int rc, threads = j->wl == 'C' ? 2 : 1;

  memset(&run, 0, sizeof run);
  if ((rc = open_options(&o, j->sink, j->extra, err, sizeof err)) != 0) {
    fail_msg(res, rc, "options: %s", err);
    return;
  }
  run.wl = j->wl;
  run.n = j->n;
  if (threads == 2) {
    pthread_barrier_init(&run.start, NULL, 2);
    pthread_barrier_init(&run.stop, NULL, 2);
    if ((rc = pthread_create(&th, NULL, second_producer, &run)) != 0) {
      fail_msg(res, -rc, "pthread_create: %s", strerror(rc));
      return;
    }
  }
  c0 = cpu_ns();
  t0 = now_ns();
  run.w = tw_open(j->out, &o, &rc);
  if (!run.w) {
    if (threads == 2) {                       /* let the thread go */
      pthread_barrier_wait(&run.start);
      pthread_barrier_wait(&run.stop);
      pthread_join(th, NULL);
    }
    fail_msg(res, rc, "tw_open: %s", tw_strerror(rc));
    return;
  }
  a0 = allocs_now();
  if (threads == 2)
    pthread_barrier_wait(&run.start);
  rc = produce(run.w, j->wl, j->n, 0, j->latency);
  if (threads == 2)
    pthread_barrier_wait(&run.stop);
  a1 = allocs_now();
  if (!rc)
    rc = run.rc;
  tw_get_stats(run.w, &st);
  {
    int rc2 = tw_close(run.w);
    if (!rc)
      rc = rc2;
  }
  t1 = now_ns();
  c1 = cpu_ns();
  if (threads == 2)
    pthread_join(th, NULL);
  if (rc) {
    fail_msg(res, rc, "%s", tw_strerror(rc));
    return;
  }
  res->ns = t1 - t0;
  res->cpu = c1 - c0;
  res->events = j->wl == 'C' ? j->n / 2 * 2 : j->n;
  res->json_bytes = st.bytes + 3;            /* the tail "\n]\n" */
  res->file_bytes = file_size(j->out);
  res->allocs = a1 - a0;
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
  char wl;
  uint64_t n;
  sll pid;
  pthread_barrier_t start, stop;
} fp_run;

static sll gettid_ll(void)
{
  return (sll)syscall(SYS_gettid);
}

static void fp_produce(FILE *f, char wl, uint64_t n, int thread, sll pid)
{
  sll tid = gettid_ll();
  switch (wl) {
  case 'A':
    for (uint64_t i = 0; i < n; i++)
      fp_a(f, i, pid, tid);
    break;
  case 'B':
    for (uint64_t i = 0; i < n; i++)
      fp_b(f, i, pid, tid);
    break;
  case 'C':
    n = n / 2 * 2;
    for (uint64_t i = (uint64_t)thread; i < n; i += 2)
      fp_a(f, i, pid, tid);
    break;
  default: {
    dgen g;
    tw_event ev;
    dgen_init(&g);
    for (uint64_t i = 0; i < n; i++) {
      dgen_next(&g, &ev);
      fp_d(f, &ev, pid, tid);
    }
  }
  }
}

static void *fp_second(void *arg)
{
  fp_run *run = arg;
  pthread_barrier_wait(&run->start);
  fp_produce(run->f, run->wl, run->n, 1, run->pid);
  pthread_barrier_wait(&run->stop);
  return NULL;
}

static void run_fprintf(const job *j, result *res)
{
  fp_run run;
  pthread_t th;
  uint64_t t0, t1, c0, c1;
  int rc, threads = j->wl == 'C' ? 2 : 1, bad;

  memset(&run, 0, sizeof run);
  run.wl = j->wl;
  run.n = j->n;
  run.pid = (sll)getpid();
  if (threads == 2) {
    pthread_barrier_init(&run.start, NULL, 2);
    pthread_barrier_init(&run.stop, NULL, 2);
    if ((rc = pthread_create(&th, NULL, fp_second, &run)) != 0) {
      fail_msg(res, -rc, "pthread_create: %s", strerror(rc));
      return;
    }
  }
  c0 = cpu_ns();
  t0 = now_ns();
  if (!(run.f = fopen(j->out, "w"))) {
    fail_msg(res, -errno, "fopen %s: %s", j->out, strerror(errno));
    if (threads == 2)
      _exit(3);                              /* the thread waits forever */
    return;
  }
  fp_head(run.f, run.pid, gettid_ll());
  if (threads == 2)
    pthread_barrier_wait(&run.start);
  fp_produce(run.f, j->wl, j->n, 0, run.pid);
  if (threads == 2)
    pthread_barrier_wait(&run.stop);
  fp_tail(run.f);
  bad = ferror(run.f);
  if (fclose(run.f) != 0)
    bad = 1;
  t1 = now_ns();
  c1 = cpu_ns();
  if (threads == 2)
    pthread_join(th, NULL);
  if (bad) {
    fail_msg(res, -EIO, "fprintf to %s failed", j->out);
    return;
  }
  res->ns = t1 - t0;
  res->cpu = c1 - c0;
  res->events = j->wl == 'C' ? j->n / 2 * 2 : j->n;
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
      fail_msg(res, r.status, "check %c: %s", j->wl, r.msg);
      unlink(sub.out);
      return;
    }
    other = sub.sink == S_GZIP && sub.kind == K_TW
            ? read_gz(sub.out, &len) : read_file(sub.out, &len, &r);
    unlink(sub.out);
    if (!other) {
      fail_msg(res, -EIO, "check %c: cannot read back %s", j->wl, sub.out);
      return;
    }
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
  const char *base[2];     /* shm, disk */
  char dir[2][1024];       /* our directories under them ("" if unusable) */
  const char *workloads;   /* "" for BENCH_WORKLOADS=none */
  int sink_on[NSINKS];
  int cost_on[NCOSTS];     /* the cost section's rows (COSTS) */
} cfg;

static const char *const DIR_NAME[2] = { "shm", "disk" };

/* One line of the table: a tracewriter sink or a baseline, for one
 * workload in one directory. */
typedef struct row {
  char wl;
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
  long rss;
  double spread;           /* (max - min) / median of ns */
  char targets[64];        /* "T1:PASS ..." */
} row;

#define MAX_ROWS 160
static row rows[MAX_ROWS];
static int nrows;
static int errors;

static row *find_row(char wl, int dir, int kind, int sink)
{
  for (int i = 0; i < nrows; i++)
    if (rows[i].wl == wl && rows[i].dir == dir && rows[i].kind == kind &&
        (kind != K_TW || rows[i].sink == sink))
      return &rows[i];
  return NULL;
}

static row *add_row(char wl, int dir, int kind, int sink)
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
  snprintf(j->out, sizeof j->out, "%s/%c-%s%s", cfg.dir[r->dir], r->wl,
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

/* Every run of workload wl in directory d: a reference run of the file
 * sink (whose bytes the bounds write), then reps rounds of every row, in
 * turn (so a slow phase of the machine hits all rows alike), then one
 * latency run per sink, then (shm only) the gzip(1) sizes. */
static void measure_block(char wl, int d)
{
  char ref[PATH_MAX];
  row *block[16];
  int nb = 0, ref_ok;
  result res;
  job j;

  if (!cfg.dir[d][0])
    return;
  progress("bench: workload %c, %s: ", wl, DIR_NAME[d]);
  snprintf(ref, sizeof ref, "%s/%c-reference.json", cfg.dir[d], wl);
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
  block[nb++] = add_row(wl, d, K_FPRINTF, 0);
  block[nb++] = add_row(wl, d, K_WRITE, 0);
  block[nb++] = add_row(wl, d, K_MMAPCPY, 0);
  block[nb++] = add_row(wl, d, K_ZLIB, 0);
  if (!ref_ok)
    for (int i = 0; i < nb; i++)
      if (block[i]->kind != K_TW && block[i]->kind != K_FPRINTF) {
        block[i]->state = 2;
        errors++;
        snprintf(block[i]->msg, sizeof block[i]->msg,
                 "ERROR no reference file: %.130s", res.msg);
      }
  for (int rep = 0; rep < cfg.reps; rep++) {
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
  if (d == 0 && ref_ok) {
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
  char text[200];
} target_line;

static target_line tlines[64];
static int ntlines;
static int misses;

/* One target's verdict: a line for the targets list, and "ID:VERDICT" in
 * the row it concerns.  known: the figure could be measured. */
static void target(row *r, const char *id, int known, int pass,
                   const char *what, const char *fmt, ...)
{
  char figure[80] = "n/a";
  const char *verdict = !known ? "n/a" : pass ? "PASS" : "MISS";
  va_list ap;

  if (known) {
    va_start(ap, fmt);
    vsnprintf(figure, sizeof figure, fmt, ap);
    va_end(ap);
  }
  if (known && !pass)
    misses++;
  if (ntlines < 64)
    snprintf(tlines[ntlines++].text, sizeof tlines[0].text,
             "%-4s %-66s %-32s %s", id, what, figure, verdict);
  if (r && known) {
    size_t len = strlen(r->targets);
    snprintf(r->targets + len, sizeof r->targets - len, "%s%s:%s",
             len ? " " : "", id, verdict);
  }
}

typedef struct rss_run {
  int state;               /* 0 measured, 1 n/a, 2 error */
  long small, big;         /* KiB */
} rss_run;
static rss_run rss_runs[NSINKS];

static void evaluate_targets(void)
{
  row *a = find_row('A', 0, K_TW, S_FILE), *b, *c, *z, *g;
  row *wb = find_row('A', 0, K_WRITE, 0), *fp = find_row('A', 0, K_FPRINTF, 0);
  row *m = find_row('A', 0, K_TW, S_MMAP), *mb = find_row('A', 0, K_MMAPCPY, 0);
  const char *wls = cfg.workloads;
  char what[120];
  int k;

  k = measured(a) && measured(wb);
  target(a, "T1", k, k && a->ns <= 1.5 * wb->ns,
         "A file /dev/shm: <= 1.5x the write bound",
         "%.2fx (%.1f vs %.1f ns/ev)", k ? (double)a->ns / wb->ns : 0,
         k ? ns_per_event(a) : 0, k ? ns_per_event(wb) : 0);
  k = measured(a) && measured(fp);
  target(a, "T2", k, k && fp->ns >= 10.0 * a->ns,
         "A file /dev/shm: >= 10x faster than fprintf",
         "%.1fx faster", k ? (double)fp->ns / a->ns : 0);
  k = measured(m) && measured(mb);
  target(m, "T3", k, k && m->ns <= 1.3 * mb->ns,
         "A mmap /dev/shm: <= 1.3x its bound (mmap-cpy)",
         "%.2fx (%.1f vs %.1f ns/ev)", k ? (double)m->ns / mb->ns : 0,
         k ? ns_per_event(m) : 0, k ? ns_per_event(mb) : 0);
  if (strchr(wls, 'A') && strchr(wls, 'B'))
    for (int s = 0; s < NSINKS; s++) {
      double ra, rb;
      if (!cfg.sink_on[s])
        continue;
      a = find_row('A', 0, K_TW, s);
      b = find_row('B', 0, K_TW, s);
      k = measured(a) && measured(b);
      ra = k ? (double)a->ns / a->json_bytes : 0;
      rb = k ? (double)b->ns / b->json_bytes : 0;
      snprintf(what, sizeof what,
               "B within 1.5x of A per byte written (%s, shm)",
               SINKS[s].name);
      target(b, "T4", k, k && rb <= 1.5 * ra, what,
             "%.2fx (%.3f vs %.3f ns/B)", k ? rb / ra : 0, rb, ra);
    }
  if (strchr(wls, 'A') && strchr(wls, 'C'))
    for (int x = 0; x < 3; x++) {
      static const int order[3] = { S_MMAP, S_FILE, S_FILEBG };
      static const double want[NSINKS] = { 1.3, 1.3, 1.6, 0 };
      int s = order[x];
      double ta, tc;
      if (!cfg.sink_on[s])
        continue;
      a = find_row('A', 0, K_TW, s);
      c = find_row('C', 0, K_TW, s);
      k = measured(a) && measured(c);
      ta = k ? (double)a->events / a->ns : 0;
      tc = k ? (double)c->events / c->ns : 0;
      snprintf(what, sizeof what,
               "C (2 threads) >= %.1fx A's throughput (%s, shm)", want[s],
               SINKS[s].name);
      target(c, s == S_MMAP ? "T5" : "T6", k, k && tc >= want[s] * ta, what,
             "%.2fx (%.1f vs %.1f Mev/s)", k ? tc / ta : 0, tc * 1e3,
             ta * 1e3);
    }
  if (cfg.sink_on[S_GZIP])
    for (const char *w = wls; *w; w++) {
      g = find_row(*w, 0, K_TW, S_GZIP);
      z = find_row(*w, 0, K_ZLIB, 0);
      k = measured(g) && measured(z);
      snprintf(what, sizeof what,
               "%c gzip: events/s >= 0.9x zlib alone on the same bytes", *w);
      target(g, "T7", k, k && (double)z->ns >= 0.9 * g->ns, what,
             "%.2fx (%.1f vs %.1f ns/ev)", k ? (double)z->ns / g->ns : 0,
             k ? ns_per_event(g) : 0, k ? ns_per_event(z) : 0);
      z = find_row(*w, 0, K_GZIP1, 0);
      k = measured(g) && measured(z);
      snprintf(what, sizeof what, "%c gzip: size <= 1.05x gzip -1", *w);
      target(g, "T8", k, k && g->file_bytes <= 1.05 * z->file_bytes, what,
             "%.3fx (%.1f vs %.1f B/ev)",
             k ? (double)g->file_bytes / z->file_bytes : 0,
             k ? (double)g->file_bytes / g->events : 0,
             k ? (double)z->file_bytes / z->events : 0);
    }
  for (int s = 0; s < NSINKS; s++) {
    rss_run *q = &rss_runs[s];
    if (!cfg.sink_on[s] || q->state == 1)
      continue;
    snprintf(what, sizeof what,
             "RSS(N=%" PRIu64 ") - RSS(N=%" PRIu64 ") <= 256 KiB (A %s shm)",
             cfg.rss_big, cfg.rss_small, SINKS[s].name);
    target(NULL, "T9", q->state == 0, q->big - q->small <= 256, what,
           "%+ld KiB (%ld vs %ld)", q->big - q->small, q->big, q->small);
  }
  {
    uint64_t worst = 0, total = 0, events = 0;
    row *wr = NULL;
    for (int i = 0; i < nrows; i++) {
      row *r = &rows[i];
      if (r->kind != K_TW || !measured(r))
        continue;
      for (int x = 0; x < r->nreps; x++) {
        total += r->reps[x].allocs;
        events += r->reps[x].events;
      }
      if (!wr || r->max_allocs > worst) {
        worst = r->max_allocs;
        wr = r;
      }
    }
    k = HAVE_ALLOC_COUNT && wr != NULL;
    target(NULL, "T10", k, total == 0,
           "zero heap allocations per event after tw_open (all runs)",
           "%" PRIu64 " in %.3g events%s%c%s%s", total, (double)events,
           worst ? "; worst " : "", worst ? wr->wl : ' ',
           worst ? " " : "", worst ? row_name(wr) : "");
  }
  for (int s = 0; s < NSINKS; s++) {
    if (s != S_FILEBG && s != S_MMAP)
      continue;
    for (int d = 0; d < 2; d++) {
      row *r = find_row('A', d, K_TW, s);
      k = measured(r) && r->lat.has_lat;
      snprintf(what, sizeof what,
               "A %s %s: producer p99.9 <= 2 us (no write(2) on its path)",
               SINKS[s].name, DIR_NAME[d]);
      if (r || d == 0)
        target(r, "T11", k, k && r->lat.p999 <= 2000, what,
               "p99.9 = %" PRIu64 " ns", k ? r->lat.p999 : 0);
    }
  }
  a = find_row('A', 0, K_TW, S_FILE);
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
  printf("runs: N = %" PRIu64 " events, median of %d repetitions, each in "
         "a forked child, interleaved\n", cfg.n, cfg.reps);
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
  printf("latency: %s at %.3f GHz, every call of the producer (main) "
         "thread, separate run;\n         timer overhead p50 %" PRIu64
         " ns, p99 %" PRIu64 " ns (included in the figures)\n",
         HAVE_RDTSC ? "rdtsc" : "clock_gettime", tick_ghz, idle->p50,
         idle->p99);
  printf("peak RSS: ru_maxrss of the child; a child that only runs the "
         "timer: %ld KiB\n", idle->maxrss_kib);
  printf("allocations: %s\n", HAVE_ALLOC_COUNT
         ? "malloc/calloc/realloc/memalign interposed, counted from after "
           "tw_open to before tw_close" : "not counted (not glibc)");
}

static void print_table(void)
{
  printf("\n%-2s %-8s %-4s %8s %5s %7s %7s %7s %8s %9s %8s %7s %6s %6s "
         "%7s  %s\n", "wl", "sink", "dir", "ns/ev", "+-%", "cpu/ev", "MB/s",
         "B/ev", "x bound",
         "x fprintf", "alloc/ev", "RSS KiB", "p50", "p99", "p99.9",
         "targets");
  for (int i = 0; i < nrows; i++) {
    row *r = &rows[i], *fp, *bound = NULL;
    char xb[16] = "", xf[16] = "", al[16] = "", rss[24];
    char p[3][12] = { "", "", "" };

    if (i > 0 && (rows[i - 1].wl != r->wl || rows[i - 1].dir != r->dir))
      printf("\n");
    printf("%-2c %-8s %-4s ", r->wl, row_name(r), DIR_NAME[r->dir]);
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
    if (r->kind == K_TW && HAVE_ALLOC_COUNT)
      snprintf(al, sizeof al, r->allocs ? "%.1e" : "0",
               (double)r->allocs / r->events);
    if (r->lat.has_lat) {
      snprintf(p[0], sizeof p[0], "%" PRIu64, r->lat.p50);
      snprintf(p[1], sizeof p[1], "%" PRIu64, r->lat.p99);
      snprintf(p[2], sizeof p[2], "%" PRIu64, r->lat.p999);
    }
    if (r->kind == K_TW || r->kind == K_FPRINTF)
      snprintf(rss, sizeof rss, "%ld", r->rss);
    else
      snprintf(rss, sizeof rss, "-");        /* it holds the bytes */
    printf("%8.1f %5.1f %7.1f %7.0f %7.1f %8s %9s %8s %7s %6s %6s %7s  %s\n",
           ns_per_event(r), r->spread * 100, (double)r->cpu / r->events,
           (double)r->json_bytes * 1e3 / r->ns,
           (double)r->file_bytes / r->events, xb, xf, al, rss, p[0], p[1],
           p[2], r->targets);
  }
}

static void print_notes(void)
{
  printf("\nns/ev: median wall time per event (tw_open .. tw_close); +-%%: "
         "(max - min) / median of the runs;\n"
         "cpu/ev: median CPU time (all threads, user + system) per event "
         "in the same region;\n"
         "MB/s: uncompressed JSON bytes per second; B/ev: bytes of the "
         "output file per event;\n"
         "x bound: time / the bound's time (file: write(2), mmap: mmap-cpy, "
         "gzip: zlib); x fprintf: fprintf's time / time;\n"
         "p50/p99/p99.9: ns per call of the producer thread, separate run; "
         "RSS KiB: median peak RSS of the runs\n"
         "(not shown for the bounds, which hold the whole output in "
         "memory).\n");
  printf("\npeak RSS, workload A, /dev/shm, one run each:\n");
  for (int s = 0; s < NSINKS; s++) {
    rss_run *q = &rss_runs[s];
    if (!cfg.sink_on[s])
      continue;
    if (q->state == 1)
      printf("  %-8s n/a (sink not available)\n", SINKS[s].name);
    else if (q->state)
      printf("  %-8s ERROR\n", SINKS[s].name);
    else
      printf("  %-8s N=%-9" PRIu64 " %7ld KiB   N=%-9" PRIu64
             " %7ld KiB   difference %+ld KiB\n", SINKS[s].name,
             cfg.rss_small, q->small, cfg.rss_big, q->big,
             q->big - q->small);
  }
  printf("\ntargets (medians on this machine)\n");
  for (int i = 0; i < ntlines; i++)
    printf("  %s\n", tlines[i].text);
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
  j->wl = 'A';
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
      cr->r.wl = 'A';
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

static void configure(void)
{
  const char *sinks;

  cfg.n = env_u64("BENCH_N", 1000000, 100);
  cfg.reps = (int)env_u64("BENCH_REPS", 5, 1);
  if (cfg.reps > MAX_REPS)
    cfg.reps = MAX_REPS;
  cfg.rss_small = 100000;
  cfg.rss_big = env_u64("BENCH_RSS_N", 10000000, 0);
  cfg.base[0] = env_str("BENCH_SHM", "/dev/shm");
  cfg.base[1] = env_str("BENCH_DIR", "/var/tmp");
  cfg.workloads = env_str("BENCH_WORKLOADS", "ABCD");
  if (strcmp(cfg.workloads, "none") == 0)
    cfg.workloads = "";                      /* the cost section alone */
  for (const char *w = cfg.workloads; *w; w++)
    if (*w < 'A' || *w > 'D') {
      fprintf(stderr, "bench: BENCH_WORKLOADS: only A B C D, or none\n");
      exit(2);
    }
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

/* bench --one W SINK DIR: one run in this process, for profilers. */
static int one(int argc, char **argv)
{
  job j;
  result res;
  int s;

  if (argc != 5 || strlen(argv[2]) != 1 || argv[2][0] < 'A' ||
      argv[2][0] > 'D') {
    fprintf(stderr, "usage: bench --one A|B|C|D SINK DIR\n");
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
  j.wl = argv[2][0];
  j.sink = s;
  j.n = env_u64("BENCH_N", 1000000, 100);
  snprintf(j.out, sizeof j.out, "%s/tw-bench-one.%d%s", argv[4],
           (int)getpid(), SINKS[s].ext);
  memset(&res, 0, sizeof res);
  run_tw(&j, &res);
  unlink(j.out);
  if (res.status) {
    printf("%c %s: %s\n", j.wl, SINKS[s].name, res.status == TW_ESINK
           ? "n/a (sink not available)" : res.msg);
    return res.status == TW_ESINK ? 0 : 1;
  }
  printf("%c %s %s: %" PRIu64 " events, %.1f ns/event, %.1f B/event, ",
         j.wl, SINKS[s].name, argv[4], res.events,
         (double)res.ns / res.events, (double)res.file_bytes / res.events);
  if (HAVE_ALLOC_COUNT)
    printf("%" PRIu64 " allocations\n", res.allocs);
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
    fprintf(stderr, "usage: bench [--one A|B|C|D SINK DIR]\n"
            "environment: BENCH_N BENCH_REPS BENCH_DIR BENCH_SHM BENCH_RSS_N"
            " BENCH_WORKLOADS BENCH_SINKS BENCH_OPTIONS BENCH_COSTS\n");
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
    for (const char *w = cfg.workloads; *w; w++) {
      if (*w == 'C')
        continue;                   /* the order of 2 threads varies */
      memset(&j, 0, sizeof j);
      j.kind = K_CHECK;
      j.wl = *w;
      snprintf(j.out, sizeof j.out, "%s/%c-check.json", cfg.dir[0], *w);
      run_job(&j, &res);
      if (res.status) {
        errors++;
        printf("check %c (N=%u): ERROR %s\n", *w, CHECK_N, res.msg);
      } else {
        printf("check %c (N=%u): bytes vs the file sink's: %s\n", *w,
               CHECK_N, res.msg);
        if (strstr(res.msg, "DIFFER"))
          errors++;
      }
    }
  fflush(stdout);

  for (const char *w = cfg.workloads; *w; w++)
    for (int d = 0; d < 2; d++)
      measure_block(*w, d);

  if (cfg.dir[0][0] && cfg.rss_big > 0 && *cfg.workloads) {
    progress("bench: peak RSS: ");
    for (int s = 0; s < NSINKS; s++) {
      rss_run *q = &rss_runs[s];
      if (!cfg.sink_on[s])
        continue;
      progress("%s ", SINKS[s].name);
      memset(&j, 0, sizeof j);
      j.kind = K_TW;
      j.wl = 'A';
      j.sink = s;
      snprintf(j.out, sizeof j.out, "%s/A-rss%s", cfg.dir[0], SINKS[s].ext);
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
      }
    }
    progress("\n");
  } else {
    for (int s = 0; s < NSINKS; s++)
      rss_runs[s].state = 2;
  }

  measure_costs();

  if (*cfg.workloads) {
    for (int i = 0; i < nrows; i++)
      summarize(&rows[i]);
    evaluate_targets();
    print_table();
    print_notes();
  }
  print_costs();
  return errors || cost_errors ? 1 : 0;
}
