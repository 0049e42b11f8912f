/* test_crashhook.c -- tests of the crash hook (crash=commit)
 *
 * A forked child opens a writer with a buffer large enough that nothing
 * but the head is committed, emits N events, and dies: a real SIGSEGV (a
 * store into a PROT_NONE page), a real SIGBUS (a store past the end of a
 * mapped empty file), raised SIGSEGV, SIGFPE, SIGILL (a real one, ud2, on
 * x86), abort(), and SIGTERM sent by the parent once the child says it is
 * ready.  The parent checks that the child died by that very signal and
 * that the file is strict JSON (a complete gzip member first, for gzip)
 * holding all N events, field by field.  Without the hook the same deaths
 * leave only the first record: the hook is what saved the events.
 *
 * Then: many buffers and a busy background committer; producer threads
 * killed at random moments; the program's own handlers (called after the
 * commit, with the original fault's siginfo; a process that survives its
 * SIGTERM goes on writing, nothing twice); streaming outputs (a pipe, a
 * stdio stream, gzip on a pipe); fork (a child's crash never commits the
 * parent's writer); the registry limit; the option itself.
 *
 * Each child first puts the default action back on the six signals: a
 * test runner (cmocka) or a sanitizer runtime may have its own handlers,
 * which the hook would otherwise call after its commit.
 *
 * TW_TEST_SCALE (testutil.h: default 10, 1 for make check-long) divides
 * the number of random kills.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pipe, fork, mkstemp, ... */
#endif

#include "numbered.h"
#include "gunzip.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define N_EVENTS 300u

static const int hooked[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT,
                              SIGTERM };

/* ---------------------------------------------------------- helpers */

/* The pad of event i: 0 to 89 letters. */
static size_t pad_of(int i)
{
  return (size_t)i * 7u % 90u;
}

/* The events of these tests (numbered.h), emitted by the main thread of
 * process pid (any when pid is 0). */
static tu_family events_of(pid_t pid)
{
  tu_family f = { "crash", "crashhook", pad_of, -1, -1, 0 };

  if (pid)
    f.pid = f.tid = pid;
  return f;
}

/* Emit events from..to-1; in a child. */
static void emit_range(tw_writer *w, unsigned from, unsigned to)
{
  const tu_family f = events_of(0);

  CHILD_CHECK(tu_emit_range(&f, w, (int)from, (int)to) == 0);
}

/* Put the default action back on the hooked signals, and no core dumps
 * from the deliberate crashes. */
static void child_defaults(void)
{
  struct rlimit no_core = { 0, 0 };

  for (size_t k = 0; k < sizeof hooked / sizeof hooked[0]; k++)
    signal(hooked[k], SIG_DFL);
  (void)setrlimit(RLIMIT_CORE, &no_core);
}

static tw_writer *child_open(const char *path, const char *opts)
{
  tw_options o;
  tw_writer *w;
  int err = 0;

  tw_options_init(&o);
  o.process_name = "crashhook";
  CHILD_CHECK(tw_options_parse(&o, opts, NULL, 0) == 0);
  w = tw_open(path, &o, &err);
  if (!w)
    fprintf(stderr, "tw_open(%s, %s): %s\n", path, opts, tw_strerror(err));
  CHILD_CHECK(w != NULL);
  return w;
}

/* The trace in the file at path (gzip: one complete member; the array
 * form) must hold exactly events 0..n-1, by process pid (any when pid is
 * 0). */
static void check_saved_by(const char *path, int gz, unsigned n, pid_t pid)
{
  const tu_family f = events_of(pid);

  tu_check_file(&f, path, gz, 0, (int)n);
}

/* Read exactly one byte from fd (-1 at EOF or on error). */
static int read_byte(int fd)
{
  unsigned char c;
  ssize_t k;

  do
    k = read(fd, &c, 1);
  while (k < 0 && errno == EINTR);
  return k == 1 ? c : -1;
}

static void write_byte(int fd, char c)
{
  ssize_t k;

  do
    k = write(fd, &c, 1);
  while (k < 0 && errno == EINTR);
}

/* Wait for pid; it must have died by sig (0: exited with status 0). */
static void expect_death(pid_t pid, int sig)
{
  int status;

  assert_int_equal(waitpid(pid, &status, 0), pid);
  if (sig == 0) {
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      fail_msg("child: status %#x, expected exit 0", status);
  } else if (!WIFSIGNALED(status) || WTERMSIG(status) != sig) {
    fail_msg("child: status %#x (%s %d), expected death by signal %d (%s)",
             status, WIFSIGNALED(status) ? "signal" : "exit",
             WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status),
             sig, strsignal(sig));
  }
}

/* ----------------------------------------------------------- deaths */

enum death { D_SEGV, D_SEGV_RAISED, D_BUS, D_FPE, D_ILL, D_ABRT, D_TERM,
             NDEATHS };
