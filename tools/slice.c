/* slice.c -- "tracewriter slice": the part of a trace in a time window,
 * of some processes, threads, names or categories
 *
 * One pass over the input (tools/tracein.h), to its end: a complete
 * event ('X') is written when it ends, so one that overlaps the window
 * can come anywhere after it.  What is kept (see tracewriter(1)):
 *
 *   - the window is [from, to): an event at a point in time (instants,
 *     counters, marks, samples, objects...) is kept if its ts is in it;
 *     a complete event if it overlaps it, whole (not clipped: its
 *     duration and its nesting stay true);
 *   - a B/E pair, and an async span (b/n/e, S/T/F), is kept whole, both
 *     ends, when it overlaps the window, and dropped whole otherwise:
 *     never one end alone.  A B (b) before the window is held until its
 *     E (e): written then, before it, if the span reached the window;
 *     one still open at the end of the input is written (it lasts past
 *     the window).  An E (e) that has no B (b) in the input is dropped.
 *     An async step (n) is kept if in the window;
 *   - a flow (s, t..., f, one key) is kept only if all its events are in
 *     the window: held from its s until its f, then written or dropped
 *     whole: no arrow without its two ends;
 *   - the filters apply to every event by its own pid, tid, name and
 *     category (one of the comma-separated categories, or all of them),
 *     and an E, e or n to its span as its B or b was;
 *   - a metadata record (process and thread names, sort indexes) is
 *     kept if its pid (and tid) passes --pid and --tid, and written just
 *     before the first event kept of its process (thread); the clock
 *     record is kept, after the first record written.
 *
 * Memory is bounded: what is held (spans and flows open, metadata not
 * yet written) is in tables of at most TABLE_MAX keys and HELD_MAX bytes
 * in all; a pair or flow that finds them full is dropped (both ends),
 * and counted.
 */
#include "config.h"

#include "command.h"

#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define CMD "slice"
#define TABLE_MAX 65536u          /* keys of each table */
#define TABLE_SLOTS (2 * TABLE_MAX)
#define HELD_MAX ((size_t)64 * 1024 * 1024)
#define DEPTH_MAX 1024u           /* open spans of one key */
#define FILTER_MAX 64             /* --pid, --tid values */
#define TEXT_MAX 1024             /* a name or category decoded */

/* A span or flow begun: what is held of it. */
struct held {
  char *text;              /* records held (s, t..., or a B/b), each
                              followed by a NUL, or NULL */
  size_t len;              /* bytes of text */
  int64_t ts;
  int64_t pid, tid;        /* of its begin, for its metadata */
  unsigned has;            /* ... TWT_REC_PID, TWT_REC_TID */
  int pass;                /* kept by the filters and the window rules */
  int written;             /* its begin was written */
  unsigned ends;           /* flows: 1 its s was read, 2 its f */
  int filtered;            /* flows: an event of it failed the filters */
  int no_room;             /* flows: an event of it could not be held */
  int outside;             /* flows: an event of it is outside the
                              window (pass: one is in it) */
};

/* A table slot: a key and what it holds.  B/E and async spans: a stack
 * of open spans; flows: one entry; metadata: the texts not yet written. */
struct slot {
  uint64_t key;            /* 0: empty */
  struct held *stack;
  unsigned depth, cap;
  unsigned lost;           /* spans not held (table full): their ends
                              are dropped */
  struct held *pend;       /* async spans: ends read before their begin
                              (another thread's buffer committed first),
                              oldest first */
  unsigned npend, pend_cap;
  int flushed;             /* metadata: written already */
};

struct table {
  struct slot *s;          /* TABLE_SLOTS, allocated when first used */
  size_t used;
};

struct slice {
  const struct twt_cmd_common *c;
  int64_t from, to;        /* the window, once start is known */
  const char *from_text, *to_text;
  int from_abs, to_abs;    /* given with '@' */
  int64_t from_rel, to_rel;
  int have_from, have_to;
  int start_known;
  int64_t start;
  int64_t pids[FILTER_MAX], tids[FILTER_MAX];
  int npids, ntids;
  const char *name_glob, *cat_glob;

  twt_out *out;
  int form;
  twt_cmd_buf buf;
  twt_cmd_buf clipped;      /* --clip: a record cut to the window */
  int clip;                /* --clip */
  uint64_t clips;          /* complete events cut */
  char *clock;             /* the clock record, until the first write */
  size_t clock_len;
  int any_written;

  struct table spans;      /* B/E: per pid and tid */
  struct table asyncs;     /* b/n/e */
  struct table flows;      /* s/t/f */
  struct table meta;       /* metadata by pid (process) or pid and tid */
  struct done *adone;      /* async spans ended: kept or dropped */
  struct done *fdone;      /* flows ended */
  size_t held_bytes;

  uint64_t kept, dropped_pairs, dropped_flows, dropped_room, orphans;
  int err;
};

/* ============================================================ tables */

