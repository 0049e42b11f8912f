/* options.c -- tw_options defaults, the options string, version checks
 *
 * One table, keys[] below, says for every key of the options string which
 * field it sets, the values it takes, its bounds and its default.  It
 * drives the defaults (set_defaults), the parser (tw_options_parse), the
 * range check of every tw_options given to the library (check), and the
 * documents: tests/test_options_docs fails when the key lists of
 * tw_options_init(3), README.md or tracewriter.h say otherwise.
 */
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The size of the first published tw_options: every caller knows at least
 * these fields.  Fields added later go after rotate_keep. */
#define OPTIONS_V1_SIZE (offsetof(tw_options, rotate_keep) + sizeof(unsigned))

#define MAX_SIZE_OPTION ((uint64_t)1 << 30)      /* 1 GiB */
#define MIN_MAX_EVENT 4096u                     /* one page */
#define MIN_MMAP_CHUNK 4096u                    /* one page */

/* ------------------------------------------------------------ the table */

static const tw__key_word off_words[] = { { "off", 0 }, { NULL, 0 } };
static const tw__key_word all_words[] = { { "all", 0 }, { NULL, 0 } };
static const tw__key_word on_off_words[] = {
  { "off", 0 }, { "on", 1 }, { NULL, 0 } };
static const tw__key_word format_words[] = {
  { "array", TW_FORMAT_ARRAY }, { "object", TW_FORMAT_OBJECT }, { NULL, 0 } };
static const tw__key_word sink_words[] = {
  { "auto", TW_SINK_AUTO }, { "file", TW_SINK_FILE },
  { "mmap", TW_SINK_MMAP }, { "gzip", TW_SINK_GZIP }, { NULL, 0 } };
static const tw__key_word commit_words[] = {
  { "auto", TW_COMMIT_AUTO }, { "inline", TW_COMMIT_INLINE },
  { "background", TW_COMMIT_BACKGROUND }, { NULL, 0 } };
static const tw__key_word on_full_words[] = {
  { "block", TW_ON_FULL_BLOCK }, { "drop", TW_ON_FULL_DROP }, { NULL, 0 } };
static const tw__key_word crash_words[] = {
  { "off", TW_CRASH_OFF }, { "commit", TW_CRASH_COMMIT }, { NULL, 0 } };
static const tw__key_word formatter_words[] = {
  { "producer", 0 }, { "committer", 1 }, { NULL, 0 } };
static const tw__key_word utf8_words[] = {
  { "replace", 0 }, { "reject", 1 }, { NULL, 0 } };
static const tw__key_word nonfinite_words[] = {
  { "null", 0 }, { "reject", 1 }, { NULL, 0 } };
static const tw__key_word timebase_words[] = {
  { "monotonic", TW_TIMEBASE_MONOTONIC }, { "kineto", TW_TIMEBASE_KINETO },
  { NULL, 0 } };
static const tw__key_word auto_words[] = { { "auto", 0 }, { NULL, 0 } };
static const tw__key_word rank_words[] = {
  { "auto", TW_RANK_AUTO }, { NULL, 0 } };
static const tw__key_word long_words[] = {
  { "truncate", 0 }, { "reject", 1 }, { NULL, 0 } };

#define FIELD(f, t) .field = #f, .offset = offsetof(tw_options, f), .type = (t)
#define FLAG(bit) .field = "flags", .flag = (bit), .flag_name = #bit

