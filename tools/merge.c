/* merge.c -- "tracewriter merge": traces of several processes on one
 * timeline
 *
 * Each FILE argument is one input: a trace and its rotated parts
 * (tools/tracein.h).  How the output is made:
 *
 * Clocks.  Each input's time base is decided at its first event, by the
 * first rule that applies (enum rule):
 *
 *   - --offset FILE=D: moved by D, nothing else;
 *   - a tracewriter trace: its clock record gives delta = realtime_ns -
 *     monotonic_ns, so that ts + delta is the wall clock;
 *   - a PyTorch profiler (Kineto) trace: its ts are microseconds of the
 *     wall clock (system_clock) less baseTimeNanoseconds, a member
 *     written before traceEvents (pytorch/kineto, libkineto/src/
 *     output_json.cpp: transToRelativeTime, ChromeTraceBaseTime), so
 *     delta = baseTimeNanoseconds; without that member (older
 *     profilers; recognised by schemaVersion) they are microseconds
 *     since the epoch: delta = 0;
 *   - anything else: merged as it is, with a warning.
 *
 * The first input with a delta is the reference: the output is on its
 * clock, its timestamps are not changed.  An input whose delta is d is
 * moved by d - d_ref, which puts an event that happened at wall time W
 * at W - d_ref on either input.  The input moves a later part on another
 * clock onto its first part's, so each record moves by the input's
 * shift plus its own.  The output has one clock record, the reference's
 * (moved with it; for a Kineto reference, one made at its first event),
 * so that it can be merged again.  --explain says which rule placed
 * each input and by how much.
 *
 * Pids.  A pid belongs to the first input read that uses it; the same
 * pid met in another input is written as the next pid from 2^22 up
 * that no input has used so far (2^22 is above Linux's PID_MAX_LIMIT,
 * so no real pid of a Linux process is ever taken), everywhere in that
 * input, metadata records included: every (input, pid) pair gets an
 * output pid of its own.  A string pid ("Spans", "" ...: the format
 * allows them) met in another input too is written with " #N" before
 * its closing quote, N the input's number from 1 in the order given
 * (" #N.K" with K from 2 if that is taken too).  Inputs are begun in
 * the order given, so the first input keeps its pids; --explain lists
 * the pids each input had rewritten.
 *
 * Order.  Records are merged by their moved ts (see "order" below: a
 * heap over the inputs, each input's records mostly in a run).  Each
 * input is read ahead into a window: its records are held until those
 * held span at least --window bytes of its JSON (from the first record
 * held to the end of the last one read), or it ends; the record with
 * the least ts among all held is written whenever every input's window
 * is full (or that input ended).  So the output is in ts order (ties:
 * the input given first, then the order read), except for a record that
 * some record at least --window bytes before it in its input has a
 * greater ts than: such a record is written as soon as it is read, and
 * counted.  Records without a ts (metadata) are written as they are
 * read: before every event of their input, for those at its start.
 *
 * Memory: each input's window (and a header per record held), the pid
 * tables (TW_MERGE_PIDS_MAX pairs), one reader per input.
 */
#include "config.h"

#include "command.h"
#include "internal.h"     /* tw__fmt_config */
#include "jsonscan.h"     /* twt_json_check */
#include "layout.h"       /* tw__layout_clock_record_of, TW__LAYOUT_SEP_LEN */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define CMD "merge"
#define DEFAULT_WINDOW ((size_t)8 * 1024 * 1024)
#define MIN_WINDOW ((size_t)4096)
#define REMAP_BASE ((int64_t)1 << 22)    /* above PID_MAX_LIMIT */
#define TW_MERGE_PIDS_MAX 65536u
#define PID_SLOTS (2 * TW_MERGE_PIDS_MAX)  /* a power of two */
#define NOTES_MAX 4              /* remapped pids named per input */
#define NOTE_LEN 72

/* A record held in an input's window. */
struct entry {
  int64_t ts;              /* moved */
  uint64_t seq;            /* order read, for ties */
  uint64_t pos;            /* where it began in its input */
  unsigned input;
  int released;            /* written: freed when it leaves the fifo */
  size_t len;
  char text[];             /* moved and remapped */
};

/* Entries are sized in steps of ENTRY_STEP bytes; those of the first
 * ENTRY_CLASSES sizes are kept for reuse when freed (struct merge). */
#define ENTRY_STEP 32u
#define ENTRY_CLASSES 32u

static size_t entry_class(size_t len)
{
  return (sizeof(struct entry) + len + ENTRY_STEP - 1) / ENTRY_STEP - 1;
}

/* Records in a ring: pushed at the end, dropped at the head. */
struct ring {
  struct entry **v;
  size_t cap, head, len;   /* cap: 0 or a power of two (a mask, not a
                              division, wraps the index) */
};

/* The k-th record from the head. */
static struct entry *ring_at(const struct ring *r, size_t k)
{
  return r->v[(r->head + k) & (r->cap - 1)];
}

/* Push e at the end.  0, or -1 when out of memory. */
static int ring_push(struct ring *r, struct entry *e)
{
  if (r->len == r->cap) {
    size_t cap = r->cap ? 2 * r->cap : 1024;
    struct entry **v = malloc(cap * sizeof *v);
    if (!v)
      return -1;
    for (size_t k = 0; k < r->len; k++)
      v[k] = ring_at(r, k);
    free(r->v);
    r->v = v;
    r->cap = cap;
    r->head = 0;
  }
  r->v[(r->head + r->len++) & (r->cap - 1)] = e;
  return 0;
}

/* Drop the head. */
static void ring_drop(struct ring *r)
{
  r->head = (r->head + 1) & (r->cap - 1);
  r->len--;
}

/* What placed an input on the output's timeline. */
enum rule {
  RULE_NONE,               /* nothing: merged as it is */
  RULE_OFFSET,             /* --offset */
  RULE_CLOCK,              /* its clock record */
  RULE_KINETO_BASE,        /* baseTimeNanoseconds */
  RULE_KINETO_EPOCH        /* a Kineto trace without it: epoch us */
};

struct input {
  twt_tin *tin;
  enum rule rule;
  int64_t delta;           /* wall clock - its ts, ns (CLOCK, KINETO_*) */
  const char *name;        /* as given */
  int has_offset;          /* --offset given */
  int64_t offset;
  int shift_known;         /* shift decided (at its first event) */
  int64_t shift;           /* ns added to its timestamps */
  int no_clock;            /* merged as it is */
  uint64_t remapped;       /* its pids written anew */
  int last_pid_known;      /* the pid of its last record, and its */
  int64_t last_pid, last_out; /* output pid */
  char notes[NOTES_MAX][NOTE_LEN]; /* the first few: "100 -> 4194304" */
  int eof;
  struct ring fifo;        /* held records in the order read */
  struct ring run;         /* ... those in ts order */
  struct entry **late;     /* ... the others (a min-heap) */
  size_t late_cap, late_len;
  uint64_t end_pos;        /* end of the last record read */
  int any_ts;              /* its events' least and greatest ts, moved */
  int64_t min_ts, max_ts;
};

