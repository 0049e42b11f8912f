/* stats.c -- "tracewriter stats": what a trace holds, without a viewer
 *
 * One pass over the input (tools/tracein.h: FILE... read as one trace,
 * as by cat), counting into bounded tables:
 *
 *   - records by phase (all 256 phase letters: exact);
 *   - events by name: the first NAMES_MAX distinct names (as written:
 *     the raw JSON string, cut to NAME_MAX bytes) each get a row; the
 *     names after those are counted together in one "(other names)" row,
 *     which the report shows, so that the counts always add up;
 *   - events by thread (pid and tid): THREADS_MAX rows, then "(other
 *     threads)", named from their thread_name and process_name records;
 *   - the time span (the least ts, the greatest ts or end of a complete
 *     event), and events per second over it;
 *   - span time by name, total and self: from complete events ('X') and
 *     B/E pairs, per thread.  The total is exact for every name that has
 *     a row.  Self time is the span's duration less that of its direct
 *     children on the same thread: a B/E pair's children are what ends
 *     while it is open; a complete event's, the complete events of its
 *     thread that it holds, whether they are written after it (parents
 *     first, by start: the PyTorch profiler, Chrome) or before it
 *     (children first, by end: the library writes an X when it ends);
 *     see complete_event.  Each thread remembers its stack of complete
 *     events that may still hold those to come, its last DONE_MAX
 *     completed spans not yet claimed and DEPTH_MAX open B's: nesting
 *     deeper than that, or events of one thread in neither order, make
 *     self time an over-estimate.  The report says so (it counts what
 *     was forgotten);
 *   - counters ('C'): each series (pid, name, argument) among the first
 *     COUNTERS_MAX: samples, min, max and the last value read;
 *   - what opening the trace takes: its JSON bytes and events, against
 *     the limits of the viewers (see viewer_verdict).
 *
 * Memory is bounded by the tables' sizes whatever the input's size.
 */
#include "config.h"

#include "command.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CMD "stats"
#define NAMES_MAX 4096u
#define NAME_SLOTS (2 * NAMES_MAX)
#define NAME_MAX_BYTES 128u
#define NAME_TEXT_MAX 4096u       /* an event name kept (CUDA kernels' are
                                     long, and alike for hundreds of
                                     bytes) */
#define THREADS_MAX 4096u
#define THREAD_SLOTS (2 * THREADS_MAX)
#define COUNTERS_MAX 1024u
#define COUNTER_SLOTS (2 * COUNTERS_MAX)
#define DEPTH_MAX 256u
#define DONE_MAX 256u
#define DEFAULT_TOP 10
#define TOP_MAX 1000

/* A name: its raw JSON string (with quotes, cut on a character). */
struct name {
  uint64_t key;            /* 0: empty */
  char text[NAME_TEXT_MAX + 2];
  uint64_t events, spans;
  int64_t total_ns, self_ns;
};

/* An open B, or a completed span waiting for its parent. */
struct open_span {
  int64_t start;
  int64_t child_ns;        /* B: the time of its children so far */
  struct name *name;
};
struct done_span {
  int64_t start, end;
};
/* A complete event that may still be a parent: those of a thread whose
 * intervals nest, outermost first (a trace that writes a parent before
 * its children, as the PyTorch profiler and Chrome do). */
struct x_span {
  int64_t start, end;
  int64_t left;            /* its self time not yet given to children */
  struct name *name;
};

struct thread {
  uint64_t key;            /* 0: empty */
  int64_t pid, tid;        /* integers, or 0 (see the raw values) */
  char pid_raw[NAME_MAX_BYTES + 2]; /* as written: a number, a string
                              (pids and tids may be strings), or "null"
                              when there is none */
  char tid_raw[NAME_MAX_BYTES + 2];
  uint64_t events;
  char name[NAME_MAX_BYTES + 2];   /* raw JSON string, or "" */
  struct open_span *open;
  unsigned nopen, open_cap;
  struct done_span *done;  /* a ring of DONE_MAX */
  unsigned ndone, done_head;
  int64_t evicted_end;     /* the latest end of a span pushed out of
                              done: a later span that began before it may
                              have lost a child */
  int evicted;
  struct x_span *xs;       /* the stack of complete events that may be
                              the parents of those to come */
  unsigned nxs, xs_cap;
  int64_t gone_start, gone_end; /* the last one that left it before a
                              later one began: one read later that lies
                              within it lost its parent */
  int any_gone;
};

struct counter {
  uint64_t key;            /* 0: empty */
  int64_t pid;
  char name[NAME_MAX_BYTES + 2];
  char series[NAME_MAX_BYTES + 2];
  uint64_t samples;
  double min, max, last;
};

struct stats {
  uint64_t phases[256];
  uint64_t events, meta;
  uint64_t no_ts;          /* events without a timestamp it can read */
  uint64_t no_pid;         /* events without a pid */
  struct name *names;
  size_t nnames;
  struct name other_names;
  struct thread *threads;
  size_t nthreads;
  uint64_t other_thread_events;
  struct counter *counters;
  size_t ncounters;
  uint64_t other_counter_samples;
  int any_ts;
  int64_t first_ts, last_ts;
  uint64_t forgotten;      /* spans whose self time may be too high */
  uint64_t unmatched_e;    /* E without a B on its thread */
  int top;
  int json;
};