static struct slot *table_find(struct slice *sl, struct table *t,
                               uint64_t key, int create)
{
  size_t i;

  key |= key == 0;
  if (!t->s) {
    if (!create)
      return NULL;
    if (!(t->s = calloc(TABLE_SLOTS, sizeof *t->s)))
      return NULL;
  }
  for (i = key & (TABLE_SLOTS - 1); t->s[i].key;
       i = (i + 1) & (TABLE_SLOTS - 1))
    if (t->s[i].key == key)
      return &t->s[i];
  if (!create || t->used >= TABLE_MAX)
    return NULL;
  (void)sl;
  t->s[i].key = key;
  t->used++;
  return &t->s[i];
}

/* Free the slot s of t, which holds nothing any more: the keys after it
 * in its run move back into the gap (linear probing without tombstones),
 * so that a table holds only what is open, never what was ever seen. */
static void table_remove(struct table *t, struct slot *s)
{
  size_t i = (size_t)(s - t->s), j = i;

  free(s->stack);
  free(s->pend);
  memset(s, 0, sizeof *s);
  t->used--;
  for (;;) {
    size_t h;
    j = (j + 1) & (TABLE_SLOTS - 1);
    if (!t->s[j].key)
      break;
    h = t->s[j].key & (TABLE_SLOTS - 1);
    /* The key at j stays if its home is cyclically in (i, j]. */
    if (i <= j ? (i < h && h <= j) : (i < h || h <= j))
      continue;
    t->s[i] = t->s[j];
    memset(&t->s[j], 0, sizeof t->s[j]);
    i = j;
  }
}

/* The slot s of a span or flow table is done with once nothing of its
 * key is open or pending. */
static void slot_done(struct table *t, struct slot *s)
{
  if (s && !s->depth && !s->npend && !s->lost)
    table_remove(t, s);
}

/* What became of the spans and flows that ended, by key, for the events
 * of theirs read after their end (an async step after a span whose end
 * came first; a flow's step, or another "f" of a flow that fans out,
 * after its "s" and "f"): a cache of DONE_SLOTS keys, the newest kept
 * (bounded: a key pushed out is decided by its own event). */
#define DONE_SLOTS 65536u         /* a power of two */

struct done {
  uint64_t key;            /* 0: empty */
  int kept;
};

static void done_note(struct done **d, uint64_t key, int kept)
{
  key |= key == 0;
  if (!*d && !(*d = calloc(DONE_SLOTS, sizeof **d)))
    return;
  (*d)[key & (DONE_SLOTS - 1)].key = key;
  (*d)[key & (DONE_SLOTS - 1)].kept = kept;
}

/* 1 kept, 0 dropped, -1 not known. */
static int done_find(const struct done *d, uint64_t key)
{
  key |= key == 0;
  if (!d || d[key & (DONE_SLOTS - 1)].key != key)
    return -1;
  return d[key & (DONE_SLOTS - 1)].kept;
}

static void held_free(struct slice *sl, struct held *h)
{
  sl->held_bytes -= h->len;
  free(h->text);
  h->text = NULL;
  h->len = 0;
}

/* Append text[0..len) (and a NUL) to what h holds: 0, or -1 if there is
 * no room left. */
static int held_add(struct slice *sl, struct held *h, const char *text,
                    size_t len)
{
  char *p;

  if (sl->held_bytes + len + 1 > HELD_MAX ||
      !(p = realloc(h->text, h->len + len + 1)))
    return -1;
  memcpy(p + h->len, text, len);
  p[h->len + len] = '\0';
  h->text = p;
  h->len += len + 1;
  sl->held_bytes += len + 1;
  return 0;
}

static void table_free(struct slice *sl, struct table *t)
{
  if (!t->s)
    return;
  for (size_t i = 0; i < TABLE_SLOTS; i++) {
    for (unsigned k = 0; k < t->s[i].depth; k++)
      held_free(sl, &t->s[i].stack[k]);
    for (unsigned k = 0; k < t->s[i].npend; k++)
      held_free(sl, &t->s[i].pend[k]);
    free(t->s[i].stack);
    free(t->s[i].pend);
  }
  free(t->s);
  t->s = NULL;
}

static struct held *push(struct slot *s)
{
  if (s->depth == s->cap) {
    unsigned cap = s->cap ? 2 * s->cap : 4;
    struct held *h;
    if (cap > DEPTH_MAX || !(h = realloc(s->stack, cap * sizeof *h)))
      return NULL;
    s->stack = h;
    s->cap = cap;
  }
  memset(&s->stack[s->depth], 0, sizeof s->stack[0]);
  return &s->stack[s->depth++];
}

/* An end read before its begin, remembered in s (NULL: no room). */
static struct held *push_pending(struct slot *s)
{
  if (s->npend == s->pend_cap) {
    unsigned cap = s->pend_cap ? 2 * s->pend_cap : 2;
    struct held *h;
    if (cap > DEPTH_MAX || !(h = realloc(s->pend, cap * sizeof *h)))
      return NULL;
    s->pend = h;
    s->pend_cap = cap;
  }
  memset(&s->pend[s->npend], 0, sizeof s->pend[0]);
  return &s->pend[s->npend++];
}

