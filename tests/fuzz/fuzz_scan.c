/* fuzz_scan.c -- fuzz the tools' general reader (tools/jsonscan.c)
 *
 * The input: byte 0 seeds the chunk sizes, byte 1 picks max_record; the
 * rest is the JSON text, any bytes.  Checked:
 *
 *  1. Where the chunks fall changes nothing: the text fed whole, and fed
 *     in chunks of 1 to 67 bytes drawn from the seed, gives the same
 *     records (offset, text, dropped), the same result and message, and
 *     the same info.
 *  2. Every record yielded is one object that the strict test checker
 *     (jc_parse) accepts, on one line: no LF, CR or tab (the reader's
 *     promise: every record the tools write is one line).
 *  3. twt_json_check agrees with jc_parse on the whole text.
 *  4. A text jc_parse accepts that is a trace (an array, or an object
 *     with one traceEvents array) is read whole: one record per object
 *     element at the element's offset, its text the element's as it is
 *     when on one line, else without the whitespace between tokens, the
 *     other elements skipped, the document done, nothing dropped but
 *     objects nested deeper than TWT_RECORD_DEPTH, and called strict
 *     when nothing was skipped or dropped and at most one newline
 *     follows.
 */
#include "fuzz.h"

#include "jsoncheck.h"
#include "jsonscan.h"

/* What one run of the scanner gave. */
typedef struct scan_run {
  char *recs;              /* each record: offset, dropped, len, text */
  size_t len, cap;
  size_t nrecs;
  ptrdiff_t rc;            /* the first error of feed, or end's result */
  char err[256];
  struct twt_scan_info info;
  char *members;           /* the info's members, copied */
} scan_run;

static void run_add(scan_run *r, const void *p, size_t n)
{
  if (r->len + n > r->cap) {
    size_t cap = r->cap ? r->cap : 4096;
    while (cap < r->len + n)
      cap *= 2;
    if (!(r->recs = realloc(r->recs, cap)))
      FZ_FAIL("harness: out of memory");
    r->cap = cap;
  }
  memcpy(r->recs + r->len, p, n);
  r->len += n;
}

/* Record rec in r and check it (2). */
static void take(scan_run *r, const twt_scan_rec *rec, size_t max_record)
{
  uint64_t head[3] = { rec->offset, (uint64_t)rec->dropped, rec->len };

  run_add(r, head, sizeof head);
  r->nrecs++;
  if (rec->dropped)
    return;
  FZ_CHECK(rec->text != NULL && rec->len >= 2 && rec->len <= max_record,
           "record %zu: %zu bytes", r->nrecs, rec->len);
  FZ_CHECK(rec->text[0] == '{' && rec->text[rec->len - 1] == '}',
           "record %zu is not an object", r->nrecs);
  run_add(r, rec->text, rec->len);
  FZ_CHECK(!memchr(rec->text, '\n', rec->len) &&
           !memchr(rec->text, '\r', rec->len) &&
           !memchr(rec->text, '\t', rec->len),
           "record %zu is not one line", r->nrecs);
  {
    char why[160];
    jc_doc *d = jc_parse(rec->text, rec->len, why, sizeof why);
    if (!d)
      fz_dump("record", rec->text, rec->len);
    FZ_CHECK(d != NULL, "record %zu refused by jc_parse: %s", r->nrecs, why);
    jc_free(d);
  }
}

/* Scan text[0..n) in chunks: whole when seed is 0, else of 1..67 bytes
 * from a generator seeded with it. */
static void scan(scan_run *r, const char *text, size_t n, unsigned seed,
                 size_t max_record)
{
  twt_scan *s = twt_scan_new(max_record, 4096);
  uint32_t x = seed * 2654435761u + 1;
  size_t at = 0;

  memset(r, 0, sizeof *r);
  if (!s)
    FZ_FAIL("harness: out of memory");
  while (at < n) {
    size_t chunk = n - at, used = 0;
    if (seed) {
      x ^= x << 13, x ^= x >> 17, x ^= x << 5;
      if (chunk > 1 + x % 67)
        chunk = 1 + x % 67;
    }
    while (used < chunk) {
      twt_scan_rec rec;
      int ready = 0;
      ptrdiff_t k = twt_scan_feed(s, text + at + used, chunk - used, &rec,
                                  &ready);
      if (k < 0) {
        r->rc = k;
        goto out;
      }
      FZ_CHECK((size_t)k <= chunk - used, "feed used %td of %zu", k,
               chunk - used);
      FZ_CHECK(k > 0 || ready, "feed used nothing and yielded nothing");
      used += (size_t)k;
      if (ready)
        take(r, &rec, max_record);
    }
    at += chunk;
  }
  r->rc = twt_scan_end(s);
out:
  snprintf(r->err, sizeof r->err, "%s", twt_scan_error(s));
  r->info = *twt_scan_info(s);
  if (r->info.members_len) {
    if (!(r->members = malloc(r->info.members_len)))
      FZ_FAIL("harness: out of memory");
    memcpy(r->members, r->info.members, r->info.members_len);
  }
  r->info.members = NULL;
  twt_scan_free(s);
}

