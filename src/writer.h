/* writer.h -- the writer's state, shared by the files that implement it
 *
 *   stage.c      per-thread staging and the per-event path (tw_emit)
 *   commit.c     the commit: the token, the signal mask, collecting what
 *                threads staged, writing it to the sink; tw_flush
 *   committer.c  the background committer thread
 *   crash.c      the crash hook
 *   document.c   beginning a document (at open, rotation, restart) and
 *                the metadata store every document begins with
 *   rotate.c     rotation: when, and the names of the files
 *   open.c       open, close, stats
 *   sink.c       the sink factory (sink.h)
 *
 * How records travel.  A thread formats each event straight into a slot
 * of its own (a buffer of slot_size bytes) and publishes the slot's new
 * length; with formatting on the committer (defer_limit), it copies the
 * event into the slot as a binary entry instead, which the commit
 * formats into fmt_buf just before writing it (record.h).  A full slot
 * is sealed: queued for the commit, under the writer's lock -- once per
 * slot, not once per event -- and the thread takes a free slot.  A
 * commit writes sealed slots, and at tw_flush, tw_close, the flush timer
 * and the crash hook also the part of every thread's active slot not yet
 * written, straight from the slots to the sink (pwritev: no copy), or
 * from fmt_buf, where it formatted the slots' entries.  A direct sink
 * (mmap) has no slots: each thread copies its records into a region of
 * the output (sink.h).
 *
 * Memory: a pool of slots holds what is sealed and waiting (commit_bytes,
 * times buffer_count with a background committer, times 2 so that
 * threads go on while a commit is written), plus one active slot per
 * thread that has emitted, and with deferral fmt_buf (the size of two
 * commits, at most about 2 MiB).  Slots are allocated when a writer
 * opens and at a thread's first event; a thread that exits leaves its
 * slot to the pool for the next thread; all are freed at close.
 */
#ifndef TW_WRITER_H
#define TW_WRITER_H

#include "internal.h"
#include "fdio.h"
#include "layout.h"
#include "sink.h"

#include <pthread.h>
#include <signal.h>

struct rotation;

/* One staging slot. */
typedef struct tw__slot {
  char *data;
  size_t len;              /* bytes of whole records: the owner thread
                              stores it (release) after each record; the
                              committer and the crash hook read it
                              (acquire) */
  size_t done;             /* bytes already given to the sink: only the
                              commit token's holder touches it */
  uint64_t seq;            /* 0: free; else the order in which slots were
                              taken, so that the crash hook writes each
                              thread's slots in order (atomic; set under
                              the lock, cleared by the token holder) */
  int unit_end;            /* sealed: it closes a commit's unit (lock) */
  struct tw__slot *next;   /* the sealed queue or the free list (lock) */
  struct tw__slot *next_all; /* every slot of the writer (append-only,
                              read by the crash hook) */
} tw__slot;

/* One thread's staging for one writer. */
typedef struct tw__stage {
  tw_writer *w;            /* the writer (not to be touched once
                              writer_gone) */
  uint64_t writer_id;      /* w->id: a stage is found by it */
  tw__slot *slot;          /* the active slot (NULL: none, after a drop);
                              the owner changes it under the lock */
  tw__region region;       /* direct sinks: the owner's region */
  unsigned cuts_seen;      /* direct sinks: tw__bus_cuts when the owner
                              last reserved */
  int copying;             /* direct sinks: the owner may be copying a
                              record into its region (atomic).  Set
                              before it looks at its sink's retiring,
                              which a rotation sets before it waits for
                              every copying to clear: so no copy is
                              under way, nor begins, in a file once it
                              has its numbered name, and a kill cannot
                              leave a record cut in a finished part */
  tw__slot *snap;          /* the active slot when the commit under way
                              began (the committing thread's) */
  uint64_t events;         /* this thread's records and their bytes:     */
  uint64_t bytes;          /*   stored by the owner, read by tw_stats    */
  int orphan;              /* the thread has exited (lock) */
  int refs;                /* 2 while both the thread and the writer hold
                              the stage; whoever drops it to 0 frees it
                              (atomic) */
  int writer_gone;         /* the writer has closed (atomic) */
  struct tw__stage *next;  /* the writer's stages (lock) */
  struct tw__stage *thread_next; /* the thread's stages (its own) */
} tw__stage;