/* ============================================================ output */

static int put(struct slice *sl, const char *text, size_t len)
{
  if (twt_out_record(sl->out, sl->form, text, len) != 0) {
    sl->err = twt_cmd_output_error(CMD, sl->out);
    return -1;
  }
  if (!sl->any_written && sl->clock) {
    sl->any_written = 1;
    if (twt_out_record(sl->out, sl->form, sl->clock, sl->clock_len) != 0) {
      sl->err = twt_cmd_output_error(CMD, sl->out);
      return -1;
    }
    free(sl->clock);
    sl->clock = NULL;
  }
  sl->any_written = 1;
  return 0;
}

/* Write the records held in h (each followed by a NUL). */
static int put_held(struct slice *sl, struct held *h)
{
  const char *p = h->text, *e = h->text + h->len;

  while (p < e) {
    size_t n = strlen(p);
    if (put(sl, p, n) != 0)
      return -1;
    p += n + 1;
  }
  held_free(sl, h);
  return 0;
}

/* ========================================================== metadata */

static uint64_t meta_key(int64_t pid, int64_t tid, int thread)
{
  int64_t k[3] = { pid, thread ? tid : 0, thread };
  return twt_rec_hash(k, sizeof k, 11);
}

/* Write the metadata held for a process (and thread) about to have an
 * event written. */
static int flush_meta_of(struct slice *sl, unsigned has, int64_t pid,
                         int64_t tid)
{
  pid = (has & TWT_REC_PID) ? pid : 0;
  tid = (has & TWT_REC_TID) ? tid : 0;
  for (int thread = 0; thread < 2; thread++) {
    struct slot *s = table_find(sl, &sl->meta, meta_key(pid, tid, thread),
                                1);
    if (!s || s->flushed)
      continue;
    s->flushed = 1;
    if (s->depth && put_held(sl, &s->stack[0]) != 0)
      return -1;
  }
  return 0;
}

static int flush_meta(struct slice *sl, const twt_rec *r)
{
  return flush_meta_of(sl, r->has, r->pid, r->tid);
}

static int is_thread_meta(const twt_rec *r)
{
  return r->name.len > 8 && memcmp(r->text + r->name.off, "\"thread_", 8)
                            == 0;
}

static int take_meta(struct slice *sl, const twt_rec *r, const char *text,
                     size_t len)
{
  int64_t pid = (r->has & TWT_REC_PID) ? r->pid : 0;
  int64_t tid = (r->has & TWT_REC_TID) ? r->tid : 0;
  struct slot *s = table_find(sl, &sl->meta,
                              meta_key(pid, tid, is_thread_meta(r)), 1);

  if (!s || s->flushed)
    return put(sl, text, len);    /* no room to hold: write it now */
  if (!s->depth && !push(s))
    return put(sl, text, len);
  if (held_add(sl, &s->stack[0], text, len) != 0)
    return put(sl, text, len);
  return 0;
}

/* ============================================================ filters */

static int glob_match(const char *glob, const char *text, size_t n,
                      int list)
{
  char s[TEXT_MAX];

  twt_rec_str_decode(text, n, s, sizeof s);
  if (fnmatch(glob, s, 0) == 0)
    return 1;
  if (list && strchr(s, ',')) {
    for (char *save = NULL, *c = strtok_r(s, ",", &save); c;
         c = strtok_r(NULL, ",", &save))
      if (fnmatch(glob, c, 0) == 0)
        return 1;
  }
  return 0;
}

static int in_list(const int64_t *v, int n, int64_t x)
{
  for (int i = 0; i < n; i++)
    if (v[i] == x)
      return 1;
  return 0;
}

/* The pid and tid filters. */
static int ids_pass(const struct slice *sl, const twt_rec *r)
{
  if (sl->npids && (!(r->has & TWT_REC_PID) ||
                    !in_list(sl->pids, sl->npids, r->pid)))
    return 0;
  if (sl->ntids && (!(r->has & TWT_REC_TID) ||
                    !in_list(sl->tids, sl->ntids, r->tid)))
    return 0;
  return 1;
}

/* A process's metadata by its pid, a thread's by its pid and tid. */
static int meta_pass(const struct slice *sl, const twt_rec *r)
{
  if (is_thread_meta(r))
    return ids_pass(sl, r);
  return !sl->npids || ((r->has & TWT_REC_PID) &&
                        in_list(sl->pids, sl->npids, r->pid));
}

static int filters_pass(const struct slice *sl, const twt_rec *r)
{
  if (!ids_pass(sl, r))
    return 0;
  if (sl->name_glob && (!r->name.len || r->text[r->name.off] != '"' ||
                        !glob_match(sl->name_glob, r->text + r->name.off,
                                    r->name.len, 0)))
    return 0;
  if (sl->cat_glob && (!r->cat.len || r->text[r->cat.off] != '"' ||
                       !glob_match(sl->cat_glob, r->text + r->cat.off,
                                   r->cat.len, 1)))
    return 0;
  return 1;
}