/* ============================================================ tables */

static uint64_t key_of(const void *a, size_t n, uint64_t seed)
{
  uint64_t k = twt_rec_hash(a, n, seed);
  return k | (k == 0);
}

/* Keep the JSON string token tok[0..n) in out (at least max + 2
 * bytes), cut on a character boundary, NUL-terminated. */
static void keep_token_max(char *out, const char *tok, size_t n, size_t max)
{
  size_t k;

  if (n < 2 || tok[0] != '"') {
    strcpy(out, "\"\"");
    return;
  }
  if (n <= max) {
    memcpy(out, tok, n);
    out[n] = '\0';
    return;
  }
  k = twt_rec_str_cut(tok, n, max - 1);
  memcpy(out, tok, k);
  out[k] = '"';
  out[k + 1] = '\0';
}

static void keep_token(char *out, const char *tok, size_t n)
{
  keep_token_max(out, tok, n, NAME_MAX_BYTES);
}

/* The row of the name token tok[0..n): a new one while there is room,
 * else the "(other names)" row. */
static struct name *name_row(struct stats *st, const char *tok, size_t n)
{
  uint64_t key = key_of(tok, n, 21);
  size_t i;

  if (!st->names && !(st->names = calloc(NAME_SLOTS, sizeof *st->names)))
    return &st->other_names;
  for (i = key & (NAME_SLOTS - 1); st->names[i].key;
       i = (i + 1) & (NAME_SLOTS - 1))
    if (st->names[i].key == key)
      return &st->names[i];
  if (st->nnames >= NAMES_MAX)
    return &st->other_names;
  st->names[i].key = key;
  keep_token_max(st->names[i].text, tok, n, NAME_TEXT_MAX);
  st->nnames++;
  return &st->names[i];
}

/* A pid or tid value as written into out: a string token (cut), a
 * number, or null when the record has none. */
static void keep_id(char *out, const char *tok, size_t n)
{
  if (n == 0) {
    strcpy(out, "null");
  } else if (tok[0] == '"') {
    keep_token(out, tok, n);
  } else {
    if (n > NAME_MAX_BYTES)
      n = NAME_MAX_BYTES;
    memcpy(out, tok, n);
    out[n] = '\0';
  }
}

/* The row of r's thread (pid and tid as written, whatever their type:
 * integers, strings, none). */
static struct thread *thread_row(struct stats *st, const twt_rec *r,
                                 int create)
{
  const char *pt = r->text + r->pid_v.off, *tt = r->text + r->tid_v.off;
  uint64_t key = key_of(pt, r->pid_v.len, 23);
  size_t i;

  key = key_of(tt, r->tid_v.len, key ^ (r->pid_v.len + 1));
  key |= key == 0;

  if (!st->threads) {
    if (!create ||
        !(st->threads = calloc(THREAD_SLOTS, sizeof *st->threads)))
      return NULL;
  }
  for (i = key & (THREAD_SLOTS - 1); st->threads[i].key;
       i = (i + 1) & (THREAD_SLOTS - 1))
    if (st->threads[i].key == key)
      return &st->threads[i];
  if (!create || st->nthreads >= THREADS_MAX)
    return NULL;
  st->threads[i].key = key;
  st->threads[i].pid = (r->has & TWT_REC_PID) ? r->pid : 0;
  st->threads[i].tid = (r->has & TWT_REC_TID) ? r->tid : 0;
  keep_id(st->threads[i].pid_raw, pt, r->pid_v.len);
  keep_id(st->threads[i].tid_raw, tt, r->tid_v.len);
  st->nthreads++;
  return &st->threads[i];
}

/* ============================================================= spans */

/* The time of the spans of t completed within [start, end), removed:
 * they are the children of the span that just ended there. */
static int64_t claim_children(struct thread *t, int64_t start, int64_t end)
{
  int64_t sum = 0;

  while (t->ndone) {
    unsigned last = (t->done_head + t->ndone - 1) % DONE_MAX;
    struct done_span *d = &t->done[last];
    if (d->start < start || d->end > end)
      break;
    sum += d->end - d->start;
    t->ndone--;
  }
  return sum;
}

static void remember_done(struct stats *st, struct thread *t, int64_t start,
                          int64_t end)
{
  if (!t->done && !(t->done = malloc(DONE_MAX * sizeof *t->done))) {
    st->forgotten++;
    return;
  }
  if (t->ndone == DONE_MAX) {
    struct done_span *old = &t->done[t->done_head];
    if (!t->evicted || old->end > t->evicted_end)
      t->evicted_end = old->end;
    t->evicted = 1;
    t->done_head = (t->done_head + 1) % DONE_MAX;   /* the oldest goes */
    t->ndone--;
  }
  t->done[(t->done_head + t->ndone++) % DONE_MAX] =
    (struct done_span){ start, end };
}

/* A span of name on thread t, [start, start + dur), just completed: its
 * self time is dur less children (claimed already for a B/E pair). */