/* The concurrency contract.
 *
 * Six mutexes and a token.  A thread holding one may take only those
 * below it, in this order:
 *
 *   0. open_writers_lock (open.c) the process's open writers, and the
 *                    count of tw_open and tw_close under way: taken
 *                    holding nothing else (their start and end), and
 *                    across fork by its pthread_atfork handlers, whose
 *                    prepare waits (on a condition of it) for no open
 *                    or close under way, then takes every open
 *                    writer's lock and token, one writer after the
 *                    other.
 *   1. w->lock       the writer's lock (tw__writer_lock)
 *   2. the token     w->commit_owner: the commit token (an atomic owner
 *                    id, taken by tw__token_take, which spins; see
 *                    commit.c).  A commit takes it after releasing the
 *                    lock, and takes the lock again only after giving it.
 *                    It is taken by a commit, by a document begun
 *                    (document.c: at open, rotation, restart), by a
 *                    direct sink's producer reserving a region
 *                    (stage.c, reserve_locked: holding the lock), by
 *                    tw__commit_at_exit, by the crash hook, and
 *                    across fork (open.c).
 *   3. w->meta_lock  the metadata store
 *   4. a sink's own locks, inside the sink's operations, each a leaf:
 *                    the mmap sink's m->lock (sink_mmap.c); the gzip
 *                    sink's deflate pool p->lock (deflate_pool.c), taken
 *                    by its commit (holding the token) and by the pool's
 *                    workers (holding nothing else).
 *   5. crash_lock    (crash.c) the program's signal actions the crash
 *                    hook and the SIGBUS guard replace: taken at open
 *                    and when a rotation or a restart opens an mmap sink
 *                    (holding the lock and the token), never in a signal
 *                    handler.
 *
 * What each guards:
 *
 *   w->lock      the stages list, the slot pool, free list and sealed
 *                queue, committing, the committer's flags, the drop
 *                report, own_events/own_bytes, live_stages.
 *   committing   (set under the lock) one commit at a time: the commit
 *                that set it owns the sink's writes until it clears it.
 *                A rotation (tw__document_rotate_locked) begins only
 *                holding the lock with no commit under way but its
 *                caller's own.
 *   the token    the sink's contents: every write to the sink (a commit,
 *                a document begun, the crash hook's commit), slot->done,
 *                w->fmt_buf,
 *                the rotation state (rotate.c) but what is atomic there.
 *   lock + token w->sink itself: it is replaced (rotation, a direct
 *                sink's restart: document.c, swap_sink) only holding both,
 *                whatever the sink, so a thread holding either sees it
 *                stable.  A direct sink's producers read it with neither
 *                (an atomic load) and copy only into a region they hold,
 *                which keeps its sink alive (sink.h).
 *   meta_lock    w->meta, the store of the records every document begins
 *                with: taken by an 'M' event's producer (holding nothing
 *                else) and by document.c (holding the token).
 *   atomics      err, sink (for direct sinks' producers), commits and the
 *                other counters, out_bytes, a slot's len and seq, a
 *                stage's events, bytes, refs and writer_gone.
 *
 * Checked at run time, SQLite's way: with TW_DEBUG (configure
 * --enable-debug, and every --enable-sanitizers build), a function that
 * needs the lock or the token asserts it holds it (tw__lock_held,
 * tw__token_held), and rotation asserts its precondition.
 *
 * The crash hook (crash.c) takes no lock: it waits a bounded time for
 * the token, reads what is published with atomics (slot seqs and
 * lengths), and writes to w->sink holding the token.  With crash=commit
 * every thread blocks SIGTERM while it holds the token or meta_lock, so
 * that a SIGTERM handler never waits for what its own thread holds.
 * The one thread-local state it changes, the formatter's pid/tid cache,
 * it saves first and puts back (tw__format_cache_save).
 * The SIGBUS guard (busguard.c) touches nothing of the writer's.
 */