static int in_window(const struct slice *sl, int64_t ts)
{
  return ts >= sl->from && ts < sl->to;
}

/* ============================================================ events */

/* Write an event kept, after the metadata of its process and thread. */
static int keep(struct slice *sl, const twt_rec *r, const char *text,
                size_t len)
{
  if (flush_meta(sl, r) != 0)
    return -1;
  sl->kept++;
  return put(sl, text, len);
}

/* The key of a B/E pair: its thread. */
static uint64_t thread_key(const twt_rec *r)
{
  int64_t k[2] = { (r->has & TWT_REC_PID) ? r->pid : 0,
                   (r->has & TWT_REC_TID) ? r->tid : 0 };

  return twt_rec_hash(k, sizeof k, 13);
}

/* The key of an async span (cat and id; with_name: a flow's, and its
 * name), with the pid for a process-local id. */
static uint64_t key_of(const twt_rec *r, int with_name, uint64_t seed)
{
  uint64_t h = seed;
  const twt_rec_span *parts[5] = { &r->cat, &r->id, &r->id2, &r->scope,
                              &r->name };

  for (int i = 0; i < (with_name ? 5 : 4); i++)
    h = twt_rec_hash(r->text + parts[i]->off, parts[i]->len, h);
  if (r->id2.len && memmem(r->text + r->id2.off, r->id2.len,
                           "\"local\"", 7)) {
    int64_t pid = (r->has & TWT_REC_PID) ? r->pid : 0;
    h = twt_rec_hash(&pid, sizeof pid, h);   /* a process-local id */
  }
  return h;
}

/* A begin whose end was read first: the pair is complete; both are
 * written if it overlaps the window, else both dropped. */
static int begin_after_end(struct slice *sl, struct slot *s,
                           const twt_rec *r, int pass, const char *text,
                           size_t len)
{
  struct held e = s->pend[0];
  int rc = 0;

  memmove(s->pend, s->pend + 1, --s->npend * sizeof *s->pend);
  if (pass && e.pass) {
    rc = keep(sl, r, text, len);
    sl->kept++;
    if (rc == 0)
      rc = put_held(sl, &e);
  } else {
    sl->dropped_pairs++;
  }
  held_free(sl, &e);
  done_note(&sl->adone, s->key, pass && e.pass);
  slot_done(&sl->asyncs, s);
  return rc;
}

/* A span begins (B, b, S): written now, held, or marked dropped. */
static int span_begin(struct slice *sl, struct table *t, uint64_t key,
                      const twt_rec *r, int64_t ts, const char *text,
                      size_t len)
{
  struct slot *s = table_find(sl, t, key, 1);
  struct held *h;
  int pass = filters_pass(sl, r) && ts < sl->to;

  if (s && s->npend)
    return begin_after_end(sl, s, r, pass, text, len);
  if (!s || !(h = push(s))) {
    if (s)
      s->lost++;
    sl->dropped_room++;
    return 0;
  }
  h->ts = ts;
  h->pid = r->pid;
  h->tid = r->tid;
  h->has = r->has;
  h->pass = pass;
  if (!pass)
    return 0;
  if (ts >= sl->from) {
    h->written = 1;
    return keep(sl, r, text, len);
  }
  if (held_add(sl, h, text, len) != 0) {
    h->pass = 0;                  /* no room: the pair is dropped */
    sl->dropped_room++;
  }
  return 0;
}

/* A span ends (E, e, F). */
static int span_end(struct slice *sl, struct table *t, uint64_t key,
                    const twt_rec *r, int64_t ts, const char *text,
                    size_t len)
{
  struct slot *s = table_find(sl, t, key, 0);
  struct held *h;
  int rc = 0;

  if (s && s->lost) {
    s->lost--;
    slot_done(t, s);
    return 0;
  }
  if (!s || !s->depth) {
    /* An async end may come before its begin (each thread commits its
     * own buffer): held until the begin, an orphan if none comes.  A
     * B/E pair is on one thread, in order: an E alone is an orphan. */
    if (t == &sl->asyncs && (s || (s = table_find(sl, t, key, 1))) &&
        (h = push_pending(s)) != NULL) {
      h->ts = ts;
      h->pass = ts >= sl->from;
      if (h->pass && held_add(sl, h, text, len) != 0) {
        h->pass = 0;
        sl->dropped_room++;
      }
      return 0;
    }
    sl->orphans++;                /* no begin in the input */
    slot_done(t, s);
    return 0;
  }
  h = &s->stack[--s->depth];
  if (h->pass && !h->written && ts >= sl->from) {
    if (flush_meta(sl, r) != 0 || put_held(sl, h) != 0)
      return -1;
    h->written = 1;
  }
  if (h->pass && h->written)
    rc = keep(sl, r, text, len);
  else if (h->pass)
    sl->dropped_pairs++;          /* ended before the window */
  if (t == &sl->asyncs)
    done_note(&sl->adone, s->key, h->pass && h->written);
  held_free(sl, h);
  slot_done(t, s);
  return rc;
}

