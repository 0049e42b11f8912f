/* faults.h -- the fault injection harness of the test_faults_* programs
 *
 * tests/faults.c wraps, with -Wl,--wrap=SYM (FAULT_WRAPS in Makefile.am),
 * every allocation function, output system call, zlib entry point and
 * name change the library makes, and a test programs faults on them:
 * fail the Nth call of a kind (and maybe some after it) with an errno,
 * write only part of a request, cap every write.  The allocation wrappers
 * keep the set of live blocks, for the leak checks.  Each program runs
 * its tests with faults_setup and faults_teardown (FAULTS_TEST), which
 * fail a test that leaks a block or a descriptor, and first
 * test_wrappers_see_library, which fails if the program was not linked
 * with the wraps.
 *
 * The programs, by what they prove:
 *   test_faults_open    a failed tw_open frees all, leaves no torn file
 *   test_faults_retry   EINTR and short writes are retried, nothing lost
 *   test_faults_commit  a failed commit (allocation, write, sync, deflate,
 *                       close) sticks and leaves the last commit
 *   test_faults_rotate  a failed step of a rotation never leaves a name
 *                       on an incomplete trace
 *   test_faults_codes   whatever call fails or is followed by a cut, no
 *                       private code reaches a caller
 */
#ifndef TW_TEST_FAULTS_H
#define TW_TEST_FAULTS_H

#include "numbered.h"

#include <sys/types.h>

/* What a fault can be programmed on.  One counter covers all allocation
 * functions, as "the Nth allocation". */
enum fk {
  FK_ALLOC,       /* malloc, calloc, realloc, zlib's allocations */
  FK_WRITE, FK_WRITEV, FK_PWRITE, FK_PWRITEV,
  FK_FALLOC,      /* fallocate and posix_fallocate */
  FK_CLOSE, FK_FDATASYNC, FK_MSYNC, FK_MMAP, FK_MREMAP,
  FK_DEFLATEINIT, FK_DEFLATE,   /* errors are zlib return codes */
  FK_THREAD,      /* pthread_create: errors are returned, not errno */
  FK_OPENAT, FK_LINKAT, FK_RENAMEAT, FK_UNLINKAT, /* rotation's names */
  FK_FSYNC,       /* a directory's, with rotation and sync */
  FK_COUNT
};

#define FOREVER ((unsigned long)-1)
#define HALF ((size_t)-1)

/* What the test is doing, for failure messages inside loops. */
extern char ctx[256];

#define EXPECT(cond)                                                      \
  do {                                                                    \
    if (!(cond))                                                          \
      fail_msg("%s: expected %s (line %d)", ctx, #cond, __LINE__);        \
  } while (0)

#define EXPECT_RC(got, want)                                              \
  do {                                                                    \
    long long g_ = (long long)(got), w_ = (long long)(want);              \
    if (g_ != w_)                                                         \
      fail_msg("%s: %s is %lld (%s), expected %lld (%s) (line %d)", ctx,  \
               #got, g_, tw_err_name((int)g_), w_, tw_err_name((int)w_),  \
               __LINE__);                                                 \
  } while (0)

#define PNAME "faults-test"
#define NEV 72             /* events of a workload */
#define FLUSH_EVERY 9      /* a workload's tw_flush period */
#define BIG_PAD 600        /* larger than a 512-byte buffer */

/* How a test reaches the output. */
enum how {
  PATH,      /* tw_open(path): the writer owns the fd */
  APPEND,    /* tw_open_fd on the file opened with O_APPEND: streams */
  PIPE       /* tw_open_fd on a pipe, read by a thread: streams */
};

typedef struct cfg {
  const char *name;
  int sink;                /* TW_SINK_FILE, _GZIP or _MMAP */
  int commit;              /* TW_COMMIT_INLINE or _BACKGROUND */
  int how;                 /* enum how */
  unsigned flags;          /* TW_OPT_* */
  uint64_t rotate_ns;      /* rotate_interval_ns */
} cfg;

typedef struct target {
  const cfg *c;
  char *path;              /* the file (PATH, APPEND) */
  int fd;                  /* given to tw_open_fd (APPEND, PIPE), or -1 */
  int reading;             /* PIPE: the reader thread runs */
  tu_pipe_reader rd;
  tw_writer *w;
} target;

typedef struct run {
  int ok;                  /* emits that returned 0 before any error */
  int err;                 /* the first error any call returned */
  int flushed;             /* events before the last successful tw_flush */
} run;

/* Every test of the programs runs between these: faults off, context
 * empty; then no block nor descriptor left behind. */
int faults_setup(void **state);
int faults_teardown(void **state);
#define FAULTS_TEST(f) cmocka_unit_test_setup_teardown(f, faults_setup, \
                                                       faults_teardown)

/* The wrappers really sit between the library and libc (every program
 * runs it first). */