struct pid_slot {
  int used;
  unsigned input;
  int64_t pid, out;
};

struct out_slot {
  int used;
  int64_t pid;
};

/* A string pid of an input: its token's hash, and the variant written
 * (0: as it is, K >= 1: with " #N" or " #N.K"). */
struct spid_slot {
  int used;
  unsigned input;
  uint64_t h;
  unsigned k;
};

struct merge {
  const struct twt_cmd_common *c;
  struct input *in;
  size_t n;
  size_t window;
  unsigned *iheap;         /* the inputs holding records, by their least */
  size_t iheap_len;
  uint64_t seq;
  int ref;                 /* the reference input, or -1 */
  int64_t out_delta;       /* realtime - trace clock of the output */
  struct pid_slot *pids;   /* (input, pid) -> output pid */
  struct out_slot *used;   /* the output pids taken */
  struct spid_slot *spids; /* (input, string pid) -> variant */
  uint64_t *sused;         /* hashes of the string pids written */
  twt_cmd_buf pidtok;      /* the pid token to write */
  size_t npids;
  int64_t next_free;
  twt_out *out;
  twt_cmd_buf buf;
  int64_t last_ts;
  int any_ts;
  uint64_t late;
  int64_t max_lag;
  uint64_t remapped;
  int err;                 /* an exit status to return, or 0 */
  int explain;             /* --explain */
  int form;                /* the output's: the object form when an
                              input has it */
  twt_cmd_buf tail;        /* the output's tail: "]", members, "}" */
  size_t tail_len;
  struct entry *spare[ENTRY_CLASSES]; /* entries freed, by size class,
                              for the next ones (no malloc and free per
                              record); at most as many as were held at
                              once */
};

/* ============================================================ pids */

static uint64_t pid_hash(unsigned input, int64_t pid)
{
  uint64_t key[2] = { input, (uint64_t)pid };
  return twt_rec_hash(key, sizeof key, 3);
}

/* 1 if out is an output pid taken already; with take, take it. */
static int out_taken(struct merge *m, int64_t out, int take)
{
  uint64_t h = twt_rec_hash(&out, sizeof out, 5);
  size_t i;

  for (i = h & (PID_SLOTS - 1); m->used[i].used;
       i = (i + 1) & (PID_SLOTS - 1))
    if (m->used[i].pid == out)
      return 1;
  if (take) {
    m->used[i].used = 1;
    m->used[i].pid = out;
  }
  return 0;
}

/* v in decimal into buf (at least 21 bytes).  Returns the length. */
static size_t int_text(int64_t v, char *buf)
{
  uint64_t a = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  char d[20];
  size_t n = 0, k = 0;

  do {
    d[k++] = (char)('0' + a % 10);
    a /= 10;
  } while (a);
  if (v < 0)
    buf[n++] = '-';
  while (k)
    buf[n++] = d[--k];
  return n;
}

/* Note that input took pid `from` as `to` (for --explain). */
static void note_remap(struct merge *m, unsigned input, const char *from,
                       size_t flen, const char *to, size_t tlen)
{
  struct input *in = &m->in[input];

  if (in->remapped < NOTES_MAX)
    snprintf(in->notes[in->remapped], NOTE_LEN, "%.*s -> %.*s",
             flen > 30 ? 30 : (int)flen, from, tlen > 36 ? 36 : (int)tlen,
             to);
  in->remapped++;
  m->remapped++;
  if (!m->c->quiet)
    fprintf(stderr, TWT_CLI_PROGRAM " " CMD ": %s: pid %.*s is another "
            "input's too: written as pid %.*s\n", in->name, (int)flen, from,
            (int)tlen, to);
}

/* The output pid of (input, pid); -1 on error (m->err set). */
static int map_pid(struct merge *m, unsigned input, int64_t pid,
                   int64_t *out)
{
  size_t i;

  if (!m->pids) {
    m->pids = calloc(PID_SLOTS, sizeof *m->pids);
    m->used = calloc(PID_SLOTS, sizeof *m->used);
    if (!m->pids || !m->used) {
      m->err = twt_cmd_error(CMD, "out of memory");
      return -1;
    }
  }
  for (i = pid_hash(input, pid) & (PID_SLOTS - 1); m->pids[i].used;
       i = (i + 1) & (PID_SLOTS - 1)) {
    if (m->pids[i].input == input && m->pids[i].pid == pid) {
      *out = m->pids[i].out;
      return 0;
    }
  }
  if (m->npids >= TW_MERGE_PIDS_MAX || pid == INT64_MAX ||
      m->next_free == INT64_MAX) {
    m->err = twt_cmd_error(CMD, "%s: more than %u processes (pids) in the "
                           "inputs, or a pid too large: cannot keep them "
                           "apart", m->in[input].name, TW_MERGE_PIDS_MAX);
    return -1;
  }
  *out = pid;
  if (out_taken(m, pid, 0)) {
    *out = m->next_free;
    while (out_taken(m, *out, 0))
      (*out)++;
    m->next_free = *out + 1;
    {
      char f[24], t[24];
      int fl = snprintf(f, sizeof f, "%" PRId64, pid),
          tl = snprintf(t, sizeof t, "%" PRId64, *out);
      note_remap(m, input, f, (size_t)fl, t, (size_t)tl);
    }
  }
  (void)out_taken(m, *out, 1);
  m->pids[i].used = 1;
  m->pids[i].input = input;
  m->pids[i].pid = pid;
  m->pids[i].out = *out;
  m->npids++;
  return 0;
}

/* The variant k (>= 1) of the string pid token tok[0..len) for input:
 * " #N" (k 1) or " #N.K" before its closing quote, into m->pidtok. */
static int spid_variant(struct merge *m, const char *tok, size_t len,
                        unsigned input, unsigned k, size_t *out)
{
  char suffix[40];
  int n = k == 1 ? snprintf(suffix, sizeof suffix, " #%u\"", input + 1)
                 : snprintf(suffix, sizeof suffix, " #%u.%u\"", input + 1,
                            k);

  if (m->pidtok.cap < len + (size_t)n) {
    char *p = realloc(m->pidtok.p, len + (size_t)n);
    if (!p)
      return -1;
    m->pidtok.p = p;
    m->pidtok.cap = len + (size_t)n;
  }
  memcpy(m->pidtok.p, tok, len - 1);
  memcpy(m->pidtok.p + len - 1, suffix, (size_t)n);
  *out = len - 1 + (size_t)n;
  return 0;
}

/* 1 if the string pid whose token hashes to h is written by an input
 * already; with take, take it. */
static int spid_taken(struct merge *m, uint64_t h, int take)
{
  size_t i;

  h |= h == 0;
  for (i = h & (PID_SLOTS - 1); m->sused[i]; i = (i + 1) & (PID_SLOTS - 1))
    if (m->sused[i] == h)
      return 1;
  if (take)
    m->sused[i] = h;
  return 0;
}

/* The token to write for input's string pid tok[0..len) (with its
 * quotes): *out, *outlen (tok itself, or m->pidtok).  0, or -1 on
 * error (m->err set). */
