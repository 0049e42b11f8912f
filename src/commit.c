/* commit.c -- the commit: what threads staged, written to the sink
 *
 * Every commit of staged records -- a producer whose slot filled (no
 * committer), the committer thread, tw_flush, tw_close -- goes through
 * tw__commit_locked, which takes the commit token around the write; the
 * other writes to a sink are the start of a document (document.c) and
 * the crash hook's commit (crash.c), each holding the token too (the
 * contract in writer.h).  Commits are serialised by w->committing (under
 * the writer's lock); the lock itself is released while the sink writes,
 * so producers go on staging.
 *
 * A commit writes the sealed queue, oldest first, then (at tw_flush,
 * tw_close and the flush timer) the unwritten part of every thread's
 * active slot, taken as it is under the lock: each thread's slots are
 * written in the order it filled them, so its events keep their order;
 * threads interleave.  Slots go to the sink as they are (pwritev of many
 * segments), not copied; a deferring writer's entries are formatted into
 * fmt_buf first (record.h), and that goes to the sink.
 *
 * The commit token is an atomic owner id held from the first write to the
 * sink until what was written is marked written (slot->done).  Commits do
 * not contend for it among themselves (w->committing serialises them),
 * but others take it too (writer.h): a direct sink's producers reserving
 * a region (stage.c, reserve_locked) and the document a cut makes them
 * begin (document.c), a rotation's new document (document.c), the tail
 * at exit, and the crash hook (crash.c), which cannot take the lock: a
 * holder lets a waiting handler go first, and with the hook SIGTERM is
 * blocked in the holder, so that a SIGTERM goes to another thread whose
 * handler waits for this commit rather than cuts into it.
 */
#include "internal.h"
#include "record.h"
#include "writer.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

void tw__block_sigterm(const tw_writer *w, sigset_t *old)
{
  if (w->crash_hook) {
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &term, old);
  }
}

void tw__unblock_sigterm(const tw_writer *w, const sigset_t *old)
{
  if (w->crash_hook)
    pthread_sigmask(SIG_SETMASK, old, NULL);
}

