/* crashtest.c -- kill a writing process at random moments, check the file
 *
 * For each sink, many times: a child opens a writer and writes events from
 * several threads (every few phases, args, strings that cross buffer and
 * growth boundaries), publishing in shared memory, per thread, the last
 * event it knows to be committed.  The parent kills it with SIGKILL at a
 * random moment (or the child dies by abort(), SIGSEGV or _exit() without
 * tw_close), then checks the file against DESIGN.md section 2:
 *
 *  - every event committed before the death is there, once, intact, and
 *    each thread's events are in order with no gap;
 *  - if the death did not land inside a commit, the file is strict JSON
 *    (for gzip: a complete gzip member holding strict JSON) as it is;
 *  - if it did, the file is the last commit plus a cut piece, and
 *    tracewriter repair turns it into strict JSON with every committed
 *    event.
 *
 * One death in four comes at a random moment from the child's start,
 * before or during tw_open: the path then names nothing, or a complete
 * trace (never an empty or a headless file).  The "-rot" cases rotate
 * every few dozen KiB: every finished part is strict as it is, the
 * parts and the live file hold each thread's events once and in order,
 * and a "<name>.next" left behind is a strict trace of metadata only.
 *
 * Usage: crashtest [-n KILLS] [-s SINK[,SINK...]] [-r SEED] [-f EVERY]
 *                  [-o OPTIONS] [-e] [-v]
 * KILLS defaults to $TW_CRASH_KILLS or 60 per sink (make check); make
 * crashtest runs thousands.  SEED defaults to $TW_TEST_SEED, else the
 * clock: the seed is printed, and -r SEED or TW_TEST_SEED=SEED replays a
 * run.  -f: each thread flushes every EVERY events (default 16); -o:
 * options appended to each sink's (e.g. buffer=64KiB); -e: every death
 * comes at a random moment from the child's start.  Ends with
 * "crashtest: N passed, N failed".
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gunzip.h"
#include "jsoncheck.h"
#include "repair.h"
#include "rotate.h"
#include "tracewriter.h"

#define THREADS 3
#define MAX_SEQ 2000000

/* Shared between the child (writes) and the parent (reads after death). */
typedef struct shared {
  int ready;                         /* the writer is open */
  uint64_t committed[THREADS];       /* last seq known committed, per thread */
} shared;

typedef struct sink_case {
  const char *name;
  const char *options;               /* small buffers: many commits */
  int gzip;
  int commit_per_record;             /* mmap: an emit that returned 0 is in */
} sink_case;

static const sink_case cases[] = {
  { "file", "sink=file,buffer=4KiB", 0, 0 },
  { "mmap", "sink=mmap,chunk=16KiB", 0, 1 },
  { "gzip", "sink=gzip,buffer=4KiB,commit=inline", 0 + 1, 0 },
  { "gzip-bg", "sink=gzip,buffer=4KiB,commit=background", 1, 0 },
  { "file-rot", "sink=file,buffer=4KiB,rotate=32KiB", 0, 0 },
  { "mmap-rot", "sink=mmap,chunk=16KiB,rotate=32KiB", 0, 1 },
  { "gzip-rot", "sink=gzip,buffer=4KiB,rotate=32KiB", 1, 0 },
};

static shared *sh;
static tw_writer *child_writer;
static int child_death;              /* 0: wait for SIGKILL; else how */
static uint64_t child_death_at;      /* thread 0's seq at which to die */
static int verbose;
static int all_early;                /* -e: every death from the start */
static uint64_t flush_every = 16;    /* events per thread between flushes */
static const char *extra_options = "";

/* Deterministic content of event (t, i): phase, name, string length. */
static char phase_of(uint64_t i) { return "XXIbeC"[i % 6]; }
static size_t strlen_of(int t, uint64_t i)
{
  if (i % 97 == 0)
    return 6000 + (size_t)t;         /* larger than a 4 KiB buffer */
  return (size_t)((i * 37 + (uint64_t)t * 11) % 300);
}
static char char_of(int t, uint64_t i, size_t k)
{
  return (char)('a' + (i + k + (uint64_t)t) % 26);
}

