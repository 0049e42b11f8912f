/* document.c -- beginning a document, in one place
 *
 * A document (head, the metadata records, the clock record, tail) is
 * begun at three moments, all here:
 *
 *   tw__document_first    at open, on the writer's first sink;
 *   tw__document_rotate   when rotation finishes the live file: a new
 *                         file, complete, takes the path (rotate.c says
 *                         when, and names and publishes the files);
 *   tw__document_restart  when the file was cut under the writer
 *                         (logrotate's copytruncate): at the start of the
 *                         cut file, on the same sink (buffering sinks) or
 *                         a new one (direct sinks).
 *
 * Each writes the head and the metadata store's records with one sink
 * commit (document_write), holding the commit token.  The two that put a
 * new sink in place of the writer's swap it holding both the writer's
 * lock and the token (swap_sink): the concurrency contract in writer.h.
 *
 * The metadata store.  Each file of a rotated trace must be a complete
 * trace on its own, so the 'M' records (process and thread names, sort
 * indexes, labels) emitted so far are kept and written again after the
 * head of every new document.  They are kept in one allocation made at
 * open, bounded: a record with the same name and the same process (and
 * thread, for thread_* metadata) replaces the older one in its place,
 * and when the store is full the oldest records but the first (the
 * writer's own process name, remembered at open) are forgotten to make
 * room.  The clock record is kept the same way, read anew for each
 * document.
 */
#include "internal.h"     /* config.h first */
#include "document.h"
#include "fdio.h"
#include "layout.h"
#include "rotate.h"
#include "writer.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------ the store */

int tw__meta_init(tw__meta *m, size_t cap)
{
  memset(m, 0, sizeof *m);
  m->ent = calloc(TW__META_MAX_ENTRIES, sizeof *m->ent);
  m->data = malloc(TW__META_GAP + cap);
  if (!m->ent || !m->data) {
    free(m->ent);
    free(m->data);
    return -ENOMEM;
  }
  m->cap = cap;
  return 0;
}

void tw__meta_free(tw__meta *m)
{
  free(m->ent);
  free(m->data);
  m->ent = NULL;
  m->data = NULL;
}

