/* jsonlint.c -- the tests' strict JSON checker as a command
 *
 *   jsonlint [--events] [--require-thread-names N] [--check-demo] FILE...
 *
 * Parses each FILE with jsoncheck (strict RFC 8259, UTF-8 checked, one
 * value and nothing after it) and prints "FILE: ok, N events" (or "FILE:
 * ok, not a trace" for valid JSON without an events array) or "FILE:
 * invalid: REASON".  Exits 1 if any file is invalid, 2 on a usage error.
 *
 *   --events                  the file must be a trace: an array of events
 *                             or {"traceEvents":[...]}, each an object with
 *                             a one-letter "ph"
 *   --require-thread-names N  at least N thread_name metadata events
 *   --check-demo              the structure `tracewriter demo` writes:
 *                             process and thread names, X spans, b/e and
 *                             s/f pairs, queue_depth counters
 * The last two imply --events.
 */
#include "jsoncheck.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct lint_options {
  int require_trace;
  unsigned long min_thread_names;
  int check_demo;
};

/* Format the reason a file is invalid into reason[]; returns -1. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 3, 4)))
#endif
static int fail(char *reason, size_t size, const char *fmt, ...)
{
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(reason, size, fmt, ap);
  va_end(ap);
  return -1;
}

/* The one-letter phase of event ev, or 0 if it has none. */
static char phase_of(const jc_doc *d, jc_val ev)
{
  size_t len;
  const char *ph = jc_str(d, jc_get(d, ev, "ph"), &len);

  return ph && len == 1 ? ph[0] : 0;
}

/* 1 if ev is the metadata event named name ("thread_name"...). */
static int is_metadata(const jc_doc *d, jc_val ev, const char *name)
{
  return phase_of(d, ev) == 'M' && jc_streq(d, jc_get(d, ev, "name"), name);
}

/* The decoded args.KEY string of ev, or NULL. */
static const char *arg_str(const jc_doc *d, jc_val ev, const char *key)
{
  return jc_str(d, jc_get(d, jc_get(d, ev, "args"), key), NULL);
}

/* ------------------------------------------------------- generic checks */

static int check_events_shape(const jc_doc *d, jc_val events, char *reason,
                              size_t size)
{
  size_t i = 0;
  jc_val ev;

  for (ev = jc_first(d, events); ev >= 0; ev = jc_next(d, ev), i++) {
    if (jc_type(d, ev) != JC_OBJECT)
      return fail(reason, size, "event %zu is not an object", i);
    if (!phase_of(d, ev))
      return fail(reason, size, "event %zu has no one-letter \"ph\"", i);
  }
  return 0;
}

static int check_thread_names(const jc_doc *d, jc_val events,
                              unsigned long wanted, char *reason,
                              size_t size)
{
  unsigned long found = 0;
  jc_val ev;

  for (ev = jc_first(d, events); ev >= 0; ev = jc_next(d, ev))
    if (is_metadata(d, ev, "thread_name") && arg_str(d, ev, "name"))
      found++;
  if (found < wanted)
    return fail(reason, size, "%lu thread_name events, expected at least %lu",
                found, wanted);
  return 0;
}

/* ------------------------------------------------------ the demo's shape */

/* One async (b/e) or flow (s/f) event, to match begins with ends. */
struct pair_event {
  int family;             /* 0: async b/e, 1: flow s/f */
  const char *cat;        /* "" when absent */
  const char *id;
  char ph;
  uint64_t ts;
  int binds_enclosing;    /* "bp":"e" */
  size_t index;           /* position in the events array */
};

