/* demo.c -- "tracewriter demo": the trace of a simulated multi-threaded
 * server, written with libtracewriter (its public API only)
 *
 *   tracewriter demo [-o FILE|-] [-O OPTIONS] [--threads N]
 *                    [--rate N|max] [--seconds S | --requests N]
 *
 * A command of the tool like the others (tools/command.h): it gets its
 * own argv and returns the exit status (TWT_CLI_*).
 */
#include "config.h"

#include "tracewriter.h"
#include "command.h"      /* twt_tool_demo_main, twt_cli_* */
#include "tracein.h"      /* twt_format_bytes */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ======================================================== small helpers */

/* Parse a whole decimal integer in [min, max]; returns 0 or -1.  strtoull
 * alone would accept "-1", " 5", "" and "5x". */
static int parse_count(const char *text, uint64_t min, uint64_t max,
                       uint64_t *out)
{
  char *end;
  unsigned long long value;

  if (text[0] < '0' || text[0] > '9')
    return -1;
  errno = 0;
  value = strtoull(text, &end, 10);
  if (errno != 0 || *end != '\0' || value < min || value > max)
    return -1;
  *out = value;
  return 0;
}

/* Parse a whole positive decimal number of seconds (at most max) into
 * nanoseconds; returns 0 or -1.  Rejects the nan, inf and hex forms that
 * strtod would take. */
static int parse_seconds(const char *text, double max, uint64_t *out_ns)
{
  char *end;
  double value;

  if (text[0] != '.' && (text[0] < '0' || text[0] > '9'))
    return -1;
  if (strchr(text, 'x') || strchr(text, 'X'))
    return -1;
  errno = 0;
  value = strtod(text, &end);
  if (errno != 0 || *end != '\0' || !(value > 0) || value > max)
    return -1;
  *out_ns = (uint64_t)(value * 1e9);
  return *out_ns > 0 ? 0 : -1;
}

static int has_suffix(const char *text, const char *suffix)
{
  size_t text_len = strlen(text), suffix_len = strlen(suffix);

  return text_len >= suffix_len &&
         strcmp(text + text_len - suffix_len, suffix) == 0;
}

/* Sleep for us microseconds, resuming after signal handlers. */
static void sleep_us(unsigned us)
{
  struct timespec left;

  left.tv_sec = us / 1000000u;
  left.tv_nsec = (long)(us % 1000000u) * 1000L;
  while (nanosleep(&left, &left) != 0 && errno == EINTR)
    continue;
}

/* A mutex or condition variable call that fails means memory corruption
 * or a bug here, not a condition to recover from. */
static void check_pthread(int rc, const char *what)
{
  if (rc != 0) {
    fprintf(stderr, TWT_CLI_PROGRAM ": %s: %s\n", what, strerror(rc));
    abort();
  }
}

/* ==================================================== the demo command */

/* The simulated server: the main thread is the "acceptor"; it makes
 * requests 1, 2, 3... and hands them to the workers through a bounded
 * queue.  Every sleep is derived from the request id, so two runs draw the
 * same shape (up to scheduling). */

#define DEMO_DEFAULT_OUTPUT   "trace.json"
#define DEMO_DEFAULT_THREADS  4
#define DEMO_MAX_THREADS      256
#define DEMO_DEFAULT_REQUESTS 1000
/* Requests per second: a busy server, not a stress test, so that a run
 * of minutes still makes a trace a browser opens (about 1.5 KiB of JSON
 * per request: 0.6 MiB a second).  --rate max is as fast as it goes. */
#define DEMO_DEFAULT_RATE     400
#define DEMO_MAX_RATE         UINT64_C(1000000)
/* Arrivals come in blocks: a burst of DEMO_BURST requests at the start of
 * every DEMO_BLOCK, the rest spread over the block. */
#define DEMO_BLOCK            200u
#define DEMO_BURST            25u
#define DEMO_MAX_REQUESTS     UINT64_C(1000000000)
#define DEMO_MAX_SECONDS      (7 * 86400.0)
#define DEMO_QUEUE_CAPACITY   64
#define DEMO_SLOW_REQUEST_NS  (2u * 1000u * 1000u)   /* 2 ms */
#define DEMO_PROGRESS_NS      (500u * 1000u * 1000u) /* 0.5 s */
/* Mean handler time, to pace the acceptor so the workers are busy but
 * the queue still drains between bursts. */
