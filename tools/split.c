/* split.c -- "tracewriter split": a big trace cut into parts a viewer
 * opens
 *
 * The input (tools/tracein.h, any trace of any producer) is read once, in
 * order, and its records written to parts named like rotated files (OUT
 * with ".NNNNNN" before its extension, src/layout.h).  A new part begins
 * before an event when the current part holds --size bytes or more, or
 * when the event's ts is --every past the current part's first one.
 *
 *   - Every part begins with the clock record and every metadata record
 *     (process and thread names, sort indexes) read so far, so that each
 *     opens alone with its names; a metadata record read later goes to
 *     the part being written (and every later one).
 *   - A complete event belongs to the part where it begins, whole.  A B/E
 *     pair and an async span (b/e, S/F) too: the end goes to the part of
 *     its beginning, which stays open until its spans end (at most
 *     OPEN_MAX parts at once; past that the oldest is finished and the
 *     ends of its spans go to the part being written, counted).  An async
 *     end read before its beginning (each thread commits its own buffer)
 *     is held until it, and written after it, in its part.  Other
 *     records go to the part being written.
 *   - Every part carries the document's members besides its events, all
 *     of them, those after the events too (tracein finds them before the
 *     first part is finished).
 *   - So the parts together hold every event of the input once, and cat
 *     of the parts (which writes repeated metadata once) gives the input's
 *     events back.
 *
 * Memory: the metadata records (at most TWT_TIN_META_MAX), the open spans
 * (a stack of part numbers per key, at most SPANS_MAX keys open at once:
 * a key is freed when its spans end), the async ends held (PEND_MAX
 * bytes), one output per open part.
 */
#include "config.h"

#include "command.h"
#include "jsonscan.h"     /* twt_json_compact */
#include "rotate.h"       /* tw__rotated_name */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define CMD "split"
#define OPEN_MAX 256u             /* parts open at once */
#define SPAN_SLOTS 65536u         /* a power of two */
#define SPANS_MAX (SPAN_SLOTS / 2)
#define MIN_SIZE ((uint64_t)4096)
#define PEND_MAX ((size_t)64 * 1024 * 1024) /* async ends held */

struct part {
  twt_out *o;               /* NULL once finished */
  unsigned long n;         /* its number (from 1) */
  uint64_t open_spans;     /* spans begun in it, not ended */
  uint64_t bytes;          /* JSON bytes of its records */
  int done;                /* no new record goes to it */
};

struct span_slot {
  uint64_t key;            /* 0: empty */
  size_t *stack;           /* the parts of the spans open, innermost last */
  size_t depth, cap;
  char **pend;             /* async ends read before their beginning (each
                              thread commits its own buffer), oldest
                              first: written after it, in its part */
  size_t *pend_len;
  size_t npend, pend_cap;
};

struct split {
  const struct twt_cmd_common *c;
  twt_tin *in;
  const char *out_name;
  uint64_t size;           /* --size (0: none) */
  int64_t every;           /* --every ns (0: none) */
  struct part *parts;
  size_t nparts, cap, cur, open;
  int64_t part_start;      /* the ts of the current part's first event */
  int part_started;
  char **meta;             /* the metadata records, and the clock record */
  size_t *meta_len, nmeta, meta_cap;
  struct span_slot *spans;
  size_t nspans;
  uint64_t broken;         /* span ends that could not join their part */
  uint64_t lone_ends;      /* async ends whose beginning never came */
  size_t pend_bytes;       /* bytes of the ends held */
  uint64_t events;
  twt_cmd_buf buf;
  twt_cmd_buf tail;         /* a part's tail */
  int err;                 /* an exit status, or 0 */
};

/* ============================================================ parts */

/* The tail of a part: at the end of the input, the input's; before, for
 * the object form, "]", the members read so far, "}" (into sp->tail);
 * NULL: the bracket of the form. */
