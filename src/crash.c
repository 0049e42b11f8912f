/* crash.c -- the crash hook: commit what every thread staged when the
 * process dies by a signal (crash=commit)
 *
 * The hook commits from a signal handler, which may take no lock: a
 * crashed thread may hold the writer's.  So the state it reads is
 * published with atomics -- a slot's length is stored (release) only
 * after its records are copied in, and a slot's seq says whether and in
 * which order it waits to be written -- and the sink is guarded by the
 * commit token (commit.c), which every commit holds from its first write
 * to the sink until it has marked what it wrote.  The handler waits for
 * the token (a commit in flight in another thread ends by itself), and
 * skips the writer if its own thread holds it.  A deferring writer's
 * entries (record.h) are formatted here, into the writer's fmt_buf,
 * which the token makes the handler's: the formatter allocates nothing
 * and takes no lock.
 */
#include "internal.h"
#include "busguard.h"
#include "record.h"
#include "writer.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Async-signal-safety of the handler, call by call: getpid, sigaction,
 * raise, nanosleep, write, pwrite and ftruncate are on POSIX's list of
 * async-signal-safe functions; writev and pwritev are not listed (they
 * came later) but glibc documents them AS-Safe: like syscall(SYS_gettid)
 * and the SIGBUS guard's mmap (busguard.c) they are bare system calls
 * that touch no lock and no memory of the library's.  memcpy (struct copies, zlib) is on the list since POSIX
 * 2016.  deflate and crc32_z are computation on the sink's own stream and
 * constant tables (zlib allocates only in deflateInit2).  The __atomic
 * operations are lock-free (checked below).  Nothing else is called: no
 * malloc, no stdio, no pthread_mutex_*, no condition variables.
 *
 * What the handler reads is what it can read safely without the lock:
 * the registry (atomic pointers), a writer's pid, fork generation, error,
 * slot seqs and lengths (atomic), and, holding the token, the sink.
 * Records a producer is still copying lie past the length it has
 * published, so a crash in the middle of a copy (in this thread or
 * another) loses that one record and no other.
 */

#define NCRASH_SIGNALS 6
static const int crash_signals[NCRASH_SIGNALS] = {
  SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM
};

/* The program's actions, put back by the handler before it re-raises.
 * Written under crash_lock, only while the action in place is not the
 * hook's (so no handler of ours is reading it). */
static struct sigaction crash_prev[NCRASH_SIGNALS];
/* The writers with the hook (atomic), CRASH_RESERVED while one opens. */
static tw_writer *crash_slots[TW_CRASH_MAX_WRITERS];
static char crash_reserved_mark;
#define CRASH_RESERVED ((tw_writer *)&crash_reserved_mark)
/* Handlers running (atomic): tw_close waits for 0 before freeing. */
static unsigned crash_active;
static pthread_mutex_t crash_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t crash_once = PTHREAD_ONCE_INIT;

/* The handler's atomics must not hide a lock (analyzers read on past a
 * _Static_assert, unlike an #error). */
_Static_assert(__atomic_always_lock_free(sizeof(int), 0) &&
               __atomic_always_lock_free(sizeof(void *), 0) &&
               __atomic_always_lock_free(sizeof(uint64_t), 0),
               "the crash hook needs lock-free atomic int, pointer, uint64");

/* The writer's commit from the handler, holding the token: every slot in
 * use, in the order the slots were taken (so each thread's records in
 * their order), less what was written.  No commit can run while the
 * handler holds the token, so no slot is freed or taken for another
 * thread meanwhile; a producer may still be appending to its active slot,
 * and reading its length at any moment gives whole records. */
/* The slot in use with the smallest seq above last, or NULL: a scan of
 * every slot, fine for a crash. */
static tw__slot *next_in_use(tw_writer *w, uint64_t last, uint64_t *seq_out)
{
  tw__slot *best = NULL;
  uint64_t best_seq = 0;

  for (tw__slot *s = __atomic_load_n(&w->all_slots, __ATOMIC_ACQUIRE); s;
       s = s->next_all) {
    uint64_t seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
    if (seq > last && (!best || seq < best_seq)) {
      best = s;
      best_seq = seq;
    }
  }
  *seq_out = best_seq;
  return best;
}

/* The next slot in use after seq *last with entries not yet written:
 * its [*from, *to).  NULL when there is none, or a slot is corrupted
 * (*bad set: touch nothing). */
static tw__slot *next_pending(tw_writer *w, uint64_t *last, size_t *from,
                              size_t *to, int *bad)
{
  tw__slot *s;

  while ((s = next_in_use(w, *last, last)) != NULL) {
    *to = __atomic_load_n(&s->len, __ATOMIC_ACQUIRE);
    *from = __atomic_load_n(&s->done, __ATOMIC_RELAXED);
    if (*to > w->slot_size || *from > *to) {
      *bad = 1;
      return NULL;
    }
    if (*to > *from)
      return s;
  }
  return NULL;
}