#define DEMO_MEAN_SERVICE_US  650u

struct route {
  const char *method;
  const char *name;        /* the request span's name, e.g. "GET /api/items" */
  const char *path;        /* the path, or its prefix when with_id */
  int with_id;             /* append a resource id to path */
  const char *sql;         /* what db.query runs */
};

static const struct route routes[] = {
  { "GET", "GET /api/users/:id", "/api/users/", 1,
    "SELECT * FROM users WHERE id = ?" },
  { "GET", "GET /api/items", "/api/items", 0,
    "SELECT id, name, price FROM items ORDER BY name LIMIT 50" },
  { "POST", "POST /api/orders", "/api/orders", 0,
    "INSERT INTO orders (user_id, item_id, qty) VALUES (?, ?, ?)" },
  { "GET", "GET /api/orders/:id", "/api/orders/", 1,
    "SELECT * FROM orders WHERE id = ?" },
  { "DELETE", "DELETE /api/sessions/:id", "/api/sessions/", 1,
    "DELETE FROM sessions WHERE id = ?" },
};
#define ROUTE_COUNT (sizeof routes / sizeof routes[0])

struct request {
  uint64_t id;
  uint64_t seed;           /* pseudo-random bits drawn from id */
  const struct route *route;
  char path[48];
};

struct demo {
  tw_writer *writer;
  unsigned threads;

  pthread_mutex_t lock;    /* guards the queue and the counts below */
  pthread_cond_t not_empty;
  pthread_cond_t not_full;
  struct request queue[DEMO_QUEUE_CAPACITY];
  size_t queue_head;       /* index of the oldest queued request */
  size_t queue_len;
  int queue_closed;        /* no more requests: workers exit when empty */
  uint64_t inflight;       /* accepted and not yet answered */
  uint64_t done;           /* answered */

  pthread_mutex_t error_lock;
  int first_error;         /* first event call that failed, 0 if none */
};

struct worker {
  struct demo *demo;
  unsigned number;         /* 1..threads */
  pthread_t thread;
};

/* Set by SIGINT/SIGTERM, which only the acceptor thread receives. */
static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int signo)
{
  (void)signo;
  stop_requested = 1;
}

/* splitmix64: the pseudo-random bits of a request. */
static uint64_t mix(uint64_t x)
{
  x += UINT64_C(0x9e3779b97f4a7c15);
  x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
  return x ^ (x >> 31);
}

/* A number in [low, low + spread) from bits of seed chosen by salt. */
static unsigned draw(uint64_t seed, unsigned salt, unsigned low,
                     unsigned spread)
{
  return low + (unsigned)(mix(seed + salt) % spread);
}

/* Remember the first failed event call; the run goes on (a sticky I/O
 * error also stops the acceptor, and tw_close reports it).  A dropped
 * event is no failure: it is what on_full=drop asks for, and the summary
 * counts it. */
static void check_event(struct demo *d, int rc)
{
  if (rc == 0 || rc == TW_EDROPPED)
    return;
  check_pthread(pthread_mutex_lock(&d->error_lock), "mutex");
  if (d->first_error == 0)
    d->first_error = rc;
  check_pthread(pthread_mutex_unlock(&d->error_lock), "mutex");
}

/* The counters are emitted with d->lock held, so their timestamps are in
 * the same order as the values they show. */
static void emit_queue_depth_locked(struct demo *d)
{
  tw_arg depth = tw_arg_uint("depth", d->queue_len);
  check_event(d, tw_counter(d->writer, "server", "queue_depth", &depth, 1));
}

static void emit_inflight_locked(struct demo *d)
{
  tw_arg inflight = tw_arg_uint("requests", d->inflight);
  check_event(d, tw_counter(d->writer, "server", "inflight", &inflight, 1));
}

static void make_request(uint64_t id, struct request *req)
{
  req->id = id;
  req->seed = mix(id);
  req->route = &routes[req->seed % ROUTE_COUNT];
  if (req->route->with_id)
    snprintf(req->path, sizeof req->path, "%s%u", req->route->path,
             draw(req->seed, 1, 1, 100000));
  else
    snprintf(req->path, sizeof req->path, "%s", req->route->path);
}