static void die_now(int how)
{
  switch (how) {
  case 1: abort();
  case 2: raise(SIGSEGV); break;
  default: _exit(3);
  }
}

static void *child_thread(void *arg)
{
  int t = (int)(intptr_t)arg;
  char *s = malloc(7000);

  for (uint64_t i = 1; i < MAX_SEQ; i++) {
    size_t n = strlen_of(t, i);
    tw_arg args[3];
    tw_event ev;
    int rc;

    for (size_t k = 0; k < n; k++)
      s[k] = char_of(t, i, k);
    args[0] = tw_arg_int("t", t);
    args[1] = tw_arg_uint("i", i);
    args[2] = tw_arg_strn("s", s, n);
    memset(&ev, 0, sizeof ev);
    ev.ph = phase_of(i);
    ev.name = "crash";
    ev.cat = "crashtest";
    ev.dur = i;
    ev.args = args;
    ev.nargs = ev.ph == 'C' ? 2 : 3;
    if (ev.ph == 'b' || ev.ph == 'e') {
      ev.has = TW_HAS_ID;
      ev.id = (uint64_t)t << 32 | i;
    }
    rc = tw_emit(child_writer, &ev);
    if (rc)
      _exit(110);
    if (__atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE) == 2) {
      __atomic_store_n(&sh->committed[t], i, __ATOMIC_RELEASE);
    } else if (i % flush_every == 0) {
      if (tw_flush(child_writer) != 0)
        _exit(111);
      __atomic_store_n(&sh->committed[t], i, __ATOMIC_RELEASE);
    }
    if (t == 0 && child_death && i == child_death_at)
      die_now(child_death);
  }
  free(s);
  return NULL;
}

/* The child: open, write from THREADS threads until killed. */
static void child_main(const char *path, const sink_case *c, int object)
{
  char opts_text[256];
  tw_options o;
  pthread_t th[THREADS];
  int err;

  snprintf(opts_text, sizeof opts_text, "%s%s%s%s", c->options,
           object ? ",format=object" : "", *extra_options ? "," : "",
           extra_options);
  tw_options_init(&o);
  if (tw_options_parse(&o, opts_text, NULL, 0) != 0)
    _exit(120);
  if (!(child_writer = tw_open(path, &o, &err)))
    _exit(121);
  /* ready: 1 = writer open; 2 = every returned emit is committed. */
  __atomic_store_n(&sh->ready, c->commit_per_record ? 2 : 1, __ATOMIC_RELEASE);
  for (int t = 0; t < THREADS; t++)
    pthread_create(&th[t], NULL, child_thread, (void *)(intptr_t)t);
  for (int t = 0; t < THREADS; t++)
    pthread_join(th[t], NULL);
  _exit(0);
}

static char *read_all(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  char *buf;
  long n;

  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  buf = malloc((size_t)n + 1);
  if (fread(buf, 1, (size_t)n, f) != (size_t)n)
    n = 0;
  fclose(f);
  *len = (size_t)n;
  return buf;
}

/* Check a strictly valid document, one part of a trace, against what was
 * committed: last[] carries each thread's last seq from part to part;
 * the last part (final) must reach committed[].  Returns NULL if all is
 * well, else a static message. */