static const char *part_tail(struct split *sp, size_t *len)
{
  size_t tl, ml;
  const char *t = twt_tin_tail(sp->in, &tl);
  const char *m = twt_tin_members(sp->in, &ml);

  *len = 0;
  if (t && tl && !m) {
    *len = tl;
    return t;
  }
  if (!twt_tin_object_form(sp->in))
    return NULL;
  if (!m) {
    m = "";
    ml = 0;
  }
  if (ml + 2 > sp->tail.cap) {
    char *p = realloc(sp->tail.p, ml + 2);
    if (!p)
      return NULL;
    sp->tail.p = p;
    sp->tail.cap = ml + 2;
  }
  sp->tail.p[0] = ']';
  *len = 1 + twt_json_compact(sp->tail.p + 1, m, ml);
  if (*len > 1) {                 /* in the order of their keys, as the */
    char *sorted = malloc(*len);  /* input's tail has them */
    if (sorted && twt_rec_sort_members(sorted, sp->tail.p + 1, *len - 1))
      memcpy(sp->tail.p + 1, sorted, *len - 1);
    free(sorted);
  }
  sp->tail.p[(*len)++] = '}';
  return sp->tail.p;
}

/* Finish part i: its tail, commit. */
static int finish_part(struct split *sp, size_t i)
{
  struct part *p = &sp->parts[i];
  size_t tl;
  const char *tail;
  int rc;

  if (!p->o)
    return 0;
  tail = part_tail(sp, &tl);
  rc = twt_cmd_finish_tin(CMD, p->o, twt_tin_object_form(sp->in), tail, tl,
                          sp->in, sp->c->quiet);
  twt_out_close(p->o);
  p->o = NULL;
  sp->open--;
  if (rc != 0)
    sp->err = rc;
  return rc ? -1 : 0;
}

static int put(struct split *sp, size_t i, const char *text, size_t len);

/* Begin a new part: it becomes the current one, with the clock and
 * metadata records so far. */
static int new_part(struct split *sp)
{
  struct twt_cmd_common c = *sp->c;
  size_t size = strlen(sp->out_name) + 32;
  char *name = malloc(size);
  struct part *p;
  int rc;

  if (!name) {
    sp->err = twt_cmd_error(CMD, "out of memory");
    return -1;
  }
  if (sp->nparts == sp->cap) {
    size_t cap = sp->cap ? 2 * sp->cap : 16;
    struct part *q = realloc(sp->parts, cap * sizeof *q);
    if (!q) {
      free(name);
      sp->err = twt_cmd_error(CMD, "out of memory");
      return -1;
    }
    sp->parts = q;
    sp->cap = cap;
  }
  p = &sp->parts[sp->nparts];
  memset(p, 0, sizeof *p);
  p->n = (unsigned long)sp->nparts + 1;
  if (tw__rotated_name(name, size, sp->out_name, p->n) != 0) {
    free(name);
    sp->err = twt_cmd_error(CMD, "%s: name too long", sp->out_name);
    return -1;
  }
  c.output = name;
  rc = twt_cmd_open_output(CMD, &c, &sp->in, 1, &p->o);
  free(name);
  if (rc >= 0) {
    sp->err = rc;
    return -1;
  }
  sp->nparts++;
  sp->open++;
  /* The part being written so far is done; finish it if no span of it
   * is open. */
  if (sp->nparts > 1) {
    struct part *old = &sp->parts[sp->cur];
    old->done = 1;
    if (old->open_spans == 0 && finish_part(sp, sp->cur) != 0)
      return -1;
  }
  sp->cur = sp->nparts - 1;
  sp->part_started = 0;
  /* Too many open: the oldest done part is finished anyway. */
  for (size_t i = 0; sp->open > OPEN_MAX && i < sp->cur; i++)
    if (sp->parts[i].o) {
      sp->broken += sp->parts[i].open_spans;
      if (finish_part(sp, i) != 0)
        return -1;
    }
  for (size_t i = 0; i < sp->nmeta; i++)
    if (put(sp, sp->cur, sp->meta[i], sp->meta_len[i]) != 0)
      return -1;
  return 0;
}