static void span_done(struct stats *st, struct thread *t, struct name *nm,
                      int64_t start, int64_t dur, int64_t children)
{
  nm->spans++;
  nm->total_ns += dur;
  nm->self_ns += dur > children ? dur - children : 0;
  if (!t)
    return;
  /* The enclosing open B gains it, less what it gained of it already. */
  if (t->nopen && t->open[t->nopen - 1].start <= start)
    t->open[t->nopen - 1].child_ns += dur - children;
  remember_done(st, t, start, start + dur);
}

/* A complete event [ts, ts + dur) of name nm on thread t.  Its parent
 * (the innermost complete event of its thread that holds it) may come
 * before it (parents first: the PyTorch profiler, Chrome) or after it
 * (children first: the library writes an X when it ends); either way
 * each parent's self time loses exactly its direct children's time, in
 * memory bounded per thread by the depth of the nesting:
 *
 *   - the stack t->xs holds the events read that may still hold events
 *     to come: read in order of their starts, an event's parent is the
 *     innermost one there that holds it (those that ended before it
 *     began leave the stack), and it gives its time to it;
 *   - an event that finds no parent there is remembered (t->done) until
 *     one that holds it comes after it: read in order of their ends,
 *     that one claims it (claim_children).
 *
 * An event read out of both orders (it lies within one that left the
 * stack, or was pushed out of the bounded memory) makes self time an
 * over-estimate, counted in st->forgotten. */
static void complete_event(struct stats *st, struct thread *t,
                           struct name *nm, int64_t ts, int64_t dur)
{
  int64_t end, children = 0;
  struct x_span *parent = NULL;

  if (dur < 0)
    dur = 0;
  if (!t) {
    span_done(st, t, nm, ts, dur, 0);
    return;
  }
  end = ts + dur;
  /* Those that ended before it began leave the stack; those that lie
   * within it (read before it: its children) too. */
  while (t->nxs) {
    struct x_span *x = &t->xs[t->nxs - 1];
    if (x->end <= ts && !(x->start == ts && x->end == end)) {
      t->gone_start = x->start;
      t->gone_end = x->end;
      t->any_gone = 1;
    } else if (!(x->start >= ts && x->end <= end &&
                 !(x->start == ts && x->end == end))) {
      break;
    }
    t->nxs--;
  }
  if (t->nxs && t->xs[t->nxs - 1].start <= ts &&
      t->xs[t->nxs - 1].end >= end)
    parent = &t->xs[t->nxs - 1];
  if (parent) {
    /* Parents first: it gives its time to its parent. */
    int64_t give = dur < parent->left ? dur : parent->left;
    parent->left -= give;
    parent->name->self_ns -= give;
    nm->spans++;
    nm->total_ns += dur;
    nm->self_ns += dur;
  } else {
    /* Children first: it takes its children's time. */
    children = claim_children(t, ts, end);
    if ((t->evicted && t->evicted_end > ts) ||
        (t->any_gone && children == 0 && t->gone_start <= ts &&
         end <= t->gone_end && dur > 0))
      st->forgotten++;            /* it may have lost a child, or its
                                     parent */
    span_done(st, t, nm, ts, dur, children);
  }
  /* It may be the parent of those to come. */
  if (t->nxs == t->xs_cap) {
    unsigned cap = t->xs_cap ? 2 * t->xs_cap : 8;
    struct x_span *x;
    if (cap > DEPTH_MAX || !(x = realloc(t->xs, cap * sizeof *x))) {
      st->forgotten++;
      return;
    }
    t->xs = x;
    t->xs_cap = cap;
  }
  t->xs[t->nxs++] = (struct x_span){ ts, end,
                                     dur > children ? dur - children : 0,
                                     nm };
}

static void begin(struct stats *st, struct thread *t, struct name *nm,
                  int64_t ts)
{
  if (!t)
    return;
  if (t->nopen == t->open_cap) {
    unsigned cap = t->open_cap ? 2 * t->open_cap : 8;
    struct open_span *o;
    if (cap > DEPTH_MAX || !(o = realloc(t->open, cap * sizeof *o))) {
      st->forgotten++;
      return;
    }
    t->open = o;
    t->open_cap = cap;
  }
  t->open[t->nopen++] = (struct open_span){ ts, 0, nm };
}

static void end(struct stats *st, struct thread *t, int64_t ts)
{
  struct open_span o;
  int64_t dur;

  if (!t || !t->nopen) {
    st->unmatched_e++;
    return;
  }
  o = t->open[--t->nopen];
  dur = ts > o.start ? ts - o.start : 0;
  (void)claim_children(t, o.start, ts);     /* in child_ns already */
  if (t->evicted && t->evicted_end > o.start)
    st->forgotten++;
  if (t->nopen && t->open[t->nopen - 1].start <= o.start)
    t->open[t->nopen - 1].child_ns += dur;
  o.name->spans++;
  o.name->total_ns += dur;
  o.name->self_ns += dur > o.child_ns ? dur - o.child_ns : 0;
  remember_done(st, t, o.start, ts);
}

/* ========================================================== counters */

struct counter_walk {
  struct stats *st;
  const twt_rec *r;
};