static const char *verify(const jc_doc *d, const uint64_t *committed,
                          uint64_t *last, int final)
{
  static char msg[256];
  jc_val events = jc_trace_events(d), e;
  int first = 1;

  if (events < 0)
    return "no events array";
  for (e = jc_first(d, events); e >= 0; e = jc_next(d, e)) {
    jc_val args = jc_get(d, e, "args"), v;
    int64_t t;
    uint64_t i;
    const char *ph, *str;
    size_t slen, want;

    if (first) {
      first = 0;
      if (!jc_streq(d, jc_get(d, e, "ph"), "M") ||
          !jc_streq(d, jc_get(d, e, "name"), "process_name"))
        return "first record is not process_name";
      /* Then the document's clock record. */
      if ((e = jc_next(d, e)) < 0)
        break;
      if (!jc_streq(d, jc_get(d, e, "ph"), "c") ||
          !jc_streq(d, jc_get(d, e, "name"), "clock_sync") ||
          !jc_streq(d, jc_get(d, jc_get(d, e, "args"), "sync_id"),
                    "tracewriter.realtime"))
        return "second record is not the clock record";
      continue;
    }
    if (jc_int64(d, jc_get(d, args, "t"), &t) != 0 || t < 0 || t >= THREADS ||
        jc_uint64(d, jc_get(d, args, "i"), &i) != 0)
      return "event without t/i";
    if (i != last[t] + 1) {
      snprintf(msg, sizeof msg, "thread %d: seq %llu after %llu (gap, "
               "duplicate or disorder)", (int)t, (unsigned long long)i,
               (unsigned long long)last[t]);
      return msg;
    }
    last[t] = i;
    ph = jc_str(d, jc_get(d, e, "ph"), NULL);
    if (!ph || ph[0] != (phase_of(i) == 'I' ? 'I' : phase_of(i)) ||
        !jc_streq(d, jc_get(d, e, "name"), "crash"))
      return "wrong phase or name";
    if (phase_of(i) != 'C') {
      v = jc_get(d, args, "s");
      str = jc_str(d, v, &slen);
      want = strlen_of((int)t, i);
      if (!str || slen != want)
        return "string arg of the wrong length";
      for (size_t k = 0; k < slen; k++)
        if (str[k] != char_of((int)t, i, k))
          return "string arg corrupted";
    }
  }
  if (first)
    return "no process_name record";
  for (int t = 0; final && t < THREADS; t++)
    if (last[t] < committed[t]) {
      snprintf(msg, sizeof msg, "thread %d: committed up to %llu, file has "
               "%llu", t, (unsigned long long)committed[t],
               (unsigned long long)last[t]);
      return msg;
    }
  return NULL;
}

/* Parse text strictly and verify it; NULL if all is well.  On failure
 * last[] is left as it was (the caller may repair and verify again). */
static const char *check_text(const char *text, size_t len,
                              const uint64_t *committed, uint64_t *last,
                              int final)
{
  static char msg[300];
  char err[200];
  const char *why;
  uint64_t tmp[THREADS];
  jc_doc *d = jc_parse(text, len, err, sizeof err);

  if (!d) {
    snprintf(msg, sizeof msg, "not strict JSON: %s", err);
    return msg;
  }
  memcpy(tmp, last, sizeof tmp);
  why = verify(d, committed, tmp, final);
  if (!why)
    memcpy(last, tmp, sizeof tmp);
  jc_free(d);
  return why;
}

/* Check a whole file (a gzip file: one complete member) as one part.
 * Not numbered.h's checker: the events here are numbered per thread,
 * and a kill's outcome is tallied with its reason, not failed at once
 * (crashtest runs thousands of kills, outside cmocka). */
static const char *check_part_file(const sink_case *c, const char *path,
                              const uint64_t *committed, uint64_t *last,
                              int final)
{
  size_t len, jlen;
  char *buf = read_all(path, &len), *json = NULL;
  const char *why;

  if (!buf)
    return "cannot be read";
  if (c->gzip)
    why = (json = tu_gunzip(buf, len, &jlen)) != NULL
            ? check_text(json, jlen, committed, last, final)
            : "incomplete gzip member";
  else
    why = check_text(buf, len, committed, last, final);
  free(buf);
  free(json);
  return why;
}

typedef struct tally {
  unsigned runs, valid, truncated, unopened, failed;
} tally;

static int exists(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0;
}

