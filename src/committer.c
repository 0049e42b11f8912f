/* committer.c -- the background committer thread
 *
 * With commit=background (the default for gzip, whose deflate should not
 * run on the producers' threads) and with a flush interval, one thread
 * per writer writes the commits: when the sealed slots make a commit's
 * worth, when a producer finds no free slot, and every flush interval
 * (then with every thread's active slot too, so that an idle thread's
 * records reach the file).  Producers only seal slots and nudge it.
 * With formatter=committer, producers copy events into their slots
 * unformatted and the commit formats them (record.h): set up here,
 * before the first record.
 */
#include "internal.h"
#include "writer.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

/* fmt_buf holds two commits' worth of records (buffer_size each, at most
 * FMT_COMMIT_MAX counted), and room to spare beyond the largest record
 * deferred. */
#define FMT_COMMIT_MAX (1024u * 1024u)
#define FMT_SPARE 4096u

/* Whether the sealed slots call for a commit: a unit of them is closed,
 * or a producer waits for a free slot. */
static int commit_due(const tw_writer *w)
{
  return w->sealed && (w->units || w->nudged);
}

static void *committer_main(void *arg)
{
  tw_writer *w = arg;
  uint64_t deadline = w->interval_ns ? tw_now_ns() + w->interval_ns : 0;
#ifdef SCHED_BATCH
  struct sched_param batch = { 0 };

  /* A woken committer should not preempt the producer that woke it. */
  (void)pthread_setschedparam(pthread_self(), SCHED_BATCH, &batch);
#endif

  tw__writer_lock(w);
  for (;;) {
    int what = -1;

    if (w->err) {
      /* Nothing more can be written: wait to be stopped. */
      if (w->stopping)
        break;
      tw__writer_wait(w, &w->work, NULL);
      continue;
    }
    if (deadline && tw_now_ns() >= deadline) {
      what = TW__COLLECT_ALL;
      deadline = tw_now_ns() + w->interval_ns;
    } else if (commit_due(w)) {
      what = TW__COLLECT_SEALED;
    }
    if (what < 0) {
      if (w->stopping)
        break;
      w->committer_waiting = 1;
      if (deadline) {
        struct timespec ts = { (time_t)(deadline / 1000000000u),
                               (long)(deadline % 1000000000u) };
        tw__writer_wait(w, &w->work, &ts);
      } else {
        tw__writer_wait(w, &w->work, NULL);
      }
      w->committer_waiting = 0;
      continue;
    }
    w->nudged = 0;
    (void)tw__commit_locked(w, what, NULL, 0, 1);
  }
  tw__writer_unlock(w);
  return NULL;
}

int tw__committer_prepare(tw_writer *w)
{
  size_t per_commit;

  if (!(w->fmt.flags & TW_OPT_FORMAT_COMMITTER))
    return 0;
  per_commit = w->commit_bytes < FMT_COMMIT_MAX ? w->commit_bytes
                                                : FMT_COMMIT_MAX;
  w->fmt_cap = 2 * per_commit + FMT_SPARE;
  if (!(w->fmt_buf = malloc(w->fmt_cap)))
    return -ENOMEM;
  w->defer_limit = w->fmt_cap - FMT_SPARE < w->max_event
                   ? w->fmt_cap - FMT_SPARE : w->max_event;
  return 0;
}

int tw__committer_start(tw_writer *w)
{
  return -pthread_create(&w->committer, NULL, committer_main, w);
}

void tw__committer_nudge_locked(tw_writer *w)
{
  TW__ASSERT(tw__lock_held(w));
  w->nudged = 1;
  if (w->committer_waiting)
    pthread_cond_signal(&w->work);
}

void tw__committer_stop_locked(tw_writer *w)
{
  TW__ASSERT(tw__lock_held(w));
  w->stopping = 1;
  pthread_cond_signal(&w->work);
  tw__writer_unlock(w);
  pthread_join(w->committer, NULL);
  tw__writer_lock(w);
}
