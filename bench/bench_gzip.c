/* bench_gzip.c -- the gzip sink's parallel deflate, measured (make bench-gzip)
 *
 * Workload A of bench.c (one thread, N 'X' events: 8 names round-robin,
 * category "bench", no args, ts = i*1000 + 1234 ns, dur = 500 + i%7 ns)
 * and C2 (the same N events from 2 threads, thread t writing i = 2j + t),
 * through:
 *   file      sink=file,commit=inline (bench.c's file row)
 *   gzip/1    sink=gzip,gzip_threads=1 (one deflate thread, as before)
 *   gzip      sink=gzip (gzip_threads=auto)
 * each timed tw_open .. tw_close, the configurations interleaved run by
 * run, BENCH_REPS runs (default 5), medians.  Then the size of gzip -1
 * of the file sink's A output (the same JSON) against gzip's.  Prints
 * the issue 22 gzip targets with PASS or MISS.
 *
 * Environment: BENCH_N (default 1000000), BENCH_REPS (5), BENCH_DIR
 * (/dev/shm, else /tmp).
 */
#define _GNU_SOURCE
#include <tracewriter.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *const names[8] = {
  "rms_norm", "matmul", "softmax", "attention", "rope", "silu", "add",
  "embedding"
};

typedef struct cfg {
  const char *label;
  const char *opts;
  const char *suffix;
  unsigned threads;
} cfg;

static const cfg cfgs[] = {
  { "A  file  ", "sink=file,commit=inline", ".json", 1 },
  { "A  gzip/1", "sink=gzip,gzip_threads=1", ".json.gz", 1 },
  { "A  gzip  ", "sink=gzip", ".json.gz", 1 },
  { "C2 gzip/1", "sink=gzip,gzip_threads=1", ".json.gz", 2 },
  { "C2 gzip  ", "sink=gzip", ".json.gz", 2 },
};
#define NCFG (sizeof cfgs / sizeof cfgs[0])

typedef struct job {
  tw_writer *w;
  unsigned long n, t, k;
  pthread_barrier_t *go;
} job;

static unsigned long env_num(const char *name, unsigned long def)
{
  const char *s = getenv(name);
  return s && *s ? strtoul(s, NULL, 10) : def;
}

static double now_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *produce(void *arg)
{
  job *j = arg;

  if (j->go)
    pthread_barrier_wait(j->go);
  for (unsigned long i = j->t; i < j->n; i += j->k)
    if (tw_complete(j->w, "bench", names[i % 8], i * 1000 + 1234,
                    500 + i % 7, NULL, 0) != 0) {
      fprintf(stderr, "bench_gzip: tw_complete failed\n");
      exit(1);
    }
  return NULL;
}

/* One run: ns per event, the file's size in *size. */
static double run(const cfg *c, const char *path, unsigned long n,
                  long *size)
{
  tw_options o;
  tw_writer *w;
  pthread_t tid;
  pthread_barrier_t go;
  job j0 = { NULL, n, 0, c->threads, NULL }, j1 = j0;
  struct stat st;
  double t0, t1;

  tw_options_init(&o);
  if (tw_options_parse(&o, c->opts, NULL, 0) != 0)
    exit(1);
  if (c->threads > 1) {
    pthread_barrier_init(&go, NULL, 2);
    j0.go = j1.go = &go;
    j1.t = 1;
  }
  unlink(path);
  t0 = now_s();
  if (!(w = tw_open(path, &o, NULL))) {
    fprintf(stderr, "bench_gzip: cannot open %s\n", path);
    exit(1);
  }
  j0.w = j1.w = w;
  if (c->threads > 1)
    pthread_create(&tid, NULL, produce, &j1);
  produce(&j0);
  if (c->threads > 1)
    pthread_join(tid, NULL);
  if (tw_close(w) != 0) {
    fprintf(stderr, "bench_gzip: tw_close failed\n");
    exit(1);
  }
  t1 = now_s();
  if (c->threads > 1)
    pthread_barrier_destroy(&go);
  *size = stat(path, &st) == 0 ? (long)st.st_size : -1;
  return (t1 - t0) * 1e9 / (double)n;
}

static int cmp_d(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static long gzip1_size(const char *path)
{
  char cmd[1024];
  long size = -1;
  FILE *p;

  snprintf(cmd, sizeof cmd, "gzip -1 -c '%s' | wc -c", path);
  if ((p = popen(cmd, "r"))) {
    if (fscanf(p, "%ld", &size) != 1)
      size = -1;
    pclose(p);
  }
  return size;
}

static void target(const char *what, double got, const char *cmp,
                   double goal)
{
  int ok = cmp[0] == '>' ? got >= goal : got <= goal;
  printf("  %-48s %6.3fx  (goal %s %.2fx)  %s\n", what, got, cmp, goal,
         ok ? "PASS" : "MISS");
}

int main(void)
{
  unsigned long n = env_num("BENCH_N", 1000000);
  unsigned long reps = env_num("BENCH_REPS", 5);
  const char *dir = getenv("BENCH_DIR");
  double *t = calloc(NCFG * reps, sizeof *t), med[NCFG];
  long size[NCFG] = { 0 }, g1;
  char path[NCFG][512];

  if (!dir || !*dir)
    dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  if (!t || n < 2 || reps < 1)
    return 1;
  for (size_t c = 0; c < NCFG; c++)
    snprintf(path[c], sizeof path[c], "%s/bench_gzip.%ld.%zu%s", dir,
             (long)getpid(), c, cfgs[c].suffix);
  for (unsigned long r = 0; r < reps; r++)
    for (size_t c = 0; c < NCFG; c++)
      t[c * reps + r] = run(&cfgs[c], path[c], n, &size[c]);
  printf("bench_gzip: N = %lu, %lu runs each, interleaved, in %s; "
         "%ld CPUs online\n", n, reps, dir, sysconf(_SC_NPROCESSORS_ONLN));
  printf("                                 ns/ev (median)   min     max"
         "   bytes/ev\n");
  for (size_t c = 0; c < NCFG; c++) {
    qsort(t + c * reps, reps, sizeof *t, cmp_d);
    med[c] = t[c * reps + reps / 2];
    printf("  %s  %-26s %8.1f %8.1f %8.1f %8.2f\n", cfgs[c].label,
           cfgs[c].opts, med[c], t[c * reps], t[c * reps + reps - 1],
           (double)size[c] / (double)n);
  }
  g1 = gzip1_size(path[0]);
  printf("  gzip -1 of the file sink's A output: %.2f bytes/ev\n",
         g1 > 0 ? (double)g1 / (double)n : 0.0);
  printf("targets (issue 22, gzip):\n");
  target("gzip, 2 threads vs 1 (events/s, C2 vs A)", med[2] / med[4],
         ">=", 1.4);
  target("  (gzip_threads=1, for comparison)", med[1] / med[3], ">=", 1.4);
  target("gzip A vs file A (wall per event)", med[2] / med[0], "<=", 2.0);
  target("  (gzip_threads=1, for comparison)", med[1] / med[0], "<=", 2.0);
  if (g1 > 0)
    target("gzip size vs gzip -1 (A)", (double)size[2] / (double)g1, "<=",
           1.02);
  else
    printf("  gzip size vs gzip -1: n/a (gzip(1) not available)\n");
  for (size_t c = 0; c < NCFG; c++)
    unlink(path[c]);
  free(t);
  return 0;
}