static void run_free(scan_run *r)
{
  free(r->recs);
  free(r->members);
}

/* 1: the two runs agree. */
static void same_runs(const scan_run *a, const scan_run *b)
{
  const struct twt_scan_info *x = &a->info, *y = &b->info;

  FZ_CHECK(a->rc == b->rc, "result %td whole, %td in chunks (%s | %s)",
           a->rc, b->rc, a->err, b->err);
  FZ_CHECK(strcmp(a->err, b->err) == 0, "message \"%s\" whole, \"%s\" in "
           "chunks", a->err, b->err);
  FZ_CHECK(a->nrecs == b->nrecs, "%zu records whole, %zu in chunks",
           a->nrecs, b->nrecs);
  FZ_CHECK(a->len == b->len &&
           (a->len == 0 || memcmp(a->recs, b->recs, a->len) == 0),
           "the records differ whole and in chunks");
  FZ_CHECK(x->object_form == y->object_form && x->bom == y->bom &&
           x->events_found == y->events_found && x->done == y->done &&
           x->strict == y->strict, "the document's form differs");
  FZ_CHECK(x->records == y->records && x->invalid == y->invalid &&
           x->invalid_bytes == y->invalid_bytes &&
           x->first_invalid == y->first_invalid && x->skipped == y->skipped &&
           x->stray_commas == y->stray_commas, "the counts differ");
  FZ_CHECK(x->members_len == y->members_len &&
           (x->members_len == 0 ||
            memcmp(a->members, b->members, x->members_len) == 0) &&
           x->members_dropped == y->members_dropped, "the members differ");
  FZ_CHECK(x->cut == y->cut && x->stopped == y->stopped &&
           x->stop_offset == y->stop_offset &&
           strcmp(x->stop_why, y->stop_why) == 0,
           "the end differs: cut %d/%d stopped %d/%d at %llu/%llu (%s | %s)",
           x->cut, y->cut, x->stopped, y->stopped,
           (unsigned long long)x->stop_offset,
           (unsigned long long)y->stop_offset, x->stop_why, y->stop_why);
}