static int map_spid(struct merge *m, unsigned input, const char *tok,
                    size_t len, const char **out, size_t *outlen)
{
  uint64_t h = twt_rec_hash(tok, len, 11);
  size_t i, vl;
  unsigned k;

  if (!m->spids) {
    m->spids = calloc(PID_SLOTS, sizeof *m->spids);
    m->sused = calloc(PID_SLOTS, sizeof *m->sused);
    if (!m->spids || !m->sused) {
      m->err = twt_cmd_error(CMD, "out of memory");
      return -1;
    }
  }
  *out = tok;
  *outlen = len;
  for (i = (h ^ pid_hash(input, 0)) & (PID_SLOTS - 1); m->spids[i].used;
       i = (i + 1) & (PID_SLOTS - 1)) {
    if (m->spids[i].input == input && m->spids[i].h == h) {
      k = m->spids[i].k;
      if (k && spid_variant(m, tok, len, input, k, &vl) == 0) {
        *out = m->pidtok.p;
        *outlen = vl;
      } else if (k) {
        m->err = twt_cmd_error(CMD, "out of memory");
        return -1;
      }
      return 0;
    }
  }
  if (m->npids >= TW_MERGE_PIDS_MAX) {
    m->err = twt_cmd_error(CMD, "%s: more than %u processes (pids) in the "
                           "inputs: cannot keep them apart",
                           m->in[input].name, TW_MERGE_PIDS_MAX);
    return -1;
  }
  k = 0;
  if (spid_taken(m, h, 0)) {
    for (k = 1;; k++) {
      if (spid_variant(m, tok, len, input, k, &vl) != 0) {
        m->err = twt_cmd_error(CMD, "out of memory");
        return -1;
      }
      if (!spid_taken(m, twt_rec_hash(m->pidtok.p, vl, 11), 0))
        break;
    }
    *out = m->pidtok.p;
    *outlen = vl;
    note_remap(m, input, tok, len, *out, *outlen);
  }
  (void)spid_taken(m, twt_rec_hash(*out, *outlen, 11), 1);
  m->spids[i].used = 1;
  m->spids[i].input = input;
  m->spids[i].h = h;
  m->spids[i].k = k;
  m->npids++;
  return 0;
}

/* ============================================================ order
 *
 * Each input's held records are in two parts: a run, in the order read,
 * of those whose ts is at least that of the record before them in it
 * (an input is nearly sorted: most records), and a min-heap of the
 * others (ts, then order read).  The input's least record is the head
 * of one or the top of the other.  A small heap over the inputs, keyed
 * by their least record (ts, then input), gives the next record to
 * write: a step costs a compare or two and the log of the number of
 * inputs, not of the records held.
 */

/* 1 if a comes before b within one input. */
static int before(const struct entry *a, const struct entry *b)
{
  return a->ts != b->ts ? a->ts < b->ts : a->seq < b->seq;
}

/* The least record held by in, or NULL. */
static struct entry *in_least(const struct input *in)
{
  struct entry *a = in->run.len ? ring_at(&in->run, 0) : NULL;
  struct entry *b = in->late_len ? in->late[0] : NULL;

  if (!a)
    return b;
  return b && before(b, a) ? b : a;
}

/* Hold e in its input.  0, or -1 when out of memory. */
static int hold(struct merge *m, struct entry *e)
{
  struct input *in = &m->in[e->input];
  size_t i;

  if (!in->run.len || e->ts >= ring_at(&in->run, in->run.len - 1)->ts)
    return ring_push(&in->run, e);
  if (in->late_len == in->late_cap) {
    size_t cap = in->late_cap ? 2 * in->late_cap : 64;
    struct entry **h = realloc(in->late, cap * sizeof *h);
    if (!h)
      return -1;
    in->late = h;
    in->late_cap = cap;
  }
  for (i = in->late_len++; i > 0; i = (i - 1) / 2) {
    struct entry *parent = in->late[(i - 1) / 2];
    if (!before(e, parent))
      break;
    in->late[i] = parent;
  }
  in->late[i] = e;
  return 0;
}

/* Take the least record held by in (there is one). */
static struct entry *take_least(struct input *in)
{
  struct entry *e = in_least(in), *last;
  size_t i = 0, n;

  if (in->run.len && e == ring_at(&in->run, 0)) {
    ring_drop(&in->run);
    return e;
  }
  last = in->late[--in->late_len];
  n = in->late_len;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n)
      break;
    if (c + 1 < n && before(in->late[c + 1], in->late[c]))
      c++;
    if (!before(in->late[c], last))
      break;
    in->late[i] = in->late[c];
    i = c;
  }
  if (n)
    in->late[i] = last;
  return e;
}

/* 1 if input a's least record comes before input b's. */
static int input_before(const struct merge *m, unsigned a, unsigned b)
{
  const struct entry *x = in_least(&m->in[a]), *y = in_least(&m->in[b]);

  return x->ts != y->ts ? x->ts < y->ts : a < b;
}

/* Move the input at slot i of the heap of inputs down to its place. */
static void inputs_down(struct merge *m, size_t i)
{
  unsigned v = m->iheap[i];
  size_t n = m->iheap_len;

  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n)
      break;
    if (c + 1 < n && input_before(m, m->iheap[c + 1], m->iheap[c]))
      c++;
    if (!input_before(m, m->iheap[c], v))
      break;
    m->iheap[i] = m->iheap[c];
    i = c;
  }
  m->iheap[i] = v;
}

/* The heap of the inputs that hold records.  0, or -1 (out of memory). */
static int inputs_build(struct merge *m)
{
  if (!(m->iheap = malloc((m->n ? m->n : 1) * sizeof *m->iheap)))
    return -1;
  m->iheap_len = 0;
  for (unsigned i = 0; i < m->n; i++)
    if (in_least(&m->in[i]))
      m->iheap[m->iheap_len++] = i;
  for (size_t i = m->iheap_len / 2; i-- > 0;)
    inputs_down(m, i);
  return 0;
}

/* ========================================================== windows */

/* Bytes of the input's JSON the held records span. */
static uint64_t span(const struct input *in)
{
  return in->fifo.len ? in->end_pos - ring_at(&in->fifo, 0)->pos : 0;
}

/* A spare entry holds the next spare of its class in its first bytes. */
static struct entry *spare_next(const struct entry *e)
{
  struct entry *next;

  memcpy(&next, (const void *)e, sizeof next);
  return next;
}

static void spare_link(struct entry *e, struct entry *next)
{
  memcpy((void *)e, &next, sizeof next);
}

/* A new entry for a record of len bytes (its fields not set), or
 * NULL. */
static struct entry *entry_new(struct merge *m, size_t len)
{
  size_t k = entry_class(len);
  struct entry *e;

  if (k < ENTRY_CLASSES && (e = m->spare[k]) != NULL) {
    m->spare[k] = spare_next(e);
    return e;
  }
  return malloc((k + 1) * ENTRY_STEP);
}