static const int death_sig[NDEATHS] = {
  SIGSEGV, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM
};
static const char *const death_name[NDEATHS] = {
  "SIGSEGV (fault)", "SIGSEGV (raised)", "SIGBUS (fault)", "SIGFPE",
  "SIGILL", "abort()", "SIGTERM"
};

/* A page that faults on any access. */
static volatile char *no_access_page(void)
{
  void *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

  CHILD_CHECK(p != MAP_FAILED);
  return p;
}

/* Send ready_fd a byte, then die as asked (D_TERM: wait for the
 * parent's SIGTERM). */
static void die(int how, int ready_fd)
{
  volatile char *page = no_access_page();

  if (how == D_BUS) {
    const char *dir = getenv("TMPDIR");
    char tmpl[600];
    int fd;
    snprintf(tmpl, sizeof tmpl, "%s/twbus-XXXXXX",
             dir && *dir ? dir : "/tmp");
    CHILD_CHECK((fd = mkstemp(tmpl)) >= 0);
    unlink(tmpl);
    /* An empty file mapped: a store into its first page is past EOF. */
    page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHILD_CHECK(page != MAP_FAILED);
  }
  write_byte(ready_fd, 'R');
  switch (how) {
  case D_SEGV:
  case D_BUS:
    page[0] = 1;
    break;
  case D_SEGV_RAISED:
    raise(SIGSEGV);
    break;
  case D_FPE:
    raise(SIGFPE);
    break;
  case D_ILL:
#if defined(__x86_64__) || defined(__i386__)
    __builtin_trap();                  /* ud2: a real SIGILL */
#else
    raise(SIGILL);
#endif
    break;
  case D_ABRT:
    abort();
  case D_TERM:
    for (;;)
      pause();
  }
  _exit(99);                           /* still alive */
}

/* Fork a child that opens path with opts, emits events [0, n) and dies
 * as asked (SIGTERM sent from here), and wait for its death.  Returns the
 * child's pid. */
static pid_t child_dies(const char *path, const char *opts, unsigned n,
                        int how)
{
  int fds[2];
  pid_t pid;

  assert_int_equal(pipe(fds), 0);
  fflush(NULL);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    tw_writer *w;
    close(fds[0]);
    child_defaults();
    w = child_open(path, opts);
    emit_range(w, 0, n);
    die(how, fds[1]);
  }
  close(fds[1]);
  assert_int_equal(read_byte(fds[0]), 'R');
  if (how == D_TERM)
    assert_int_equal(kill(pid, SIGTERM), 0);
  expect_death(pid, death_sig[how]);
  close(fds[0]);
  return pid;
}

/* A child opens path with opts, with the hook or not, emits N_EVENTS and
 * dies as asked; the file must then hold the first expect of them. */
static void run_death_n(const char *opts, int gz, int how, int hook,
                        unsigned expect)
{
  char *path = tu_tmppath(gz ? ".json.gz" : ".json");
  char full[256];
  tu_family ev;

  snprintf(full, sizeof full, "%s,crash=%s", opts, hook ? "commit" : "off");
  ev = events_of(child_dies(path, full, N_EVENTS, how));
  tu_check_file(&ev, path, gz, strstr(opts, "format=object") != NULL,
                (int)expect);
  tu_cleanup(path);
}

/* The same: all of them with the hook, none without. */
static void run_death(const char *opts, int gz, int how, int hook)
{
  run_death_n(opts, gz, how, hook, hook ? N_EVENTS : 0);
}

static void run_all_deaths(const char *opts, int gz)
{
  for (int how = 0; how < NDEATHS; how++) {
    print_message("  %s, %s\n", opts, death_name[how]);
    run_death(opts, gz, how, 1);
  }
}

#define BIG "buffer=1MiB"

static void test_deaths_file_inline(void **state)
{
  (void)state;
  run_all_deaths("sink=file,commit=inline," BIG, 0);
}

static void test_deaths_file_background(void **state)
{
  (void)state;
  run_all_deaths("sink=file,commit=background,buffers=2," BIG, 0);
}

static void test_deaths_gzip_background(void **state)
{
  (void)state;
  run_all_deaths("sink=gzip,commit=background," BIG, 1);
}

static void test_deaths_gzip_inline(void **state)
{
  (void)state;
  run_all_deaths("sink=gzip,commit=inline,gzip=6," BIG, 1);
}

/* The object form: the tail "\n]}" is written by the hook too. */
static void test_deaths_object_form(void **state)
{
  (void)state;
  run_death("sink=file,format=object," BIG, 0, D_SEGV, 1);
  run_death("sink=gzip,format=object," BIG, 1, D_ABRT, 1);
  run_death("sink=file,format=object,flush=1h," BIG, 0, D_TERM, 1);
}