/* Add req to the queue, waiting while it is full. */
static void enqueue(struct demo *d, const struct request *req)
{
  uint64_t wait_start = 0;

  check_pthread(pthread_mutex_lock(&d->lock), "mutex");
  while (d->queue_len == DEMO_QUEUE_CAPACITY) {
    if (wait_start == 0)
      wait_start = tw_now_ns();
    check_pthread(pthread_cond_wait(&d->not_full, &d->lock), "condvar");
  }
  d->queue[(d->queue_head + d->queue_len) % DEMO_QUEUE_CAPACITY] = *req;
  d->queue_len++;
  d->inflight++;
  emit_queue_depth_locked(d);
  emit_inflight_locked(d);
  check_pthread(pthread_cond_signal(&d->not_empty), "condvar");
  check_pthread(pthread_mutex_unlock(&d->lock), "mutex");
  /* Back-pressure is worth seeing: a slice for the time spent blocked. */
  if (wait_start != 0)
    check_event(d, tw_complete(d->writer, "server", "queue full", wait_start,
                               tw_now_ns() - wait_start, NULL, 0));
}

/* Take the oldest request; returns 0 when the queue is closed and empty. */
static int dequeue(struct demo *d, struct request *req)
{
  int got = 0;

  check_pthread(pthread_mutex_lock(&d->lock), "mutex");
  while (d->queue_len == 0 && !d->queue_closed)
    check_pthread(pthread_cond_wait(&d->not_empty, &d->lock), "condvar");
  if (d->queue_len > 0) {
    *req = d->queue[d->queue_head];
    d->queue_head = (d->queue_head + 1) % DEMO_QUEUE_CAPACITY;
    d->queue_len--;
    emit_queue_depth_locked(d);
    check_pthread(pthread_cond_signal(&d->not_full), "condvar");
    got = 1;
  }
  check_pthread(pthread_mutex_unlock(&d->lock), "mutex");
  return got;
}

/* Wake every worker: they finish what is queued, then exit. */
static void close_queue(struct demo *d)
{
  check_pthread(pthread_mutex_lock(&d->lock), "mutex");
  d->queue_closed = 1;
  check_pthread(pthread_cond_broadcast(&d->not_empty), "condvar");
  check_pthread(pthread_mutex_unlock(&d->lock), "mutex");
}

static void mark_done(struct demo *d)
{
  check_pthread(pthread_mutex_lock(&d->lock), "mutex");
  d->inflight--;
  d->done++;
  emit_inflight_locked(d);
  check_pthread(pthread_mutex_unlock(&d->lock), "mutex");
}

static uint64_t requests_done(struct demo *d)
{
  uint64_t done;

  check_pthread(pthread_mutex_lock(&d->lock), "mutex");
  done = d->done;
  check_pthread(pthread_mutex_unlock(&d->lock), "mutex");
  return done;
}

static int status_of(const struct request *req)
{
  if (mix(req->seed + 2) % 97 == 0)
    return 500;
  if (req->route->with_id && mix(req->seed + 3) % 23 == 0)
    return 404;
  return strcmp(req->route->method, "POST") == 0 ? 201 : 200;
}

/* The database call: usually quick, now and then a slow cache miss. */
static void query_database(struct demo *d, const struct request *req)
{
  int cache_miss = mix(req->seed + 4) % 40 == 0;
  unsigned query_us = cache_miss ? draw(req->seed, 5, 2500, 3000)
                                 : draw(req->seed, 5, 80, 400);
  uint64_t start = tw_now_ns();
  tw_arg args[3];

  sleep_us(query_us);
  args[0] = tw_arg_str("sql", req->route->sql);
  args[1] = tw_arg_uint("rows", draw(req->seed, 6, 0, 50));
  args[2] = tw_arg_bool("cache_hit", !cache_miss);
  check_event(d, tw_complete(d->writer, "db", "db.query", start,
                             tw_now_ns() - start, args, 3));
}

/* Serve one request on a worker: a "handle" slice holding parse, the
 * query and render.  Returns the HTTP status. */