/* An async step (n, T, p): kept in the window, with its span's begin. */
static int span_step(struct slice *sl, uint64_t key, const twt_rec *r,
                     int64_t ts, const char *text, size_t len)
{
  struct slot *s = table_find(sl, &sl->asyncs, key, 0);
  struct held *h;

  if (!s || !s->depth) {
    /* No span of its key open: it ended already (its end was read
     * before its begin: "F", "S", then "T"), or begins later.  As its
     * span went, if known; else kept as an instant. */
    if (done_find(sl->adone, key | (key == 0)) == 0 ||
        !filters_pass(sl, r) || !in_window(sl, ts))
      return 0;
    return keep(sl, r, text, len);
  }
  if (!in_window(sl, ts))
    return 0;
  h = &s->stack[s->depth - 1];
  if (!h->pass)
    return 0;
  if (!h->written) {
    if (flush_meta(sl, r) != 0 || put_held(sl, h) != 0)
      return -1;
    h->written = 1;
  }
  return keep(sl, r, text, len);
}

/* A flow whose events are held in its slot s ends (its "s" and an "f"
 * read, or another "s" of its key, or the end of the input): written
 * whole if every event of it passed the filters and all of them are in
 * the window (--clip: one of them), else dropped whole; what became of
 * it is remembered for the events of its key read after it. */
static int flow_finish(struct slice *sl, struct slot *s, const twt_rec *r)
{
  struct held *h = &s->stack[0];
  int kept = h->pass && !h->filtered && !h->no_room &&
             (sl->clip || !h->outside), rc = 0;

  if (kept) {
    if (r ? flush_meta(sl, r) != 0
          : flush_meta_of(sl, h->has, h->pid, h->tid) != 0)
      return -1;
    for (size_t k = 0; k < h->len; k++)
      sl->kept += h->text[k] == '\0';
    rc = put_held(sl, h);
  } else if (h->no_room) {
    sl->dropped_room++;
  } else {
    sl->dropped_flows++;
  }
  done_note(&sl->fdone, s->key, kept);
  held_free(sl, h);
  s->depth = 0;
  return rc;
}

/* A flow event: its events are held, in the order read, until both its
 * s and an f were read (the f may come first: each thread commits its
 * own buffer), then written together or dropped together (flow_finish).
 * An event of a flow that ended already (a step read after both ends;
 * the other "f"s of a flow that fans out, as the PyTorch profiler writes
 * for a launch of several kernels) goes as its flow went; another "s" of
 * a key that is open ends the flow before it (an id used again). */
static int flow(struct slice *sl, const twt_rec *r, int64_t ts,
                const char *text, size_t len)
{
  uint64_t key = key_of(r, 1, 17);
  struct slot *s = table_find(sl, &sl->flows, key, 0);
  unsigned end = r->ph == 's' ? 1u : r->ph == 'f' ? 2u : 0u;
  int filt = filters_pass(sl, r), v;
  struct held *h;
  int rc = 0;

  if ((!s || !s->depth) && end != 1 &&
      (v = done_find(sl->fdone, key | (key == 0))) >= 0) {
    if (!v || !filt)
      return 0;
    return keep(sl, r, text, len);
  }
  if (s && s->depth && end == 1 && (s->stack[0].ends & 1) &&
      flow_finish(sl, s, NULL) != 0)
    return -1;
  if (!s && !(s = table_find(sl, &sl->flows, key, 1))) {
    sl->dropped_room++;
    return 0;
  }
  if (!s->depth) {
    if (!push(s)) {
      sl->dropped_room++;
      slot_done(&sl->flows, s);
      return 0;
    }
    s->stack[0].pid = r->pid;
    s->stack[0].tid = r->tid;
    s->stack[0].has = r->has;
  }
  h = &s->stack[0];
  if (!filt)
    h->filtered = 1;
  if (in_window(sl, ts))
    h->pass = 1;
  else
    h->outside = 1;
  if (!h->filtered && !h->no_room && held_add(sl, h, text, len) != 0)
    h->no_room = 1;
  h->ends |= end;
  if (h->ends == 3)
    rc = flow_finish(sl, s, r);
  slot_done(&sl->flows, s);
  return rc;
}

/* The window, once the trace's start is known. */
static void set_start(struct slice *sl, int64_t start)
{
  sl->start_known = 1;
  sl->start = start;
  sl->from = !sl->have_from ? INT64_MIN :
             sl->from_abs ? sl->from_rel : start + sl->from_rel;
  sl->to = !sl->have_to ? INT64_MAX :
           sl->to_abs ? sl->to_rel : start + sl->to_rel;
}