/* Without the hook the same deaths leave the first record only. */
static void test_without_hook(void **state)
{
  static const char *const sinks[] = {
    "sink=file,commit=inline," BIG, "sink=file,commit=background," BIG,
    "sink=gzip,commit=background," BIG, "sink=gzip,commit=inline," BIG,
  };
  static const int some[] = { D_SEGV, D_ABRT, D_TERM };
  (void)state;

  for (size_t k = 0; k < sizeof sinks / sizeof sinks[0]; k++)
    for (size_t j = 0; j < sizeof some / sizeof some[0]; j++)
      run_death(sinks[k], k >= 2, some[j], 0);
}

/* The mmap sink commits every record anyway: the option is accepted and
 * changes nothing. */
static void test_mmap(void **state)
{
  (void)state;
  run_death_n("sink=mmap", 0, D_SEGV, 1, N_EVENTS);
  run_death_n("sink=mmap", 0, D_TERM, 1, N_EVENTS);
  run_death_n("sink=mmap", 0, D_SEGV, 0, N_EVENTS);
}

/* A writer closed before the crash: the handler finds nothing to do and
 * the process still dies by its signal. */
static void test_closed_writer(void **state)
{
  char *path = tu_tmppath(".json");
  int fds[2];
  pid_t pid;
  (void)state;

  assert_int_equal(pipe(fds), 0);
  fflush(NULL);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    tw_writer *w;
    close(fds[0]);
    child_defaults();
    w = child_open(path, "crash=commit," BIG);
    emit_range(w, 0, N_EVENTS);
    CHILD_CHECK(tw_close(w) == 0);
    die(D_ABRT, fds[1]);
  }
  close(fds[1]);
  assert_int_equal(read_byte(fds[0]), 'R');
  close(fds[0]);
  expect_death(pid, SIGABRT);
  check_saved_by(path, 0, N_EVENTS, pid);
  tu_cleanup(path);
}

/* -------------------------------------------- many buffers, in flight */

/* Small buffers and a background committer: when the child dies, some
 * buffers are queued, one is being filled and a commit is often in
 * flight.  Every event must be there once, in order. */
static void run_busy(const char *opts, int gz, int how, unsigned n)
{
  char *path = tu_tmppath(gz ? ".json.gz" : ".json");
  pid_t pid = child_dies(path, opts, n, how);

  check_saved_by(path, gz, n, pid);
  tu_cleanup(path);
}

static void test_busy_background(void **state)
{
  unsigned runs = 6;
  (void)state;

  for (unsigned r = 0; r < runs; r++) {
    unsigned n = 2000 + r * 777;
    run_busy("sink=file,commit=background,buffer=4KiB,buffers=8,crash=commit",
             0, r % 2 ? D_SEGV : D_TERM, n);
    run_busy("sink=file,commit=background,buffer=1KiB,buffers=2,"
             "crash=commit", 0, D_ABRT, n);
    run_busy("sink=gzip,commit=background,buffer=4KiB,buffers=8,crash=commit",
             1, r % 2 ? D_TERM : D_SEGV, n);
    run_busy("sink=file,commit=inline,buffer=4KiB,crash=commit",
             0, r % 2 ? D_SEGV_RAISED : D_BUS, n);
    run_busy("sink=gzip,commit=inline,buffer=4KiB,crash=commit",
             1, D_ILL, n);
  }
}

/* ------------------------------------------ threads killed at random */

#define THREADS 4
#define THREAD_MAX_SEQ (1u << 20)

typedef struct shared_state {
  int ready;                       /* the threads are writing */
  uint64_t published[THREADS];     /* last seq whose emit returned */
  uint64_t bound[THREADS];         /* published, read just before death */
} shared_state;

static shared_state *sh;
static tw_writer *thread_writer;
static uint64_t thread0_dies_at;   /* 0: the parent sends SIGTERM */
static volatile char *thread_page;

static size_t thread_slen(int t, uint64_t i)
{
  return (size_t)((i * 13 + (uint64_t)t * 7) % 250);
}

static void thread_s(char *s, int t, uint64_t i)
{
  size_t n = thread_slen(t, i);
  for (size_t k = 0; k < n; k++)
    s[k] = (char)('A' + (i + k + (uint64_t)t) % 26);
  s[n] = '\0';
}

static void *producer(void *arg)
{
  int t = (int)(intptr_t)arg;
  char s[300];

  for (uint64_t i = 1; i <= THREAD_MAX_SEQ; i++) {
    tw_arg args[3];
    thread_s(s, t, i);
    args[0] = tw_arg_int("t", t);
    args[1] = tw_arg_uint("i", i);
    args[2] = tw_arg_str("s", s);
    if (tw_complete(thread_writer, "thr", "ev", i * 1000, 10, args, 3) != 0)
      _exit(71);
    __atomic_store_n(&sh->published[t], i, __ATOMIC_RELEASE);
    if (t == 0 && i == thread0_dies_at) {
      for (int k = 0; k < THREADS; k++)
        sh->bound[k] = __atomic_load_n(&sh->published[k], __ATOMIC_ACQUIRE);
      thread_page[0] = 1;          /* SIGSEGV, while the others write */
    }
  }
  for (;;)
    pause();
  return NULL;
}