static int handle_request(struct demo *d, const struct request *req)
{
  TW_SCOPE(d->writer, "server", "handle");

  /* Right after the handle slice opens, so the arrow from the acceptor
   * binds to it ("bp":"e": the enclosing slice). */
  check_event(d, tw_flow_end(d->writer, "flow", "request", req->id));
  {
    TW_SCOPE(d->writer, "server", "parse");
    sleep_us(draw(req->seed, 7, 30, 120));
  }
  query_database(d, req);
  {
    TW_SCOPE(d->writer, "server", "render");
    sleep_us(draw(req->seed, 8, 40, 200));
  }
  return status_of(req);
}

static void *worker_main(void *arg)
{
  struct worker *self = arg;
  struct demo *d = self->demo;
  struct request req;
  char name[32];

  snprintf(name, sizeof name, "worker-%u", self->number);
  check_event(d, tw_thread_name(d->writer, name));
  check_event(d, tw_thread_sort_index(d->writer, self->number));
  while (dequeue(d, &req)) {
    uint64_t start = tw_now_ns(), elapsed;
    tw_arg status = tw_arg_int("status", handle_request(d, &req));

    elapsed = tw_now_ns() - start;
    if (elapsed > DEMO_SLOW_REQUEST_NS) {
      tw_arg args[3];
      args[0] = tw_arg_uint("id", req.id);
      args[1] = tw_arg_str("path", req.path);
      args[2] = tw_arg_double("ms", (double)elapsed / 1e6);
      check_event(d, tw_instant(d->writer, "server", "slow request", 'g',
                                args, 3));
    }
    check_event(d, tw_async_end(d->writer, "request", req.route->name,
                                req.id, &status, 1));
    mark_done(d);
  }
  return NULL;
}

/* Progress on stderr, a line rewritten in place; only for a terminal. */
struct progress {
  int enabled;
  int shown;               /* a line is on screen */
  uint64_t next_ns;        /* when to update it next */
};

static void progress_update(struct progress *p, struct demo *d)
{
  uint64_t now = tw_now_ns();
  tw_stats stats;

  if (!p->enabled || now < p->next_ns)
    return;
  p->next_ns = now + DEMO_PROGRESS_NS;
  if (tw_get_stats(d->writer, &stats) != 0)
    return;
  fprintf(stderr, "\r%" PRIu64 " requests done, %" PRIu64 " events",
          requests_done(d), stats.events);
  p->shown = 1;
}

static void progress_clear(struct progress *p)
{
  if (p->shown)
    fprintf(stderr, "\r%60s\r", "");
}

/* When request id (from 1) arrives, in ns from the start, at rate
 * requests per second: a burst at the start of each block of DEMO_BLOCK
 * requests, the others evenly spread over the block, each a little early
 * or late. */
static uint64_t arrival_ns(uint64_t id, uint64_t rate)
{
  uint64_t block_ns = DEMO_BLOCK * UINT64_C(1000000000) / rate;
  uint64_t pos = (id - 1) % DEMO_BLOCK;
  uint64_t at = (id - 1) / DEMO_BLOCK * block_ns;
  uint64_t gap = block_ns / (DEMO_BLOCK - DEMO_BURST + 1);

  if (pos >= DEMO_BURST)
    at += (pos - DEMO_BURST + 1) * gap + mix(id + 11) % (gap / 2 + 1);
  return at;
}

/* Sleep until tw_now_ns() reaches until_ns, or a stop signal comes. */
static void sleep_until(uint64_t until_ns)
{
  uint64_t now;

  while (!stop_requested && (now = tw_now_ns()) < until_ns) {
    struct timespec left;
    left.tv_sec = (time_t)((until_ns - now) / 1000000000u);
    left.tv_nsec = (long)((until_ns - now) % 1000000000u);
    (void)nanosleep(&left, NULL);    /* EINTR: look at stop_requested */
  }
}

/* The acceptor's loop, on the main thread: make requests until the count
 * or the time is reached, a signal asks to stop, or the writer fails.
 * rate: requests per second, or 0 for as fast as the workers take them. */