static int compare_pair_events(const void *a, const void *b)
{
  const struct pair_event *x = a, *y = b;
  int c;

  if (x->family != y->family)
    return x->family < y->family ? -1 : 1;
  if ((c = strcmp(x->cat, y->cat)) != 0 || (c = strcmp(x->id, y->id)) != 0)
    return c;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* Every async id has as many b as e, and every flow id exactly one s and
 * one f, the f binding to its enclosing slice; ends never come before
 * their starts. */
static int check_pairs(struct pair_event *pe, size_t n, char *reason,
                       size_t size)
{
  size_t i = 0;

  qsort(pe, n, sizeof *pe, compare_pair_events);
  while (i < n) {
    size_t starts = 0, ends = 0, j;
    uint64_t first_start = UINT64_MAX, last_end = 0;

    for (j = i; j < n && pe[j].family == pe[i].family &&
                strcmp(pe[j].cat, pe[i].cat) == 0 &&
                strcmp(pe[j].id, pe[i].id) == 0; j++) {
      if (pe[j].ph == 'b' || pe[j].ph == 's') {
        starts++;
        if (pe[j].ts < first_start)
          first_start = pe[j].ts;
      } else {
        ends++;
        if (pe[j].ts > last_end)
          last_end = pe[j].ts;
        if (pe[j].ph == 'f' && !pe[j].binds_enclosing)
          return fail(reason, size, "event %zu: flow end without \"bp\":\"e\"",
                      pe[j].index);
      }
    }
    if (pe[i].family == 0 && starts != ends)
      return fail(reason, size, "async id %s (cat \"%s\"): %zu b but %zu e",
                  pe[i].id, pe[i].cat, starts, ends);
    if (pe[i].family == 1 && (starts != 1 || ends != 1))
      return fail(reason, size, "flow id %s (cat \"%s\"): %zu s and %zu f, "
                  "expected one of each", pe[i].id, pe[i].cat, starts, ends);
    if (last_end < first_start)
      return fail(reason, size, "%s id %s ends before it starts",
                  pe[i].family == 0 ? "async" : "flow", pe[i].id);
    i = j;
  }
  return 0;
}

/* What the demo must contain, counted in one pass. */
struct demo_census {
  int process_named;
  int acceptor_named;
  unsigned long workers_named;
  unsigned long complete_spans;
  unsigned long handle_spans;
  unsigned long db_spans;
  unsigned long depth_counters;
  unsigned long async_begins;
  unsigned long flow_starts;
};

static int check_demo(const jc_doc *d, jc_val events, char *reason,
                      size_t size)
{
  struct demo_census census;
  struct pair_event *pairs;
  size_t npairs = 0, i = 0;
  jc_val ev;
  int rc = 0;

  memset(&census, 0, sizeof census);
  if (!(pairs = malloc((jc_len(d, events) + 1) * sizeof *pairs)))
    return fail(reason, size, "out of memory");
  for (ev = jc_first(d, events); ev >= 0 && rc == 0;
       ev = jc_next(d, ev), i++) {
    char ph = phase_of(d, ev);
    const char *name = jc_str(d, jc_get(d, ev, "name"), NULL);
    int64_t number;
    uint64_t ts = 0, dur, depth;

    if (!name) {
      rc = fail(reason, size, "event %zu has no name", i);
      break;
    }
    if (jc_int64(d, jc_get(d, ev, "pid"), &number) != 0 ||
        jc_int64(d, jc_get(d, ev, "tid"), &number) != 0) {
      rc = fail(reason, size, "event %zu (%s) lacks an integer pid or tid",
                i, name);
      break;
    }
    if (ph != 'M' && jc_us_to_ns(d, jc_get(d, ev, "ts"), &ts) != 0) {
      rc = fail(reason, size, "event %zu (%s) has a bad or no ts", i, name);
      break;
    }
    switch (ph) {
    case 'M': {
      const char *value = arg_str(d, ev, "name");
      if (strcmp(name, "process_name") == 0 && value &&
          strcmp(value, "tracewriter demo") == 0)
        census.process_named = 1;
      if (strcmp(name, "thread_name") == 0 && value) {
        if (strcmp(value, "acceptor") == 0)
          census.acceptor_named = 1;
        else if (strncmp(value, "worker-", 7) == 0)
          census.workers_named++;
      }
      break;
    }
    case 'X':
      if (jc_us_to_ns(d, jc_get(d, ev, "dur"), &dur) != 0)
        rc = fail(reason, size, "event %zu (X %s) has a bad or no dur", i,
                  name);
      census.complete_spans++;
      census.handle_spans += strcmp(name, "handle") == 0;
      census.db_spans += strcmp(name, "db.query") == 0;
      break;
    case 'C':
      if (strcmp(name, "queue_depth") == 0) {
        if (jc_uint64(d, jc_get(d, jc_get(d, ev, "args"), "depth"),
                      &depth) != 0)
          rc = fail(reason, size, "event %zu: queue_depth without an "
                    "integer args.depth", i);
        census.depth_counters++;
      }
      break;
    case 'b': case 'e': case 's': case 'f': {
      const char *cat = jc_str(d, jc_get(d, ev, "cat"), NULL);
      const char *id = jc_str(d, jc_get(d, ev, "id"), NULL);
      if (!id) {
        rc = fail(reason, size, "event %zu (%c %s) has no string id", i, ph,
                  name);
        break;
      }
      pairs[npairs].family = ph == 'b' || ph == 'e' ? 0 : 1;
      pairs[npairs].cat = cat ? cat : "";
      pairs[npairs].id = id;
      pairs[npairs].ph = ph;
      pairs[npairs].ts = ts;
      pairs[npairs].binds_enclosing = jc_streq(d, jc_get(d, ev, "bp"), "e");
      pairs[npairs].index = i;
      npairs++;
      census.async_begins += ph == 'b';
      census.flow_starts += ph == 's';
      break;
    }
    default:
      break;
    }
  }
  if (rc == 0)
    rc = check_pairs(pairs, npairs, reason, size);
  free(pairs);
  if (rc != 0)
    return rc;
  if (!census.process_named)
    return fail(reason, size, "no process_name \"tracewriter demo\"");
  if (!census.acceptor_named || census.workers_named == 0)
    return fail(reason, size, "thread names: acceptor %s, %lu workers",
                census.acceptor_named ? "named" : "missing",
                census.workers_named);
  if (census.handle_spans == 0 || census.db_spans == 0)
    return fail(reason, size, "%lu X spans, but %lu handle and %lu db.query",
                census.complete_spans, census.handle_spans, census.db_spans);
  if (census.async_begins == 0 || census.flow_starts == 0)
    return fail(reason, size, "%lu async requests and %lu flows, expected "
                "some of each", census.async_begins, census.flow_starts);
  if (census.depth_counters == 0)
    return fail(reason, size, "no queue_depth counter");
  return 0;
}

/* ---------------------------------------------------------------- main */

/* Check one file and print its line; returns 0 if it is valid. */
static int lint_file(const char *path, const struct lint_options *opts)
{
  char reason[512];
  jc_doc *d = jc_parse_file(path, reason, sizeof reason);
  jc_val events;
  int rc = 0;

  if (!d) {
    printf("%s: invalid: %s\n", path, reason);
    return -1;
  }
  events = jc_trace_events(d);
  if (events < 0) {
    if (opts->require_trace)
      rc = fail(reason, sizeof reason, "not a trace: no events array");
  } else if (opts->require_trace) {
    rc = check_events_shape(d, events, reason, sizeof reason);
    if (rc == 0 && opts->min_thread_names)
      rc = check_thread_names(d, events, opts->min_thread_names, reason,
                              sizeof reason);
    if (rc == 0 && opts->check_demo)
      rc = check_demo(d, events, reason, sizeof reason);
  }
  if (rc != 0)
    printf("%s: invalid: %s\n", path, reason);
  else if (events < 0)
    printf("%s: ok, not a trace\n", path);
  else
    printf("%s: ok, %zu events\n", path, jc_len(d, events));
  jc_free(d);
  return rc;
}

static int usage(void)
{
  fprintf(stderr, "usage: jsonlint [--events] [--require-thread-names N] "
          "[--check-demo] FILE...\n");
  return 2;
}

int main(int argc, char **argv)
{
  struct lint_options opts;
  int i, failed = 0;

  memset(&opts, 0, sizeof opts);
  for (i = 1; i < argc && argv[i][0] == '-'; i++) {
    if (strcmp(argv[i], "--") == 0) {
      i++;
      break;
    } else if (strcmp(argv[i], "--events") == 0) {
      opts.require_trace = 1;
    } else if (strcmp(argv[i], "--check-demo") == 0) {
      opts.require_trace = opts.check_demo = 1;
    } else if (strcmp(argv[i], "--require-thread-names") == 0 &&
               i + 1 < argc) {
      char *end;
      errno = 0;
      opts.min_thread_names = strtoul(argv[++i], &end, 10);
      if (errno || *end || argv[i][0] < '0' || argv[i][0] > '9')
        return usage();
      opts.require_trace = 1;
    } else {
      return usage();
    }
  }
  if (i == argc)
    return usage();
  for (; i < argc; i++)
    if (lint_file(argv[i], &opts) != 0)
      failed = 1;
  if (fflush(stdout) != 0)
    return 2;
  return failed;
}