/* Each thread's events must be 1, 2, ... k intact, in order, with k at
 * least the bound. */
static void verify_threads(const jc_doc *d, const uint64_t *bound)
{
  uint64_t last[THREADS] = { 0 };
  jc_val e = jc_first(d, tu_events(d));
  char s[300];

  assert_true(e >= 0);
  tu_assert_str(d, e, "name", "process_name");
  for (e = jc_next(d, e); e >= 0; e = jc_next(d, e)) {
    jc_val args = jc_get(d, e, "args");
    int64_t t;
    uint64_t i;
    assert_int_equal(jc_int64(d, jc_get(d, args, "t"), &t), 0);
    assert_true(t >= 0 && t < THREADS);
    assert_int_equal(jc_uint64(d, jc_get(d, args, "i"), &i), 0);
    if (i != last[t] + 1)
      fail_msg("thread %d: seq %llu after %llu", (int)t,
               (unsigned long long)i, (unsigned long long)last[t]);
    last[t] = i;
    thread_s(s, (int)t, i);
    tu_assert_str(d, args, "s", s);
  }
  for (int t = 0; t < THREADS; t++)
    if (last[t] < bound[t])
      fail_msg("thread %d: %llu emitted before the death, %llu in the file",
               t, (unsigned long long)bound[t], (unsigned long long)last[t]);
}

/* A child writes from THREADS threads and dies: thread 0 faults after
 * a random number of events, or the parent sends SIGTERM at a random
 * moment -- handled by the main thread, idle in pthread_join, or, when it
 * blocks SIGTERM, by a producer, which may be in the middle of copying a
 * record with the writer's lock held. */
static void run_threads(const char *opts, int gz, unsigned *seed)
{
  char *path = tu_tmppath(gz ? ".json.gz" : ".json");
  uint64_t bound[THREADS];
  int main_blocks_term;
  pid_t pid;
  jc_doc *d;

  memset(sh, 0, sizeof *sh);
  thread0_dies_at = rand_r(seed) % 2 ? 1 + rand_r(seed) % 20000 : 0;
  main_blocks_term = rand_r(seed) % 2;
  fflush(NULL);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    pthread_t th[THREADS];
    child_defaults();
    thread_page = no_access_page();
    thread_writer = child_open(path, opts);
    __atomic_store_n(&sh->ready, 1, __ATOMIC_RELEASE);
    for (int t = 0; t < THREADS; t++)
      CHILD_CHECK(pthread_create(&th[t], NULL, producer,
                                 (void *)(intptr_t)t) == 0);
    if (main_blocks_term) {
      sigset_t term;
      sigemptyset(&term);
      sigaddset(&term, SIGTERM);
      pthread_sigmask(SIG_BLOCK, &term, NULL);
    }
    for (int t = 0; t < THREADS; t++)
      pthread_join(th[t], NULL);
    _exit(0);
  }
  while (!__atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE)) {
    int status;
    if (waitpid(pid, &status, WNOHANG) == pid)
      fail_msg("child died before opening (status %#x)", status);
    usleep(100);
  }
  if (!thread0_dies_at) {
    struct timespec ts = { 0, (long)(rand_r(seed) % 15000) * 1000 };
    nanosleep(&ts, NULL);
    for (int t = 0; t < THREADS; t++)
      sh->bound[t] = __atomic_load_n(&sh->published[t], __ATOMIC_ACQUIRE);
    assert_int_equal(kill(pid, SIGTERM), 0);
  }
  expect_death(pid, thread0_dies_at ? SIGSEGV : SIGTERM);
  memcpy(bound, sh->bound, sizeof bound);
  {
    size_t len, jlen = 0;
    char *buf = tu_read_file(path, &len), *json = buf, err[200];
    if (gz && !(json = tu_gunzip(buf, len, &jlen)))
      fail_msg("%s, %s: not one complete gzip member (kept %s)", opts,
               thread0_dies_at ? "SIGSEGV in thread 0" : "SIGTERM", path);
    if (!(d = tu_parse_trace(json, gz ? jlen : len, err, sizeof err)))
      fail_msg("%s, %s: not strict JSON: %s (kept %s)", opts,
               thread0_dies_at ? "SIGSEGV in thread 0" : "SIGTERM", err,
               path);
    if (json != buf)
      free(json);
    free(buf);
  }
  verify_threads(d, bound);
  jc_free(d);
  tu_cleanup(path);
}