static void run_acceptor(struct demo *d, uint64_t requests, uint64_t rate,
                         uint64_t deadline_ns)
{
  unsigned mean_gap_us = DEMO_MEAN_SERVICE_US / d->threads + 1;
  uint64_t start = tw_now_ns();
  struct progress progress;
  uint64_t id;

  progress.enabled = isatty(STDERR_FILENO);
  progress.shown = 0;
  progress.next_ns = tw_now_ns() + DEMO_PROGRESS_NS;
  check_event(d, tw_thread_name(d->writer, "acceptor"));
  check_event(d, tw_thread_sort_index(d->writer, 0));
  for (id = 1; !stop_requested && tw_errcode(d->writer) == 0; id++) {
    struct request req;
    tw_arg args[2];

    if (requests ? id > requests : tw_now_ns() >= deadline_ns)
      break;
    if (rate) {
      uint64_t at = start + arrival_ns(id, rate);
      sleep_until(requests || at < deadline_ns ? at : deadline_ns);
      if (stop_requested || (!requests && tw_now_ns() >= deadline_ns))
        break;
    } else if (id % DEMO_BLOCK >= DEMO_BURST) {
      /* As fast as it goes: idle between arrivals just long enough for
       * the workers to keep up, but in the bursts that fill the queue. */
      sleep_us(draw(mix(id), 9, mean_gap_us / 2, mean_gap_us));
    }
    {
      TW_SCOPE(d->writer, "server", "accept");
      sleep_us(draw(mix(id), 10, 10, 40));
      make_request(id, &req);
      args[0] = tw_arg_str("method", req.route->method);
      args[1] = tw_arg_str("path", req.path);
      check_event(d, tw_async_begin(d->writer, "request", req.route->name,
                                    req.id, args, 2));
      check_event(d, tw_flow_start(d->writer, "flow", "request", req.id));
      enqueue(d, &req);
    }
    progress_update(&progress, d);
  }
  progress_clear(&progress);
}

/* The numbers in the help come from the DEMO_ limits: demo_usage
 * formats each help text (in argument order) before printing. */
const struct twt_cmd_opt twt_tool_demo_options[] = {
  TWT_CMD_COMMON('o', "FILE", "write the trace to FILE (default: "
                 DEMO_DEFAULT_OUTPUT "), or to\n"
                 "the standard output if FILE is -; a name\n"
                 "ending in .gz is gzip-compressed (sink=gzip)"),
  { "options", 'O', "OPTIONS",
    "writer options, e.g. 'format=object,buffer=1MiB'" },
  { "threads", 't', "N", "worker threads, 1 to %d (default: %d)" },
  { "rate", 'r', "N|max", "requests per second, 1 to %" PRIu64 " (default:\n"
                          "%d), or max: as fast as the workers take them" },
  { "seconds", 's', "S", "accept requests for S seconds" },
  { "requests", 'n', "N", "accept N requests (default: %d)" },
  TWT_CMD_COMMON('h', NULL, NULL),
  { NULL, 0, NULL, NULL }
};

#define DEMO_OPTIONS \
  (sizeof twt_tool_demo_options / sizeof twt_tool_demo_options[0])

static void demo_usage(FILE *out)
{
  struct twt_cmd_opt opts[DEMO_OPTIONS];
  char help[DEMO_OPTIONS][160];

  for (size_t i = 0; i < DEMO_OPTIONS; i++) {
    opts[i] = twt_tool_demo_options[i];
    switch (opts[i].val) {
    case 't':
      snprintf(help[i], sizeof help[i], opts[i].help, DEMO_MAX_THREADS,
               DEMO_DEFAULT_THREADS);
      break;
    case 'r':
      snprintf(help[i], sizeof help[i], opts[i].help, DEMO_MAX_RATE,
               DEMO_DEFAULT_RATE);
      break;
    case 'n':
      snprintf(help[i], sizeof help[i], opts[i].help, DEMO_DEFAULT_REQUESTS);
      break;
    default:
      continue;
    }
    opts[i].help = help[i];
  }
  fprintf(out,
    "Usage: " TWT_CLI_PROGRAM " demo [-o FILE] [-O OPTIONS] [--threads N]\n"
    "                        [--rate N|max] [--seconds S | --requests N]\n"
    "\n"
    "Simulate a small server -- an acceptor thread handing requests to\n"
    "worker threads through a bounded queue -- and trace it.  Open the\n"
    "trace in https://ui.perfetto.dev or chrome://tracing.\n"
    "\n");
  twt_cmd_print_options(out, opts);
  fprintf(out,
    "\n"
    "The summary, warnings and progress go to the standard error.  SIGINT\n"
    "or SIGTERM stops accepting; the requests in flight finish and the\n"
    "trace is closed.\n");
}