/* Write text to part i. */
static int put(struct split *sp, size_t i, const char *text, size_t len)
{
  sp->parts[i].bytes += len + 2;
  if (twt_out_record(sp->parts[i].o, twt_tin_object_form(sp->in), text,
                     len) != 0) {
    sp->err = twt_cmd_output_error(CMD, sp->parts[i].o);
    return -1;
  }
  return 0;
}

/* Keep a metadata (or the clock) record for the parts to come. */
static int keep_meta(struct split *sp, const char *text, size_t len)
{
  char *copy;

  if (sp->nmeta >= TWT_TIN_META_MAX)
    return 0;                     /* written once, not repeated */
  if (sp->nmeta == sp->meta_cap) {
    size_t cap = sp->meta_cap ? 2 * sp->meta_cap : 64;
    char **m = realloc(sp->meta, cap * sizeof *m);
    size_t *l = m ? realloc(sp->meta_len, cap * sizeof *l) : NULL;
    if (m)
      sp->meta = m;
    if (!m || !l) {
      sp->err = twt_cmd_error(CMD, "out of memory");
      return -1;
    }
    sp->meta_len = l;
    sp->meta_cap = cap;
  }
  if (!(copy = malloc(len))) {
    sp->err = twt_cmd_error(CMD, "out of memory");
    return -1;
  }
  memcpy(copy, text, len);
  sp->meta[sp->nmeta] = copy;
  sp->meta_len[sp->nmeta++] = len;
  return 0;
}

/* ============================================================ spans */

/* The key that pairs a span's beginning and end: the thread for B/E,
 * the id (id or id2, with cat, scope and, for local ids, the pid) for
 * async spans.  Never 0. */
static uint64_t span_key(const twt_rec *r, int async)
{
  uint64_t k = async ? 0x9e3779b97f4a7c15u : 17;

  if (async) {
    k = twt_rec_hash(r->text + r->id.off, r->id.len, k);
    k = twt_rec_hash(r->text + r->id2.off, r->id2.len, k);
    k = twt_rec_hash(r->text + r->cat.off, r->cat.len, k);
    k = twt_rec_hash(r->text + r->scope.off, r->scope.len, k);
  }
  k = twt_rec_hash(r->text + r->pid_v.off, r->pid_v.len, k);
  if (!async)
    k = twt_rec_hash(r->text + r->tid_v.off, r->tid_v.len, k);
  return k | (k == 0);
}

static struct span_slot *span_slot(struct split *sp, uint64_t key,
                                   int add)
{
  size_t i;

  if (!sp->spans &&
      !(sp->spans = calloc(SPAN_SLOTS, sizeof *sp->spans)))
    return NULL;
  for (i = key & (SPAN_SLOTS - 1); sp->spans[i].key;
       i = (i + 1) & (SPAN_SLOTS - 1))
    if (sp->spans[i].key == key)
      return &sp->spans[i];
  if (!add || sp->nspans >= SPANS_MAX)
    return NULL;
  sp->spans[i].key = key;
  sp->nspans++;
  return &sp->spans[i];
}

/* Free the slot s, which holds nothing any more: the keys after it in
 * its run move back into the gap (linear probing without tombstones), so
 * that the table holds what is open, not every key ever seen. */
static void span_done(struct split *sp, struct span_slot *s)
{
  size_t i, j;

  if (!s || s->depth || s->npend)
    return;
  free(s->stack);
  free(s->pend);
  free(s->pend_len);
  memset(s, 0, sizeof *s);
  sp->nspans--;
  for (i = j = (size_t)(s - sp->spans);;) {
    size_t h;
    j = (j + 1) & (SPAN_SLOTS - 1);
    if (!sp->spans[j].key)
      break;
    h = sp->spans[j].key & (SPAN_SLOTS - 1);
    if (i <= j ? (i < h && h <= j) : (i < h || h <= j))
      continue;
    sp->spans[i] = sp->spans[j];
    memset(&sp->spans[j], 0, sizeof sp->spans[j]);
    i = j;
  }
}

/* Hold the async end text[0..len), read before its beginning: 0, or -1
 * if there is no room (it is then written where it is). */