/* In the order of the documents. */
const tw__option_key tw__option_keys[] = {
  { .name = "buffer", .kind = TW__KEY_SIZE, .arg = "SIZE",
    FIELD(buffer_size, TW__FIELD_SIZE),
    .min = TW_MIN_BUFFER_SIZE, .max = MAX_SIZE_OPTION,
    .def = TW_DEFAULT_BUFFER_SIZE,
    .doc = "bytes buffered between commits; a full buffer commits" },
  { .name = "buffers", .kind = TW__KEY_NUMBER, .arg = "N",
    FIELD(buffer_count, TW__FIELD_UNSIGNED),
    .min = 2, .max = TW_MAX_BUFFER_COUNT, .def = TW_DEFAULT_BUFFER_COUNT,
    .doc = "buffers of a background committer" },
  { .name = "commit", .kind = TW__KEY_WORD, FIELD(commit, TW__FIELD_INT),
    .def = TW_COMMIT_AUTO, .words = commit_words,
    .doc = "who writes commits: the thread that fills a buffer, or a "
           "committer thread; auto is background for gzip" },
  { .name = "flush", .kind = TW__KEY_DURATION, .arg = "DURATION",
    FIELD(flush_interval_ns, TW__FIELD_U64),
    .min = 1, .max = UINT64_MAX, .def = 0, .words = off_words,
    .doc = "commit at least this often, from a committer thread" },
  { .name = "on_full", .kind = TW__KEY_WORD, FIELD(on_full, TW__FIELD_INT),
    .def = TW_ON_FULL_BLOCK, .words = on_full_words,
    .doc = "when every buffer is full: wait, or drop the event (counted, "
           "and reported in the file)" },
  { .name = "formatter", .kind = TW__KEY_FLAG,
    FLAG(TW_OPT_FORMAT_COMMITTER), .def = 0, .words = formatter_words,
    .doc = "with a committer thread, who formats the events: each "
           "producer, or the committer (producers copy them unformatted; "
           "the same file)" },
  { .name = "sync", .kind = TW__KEY_FLAG, FLAG(TW_OPT_SYNC),
    .def = 0, .words = on_off_words, .bare = "sync=on",
    .doc = "sync each commit to the disk with fdatasync (mmap: msync at "
           "tw_flush and tw_close)" },
  { .name = "crash", .kind = TW__KEY_WORD, FIELD(crash, TW__FIELD_INT),
    .def = TW_CRASH_OFF, .words = crash_words,
    .doc = "commit what is buffered on SIGSEGV, SIGBUS, SIGFPE, SIGILL, "
           "SIGABRT or SIGTERM, then die as before" },
  { .name = "rotate", .kind = TW__KEY_SIZE, .arg = "SIZE",
    FIELD(rotate_size, TW__FIELD_U64),
    .min = TW_MIN_ROTATE_SIZE, .max = UINT64_MAX, .def = 0,
    .words = off_words,
    .doc = "begin a new file once this one holds this many bytes past its "
           "metadata (compressed bytes for gzip)" },
  { .name = "rotate_every", .kind = TW__KEY_DURATION, .arg = "DURATION",
    FIELD(rotate_interval_ns, TW__FIELD_U64),
    .min = 1, .max = UINT64_MAX, .def = 0, .words = off_words,
    .doc = "begin a new file at the first commit this long after it "
           "began, if it holds events" },
  { .name = "keep", .kind = TW__KEY_NUMBER, .arg = "N",
    FIELD(rotate_keep, TW__FIELD_UNSIGNED),
    .min = 1, .max = UINT_MAX, .def = 0, .words = all_words,
    .doc = "finished files kept with rotation; older ones are deleted" },
  { .name = "timebase", .kind = TW__KEY_WORD,
    FIELD(timebase, TW__FIELD_INT),
    .def = TW_TIMEBASE_MONOTONIC, .words = timebase_words,
    .doc = "the clock of ts: the monotonic clock, or the wall clock since "
           "the PyTorch profiler's shared base" },
  { .name = "rank", .kind = TW__KEY_NUMBER, .arg = "N",
    FIELD(rank, TW__FIELD_INT),
    .min = 0, .max = TW_RANK_AUTO - 1, .def = TW_RANK_AUTO,
    .words = rank_words,
    .doc = "the process's rank, as distributedInfo and its sort index; "
           "auto: RANK from the environment" },
  { .name = "format", .kind = TW__KEY_WORD, FIELD(format, TW__FIELD_INT),
    .def = TW_FORMAT_ARRAY, .words = format_words,
    .doc = "the file layout: a bare array, or {\"traceEvents\":[...]}" },
  { .name = "sink", .kind = TW__KEY_WORD, FIELD(sink, TW__FIELD_INT),
    .def = TW_SINK_AUTO, .words = sink_words,
    .doc = "where the bytes go; auto is gzip for a path ending in .gz, "
           "else file" },
  { .name = "mmap", .kind = TW__KEY_ALIAS, .bare = "sink=mmap",
    .doc = "the mmap sink" },
  { .name = "gzip", .kind = TW__KEY_NUMBER, .arg = "LEVEL",
    FIELD(gzip_level, TW__FIELD_INT),
    .min = 1, .max = 9, .def = TW_DEFAULT_GZIP_LEVEL,
    .bare = "sink=gzip", .also = "sink=gzip",
    .doc = "the gzip sink at this compression level, 1 the fastest, 9 the "
           "smallest" },
  { .name = "gzip_threads", .kind = TW__KEY_NUMBER, .arg = "N",
    FIELD(gzip_threads, TW__FIELD_UNSIGNED),
    .min = 1, .max = 17, .def = 0, .words = auto_words,
    .doc = "the most threads deflating one gzip commit (1: no worker "
           "threads); auto: one per CPU, workers started only when "
           "compression bounds the writer" },
  { .name = "chunk", .kind = TW__KEY_SIZE, .arg = "SIZE",
    FIELD(mmap_chunk, TW__FIELD_SIZE),
    .min = MIN_MMAP_CHUNK, .max = MAX_SIZE_OPTION,
    .def = TW_DEFAULT_MMAP_CHUNK,
    .doc = "how much the mmap sink grows the file at a time" },
  { .name = "utf8", .kind = TW__KEY_FLAG, FLAG(TW_OPT_REJECT_INVALID_UTF8),
    .def = 0, .words = utf8_words,
    .doc = "invalid UTF-8 in a string: replaced by U+FFFD, or the event "
           "refused" },
  { .name = "nonfinite", .kind = TW__KEY_FLAG, FLAG(TW_OPT_REJECT_NONFINITE),
    .def = 0, .words = nonfinite_words,
    .doc = "a NaN or infinite number: written as null, or the event "
           "refused" },
  { .name = "long", .kind = TW__KEY_FLAG, FLAG(TW_OPT_REJECT_LONG_STRINGS),
    .def = 0, .words = long_words,
    .doc = "a string longer than max_string: cut on a UTF-8 boundary, or "
           "the event refused" },
  /* At least the library's own names ("process_sort_index"...). */
  { .name = "max_string", .kind = TW__KEY_SIZE, .arg = "SIZE",
    FIELD(max_string, TW__FIELD_SIZE),
    .min = TW_MIN_MAX_STRING, .max = MAX_SIZE_OPTION,
    .def = TW_DEFAULT_MAX_STRING,
    .doc = "the longest string written, in input bytes" },
  { .name = "max_event", .kind = TW__KEY_SIZE, .arg = "SIZE",
    FIELD(max_event, TW__FIELD_SIZE),
    .min = MIN_MAX_EVENT, .max = MAX_SIZE_OPTION,
    .def = TW_DEFAULT_MAX_EVENT,
    .doc = "the largest record once formatted; a larger event is refused" },
};
const size_t tw__option_nkeys = sizeof tw__option_keys /
                                sizeof tw__option_keys[0];