/* --clip: the complete event r (its text[0..len) as it is to be
 * written, at ts moved) cut to the window: ts and dur rewritten, to the
 * nanosecond, when it crosses an edge -- in r's own text, at the spans
 * the reader found while it checked the record (the moved ts is
 * replaced anyway): no second scan of its members.  0 or -1 (sl->err
 * set). */
static int clip(struct slice *sl, const twt_rec *r, int64_t ts,
                const char **text, size_t *len)
{
  int64_t end = ts + ((r->has & TWT_REC_DUR) ? r->dur : 0);
  int64_t b = ts < sl->from ? sl->from : ts;
  int64_t e = end > sl->to ? sl->to : end;
  char tst[TWT_REC_US_MAX + 2], durt[TWT_REC_US_MAX + 2];
  const char *with[2];
  size_t wlen[2];
  twt_rec_span at[2];

  if (b == ts && e == end)
    return 0;                     /* inside: byte for byte */
  if (!r->ts_v.len || !r->dur_v.len)
    return 0;
  {
    int dur_first = r->dur_v.off < r->ts_v.off;   /* edits in text order */
    /* A value written as a string ("ts":"4") stays one. */
    int ts_q = r->text[r->ts_v.off] == '"';
    int dur_q = r->text[r->dur_v.off] == '"';
    at[dur_first] = r->ts_v;
    with[dur_first] = tst;
    wlen[dur_first] = twt_rec_us_text(b, tst + ts_q);
    at[!dur_first] = r->dur_v;
    with[!dur_first] = durt;
    wlen[!dur_first] = twt_rec_us_text(e - b, durt + dur_q);
    if (ts_q) {
      tst[0] = tst[wlen[dur_first] + 1] = '"';
      wlen[dur_first] += 2;
    }
    if (dur_q) {
      durt[0] = durt[wlen[!dur_first] + 1] = '"';
      wlen[!dur_first] += 2;
    }
  }
  if (twt_cmd_edit(r->text, r->len, at, with, wlen, 2, &sl->clipped, text,
                   len) != 0) {
    sl->err = twt_cmd_error(CMD, "out of memory");
    return -1;
  }
  sl->clips++;
  return 0;
}

static int take(struct slice *sl, const twt_tin_rec *rec)
{
  const twt_rec *r = &rec->r;
  const char *text;
  size_t len;
  int64_t ts = r->ts + rec->shift;

  if (twt_cmd_rewrite(r, rec->shift, NULL, 0, &sl->buf, &text, &len) != 0) {
    sl->err = twt_cmd_error(CMD, "out of memory");
    return -1;
  }
  if ((r->has & TWT_REC_TS) && !sl->start_known)
    set_start(sl, ts);
  if (rec->kind == TWT_TIN_CLOCK) {
    if (sl->any_written)
      return put(sl, text, len);
    if (!(sl->clock = malloc(len)))
      return 0;
    memcpy(sl->clock, text, len);
    sl->clock_len = len;
    return 0;
  }
  if (rec->kind == TWT_TIN_META)
    return meta_pass(sl, r) ? take_meta(sl, r, text, len) : 0;
  if (!(r->has & TWT_REC_TS))
    return filters_pass(sl, r) ? keep(sl, r, text, len) : 0;
  switch (r->ph) {
  case 'X':
    /* It overlaps the window; with --clip, one that ends exactly where
     * the window begins (and lasts) has nothing left in it: dropped. */
    if (filters_pass(sl, r) && ts < sl->to &&
        ts + ((r->has & TWT_REC_DUR) ? r->dur : 0) >= sl->from &&
        !(sl->clip && ts < sl->from && (r->has & TWT_REC_DUR) &&
          r->dur > 0 && ts + r->dur == sl->from)) {
      if (sl->clip && clip(sl, r, ts, &text, &len) != 0)
        return -1;
      return keep(sl, r, text, len);
    }
    return 0;
  case 'B':
    return span_begin(sl, &sl->spans, thread_key(r), r, ts, text,
                      len);
  case 'E':
    return span_end(sl, &sl->spans, thread_key(r), r, ts, text,
                    len);
  case 'b':
  case 'S':
    return span_begin(sl, &sl->asyncs, key_of(r, 0, 19), r, ts, text,
                      len);
  case 'e':
  case 'F':
    return span_end(sl, &sl->asyncs, key_of(r, 0, 19), r, ts, text,
                    len);
  case 'n':
  case 'T':
  case 'p':
    return span_step(sl, key_of(r, 0, 19), r, ts, text, len);
  case 's':
  case 't':
  case 'f':
    return flow(sl, r, ts, text, len);
  default:
    if (filters_pass(sl, r) && in_window(sl, ts))
      return keep(sl, r, text, len);
    return 0;
  }
}

/* The end of the input: spans still open that reached the window are
 * written (they last past it); flows not ended are dropped. */