/* 4: a strict trace is read whole.  events is its events array in d. */
static void read_whole(const jc_doc *d, jc_val events, const char *text,
                       size_t n, const scan_run *r)
{
  size_t objects = 0, others = 0, deep = 0, k = 0, lead = 0;
  const char *p = r->recs, *base = jc_raw(d, jc_root(d), NULL);

  /* base is the root's first byte in the doc's copy of text. */
  while (text[lead] == ' ' || text[lead] == '\t' || text[lead] == '\n' ||
         text[lead] == '\r')
    lead++;

  /* Events of which none is an object are no trace. */
  if (r->rc == TWT_SCAN_ENOTTRACE) {
    jc_val v = jc_first(d, events);
    while (v >= 0 && jc_type(d, v) != JC_OBJECT)
      v = jc_next(d, v);
    FZ_CHECK(v < 0 && jc_len(d, events) > 0, "a strict trace refused: %s",
             r->err);
    return;
  }
  FZ_CHECK(r->rc == 0 || r->rc == TWT_SCAN_ETOOBIG,
           "a strict trace refused: %s", r->err);
  if (r->rc != 0)
    return;
  FZ_CHECK(r->info.done && !r->info.cut && !r->info.stopped &&
           r->info.events_found,
           "a strict trace not read as one: done %d cut %d stopped %d",
           r->info.done, r->info.cut, r->info.stopped);
  for (jc_val v = jc_first(d, events); v >= 0; v = jc_next(d, v)) {
    size_t raw_len;
    const char *raw = jc_raw(d, v, &raw_len);
    uint64_t head[3];
    char *flat;
    size_t flat_len;

    if (jc_type(d, v) != JC_OBJECT) {
      others++;
      continue;
    }
    objects++;
    if (fz_json_depth(raw, raw_len) > TWT_RECORD_DEPTH) {
      deep++;
      continue;
    }
    if (!(flat = malloc(raw_len)))
      FZ_FAIL("harness: out of memory");
    memcpy(flat, raw, raw_len);
    flat_len = raw_len;
    if (memchr(raw, '\n', raw_len) || memchr(raw, '\r', raw_len) ||
        memchr(raw, '\t', raw_len))
      flat_len = twt_json_compact(flat, flat, raw_len);
    /* The next record yielded, dropped ones passed over. */
    for (;;) {
      FZ_CHECK(k < r->nrecs, "object element %zu not yielded", objects);
      memcpy(head, p, sizeof head);
      p += sizeof head;
      k++;
      if (!head[1])
        break;
    }
    FZ_CHECK(head[0] == (uint64_t)(raw - base) + lead,
             "element %zu yielded at offset %llu", objects,
             (unsigned long long)head[0]);
    FZ_CHECK(head[2] == flat_len && memcmp(p, flat, flat_len) == 0,
             "element %zu yielded as another text", objects);
    p += head[2];
    free(flat);
  }
  /* strict says what was checked (elements skipped or dropped, members
   * not kept, were not), and that at most one newline follows. */
  {
    size_t root_len, end;
    const char *root = jc_raw(d, jc_root(d), &root_len);
    int tail_ok;

    end = lead + (size_t)(root + root_len - base);
    tail_ok = end == n || (end + 1 == n && text[end] == '\n');
    FZ_CHECK(r->info.strict == (deep == 0 && others == 0 && tail_ok &&
                                r->info.members_dropped == 0),
             "strict %d with %zu too deep, %zu skipped, tail %s, %llu "
             "members dropped", r->info.strict, deep, others,
             tail_ok ? "ok" : "not",
             (unsigned long long)r->info.members_dropped);
  }
  FZ_CHECK(r->info.records == objects - deep, "%llu records of %zu objects "
           "(%zu too deep)", (unsigned long long)r->info.records, objects,
           deep);
  FZ_CHECK(r->info.invalid == deep, "%llu dropped, %zu too deep",
           (unsigned long long)r->info.invalid, deep);
  FZ_CHECK(r->info.skipped == others, "%llu skipped of %zu non-objects",
           (unsigned long long)r->info.skipped, others);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static const size_t max_records[4] = { 64, 512, 4096, 1u << 20 };
  size_t n, max_record, bad = 0;
  unsigned seed;
  char *text;
  scan_run whole, chunks;
  jc_doc *d;
  int ck;

  if (size < 2 || size > (1u << 20))
    return 0;
  seed = data[0] | 1u;
  max_record = max_records[data[1] & 3];
  n = size - 2;
  /* An exact-size copy: AddressSanitizer sees any read past the end. */
  if (!(text = malloc(n ? n : 1)))
    FZ_FAIL("harness: out of memory");
  memcpy(text, data + 2, n);

  scan(&whole, text, n, 0, max_record);
  scan(&chunks, text, n, seed, max_record);
  same_runs(&whole, &chunks);

  ck = twt_json_check(text, n, JC_MAX_DEPTH, &bad);
  d = jc_parse(text, n, NULL, 0);
  FZ_CHECK((ck == 0) == (d != NULL), "twt_json_check %d, jc_parse %s", ck,
           d ? "accepts" : "refuses");
  FZ_CHECK(ck == 0 || bad <= n, "error offset %zu past the %zu bytes", bad,
           n);
  if (d) {
    jc_val root = jc_root(d), events = -1;
    if (jc_type(d, root) == JC_ARRAY)
      events = root;
    else if (jc_type(d, root) == JC_OBJECT &&
             jc_count_key(d, root, "traceEvents") == 1 &&
             jc_type(d, jc_get(d, root, "traceEvents")) == JC_ARRAY)
      events = jc_get(d, root, "traceEvents");
    if (events >= 0)
      read_whole(d, events, text, n, &whole);
    jc_free(d);
  }
  run_free(&whole);
  run_free(&chunks);
  free(text);
  return 0;
}