static void test_threads_random_deaths(void **state)
{
  static const struct { const char *opts; int gz; } cfg[] = {
    { "sink=file,commit=inline,buffer=4KiB,crash=commit", 0 },
    { "sink=file,commit=background,buffer=4KiB,buffers=4,crash=commit", 0 },
    { "sink=file,commit=background,buffer=64KiB,flush=1ms,crash=commit", 0 },
    { "sink=gzip,commit=background,buffer=16KiB,crash=commit", 1 },
    { "sink=gzip,commit=inline,buffer=4KiB,crash=commit", 1 },
  };
  unsigned seed = tu_seed("test_threads_random_deaths"), runs = (unsigned)tu_scaled(16);
  (void)state;

  if (runs < 2)
    runs = 2;
  print_message("  %u runs per configuration\n", runs);
  sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE,
            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  assert_true(sh != MAP_FAILED);
  for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
    print_message("  %s\n", cfg[c].opts);
    for (unsigned r = 0; r < runs; r++)
      run_threads(cfg[c].opts, cfg[c].gz, &seed);
  }
  munmap(sh, sizeof *sh);
}

/* ------------------------------------------- the program's handlers */

static int prog_pipe = -1;         /* the program's handlers report here */
static int prog_trace_fd = -1;     /* the trace, opened by the program */
static off_t prog_min_size;        /* the trace's size once committed */
/* Atomic: the handler may run in another thread (the committer). */
static int prog_got_term;

/* The program's SIGTERM handler, installed before tw_open: reports
 * whether the trace already holds the commit ('H') or not ('h'), then
 * dies by SIGTERM as the default action would. */
static void prog_term_then_die(int sig)
{
  struct stat st;
  char c = fstat(prog_trace_fd, &st) == 0 && st.st_size >= prog_min_size
           ? 'H' : 'h';

  write_byte(prog_pipe, c);
  signal(sig, SIG_DFL);
  raise(sig);
}

/* The program's SIGSEGV handler (SA_SIGINFO): reports the fault it sees,
 * then puts the default back and returns, to fault again. */
static void prog_segv(int sig, siginfo_t *si, void *ctx)
{
  struct { void *addr; int code; } seen;
  ssize_t k;

  (void)ctx;
  memset(&seen, 0, sizeof seen);              /* the padding too */
  seen.addr = si->si_addr;
  seen.code = si->si_code;
  k = write(prog_pipe, &seen, sizeof seen);
  (void)k;
  signal(sig, SIG_DFL);
}

/* The program's SIGTERM handler that lets the process live on. */
static void prog_term_survive(int sig)
{
  (void)sig;
  __atomic_store_n(&prog_got_term, 1, __ATOMIC_RELEASE);
}

/* A SIGTERM handler the program installed before tw_open runs after the
 * commit (the trace is complete when it looks), and the process still
 * dies by SIGTERM. */
static void test_program_term_handler(void **state)
{
  static const struct { const char *opts; int gz; } cfg[] = {
    { "sink=file,commit=inline,crash=commit," BIG, 0 },
    { "sink=file,commit=background,crash=commit," BIG, 0 },
    { "sink=gzip,crash=commit," BIG, 1 },
  };
  (void)state;

  for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
    char *path = tu_tmppath(cfg[c].gz ? ".json.gz" : ".json");
    int fds[2];
    pid_t pid;

    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      tw_writer *w;
      struct stat st;
      close(fds[0]);
      child_defaults();
      prog_pipe = fds[1];
      signal(SIGTERM, prog_term_then_die);
      w = child_open(path, cfg[c].opts);
      prog_trace_fd = open(path, O_RDONLY);
      CHILD_CHECK(prog_trace_fd >= 0 && fstat(prog_trace_fd, &st) == 0);
      emit_range(w, 0, N_EVENTS);
      /* Nothing committed yet: the file grows only with the hook's
       * commit (gzip: by far more than the head). */
      CHILD_CHECK(fstat(prog_trace_fd, &st) == 0);
      prog_min_size = st.st_size + (cfg[c].gz ? 1000 : 10000);
      die(D_TERM, fds[1]);
    }
    close(fds[1]);
    assert_int_equal(read_byte(fds[0]), 'R');
    assert_int_equal(kill(pid, SIGTERM), 0);
    expect_death(pid, SIGTERM);
    assert_int_equal(read_byte(fds[0]), 'H');
    close(fds[0]);
    check_saved_by(path, cfg[c].gz, N_EVENTS, pid);
    tu_cleanup(path);
  }
}

/* A SIGSEGV handler the program installed before tw_open sees the
 * original fault (address and code: the hook returns to the faulting
 * store rather than re-raising), after the commit. */