/* Commit iov[0..n) from the handler and mark the slots' pieces written.
 * Returns 0 or the sink's error. */
static int crash_commit_batch(tw_writer *w, const struct iovec *iov,
                              tw__slot *const *slots, const size_t *ends,
                              int n, int final)
{
  int rc = w->sink->ops->crash_commit(w->sink, iov, n, final);

  if (rc == 0)
    for (int i = 0; i < n; i++)
      __atomic_store_n(&slots[i]->done, ends[i], __ATOMIC_RELEASE);
  return rc;
}

static void crash_commit_held(tw_writer *w, int final)
{
  struct iovec iov[TW__COMMIT_IOV];
  tw__slot *slots[TW__COMMIT_IOV];
  size_t ends[TW__COMMIT_IOV];
  uint64_t last = 0, formatted = 0;
  size_t from = 0, to = 0, used = 0;
  int n = 0, bad = 0;
  tw__slot *s = next_pending(w, &last, &from, &to, &bad);

  if (bad)
    return;
  for (;;) {
    /* Fill a batch: the slots as they are, or (a deferring writer) the
     * records of their entries formatted into fmt_buf, which the token
     * makes the handler's (record.h: async-signal-safe). */
    while (s && n < TW__COMMIT_IOV) {
      if (!w->defer_limit) {
        iov[n].iov_base = s->data + from;
        iov[n].iov_len = to - from;
        from = to;
      } else {
        size_t k = tw__rec_render(&w->fmt, s->data, &from, to,
                                  w->fmt_buf + used, w->fmt_cap - used,
                                  used == 0, &formatted);
        iov[n].iov_base = w->fmt_buf + used;
        iov[n].iov_len = k;
        used += k;
      }
      slots[n] = s;
      ends[n++] = from;
      if (from < to)
        break;                           /* fmt_buf is full */
      s = next_pending(w, &last, &from, &to, &bad);
      if (bad)
        return;
    }
    /* A batch is full, or every slot is in it. */
    if (crash_commit_batch(w, iov, slots, ends, n, final && !s) != 0)
      return;
    n = 0;
    used = 0;
    if (!s)
      break;
  }
  if (w->sync_commits)
    (void)w->sink->ops->sync(w->sink);     /* fdatasync */
}

/* Commit one registered writer from the handler, if it is this
 * process's and well: wait (at most TW_CRASH_WAIT_MS) for the token,
 * unless this very thread holds it -- then the handler interrupted the
 * writer's own commit, which it leaves as it is.  When the process is
 * sure to die (final), the token is kept: other threads go on running
 * until the signal ends the process, and a commit of theirs started now
 * would be cut by the death (a large write stops at a page boundary when
 * the process is killed), leaving a torn record after the good tail. */