struct tw_writer {
  /* Read on every event. */
  int err;                 /* sticky error (atomic) */
  unsigned fork_gen;       /* tw__fork_generation() at open */
  uint64_t id;             /* unique among the process's writers */
  tw__fmt_config fmt;      /* what the formatter needs */
  size_t max_event;        /* largest record accepted */
  int direct;              /* the sink is direct (mmap) */
  size_t defer_limit;      /* formatting on the committer (record.h):
                              the most bytes a deferred event's record
                              may take; 0: producers format every event
                              (set before the first event) */
  tw__sink *sink;          /* where commits go; replaced holding the lock
                              and the token (read atomically by direct
                              sinks' producers) */
  struct rotation *rot;    /* NULL: no rotation */
  int object_form;         /* the layout (layout.h) */
  int64_t ts_offset;       /* added to every ts: 0, or with
                              timebase=kineto the wall clock's offset from
                              the monotonic one less kineto_base_ns */
  uint64_t kineto_base_ns; /* timebase=kineto: the shared base; else 0 */
  long rank;               /* the process's rank, or -1: none */
  char head[TW__LAYOUT_HEAD_ROOM]; /* the document's head (layout.h) */
  size_t head_len;
  struct tw__meta *meta;   /* the records every document begins with
                              (meta_lock) */
  pthread_mutex_t meta_lock;

  pthread_mutex_t lock;    /* guards the fields below but the atomics,
                              and those the contract above says */
#ifdef TW_DEBUG
  int lock_owner;          /* the kernel thread id of lock's holder, 0 if
                              none (atomic: read by tw__lock_held) */
#endif
  tw__stage *stages;       /* every stage of the writer */
  unsigned live_stages;    /* stages whose thread has not exited */
  tw__slot *all_slots;     /* every slot (atomic head, append-only) */
  unsigned nslots;         /* slots allocated */
  unsigned pool_slots;     /* slots beyond the live stages' */
  size_t slot_size;        /* bytes of each slot */
  size_t commit_bytes;     /* sealed bytes that call for a commit */
  tw__slot *free_slots;    /* free slots */
  tw__slot *unsnapped;     /* slots written whole, sealed while the flush
                              under way writes them: free when it ends */
  tw__slot *sealed;        /* the sealed queue, oldest first ... */
  tw__slot **sealed_tail;  /* ... and where the next goes */
  size_t unit_bytes;       /* bytes of the sealed unit not yet closed */
  unsigned units;          /* closed units in the sealed queue */
  uint64_t next_seq;       /* the seq of the last slot taken */
  int committing;          /* a commit is under way: the kernel thread
                              id of the thread making it, else 0 */
  pthread_cond_t done;     /* a commit ended, a slot was freed */

  /* The background committer. */
  int background;          /* a committer thread writes the commits */
  pthread_t committer;
  pthread_cond_t work;     /* the committer waits for work */
  int committer_waiting;   /* it is waiting: signal it (lock) */
  int nudged;              /* a producer asked for a commit (lock) */
  int stopping;            /* tw_close asks it to finish (lock) */
  uint64_t interval_ns;    /* commit at least this often (0: no timer) */
  char *fmt_buf;           /* with defer_limit: where a commit (or the
                              crash hook) formats deferred events, the
                              token's (allocated at open) */
  size_t fmt_cap;          /* its bytes */
  uint64_t formatted_bytes; /* bytes of the deferred events' records
                              formatted so far (atomic) */

  /* Policies. */
  int drop_when_full;      /* on_full=drop */
  int sync_commits;        /* TW_OPT_SYNC */
  uint64_t drops_unreported; /* dropped since the last drop report */
  char *drop_report;       /* room for one drop report record */