/* Free e: kept for the next entry of its size class. */
static void entry_free(struct merge *m, struct entry *e)
{
  size_t k = entry_class(e->len);

  if (k < ENTRY_CLASSES) {
    spare_link(e, m->spare[k]);
    m->spare[k] = e;
  } else {
    free(e);
  }
}

/* Free the spare entries. */
static void entries_free(struct merge *m)
{
  for (size_t k = 0; k < ENTRY_CLASSES; k++)
    while (m->spare[k]) {
      struct entry *e = m->spare[k];
      m->spare[k] = spare_next(e);
      free(e);
    }
}

/* Free the written records at the head of the input's fifo. */
static void fifo_release(struct merge *m, struct input *in)
{
  while (in->fifo.len && ring_at(&in->fifo, 0)->released) {
    entry_free(m, ring_at(&in->fifo, 0));
    ring_drop(&in->fifo);
  }
}

/* ========================================================== records */

static int write_text(struct merge *m, const char *text, size_t len)
{
  if (twt_out_record(m->out, m->form, text, len) != 0) {
    m->err = twt_cmd_output_error(CMD, m->out);
    return -1;
  }
  return 0;
}

/* The output's clock record: the reference's, moved by its offset. */
static int write_clock(struct merge *m, unsigned input,
                       const struct twt_tin_clock *ck, int64_t offset)
{
  tw__fmt_config cfg = { 0, 4096 };
  char rec[512];
  int64_t mono = ck->mono + offset, pid = ck->pid;
  size_t len;

  m->out_delta = ck->real - mono;
  if (mono < 0) {
    if (!m->c->quiet)
      fprintf(stderr, TWT_CLI_PROGRAM " " CMD ": %s: its clock record "
              "moved before 0: the output has no clock record\n",
              m->in[input].name);
    return 0;
  }
  if (map_pid(m, input, ck->pid, &pid) != 0)
    return -1;
  if (tw__layout_clock_record_of(&cfg, (uint64_t)mono, (uint64_t)ck->real,
                                 0, 0, pid, ck->tid, rec, sizeof rec,
                                 &len) != 0) {
    m->err = twt_cmd_error(CMD, "cannot format the clock record");
    return -1;
  }
  return write_text(m, rec + TW__LAYOUT_SEP_LEN, len - TW__LAYOUT_SEP_LEN);
}

/* The time base of the input's document, from its members: a Kineto
 * trace (RULE_KINETO_*, *delta set) or RULE_NONE. */
static enum rule kineto_rule(const struct input *in, int64_t *delta)
{
  char v[64];
  size_t n = twt_tin_member(in->tin, "baseTimeNanoseconds", v, sizeof v);

  if (n && twt_rec_int(v, n, delta) == 0)
    return RULE_KINETO_BASE;
  if (twt_tin_member(in->tin, "schemaVersion", v, sizeof v)) {
    *delta = 0;
    return RULE_KINETO_EPOCH;
  }
  return RULE_NONE;
}

/* The output's clock record for a reference without one of its own (a
 * Kineto trace): at its first event's ts, ts_ns, with realtime ts_ns +
 * delta. */
static int write_clock(struct merge *m, unsigned input,
                       const struct twt_tin_clock *ck, int64_t offset);

/* Decide the input's shift, at its first event, whose ts (ns, if it has
 * one) is first_ts. */
static int decide_shift(struct merge *m, unsigned i, const twt_rec *first)
{
  struct input *in = &m->in[i];
  const struct twt_tin_clock *ck = twt_tin_clock(in->tin);

  in->shift_known = 1;
  if (in->has_offset) {
    in->rule = RULE_OFFSET;
    in->shift = in->offset;
    return 0;
  }
  if (ck->known) {
    in->rule = RULE_CLOCK;
    in->delta = ck->real - ck->mono;
  } else {
    in->rule = kineto_rule(in, &in->delta);
  }
  if (in->rule == RULE_NONE) {
    in->shift = 0;
    in->no_clock = 1;
    if (!m->c->quiet)
      fprintf(stderr, TWT_CLI_PROGRAM " " CMD ": %s: no clock record and no "
              "baseTimeNanoseconds before its first event: merged as it "
              "is (--offset %s=DURATION moves it)\n", in->name, in->name);
    return 0;
  }
  if (m->ref < 0) {                 /* the first time base: the reference */
    struct twt_tin_clock made;
    m->ref = (int)i;
    m->out_delta = in->delta;
    in->shift = 0;
    if (in->rule == RULE_CLOCK || !(first->has & TWT_REC_TS) ||
        first->ts < 0)
      return 0;
    memset(&made, 0, sizeof made);
    made.known = 1;
    made.mono = first->ts;
    made.real = first->ts + in->delta;
    made.pid = (first->has & TWT_REC_PID) ? first->pid : 0;
    made.tid = (first->has & TWT_REC_TID) ? first->tid : 0;
    return write_clock(m, i, &made, 0);
  }
  in->shift = in->delta - m->out_delta;
  return 0;
}

/* Read one record of input i: written at once, or held.  1, 0 at its
 * end, -1 on error (m->err set). */
static int pull(struct merge *m, unsigned i)
{
  struct input *in = &m->in[i];
  twt_tin_rec rec;
  const char *text;
  struct entry *e;
  int64_t shift;
  const char *pidtok = NULL;
  char pidtext[24];
  size_t len, pidlen = 0;
  int rc;

  if ((rc = twt_tin_next(in->tin, &rec)) <= 0) {
    if (rc < 0) {
      m->err = twt_cmd_input_error(CMD, in->tin);
      return -1;
    }
    in->eof = 1;
    return 0;
  }
  if (rec.kind == TWT_TIN_CLOCK) {
    if (m->ref < 0) {
      m->ref = (int)i;
      in->rule = in->has_offset ? RULE_OFFSET : RULE_CLOCK;
      in->delta = twt_tin_clock(in->tin)->real - twt_tin_clock(in->tin)->mono;
      return write_clock(m, i, twt_tin_clock(in->tin),
                         in->has_offset ? in->offset : 0) ? -1 : 1;
    }
    return 1;                     /* one clock record in the output */
  }
  if (rec.kind == TWT_TIN_EVENT && !in->shift_known &&
      decide_shift(m, i, &rec.r) != 0)
    return -1;
  shift = in->shift_known ? in->shift + rec.shift : rec.shift;
  if (rec.r.has & TWT_REC_PID) {
    int64_t pid;
    if (in->last_pid_known && in->last_pid == rec.r.pid) {
      pid = in->last_out;           /* most records: the pid before */
    } else {
      if (map_pid(m, i, rec.r.pid, &pid) != 0)
        return -1;
      in->last_pid_known = 1;
      in->last_pid = rec.r.pid;
      in->last_out = pid;
    }
    if (pid != rec.r.pid) {
      pidlen = int_text(pid, pidtext);
      pidtok = pidtext;
    }
  } else if (rec.r.pid_v.len && rec.r.text[rec.r.pid_v.off] == '"') {
    if (map_spid(m, i, rec.r.text + rec.r.pid_v.off, rec.r.pid_v.len,
                 &pidtok, &pidlen) != 0)
      return -1;
  }
  if (twt_cmd_rewrite(&rec.r, shift, pidtok, pidlen, &m->buf, &text,
                      &len) != 0) {
    m->err = twt_cmd_error(CMD, "out of memory");
    return -1;
  }
  if (!(rec.r.has & TWT_REC_TS) || rec.kind != TWT_TIN_EVENT)
    return write_text(m, text, len) ? -1 : 1;
  if (!(e = entry_new(m, len))) {
    m->err = twt_cmd_error(CMD, "out of memory");
    return -1;
  }
  e->ts = rec.r.ts + shift;
  {
    int64_t last = e->ts + (rec.r.ph == 'X' && (rec.r.has & TWT_REC_DUR) &&
                            rec.r.dur > 0 ? rec.r.dur : 0);
    if (!in->any_ts || e->ts < in->min_ts)
      in->min_ts = e->ts;
    if (!in->any_ts || last > in->max_ts)
      in->max_ts = last;
    in->any_ts = 1;
  }
  e->seq = m->seq++;
  e->pos = rec.pos;
  e->input = i;
  e->released = 0;
  e->len = len;
  memcpy(e->text, text, len);
  in->end_pos = rec.pos + rec.r.len;
  if (ring_push(&in->fifo, e) != 0) {
    entry_free(m, e);
    m->err = twt_cmd_error(CMD, "out of memory");
    return -1;
  }
  if (hold(m, e) != 0) {
    e->released = 1;              /* freed with the fifo */
    m->err = twt_cmd_error(CMD, "out of memory");
    return -1;
  }
  return 1;
}