/* The key named key[0..klen), or NULL. */
static const tw__option_key *find_key(const char *key, size_t klen)
{
  for (size_t i = 0; i < tw__option_nkeys; i++)
    if (strlen(tw__option_keys[i].name) == klen &&
        memcmp(tw__option_keys[i].name, key, klen) == 0)
      return &tw__option_keys[i];
  return NULL;
}

/* The word w[0..n) of k, or NULL. */
static const tw__key_word *find_word(const tw__option_key *k, const char *w,
                                     size_t n)
{
  for (const tw__key_word *x = k->words; x && x->word; x++)
    if (strlen(x->word) == n && memcmp(x->word, w, n) == 0)
      return x;
  return NULL;
}

/* Read k's field of *o into *v.  Returns 0, or -1 if it is negative. */
static int load(const tw_options *o, const tw__option_key *k, uint64_t *v)
{
  const char *p = (const char *)o + k->offset;

  switch (k->type) {
  case TW__FIELD_INT: {
    int i;
    memcpy(&i, p, sizeof i);
    *v = (uint64_t)i;
    return i < 0 ? -1 : 0;
  }
  case TW__FIELD_UNSIGNED: {
    unsigned u;
    memcpy(&u, p, sizeof u);
    *v = u;
    return 0;
  }
  case TW__FIELD_SIZE: {
    size_t s;
    memcpy(&s, p, sizeof s);
    *v = s;
    return 0;
  }
  default:
    memcpy(v, p, sizeof *v);
    return 0;
  }
}