  /* Counters: what the stages counted comes on top (tw_get_stats). */
  uint64_t own_events;     /* records of the writer itself, and of */
  uint64_t own_bytes;      /*   stages freed: under the lock */
  uint64_t commits;        /* atomic: counted by whoever commits */
  uint64_t dropped;        /* atomic */
  uint64_t rejected;       /* atomic */
  uint64_t strings_truncated; /* atomic */
  uint64_t utf8_replaced;  /* atomic */
  uint64_t restarts;       /* documents begun again after the file was
                              truncated under the writer (atomic) */
  unsigned long long out_done; /* output bytes of the finished files */
  unsigned long long meta_out; /* bytes of the metadata that rotations
                              wrote at the top of new files */
  unsigned long long out_bytes; /* out_done + the sink's, after each commit
                              (atomic) */

  /* The crash hook. */
  int64_t pid;             /* the process that opened the writer */
  tw_writer *open_next;    /* the process's open writers (open.c), under
                              open_writers_lock: a child of fork releases
                              their files */
  tw_writer *open_prev;
  int crash_hook;          /* crash=commit, on a sink that buffers */
  int crash_slot;          /* the crash hook's registry slot, or -1 */
  int commit_owner;        /* the commit token: the kernel thread id of
                              the thread writing to the sink, 0 if none
                              (atomic) */
  unsigned crash_waiting;  /* crash handlers waiting for the token
                              (atomic): commits hold back meanwhile */
};

/* Room for a drop report record (commit.c). */
#define TW__DROP_REPORT_ROOM 512

/* ------------------------------------------------- the lock, checked */

/* Take and release w->lock, and wait on one of its conditions (done,
 * work): every use of the lock goes through these, which with TW_DEBUG
 * keep its holder for tw__lock_held. */
static inline void tw__writer_lock(tw_writer *w)
{
  pthread_mutex_lock(&w->lock);
#ifdef TW_DEBUG
  __atomic_store_n(&w->lock_owner, (int)tw__tid(), __ATOMIC_RELAXED);
#endif
}

static inline void tw__writer_unlock(tw_writer *w)
{
#ifdef TW_DEBUG
  TW__ASSERT(__atomic_load_n(&w->lock_owner, __ATOMIC_RELAXED) ==
             (int)tw__tid());
  __atomic_store_n(&w->lock_owner, 0, __ATOMIC_RELAXED);
#endif
  pthread_mutex_unlock(&w->lock);
}

/* Wait on c, which goes with w->lock, until woken or (abs not NULL) the
 * CLOCK_MONOTONIC time abs. */
static inline void tw__writer_wait(tw_writer *w, pthread_cond_t *c,
                                   const struct timespec *abs)
{
#ifdef TW_DEBUG
  TW__ASSERT(__atomic_load_n(&w->lock_owner, __ATOMIC_RELAXED) ==
             (int)tw__tid());
  __atomic_store_n(&w->lock_owner, 0, __ATOMIC_RELAXED);
#endif
  if (abs)
    (void)pthread_cond_timedwait(c, &w->lock, abs);
  else
    (void)pthread_cond_wait(c, &w->lock);
#ifdef TW_DEBUG
  __atomic_store_n(&w->lock_owner, (int)tw__tid(), __ATOMIC_RELAXED);
#endif
}

/* Whether the calling thread holds w->lock (always 1 without TW_DEBUG:
 * only for TW__ASSERT). */
static inline int tw__lock_held(const tw_writer *w)
{
#ifdef TW_DEBUG
  return __atomic_load_n(&w->lock_owner, __ATOMIC_RELAXED) == (int)tw__tid();
#else
  (void)w;
  return 1;
#endif
}

/* Whether the calling thread holds the commit token. */
static inline int tw__token_held(const tw_writer *w)
{
  return __atomic_load_n(&w->commit_owner, __ATOMIC_RELAXED) ==
         (int)tw__tid();
}

/* Whether no commit is under way but the calling thread's own: what a
 * rotation needs (with the lock). */
static inline int tw__no_other_commit(const tw_writer *w)
{
  return !w->committing || w->committing == (int)tw__tid();
}

/* Whether w belongs to an ancestor process (after fork). */
static inline int tw__forked(const tw_writer *w)
{
  return w->fork_gen != tw__fork_generation();
}

/* ------------------------------------------------------------ stage.c */