/* One life and death.  Returns 0 if the files met every guarantee. */
static int one_run(const sink_case *c, const char *dir, unsigned run,
                   unsigned *seed, tally *tl)
{
  char path[700], fixed[760], next[760], part[760];
  uint64_t committed[THREADS], last[THREADS] = { 0 };
  const char *why, *live;
  int object = run % 5 == 4, early = 0, status, any = 0;
  unsigned long parts = 0;
  pid_t pid;

  snprintf(path, sizeof path, "%s/crash-%s-%u.json%s", dir, c->name, run,
           c->gzip ? ".gz" : "");
  snprintf(fixed, sizeof fixed, "%s.fixed", path);
  snprintf(next, sizeof next, "%s.next", path);
  memset(sh, 0, sizeof *sh);
  child_death = 0;
  if (run % 7 == 3 && !all_early) {   /* the child dies by its own hand */
    child_death = 1 + (int)(rand_r(seed) % 3);
    child_death_at = 1 + rand_r(seed) % 3000;
  } else if (run % 4 == 2 || all_early) {
    early = 1;                        /* killed from its start */
  }
  fflush(NULL);
  if ((pid = fork()) < 0)
    return perror("fork"), -1;
  if (pid == 0) {
    /* No core dumps from the deliberate crashes. */
    signal(SIGABRT, SIG_DFL);
    child_main(path, c, object);
  }
  if (early) {
    /* A fork and an open take about a millisecond here: up to 3 ms from
     * the start lands before, in and just after tw_open. */
    struct timespec ts = { 0, (long)(rand_r(seed) % 3000) * 1000 };
    nanosleep(&ts, NULL);
    kill(pid, SIGKILL);
  } else {
    while (!__atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE)) {
      if (waitpid(pid, &status, WNOHANG) == pid) {
        fprintf(stderr, "crashtest: %s: child died before opening (status "
                "%d)\n", c->name, status);
        return -1;
      }
      sched_yield();
    }
    if (!child_death) {
      struct timespec ts = { 0, (long)(rand_r(seed) % 6000) * 1000 };
      nanosleep(&ts, NULL);             /* a random moment to kill at */
      kill(pid, SIGKILL);
    }
  }
  waitpid(pid, &status, 0);
  /* 110..121: the child's own failures.  Other statuses are deaths
   * (a sanitizer's exit code after a deliberate SIGSEGV among them). */
  if (WIFEXITED(status) && WEXITSTATUS(status) >= 110 &&
      WEXITSTATUS(status) <= 121) {
    fprintf(stderr, "crashtest: %s: child failed (exit %d)\n", c->name,
            WEXITSTATUS(status));
    return -1;
  }
  memcpy(committed, sh->committed, sizeof committed);
  for (int t = 0; t < THREADS; t++)
    any |= committed[t] != 0;
  tl->runs++;

  /* The finished parts, in order: each strict as it is.  A death
   * between a rotation's link and its rename leaves the live file with
   * its numbered name too: that one is still the live file. */
  for (;;) {
    struct stat ps, ls;
    if (tw__rotated_name(part, sizeof part, path, parts + 1) != 0 ||
        stat(part, &ps) != 0 ||
        (stat(path, &ls) == 0 && ps.st_ino == ls.st_ino &&
         ps.st_dev == ls.st_dev))
      break;
    parts++;
    if ((why = check_part_file(c, part, committed, last, 0)) != NULL) {
      fprintf(stderr, "crashtest: %s run %u: part %s: %s\n", c->name, run,
              part, why);
      tl->failed++;
      return -1;
    }
  }
  /* A rotation's next file, left by a death inside the rotation: a
   * strict trace of metadata only. */
  if (exists(next)) {
    uint64_t none[THREADS] = { 0 }, seen[THREADS] = { 0 };
    if ((why = check_part_file(c, next, none, seen, 0)) != NULL ||
        memcmp(seen, none, sizeof seen) != 0) {
      fprintf(stderr, "crashtest: %s run %u: %s: %s\n", c->name, run, next,
              why ? why : "holds events");
      tl->failed++;
      return -1;
    }
  }
  /* The live file; between a rotation's two renames the path names
   * nothing and the next file is what the trace goes on in. */
  live = exists(path) ? path : parts && exists(next) ? next : NULL;
  if (!live) {
    if (early && !parts && !any) {
      tl->unopened++;                 /* killed before the path was made */
      unlink(next);
      return 0;
    }
    fprintf(stderr, "crashtest: %s run %u: no file at %s\n", c->name, run,
            path);
    tl->failed++;
    return -1;
  }
  if ((why = check_part_file(c, live, committed, last, 1)) != NULL) {
    /* Cut inside a commit: repair must give every committed event. */
    struct twt_repair_report rep;
    char err[300];
    int rc = twt_repair_file(live, fixed, &rep, err, sizeof err);
    if (verbose)
      fprintf(stderr, "crashtest: %s run %u: %s; repairing\n", c->name, run,
              why);
    if (rc != 0 || !exists(fixed)) {
      fprintf(stderr, "crashtest: %s run %u: %s (%s); repair failed: %s\n",
              c->name, run, why, live, rc ? err : "no output");
      tl->failed++;
      return -1;
    }
    if ((why = check_part_file(c, fixed, committed, last, 1)) != NULL) {
      fprintf(stderr, "crashtest: %s run %u: after repair: %s (kept file "
              "%s)\n", c->name, run, why, live);
      tl->failed++;
      return -1;
    }
    tl->truncated++;
    unlink(fixed);
  } else {
    tl->valid++;
  }
  unlink(path);
  unlink(next);
  for (unsigned long n = 1; n <= parts + 1; n++)
    if (tw__rotated_name(part, sizeof part, path, n) == 0)
      unlink(part);
  return 0;
}