/* Store v, already checked against k's range, into k's field of *o. */
static void store(tw_options *o, const tw__option_key *k, uint64_t v)
{
  char *p = (char *)o + k->offset;

  if (k->kind == TW__KEY_FLAG) {
    o->flags = v ? o->flags | k->flag : o->flags & ~k->flag;
    return;
  }
  switch (k->type) {
  case TW__FIELD_INT: {
    int i = (int)v;
    memcpy(p, &i, sizeof i);
    break;
  }
  case TW__FIELD_UNSIGNED: {
    unsigned u = (unsigned)v;
    memcpy(p, &u, sizeof u);
    break;
  }
  case TW__FIELD_SIZE: {
    size_t s = (size_t)v;
    memcpy(p, &s, sizeof s);
    break;
  }
  case TW__FIELD_U64:
    memcpy(p, &v, sizeof v);
    break;
  }
}

uint64_t tw__option_field_max(const tw__option_key *k)
{
  switch (k->type) {
  case TW__FIELD_INT: return INT_MAX;
  case TW__FIELD_UNSIGNED: return UINT_MAX;
  case TW__FIELD_SIZE: return SIZE_MAX;
  default: return UINT64_MAX;
  }
}

/* 1 if the number v is within k's range ("off" is not a number). */
static int in_bounds(const tw__option_key *k, uint64_t v)
{
  return k->kind != TW__KEY_WORD && v >= k->min && v <= k->max &&
         v <= tw__option_field_max(k);
}

/* 1 if v is a value of k's field: one of its words' or within bounds. */
static int in_range(const tw__option_key *k, uint64_t v)
{
  for (const tw__key_word *x = k->words; x && x->word; x++)
    if (x->value == v)
      return 1;
  return in_bounds(k, v);
}

/* ------------------------------------------------- defaults and checks */

static void set_defaults(tw_options *o)
{
  memset(o, 0, sizeof *o);
  o->struct_size = sizeof *o;
  o->file_mode = 0644;                    /* no key: not in the table */
  for (size_t i = 0; i < tw__option_nkeys; i++)
    if (tw__option_keys[i].field)
      store(o, &tw__option_keys[i], tw__option_keys[i].def);
}

int tw_options_init_sized(tw_options *opts, size_t size)
{
  tw_options d;

  if (!opts)
    return -EINVAL;
  /* Smaller than any tw_options ever published: not built against a
   * header of ours, the same mistake tw__options_import reports. */
  if (size < OPTIONS_V1_SIZE)
    return TW_EVERSION;
  set_defaults(&d);
  /* A caller built against a newer header has fields we do not know:
   * zero them, and say which size we filled. */
  if (size > sizeof d) {
    memset((char *)opts + sizeof d, 0, size - sizeof d);
    size = sizeof d;
  }
  d.struct_size = size;
  memcpy(opts, &d, size);
  return 0;
}