static void test_program_segv_handler(void **state)
{
  char *path = tu_tmppath(".json");
  struct { void *addr; int code; } seen;
  void *page;
  int fds[2];
  pid_t pid;
  (void)state;

  assert_int_equal(pipe(fds), 0);
  fflush(NULL);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    struct sigaction sa;
    volatile char *p;
    tw_writer *w;
    close(fds[0]);
    child_defaults();
    prog_pipe = fds[1];
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = prog_segv;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    CHILD_CHECK(sigaction(SIGSEGV, &sa, NULL) == 0);
    w = child_open(path, "crash=commit," BIG);
    emit_range(w, 0, N_EVENTS);
    p = no_access_page();
    page = (void *)(uintptr_t)p;
    CHILD_CHECK(write(fds[1], &page, sizeof page) == (ssize_t)sizeof page);
    p[0] = 1;
    _exit(99);
  }
  close(fds[1]);
  assert_int_equal(read(fds[0], &page, sizeof page), (ssize_t)sizeof page);
  expect_death(pid, SIGSEGV);
  assert_int_equal(read(fds[0], &seen, sizeof seen), (ssize_t)sizeof seen);
  close(fds[0]);
  assert_ptr_equal(seen.addr, page);
  assert_int_equal(seen.code, SEGV_ACCERR);
  check_saved_by(path, 0, N_EVENTS, pid);
  tu_cleanup(path);
}

/* The program's SIGTERM handler returns: the process lives on after the
 * hook's commit, writes more, and closes.  The file holds every event
 * once: the commits after the hook's skip what it wrote. */
static void run_survive(const char *opts, int gz)
{
  char *path = tu_tmppath(gz ? ".json.gz" : ".json");
  int up[2], down[2];
  pid_t pid;

  assert_int_equal(pipe(up), 0);
  assert_int_equal(pipe(down), 0);
  fflush(NULL);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    tw_writer *w;
    close(up[0]);
    close(down[1]);
    child_defaults();
    signal(SIGTERM, prog_term_survive);
    w = child_open(path, opts);
    emit_range(w, 0, N_EVENTS);
    write_byte(up[1], 'R');
    while (!__atomic_load_n(&prog_got_term, __ATOMIC_ACQUIRE))
      usleep(1000);
    write_byte(up[1], 'C');
    CHILD_CHECK(read_byte(down[0]) == 'G');
    emit_range(w, N_EVENTS, 2 * N_EVENTS);
    CHILD_CHECK(tw_close(w) == 0);
    free(path);                 /* for valgrind's leak check in the child */
    _exit(0);
  }
  close(up[1]);
  close(down[0]);
  assert_int_equal(read_byte(up[0]), 'R');
  assert_int_equal(kill(pid, SIGTERM), 0);
  assert_int_equal(read_byte(up[0]), 'C');
  check_saved_by(path, gz, N_EVENTS, pid);        /* the hook's commit */
  write_byte(down[1], 'G');
  expect_death(pid, 0);
  close(up[0]);
  close(down[1]);
  check_saved_by(path, gz, 2 * N_EVENTS, pid);
  tu_cleanup(path);
}

static void test_survive(void **state)
{
  (void)state;
  run_survive("sink=file,commit=inline,crash=commit," BIG, 0);
  run_survive("sink=file,commit=background,crash=commit," BIG, 0);
  run_survive("sink=file,commit=background,buffer=4KiB,crash=commit", 0);
  run_survive("sink=gzip,commit=background,crash=commit," BIG, 1);
  run_survive("sink=gzip,commit=inline,buffer=4KiB,crash=commit", 1);
}

/* ------------------------------------------------ streaming outputs */

enum stream_kind { S_FD, S_STDIO, S_GZIP };

/* A child writes to a pipe (tw_open_fd, tw_open_stream, or gzip on the
 * fd) and dies (how), or, with survive, lives on after its SIGTERM and
 * closes.  The parent reads the pipe to EOF: a complete trace either way
 * -- the tail is written when the process is sure to die. */
static void run_stream(int kind, int how, int survive)
{
  int data[2], up[2];
  unsigned n = survive ? 2 * N_EVENTS : N_EVENTS;
  tu_family ev;
  size_t len;
  char *buf;
  pid_t pid;

  assert_int_equal(pipe(data), 0);
  assert_int_equal(pipe(up), 0);
  fflush(NULL);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    FILE *f = NULL;
    tw_options o;
    tw_writer *w;
    int err = 0;
    close(data[0]);
    close(up[0]);
    child_defaults();
    if (survive)
      signal(SIGTERM, prog_term_survive);
    tw_options_init(&o);
    o.process_name = "crashhook";
    CHILD_CHECK(tw_options_parse(&o, kind == S_GZIP ? "sink=gzip,crash=commit,"
                                 BIG : "crash=commit," BIG, NULL, 0) == 0);
    if (kind == S_STDIO) {
      f = fdopen(data[1], "w");
      CHILD_CHECK(f != NULL);
      w = tw_open_stream(f, &o, &err);
    } else {
      w = tw_open_fd(data[1], &o, &err);
    }
    CHILD_CHECK(w != NULL);
    emit_range(w, 0, N_EVENTS);
    if (!survive)
      die(how, up[1]);
    write_byte(up[1], 'R');
    while (!__atomic_load_n(&prog_got_term, __ATOMIC_ACQUIRE))
      usleep(1000);
    emit_range(w, N_EVENTS, 2 * N_EVENTS);
    CHILD_CHECK(tw_close(w) == 0);
    if (f)
      fclose(f);
    _exit(0);
  }
  close(data[1]);
  close(up[1]);
  assert_int_equal(read_byte(up[0]), 'R');
  if (how == D_TERM || survive)
    assert_int_equal(kill(pid, SIGTERM), 0);
  buf = tu_read_fd(data[0], &len);
  expect_death(pid, survive ? 0 : death_sig[how]);
  close(data[0]);
  close(up[0]);
  ev = events_of(pid);
  tu_check_mem(&ev, buf, len, kind == S_GZIP, 0, (int)n);
  free(buf);
}

