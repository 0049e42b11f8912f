/* stage.c -- per-thread staging and the per-event path
 *
 * Each thread that emits on a writer gets a stage for it at its first
 * event: an active slot (buffering sinks) or a region of the output
 * (direct sinks), found again through a thread-local cache.  An event is
 * formatted straight into the thread's slot and published by storing the
 * slot's new length; nothing shared is written, no lock is taken.  Only
 * a full slot takes the writer's lock, to be sealed for the commit and
 * traded for a free one (commit.c).  A writer that defers formatting
 * (record.h) copies most events into the slot unformatted instead.  A
 * direct sink's thread copies the record into its region and is done.
 *
 * Two paths, each publishing a record in one place (slot_publish, or
 * count_record for what goes no slot).  The fast path (emit_fast) takes
 * the helpers' events (tw_complete, tw_begin, tw_end, tw_instant, the
 * spans), whoever reads the clock, straight into the thread's active
 * slot: formatted by format_helper_event (format_record.h, inlined
 * here: no call between a helper and its record), or an EVENT entry for
 * the committer.  Everything else -- tw_emit's events, a first event, a full
 * slot, a direct sink, a timebase, any error -- takes the general path
 * (emit_general), which formats or encodes into the slot
 * (format_into_slot, encode_into_slot), formats into a direct sink's
 * region (format_into_region) or commits a record larger than a slot at
 * once (commit_large_record).
 *
 * Stages outlive neither their thread nor their writer, and each must be
 * freed once, by whichever lets go last: the thread (its stages are
 * listed in thread-local storage, and a pthread key's destructor runs at
 * its exit) or the writer (tw_close).  A stage's refs counts the two.  A
 * thread that exits leaves its stage's records where they are: the next
 * commit writes them and frees the stage.
 */
#include "internal.h"
#include "busguard.h"
#include "format_record.h"     /* format_helper_event; str_len */
#include "record.h"
#include "writer.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The calling thread's stages, and the one it used last, with what the
 * helpers' paths need of it in one place (one thread-local block: one
 * lookup of its address). */
typedef struct thread_last_stage {
  tw__stage *st;           /* the stage used last, or NULL */
  uint64_t id;             /* its writer's id (0 with no stage: in a
                              child after fork too) */
  size_t bare;             /* if the writer defers formatting (buffering
                              sink, no timebase): one more than the
                              longest name and cat together that events
                              with no args may have as bare entries
                              (fast_entry), within max_string and the
                              writer's limit; else 0 */
  uint64_t fast_id;        /* id if emit_fast may take the writer's
                              events (a buffering sink, no timebase),
                              else 0: one compare for both */
  int64_t pid, tid;        /* tw__pid() and tw__tid() when it was set (a
                              child after fork sets it again) */
} thread_last_stage;

static TW__THREAD tw__stage *thread_stages;
static TW__THREAD thread_last_stage last;

/* Make st (not NULL), of writer w, the thread's last stage. */
static inline void thread_last_set(tw__stage *st, const tw_writer *w)
{
  int buffered = !w->direct && w->ts_offset == 0;
  size_t bare = 0, room;

  if (buffered && w->defer_limit > TW__REC_BOUND_HEAD) {
    room = (w->defer_limit - TW__REC_BOUND_HEAD) / 6;
    bare = (room < w->fmt.max_string ? room : w->fmt.max_string) + 1;
  }
  last.st = st;
  last.id = st->writer_id;
  last.bare = bare;
  last.fast_id = buffered ? st->writer_id : 0;
  last.pid = tw__pid();
  last.tid = tw__tid();
}

/* The thread has no last stage. */
static inline void thread_last_clear(void)
{
  last.st = NULL;
  last.id = 0;
  last.fast_id = 0;
}

/* In the child after fork, in the only thread it has: a writer of the
 * parent is disabled there (tw__forked), so none is the last; and the
 * thread's pid is another (the formatter's text of it). */
static void thread_forked(void)
{
  thread_last_clear();
  tw__format_forked();
}

static pthread_once_t stage_key_once = PTHREAD_ONCE_INIT;
static pthread_key_t stage_key;