/* Read input i until its window is full or it ends. */
static int fill(struct merge *m, unsigned i)
{
  struct input *in = &m->in[i];
  int rc;

  while (!in->eof && span(in) < m->window)
    if ((rc = pull(m, i)) < 0)
      return -1;
  return 0;
}

/* Write the held record with the least ts. */
static int write_least(struct merge *m)
{
  unsigned input = m->iheap[0];
  struct input *in = &m->in[input];
  struct entry *e = take_least(in);

  if (m->any_ts && e->ts < m->last_ts) {
    m->late++;
    if (m->last_ts - e->ts > m->max_lag)
      m->max_lag = m->last_ts - e->ts;
  } else {
    m->last_ts = e->ts;
    m->any_ts = 1;
  }
  if (write_text(m, e->text, e->len) != 0)
    return -1;
  e->released = 1;
  fifo_release(m, in);              /* may free e */
  if (fill(m, input) != 0)
    return -1;
  /* Its least record changed: its place among the inputs too. */
  if (!in_least(in) && --m->iheap_len > 0)
    m->iheap[0] = m->iheap[m->iheap_len];
  if (m->iheap_len)
    inputs_down(m, 0);
  return 0;
}

/* ======================================================== the first
 *
 * The first input keeps its pids, wherever in it they first appear: its
 * pids are taken for it before any record is read (a first pass over it
 * that reads only them), so that an input after it that has one too is
 * the one written anew. */
static int reserve_first_pids(struct merge *m)
{
  struct twt_tin_options to;
  size_t n = twt_tin_files(m->in[0].tin);
  char **paths = malloc((n ? n : 1) * sizeof *paths);
  twt_tin_rec rec;
  twt_tin *t;
  char msg[512];
  int rc;

  if (!paths) {
    m->err = twt_cmd_error(CMD, "out of memory");
    return -1;
  }
  for (size_t i = 0; i < n; i++)
    paths[i] = (char *)twt_tin_file(m->in[0].tin, i);
  memset(&to, 0, sizeof to);
  to.max_record = m->c->max_record;
  to.no_parts = 1;
  to.quiet = 1;
  rc = twt_tin_open(&t, paths, n, &to, msg, sizeof msg);
  free(paths);
  if (rc != 0)
    return 0;                     /* the reading proper will say it */
  while ((rc = twt_tin_next(t, &rec)) > 0) {
    int64_t out;
    const char *tok;
    size_t toklen;
    if (rec.r.has & TWT_REC_PID) {
      if (map_pid(m, 0, rec.r.pid, &out) != 0)
        break;
    } else if (rec.r.pid_v.len && rec.r.text[rec.r.pid_v.off] == '"') {
      if (map_spid(m, 0, rec.r.text + rec.r.pid_v.off, rec.r.pid_v.len,
                   &tok, &toklen) != 0)
        break;
    }
  }
  twt_tin_close(t);
  return m->err ? -1 : 0;
}

/* ======================================================= the members
 *
 * The output takes the object form when an input has it, with the
 * members of the inputs' documents that still hold for the whole:
 * baseTimeNanoseconds only the reference's, when the output is on its
 * time base (a PyTorch trace's); distributedInfo only when one input has
 * it (one rank merged; with several, each rank's processes are labelled
 * "rank N" instead); any other member when every input that has it has
 * the same value (schemaVersion, displayTimeUnit ...), once; written in
 * the order of their keys, so that the output is the same whatever
 * order the members stood in, before the events or after them. */

/* The members of input i's document, as an object "{...}" (malloc'ed),
 * or NULL. */
static char *input_members(const struct merge *m, size_t i, size_t *len)
{
  size_t tl;
  const char *t = twt_tin_tail(m->in[i].tin, &tl);
  char *obj;

  *len = 0;
  if (!twt_tin_object_form(m->in[i].tin) || tl < 4 || t[0] != ']' ||
      t[1] != ',' || t[tl - 1] != '}')
    return NULL;
  if (!(obj = malloc(tl)))
    return NULL;
  obj[0] = '{';
  memcpy(obj + 1, t + 2, tl - 2);   /* "k":v...} */
  *len = tl - 1;
  if (twt_json_check(obj, *len, TWT_RECORD_DEPTH + 64, NULL) != 0) {
    free(obj);
    *len = 0;
    return NULL;
  }
  return obj;
}

struct member_kept {
  const char *key, *val;
  size_t klen, vlen;
};

struct member_walk {
  struct merge *m;
  char **objs;
  size_t *lens;
  size_t input;
  struct member_kept *kept;  /* the members to write */
  size_t nkept, cap;
};

/* By key: the output the same whatever order the inputs had them in. */
static int kept_cmp(const void *a, const void *b)
{
  const struct member_kept *x = a, *y = b;
  size_t n = x->klen < y->klen ? x->klen : y->klen;
  int c = memcmp(x->key, y->key, n);

  return c ? c : (x->klen > y->klen) - (x->klen < y->klen);
}

static int buf_add(twt_cmd_buf *b, size_t *len, const char *p, size_t n)
{
  if (*len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    char *q;
    while (cap < *len + n)
      cap *= 2;
    if (!(q = realloc(b->p, cap)))
      return -1;
    b->p = q;
    b->cap = cap;
  }
  memcpy(b->p + *len, p, n);
  *len += n;
  return 0;
}