static int hold_end(struct split *sp, uint64_t key, const char *text,
                    size_t len)
{
  struct span_slot *s = span_slot(sp, key, 1);
  char *copy;

  if (!s || sp->pend_bytes + len > PEND_MAX)
    return -1;
  if (s->npend == s->pend_cap) {
    size_t cap = s->pend_cap ? 2 * s->pend_cap : 2;
    char **p = realloc(s->pend, cap * sizeof *p);
    size_t *l = p ? realloc(s->pend_len, cap * sizeof *l) : NULL;
    if (p)
      s->pend = p;
    if (!p || !l) {
      span_done(sp, s);
      return -1;
    }
    s->pend_len = l;
    s->pend_cap = cap;
  }
  if (!(copy = malloc(len))) {
    span_done(sp, s);
    return -1;
  }
  memcpy(copy, text, len);
  s->pend[s->npend] = copy;
  s->pend_len[s->npend++] = len;
  sp->pend_bytes += len;
  return 0;
}

/* A span begins in the current part. */
static void span_begin(struct split *sp, uint64_t key)
{
  struct span_slot *s = span_slot(sp, key, 1);

  if (!s)
    return;                       /* too many: its end goes where it is */
  if (s->depth == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 4;
    size_t *st = realloc(s->stack, cap * sizeof *st);
    if (!st)
      return;
    s->stack = st;
    s->cap = cap;
  }
  s->stack[s->depth++] = sp->cur;
  sp->parts[sp->cur].open_spans++;
}

/* A span ends: the part it goes to (its beginning's, if still open). */
static size_t span_end(struct split *sp, uint64_t key)
{
  struct span_slot *s = span_slot(sp, key, 0);
  size_t home;

  if (!s || s->depth == 0)
    return sp->cur;
  home = s->stack[--s->depth];
  span_done(sp, s);
  if (sp->parts[home].open_spans)
    sp->parts[home].open_spans--;
  if (!sp->parts[home].o) {
    sp->broken++;
    return sp->cur;
  }
  return home;
}

/* ========================================================== records */

static int take(struct split *sp, const twt_tin_rec *rec)
{
  const twt_rec *r = &rec->r;
  int64_t ts = r->ts + rec->shift;
  const char *text;
  size_t len, home;
  int ends = 0, async = 0;

  if (twt_cmd_rewrite(r, rec->shift, NULL, 0, &sp->buf, &text, &len) != 0) {
    sp->err = twt_cmd_error(CMD, "out of memory");
    return -1;
  }
  if (rec->kind != TWT_TIN_EVENT) {
    if (keep_meta(sp, text, len) != 0)
      return -1;
    return sp->nparts ? put(sp, sp->cur, text, len) : 0;
  }
  switch (r->ph) {
  case 'E':
    ends = 1;
    break;
  case 'e':
  case 'F':
    ends = async = 1;
    break;
  case 'b':
  case 'S':
    async = 1;
    break;
  default:
    break;
  }
  sp->events++;
  if (ends && async) {
    /* An async end read before its beginning: held, and written after
     * it, in its part. */
    struct span_slot *s = sp->spans ? span_slot(sp, span_key(r, 1), 0)
                                    : NULL;
    if ((!s || !s->depth) && hold_end(sp, span_key(r, 1), text, len) == 0)
      return 0;
  }
  if (ends && sp->nparts) {
    home = span_end(sp, span_key(r, async));
    if (put(sp, home, text, len) != 0)
      return -1;
    if (home != sp->cur && sp->parts[home].done &&
        sp->parts[home].open_spans == 0)
      return finish_part(sp, home);
    return 0;
  }
  /* A new part before this event? */
  if (!sp->nparts ||
      (sp->size && sp->parts[sp->cur].bytes >= sp->size) ||
      (sp->every && sp->part_started && (r->has & TWT_REC_TS) &&
       ts - sp->part_start >= sp->every)) {
    if (new_part(sp) != 0)
      return -1;
  }
  if (!sp->part_started && (r->has & TWT_REC_TS)) {
    sp->part_started = 1;
    sp->part_start = sp->every && sp->nparts > 1 ?
                     ts - (ts - sp->part_start) % sp->every : ts;
  }
  if (r->ph == 'b' || r->ph == 'S') {
    struct span_slot *s = sp->spans ? span_slot(sp, span_key(r, 1), 0)
                                    : NULL;
    if (s && s->npend) {
      /* Its end came first: both here, the span complete. */
      char *end = s->pend[0];
      size_t end_len = s->pend_len[0];
      int rc = put(sp, sp->cur, text, len);
      if (rc == 0)
        rc = put(sp, sp->cur, end, end_len);
      sp->pend_bytes -= end_len;
      free(end);
      memmove(s->pend, s->pend + 1, --s->npend * sizeof *s->pend);
      memmove(s->pend_len, s->pend_len + 1,
              s->npend * sizeof *s->pend_len);
      span_done(sp, s);
      return rc;
    }
  }
  if (r->ph == 'B' || r->ph == 'b' || r->ph == 'S')
    span_begin(sp, span_key(r, async));
  return put(sp, sp->cur, text, len);
}