/* A usage error of demo: the message, then the usage, on stderr. */
TWT_CLI_PRINTF(1, 2)
static int demo_usage_error(const char *fmt, ...)
{
  va_list ap;

  fprintf(stderr, TWT_CLI_PROGRAM " demo: ");
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n\n");
  demo_usage(stderr);
  return TWT_CLI_USAGE;
}

/* Only the main (acceptor) thread takes SIGINT/SIGTERM: block them in the
 * threads it starts, so stop_requested is written by that thread alone. */
static int install_stop_handlers(sigset_t *stop_signals)
{
  struct sigaction action;

  memset(&action, 0, sizeof action);
  action.sa_handler = on_stop_signal;
  action.sa_flags = SA_RESETHAND;  /* a second ^C kills at once */
  if (sigemptyset(&action.sa_mask) != 0 ||
      sigemptyset(stop_signals) != 0 ||
      sigaddset(stop_signals, SIGINT) != 0 ||
      sigaddset(stop_signals, SIGTERM) != 0 ||
      sigaction(SIGINT, &action, NULL) != 0 ||
      sigaction(SIGTERM, &action, NULL) != 0)
    return -1;
  return 0;
}

/* Start the workers with the stop signals blocked.  Returns how many
 * started; fewer than asked means an error was printed. */
static unsigned start_workers(struct demo *d, struct worker *workers,
                              const sigset_t *stop_signals)
{
  sigset_t saved;
  unsigned started;
  int rc;

  check_pthread(pthread_sigmask(SIG_BLOCK, stop_signals, &saved),
                "pthread_sigmask");
  for (started = 0; started < d->threads; started++) {
    workers[started].demo = d;
    workers[started].number = started + 1;
    rc = pthread_create(&workers[started].thread, NULL, worker_main,
                        &workers[started]);
    if (rc != 0) {
      fprintf(stderr, TWT_CLI_PROGRAM ": cannot start worker thread: %s\n",
              strerror(rc));
      break;
    }
  }
  check_pthread(pthread_sigmask(SIG_SETMASK, &saved, NULL),
                "pthread_sigmask");
  return started;
}

static int demo_init(struct demo *d, tw_writer *writer, unsigned threads)
{
  memset(d, 0, sizeof *d);
  d->writer = writer;
  d->threads = threads;
  if (pthread_mutex_init(&d->lock, NULL) != 0 ||
      pthread_cond_init(&d->not_empty, NULL) != 0 ||
      pthread_cond_init(&d->not_full, NULL) != 0 ||
      pthread_mutex_init(&d->error_lock, NULL) != 0)
    return -1;
  return 0;
}

static void demo_destroy(struct demo *d)
{
  check_pthread(pthread_mutex_destroy(&d->lock), "mutex");
  check_pthread(pthread_cond_destroy(&d->not_empty), "condvar");
  check_pthread(pthread_cond_destroy(&d->not_full), "condvar");
  check_pthread(pthread_mutex_destroy(&d->error_lock), "mutex");
}

/* Run the simulation on an open writer.  Returns 0, or -1 after printing
 * why the workers could not start. */