static int counter_member(void *arg, const char *key, size_t klen,
                          twt_rec_span v)
{
  struct counter_walk *w = arg;
  struct stats *st = w->st;
  const twt_rec *r = w->r;
  const char *val = r->text + r->args.off + v.off;
  char num[64], *endp;
  uint64_t h;
  int64_t iv;
  double x;
  size_t i;

  if (v.len == 0 || v.len >= sizeof num || (val[0] != '-' &&
                                            (val[0] < '0' || val[0] > '9')))
    return 0;                     /* not a number: not a sample */
  /* A whole number below 2^53 (not negative: "-0" keeps its sign) is
   * exactly the double strtod gives, without its cost. */
  if (val[0] != '-' && twt_rec_int(val, v.len, &iv) == 0 &&
      iv < (INT64_C(1) << 53)) {
    x = (double)iv;
  } else {
    memcpy(num, val, v.len);
    num[v.len] = '\0';
    x = strtod(num, &endp);
  }
  h = key_of(r->text + r->name.off, r->name.len, 29);
  h = key_of(key, klen, h);
  h = key_of(&r->pid, (r->has & TWT_REC_PID) ? sizeof r->pid : 0, h);
  if (!st->counters &&
      !(st->counters = calloc(COUNTER_SLOTS, sizeof *st->counters))) {
    st->other_counter_samples++;
    return 0;
  }
  for (i = h & (COUNTER_SLOTS - 1); st->counters[i].key;
       i = (i + 1) & (COUNTER_SLOTS - 1))
    if (st->counters[i].key == h)
      break;
  if (!st->counters[i].key) {
    struct counter *c = &st->counters[i];
    if (st->ncounters >= COUNTERS_MAX) {
      st->other_counter_samples++;
      return 0;
    }
    c->key = h;
    c->pid = (r->has & TWT_REC_PID) ? r->pid : 0;
    keep_token(c->name, r->text + r->name.off, r->name.len);
    keep_token(c->series, key - 1, klen + 2);   /* the key's token */
    c->min = c->max = x;
    st->ncounters++;
  }
  {
    struct counter *c = &st->counters[i];
    c->samples++;
    if (x < c->min)
      c->min = x;
    if (x > c->max)
      c->max = x;
    c->last = x;
  }
  return 0;
}

/* ============================================================ records */

static void thread_meta(struct stats *st, const twt_rec *r)
{
  twt_rec_span v;
  struct thread *t;

  if (!r->args.len || !r->pid_v.len)
    return;
  v = twt_rec_member(r->text + r->args.off, r->args.len, "name");
  if (!v.len || r->text[r->args.off + v.off] != '"')
    return;
  if (twt_rec_str_is(r->text + r->name.off, r->name.len, "thread_name") &&
      r->tid_v.len && (t = thread_row(st, r, 1)) != NULL)
    keep_token(t->name, r->text + r->args.off + v.off, v.len);
}

static void take(struct stats *st, const twt_tin_rec *rec)
{
  const twt_rec *r = &rec->r;
  static const char noname[] = "\"\"";
  struct name *nm;
  struct thread *t;
  int64_t ts = r->ts + rec->shift;

  st->phases[(unsigned char)r->ph]++;
  if (rec->kind == TWT_TIN_META) {
    st->meta++;
    thread_meta(st, r);
    return;
  }
  if (rec->kind == TWT_TIN_CLOCK)
    return;
  st->events++;
  nm = r->name.len && r->text[r->name.off] == '"'
       ? name_row(st, r->text + r->name.off, r->name.len)
       : name_row(st, noname, sizeof noname - 1);
  nm->events++;
  t = thread_row(st, r, 1);
  if (t)
    t->events++;
  else
    st->other_thread_events++;
  if (!r->pid_v.len)
    st->no_pid++;
  if (!(r->has & TWT_REC_TS))
    st->no_ts++;
  if (r->has & TWT_REC_TS) {
    int64_t last = ts;
    if (r->ph == 'X' && (r->has & TWT_REC_DUR) && r->dur > 0)
      last = ts + r->dur;
    if (!st->any_ts || ts < st->first_ts)
      st->first_ts = ts;
    if (!st->any_ts || last > st->last_ts)
      st->last_ts = last;
    st->any_ts = 1;
  }
  if (!(r->has & TWT_REC_TS))
    return;
  switch (r->ph) {
  case 'X':
    complete_event(st, t, nm, ts, (r->has & TWT_REC_DUR) ? r->dur : 0);
    break;
  case 'B':
    begin(st, t, nm, ts);
    break;
  case 'E':
    end(st, t, ts);
    break;
  case 'C':
    if (r->args.len) {
      struct counter_walk w = { st, r };
      (void)twt_rec_each(r->text + r->args.off, r->args.len,
                         counter_member, &w);
    }
    break;
  default:
    break;
  }
}

static void stats_free(struct stats *st)
{
  for (size_t i = 0; st->threads && i < THREAD_SLOTS; i++) {
    free(st->threads[i].open);
    free(st->threads[i].done);
    free(st->threads[i].xs);
  }
  free(st->threads);
  free(st->names);
  free(st->counters);
}

/* ============================================================= report */

/* The rows of names, sorted by what cmp says, the first n. */
static int by_total(const void *a, const void *b)
{
  const struct name *x = *(struct name *const *)a;
  const struct name *y = *(struct name *const *)b;
  return x->total_ns != y->total_ns ? (x->total_ns < y->total_ns ? 1 : -1)
                                    : strcmp(x->text, y->text);
}