/* Make err w's sticky error unless it has one.  Returns the sticky
 * error. */
int tw__writer_fail(tw_writer *w, int err);

/* The writer is closing: free its stages (or leave those of live threads
 * to them), after every record was committed.  Lock not held. */
void tw__stages_free(tw_writer *w);
/* Release every stage's region (direct sinks), before the sink closes. */
void tw__stages_release_regions(tw_writer *w);
/* Sum the stages' counters into *events and *bytes.  Lock held. */
void tw__stages_count(tw_writer *w, uint64_t *events, uint64_t *bytes);

/* A direct sink's commit point (tw_flush, tw_close): begin a new document
 * if the file was cut.  Lock held (the token is taken).  Returns 0 or an
 * error. */
int tw__direct_check_cut(tw_writer *w);

/* Allocate a slot of w->slot_size bytes, link it into all_slots and the
 * free list.  Lock held.  Returns 0 or -ENOMEM. */
int tw__slot_add(tw_writer *w);

/* ------------------------------------------------------------ commit.c */

/* Take and give back the commit token (see commit.c); *old keeps the
 * signal mask. */
void tw__token_take(tw_writer *w, sigset_t *old);
void tw__token_give(tw_writer *w, const sigset_t *old);
/* The same without the signal mask: for the fork handlers (open.c),
 * which block SIGTERM once around them all. */
void tw__token_acquire(tw_writer *w);
void tw__token_release(tw_writer *w);
/* With the crash hook, block SIGTERM in the calling thread while it holds
 * what the handler would wait for. */
void tw__block_sigterm(const tw_writer *w, sigset_t *old);
void tw__unblock_sigterm(const tw_writer *w, const sigset_t *old);

/* What a commit writes. */
enum {
  TW__COLLECT_SEALED = 0,  /* the sealed slots */
  TW__COLLECT_ALL = 1      /* and every active slot's unwritten part */
};

/* The global writer's commit at exit (global.c): as tw_flush, and for a
 * streaming sink (a pipe, an append descriptor such as ">> log") the tail
 * too, after which the writer writes nothing (sticky -ESHUTDOWN): it is
 * never freed, other threads may still hold it.  Returns 0 or the sticky
 * error. */
int tw__commit_at_exit(tw_writer *w);
/* Commit what `what` says, plus extra[0..nextra) after it (a record that
 * no slot could hold), unless a commit is under way and extra is empty
 * and wait is 0.  Lock held on entry and exit (released while writing).
 * Returns 0 or the sticky error. */
int tw__commit_locked(tw_writer *w, int what, const struct iovec *extra,
                      int nextra, int wait);
/* Seal st's active slot (it is full, or its thread has exited) and give
 * st a free slot if one is free (else none).  Lock held. */
void tw__slot_seal_locked(tw_writer *w, tw__stage *st);
/* Take a free slot for st, waiting for a commit if none is free (or
 * committing itself when no committer will); never allocates (a new
 * stage adds its slot first).  Lock held.  Returns 0, the sticky error,
 * or TW_EDROPPED when may_drop and none is free. */
int tw__slot_get_locked(tw_writer *w, tw__stage *st, int may_drop);
/* Count the drop of an event and remember to report it.  Lock held. */
void tw__drop_locked(tw_writer *w);

/* ------------------------------------------------------------ committer.c */

/* Before the first record: formatting on the committer (with
 * formatter=committer), its buffer fmt_buf and defer_limit.  Returns 0 or
 * -ENOMEM. */
int tw__committer_prepare(tw_writer *w);
/* Start the committer thread.  Returns 0 or -errno. */
int tw__committer_start(tw_writer *w);
/* Ask it to commit what is sealed (after unlock if *wake is set by the
 * caller).  Lock held. */
void tw__committer_nudge_locked(tw_writer *w);
/* Stop it after its last commit and join it.  Lock held, released and
 * taken again. */
void tw__committer_stop_locked(tw_writer *w);

/* ------------------------------------------------------------ crash.c */