/* Decide one member of input w->input (not met in an input before). */
static int member_take(void *arg, const char *key, size_t klen,
                       twt_rec_span v)
{
  struct member_walk *w = arg;
  struct merge *m = w->m;
  const char *val = w->objs[w->input] + v.off;
  char k[64];
  size_t have = 0;
  int same = 1;

  if (klen >= sizeof k)
    return 0;                     /* no member of the format's */
  memcpy(k, key, klen);
  k[klen] = '\0';
  for (size_t j = 0; j < m->n; j++) {
    twt_rec_span o;
    if (!w->objs[j])
      continue;
    o = twt_rec_member(w->objs[j], w->lens[j], k);
    if (!o.len)
      continue;
    if (j < w->input)
      return 0;                   /* decided with an input before */
    have++;
    if (o.len != v.len || memcmp(w->objs[j] + o.off, val, v.len) != 0)
      same = 0;
  }
  if (strcmp(k, "baseTimeNanoseconds") == 0) {
    if (m->ref != (int)w->input || m->in[w->input].rule != RULE_KINETO_BASE)
      return 0;
  } else if (strcmp(k, "distributedInfo") == 0) {
    if (have != 1)
      return 0;
  } else if (!same) {
    return 0;
  }
  if (w->nkept == w->cap) {
    size_t cap = w->cap ? 2 * w->cap : 16;
    struct member_kept *k2 = realloc(w->kept, cap * sizeof *k2);
    if (!k2)
      return -1;
    w->kept = k2;
    w->cap = cap;
  }
  w->kept[w->nkept++] = (struct member_kept){ key, val, klen, v.len };
  return 0;
}

/* The "rank N" of input i's distributedInfo, or -1. */
static int64_t input_rank(const char *obj, size_t len)
{
  twt_rec_span d = twt_rec_member(obj, len, "distributedInfo"), r;
  int64_t rank;

  if (!d.len || obj[d.off] != '{')
    return -1;
  r = twt_rec_member(obj + d.off, d.len, "rank");
  if (!r.len || twt_rec_int(obj + d.off + r.off, r.len, &rank) != 0)
    return -1;
  return rank;
}

/* The output's tail, and with several ranks their processes'
 * labels. */
static int make_tail(struct merge *m)
{
  char **objs = calloc(m->n, sizeof *objs);
  size_t *lens = calloc(m->n, sizeof *lens), ranks = 0;
  int rc = 0;

  m->tail_len = 0;
  if (!objs || !lens) {
    free(objs);
    free(lens);
    return -1;
  }
  for (size_t i = 0; i < m->n; i++)
    if ((objs[i] = input_members(m, i, &lens[i])) &&
        input_rank(objs[i], lens[i]) >= 0)
      ranks++;
  rc = buf_add(&m->tail, &m->tail_len, "]", 1);
  if (m->form) {                  /* an array has no place for them */
    struct member_walk w = { m, objs, lens, 0, NULL, 0, 0 };
    for (size_t i = 0; rc == 0 && i < m->n; i++) {
      w.input = i;
      if (objs[i] && twt_rec_each(objs[i], lens[i], member_take, &w) != 0)
        rc = -1;
    }
    if (w.nkept > 1)
      qsort(w.kept, w.nkept, sizeof *w.kept, kept_cmp);
    for (size_t k = 0; rc == 0 && k < w.nkept; k++)
      if (buf_add(&m->tail, &m->tail_len, ",\"", 2) != 0 ||
          buf_add(&m->tail, &m->tail_len, w.kept[k].key,
                  w.kept[k].klen) != 0 ||
          buf_add(&m->tail, &m->tail_len, "\":", 2) != 0 ||
          buf_add(&m->tail, &m->tail_len, w.kept[k].val,
                  w.kept[k].vlen) != 0)
        rc = -1;
    free(w.kept);
  }
  if (rc == 0 && m->form)
    rc = buf_add(&m->tail, &m->tail_len, "}", 1);
  /* Several ranks: each one's processes labelled with it. */
  for (size_t i = 0; rc == 0 && ranks > 1 && i < m->n; i++) {
    int64_t rank = objs[i] ? input_rank(objs[i], lens[i]) : -1;
    for (size_t s = 0; rc == 0 && rank >= 0 && m->pids && s < PID_SLOTS;
         s++) {
      char rec[160];
      int n;
      if (!m->pids[s].used || m->pids[s].input != i)
        continue;
      n = snprintf(rec, sizeof rec, "{\"ph\":\"M\",\"name\":"
                   "\"process_labels\",\"pid\":%" PRId64 ",\"args\":"
                   "{\"labels\":\"rank %" PRId64 "\"}}", m->pids[s].out,
                   rank);
      rc = write_text(m, rec, (size_t)n);
    }
  }
  for (size_t i = 0; i < m->n; i++)
    free(objs[i]);
  free(objs);
  free(lens);
  return rc;
}

/* ========================================================== the run */

static uint64_t done_bytes(const struct merge *m, uint64_t *total,
                           uint64_t *json)
{
  uint64_t done = 0;

  *total = *json = 0;
  for (size_t i = 0; i < m->n; i++) {
    done += twt_tin_done_bytes(m->in[i].tin);
    *total += twt_tin_total_bytes(m->in[i].tin);
    *json += twt_tin_stats(m->in[i].tin)->json_bytes;
  }
  return done;
}

static int run(struct merge *m)
{
  twt_progress progress;
  uint64_t total, json, done;

  twt_progress_init(&progress, CMD);
  for (unsigned i = 0; i < m->n; i++)
    if (fill(m, i) != 0)
      return -1;
  if (inputs_build(m) != 0) {
    m->err = twt_cmd_error(CMD, "out of memory");
    return -1;
  }
  while (m->iheap_len) {
    if (write_least(m) != 0)
      return -1;
    if ((m->seq & 1023) == 0) {
      done = done_bytes(m, &total, &json);
      twt_progress_update(&progress, done, total, json);
    }
  }
  twt_progress_end(&progress);
  return 0;
}

/* A duration for people: "3.2 h", "55.4 years". */
static const char *human_s(int64_t ns, char *buf, size_t size)
{
  double s = (double)ns / 1e9;

  if (s >= 2 * 365.25 * 86400)
    snprintf(buf, size, "%.1f years", s / (365.25 * 86400));
  else if (s >= 2 * 86400)
    snprintf(buf, size, "%.1f days", s / 86400);
  else
    snprintf(buf, size, "%.1f hours", s / 3600);
  return buf;
}

/* Wall-clock ns as "2026-11-27 23:47:16.123" (UTC). */
static const char *wall_text(int64_t ns, char *buf, size_t size)
{
  time_t s = (time_t)(ns / 1000000000 - (ns % 1000000000 < 0));
  int ms = (int)(((ns % 1000000000) + 1000000000) % 1000000000 / 1000000);
  struct tm tm;

  if (!gmtime_r(&s, &tm) ||
      strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm) == 0)
    snprintf(buf, size, "%" PRId64 " ns", ns);
  else
    snprintf(buf + strlen(buf), size - strlen(buf), ".%03d", ms);
  return buf;
}