static int finish(struct slice *sl)
{
  struct table *open[2] = { &sl->spans, &sl->asyncs };

  for (int k = 0; k < 2; k++) {
    struct table *t = open[k];
    for (size_t i = 0; t->s && i < TABLE_SLOTS; i++)
      for (unsigned d = 0; d < t->s[i].depth; d++) {
        struct held *h = &t->s[i].stack[d];
        if (h->pass && !h->written && h->text) {
          sl->kept++;
          if (flush_meta_of(sl, h->has, h->pid, h->tid) != 0 ||
              put_held(sl, h) != 0)
            return -1;
        }
      }
  }
  /* Flows whose other end is not in the input: written as the input
   * has them when they reached the window (with no window, nothing of
   * the input is dropped). */
  for (size_t i = 0; sl->flows.s && i < TABLE_SLOTS; i++)
    if (sl->flows.s[i].depth && flow_finish(sl, &sl->flows.s[i], NULL) != 0)
      return -1;
  for (size_t i = 0; sl->asyncs.s && i < TABLE_SLOTS; i++)
    sl->orphans += sl->asyncs.s[i].npend;
  /* Nothing kept: the names, so that the output is still a trace. */
  if (!sl->any_written)
    for (size_t i = 0; sl->meta.s && i < TABLE_SLOTS; i++)
      if (sl->meta.s[i].depth && put_held(sl, &sl->meta.s[i].stack[0]) != 0)
        return -1;
  if (!sl->any_written && sl->clock) {
    char *clock = sl->clock;
    int rc;
    sl->clock = NULL;
    rc = put(sl, clock, sl->clock_len);
    free(clock);
    return rc;
  }
  return 0;
}

/* ======================================================== the command */

#define OPT_TID 0x102
#define OPT_CLIP 0x103

const struct twt_cmd_opt twt_tool_slice_options[] = {
  TWT_CMD_COMMON('o', NULL, "write to OUT, gzip if it ends in .gz (default:\n"
                 "the standard output)"),
  { "from", 'f', "T", "the window's start (default: the beginning)" },
  { "clip", OPT_CLIP, NULL, "cut complete events that cross the window's\n"
                            "edges to it; keep a flow with one end in it" },
  { "to", 't', "T", "its end, excluded (default: the end)" },
  { "pid", 'p', "P", "only process P (repeat for more)" },
  { "tid", OPT_TID, "T", "only thread T (repeat for more)" },
  { "name", 'n', "GLOB", "only events whose name matches GLOB (fnmatch)" },
  { "cat", 'c', "GLOB", "only events with a category matching GLOB" },
  TWT_CMD_COMMON_REST,
  { NULL, 0, NULL, NULL }
};

static void slice_usage(FILE *out)
{
  fprintf(out,
    "Usage: " TWT_CLI_PROGRAM " slice [-o OUT] [--from T] [--to T] [--pid P]"
    "... [--tid T]...\n"
    "                         [--name GLOB] [--cat GLOB] [-q] [--no-parts]"
    " FILE...\n"
    "\n"
    "Write the part of a trace in the time window [--from, --to) and of the\n"
    "processes, threads, names and categories asked for: a smaller trace\n"
    "that a viewer opens.  T is a duration from the trace's start (its\n"
    "first timestamp: the clock record, when the writer opened it), e.g.\n"
    "10s, 12.5ms, 1500us; or, after '@', a timestamp of the trace's clock\n"
    "(@1234.5ms).  FILE... are read as one trace, as by cat.\n"
    "\n"
    "Complete events that overlap the window are kept whole (with --clip:\n"
    "cut to it, ts and dur rewritten); B/E pairs and\n"
    "async spans that overlap it are kept whole, both ends; a flow only if\n"
    "all of it is in the window (--clip: one end).  Without a window\n"
    "nothing is dropped.  Metadata (names) of what is kept stay.\n"
    "\n");
  twt_cmd_print_options(out, twt_tool_slice_options);
  fprintf(out,
    "\n"
    "Exit status: 0 written, 1 an error, 2 a usage error.\n");
}

static int parse_time(const char *text, int64_t *ns, int *abs)
{
  *abs = text[0] == '@';
  return twt_rec_parse_duration(text + *abs, ns);
}

static int parse_id(const char *text, int64_t *v)
{
  return twt_rec_int(text, strlen(text), v);
}

static void summary(const struct slice *sl, const twt_tin *in)
{
  const struct twt_tin_stats *s = twt_tin_stats(in);

  fprintf(stderr, TWT_CLI_PROGRAM " " CMD ": kept %" PRIu64 " of %" PRIu64
          " records (%" PRIu64 " written to %s)", sl->kept, s->records,
          twt_out_records(sl->out), twt_cmd_output_name(sl->c));
  if (sl->clips)
    fprintf(stderr, "; %" PRIu64 " complete events cut to the window",
            sl->clips);
  if (sl->dropped_pairs)
    fprintf(stderr, "; %" PRIu64 " spans outside the window dropped "
            "(both ends)", sl->dropped_pairs);
  if (sl->dropped_flows)
    fprintf(stderr, "; %" PRIu64 " %s not all in the window dropped",
            sl->dropped_flows, twt_cli_plural(sl->dropped_flows, "flow",
                                              "flows"));
  if (sl->orphans)
    fprintf(stderr, "; %" PRIu64 " span %s without a begin dropped",
            sl->orphans, twt_cli_plural(sl->orphans, "end", "ends"));
  if (sl->dropped_room)
    fprintf(stderr, "; %" PRIu64 " spans or flows dropped: too many open "
            "at once", sl->dropped_room);
  fputc('\n', stderr);
}