static int run_demo(tw_writer *writer, unsigned threads, uint64_t requests,
                    uint64_t rate, uint64_t seconds_ns,
                    int *first_event_error)
{
  struct demo demo;
  struct worker *workers;
  sigset_t stop_signals;
  unsigned started, i;

  if (!(workers = calloc(threads, sizeof *workers))) {
    fprintf(stderr, TWT_CLI_PROGRAM ": out of memory\n");
    return -1;
  }
  if (demo_init(&demo, writer, threads) != 0) {
    fprintf(stderr, TWT_CLI_PROGRAM ": cannot create the demo's locks\n");
    free(workers);
    return -1;
  }
  if (install_stop_handlers(&stop_signals) != 0) {
    fprintf(stderr, TWT_CLI_PROGRAM ": cannot install signal handlers: %s\n",
            strerror(errno));
    demo_destroy(&demo);
    free(workers);
    return -1;
  }
  started = start_workers(&demo, workers, &stop_signals);
  if (started == threads)
    run_acceptor(&demo, requests, rate, tw_now_ns() + seconds_ns);
  close_queue(&demo);
  for (i = 0; i < started; i++)
    check_pthread(pthread_join(workers[i].thread, NULL), "pthread_join");
  *first_event_error = demo.first_error;
  demo_destroy(&demo);
  free(workers);
  return started == threads ? 0 : -1;
}

/* Warn when the compression of the trace and its name disagree: the
 * library writes what the options ask whatever the name, and a viewer
 * that goes by the name fails silently (Chrome DevTools shows an empty
 * timeline for gzip named .json). */
/* 1 if the writer will compress: the sink asked for, or what
 * TW_SINK_AUTO makes of the name. */
static int demo_gzips(const char *output, const tw_options *options)
{
  return options->sink == TW_SINK_GZIP ||
         (options->sink == TW_SINK_AUTO && has_suffix(output, ".gz"));
}

static void warn_sink_name(const char *output, const tw_options *options)
{
  int named_gz = has_suffix(output, ".gz");
  int gzip = demo_gzips(output, options);

  if (gzip && !named_gz)
    fprintf(stderr, TWT_CLI_PROGRAM " demo: warning: %s will hold "
            "gzip-compressed "
            "JSON (sink=gzip) but its name does not end in .gz: viewers "
            "that go by the name show nothing; name it %s.gz\n", output,
            output);
  else if (!gzip && named_gz)
    fprintf(stderr, TWT_CLI_PROGRAM " demo: warning: %s will hold plain JSON "
            "(sink=%s) but its name ends in .gz: viewers will try to "
            "decompress it\n", output,
            options->sink == TW_SINK_MMAP ? "mmap" : "file");
}