/* The end of an --explain line: where the input's events landed, on the
 * output's wall clock when it has one (UTC), else in its ts. */
static void explain_range(const struct merge *m, const struct input *in)
{
  char a[TWT_REC_US_MAX + 1], b[TWT_REC_US_MAX + 1];

  if (!in->any_ts) {
    fputs("; no event with a ts\n", stderr);
    return;
  }
  if (m->ref >= 0 && !in->no_clock) {
    char ta[40], tb[40];
    fprintf(stderr, "; its events from %s to %s UTC\n",
            wall_text(in->min_ts + m->out_delta, ta, sizeof ta),
            wall_text(in->max_ts + m->out_delta, tb, sizeof tb));
    return;
  }
  a[twt_rec_us_text(in->min_ts, a)] = '\0';
  b[twt_rec_us_text(in->max_ts, b)] = '\0';
  fprintf(stderr, "; its events from ts %s to %s us\n", a, b);
}

/* One line: the rule that placed input i, and by how much. */
static void explain_input(const struct merge *m, size_t i)
{
  const struct input *in = &m->in[i];
  char d[TWT_REC_US_MAX + 1], why[160];

  d[twt_rec_us_text(in->shift, d)] = '\0';
  switch (in->rule) {
  case RULE_OFFSET:
    snprintf(why, sizeof why, "--offset");
    break;
  case RULE_CLOCK:
    snprintf(why, sizeof why, "its clock record: wall clock = ts + %"
             PRId64 " ns", in->delta);
    break;
  case RULE_KINETO_BASE:
    snprintf(why, sizeof why, "PyTorch profiler trace: wall clock = ts + "
             "baseTimeNanoseconds %" PRId64, in->delta);
    break;
  case RULE_KINETO_EPOCH:
    snprintf(why, sizeof why, "PyTorch profiler trace without "
             "baseTimeNanoseconds: ts are wall-clock us since the epoch");
    break;
  default:
    fprintf(stderr, "  %s: as it is (no clock record, no "
            "baseTimeNanoseconds: its own timeline)", in->name);
    explain_range(m, in);
    return;
  }
  if ((int)i == m->ref && in->rule != RULE_OFFSET)
    fprintf(stderr, "  %s: the reference, not moved (%s)", in->name, why);
  else
    fprintf(stderr, "  %s: moved by %s us (%s)", in->name, d, why);
  explain_range(m, in);
}

#define HOUR_NS ((int64_t)3600 * 1000000000)
#define DAY_NS (24 * HOUR_NS)

/* Inputs placed more than an hour apart, or one that spans more than a
 * day, on the output's clock: most likely a time base misread (a clock
 * record or baseTimeNanoseconds of another machine, an offset of the
 * wrong sign) rather than traces taken so far apart.  A warning names
 * them and the gap. */
static void warn_far_apart(const struct merge *m)
{
  size_t *order, n = 0;
  char a[48], b[48];

  if (m->c->quiet || !(order = malloc(m->n * sizeof *order)))
    return;
  for (size_t i = 0; i < m->n; i++) {
    const struct input *in = &m->in[i];
    if (!in->any_ts)
      continue;
    order[n++] = i;
    if (in->max_ts - in->min_ts > DAY_NS) {
      fprintf(stderr, TWT_CLI_PROGRAM " " CMD ": %s: its events span %s "
              "once placed (more than a day): is its time base right? "
              "(--explain says what placed it)\n", in->name,
              human_s(in->max_ts - in->min_ts, a, sizeof a));
    }
  }
  /* By their first event; a gap between what the inputs before cover
   * and the next one's first event. */
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 &&
         m->in[order[j]].min_ts < m->in[order[j - 1]].min_ts; j--) {
      size_t s = order[j];
      order[j] = order[j - 1];
      order[j - 1] = s;
    }
  for (size_t i = 1, far = 0; i < n; i++) {
    int64_t reach = m->in[order[far]].max_ts;
    for (size_t k = 0; k < i; k++)
      if (m->in[order[k]].max_ts > reach) {
        reach = m->in[order[k]].max_ts;
        far = k;
      }
    if (m->in[order[i]].min_ts - reach > HOUR_NS)
      fprintf(stderr, TWT_CLI_PROGRAM " " CMD ": %s and %s are %s apart "
              "once placed (more than an hour): are their time bases "
              "right? (--explain says what placed each, --offset moves "
              "one)\n", m->in[order[far]].name, m->in[order[i]].name,
              human_s(m->in[order[i]].min_ts - reach, b, sizeof b));
  }
  free(order);
}

/* One line: the pids of input i written anew, if any. */
static void explain_pids(const struct merge *m, size_t i)
{
  const struct input *in = &m->in[i];

  if (!in->remapped)
    return;
  fprintf(stderr, "  %s: %" PRIu64 " %s another input has too, written "
          "anew:", in->name, in->remapped,
          twt_cli_plural(in->remapped, "pid", "pids"));
  for (uint64_t k = 0; k < in->remapped && k < NOTES_MAX; k++)
    fprintf(stderr, "%s %s", k ? "," : "", in->notes[k]);
  if (in->remapped > NOTES_MAX)
    fprintf(stderr, ", ...");
  fputc('\n', stderr);
}

static void summary(const struct merge *m)
{
  char d[TWT_REC_US_MAX + 1], w[32];

  fprintf(stderr, TWT_CLI_PROGRAM " " CMD ": %zu inputs, %" PRIu64 " %s to "
          "%s", m->n, twt_out_records(m->out),
          twt_cli_plural(twt_out_records(m->out), "record", "records"),
          twt_cmd_output_name(m->c));
  if (m->ref >= 0)
    fprintf(stderr, ", on the clock of %s", m->in[m->ref].name);
  fputc('\n', stderr);
  for (size_t i = 0; i < m->n; i++) {
    explain_input(m, i);
    explain_pids(m, i);
  }
  if (m->late) {
    d[twt_rec_us_text(m->max_lag, d)] = '\0';
    twt_format_bytes(m->window, w, sizeof w);
    fprintf(stderr, TWT_CLI_PROGRAM " " CMD ": %" PRIu64 " %s out of ts "
            "order, up to %s us back (more than --window %s behind a "
            "later record in their input)\n", m->late,
            twt_cli_plural(m->late, "record", "records"), d, w);
  }
}

/* "FILE=DURATION": the input named FILE (as given, or the same file). */
static int take_offset(struct merge *m, const char *arg, void (*usage)(FILE *))
{
  const char *eq = strrchr(arg, '=');
  int64_t ns;
  size_t i;

  if (!eq || eq == arg || twt_rec_parse_duration(eq + 1, &ns) != 0)
    return twt_cli_usage_error(CMD, usage, "bad --offset '%s' (FILE="
                               "DURATION, e.g. b.json=-1.5s)", arg);
  for (i = 0; i < m->n; i++) {
    const char *name = m->in[i].name;
    if (strlen(name) == (size_t)(eq - arg) &&
        memcmp(name, arg, (size_t)(eq - arg)) == 0)
      break;
  }
  if (i == m->n) {
    char *file = strndup(arg, (size_t)(eq - arg));
    for (i = 0; file && i < m->n; i++)
      if (twt_tin_has_file(m->in[i].tin, file))
        break;
    free(file);
  }
  if (i == m->n)
    return twt_cli_usage_error(CMD, usage, "--offset '%s': no input FILE "
                               "named so", arg);
  m->in[i].has_offset = 1;
  m->in[i].offset = ns;
  return -1;
}