int twt_tool_slice_main(int argc, char **argv)
{
  struct twt_cmd_getopt g;
  struct twt_cmd_common c;
  struct slice sl;
  twt_progress progress;
  twt_tin_rec rec;
  twt_tin *in = NULL;
  const char *tail;
  size_t tail_len;
  int opt, status, rc;

  memset(&c, 0, sizeof c);
  memset(&sl, 0, sizeof sl);
  sl.c = &c;
  optind = 0;
  opterr = 0;
  twt_cmd_getopt_init(&g, twt_tool_slice_options);
  while ((opt = getopt_long(argc, argv, g.shorts, g.longs, NULL)) != -1) {
    switch (opt) {
    case 'f':
    case 't':
      if (parse_time(optarg, opt == 'f' ? &sl.from_rel : &sl.to_rel,
                     opt == 'f' ? &sl.from_abs : &sl.to_abs) != 0)
        return twt_cli_usage_error(CMD, slice_usage, "bad time '%s' (a "
                                   "duration such as 10s or 12.5ms, or "
                                   "@TIMESTAMP)", optarg);
      *(opt == 'f' ? &sl.have_from : &sl.have_to) = 1;
      continue;
    case OPT_CLIP:
      sl.clip = 1;
      continue;
    case 'p':
    case OPT_TID:
      if (opt == 'p' ? sl.npids == FILTER_MAX : sl.ntids == FILTER_MAX)
        return twt_cli_usage_error(CMD, slice_usage, "at most %d of --pid "
                                   "and of --tid", FILTER_MAX);
      if (parse_id(optarg, opt == 'p' ? &sl.pids[sl.npids++]
                                      : &sl.tids[sl.ntids++]) != 0)
        return twt_cli_usage_error(CMD, slice_usage, "bad %s '%s' (an "
                                   "integer)", opt == 'p' ? "pid" : "tid",
                                   optarg);
      continue;
    case 'n':
      sl.name_glob = optarg;
      continue;
    case 'c':
      sl.cat_glob = optarg;
      continue;
    default:
      break;
    }
    status = twt_cmd_option(CMD, slice_usage, opt, optarg, argv, &c);
    if (status != TWT_CMD_TAKEN)
      return status;
  }
  if (optind >= argc)
    return twt_cli_usage_error(CMD, slice_usage, "no FILE to slice");
  if (sl.have_from && sl.have_to && sl.from_abs == sl.to_abs &&
      sl.to_rel <= sl.from_rel)
    return twt_cli_usage_error(CMD, slice_usage, "an empty window: --to "
                               "must come after --from");
  if ((status = twt_cmd_open_input(CMD, &c, argv + optind,
                                   (size_t)(argc - optind), &in)) >= 0)
    return status;
  if ((status = twt_cmd_open_output(CMD, &c, &in, 1, &sl.out)) >= 0)
    goto done;
  set_start(&sl, 0);
  sl.start_known = 0;
  twt_progress_init(&progress, CMD);
  status = TWT_CLI_OK;
  while ((rc = twt_tin_next(in, &rec)) > 0) {
    sl.form = twt_tin_object_form(in);
    if (take(&sl, &rec) != 0)
      break;
    twt_cmd_progress(&progress, in);
  }
  twt_progress_end(&progress);
  if (sl.err) {
    status = sl.err;
    goto done;
  }
  if (rc < 0) {
    status = twt_cmd_input_error(CMD, in);
    goto done;
  }
  if (finish(&sl) != 0) {
    status = sl.err;
    goto done;
  }
  /* The form the tail is in (with no record, the input's). */
  sl.form = twt_tin_object_form(in);
  tail = twt_tin_tail(in, &tail_len);
  if ((status = twt_cmd_finish_tin(CMD, sl.out, sl.form, tail, tail_len,
                                   in, c.quiet)) != 0)
    goto done;
  if (!c.quiet)
    summary(&sl, in);
done:
  table_free(&sl, &sl.spans);
  table_free(&sl, &sl.asyncs);
  table_free(&sl, &sl.flows);
  table_free(&sl, &sl.meta);
  free(sl.adone);
  free(sl.fdone);
  free(sl.clock);
  twt_cmd_buf_free(&sl.buf);
  twt_cmd_buf_free(&sl.clipped);
  twt_out_close(sl.out);
  twt_tin_close(in);
  return status;
}