static int by_self(const void *a, const void *b)
{
  const struct name *x = *(struct name *const *)a;
  const struct name *y = *(struct name *const *)b;
  return x->self_ns != y->self_ns ? (x->self_ns < y->self_ns ? 1 : -1)
                                  : strcmp(x->text, y->text);
}

static int by_events(const void *a, const void *b)
{
  const struct name *x = *(struct name *const *)a;
  const struct name *y = *(struct name *const *)b;
  return x->events != y->events ? (x->events < y->events ? 1 : -1)
                                : strcmp(x->text, y->text);
}

static int thread_by_events(const void *a, const void *b)
{
  const struct thread *x = *(struct thread *const *)a;
  const struct thread *y = *(struct thread *const *)b;
  if (x->events != y->events)
    return x->events < y->events ? 1 : -1;
  if (x->pid != y->pid)
    return x->pid < y->pid ? -1 : 1;
  return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The name rows (spans only: with_spans), sorted by cmp: a malloc'ed
 * array, *n its length. */
static struct name **sorted_names(const struct stats *st, int with_spans,
                                  int (*cmp)(const void *, const void *),
                                  size_t *n)
{
  struct name **v = malloc((st->nnames + 1) * sizeof *v);

  *n = 0;
  if (!v)
    return NULL;
  for (size_t i = 0; st->names && i < NAME_SLOTS; i++)
    if (st->names[i].key && (!with_spans || st->names[i].spans))
      v[(*n)++] = &st->names[i];
  qsort(v, *n, sizeof *v, cmp);
  return v;
}

static struct thread **sorted_threads(const struct stats *st, size_t *n)
{
  struct thread **v = malloc((st->nthreads + 1) * sizeof *v);

  *n = 0;
  if (!v)
    return NULL;
  for (size_t i = 0; st->threads && i < THREAD_SLOTS; i++)
    if (st->threads[i].key && st->threads[i].events)
      v[(*n)++] = &st->threads[i];
  qsort(v, *n, sizeof *v, thread_by_events);
  return v;
}

static int counter_cmp(const void *a, const void *b)
{
  const struct counter *x = *(struct counter *const *)a;
  const struct counter *y = *(struct counter *const *)b;
  int c = strcmp(x->name, y->name);
  if (c)
    return c;
  if (x->pid != y->pid)
    return x->pid < y->pid ? -1 : 1;
  return strcmp(x->series, y->series);
}

static struct counter **sorted_counters(const struct stats *st, size_t *n)
{
  struct counter **v = malloc((st->ncounters + 1) * sizeof *v);

  *n = 0;
  if (!v)
    return NULL;
  for (size_t i = 0; st->counters && i < COUNTER_SLOTS; i++)
    if (st->counters[i].key)
      v[(*n)++] = &st->counters[i];
  qsort(v, *n, sizeof *v, counter_cmp);
  return v;
}

/* What the viewers can open (their known limits, as documented in
 * tracewriter(1)): chrome://tracing (catapult) reads the whole file into
 * one JavaScript string, at most 512 MiB in V8 on 64-bit hosts
 * (2^29 - 24 characters), and in practice fails well before; Perfetto's
 * UI imports JSON into a 4 GiB WebAssembly heap, and about 2 GB of JSON
 * is what it manages. */
#define CHROME_LIMIT ((uint64_t)256 * 1024 * 1024)
#define CHROME_HARD ((uint64_t)512 * 1024 * 1024 - 24)
#define PERFETTO_LIMIT ((uint64_t)2000 * 1000 * 1000)

static const char *verdict(uint64_t bytes, uint64_t soft, uint64_t hard)
{
  if (bytes <= soft)
    return "opens";
  return bytes <= hard ? "may fail" : "too big";
}

/* A number of nanoseconds as microseconds, for JSON. */
static void put_us(FILE *f, int64_t ns)
{
  char b[TWT_REC_US_MAX + 1];

  b[twt_rec_us_text(ns, b)] = '\0';
  fputs(b, f);
}

/* ns for people: "12.3 ms". */
static const char *human_ns(int64_t ns, char *buf, size_t size)
{
  double v = (double)ns;

  if (ns < 1000)
    snprintf(buf, size, "%" PRId64 " ns", ns);
  else if (ns < 1000000)
    snprintf(buf, size, "%.1f us", v / 1e3);
  else if (ns < 1000000000)
    snprintf(buf, size, "%.1f ms", v / 1e6);
  else
    snprintf(buf, size, "%.2f s", v / 1e9);
  return buf;
}

/* A name token decoded for people. */
static const char *human_name(const char *tok, char *buf, size_t size)
{
  twt_rec_str_decode(tok, strlen(tok), buf, size);
  for (char *p = buf; *p; p++)
    if ((unsigned char)*p < 0x20)
      *p = ' ';
  return buf;
}

static void put_json_number(FILE *f, double x)
{
  if (isfinite(x))
    fprintf(f, "%.17g", x);
  else
    fputs("null", f);
}

/* The report, as JSON. */
static void report_json(FILE *f, const struct stats *st, const twt_tin *in,
                        int64_t span_ns, double rate)
{
  const struct twt_tin_stats *s = twt_tin_stats(in);
  struct name **v;
  struct thread **th;
  struct counter **cv;
  size_t n, k;
  int first = 1;

  fprintf(f, "{\"files\":%zu,\"input_bytes\":%" PRIu64 ",\"json_bytes\":%"
          PRIu64 ",\"records\":%" PRIu64 ",\"events\":%" PRIu64
          ",\"metadata\":%" PRIu64 ",\"dropped_records\":%" PRIu64
          ",\"dropped_bytes\":%" PRIu64 ",\"unplaced\":{\"no_ts\":%" PRIu64
          ",\"no_pid\":%" PRIu64 "},\n\"phases\":{", twt_tin_files(in),
          s->input_bytes, s->json_bytes, s->records, st->events, st->meta,
          s->dropped_records, s->dropped_bytes, st->no_ts, st->no_pid);
  for (int p = 0; p < 256; p++) {
    if (!st->phases[p])
      continue;
    if (p >= 0x20 && p < 0x7f && p != '"' && p != '\\')
      fprintf(f, "%s\"%c\":%" PRIu64, first ? "" : ",", p, st->phases[p]);
    else
      fprintf(f, "%s\"\\u%04x\":%" PRIu64, first ? "" : ",", p,
              st->phases[p]);
    first = 0;
  }
  fputs("},\n\"time\":{", f);
  if (st->any_ts) {
    fputs("\"first_us\":", f);
    put_us(f, st->first_ts);
    fputs(",\"last_us\":", f);
    put_us(f, st->last_ts);
    fputs(",\"span_us\":", f);
    put_us(f, span_ns);
    fputs(",\"events_per_second\":", f);
    put_json_number(f, rate);
  }
  fputs("},\n\"names\":[", f);
  v = sorted_names(st, 0, by_events, &n);
  for (k = 0; v && k < n; k++)
    fprintf(f, "%s\n{\"name\":%s,\"events\":%" PRIu64 "}", k ? "," : "",
            v[k]->text, v[k]->events);
  free(v);
  fprintf(f, "],\"other_names\":{\"names_beyond\":%u,\"events\":%" PRIu64
          "},\n\"threads\":[", NAMES_MAX, st->other_names.events);
  th = sorted_threads(st, &n);
  for (k = 0; th && k < n; k++) {
    fprintf(f, "%s\n{\"pid\":%s,\"tid\":%s,", k ? "," : "",
            th[k]->pid_raw, th[k]->tid_raw);
    if (th[k]->name[0])
      fprintf(f, "\"name\":%s,", th[k]->name);
    fprintf(f, "\"events\":%" PRIu64 "}", th[k]->events);
  }
  free(th);
  fprintf(f, "],\"other_threads_events\":%" PRIu64 ",\n",
          st->other_thread_events);
  for (int pass = 0; pass < 2; pass++) {
    v = sorted_names(st, 1, pass ? by_self : by_total, &n);
    fprintf(f, "\"top_spans_by_%s\":[", pass ? "self" : "total");
    for (k = 0; v && k < n && k < (size_t)st->top; k++) {
      fprintf(f, "%s\n{\"name\":%s,\"spans\":%" PRIu64 ",\"total_us\":",
              k ? "," : "", v[k]->text, v[k]->spans);
      put_us(f, v[k]->total_ns);
      fputs(",\"self_us\":", f);
      put_us(f, v[k]->self_ns);
      fputc('}', f);
    }
    free(v);
    fputs("],\n", f);
  }
  fprintf(f, "\"other_spans\":%" PRIu64 ",\"self_time_approximate\":%s,"
          "\"spans_forgotten\":%" PRIu64 ",\"unmatched_ends\":%" PRIu64
          ",\n\"counters\":[", st->other_names.spans,
          st->forgotten ? "true" : "false", st->forgotten, st->unmatched_e);
  cv = sorted_counters(st, &n);
  for (k = 0; cv && k < n; k++) {
    fprintf(f, "%s\n{\"name\":%s,\"pid\":%" PRId64 ",\"series\":%s,"
            "\"samples\":%" PRIu64 ",\"min\":", k ? "," : "", cv[k]->name,
            cv[k]->pid, cv[k]->series, cv[k]->samples);
    put_json_number(f, cv[k]->min);
    fputs(",\"max\":", f);
    put_json_number(f, cv[k]->max);
    fputs(",\"last\":", f);
    put_json_number(f, cv[k]->last);
    fputc('}', f);
  }
  free(cv);
  fprintf(f, "],\"other_counter_samples\":%" PRIu64 ",\n\"open\":{"
          "\"json_bytes\":%" PRIu64 ",\"events\":%" PRIu64 ","
          "\"chrome_tracing\":\"%s\",\"perfetto_ui\":\"%s\"}}\n",
          st->other_counter_samples, s->json_bytes, s->records,
          verdict(s->json_bytes, CHROME_LIMIT, CHROME_HARD),
          verdict(s->json_bytes, PERFETTO_LIMIT, PERFETTO_LIMIT));
}

/* The report, as tables for people. */
static void report_text(FILE *f, const struct stats *st, const twt_tin *in,
                        int64_t span_ns, double rate)
{
  const struct twt_tin_stats *s = twt_tin_stats(in);
  char a[64], b[64], nb[NAME_TEXT_MAX * 2];
  struct name **v;
  struct thread **th;
  struct counter **cv;
  size_t n, k;

  twt_format_bytes(s->input_bytes, a, sizeof a);
  twt_format_bytes(s->json_bytes, b, sizeof b);
  fprintf(f, "files        %zu (%s, %s of JSON)\n", twt_tin_files(in), a, b);
  fprintf(f, "records      %" PRIu64 ": %" PRIu64 " events, %" PRIu64
          " metadata\n", s->records, st->events, st->meta);
  if (s->dropped_records || s->dropped_bytes)
    fprintf(f, "dropped      %" PRIu64 " cut records, %" PRIu64
            " bytes\n", s->dropped_records, s->dropped_bytes);
  if (st->no_ts || st->no_pid)
    fprintf(f, "unplaced     %" PRIu64 " events without a timestamp, %"
            PRIu64 " without a pid: counted, not on the timeline\n",
            st->no_ts, st->no_pid);
  if (st->any_ts)
    fprintf(f, "time         %s, %.0f events/s\n",
            human_ns(span_ns, a, sizeof a), rate);
  fputs("\nphase        events\n", f);
  for (int p = 0; p < 256; p++)
    if (st->phases[p])
      fprintf(f, "  %c          %" PRIu64 "\n", p >= 0x20 && p < 0x7f ? p
              : '?', st->phases[p]);

  fprintf(f, "\nnames (top %d of %zu by events)\n", st->top, st->nnames);
  v = sorted_names(st, 0, by_events, &n);
  for (k = 0; v && k < n && k < (size_t)st->top; k++)
    fprintf(f, "  %12" PRIu64 "  %s\n", v[k]->events,
            human_name(v[k]->text, nb, sizeof nb));
  free(v);
  if (st->other_names.events)
    fprintf(f, "  %12" PRIu64 "  (other names, beyond the first %u)\n",
            st->other_names.events, NAMES_MAX);

  fprintf(f, "\nthreads (top %d of %zu by events)\n", st->top,
          st->nthreads);
  th = sorted_threads(st, &n);
  for (k = 0; th && k < n && k < (size_t)st->top; k++)
    fprintf(f, "  %12" PRIu64 "  pid %s tid %s%s%s\n",
            th[k]->events, th[k]->pid_raw, th[k]->tid_raw,
            th[k]->name[0] ? "  " : "",
            th[k]->name[0] ? human_name(th[k]->name, nb, sizeof nb) : "");
  free(th);
  if (st->other_thread_events)
    fprintf(f, "  %12" PRIu64 "  (other threads, beyond the first %u)\n",
            st->other_thread_events, THREADS_MAX);

  for (int pass = 0; pass < 2; pass++) {
    v = sorted_names(st, 1, pass ? by_self : by_total, &n);
    fprintf(f, "\nspans by %s time (X and B/E; top %d)\n",
            pass ? "self" : "total", st->top);
    fprintf(f, "  %12s  %12s  %10s  %s\n", "total", "self", "spans",
            "name");
    for (k = 0; v && k < n && k < (size_t)st->top; k++)
      fprintf(f, "  %12s  %12s  %10" PRIu64 "  %s\n",
              human_ns(v[k]->total_ns, a, sizeof a),
              human_ns(v[k]->self_ns, b, sizeof b), v[k]->spans,
              human_name(v[k]->text, nb, sizeof nb));
    free(v);
  }
  if (st->forgotten)
    fprintf(f, "  (self time approximate: for %" PRIu64 " spans, whose "
            "children were too many to remember, or nested too deep)\n",
            st->forgotten);

  cv = sorted_counters(st, &n);
  if (n)
    fprintf(f, "\ncounters (%zu series)\n  %12s  %12s  %12s  %10s  %s\n", n,
            "min", "max", "last", "samples", "name.series (pid)");
  for (k = 0; cv && k < n; k++) {
    char sb[NAME_MAX_BYTES * 2];
    fprintf(f, "  %12.6g  %12.6g  %12.6g  %10" PRIu64 "  %s.%s (%" PRId64
            ")\n", cv[k]->min, cv[k]->max, cv[k]->last, cv[k]->samples,
            human_name(cv[k]->name, nb, sizeof nb),
            human_name(cv[k]->series, sb, sizeof sb), cv[k]->pid);
  }
  free(cv);

  twt_format_bytes(s->json_bytes, a, sizeof a);
  fprintf(f, "\nopening it    %s of JSON, %" PRIu64 " records\n", a,
          s->records);
  fprintf(f, "  chrome://tracing  %s (about 256 MiB of JSON at most)\n",
          verdict(s->json_bytes, CHROME_LIMIT, CHROME_HARD));
  fprintf(f, "  ui.perfetto.dev   %s (about 2 GB of JSON at most)\n",
          verdict(s->json_bytes, PERFETTO_LIMIT, PERFETTO_LIMIT));
  if (s->json_bytes > CHROME_LIMIT)
    fprintf(f, "  (tracewriter slice cuts out a part that opens)\n");
}

/* ======================================================== the command */

/* --ndjson is not one: the report is not a trace. */
const struct twt_cmd_opt twt_tool_stats_options[] = {
  { "json", 'j', NULL, "print JSON (for scripts) instead of tables" },
  { "top", 'N', "N", "rows of the name, thread and span tables\n"
                     "(default: 10)" },
  TWT_CMD_COMMON('o', NULL, "write the report to OUT (default: the standard\n"
                 "output)"),
  TWT_CMD_COMMON('q', NULL, "print nothing but errors on stderr"),
  TWT_CMD_COMMON(TWT_CMD_OPT_NO_PARTS, NULL, NULL),
  TWT_CMD_COMMON('m', NULL, NULL),
  TWT_CMD_COMMON('h', NULL, NULL),
  { NULL, 0, NULL, NULL }
};

static void stats_usage(FILE *out)
{
  fprintf(out,
    "Usage: " TWT_CLI_PROGRAM " stats [--json] [--top N] [-o OUT] [-q] "
    "[--no-parts] FILE...\n"
    "\n"
    "Say what a trace holds without opening it in a viewer: records by\n"
    "phase, events by name and by thread, the time covered and events per\n"
    "second, the span names that take the most time (total and self, from\n"
    "X events and B/E pairs), counters' min, max and last values, and\n"
    "whether the viewers can open it.  FILE... are read as one trace, as\n"
    "by cat.  Tables are bounded: past 4096 names or threads, the rest are\n"
    "counted together; self time is approximate when the report says so.\n"
    "\n");
  twt_cmd_print_options(out, twt_tool_stats_options);
  fprintf(out,
    "\n"
    "Exit status: 0 printed, 1 an error, 2 a usage error.\n");
}

static int write_report(const struct twt_cmd_common *c, struct stats *st,
                        twt_tin *in)
{
  int64_t span_ns = st->any_ts ? st->last_ts - st->first_ts : 0;
  double rate = span_ns > 0 ? (double)st->events * 1e9 / (double)span_ns
                            : 0.0;
  FILE *f = stdout;

  if (c->output && strcmp(c->output, "-") != 0 &&
      !(f = fopen(c->output, "w")))
    return twt_cmd_error(CMD, "%s: %s", c->output, strerror(errno));
  if (st->json)
    report_json(f, st, in, span_ns, rate);
  else
    report_text(f, st, in, span_ns, rate);
  if (f == stdout ? fflush(f) != 0 || ferror(f) : fclose(f) != 0)
    return twt_cmd_error(CMD, "%s: %s", twt_cmd_output_name(c),
                         strerror(errno));
  return TWT_CLI_OK;
}

int twt_tool_stats_main(int argc, char **argv)
{
  struct twt_cmd_getopt g;
  struct twt_cmd_common c;
  struct stats *st;
  twt_progress progress;
  twt_tin_rec rec;
  twt_tin *in = NULL;
  int opt, status, rc;

  if (!(st = calloc(1, sizeof *st)))
    return twt_cmd_error(CMD, "out of memory");
  memset(&c, 0, sizeof c);
  st->top = DEFAULT_TOP;
  optind = 0;
  opterr = 0;
  twt_cmd_getopt_init(&g, twt_tool_stats_options);
  while ((opt = getopt_long(argc, argv, g.shorts, g.longs, NULL)) != -1) {
    if (opt == 'j') {
      st->json = 1;
      continue;
    }
    if (opt == 'N') {
      int64_t top;
      if (twt_rec_int(optarg, strlen(optarg), &top) != 0 || top < 1 ||
          top > TOP_MAX) {
        free(st);
        return twt_cli_usage_error(CMD, stats_usage, "bad --top '%s' (1 to "
                                   "%d)", optarg, TOP_MAX);
      }
      st->top = (int)top;
      continue;
    }
    status = twt_cmd_option(CMD, stats_usage, opt, optarg, argv, &c);
    if (status != TWT_CMD_TAKEN) {
      free(st);
      return status;
    }
  }
  if (c.ndjson) {
    free(st);
    return twt_cli_usage_error(CMD, stats_usage, "--ndjson is for the "
                               "commands that write a trace");
  }
  if (optind >= argc) {
    free(st);
    return twt_cli_usage_error(CMD, stats_usage, "no FILE to read");
  }
  if ((status = twt_cmd_open_input(CMD, &c, argv + optind,
                                   (size_t)(argc - optind), &in)) >= 0) {
    free(st);
    return status;
  }
  if (c.output && strcmp(c.output, "-") != 0 &&
      twt_tin_has_file(in, c.output)) {
    status = twt_cmd_error(CMD, "%s: the output is one of the inputs",
                           c.output);
    goto done;
  }
  twt_progress_init(&progress, CMD);
  while ((rc = twt_tin_next(in, &rec)) > 0) {
    take(st, &rec);
    twt_cmd_progress(&progress, in);
  }
  twt_progress_end(&progress);
  if (rc < 0) {
    status = twt_cmd_input_error(CMD, in);
    goto done;
  }
  status = write_report(&c, st, in);
done:
  stats_free(st);
  free(st);
  twt_tin_close(in);
  return status;
}