/* The end of the input: the async ends whose beginning never came go to
 * the last part. */
static int lone_ends(struct split *sp)
{
  for (size_t i = 0; sp->spans && i < SPAN_SLOTS; i++) {
    struct span_slot *s = &sp->spans[i];
    for (size_t k = 0; k < s->npend; k++) {
      int rc = sp->nparts || new_part(sp) == 0 ?
               put(sp, sp->cur, s->pend[k], s->pend_len[k]) : -1;
      sp->lone_ends++;
      free(s->pend[k]);
      s->pend[k] = NULL;
      if (rc != 0) {
        s->npend = 0;
        return -1;
      }
    }
    s->npend = 0;
  }
  return 0;
}

/* ============================================================= main */

const struct twt_cmd_opt twt_tool_split_options[] = {
  TWT_CMD_COMMON('o', NULL, "the parts' name (required)"),
  { "size", 's', "SIZE", "the size of a part (suffixes k, m, g)" },
  { "every", 'e', "DURATION", "the time a part covers (e.g. 10s, 500ms)" },
  TWT_CMD_COMMON(TWT_CMD_OPT_NDJSON, NULL,
                 "parts of one record a line and nothing else"),
  TWT_CMD_COMMON('q', NULL, NULL),
  TWT_CMD_COMMON(TWT_CMD_OPT_NO_PARTS, NULL, NULL),
  TWT_CMD_COMMON('m', NULL, NULL),
  TWT_CMD_COMMON('h', NULL, NULL),
  { NULL, 0, NULL, NULL }
};

static void split_usage(FILE *out)
{
  fprintf(out,
    "Usage: " TWT_CLI_PROGRAM " split -o OUT [--size SIZE] [--every DURATION]"
    "\n"
    "                         [-q] [--ndjson] [--no-parts] [-m SIZE] "
    "FILE...\n"
    "\n"
    "Cut a big trace into parts that a viewer opens: OUT.000001.json,\n"
    "OUT.000002.json, ... (the number goes before OUT's extension; gzip\n"
    "if OUT ends in .gz).  A part ends when it holds SIZE bytes of JSON\n"
    "(before compression), or when\n"
    "an event comes DURATION after its first one.  Every part repeats\n"
    "the clock and metadata records (process and thread names) so far; a\n"
    "complete event, a B/E pair or an async span goes whole to the part\n"
    "where it begins.  cat of the parts gives the input's events back.\n"
    "\n");
  twt_cmd_print_options(out, twt_tool_split_options);
  fprintf(out,
    "\n"
    "Exit status: 0 written, 1 an error, 2 a usage error.\n");
}