int main(int argc, char **argv)
{
  const char *env = getenv("TW_CRASH_KILLS");
  unsigned kills = env ? (unsigned)atoi(env) : 60;
  const char *env_seed = getenv("TW_TEST_SEED");
  unsigned seed = env_seed && *env_seed
                  ? (unsigned)strtoul(env_seed, NULL, 10)
                  : (unsigned)time(NULL) ^ ((unsigned)getpid() << 16);
  const char *only = NULL;
  char dir[] = "/tmp/twcrash-XXXXXX";
  const char *tmp = getenv("TMPDIR");
  char dirbuf[512];
  unsigned passed = 0, failed = 0;
  int opt;

  while ((opt = getopt(argc, argv, "n:s:r:f:o:ev")) != -1) {
    switch (opt) {
    case 'n': kills = (unsigned)atoi(optarg); break;
    case 's': only = optarg; break;
    case 'r': seed = (unsigned)strtoul(optarg, NULL, 10); break;
    case 'f': flush_every = strtoull(optarg, NULL, 10); break;
    case 'o': extra_options = optarg; break;
    case 'e': all_early = 1; break;
    case 'v': verbose = 1; break;
    default:
      fprintf(stderr, "usage: crashtest [-n KILLS] [-s SINKS] [-r SEED] "
              "[-f EVERY] [-o OPTIONS] [-e] [-v]\n");
      return 2;
    }
  }
  if (tmp && *tmp) {
    snprintf(dirbuf, sizeof dirbuf, "%s/twcrash-XXXXXX", tmp);
  } else {
    snprintf(dirbuf, sizeof dirbuf, "%s", dir);
  }
  if (flush_every == 0)
    flush_every = 1;
  if (!mkdtemp(dirbuf))
    return perror("mkdtemp"), 1;
  sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE,
            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED)
    return perror("mmap"), 1;
  setvbuf(stdout, NULL, _IOLBF, 0);   /* progress shows as it is made */
  printf("crashtest: seed %u (TW_TEST_SEED=%u replays it), %u kills per sink, "
         "in %s\n", seed, seed, kills, dirbuf);
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    const sink_case *c = &cases[k];
    tally tl = { 0, 0, 0, 0, 0 };
    unsigned s = seed + (unsigned)k;
    int ok = 1;

    if (only && !strstr(only, c->name))
      continue;
    for (unsigned run = 0; run < kills; run++)
      if (one_run(c, dirbuf, run, &s, &tl) != 0)
        ok = 0;
    printf("crashtest: %-8s %u deaths: %u valid as left, %u cut inside a "
           "commit and repaired, %u before the path was made, %u failed\n",
           c->name, tl.runs, tl.valid, tl.truncated, tl.unopened, tl.failed);
    if (ok && tl.runs == kills)
      passed++;
    else
      failed++;
  }
  if (!failed)
    rmdir(dirbuf);
  printf("crashtest: %u passed, %u failed\n", passed, failed);
  return failed ? 1 : 0;
}