void tw__token_acquire(tw_writer *w)
{
  int me = (int)tw__tid();

  for (;;) {
    int free_token = 0;
    if (!__atomic_load_n(&w->crash_waiting, __ATOMIC_SEQ_CST) &&
        __atomic_compare_exchange_n(&w->commit_owner, &free_token, me, 0,
                                    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
      return;
    sched_yield();
  }
}

void tw__token_release(tw_writer *w)
{
  __atomic_store_n(&w->commit_owner, 0, __ATOMIC_RELEASE);
}

void tw__token_take(tw_writer *w, sigset_t *old)
{
  tw__block_sigterm(w, old);
  tw__token_acquire(w);
}

void tw__token_give(tw_writer *w, const sigset_t *old)
{
  tw__token_release(w);
  tw__unblock_sigterm(w, old);
}

/* ------------------------------------------------------------- slots */

/* Put s, whose every byte is written, back in the free list.  Lock
 * held. */
static void slot_free_locked(tw_writer *w, tw__slot *s)
{
  TW__ASSERT(tw__lock_held(w));
  __atomic_store_n(&s->seq, 0, __ATOMIC_RELEASE);
  s->next = w->free_slots;
  w->free_slots = s;
}

/* Queue s, which holds n bytes not yet written, behind the sealed slots.
 * Commits come in units of a commit's worth (commit_bytes): a unit is
 * closed by the slot after which another would overflow it, and made
 * here, as slots are sealed, so that commits come in the same pieces
 * whoever makes them and whenever.  Returns 1 if s closed a unit.  Lock
 * held. */
static int queue_slot_locked(tw_writer *w, tw__slot *s, size_t n)
{
  TW__ASSERT(tw__lock_held(w));
  s->next = NULL;
  *w->sealed_tail = s;
  w->sealed_tail = &s->next;
  w->unit_bytes += n;
  s->unit_end = w->unit_bytes + w->slot_size > w->commit_bytes;
  if (s->unit_end) {
    w->unit_bytes = 0;
    w->units++;
  }
  return s->unit_end;
}

void tw__slot_seal_locked(tw_writer *w, tw__stage *st)
{
  tw__slot *s = st->slot;
  size_t len = __atomic_load_n(&s->len, __ATOMIC_RELAXED);
  /* Acquire: the commit's reads of the slot, before its store of done,
   * are over before the slot is filled again. */
  size_t done = __atomic_load_n(&s->done, __ATOMIC_ACQUIRE);

  TW__ASSERT(tw__lock_held(w));
  st->slot = NULL;
  /* A flush wrote all of it: nothing to commit, free (a commit's store of
   * done is its last touch of the slot).  But not while a flush under
   * way has it among the active slots it writes: then when that ends. */
  if (len == done) {
    if (w->committing && st->snap == s) {
      s->next = w->unsnapped;
      w->unsnapped = s;
    } else {
      slot_free_locked(w, s);
    }
    return;
  }
  if (queue_slot_locked(w, s, len - done)) {
    if (w->background)
      tw__committer_nudge_locked(w);
    else
      (void)tw__commit_locked(w, TW__COLLECT_SEALED, NULL, 0, 0);
  }
}

/* Make s, free, st's active slot. */
static void slot_activate(tw_writer *w, tw__stage *st, tw__slot *s)
{
  TW__ASSERT(tw__lock_held(w));
  __atomic_store_n(&s->len, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&s->done, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&s->seq, ++w->next_seq, __ATOMIC_RELEASE);
  st->slot = s;
}

int tw__slot_get_locked(tw_writer *w, tw__stage *st, int may_drop)
{
  int rc;

  TW__ASSERT(tw__lock_held(w));
  for (;;) {
    tw__slot *s;

    if (w->err)
      return w->err;
    if ((s = w->free_slots) != NULL) {
      w->free_slots = s->next;
      slot_activate(w, st, s);
      return 0;
    }
    if (may_drop)
      return TW_EDROPPED;
    if (w->background) {
      tw__committer_nudge_locked(w);
      tw__writer_wait(w, &w->done, NULL);
    } else if ((rc = tw__commit_locked(w, TW__COLLECT_SEALED, NULL, 0, 1))
               != 0) {
      return rc;
    }
  }
}

void tw__drop_locked(tw_writer *w)
{
  TW__ASSERT(tw__lock_held(w));
  __atomic_fetch_add(&w->dropped, 1, __ATOMIC_RELAXED);
  w->drops_unreported++;
}

/* Format a global instant "tracewriter: events dropped" with the count
 * into w->drop_report, so that the loss shows in the viewer.  Lock held.
 * Returns its length. */
static size_t drop_report_locked(tw_writer *w)
{
  tw_arg arg = tw_arg_uint("dropped", w->drops_unreported);
  tw__fmt_defaults def = { tw_now_ns(), tw__pid(), tw__tid() };
  tw__fmt_notes notes = { 0, 0 };
  tw_event ev;
  size_t len;

  TW__ASSERT(tw__lock_held(w));
  memset(&ev, 0, sizeof ev);
  ev.ph = 'I';
  ev.instant_scope = 'g';
  ev.name = "tracewriter: events dropped";
  ev.cat = "tracewriter";
  ev.args = &arg;
  ev.nargs = 1;
  if (tw__format_event(&ev, &def, &w->fmt, w->drop_report, TW__DROP_REPORT_ROOM,
                       &len, &notes) != 0)
    return 0;
  w->own_events++;
  w->own_bytes += len;
  w->drops_unreported = 0;
  return len;
}

/* The stages of threads that have exited: their active slot is sealed
 * (its records are written with this commit) or freed, the stage freed.
 * Lock held, no commit under way. */
static void reclaim_orphans_locked(tw_writer *w)
{
  tw__stage **p = &w->stages, *st;

  TW__ASSERT(tw__lock_held(w) && !w->committing);
  while ((st = *p) != NULL) {
    if (__atomic_load_n(&st->refs, __ATOMIC_ACQUIRE) != 1) {
      p = &st->next;
      continue;
    }
    if (st->slot) {
      tw__slot *s = st->slot;
      size_t len = __atomic_load_n(&s->len, __ATOMIC_ACQUIRE);
      size_t done = __atomic_load_n(&s->done, __ATOMIC_RELAXED);
      if (len > done)
        (void)queue_slot_locked(w, s, len - done);
      else
        slot_free_locked(w, s);
    }
    if (st->region.sink)
      st->region.sink->ops->release(&st->region);
    *p = st->next;
    w->own_events += st->events;
    w->own_bytes += st->bytes;
    w->live_stages--;
    free(st);                       /* its thread let go: refs was 1 */
  }
}

/* A part of a slot to write: [from, to). */
typedef struct piece {
  tw__slot *slot;
  size_t to;
} piece;

/* What one commit writes, gathered into segments of at most
 * TW__COMMIT_IOV per sink commit. */
typedef struct gather {
  tw_writer *w;
  struct iovec iov[TW__COMMIT_IOV];
  piece pieces[TW__COMMIT_IOV];
  int n;
  size_t total;            /* bytes written by the commits so far */
  size_t fmt_used;         /* bytes of w->fmt_buf the segments hold */
  uint64_t formatted;      /* bytes of the deferred events formatted */
  int rc;
} gather;

/* A commit's segments, for commit_op. */
typedef struct segments {
  const struct iovec *iov;
  int n;
} segments;

/* Commit the segments *arg to the writer's sink (tw__document_retry_cut's
 * operation). */
static int commit_op(tw_writer *w, void *arg)
{
  const segments *sg = arg;

  return w->sink->ops->commit(w->sink, sg->iov, sg->n);
}

/* Commit iov[0..n) to the writer's sink; if the file was cut under the
 * writer (logrotate's copytruncate), a new document is begun at its
 * start first.  Holding the token.  Returns 0 or an error. */
static int sink_commit(tw_writer *w, const struct iovec *iov, int n)
{
  segments sg = { iov, n };

  TW__ASSERT(tw__token_held(w));
  return tw__document_retry_cut(w, commit_op, &sg);
}

/* Commit what g holds (possibly nothing) and mark its slots' pieces
 * written.  Returns 0 or the error. */
static int gather_flush(gather *g)
{
  tw_writer *w = g->w;
  int rc = sink_commit(w, g->iov, g->n);

  if (rc == 0 && w->sync_commits && w->sink->ops->sync)
    rc = w->sink->ops->sync(w->sink);
  if (rc == 0) {
    for (int i = 0; i < g->n; i++) {
      g->total += g->iov[i].iov_len;
      if (g->pieces[i].slot)
        __atomic_store_n(&g->pieces[i].slot->done, g->pieces[i].to,
                         __ATOMIC_RELEASE);
    }
    __atomic_add_fetch(&w->commits, 1, __ATOMIC_RELAXED);
  }
  tw__out_bytes_update(w);
  g->n = 0;
  return g->rc = rc;
}

/* Add bytes (of slot, up to to; slot NULL for other memory). */
static void gather_add(gather *g, tw__slot *slot, const char *p, size_t len,
                       size_t to)
{
  if (g->rc || len == 0)
    return;
  if (g->n == TW__COMMIT_IOV && gather_flush(g) != 0)
    return;
  g->iov[g->n].iov_base = (void *)p;
  g->iov[g->n].iov_len = len;
  g->pieces[g->n].slot = slot;
  g->pieces[g->n].to = to;
  g->n++;
}

/* Add the records of slot s's entries [from, to) (a deferring writer's,
 * record.h): formatted into w->fmt_buf, committing what is gathered
 * whenever it is full. */
static void gather_entries(gather *g, tw__slot *s, size_t from, size_t to)
{
  tw_writer *w = g->w;

  while (from < to && g->rc == 0) {
    size_t start, n;

    if (g->n == 0)
      g->fmt_used = 0;              /* every segment in it is written */
    start = g->fmt_used;
    n = tw__rec_render(&w->fmt, s->data, &from, to, w->fmt_buf + start,
                       w->fmt_cap - start, start == 0, &g->formatted);
    g->fmt_used += n;
    gather_add(g, s, w->fmt_buf + start, n, from);
    if (from < to && g->n && g->rc == 0)
      (void)gather_flush(g);       /* fmt_buf is full */
  }
}

/* Add what slot s holds past what was written. */
static void gather_slot(gather *g, tw__slot *s)
{
  size_t len = __atomic_load_n(&s->len, __ATOMIC_ACQUIRE);
  size_t done = __atomic_load_n(&s->done, __ATOMIC_RELAXED);

  if (len <= done)
    return;
  if (g->w->defer_limit)
    gather_entries(g, s, done, len);
  else
    gather_add(g, s, s->data + done, len - done, len);
}

/* Detach the commit's share of the sealed queue: its first closed unit,
 * or all of it (all, or no unit is closed: a producer waits for a free
 * slot).  Lock held. */
static tw__slot *detach_sealed_locked(tw_writer *w, int all)
{
  tw__slot *queue = w->sealed;

  TW__ASSERT(tw__lock_held(w));
  if (all || !w->units) {
    w->units = 0;
    w->unit_bytes = 0;
    w->sealed = NULL;
    w->sealed_tail = &w->sealed;
    return queue;
  }
  tw__slot *last = queue;

  while (!last->unit_end)
    last = last->next;
  w->sealed = last->next;
  last->next = NULL;
  if (!w->sealed)
    w->sealed_tail = &w->sealed;
  w->units--;
  return queue;
}

int tw__commit_locked(tw_writer *w, int what, const struct iovec *extra,
                      int nextra, int wait)
{
  tw__stage *stages = NULL;
  tw__slot *queue, *s, *next;
  size_t report = 0;
  sigset_t mask;
  gather g;
  int rc;

  TW__ASSERT(tw__lock_held(w));
  while (w->committing) {
    if (!wait)
      return w->err;
    tw__writer_wait(w, &w->done, NULL);
  }
  if (w->err)
    return w->err;
  reclaim_orphans_locked(w);
  queue = detach_sealed_locked(w, what == TW__COLLECT_ALL || nextra);
  if (what == TW__COLLECT_ALL) {
    /* Each thread's active slot as it is now: written after its sealed
     * ones, which are all in queue. */
    stages = w->stages;
    for (tw__stage *st = stages; st; st = st->next)
      st->snap = st->slot;
  }
  if (w->drops_unreported)
    report = drop_report_locked(w);
  if (!queue && what != TW__COLLECT_ALL && !nextra && !report)
    return 0;
  w->committing = (int)tw__tid();
  tw__writer_unlock(w);

  memset(&g, 0, sizeof g);
  g.w = w;
  tw__token_take(w, &mask);
  /* The sealed slots, a commit per closed unit; then the rest. */
  for (s = queue; s; s = s->next) {
    gather_slot(&g, s);
    if (s->unit_end && g.n)
      (void)gather_flush(&g);
  }
  for (tw__stage *st = stages; st; st = st->next)
    if (st->snap)
      gather_slot(&g, st->snap);
  gather_add(&g, NULL, w->drop_report, report, 0);
  for (int i = 0; i < nextra; i++)
    gather_add(&g, NULL, extra[i].iov_base, extra[i].iov_len, 0);
  /* A flush is one commit of the active slots, even when they hold
   * nothing new: so the number of commits does not depend on whether the
   * committer got to the sealed ones first. */
  if (g.rc == 0 && (g.n || what == TW__COLLECT_ALL))
    (void)gather_flush(&g);
  rc = g.rc;
  if (g.formatted)
    __atomic_add_fetch(&w->formatted_bytes, g.formatted, __ATOMIC_RELAXED);
  tw__rotation_count(w, g.total);
  tw__token_give(w, &mask);

  /* The sealed slots are free again (written whole; or, after an error,
   * never to be written). */
  tw__writer_lock(w);
  for (s = queue; s; s = next) {
    next = s->next;
    slot_free_locked(w, s);
  }
  for (s = w->unsnapped; s; s = next) {
    next = s->next;
    slot_free_locked(w, s);
  }
  w->unsnapped = NULL;
  for (tw__stage *st = stages; st; st = st->next)
    st->snap = NULL;
  /* Still this commit's (committing): the next file is begun before any
   * other commit can write to the sink. */
  if (rc == 0 && w->rot && tw__rotation_due(w, w->sink))
    rc = tw__document_rotate_locked(w);
  w->committing = 0;
  if (rc)
    tw__writer_fail(w, rc);
  pthread_cond_broadcast(&w->done);
  return w->err;
}

int tw__commit_at_exit(tw_writer *w)
{
  sigset_t mask;
  int rc;

  if (!w || tw__forked(w))
    return 0;
  tw__writer_lock(w);
  rc = tw__commit_locked(w, TW__COLLECT_ALL, NULL, 0, 1);
  if (rc == 0 && (w->sink->caps & TW__SINK_STREAMING)) {
    /* The tail now: nothing is written after it (the sticky error),
     * whatever a thread still running emits. */
    tw__token_take(w, &mask);
    rc = w->sink->ops->crash_commit(w->sink, NULL, 0, 1);
    tw__token_give(w, &mask);
    rc = tw__writer_fail(w, rc ? rc : -ESHUTDOWN);
    if (rc == -ESHUTDOWN)
      rc = 0;
  }
  tw__writer_unlock(w);
  return rc;
}

int tw_flush(tw_writer *w)
{
  int rc;

  if (!w)
    return 0;
  if (tw__forked(w))
    return TW_EFORKED;
  tw__writer_lock(w);
  rc = tw__commit_locked(w, TW__COLLECT_ALL, NULL, 0, 1);
  if (rc == 0 && w->direct && (rc = tw__direct_check_cut(w)) != 0)
    tw__writer_fail(w, rc);
  if (rc == 0 && w->direct && w->sync_commits &&
      (rc = w->sink->ops->sync(w->sink)) != 0)
    tw__writer_fail(w, rc);
  tw__writer_unlock(w);
  return rc;
}