int twt_tool_split_main(int argc, char **argv)
{
  struct twt_cmd_getopt g;
  struct twt_cmd_common c;
  struct split sp;
  twt_progress progress;
  twt_tin_rec rec;
  int opt, status, rc;

  memset(&c, 0, sizeof c);
  memset(&sp, 0, sizeof sp);
  sp.c = &c;
  optind = 0;
  opterr = 0;
  twt_cmd_getopt_init(&g, twt_tool_split_options);
  while ((opt = getopt_long(argc, argv, g.shorts, g.longs, NULL)) != -1) {
    if (opt == 's') {
      size_t v;
      if (twt_cli_parse_size(optarg, &v) != 0 || v < MIN_SIZE)
        return twt_cli_usage_error(CMD, split_usage, "bad --size '%s' (a "
                                   "size, at least 4KiB)", optarg);
      sp.size = v;
      continue;
    }
    if (opt == 'e') {
      if (twt_rec_parse_duration(optarg, &sp.every) != 0 || sp.every <= 0)
        return twt_cli_usage_error(CMD, split_usage, "bad --every '%s' (a "
                                   "duration such as 10s)", optarg);
      continue;
    }
    status = twt_cmd_option(CMD, split_usage, opt, optarg, argv, &c);
    if (status != TWT_CMD_TAKEN)
      return status;
  }
  if (!c.output || strcmp(c.output, "-") == 0)
    return twt_cli_usage_error(CMD, split_usage, "-o OUT names the parts");
  if (!sp.size && !sp.every)
    return twt_cli_usage_error(CMD, split_usage, "--size or --every says "
                               "where to cut");
  if (optind >= argc)
    return twt_cli_usage_error(CMD, split_usage, "no FILE to split");
  sp.out_name = c.output;
  if ((status = twt_cmd_open_input(CMD, &c, argv + optind,
                                   (size_t)(argc - optind), &sp.in)) >= 0)
    return status;
  twt_progress_init(&progress, CMD);
  status = TWT_CLI_OK;
  while ((rc = twt_tin_next(sp.in, &rec)) > 0) {
    if (take(&sp, &rec) != 0)
      break;
    twt_cmd_progress(&progress, sp.in);
  }
  twt_progress_end(&progress);
  if (sp.err) {
    status = sp.err;
    goto done;
  }
  if (rc < 0) {
    status = twt_cmd_input_error(CMD, sp.in);
    goto done;
  }
  if (lone_ends(&sp) != 0 || (!sp.nparts && new_part(&sp) != 0)) {
    status = sp.err;
    goto done;
  }
  for (size_t i = 0; i < sp.nparts; i++)
    if (finish_part(&sp, i) != 0) {
      status = sp.err;
      goto done;
    }
  if (!c.quiet) {
    char first[PATH_MAX + 32];
    if (tw__rotated_name(first, sizeof first, sp.out_name, 1) != 0)
      first[0] = '\0';
    fprintf(stderr, TWT_CLI_PROGRAM " " CMD ": %" PRIu64 " %s in %zu %s "
            "(%s ...)", sp.events, twt_cli_plural(sp.events, "event",
                                                  "events"),
            sp.nparts, twt_cli_plural(sp.nparts, "part", "parts"), first);
    if (sp.broken)
      fprintf(stderr, "; %" PRIu64 " span %s written in a later part "
              "than its beginning (over %u parts open)", sp.broken,
              twt_cli_plural(sp.broken, "end", "ends"), OPEN_MAX);
    if (sp.lone_ends)
      fprintf(stderr, "; %" PRIu64 " async span %s without a beginning in "
              "the last part", sp.lone_ends,
              twt_cli_plural(sp.lone_ends, "end", "ends"));
    fputc('\n', stderr);
  }
done:
  for (size_t i = 0; i < sp.nparts; i++)
    twt_out_close(sp.parts[i].o);
  free(sp.parts);
  for (size_t i = 0; i < sp.nmeta; i++)
    free(sp.meta[i]);
  free(sp.meta);
  free(sp.meta_len);
  if (sp.spans) {
    for (size_t i = 0; i < SPAN_SLOTS; i++) {
      for (size_t k = 0; k < sp.spans[i].npend; k++)
        free(sp.spans[i].pend[k]);
      free(sp.spans[i].pend);
      free(sp.spans[i].pend_len);
      free(sp.spans[i].stack);
    }
    free(sp.spans);
  }
  twt_cmd_buf_free(&sp.buf);
  twt_cmd_buf_free(&sp.tail);
  twt_tin_close(sp.in);
  return status;
}