/* Every field within the bounds of its key.  Returns 0 or TW_EOPTION. */
static int check(const tw_options *o)
{
  unsigned known_flags = 0;

  for (size_t i = 0; i < tw__option_nkeys; i++) {
    const tw__option_key *k = &tw__option_keys[i];
    uint64_t v;

    if (k->kind == TW__KEY_FLAG)
      known_flags |= k->flag;
    else if (k->field && (load(o, k, &v) != 0 || !in_range(k, v)))
      return TW_EOPTION;
  }
  if ((o->flags & ~known_flags) || o->file_mode < 0 || o->file_mode > 07777)
    return TW_EOPTION;
  return 0;
}

int tw__options_import(tw_options *out, const tw_options *in)
{
  set_defaults(out);
  if (in) {
    if (in->struct_size < OPTIONS_V1_SIZE || in->struct_size > sizeof *out)
      return TW_EVERSION;
    memcpy(out, in, in->struct_size);
    out->struct_size = sizeof *out;
  }
  return check(out);
}

/* ----------------------------------------------------- sizes, durations */

/* The decimal digits at the start of s[0..n) into *v; returns how many
 * (0: none, or more than UINT64_MAX). */
static size_t parse_digits(const char *s, size_t n, uint64_t *v)
{
  size_t i = 0;

  *v = 0;
  while (i < n && s[i] >= '0' && s[i] <= '9') {
    if (*v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
      return 0;
    *v = *v * 10 + (uint64_t)(s[i++] - '0');
  }
  return i;
}

/* 1 if s[0..n) is word, in any case (word is lower case). */
static int is_unit(const char *s, size_t n, const char *word)
{
  if (strlen(word) != n)
    return 0;
  for (size_t i = 0; i < n; i++)
    if ((s[i] >= 'A' && s[i] <= 'Z' ? s[i] - 'A' + 'a' : s[i]) != word[i])
      return 0;
  return 1;
}

/* A number with a unit from units[] (ended by a NULL name), scaled. */
typedef struct unit { const char *name; uint64_t scale; } unit;

static int parse_scaled(const char *s, size_t n, const unit *units,
                        uint64_t *out)
{
  uint64_t v;
  size_t i = parse_digits(s, n, &v);

  if (i == 0)
    return -1;
  for (const unit *u = units; u->name; u++)
    if (is_unit(s + i, n - i, u->name)) {
      if (v > UINT64_MAX / u->scale)
        return -1;
      *out = v * u->scale;
      return 0;
    }
  return -1;
}

int tw__parse_size(const char *s, size_t n, uint64_t *out)
{
  static const unit units[] = {
    { "", 1 },
    { "k", 1u << 10 }, { "kb", 1u << 10 }, { "kib", 1u << 10 },
    { "m", 1u << 20 }, { "mb", 1u << 20 }, { "mib", 1u << 20 },
    { "g", 1u << 30 }, { "gb", 1u << 30 }, { "gib", 1u << 30 },
    { NULL, 0 }
  };
  return parse_scaled(s, n, units, out);
}

int tw__parse_duration(const char *s, size_t n, uint64_t *out)
{
  static const unit units[] = {
    { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
    { "m", 60000000000ull }, { "h", 3600000000000ull }, { NULL, 0 }
  };
  return parse_scaled(s, n, units, out);
}

/* ------------------------------------------------------- the messages */

/* Format a message into err (if any); returns TW_EOPTION. */
static int fail(char *err, size_t errsize, const char *fmt, ...)
{
  va_list ap;

  if (err && errsize) {
    va_start(ap, fmt);
    vsnprintf(err, errsize, fmt, ap);
    va_end(ap);
  }
  return TW_EOPTION;
}

/* Append to buf[size] (always NUL-terminated). */
static void add(char *buf, size_t size, const char *fmt, ...)
{
  size_t len = strlen(buf);
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(buf + len, size - len, fmt, ap);
  va_end(ap);
}

/* v as k writes it in a message: "4KiB", "1ns", "8". */
static void add_value(char *buf, size_t size, const tw__option_key *k,
                      uint64_t v)
{
  static const char *const sizes[] = { "", "KiB", "MiB", "GiB" };
  unsigned u = 0;

  if (k->kind == TW__KEY_DURATION) {
    add(buf, size, "%lluns", (unsigned long long)v);
    return;
  }
  while (k->kind == TW__KEY_SIZE && u < 3 && v >= 1024 && v % 1024 == 0) {
    v /= 1024;
    u++;
  }
  add(buf, size, "%llu%s", (unsigned long long)v, sizes[u]);
}

/* k's words: "auto, inline or background"; after a number, ", or off". */
static void add_words(char *buf, size_t size, const tw__option_key *k)
{
  int numeric = k->kind != TW__KEY_WORD && k->kind != TW__KEY_FLAG;

  for (const tw__key_word *x = k->words; x && x->word; x++)
    add(buf, size, "%s%s", numeric ? ", or " : x == k->words ? ""
                           : x[1].word ? ", " : " or ", x->word);
}

/* What k takes, for a value that is not one: "a size such as 65536, 64KiB
 * or 1MiB, or off", "auto, inline or background". */
static void expected(char *buf, size_t size, const tw__option_key *k)
{
  buf[0] = '\0';
  if (k->kind == TW__KEY_SIZE)
    add(buf, size, "a size such as 65536, 64KiB or 1MiB");
  else if (k->kind == TW__KEY_DURATION)
    add(buf, size, "a duration such as 100ms, 2s or 1h");
  else if (k->kind == TW__KEY_NUMBER)
    add(buf, size, "a number");
  add_words(buf, size, k);
}

/* k's range: "between 256 and 1GiB, or off", "at least 1, or all". */
static void range(char *buf, size_t size, const tw__option_key *k)
{
  buf[0] = '\0';
  if (k->max >= tw__option_field_max(k)) {
    add(buf, size, "at least ");
    add_value(buf, size, k, k->min);
  } else {
    add(buf, size, "between ");
    add_value(buf, size, k, k->min);
    add(buf, size, " and ");
    add_value(buf, size, k, k->max);
  }
  add_words(buf, size, k);
}

/* The number of edits that turn a[0..n) into b, if at most 2; else 3. */
static unsigned distance(const char *a, size_t n, const char *b)
{
  size_t m = strlen(b);
  unsigned row[32], prev;

  if (n >= sizeof row / sizeof row[0] || m >= sizeof row / sizeof row[0] ||
      (n > m ? n - m : m - n) > 2)
    return 3;
  for (size_t j = 0; j <= m; j++)
    row[j] = (unsigned)j;
  for (size_t i = 1; i <= n; i++) {
    prev = row[0];
    row[0] = (unsigned)i;
    for (size_t j = 1; j <= m; j++) {
      unsigned sub = prev + (a[i - 1] != b[j - 1]);
      unsigned best = row[j] + 1 < row[j - 1] + 1 ? row[j] + 1
                                                  : row[j - 1] + 1;
      prev = row[j];
      row[j] = sub < best ? sub : best;
    }
  }
  return row[m] < 3 ? row[m] : 3;
}

static int unknown(const char *key, size_t klen, char *err, size_t errsize)
{
  const char *near = NULL;
  unsigned best = 3;

  if (klen == 0)
    return fail(err, errsize, "missing key before '='");
  for (size_t i = 0; i < tw__option_nkeys; i++) {
    unsigned d = distance(key, klen, tw__option_keys[i].name);
    if (d < best) {
      best = d;
      near = tw__option_keys[i].name;
    }
  }
  if (near && klen > 2)
    return fail(err, errsize, "unknown option '%.*s'; did you mean '%s'?",
                (int)klen, key, near);
  return fail(err, errsize, "unknown option '%.*s'", (int)klen, key);
}

/* ----------------------------------------------------- the options string */

static int apply_item(tw_options *o, const char *item, size_t len,
                      char *err, size_t errsize);

/* Apply key=val (val NULL for a bare key) to *o. */
static int apply(tw_options *o, const char *key, size_t klen,
                 const char *val, size_t vlen, char *err, size_t errsize)
{
  const tw__option_key *k = find_key(key, klen);
  const tw__key_word *w;
  char what[128];
  uint64_t v;
  int rc = 0;

  if (!k)
    return unknown(key, klen, err, errsize);
  if (!val) {
    if (k->bare)
      return apply_item(o, k->bare, strlen(k->bare), err, errsize);
    expected(what, sizeof what, k);
    return fail(err, errsize, "missing value for '%s': expected %s",
                k->name, what);
  }
  if (k->kind == TW__KEY_ALIAS)
    return fail(err, errsize, "bad value '%.*s' for '%s': '%s' takes no "
                "value", (int)vlen, val, k->name, k->name);
  if ((w = find_word(k, val, vlen)) != NULL)
    v = w->value;
  else if (k->kind == TW__KEY_SIZE)
    rc = tw__parse_size(val, vlen, &v);
  else if (k->kind == TW__KEY_DURATION)
    rc = tw__parse_duration(val, vlen, &v);
  else if (k->kind == TW__KEY_NUMBER)
    rc = parse_digits(val, vlen, &v) == vlen && vlen ? 0 : -1;
  else
    rc = -1;
  if (rc != 0) {
    expected(what, sizeof what, k);
    return fail(err, errsize, "bad value '%.*s' for '%s': expected %s",
                (int)vlen, val, k->name, what);
  }
  if (!w && !in_bounds(k, v)) {
    range(what, sizeof what, k);
    return fail(err, errsize, "bad value '%.*s' for '%s': must be %s",
                (int)vlen, val, k->name, what);
  }
  if (k->also && (rc = apply_item(o, k->also, strlen(k->also), err,
                                  errsize)) != 0)
    return rc;
  store(o, k, v);
  return 0;
}

/* 1 for the blanks ignored around keys, values and commas. */
static int blank(char c)
{
  return c == ' ' || c == '\t';
}

/* Apply one item, "key=value" or "key", blanks around key and value
 * ignored. */
static int apply_item(tw_options *o, const char *item, size_t len,
                      char *err, size_t errsize)
{
  const char *eq = memchr(item, '=', len), *val;
  size_t klen = eq ? (size_t)(eq - item) : len, vlen;

  while (klen && blank(item[klen - 1]))
    klen--;
  if (!eq)
    return apply(o, item, klen, NULL, 0, err, errsize);
  val = eq + 1;
  vlen = len - (size_t)(val - item);
  while (vlen && blank(*val)) {
    val++;
    vlen--;
  }
  return apply(o, item, klen, val, vlen, err, errsize);
}

int tw_options_parse(tw_options *opts, const char *str, char *err,
                     size_t errsize)
{
  tw_options o;
  const char *p = str;
  int rc;

  if (err && errsize)
    err[0] = '\0';
  if (!opts)
    return -EINVAL;
  if ((rc = tw__options_import(&o, opts)) != 0)
    return rc == TW_EVERSION ? rc
                             : fail(err, errsize, "invalid options struct");
  while (p && *p) {
    const char *item = p, *end = strchr(p, ',');
    size_t len;

    if (!end)
      end = p + strlen(p);
    p = *end ? end + 1 : end;
    while (item < end && blank(*item))
      item++;
    len = (size_t)(end - item);
    while (len && blank(item[len - 1]))
      len--;
    if (len == 0)
      continue;                           /* "a,,b" and a trailing comma */
    if ((rc = apply_item(&o, item, len, err, errsize)) != 0)
      return rc;
  }
  o.struct_size = opts->struct_size;      /* the caller's, not ours */
  memcpy(opts, &o, o.struct_size);
  return 0;
}