static void crash_commit_writer(tw_writer *w, int64_t pid, int me, int final)
{
  struct timespec ms = { 0, 1000000 };
  int got = 0;

  /* Not w->sink: a rotation may be replacing it until the token is ours. */
  if (w->pid != pid || w->fork_gen != tw__fork_generation() ||
      __atomic_load_n(&w->err, __ATOMIC_RELAXED) || !w->crash_hook)
    return;
  __atomic_add_fetch(&w->crash_waiting, 1, __ATOMIC_SEQ_CST);
  for (unsigned t = 0; t <= TW_CRASH_WAIT_MS; t++) {
    int owner = 0;
    if (__atomic_compare_exchange_n(&w->commit_owner, &owner, me, 0,
                                    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
      got = 1;
      break;
    }
    if (owner == me)
      break;
    (void)nanosleep(&ms, NULL);
  }
  if (got) {
    crash_commit_held(w, final);
    if (!final)
      __atomic_store_n(&w->commit_owner, 0, __ATOMIC_RELEASE);
  }
  __atomic_sub_fetch(&w->crash_waiting, 1, __ATOMIC_SEQ_CST);
}

/* 1 if returning from the handler executes the faulting instruction
 * again, which raises the same signal anew under the program's action:
 * a core dump or the program's own handler then sees the original fault
 * (its address in si_addr).  Otherwise (sent by kill, raise, abort, or
 * by the kernel not for an instruction) the handler re-raises. */
static int crash_refaults(int sig, const siginfo_t *si)
{
  if (!si || si->si_code <= 0)
    return 0;
#ifdef SI_KERNEL
  if (si->si_code == SI_KERNEL)
    return 0;
#endif
  switch (sig) {
  case SIGSEGV:
  case SIGFPE:
  case SIGILL:
    return 1;
  case SIGBUS:
#ifdef BUS_MCEERR_AO
    return si->si_code != BUS_MCEERR_AO;    /* not this instruction's */
#else
    return 1;
#endif
  default:
    return 0;
  }
}

/* The hook: commit every writer of this process, put the program's
 * action back, re-raise (or return to fault again).  Every signal is
 * blocked while it runs (sa_mask), so no other handler cuts into a
 * commit; a fault inside it kills the process at once (the kernel
 * resets a blocked synchronous signal to its default). */
static void crash_handler(int sig, siginfo_t *si, void *ctx)
{
  int saved_errno = errno, i, final;
  tw__fmt_thread_cache saved_cache;
  struct sigaction prev;
  int64_t pid;
  int me;

  (void)ctx;
  /* A store into a mapped file truncated under an mmap writer: not a
   * crash (busguard.c). */
  if (sig == SIGBUS && tw__bus_guard_fixes(si)) {
    errno = saved_errno;
    return;
  }
  for (i = 0; i < NCRASH_SIGNALS && crash_signals[i] != sig; i++)
    continue;
  if (i == NCRASH_SIGNALS)
    return;
  prev = crash_prev[i];
  /* Only the default action is sure to end the process: then a
   * streaming output gets its tail. */
  final = !(prev.sa_flags & SA_SIGINFO) && prev.sa_handler == SIG_DFL;
  pid = (int64_t)getpid();
  me = (int)syscall(SYS_gettid);
  tw__format_cache_save(&saved_cache);
  __atomic_add_fetch(&crash_active, 1, __ATOMIC_SEQ_CST);
  for (unsigned k = 0; k < TW_CRASH_MAX_WRITERS; k++) {
    tw_writer *w = __atomic_load_n(&crash_slots[k], __ATOMIC_SEQ_CST);
    if (w && w != CRASH_RESERVED)
      crash_commit_writer(w, pid, me, final);
  }
  __atomic_sub_fetch(&crash_active, 1, __ATOMIC_SEQ_CST);
  tw__format_cache_restore(&saved_cache);
  (void)sigaction(sig, &prev, NULL);
  if (!crash_refaults(sig, si))
    (void)raise(sig);             /* pending until the handler returns */
  errno = saved_errno;
}

/* In the child after fork, no handler runs (it has one thread). */
static void crash_after_fork(void)
{
  __atomic_store_n(&crash_active, 0, __ATOMIC_RELAXED);
}

static void crash_init(void)
{
  (void)pthread_atfork(NULL, NULL, crash_after_fork);
}

/* Install the hook for each signal (only: if not 0) whose action is
 * neither the hook already nor SIG_IGN, keeping the action it replaces.
 * Returns 0 or -errno. */
static int crash_install(int only)
{
  int rc = 0;

  pthread_once(&crash_once, crash_init);
  pthread_mutex_lock(&crash_lock);
  for (int i = 0; i < NCRASH_SIGNALS && !rc; i++) {
    if (only && crash_signals[i] != only)
      continue;
    struct sigaction cur, ours;

    if (sigaction(crash_signals[i], NULL, &cur) != 0) {
      rc = -errno;
      break;
    }
    if (cur.sa_flags & SA_SIGINFO ? cur.sa_sigaction == crash_handler
                                  : cur.sa_handler == SIG_IGN)
      continue;
    memset(&ours, 0, sizeof ours);
    ours.sa_sigaction = crash_handler;
    sigfillset(&ours.sa_mask);
    ours.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    crash_prev[i] = cur;
    if (sigaction(crash_signals[i], &ours, NULL) != 0)
      rc = -errno;
  }
  pthread_mutex_unlock(&crash_lock);
  return rc;
}

/* Reserve a registry slot.  Returns its index, or -1 if all are taken. */
static int crash_slot_reserve(void)
{
  for (int i = 0; i < (int)TW_CRASH_MAX_WRITERS; i++) {
    tw_writer *none = NULL;
    if (__atomic_compare_exchange_n(&crash_slots[i], &none, CRASH_RESERVED,
                                    0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
      return i;
  }
  return -1;
}

int tw__crash_reserve(tw_writer *w)
{
  if ((w->crash_slot = crash_slot_reserve()) < 0)
    return TW_EOPTION;
  return crash_install(0);
}

int tw__bus_guard_install(void)
{
  return crash_install(SIGBUS);
}

void tw__crash_register(tw_writer *w)
{
  if (w->crash_slot >= 0)
    __atomic_store_n(&crash_slots[w->crash_slot], w, __ATOMIC_SEQ_CST);
}

/* Take w out of the registry, then wait until no handler can still be
 * using it.  A handler counts itself in (crash_active) before it reads a
 * slot, and every access here is sequentially consistent: either it saw
 * the slot empty or this loop sees it running. */
void tw__crash_unregister(tw_writer *w)
{
  if (w->crash_slot < 0)
    return;
  __atomic_store_n(&crash_slots[w->crash_slot], NULL, __ATOMIC_SEQ_CST);
  w->crash_slot = -1;
  while (__atomic_load_n(&crash_active, __ATOMIC_SEQ_CST))
    sched_yield();                 /* a crash handler is committing */
}