static void test_streams(void **state)
{
  (void)state;
  for (int kind = S_FD; kind <= S_GZIP; kind++) {
    run_stream(kind, D_SEGV, 0);
    run_stream(kind, D_TERM, 0);
    run_stream(kind, D_ABRT, 0);
    run_stream(kind, D_TERM, 1);
  }
}

/* When the program has a SIGTERM handler of its own, which might let the
 * process live, the pipe gets the records but no tail.  Here the handler
 * kills the process, so the stream is an array cut after the last record
 * (what Perfetto opens, and tracewriter repair closes). */
static void test_stream_no_tail_with_program_handler(void **state)
{
  int data[2], up[2];
  size_t len;
  char *buf;
  pid_t pid;
  (void)state;

  assert_int_equal(pipe(data), 0);
  assert_int_equal(pipe(up), 0);
  fflush(NULL);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    tw_writer *w;
    tw_options o;
    close(data[0]);
    close(up[0]);
    child_defaults();
    prog_pipe = up[1];
    prog_trace_fd = data[1];               /* a pipe: size 0, 'H' */
    prog_min_size = 0;
    signal(SIGTERM, prog_term_then_die);
    tw_options_init(&o);
    o.process_name = "crashhook";
    CHILD_CHECK(tw_options_parse(&o, "crash=commit," BIG, NULL, 0) == 0);
    CHILD_CHECK((w = tw_open_fd(data[1], &o, NULL)) != NULL);
    emit_range(w, 0, N_EVENTS);
    die(D_TERM, up[1]);
  }
  close(data[1]);
  close(up[1]);
  assert_int_equal(read_byte(up[0]), 'R');
  assert_int_equal(kill(pid, SIGTERM), 0);
  buf = tu_read_fd(data[0], &len);
  expect_death(pid, SIGTERM);
  assert_int_equal(read_byte(up[0]), 'H');
  close(data[0]);
  close(up[0]);
  /* Every record, then no tail: closing the array makes it the trace. */
  assert_true(len > 2 && buf[len - 1] == '}');
  buf = realloc(buf, len + strlen(TU_TAIL(0)));
  assert_non_null(buf);
  memcpy(buf + len, TU_TAIL(0), strlen(TU_TAIL(0)));
  {
    const tu_family f = events_of(pid);
    tu_check_mem(&f, buf, len + strlen(TU_TAIL(0)), 0, 0, N_EVENTS);
  }
  free(buf);
}

/* ----------------------------------------------------------- fork */

/* A parent with an uncommitted writer forks: a child that crashes
 * (without a writer, or with one of its own) never commits the parent's
 * writer into the parent's file; the parent goes on and closes.  The
 * parent is itself a child of the test, with default actions. */
static void test_crash_in_forked_child_commits_nothing(void **state)
{
  char *ppath = tu_tmppath(".json");
  char *cpath = tu_tmppath(".json");
  pid_t parent;
  (void)state;

  fflush(NULL);
  parent = fork();
  assert_true(parent >= 0);
  if (parent == 0) {
    size_t len0, len;
    char *snap0, *snap;
    tw_writer *w;
    int status;
    pid_t c;

    child_defaults();
    w = child_open(ppath, "crash=commit," BIG);
    emit_range(w, 0, N_EVENTS);
    snap0 = tu_read_file(ppath, &len0);     /* the head only */
    for (int with_writer = 0; with_writer < 2; with_writer++) {
      c = fork();
      CHILD_CHECK(c >= 0);
      if (c == 0) {
        if (with_writer) {
          tw_writer *w2 = child_open(cpath, "crash=commit," BIG);
          emit_range(w2, 0, N_EVENTS);
        }
        const tu_family f = events_of(0);
        CHILD_CHECK(tu_emit(&f, w, 0) == TW_EFORKED);
        *no_access_page() = 1;
        _exit(99);
      }
      CHILD_CHECK(waitpid(c, &status, 0) == c);
      CHILD_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV);
      snap = tu_read_file(ppath, &len);
      CHILD_CHECK(len == len0 && memcmp(snap, snap0, len) == 0);
      free(snap);
    }
    free(snap0);
    emit_range(w, N_EVENTS, 2 * N_EVENTS);
    CHILD_CHECK(tw_close(w) == 0);
    free(ppath);                /* for valgrind's leak check in the child */
    free(cpath);
    _exit(0);
  }
  expect_death(parent, 0);
  check_saved_by(ppath, 0, 2 * N_EVENTS, parent);
  check_saved_by(cpath, 0, N_EVENTS, 0);
  tu_cleanup(ppath);
  tu_cleanup(cpath);
}