#define OPT_OFFSET 0x101
#define OPT_EXPLAIN 0x102

const struct twt_cmd_opt twt_tool_merge_options[] = {
  TWT_CMD_COMMON('o', NULL, NULL),
  { "offset", OPT_OFFSET, "FILE=DURATION",
    "move FILE's timestamps by DURATION\n"
    "(e.g. -1.5s, 250us) instead of by its clock\n"
    "record" },
  { "explain", OPT_EXPLAIN, NULL, "say which rule placed each input and by\n"
                                  "how much, and which pids it had written\n"
                                  "anew, even with -q" },
  { "window", 'w', "SIZE", "bytes of each input read ahead to order\n"
                           "records (default: 8MiB)" },
  TWT_CMD_COMMON_REST,
  { NULL, 0, NULL, NULL }
};

static void merge_usage(FILE *out)
{
  fprintf(out,
    "Usage: " TWT_CLI_PROGRAM " merge [-o OUT] [-q] [--offset FILE=DURATION]"
    "...\n"
    "                         [--window SIZE] [--no-parts] [-m SIZE] "
    "FILE...\n"
    "\n"
    "Merge the traces of several processes or machines into one trace, on\n"
    "one timeline.  Each FILE is one input (.json or .json.gz, with the\n"
    "rotated parts beside it), of any producer.  Each input's wall clock\n"
    "is known from its clock record (tracewriter), or from\n"
    "baseTimeNanoseconds (PyTorch profiler: ts are wall-clock us after\n"
    "it; epoch us without it); the first input with one sets the clock,\n"
    "and every other is moved onto it.  Others stay as they are.\n"
    "A pid that an earlier input has is written as a new pid from\n"
    "4194304 (2^22) up, a string pid with \" #N\" added (N: the input's\n"
    "number), names included; --explain lists them.\n"
    "Records are written in ts order: exactly, unless a record comes more\n"
    "than --window bytes after a later one in its input (then it is\n"
    "written when read, and counted).\n"
    "\n");
  twt_cmd_print_options(out, twt_tool_merge_options);
  fprintf(out,
    "\n"
    "Exit status: 0 written, 1 an error, 2 a usage error.\n");
}

int twt_tool_merge_main(int argc, char **argv)
{
  struct twt_cmd_getopt g;
  struct twt_cmd_common c;
  struct merge m;
  twt_tin **tins = NULL;
  const char **offsets = NULL;
  size_t noffsets = 0;
  int opt, status;

  memset(&c, 0, sizeof c);
  memset(&m, 0, sizeof m);
  m.c = &c;
  m.window = DEFAULT_WINDOW;
  m.ref = -1;
  m.next_free = REMAP_BASE;
  if (!(offsets = calloc((size_t)argc + 1, sizeof *offsets)))
    return twt_cmd_error(CMD, "out of memory");
  optind = 0;
  opterr = 0;
  twt_cmd_getopt_init(&g, twt_tool_merge_options);
  while ((opt = getopt_long(argc, argv, g.shorts, g.longs, NULL)) != -1) {
    if (opt == OPT_OFFSET) {
      offsets[noffsets++] = optarg;
      continue;
    }
    if (opt == OPT_EXPLAIN) {
      m.explain = 1;
      continue;
    }
    if (opt == 'w') {
      if (twt_cli_parse_size(optarg, &m.window) != 0 ||
          m.window < MIN_WINDOW) {
        free(offsets);
        return twt_cli_usage_error(CMD, merge_usage, "bad --window '%s' (a "
                                   "size, at least 4KiB)", optarg);
      }
      continue;
    }
    status = twt_cmd_option(CMD, merge_usage, opt, optarg, argv, &c);
    if (status != TWT_CMD_TAKEN) {
      free(offsets);
      return status;
    }
  }
  if (optind >= argc) {
    free(offsets);
    return twt_cli_usage_error(CMD, merge_usage, "no FILE to merge");
  }
  m.n = (size_t)(argc - optind);
  if (!(m.in = calloc(m.n, sizeof *m.in)) ||
      !(tins = calloc(m.n, sizeof *tins))) {
    status = twt_cmd_error(CMD, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < m.n; i++) {
    m.in[i].name = argv[optind + (int)i];
    if ((status = twt_cmd_open_input(CMD, &c, &argv[optind + (int)i], 1,
                                     &m.in[i].tin)) >= 0)
      goto done;
    tins[i] = m.in[i].tin;
    for (size_t j = 0; j < i; j++)
      if (twt_tin_overlaps(tins[i], tins[j])) {
        status = twt_cmd_error(CMD, "%s and %s share a file: give each "
                               "trace once", m.in[j].name, m.in[i].name);
        goto done;
      }
  }
  for (size_t k = 0; k < noffsets; k++)
    if ((status = take_offset(&m, offsets[k], merge_usage)) >= 0)
      goto done;
  if ((status = twt_cmd_open_output(CMD, &c, tins, m.n, &m.out)) >= 0)
    goto done;
  status = TWT_CLI_OK;
  for (size_t i = 0; i < m.n; i++)
    if (twt_tin_peek_form(m.in[i].tin) == 1)
      m.form = 1;
  if ((m.n > 1 && reserve_first_pids(&m) != 0) || run(&m) != 0) {
    status = m.err ? m.err : TWT_CLI_RUNTIME;
    goto done;
  }
  if (make_tail(&m) != 0) {
    status = m.err ? m.err : twt_cmd_error(CMD, "out of memory");
    goto done;
  }
  if ((status = twt_cmd_finish_output(CMD, m.out, m.form, m.tail.p,
                                      m.tail_len)) != 0)
    goto done;
  warn_far_apart(&m);
  if (!c.quiet)
    summary(&m);
  else if (m.explain)
    for (size_t i = 0; i < m.n; i++) {
      explain_input(&m, i);
      explain_pids(&m, i);
    }
done:
  /* Every record held is in its input's fifo. */
  for (size_t i = 0; m.in && i < m.n; i++) {
    struct input *in = &m.in[i];
    for (size_t k = 0; k < in->fifo.len; k++)
      entry_free(&m, ring_at(&in->fifo, k));
    free(in->fifo.v);
    free(in->run.v);
    free(in->late);
    twt_tin_close(m.in[i].tin);
  }
  entries_free(&m);
  free(m.iheap);
  free(m.pids);
  free(m.used);
  free(m.spids);
  free(m.sused);
  twt_cmd_buf_free(&m.pidtok);
  twt_cmd_buf_free(&m.tail);
  free(m.in);
  free(tins);
  free(offsets);
  twt_cmd_buf_free(&m.buf);
  twt_out_close(m.out);
  return status;
}