/* Records that go no slot (direct sinks, or larger than a slot) are
 * formatted on the stack up to this size; larger ones in the thread's
 * scratch. */
#define STACK_RECORD 4096

static TW__THREAD char *scratch;
static TW__THREAD size_t scratch_cap;

int tw__writer_fail(tw_writer *w, int err)
{
  int none = 0;

  if (err)
    (void)__atomic_compare_exchange_n(&w->err, &none, err, 0,
                                      __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return __atomic_load_n(&w->err, __ATOMIC_RELAXED);
}

/* Drop one of a stage's two holds; the last frees it. */
static void stage_unref(tw__stage *st)
{
  if (__atomic_sub_fetch(&st->refs, 1, __ATOMIC_ACQ_REL) == 0)
    free(st);
}

/* At a thread's exit: let go of its stages, and its scratch.  arg is
 * the address of thread_stages (the key's value is never NULL, so that
 * the destructor runs; thread-local storage outlives the destructors). */
static void thread_exit(void *arg)
{
  tw__stage *st = *(tw__stage **)arg, *next;

  for (; st; st = next) {
    next = st->thread_next;
    stage_unref(st);
  }
  thread_stages = NULL;
  thread_last_clear();
  free(scratch);
  scratch = NULL;
  scratch_cap = 0;
}

static void stage_key_init(void)
{
  (void)pthread_key_create(&stage_key, thread_exit);
  (void)pthread_atfork(NULL, NULL, thread_forked);
}

/* The calling thread's scratch buffer with at least want bytes, or NULL.
 * Grows by doubling, so a thread allocates O(log max_event) times in its
 * life; freed when the thread exits. */
static char *scratch_get(size_t want)
{
  size_t cap;
  char *p;

  if (want <= scratch_cap)
    return scratch;
  cap = scratch_cap ? scratch_cap : STACK_RECORD;
  while (cap < want)
    cap *= 2;
  pthread_once(&stage_key_once, stage_key_init);
  if (!(p = realloc(scratch, cap)))
    return NULL;
  scratch = p;
  scratch_cap = cap;
  /* The key's destructor frees the scratch: make sure it runs. */
  (void)pthread_setspecific(stage_key, (void *)&thread_stages);
  return p;
}

int tw__slot_add(tw_writer *w)
{
  tw__slot *s = calloc(1, sizeof *s);

  TW__ASSERT(tw__lock_held(w));
  if (!s || !(s->data = malloc(w->slot_size))) {
    free(s);
    return -ENOMEM;
  }
  s->next = w->free_slots;
  w->free_slots = s;
  s->next_all = w->all_slots;
  __atomic_store_n(&w->all_slots, s, __ATOMIC_RELEASE);
  w->nslots++;
  return 0;
}

/* Forget the stages of closed writers that this thread still lists. */
static void thread_prune(void)
{
  tw__stage **p = &thread_stages, *st;

  while ((st = *p) != NULL) {
    if (__atomic_load_n(&st->writer_gone, __ATOMIC_ACQUIRE)) {
      *p = st->thread_next;
      if (last.st == st)
        thread_last_clear();
      stage_unref(st);
    } else {
      p = &st->thread_next;
    }
  }
}

/* The calling thread's stage for w, created at its first event.  Returns
 * it, or NULL with *rc set (-ENOMEM, or the writer's error). */
static tw__stage *stage_new(tw_writer *w, int *rc)
{
  tw__stage *st;

  pthread_once(&stage_key_once, stage_key_init);
  thread_prune();
  if (!(st = calloc(1, sizeof *st))) {
    *rc = -ENOMEM;
    return NULL;
  }
  st->w = w;
  st->writer_id = w->id;
  st->refs = 2;
  tw__writer_lock(w);
  w->live_stages++;
  /* A slot of its own for each live thread, allocated now, at its first
   * event: then taking a slot never allocates (a thread that exits leaves
   * its slot to the next). */
  if (!w->direct && w->nslots < w->pool_slots + w->live_stages &&
      (*rc = tw__slot_add(w)) != 0) {
    w->live_stages--;
    tw__writer_unlock(w);
    free(st);
    return NULL;
  }
  if (!w->direct && (*rc = tw__slot_get_locked(w, st, 0)) != 0 &&
      *rc != TW_EDROPPED) {
    w->live_stages--;
    tw__writer_unlock(w);
    free(st);
    return NULL;
  }
  st->next = w->stages;
  w->stages = st;
  tw__writer_unlock(w);
  st->thread_next = thread_stages;
  thread_stages = st;
  (void)pthread_setspecific(stage_key, (void *)&thread_stages);
  return st;
}

/* The calling thread's stage for w: the last one used, else the one in
 * its list, else a new one.  NULL with *rc set if it cannot be made. */
static inline tw__stage *stage_of(tw_writer *w, int *rc)
{
  tw__stage *st = last.st;

  if (TW__LIKELY(st && st->writer_id == w->id))
    return st;
  for (st = thread_stages; st; st = st->thread_next)
    if (st->writer_id == w->id)
      break;
  if (!st && !(st = stage_new(w, rc)))
    return NULL;
  thread_last_set(st, w);
  return st;
}

void tw__stages_count(tw_writer *w, uint64_t *events, uint64_t *bytes)
{
  uint64_t e = w->own_events, b = w->own_bytes +
    __atomic_load_n(&w->formatted_bytes, __ATOMIC_RELAXED);

  TW__ASSERT(tw__lock_held(w));
  for (tw__stage *st = w->stages; st; st = st->next) {
    e += __atomic_load_n(&st->events, __ATOMIC_RELAXED);
    b += __atomic_load_n(&st->bytes, __ATOMIC_RELAXED);
  }
  *events = e;
  *bytes = b;
}

void tw__stages_release_regions(tw_writer *w)
{
  for (tw__stage *st = w->stages; st; st = st->next)
    if (st->region.sink)
      st->region.sink->ops->release(&st->region);
}

void tw__stages_free(tw_writer *w)
{
  tw__stage *st, *next;

  for (st = w->stages; st; st = next) {
    next = st->next;
    __atomic_store_n(&st->writer_gone, 1, __ATOMIC_RELEASE);
    stage_unref(st);
  }
  w->stages = NULL;
  /* The closing thread lets go of its own stage now; another thread
   * does when it next opens a stage, or exits. */
  thread_prune();
}

/* Count what formatting replaced, for the stats. */
static void count_notes(tw_writer *w, const tw__fmt_notes *notes)
{
  if (notes->truncated)
    __atomic_fetch_add(&w->strings_truncated, notes->truncated,
                       __ATOMIC_RELAXED);
  if (notes->replaced)
    __atomic_fetch_add(&w->utf8_replaced, notes->replaced,
                       __ATOMIC_RELAXED);
}

/* Format ev into buf[0..cap).  Returns 0 with *len, TW__ENOROOM with
 * *len a bound of the room it needs, or the error for the caller
 * (TW_ETOOBIG past max_event). */
static int format_into(tw_writer *w, const tw_event *ev,
                       const tw__fmt_defaults *def, char *buf, size_t cap,
                       size_t *len, tw__fmt_notes *notes)
{
  int rc;

  notes->truncated = notes->replaced = 0;
  rc = tw__format_event(ev, def, &w->fmt, buf, cap, len, notes);
  /* *len after TW__ENOROOM is only a bound: a record is too big when its
   * length is known, or proven by a cap past max_event (internal.h), never
   * because a slot was fuller (tw_emit(3)). */
  if ((rc == 0 && *len > w->max_event) ||
      (rc == TW__ENOROOM && cap >= w->max_event + TW__FMT_ASK_MAX))
    rc = TW_ETOOBIG;
  return rc;
}

/* Format ev, which needs at most *len bytes, on the stack (stackbuf, of
 * STACK_RECORD bytes) or, larger, in the thread's scratch, which grows to
 * that, or to what proves it too big.  Returns 0 with *rec and *len, or
 * an error. */
static int format_aside(tw_writer *w, const tw_event *ev,
                        const tw__fmt_defaults *def, char *stackbuf,
                        char **rec, size_t *len, tw__fmt_notes *notes)
{
  size_t cap = *len < w->max_event + TW__FMT_ASK_MAX
                   ? *len : w->max_event + TW__FMT_ASK_MAX;
  char *buf = cap <= STACK_RECORD ? stackbuf : scratch_get(cap);

  if (!buf)
    return -ENOMEM;
  *rec = buf;
  return format_into(w, ev, def, buf, cap, len, notes);
}

/* A record larger than a slot, in the scratch: committed at once, behind
 * everything the thread staged before it.  Returns 0 or an error. */
static int commit_large_record(tw_writer *w, tw__stage *st, const char *rec,
                               size_t len)
{
  struct iovec iov = { (void *)rec, len };
  int rc = 0;

  tw__writer_lock(w);
  if (w->drop_when_full && w->background && w->committing) {
    tw__drop_locked(w);
    tw__writer_unlock(w);
    return TW_EDROPPED;
  }
  if (st->slot && st->slot->len > st->slot->done) {
    tw__slot_seal_locked(w, st);
    if (!st->slot)
      rc = tw__slot_get_locked(w, st, 0);
  }
  if (rc == 0)
    rc = tw__commit_locked(w, TW__COLLECT_SEALED, &iov, 1, 1);
  tw__writer_unlock(w);
  return rc;
}

/* The active slot is full, or there is none (after a drop): seal it and
 * take the next.  Returns 0, TW_EDROPPED (counted) or the sticky error. */
static int next_slot(tw_writer *w, tw__stage *st)
{
  int rc = 0;

  tw__writer_lock(w);
  if (st->slot)
    tw__slot_seal_locked(w, st);
  if (!st->slot &&
      (rc = tw__slot_get_locked(w, st, w->drop_when_full && w->background))
      == TW_EDROPPED)
    tw__drop_locked(w);
  tw__writer_unlock(w);
  return rc;
}

/* Count an event of st's thread whose record takes len bytes (0 for an
 * EVENT entry: its bytes are counted when the commit formats it).  The
 * one rule of what an event counts: every path that writes one calls
 * this, through slot_publish when it writes into a slot. */
static inline void count_record(tw__stage *st, size_t len)
{
  __atomic_store_n(&st->events, st->events + 1, __ATOMIC_RELAXED);
  __atomic_store_n(&st->bytes, st->bytes + len, __ATOMIC_RELAXED);
}

/* Publish the entry of entry bytes at the end of st's active slot, an
 * event whose record takes len bytes (count_record), to the committer:
 * the one place where a slot's length grows. */
static inline void slot_publish(tw__stage *st, tw__slot *slot, size_t entry,
                                size_t len)
{
  __atomic_store_n(&slot->len, slot->len + entry, __ATOMIC_RELEASE);
  count_record(st, len);
}

/* A buffering sink's event: formatted straight into the active slot,
 * behind a TEXT entry's header when the writer defers (record.h).
 * Returns 0 with *rec and *len (the record, for the caller's metadata
 * store), or an error. */
static int format_into_slot(tw_writer *w, tw__stage *st, const tw_event *ev,
                            const tw__fmt_defaults *def, tw__fmt_notes *notes,
                            char *stackbuf, char **rec, size_t *len)
{
  size_t head = w->defer_limit ? sizeof(tw__rec_head) : 0;
  tw__slot *slot;
  int rc;

  for (;;) {
    if (TW__UNLIKELY(!(slot = st->slot)) && (rc = next_slot(w, st)) != 0)
      return rc;
    slot = st->slot;
    /* (A TEXT entry's room: its header, and its padding.) */
    if (w->slot_size - slot->len > 2 * head) {
      *rec = slot->data + slot->len + head;
      rc = format_into(w, ev, def, *rec,
                       w->slot_size - slot->len - 2 * head, len, notes);
    } else {
      rc = TW__ENOROOM;
      *len = w->slot_size;
      notes->truncated = notes->replaced = 0;
    }
    if (TW__LIKELY(rc == 0)) {
      size_t entry = *len;
      if (head) {
        size_t pad = (8 - *len % 8) % 8;
        tw__rec_head h = { (uint32_t)(head + *len + pad),
                           TW__REC_TEXT | (uint32_t)pad << 8 };
        memcpy(slot->data + slot->len, &h, sizeof h);
        entry = h.size;
      }
      slot_publish(st, slot, entry, *len);
      return 0;
    }
    if (rc != TW__ENOROOM)
      return rc;
    /* *len is an upper bound: only an empty slot proves the record
     * larger than a slot. */
    if (slot->len == 0) {
      if ((rc = format_aside(w, ev, def, stackbuf, rec, len, notes)) != 0)
        return rc;
      if ((rc = commit_large_record(w, st, *rec, *len)) == 0)
        count_record(st, *len);
      return rc;
    }
    if ((rc = next_slot(w, st)) != 0)
      return rc;
  }
}

/* A deferring writer's event: copied into the active slot as an EVENT
 * entry for the commit to format, or, if it is not one to defer (or
 * larger than a slot), formatted now (format_into_slot).  Returns as
 * format_into_slot; *rec NULL for an entry. */
static int encode_into_slot(tw_writer *w, tw__stage *st, const tw_event *ev,
                            const tw__fmt_defaults *def, tw__fmt_notes *notes,
                            char *stackbuf, char **rec, size_t *len)
{
  tw__slot *slot;
  int rc;

  for (;;) {
    if (TW__UNLIKELY(!(slot = st->slot)) && (rc = next_slot(w, st)) != 0)
      return rc;
    slot = st->slot;
    rc = tw__rec_encode(ev, def, &w->fmt, w->defer_limit,
                        slot->data + slot->len, w->slot_size - slot->len,
                        len);
    if (TW__LIKELY(rc == 0)) {
      slot_publish(st, slot, *len, 0);
      notes->truncated = notes->replaced = 0;
      *rec = NULL;
      return 0;
    }
    if (rc != TW__ENOROOM || slot->len == 0)
      return format_into_slot(w, st, ev, def, notes, stackbuf, rec, len);
    if ((rc = next_slot(w, st)) != 0)
      return rc;
  }
}

/* A direct sink's reservation of *arg's room for a thread's region
 * (tw__document_retry_cut's operation). */
typedef struct reservation {
  tw__region *region;
  size_t len;
} reservation;

static int reserve_op(tw_writer *w, void *arg)
{
  reservation *res = arg;

  return w->sink->ops->reserve(w->sink, res->region, res->len);
}

/* Reserve len bytes for region r of a direct sink, beginning a new
 * document first if the file was cut (len 0 only checks for a cut).
 * Lock held; takes the token, which a restart needs (writer.h).
 * Returns 0 or an error. */
static int reserve_locked(tw_writer *w, tw__region *r, size_t len)
{
  reservation res = { r, len };
  sigset_t mask;
  int rc;

  TW__ASSERT(tw__lock_held(w));
  tw__token_take(w, &mask);
  rc = tw__document_retry_cut(w, reserve_op, &res);
  tw__token_give(w, &mask);
  return rc;
}

int tw__direct_check_cut(tw_writer *w)
{
  tw__region probe;

  memset(&probe, 0, sizeof probe);
  return reserve_locked(w, &probe, 0);
}

/* Give st's region room for len bytes from the current sink, rotating
 * first if it is time.  A thread that saw a fault in a cut file
 * (tw__bus_cuts changed) takes a new region too: its reservation sees
 * the cut.  Returns 0 or an error. */
static int next_region(tw_writer *w, tw__stage *st, size_t len)
{
  tw__region *r = &st->region;
  unsigned cuts = __atomic_load_n(&tw__bus_cuts, __ATOMIC_RELAXED);
  int rc;

  tw__writer_lock(w);
  /* A rotation begins with no commit under way (tw_flush's, say, which
   * rotates at its end too): wait for it, then see if it is still due. */
  while (w->rot && w->committing && !w->err)
    tw__writer_wait(w, &w->done, NULL);
  TW__ASSERT(!w->rot || w->err || tw__no_other_commit(w));
  if ((rc = w->err) == 0 && w->rot && tw__rotation_due(w, w->sink) &&
      (rc = tw__document_rotate_locked(w)) != 0)
    rc = tw__writer_fail(w, rc);
  if (rc == 0 && (r->sink != w->sink || (size_t)(r->end - r->at) < len ||
                  cuts != st->cuts_seen)) {
    if ((rc = reserve_locked(w, r, len)) != 0)
      rc = tw__writer_fail(w, rc);
    st->cuts_seen = cuts;
  }
  tw__writer_unlock(w);
  return rc;
}

/* Whether r lies in the writer's sink, and that sink is not being
 * rotated away.  The caller has set its stage's copying. */
static inline int region_current(tw_writer *w, const tw__region *r)
{
  return r->sink == __atomic_load_n(&w->sink, __ATOMIC_ACQUIRE) &&
         !__atomic_load_n(&r->sink->retiring, __ATOMIC_SEQ_CST);
}

/* A direct sink's event: formatted on the stack (or in the scratch),
 * then copied into the thread's region.  Returns 0 with *rec and *len,
 * or an error. */
static int format_into_region(tw_writer *w, tw__stage *st, const tw_event *ev,
                              const tw__fmt_defaults *def,
                              tw__fmt_notes *notes, char *stackbuf, char **rec,
                              size_t *len)
{
  tw__region *r = &st->region;
  int rc;

  *rec = stackbuf;
  rc = format_into(w, ev, def, stackbuf, STACK_RECORD, len, notes);
  if (rc == TW__ENOROOM)
    rc = format_aside(w, ev, def, stackbuf, rec, len, notes);
  if (rc)
    return rc;
  /* A new region when this one is full or of a rotated file, and with
   * rotation, each record checks whether it is time (as a commit would).
   * copying is set first: a rotation that marks the sink retiring after
   * this thread looked waits for the copy to end (writer.h). */
  __atomic_store_n(&st->copying, 1, __ATOMIC_SEQ_CST);
  if (TW__UNLIKELY(!region_current(w, r) ||
                   (size_t)(r->end - r->at) < *len ||
                   __atomic_load_n(&tw__bus_cuts, __ATOMIC_RELAXED) !=
                   st->cuts_seen ||
                   (w->rot && tw__rotation_due(w, r->sink)))) {
    do {
      __atomic_store_n(&st->copying, 0, __ATOMIC_RELEASE);
      if ((rc = next_region(w, st, *len)) != 0)
        return rc;
      __atomic_store_n(&st->copying, 1, __ATOMIC_SEQ_CST);
    } while (!region_current(w, r));    /* rotated again since */
  }
  tw__region_copy(r, *rec, *len);
  __atomic_store_n(&st->copying, 0, __ATOMIC_RELEASE);
  count_record(st, *len);
  return 0;
}

/* ev with its ts on the writer's timebase (timebase=kineto): a copy in
 * *shifted when the caller gave the ts, else def->ts moved.  A time
 * before the base is written as 0, as the PyTorch profiler writes it. */
static const tw_event *to_timebase(const tw_writer *w, const tw_event *ev,
                                   tw__fmt_defaults *def, tw_event *shifted)
{
  uint64_t *ts = &def->ts;

  if (ev->has & TW_HAS_TS) {
    *shifted = *ev;
    ts = &shifted->ts;
    ev = shifted;
  }
  *ts = (int64_t)*ts + w->ts_offset > 0 ? (uint64_t)((int64_t)*ts +
                                                     w->ts_offset) : 0;
  return ev;
}

/* An event that failed with rc: refused (bad input, no memory for it)
 * is counted; a drop is counted as such, and the writer's failure is
 * not the event's.  Returns rc. */
static int refused(tw_writer *w, int rc)
{
  if (rc != TW_EDROPPED && rc != __atomic_load_n(&w->err, __ATOMIC_RELAXED))
    __atomic_fetch_add(&w->rejected, 1, __ATOMIC_RELAXED);
  return rc;
}

/* The general path: any event, any writer, every check, every error.
 * Returns as tw_emit. */
static __attribute__((noinline)) int
emit_general(tw_writer *w, tw__stage *st, const tw_event *ev,
             tw__fmt_defaults *def)
{
  char stackbuf[STACK_RECORD];
  tw__fmt_notes notes;
  char *rec;
  size_t len;
  int rc;

  if (w->defer_limit)
    rc = encode_into_slot(w, st, ev, def, &notes, stackbuf, &rec, &len);
  else if (w->direct)
    rc = format_into_region(w, st, ev, def, &notes, stackbuf, &rec, &len);
  else
    rc = format_into_slot(w, st, ev, def, &notes, stackbuf, &rec, &len);
  if (TW__UNLIKELY(rc != 0))
    return refused(w, rc);
  count_notes(w, &notes);
  if (TW__UNLIKELY(ev->ph == 'M') && w->meta)
    tw__meta_remember_event(w, ev, rec, len);
  return 0;
}

/* A helper's event, as the fast path has it (emit_fast's
 * arguments). */
#define FAST_ARGS unsigned shape, const char *cat, const char *name, \
  uint64_t ts, uint64_t dur, const tw_arg *args, size_t nargs
#define FAST_PASS shape, cat, name, ts, dur, args, nargs

/* fast_entry's event with args (or a name or cat that is not plain
 * ASCII, or none), checked and encoded by tw__rec_encode_common.
 * Returns as fast_entry. */
static __attribute__((noinline)) size_t
fast_entry_checked(const tw_writer *w, char *buf, size_t cap, FAST_ARGS)
{
  tw_event ev;
  tw__fmt_defaults def;
  size_t len;

  tw__event_fast_fields(&ev, FAST_PASS);
  def.ts = 0;
  def.pid = last.pid;
  def.tid = last.tid;
  if (tw__rec_encode_common(&ev, &def, &w->fmt, w->defer_limit, buf, cap,
                            &len) != 0)
    return 0;
  return len;
}

/* The fast path's EVENT entry (a deferring writer, record.h) at
 * buf[0..cap): with no args and name and cat plain ASCII within
 * last.bare (max_string and the limit in one compare), the fields
 * copied as they are; else fast_entry_checked.  Returns the entry's
 * size, or 0: the general path's. */
static inline __attribute__((always_inline)) size_t
fast_entry(const tw_writer *w, char *buf, size_t cap, FAST_ARGS)
{
  size_t len;

  if (TW__LIKELY(nargs == 0 && name && cat && !(shape >> 8 & 0xff) &&
                 !((ts | dur | (ts + dur)) & TW__REC_TIME_END))) {
    size_t nn = str_len(name), cn = str_len(cat);

    if (TW__LIKELY(nn + cn < last.bare) &&
        (len = tw__rec_put_bare(buf, cap, (char)(shape & 0xff), TW_HAS_TS,
                                name, nn, cat, cn, ts, dur, last.pid,
                                last.tid)))
      return len;
  }
  return fast_entry_checked(w, buf, cap, FAST_PASS);
}

/* The fast path's record of len bytes, now at the end of st's active
 * slot, published, with its strings whose invalid UTF-8 became U+FFFD
 * counted. */
static inline void fast_publish(tw_writer *w, tw__stage *st, tw__slot *slot,
                                size_t len, unsigned replaced)
{
  slot_publish(st, slot, len, len);
  if (TW__UNLIKELY(replaced))
    __atomic_fetch_add(&w->utf8_replaced, replaced, __ATOMIC_RELAXED);
}

/* The fast path's record when the active slot's room may be short (the
 * formatter asks for room generously, 6 bytes a string byte): formatted
 * on the stack, then copied into the slot if it fits, else into the
 * next one, as format_into_slot places it.  Returns as emit_fast. */
static __attribute__((noinline)) int
fast_aside(tw_writer *w, tw__stage *st, FAST_ARGS)
{
  char stackbuf[STACK_RECORD];
  tw__slot *slot = st->slot;
  tw__fmt_out out;
  int rc;

  out.buf = stackbuf;
  out.cap = sizeof stackbuf;
  out.replaced = 0;
  if (tw__format_common(&w->fmt, &out, FAST_PASS) != 0 ||
      out.len > w->max_event)
    return 1;
  if (out.len > w->slot_size - slot->len) {
    /* Only an empty slot proves the record larger than a slot. */
    if (slot->len == 0)
      return 1;
    if ((rc = next_slot(w, st)) != 0)
      return refused(w, rc);
    slot = st->slot;
    if (out.len > w->slot_size - slot->len)
      return 1;
  }
  memcpy(slot->data + slot->len, stackbuf, out.len);
  fast_publish(w, st, slot, out.len, out.replaced);
  return 0;
}

/* A helper's event by the fast path.  Returns 0 (written and counted),
 * an error as tw_emit returns it, or 1: nothing was written, the
 * general path's. */
static inline __attribute__((always_inline)) int
emit_fast(tw_writer *w, FAST_ARGS)
{
  tw__stage *st = last.st;
  tw__slot *slot;
  tw__fmt_out out;
  size_t len;

  /* What the general path does instead: a thread's first event on w (or
   * w of a parent after fork: then no stage is the last, thread_forked),
   * a full slot or none, a direct sink, a timebase, a failed writer. */
  if (TW__UNLIKELY(last.fast_id != w->id || !(slot = st->slot) ||
                   __atomic_load_n(&w->err, __ATOMIC_RELAXED) != 0))
    return 1;
  if (w->defer_limit) {
    if (!(len = fast_entry(w, slot->data + slot->len,
                           w->slot_size - slot->len, FAST_PASS)))
      return 1;
    slot_publish(st, slot, len, 0);
    return 0;
  }
  out.buf = slot->data + slot->len;
  out.cap = w->slot_size - slot->len;
  out.replaced = 0;
  if (TW__UNLIKELY(format_helper_event(&w->fmt, &out, FAST_PASS) != 0))
    return out.cap < STACK_RECORD ? fast_aside(w, st, FAST_PASS) : 1;
  if (out.len > w->max_event)
    return 1;
  fast_publish(w, st, slot, out.len, out.replaced);
  return 0;
}

/* A helper's event that the fast path leaves, built whole, through
 * tw_emit. */
static __attribute__((noinline)) int emit_built(tw_writer *w, FAST_ARGS)
{
  tw_event ev = tw__event((char)(shape & 0xff), cat, name, args, nargs);

  ev.instant_scope = (char)(shape >> 8 & 0xff);
  if (shape & TW__SHAPE_TS) {
    ev.has = TW_HAS_TS;
    ev.ts = ts;
  }
  ev.dur = dur;
  return tw_emit(w, &ev);
}

/* A helper's event: the fast path, else the general one.  Inlined into
 * the helpers' two entries, where the shape and, for one, the times are
 * constants.  The library's clock is read here, once, whichever path
 * takes the event (the general path would read it again). */
static inline __attribute__((always_inline)) int
emit_helper(tw_writer *w, FAST_ARGS)
{
  int rc;

  if (!(shape & TW__SHAPE_TS)) {
    ts = tw_now_ns();
    shape |= TW__SHAPE_TS;
  }
  rc = emit_fast(w, FAST_PASS);

  if (TW__LIKELY(rc != 1))
    return rc;
  return emit_built(w, FAST_PASS);
}

int tw__emit_complete(tw_writer *w, const char *cat, const char *name,
                      uint64_t ts, uint64_t dur, const tw_arg *args,
                      size_t nargs)
{
  return emit_helper(w, TW__SHAPE('X', 0) | TW__SHAPE_TS, cat, name, ts,
                     dur, args, nargs);
}

int tw__emit_now(tw_writer *w, unsigned shape, const char *cat,
                 const char *name, const tw_arg *args, size_t nargs)
{
  return emit_helper(w, shape, cat, name, 0, 0, args, nargs);
}

int tw_emit(tw_writer *w, const tw_event *ev)
{
  tw_event shifted;
  tw__fmt_defaults def;
  tw__stage *st;
  int rc;

  if (!w)
    return 0;
  if (!ev)
    return -EINVAL;
  if (TW__UNLIKELY(tw__forked(w)))
    return TW_EFORKED;
  if ((rc = __atomic_load_n(&w->err, __ATOMIC_RELAXED)) != 0)
    return rc;
  if (TW__UNLIKELY(!(st = stage_of(w, &rc))))
    return rc;
  def.ts = (ev->has & TW_HAS_TS) || ev->ph == 'M' ? 0 : tw_now_ns();
  if (TW__UNLIKELY(w->ts_offset != 0) && ev->ph != 'M')
    ev = to_timebase(w, ev, &def, &shifted);
  def.pid = (ev->has & TW_HAS_PID) ? 0 : tw__pid();
  def.tid = (ev->has & TW_HAS_TID) ? 0 : tw__tid();
  return emit_general(w, st, ev, &def);
}