/* ------------------------------------------------ registry, option */

/* At most TW_CRASH_MAX_WRITERS writers have the hook at once; the others
 * are refused (TW_EOPTION) until one closes.  Writers without it, and
 * mmap writers (nothing to commit), do not count. */
static void test_registry_limit(void **state)
{
  char *paths[TW_CRASH_MAX_WRITERS + 3];
  const size_t npaths = sizeof paths / sizeof paths[0];
  pid_t pid;
  (void)state;

  for (size_t k = 0; k < npaths; k++)
    paths[k] = tu_tmppath(".json");
  fflush(NULL);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    tw_writer *w[TW_CRASH_MAX_WRITERS + 3];
    tw_options o;
    int err = 0;

    child_defaults();
    for (unsigned k = 0; k < TW_CRASH_MAX_WRITERS; k++)
      w[k] = child_open(paths[k], "crash=commit,buffer=4KiB");
    tw_options_init(&o);
    CHILD_CHECK(tw_options_parse(&o, "crash=commit", NULL, 0) == 0);
    CHILD_CHECK(tw_open(paths[TW_CRASH_MAX_WRITERS], &o, &err) == NULL);
    CHILD_CHECK(err == TW_EOPTION);
    w[TW_CRASH_MAX_WRITERS] =
      child_open(paths[TW_CRASH_MAX_WRITERS], "crash=off");
    w[TW_CRASH_MAX_WRITERS + 1] =
      child_open(paths[TW_CRASH_MAX_WRITERS + 1], "sink=mmap,crash=commit");
    CHILD_CHECK(tw_close(w[3]) == 0);
    w[3] = child_open(paths[TW_CRASH_MAX_WRITERS + 2], "crash=commit");
    for (unsigned k = 0; k < TW_CRASH_MAX_WRITERS; k++)
      emit_range(w[k], 0, 10);
    /* Every one of the 16 is committed by one crash. */
    raise(SIGTERM);
    _exit(99);
  }
  expect_death(pid, SIGTERM);
  for (size_t k = 0; k < npaths; k++) {
    unsigned n = k == 3 ? 0 : k < TW_CRASH_MAX_WRITERS ? 10 : 0;
    if (k == TW_CRASH_MAX_WRITERS + 2)
      n = 10;
    check_saved_by(paths[k], 0, n, pid);
    tu_cleanup(paths[k]);
  }
}

static void test_option(void **state)
{
  tw_options o;
  char err[200];
  tw_writer *w;
  int rc = 0;
  (void)state;

  tw_options_init(&o);
  assert_int_equal(o.crash, TW_CRASH_OFF);
  assert_int_equal(tw_options_parse(&o, "crash=commit", err, sizeof err), 0);
  assert_int_equal(o.crash, TW_CRASH_COMMIT);
  assert_int_equal(tw_options_parse(&o, "crash=off", err, sizeof err), 0);
  assert_int_equal(o.crash, TW_CRASH_OFF);
  assert_int_equal(tw_options_parse(&o, "crash=commit,crash=maybe", err,
                                    sizeof err), TW_EOPTION);
  assert_non_null(strstr(err, "'maybe' for 'crash'"));
  assert_int_equal(o.crash, TW_CRASH_OFF);              /* unchanged */
  assert_int_equal(tw_options_parse(&o, "crash", err, sizeof err),
                   TW_EOPTION);
  o.crash = 2;
  assert_null(w = tw_open("/dev/null", &o, &rc));
  assert_int_equal(rc, TW_EOPTION);
  /* crash is part of the first published struct. */
  assert_int_equal(tw_options_init_sized(&o, offsetof(tw_options, crash)),
                   TW_EVERSION);
  assert_int_equal(tw_options_init_sized(&o, sizeof(tw_options)), 0);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_option),
    cmocka_unit_test(test_deaths_file_inline),
    cmocka_unit_test(test_deaths_file_background),
    cmocka_unit_test(test_deaths_gzip_background),
    cmocka_unit_test(test_deaths_gzip_inline),
    cmocka_unit_test(test_deaths_object_form),
    cmocka_unit_test(test_without_hook),
    cmocka_unit_test(test_mmap),
    cmocka_unit_test(test_closed_writer),
    cmocka_unit_test(test_busy_background),
    cmocka_unit_test(test_threads_random_deaths),
    cmocka_unit_test(test_program_term_handler),
    cmocka_unit_test(test_program_segv_handler),
    cmocka_unit_test(test_survive),
    cmocka_unit_test(test_streams),
    cmocka_unit_test(test_stream_no_tail_with_program_handler),
    cmocka_unit_test(test_crash_in_forked_child_commits_nothing),
    cmocka_unit_test(test_registry_limit),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