void test_wrappers_see_library(void **state);

/* Point TMPDIR at /dev/shm unless it is set: the programs write and
 * remove thousands of files.  Call from main(). */
void faults_prefer_tmpfs(void);

/* ------------------------------------------------------------ the faults */

/* The names of the kinds, for messages. */
extern const char *const fk_names[FK_COUNT];

/* Forget every program and count from zero. */
void fault_reset(void);
/* Calls at..at+n-1 of kind k (counted from the last reset; n may be
 * FOREVER) fail with err (an errno; zlib, threads: a return code). */
void fault_fail(enum fk k, unsigned long at, unsigned long n, int err);
/* Call at of kind k writes only len bytes (HALF: half its request). */
void fault_short(enum fk k, unsigned long at, size_t len);
/* Every call of kind k writes at most cap bytes (HALF: half). */
void fault_cap(enum fk k, size_t cap);
/* Right after call at of kind k (a write or fallocate) succeeds, its
 * file is cut to nothing, as logrotate's copytruncate does. */
void fault_cut(enum fk k, unsigned long at);
/* The calls of kind k since the last reset, and the faults injected. */
unsigned long fault_calls(enum fk k);
unsigned long fault_injected(enum fk k);

/* The blocks allocated and not freed; the open descriptors. */
size_t live_count(void);
int count_fds(void);

/* Called after every change of a name (openat with O_CREAT, linkat,
 * renameat, unlinkat) that succeeded; NULL: nothing. */
extern void (*names_changed)(void);

/* ------------------------------------------------------------ the events */

/* The pad of workload event i, and the events' family (numbered.h): by
 * this process, from any thread. */
size_t pad_of(int i);
extern const tu_family F;

/* Inflate buf as exactly one complete gzip member with nothing after it
 * (fails the test otherwise).  Returns the bytes (free them). */
char *gunzip_exact(const char *buf, size_t len, size_t *outlen);

/* --------------------------------------------------------- the targets */

extern const cfg FILE_IN, FILE_BG, GZIP_IN, GZIP_BG, MMAP_IN, MMAP_BG;
extern const cfg FILE_APP, FILE_APP_BG, FILE_PIPE, GZIP_APP, GZIP_PIPE;
extern const cfg FILE_SYNC, FILE_SYNC_BG, GZIP_SYNC, MMAP_SYNC;
extern const cfg GZIP_ROTATE;         /* hourly: only its opening counts */

/* The options of a configuration: small buffers, 4 KiB mmap chunks. */
tw_options opts_of(const cfg *c);
/* A new target for c (its temporary file; for PIPE, the pipe and its
 * reader, before any fault is programmed). */
void t_init(target *t, const cfg *c);
/* Open the writer as the configuration says.  Returns it (also in t->w),
 * or NULL with *err set. */
tw_writer *t_open(target *t, int *err);
/* After tw_close (or a failed open): close the caller's fd, stop the
 * reader. */
void t_finish(target *t);
/* tw_close, then t_finish; returns what tw_close returned. */
int t_close(target *t);
/* The bytes written (the file, or what came through the pipe). */
char *t_bytes(target *t, size_t *len);
/* The JSON text of raw output bytes (inflated for gzip; raw is freed or
 * returned). */
char *json_of(const cfg *c, char *raw, size_t len, size_t *outlen);
/* 1 if text[0..n) ends with the array form's tail, its last byte the
 * bracket. */
int has_tail(const char *text, size_t n);
/* The output, strictly parsed (gzip: inflated as one exact member); its
 * text must end with exactly the tail. */
jc_doc *t_load(target *t);
/* Close what is left open and remove the file. */
void t_cleanup(target *t);

/* ----------------------------------------------------------- workload */

/* A call returned rc: the first error sticks, every later call must
 * return it too. */
void note(run *r, int rc, const char *what, int i);
/* Emit NEV events, with a tw_flush every FLUSH_EVERY and at the end, and
 * check that an error, once met, sticks. */
void workload(tw_writer *w, run *r);
/* Run the workload with no fault; check the output is complete.  Returns
 * the calls of kind k, in all and (*at_open) during tw_open. */
unsigned long count_calls(const cfg *c, enum fk k, unsigned long *at_open);

/* Run the workload on c (no error), then tw_close with close(2) failing
 * once with err: tw_close returns want, close(2) is called exactly once,
 * no descriptor is left open, and the file holds every event. */
void close_fails_once(const cfg *c, int err, int want);

/* ---------------------------------------------------------- snapshots */

/* Take a copy of the file at path just before the next injected fault:
 * the last commit, which a failed commit must leave (or put back).
 * snap_taken: 1 taken, 0 not yet, -1 unreadable or too big. */
void snap_arm(const char *path);
extern char *snap;
extern size_t snap_len;
extern int snap_taken;

#endif /* TW_TEST_FAULTS_H */