/* FNV-1a: the name part of a record's key. */
static uint64_t name_hash(const char *s)
{
  uint64_t h = 14695981039346656037ull;

  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* Forget entry i, closing the gap in data and in ent. */
static void forget(tw__meta *m, unsigned i)
{
  char *recs = m->data + TW__META_GAP;
  size_t off = m->ent[i].off, len = m->ent[i].len;

  memmove(recs + off, recs + off + len, m->len - off - len);
  m->len -= len;
  memmove(&m->ent[i], &m->ent[i + 1], (m->n - i - 1) * sizeof *m->ent);
  m->n--;
  for (unsigned k = i; k < m->n; k++)
    m->ent[k].off -= (uint32_t)len;
}

/* Give entry i len bytes in place (its later records move). */
static void resize(tw__meta *m, unsigned i, size_t len)
{
  char *recs = m->data + TW__META_GAP;
  size_t end = m->ent[i].off + m->ent[i].len;
  uint32_t delta = (uint32_t)len - m->ent[i].len; /* modulo 2^32 */

  memmove(recs + m->ent[i].off + len, recs + end, m->len - end);
  m->len = m->len - m->ent[i].len + len;
  m->ent[i].len = (uint32_t)len;
  for (unsigned k = i + 1; k < m->n; k++)
    m->ent[k].off += delta;
}

void tw__meta_remember(tw__meta *m, const char *name, int64_t pid,
                       int64_t tid, const char *rec, size_t len)
{
  uint64_t h = name_hash(name);
  unsigned i;

  /* Process metadata is per process, whichever thread sets it. */
  if (strncmp(name, "thread_", 7) != 0)
    tid = 0;
  for (i = 0; i < m->n; i++)
    if (m->ent[i].name_hash == h && m->ent[i].pid == pid &&
        m->ent[i].tid == tid)
      break;
  /* What cannot fit beside the first record is not kept, and nothing is
   * forgotten for it: the older record, if any, stays. */
  if (len > m->cap || (i != 0 && m->n && m->ent[0].len + len > m->cap))
    return;
  if (i < m->n) {
    /* A newer value: in the older one's place, so that the first record
     * (the writer's own process name) stays first. */
    for (unsigned v = 1; m->len - m->ent[i].len + len > m->cap && v < m->n;)
      if (v == i)
        v++;
      else {
        forget(m, v);
        i -= v < i;
      }
    if (m->len - m->ent[i].len + len > m->cap)
      return;
    resize(m, i, len);
    memcpy(m->data + TW__META_GAP + m->ent[i].off, rec, len);
    return;
  }
  /* The oldest records but the first make room; the store is never left
   * empty, so a new file always has a record after its head. */
  while (m->n > 1 && (m->len + len > m->cap || m->n == TW__META_MAX_ENTRIES))
    forget(m, 1);
  if (m->len + len > m->cap || m->n == TW__META_MAX_ENTRIES)
    return;
  memcpy(m->data + TW__META_GAP + m->len, rec, len);
  m->ent[m->n].off = (uint32_t)m->len;
  m->ent[m->n].len = (uint32_t)len;
  m->ent[m->n].name_hash = h;
  m->ent[m->n].pid = pid;
  m->ent[m->n].tid = tid;
  m->n++;
  m->len += len;
}

char *tw__meta_document_start(tw__meta *m, const char *head,
                              size_t head_len, size_t *len)
{
  char *first = m->data + TW__META_GAP;

  /* The first record's leading comma gives way to the head. */
  m->saved = first[0];
  return tw__layout_document(head, head_len, first, m->len, len);
}

void tw__meta_document_done(tw__meta *m)
{
  m->data[TW__META_GAP] = m->saved;
}

/* ------------------------------------------------------ documents */

void tw__meta_remember_event(tw_writer *w, const tw_event *ev,
                             const char *rec, size_t len)
{
  int64_t pid = (ev->has & TW_HAS_PID) ? ev->pid : tw__pid();
  int64_t tid = (ev->has & TW_HAS_TID) ? ev->tid : tw__tid();
  sigset_t mask;

  /* A document is begun holding the token and waiting for meta_lock,
   * which a SIGTERM handler in this thread would wait for in turn. */
  tw__block_sigterm(w, &mask);
  pthread_mutex_lock(&w->meta_lock);
  tw__meta_remember(w->meta, ev->name, pid, tid, rec, len);
  pthread_mutex_unlock(&w->meta_lock);
  tw__unblock_sigterm(w, &mask);
}

/* Refresh w->out_bytes, what tw_get_stats reports, from the sink. */
void tw__out_bytes_update(tw_writer *w)
{
  tw__sink *sink = __atomic_load_n(&w->sink, __ATOMIC_ACQUIRE);

  TW__ASSERT(tw__lock_held(w) || tw__token_held(w));
  __atomic_store_n(&w->out_bytes, w->out_done +
                   __atomic_load_n(&sink->out_bytes, __ATOMIC_RELAXED),
                   __ATOMIC_RELAXED);
}

/* Commit the start of a document to sink: the head, the metadata
 * records, the clock record read now; synced too with TW_OPT_SYNC.
 * Holding the token.  Returns 0 and its length in *len, or an error. */
static int document_write(tw_writer *w, tw__sink *sink, size_t *len)
{
  char clock[256];
  struct iovec doc;
  sigset_t mask;
  size_t clock_len;
  int rc;

  TW__ASSERT(tw__token_held(w));
  tw__block_sigterm(w, &mask);
  pthread_mutex_lock(&w->meta_lock);
  if ((rc = tw__layout_clock_record(&w->fmt, w->ts_offset,
                                    w->kineto_base_ns, clock, sizeof clock,
                                    &clock_len)) == 0)
    tw__meta_remember(w->meta, TW__LAYOUT_CLOCK_NAME, w->pid, 0, clock,
                      clock_len);
  doc.iov_base = tw__meta_document_start(w->meta, w->head, w->head_len,
                                         &doc.iov_len);
  if (rc == 0)
    rc = sink->ops->commit(sink, &doc, 1);
  tw__meta_document_done(w->meta);
  pthread_mutex_unlock(&w->meta_lock);
  tw__unblock_sigterm(w, &mask);
  if (rc == 0 && w->sync_commits)
    rc = sink->ops->sync(sink);
  *len = doc.iov_len;
  return rc;
}

/* Put next in the place of the writer's sink, and close the old one
 * (a direct sink's file is finished once its last region is released).
 * Holding the lock and the token.  Returns 0 or close's error. */
static int swap_sink(tw_writer *w, tw__sink *next)
{
  tw__sink *old = w->sink;

  TW__ASSERT(tw__lock_held(w) && tw__token_held(w));
  /* Threads of a direct sink see the new sink at their next record. */
  __atomic_store_n(&w->sink, next, __ATOMIC_RELEASE);
  w->out_done += __atomic_load_n(&old->out_bytes, __ATOMIC_RELAXED);
  return old->ops->close(old);
}

/* Remember the metadata records of a rank: the process's label ("rank N")
 * and sort index (N), so that the processes of a job sort by rank in a
 * viewer.  Returns the records remembered, or an error. */
static int remember_rank(tw_writer *w)
{
  char rec[256], label[32];
  tw__fmt_defaults def = { 0, w->pid, 0 };
  tw__fmt_notes notes;
  tw_arg arg;
  tw_event ev;
  size_t len;
  int rc;

  memset(&ev, 0, sizeof ev);
  ev.ph = 'M';
  ev.args = &arg;
  ev.nargs = 1;
  snprintf(label, sizeof label, "rank %ld", w->rank);
  ev.name = "process_labels";
  arg = tw_arg_str("labels", label);
  if ((rc = tw__format_event(&ev, &def, &w->fmt, rec, sizeof rec, &len,
                             &notes)) != 0)
    return rc;
  tw__meta_remember(w->meta, ev.name, w->pid, 0, rec, len);
  ev.name = "process_sort_index";
  arg = tw_arg_int("sort_index", w->rank);
  if ((rc = tw__format_event(&ev, &def, &w->fmt, rec, sizeof rec, &len,
                             &notes)) != 0)
    return rc;
  tw__meta_remember(w->meta, ev.name, w->pid, 0, rec, len);
  return 2;
}

/* The first document, for tw__document_retry_cut: written the first
 * time; after a cut, the restart has begun it again, and there is
 * nothing more to write. */
typedef struct first_doc {
  size_t len;              /* its bytes, once written */
  int written;
} first_doc;

static int first_op(tw_writer *w, void *arg)
{
  first_doc *fd = arg;

  if (fd->written)
    return 0;
  fd->written = 1;
  return document_write(w, w->sink, &fd->len);
}

int tw__document_first(tw_writer *w, const char *process_name,
                       tw__fmt_notes *notes)
{
  char rec[4096];
  size_t len;
  first_doc doc = { 0, 0 };
  sigset_t mask;
  int rc, extra = 0;

  /* The first record: the process name, kept first in the store. */
  if ((rc = tw__layout_first_record(process_name, &w->fmt, rec, sizeof rec,
                                    &len, notes)) != 0)
    return rc;
  tw__meta_remember(w->meta, "process_name", w->pid, 0, rec, len);
  /* The clock record second (document_write reads it anew, in its
   * place), then the rank's records. */
  if ((rc = tw__layout_clock_record(&w->fmt, w->ts_offset, w->kineto_base_ns,
                                    rec, sizeof rec, &len)) != 0)
    return rc;
  tw__meta_remember(w->meta, TW__LAYOUT_CLOCK_NAME, w->pid, 0, rec, len);
  if (w->rank >= 0 && (extra = remember_rank(w)) < 0)
    return extra;
  /* A cut (logrotate's copytruncate) can land here too: the document is
   * begun again like any cut one, never reported to the caller.  The
   * lock as well as the token, as the contract wants for a restart,
   * though no other thread knows w yet. */
  tw__writer_lock(w);
  tw__token_take(w, &mask);
  if ((rc = tw__document_retry_cut(w, first_op, &doc)) == 0) {
    /* Counted like any commit, and its records like any records (the
     * process name and the clock record: what a reader counts). */
    __atomic_add_fetch(&w->commits, 1, __ATOMIC_RELAXED);
    w->own_events = 2 + (uint64_t)extra;
    w->own_bytes = doc.len;
    tw__rotation_began(w, w->sink);
    tw__out_bytes_update(w);
  }
  tw__token_give(w, &mask);
  tw__writer_unlock(w);
  return rc;
}

/* Open the next file of a rotation and begin its document: *next is its
 * sink.  Holding the token.  Returns 0, or an error with nothing left
 * behind. */
static int next_file(tw_writer *w, tw__newfile *nf, tw__sink **next)
{
  struct rotation *r = w->rot;
  int rc;

  TW__ASSERT(tw__token_held(w));
  /* Without a name until it is complete; where the file system cannot
   * (no O_TMPFILE, no /proc to link it), under a temporary name. */
  for (int anonymous = 1;; anonymous = 0) {
    size_t len;

    if ((rc = tw__rotation_next_open(r, nf, anonymous)) != 0)
      return rc;
    rc = tw__sink_open(nf->fd, 1, tw__rotation_options(r), next);
    if (rc != 0) {
      nf->fd = -1;                     /* closed by tw__sink_open */
    } else if ((rc = document_write(w, *next, &len)) == 0 &&
               (rc = tw__rotation_publish(r, nf, w->sync_commits)) == 0) {
      __atomic_add_fetch(&w->meta_out, len, __ATOMIC_RELAXED);
      return 0;
    } else {
      (*next)->ops->abandon(*next);    /* closes nf->fd */
      nf->fd = -1;
    }
    tw__newfile_discard(nf);
    if (rc != TW__ENOLINK || !anonymous)
      return rc;
  }
}

/* A direct sink is about to get its numbered name: let no copy begin
 * into its regions, and wait for those under way, so that a kill from
 * now on cannot leave a record cut in a finished part (the producers'
 * side: format_into_region in stage.c).  Lock held: the stages list is
 * stable; a producer copying holds nothing. */
static void copies_stop(tw_writer *w, tw__sink *sink)
{
  __atomic_store_n(&sink->retiring, 1, __ATOMIC_SEQ_CST);
  for (tw__stage *st = w->stages; st; st = st->next)
    while (__atomic_load_n(&st->copying, __ATOMIC_SEQ_CST))
      sched_yield();
}

int tw__document_rotate_locked(tw_writer *w)
{
  tw__newfile nf;
  tw__sink *next;
  sigset_t mask;
  int rc;

  TW__ASSERT(tw__lock_held(w) && tw__no_other_commit(w));
  tw__token_take(w, &mask);
  if (w->sink->caps & TW__SINK_DIRECT)
    copies_stop(w, w->sink);
  if ((rc = next_file(w, &nf, &next)) == 0) {
    rc = swap_sink(w, next);
    tw__rotation_finished(w);
    tw__rotation_began(w, next);
    tw__out_bytes_update(w);
  } else if (w->sink->caps & TW__SINK_DIRECT) {
    __atomic_store_n(&w->sink->retiring, 0, __ATOMIC_RELEASE);
  }
  tw__token_give(w, &mask);
  return rc;
}

int tw__document_restart(tw_writer *w)
{
  tw__sink *sink = w->sink, *next;
  size_t len;
  int rc;

  TW__ASSERT(tw__token_held(w));
  if (!sink->ops->restart && !sink->ops->reopen)
    return -EIO;                       /* a stream cannot begin again */
  if (sink->ops->restart) {
    /* A buffering sink begins again at the start of its own file. */
    if ((rc = sink->ops->restart(sink)) != 0 ||
        (rc = document_write(w, sink, &len)) != 0)
      return rc;
  } else {
    /* A direct sink retires: threads still copying into its regions
     * write nowhere; a new sink on the same file takes its place. */
    TW__ASSERT(tw__lock_held(w));
    if ((rc = sink->ops->reopen(sink, &next)) != 0)
      return rc;
    if ((rc = document_write(w, next, &len)) != 0) {
      next->ops->abandon(next);
      return rc;
    }
    (void)swap_sink(w, next);          /* retired: it writes nothing */
  }
  __atomic_add_fetch(&w->meta_out, len, __ATOMIC_RELAXED);
  __atomic_add_fetch(&w->restarts, 1, __ATOMIC_RELAXED);
  tw__rotation_began(w, w->sink);
  tw__out_bytes_update(w);
  return 0;
}

int tw__document_retry_cut(tw_writer *w, int (*op)(tw_writer *, void *),
                           void *arg)
{
  int rc;

  TW__ASSERT(tw__token_held(w));
  rc = op(w, arg);

  /* Each try needs a new cut (the check after a try sees only a cut
   * made during it): only a file truncated in a loop reaches the bound,
   * and then the cut is reported like any write that did not hold. */
  for (int tries = 0; rc == TW__ETRUNCATED; tries++) {
    if (tries == TW__CUT_TRIES)
      return -EIO;
    /* A cut met by the restart itself is one more cut: tried again. */
    if ((rc = tw__document_restart(w)) == 0)
      rc = op(w, arg);
  }
  return rc;
}