int twt_tool_demo_main(int argc, char **argv)
{
  struct twt_cmd_getopt g;
  const char *output = DEMO_DEFAULT_OUTPUT;
  const char *options_string = NULL;
  uint64_t threads = DEMO_DEFAULT_THREADS, requests = 0, seconds_ns = 0;
  uint64_t rate = DEMO_DEFAULT_RATE;
  int to_stdout, gzip;
  char message[256], size[64], dropped[48] = "";
  tw_options options;
  tw_writer *writer;
  tw_stats stats;
  int opt, rc, event_error = 0, run_failed;

  twt_cmd_getopt_init(&g, twt_tool_demo_options);
  optind = 0;                       /* glibc: start afresh on every call */
  opterr = 0;                       /* our messages name the command */
  while ((opt = getopt_long(argc, argv, g.shorts, g.longs, NULL)) != -1) {
    switch (opt) {
    case 'o':
      output = optarg;
      break;
    case 'O':
      options_string = optarg;
      break;
    case 't':
      if (parse_count(optarg, 1, DEMO_MAX_THREADS, &threads) != 0)
        return demo_usage_error("bad number of threads '%s'", optarg);
      break;
    case 'r':
      if (strcmp(optarg, "max") == 0)
        rate = 0;
      else if (parse_count(optarg, 1, DEMO_MAX_RATE, &rate) != 0)
        return demo_usage_error("bad rate '%s' (requests per second, or "
                                "max)", optarg);
      break;
    case 's':
      if (parse_seconds(optarg, DEMO_MAX_SECONDS, &seconds_ns) != 0)
        return demo_usage_error("bad number of seconds '%s'", optarg);
      break;
    case 'n':
      if (parse_count(optarg, 1, DEMO_MAX_REQUESTS, &requests) != 0)
        return demo_usage_error("bad number of requests '%s'", optarg);
      break;
    case 'h':
      demo_usage(stdout);
      return TWT_CLI_OK;
    case ':':
      return demo_usage_error("option '%s' needs a value", argv[optind - 1]);
    default:
      if (optopt) {
        char short_option[3] = { '-', (char)optopt, '\0' };
        return demo_usage_error("unknown option '%s'", short_option);
      }
      return demo_usage_error("unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind < argc)
    return demo_usage_error("unexpected argument '%s'", argv[optind]);
  if (requests && seconds_ns)
    return demo_usage_error("give --seconds or --requests, not both");
  if (!requests && !seconds_ns)
    requests = DEMO_DEFAULT_REQUESTS;

  if (tw_options_init(&options) != 0) {
    fprintf(stderr, TWT_CLI_PROGRAM ": cannot initialise options\n");
    return TWT_CLI_RUNTIME;
  }
  /* Set before parsing, so that -O can still change them. */
  options.process_name = TWT_CLI_PROGRAM " demo";
  to_stdout = strcmp(output, "-") == 0;
  if (has_suffix(output, ".gz"))
    options.sink = TW_SINK_GZIP;
  if (tw_options_parse(&options, options_string, message,
                       sizeof message) != 0) {
    fprintf(stderr, TWT_CLI_PROGRAM ": bad options: %s\n", message);
    return TWT_CLI_USAGE;
  }
  if (!to_stdout)
    warn_sink_name(output, &options);
  gzip = to_stdout ? options.sink == TW_SINK_GZIP
                   : demo_gzips(output, &options);
  /* Past a file size limit, let write(2) fail with EFBIG rather than
   * SIGXFSZ kill us: the writer then keeps its last commit and tw_close
   * says what happened. */
  if (signal(SIGXFSZ, SIG_IGN) == SIG_ERR) {
    fprintf(stderr, TWT_CLI_PROGRAM ": cannot ignore SIGXFSZ: %s\n",
            strerror(errno));
    return TWT_CLI_RUNTIME;
  }
  /* "-": the standard output, which stays open (a pipe streams; a
   * regular file is committed in place). */
  if (to_stdout) {
    output = "standard output";
    writer = tw_open_fd(STDOUT_FILENO, &options, &rc);
  } else {
    writer = tw_open(output, &options, &rc);
  }
  if (!writer) {
    fprintf(stderr, TWT_CLI_PROGRAM ": %s: %s\n", output, tw_strerror(rc));
    return TWT_CLI_RUNTIME;
  }

  run_failed = run_demo(writer, (unsigned)threads, requests, rate,
                        seconds_ns, &event_error) != 0;

  /* The counts are the writer's, so read them before tw_close frees it,
   * after a last commit.  Only a header/library version mismatch fails
   * here: then count 0. */
  (void)tw_flush(writer);            /* an error is tw_close's to report */
  if (tw_get_stats(writer, &stats) != 0)
    memset(&stats, 0, sizeof stats);
  rc = tw_close(writer);
  if (rc != 0) {
    fprintf(stderr, TWT_CLI_PROGRAM ": %s: %s\n", output, tw_strerror(rc));
    return TWT_CLI_RUNTIME;
  }
  if (event_error != 0) {
    fprintf(stderr, TWT_CLI_PROGRAM ": %s: an event was refused: %s\n", output,
            tw_strerror(event_error));
    return TWT_CLI_RUNTIME;
  }
  if (run_failed)
    return TWT_CLI_RUNTIME;
  twt_format_bytes(stats.bytes, size, sizeof size);
  /* The counts are of JSON bytes; for gzip say what reached the disk. */
  if (gzip) {
    char compressed[32];
    twt_format_bytes(stats.output_bytes, compressed, sizeof compressed);
    snprintf(size + strlen(size), sizeof size - strlen(size),
             " (%s compressed)", compressed);
  }
  if (stats.rotations)
    snprintf(size + strlen(size), sizeof size - strlen(size),
             " in %" PRIu64 " files (rotated)", stats.rotations + 1);
  if (stats.dropped)
    snprintf(dropped, sizeof dropped, " (%" PRIu64 " dropped)",
             stats.dropped);
  /* On stderr, like the progress: stdout may be the trace itself. */
  fprintf(stderr, "wrote %" PRIu64 " events%s, %s to %s%s\n", stats.events,
          dropped, size, output,
          to_stdout ? "" : " -- open it in https://ui.perfetto.dev");
  return TWT_CLI_OK;
}