/* Reserve a slot in the crash hook's registry and install the handler.
 * Returns 0, TW_EOPTION (every registry slot taken) or -errno. */
int tw__crash_reserve(tw_writer *w);
/* Put w in its reserved slot: from now on a crash commits it. */
void tw__crash_register(tw_writer *w);
/* Take w out of the registry and wait until no handler uses it. */
void tw__crash_unregister(tw_writer *w);

/* ------------------------------------------------------------ document.c */

/* Remember an 'M' record rec[0..len) of event ev, to begin every later
 * document with it.  Thread-safe (meta_lock). */
void tw__meta_remember_event(tw_writer *w, const tw_event *ev,
                             const char *rec, size_t len);
/* Refresh w->out_bytes from the sink.  Holding the lock or the token. */
void tw__out_bytes_update(tw_writer *w);
/* The first document at open: the process name (process_name, NULL: the
 * program's) first in the metadata store, then head, store and clock
 * record committed to w->sink; *notes says what formatting the name cut
 * or replaced.  No other thread knows w yet.  Returns 0 or an error. */
int tw__document_first(tw_writer *w, const char *process_name,
                       tw__fmt_notes *notes);
/* Rotation: begin the next file, complete, let it take the path, and put
 * its sink in place of the writer's (the finished file keeps its
 * numbered name).  Lock held, and no commit under way but the caller's
 * own; takes the token.  Returns 0 or an error for the sticky error (the
 * live file stays live). */
int tw__document_rotate_locked(tw_writer *w);
/* The file was cut under the writer (logrotate's copytruncate): begin a
 * new document at its start, on the same sink (a buffering sink) or a
 * new one (a direct sink, whose old regions then write nowhere).
 * Holding the token, and for a direct sink the lock too (it swaps the
 * sink).  Returns 0 or an error. */
int tw__document_restart(tw_writer *w);
/* Run op(w, arg), a write to the sink; while it returns TW__ETRUNCATED
 * begin a new document (tw__document_restart) and run it again, at most
 * TW__CUT_TRIES times, then -EIO.  The one place a cut is handled.
 * Holding what tw__document_restart needs.  Returns op's result or an
 * error. */
int tw__document_retry_cut(tw_writer *w, int (*op)(tw_writer *, void *),
                           void *arg);

/* ------------------------------------------------------------ rotate.c */

/* The rotation state for a writer on path, or NULL with *rc set. */
struct rotation *tw__rotation_new(const char *path, const tw_options *o,
                                  int *rc);
void tw__rotation_free(struct rotation *r);
/* Whether the live file, written through sink (the writer's, or a
 * direct sink's region's), is to be finished now: it holds records, and
 * is big or old enough.  Thread-safe. */
int tw__rotation_due(const tw_writer *w, const tw__sink *sink);
/* A commit put len bytes of records in the live file.  Token held. */
void tw__rotation_count(tw_writer *w, size_t len);
/* A document was begun now on sink (its out_bytes: the head and the
 * metadata).  Token held. */
void tw__rotation_began(tw_writer *w, const tw__sink *sink);
/* The options the next file's sink is opened with. */
const tw_options *tw__rotation_options(const struct rotation *r);
/* Open the next file for the path, without a name (anonymous) or under a
 * temporary one.  Token held.  Returns 0 or an error. */
int tw__rotation_next_open(struct rotation *r, tw__newfile *nf,
                           int anonymous);
/* The next file nf, complete, takes the path, and the live file its
 * numbered name, in one step (sync: the directory synced too); undone on
 * failure.  Token held.  Returns 0, TW__ENOLINK (open it again named) or
 * an error. */
int tw__rotation_publish(struct rotation *r, tw__newfile *nf, int sync);
/* The live file was finished (its sink swapped): count it, and delete
 * the finished file that rotate_keep makes one too many.  Lock and token
 * held. */
void tw__rotation_finished(tw_writer *w);
/* tw_close: the last commit must not begin a new file. */
void tw__rotation_closing(tw_writer *w);
/* Files begun by rotation. */
uint64_t tw__rotations(const tw_writer *w);

#endif /* TW_WRITER_H */
