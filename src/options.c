/* options.c -- tw_options defaults, the options string, version checks */
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The size of the first published tw_options: every caller knows at least
 * these fields.  Fields added later go after rotate_keep. */
#define OPTIONS_V1_SIZE (offsetof(tw_options, rotate_keep) + sizeof(unsigned))

#define KNOWN_FLAGS (TW_OPT_REJECT_INVALID_UTF8 | TW_OPT_REJECT_NONFINITE | \
                     TW_OPT_REJECT_LONG_STRINGS | TW_OPT_SYNC)
#define MAX_SIZE_OPTION ((size_t)1 << 30)

static void set_defaults(tw_options *o)
{
  memset(o, 0, sizeof *o);
  o->struct_size = sizeof *o;
  o->buffer_size = TW_DEFAULT_BUFFER_SIZE;
  o->format = TW_FORMAT_ARRAY;
  o->sink = TW_SINK_AUTO;
  o->max_string = TW_DEFAULT_MAX_STRING;
  o->max_event = TW_DEFAULT_MAX_EVENT;
  o->file_mode = 0644;
  o->commit = TW_COMMIT_AUTO;
  o->buffer_count = TW_DEFAULT_BUFFER_COUNT;
  o->gzip_level = TW_DEFAULT_GZIP_LEVEL;
  o->mmap_chunk = TW_DEFAULT_MMAP_CHUNK;
}

int tw_options_init_sized(tw_options *opts, size_t size)
{
  tw_options d;

  if (!opts || size < OPTIONS_V1_SIZE)
    return -EINVAL;
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

static int check(const tw_options *o)
{
  if (o->buffer_size < TW_MIN_BUFFER_SIZE || o->buffer_size > MAX_SIZE_OPTION ||
      o->max_event < 4096 || o->max_event > MAX_SIZE_OPTION ||
      o->max_string < TW_MIN_MAX_STRING ||
      (o->format != TW_FORMAT_ARRAY && o->format != TW_FORMAT_OBJECT) ||
      o->sink < TW_SINK_AUTO || o->sink > TW_SINK_GZIP ||
      o->gzip_level < 1 || o->gzip_level > 9 ||
      o->commit < TW_COMMIT_AUTO || o->commit > TW_COMMIT_BACKGROUND ||
      o->buffer_count < 2 || o->buffer_count > TW_MAX_BUFFER_COUNT ||
      o->mmap_chunk < 4096 || o->mmap_chunk > MAX_SIZE_OPTION ||
      (o->on_full != TW_ON_FULL_BLOCK && o->on_full != TW_ON_FULL_DROP) ||
      (o->crash != TW_CRASH_OFF && o->crash != TW_CRASH_COMMIT) ||
      (o->rotate_size != 0 && o->rotate_size < TW_MIN_ROTATE_SIZE) ||
      (o->flags & ~KNOWN_FLAGS) || o->file_mode < 0 || o->file_mode > 07777)
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

/* ------------------------------------------------------- options string */

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

/* Parse a size: digits and an optional unit (k/KiB/KB, m/MiB/MB, g/GiB/GB,
 * all powers of 1024).  Returns 0 or -1. */
static int parse_size(const char *s, size_t n, size_t *out)
{
  static const struct { const char *unit; unsigned shift; } units[] = {
    { "", 0 }, { "k", 10 }, { "K", 10 }, { "KiB", 10 }, { "KB", 10 },
    { "kB", 10 }, { "m", 20 }, { "M", 20 }, { "MiB", 20 }, { "MB", 20 },
    { "g", 30 }, { "G", 30 }, { "GiB", 30 }, { "GB", 30 },
  };
  size_t i = 0, v = 0;

  while (i < n && s[i] >= '0' && s[i] <= '9') {
    if (v > (SIZE_MAX - 9) / 10)
      return -1;
    v = v * 10 + (size_t)(s[i++] - '0');
  }
  if (i == 0)
    return -1;
  for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
    size_t ul = strlen(units[u].unit);
    if (ul == n - i && memcmp(s + i, units[u].unit, ul) == 0) {
      if (v > (SIZE_MAX >> units[u].shift))
        return -1;
      *out = v << units[u].shift;
      return 0;
    }
  }
  return -1;
}

/* Parse a duration: digits and a unit (ns, us, ms, s, m, h).  Returns 0
 * or -1. */
static int parse_duration(const char *s, size_t n, uint64_t *out)
{
  static const struct { const char *unit; uint64_t ns; } units[] = {
    { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
    { "m", 60000000000ull }, { "h", 3600000000000ull },
  };
  size_t i = 0;
  uint64_t v = 0;

  while (i < n && s[i] >= '0' && s[i] <= '9') {
    if (v > (UINT64_MAX - 9) / 10)
      return -1;
    v = v * 10 + (uint64_t)(s[i++] - '0');
  }
  if (i == 0)
    return -1;
  for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
    size_t ul = strlen(units[u].unit);
    if (ul == n - i && memcmp(s + i, units[u].unit, ul) == 0) {
      if (v > UINT64_MAX / units[u].ns)
        return -1;
      *out = v * units[u].ns;
      return 0;
    }
  }
  return -1;
}

/* 1 if value[0..n) is exactly word. */
static int is(const char *value, size_t n, const char *word)
{
  return strlen(word) == n && memcmp(value, word, n) == 0;
}

/* Apply one key=value (value NULL for a bare key) to *o. */
static int apply(tw_options *o, const char *key, size_t klen,
                 const char *val, size_t vlen, char *err, size_t errsize)
{
  size_t size;

  if (!val) {
    if (is(key, klen, "mmap") || is(key, klen, "gzip"))
      return apply(o, "sink", 4, key, klen, err, errsize);
    if (is(key, klen, "sync")) {
      o->flags |= TW_OPT_SYNC;
      return 0;
    }
    return fail(err, errsize, "unknown option '%.*s'", (int)klen, key);
  }
  if (is(key, klen, "gzip")) {
    if (vlen != 1 || val[0] < '1' || val[0] > '9')
      return fail(err, errsize, "bad value '%.*s' for 'gzip': expected a "
                  "level from 1 to 9", (int)vlen, val);
    o->sink = TW_SINK_GZIP;
    o->gzip_level = val[0] - '0';
    return 0;
  }
  if (is(key, klen, "buffers")) {
    if (vlen != 1 || val[0] < '2' || (unsigned)(val[0] - '0') > TW_MAX_BUFFER_COUNT)
      return fail(err, errsize, "bad value '%.*s' for 'buffers': expected "
                  "2 to %u", (int)vlen, val, TW_MAX_BUFFER_COUNT);
    o->buffer_count = (unsigned)(val[0] - '0');
    return 0;
  }
  if (is(key, klen, "flush")) {
    uint64_t ns;
    if (is(val, vlen, "off"))
      ns = 0;
    else if (parse_duration(val, vlen, &ns) != 0 || ns == 0)
      return fail(err, errsize, "bad value '%.*s' for 'flush': expected a "
                  "duration such as 100ms, 2s or 500us, or off",
                  (int)vlen, val);
    o->flush_interval_ns = ns;
    return 0;
  }
  if (is(key, klen, "on_full")) {
    if (is(val, vlen, "block"))
      o->on_full = TW_ON_FULL_BLOCK;
    else if (is(val, vlen, "drop"))
      o->on_full = TW_ON_FULL_DROP;
    else
      return fail(err, errsize, "bad value '%.*s' for 'on_full': expected "
                  "block or drop", (int)vlen, val);
    return 0;
  }
  if (is(key, klen, "rotate")) {
    if (is(val, vlen, "off"))
      size = 0;
    else if (parse_size(val, vlen, &size) != 0 || size < TW_MIN_ROTATE_SIZE)
      return fail(err, errsize, "bad value '%.*s' for 'rotate': expected a "
                  "size of at least 4KiB such as 64MiB, or off", (int)vlen,
                  val);
    o->rotate_size = size;
    return 0;
  }
  if (is(key, klen, "rotate_every")) {
    uint64_t ns;
    if (is(val, vlen, "off"))
      ns = 0;
    else if (parse_duration(val, vlen, &ns) != 0 || ns == 0)
      return fail(err, errsize, "bad value '%.*s' for 'rotate_every': "
                  "expected a duration such as 1h, 10m or 30s, or off",
                  (int)vlen, val);
    o->rotate_interval_ns = ns;
    return 0;
  }
  if (is(key, klen, "keep")) {
    if (is(val, vlen, "all"))
      size = 0;
    else if (parse_size(val, vlen, &size) != 0 || size == 0 ||
             size > UINT_MAX || val[vlen - 1] < '0' || val[vlen - 1] > '9')
      return fail(err, errsize, "bad value '%.*s' for 'keep': expected a "
                  "number of files (1 or more), or all", (int)vlen, val);
    o->rotate_keep = (unsigned)size;
    return 0;
  }
  if (is(key, klen, "crash")) {
    if (is(val, vlen, "off"))
      o->crash = TW_CRASH_OFF;
    else if (is(val, vlen, "commit"))
      o->crash = TW_CRASH_COMMIT;
    else
      return fail(err, errsize, "bad value '%.*s' for 'crash': expected "
                  "off or commit", (int)vlen, val);
    return 0;
  }
  if (is(key, klen, "commit")) {
    if (is(val, vlen, "auto"))
      o->commit = TW_COMMIT_AUTO;
    else if (is(val, vlen, "inline"))
      o->commit = TW_COMMIT_INLINE;
    else if (is(val, vlen, "background"))
      o->commit = TW_COMMIT_BACKGROUND;
    else
      return fail(err, errsize, "bad value '%.*s' for 'commit': expected "
                  "auto, inline or background", (int)vlen, val);
    return 0;
  }
  if (is(key, klen, "buffer") || is(key, klen, "max_string") ||
      is(key, klen, "max_event") || is(key, klen, "chunk")) {
    if (parse_size(val, vlen, &size) != 0)
      return fail(err, errsize, "bad value '%.*s' for '%.*s': expected a "
                  "size such as 65536, 64KiB or 1MiB", (int)vlen, val,
                  (int)klen, key);
    if (is(key, klen, "buffer")) {
      if (size < TW_MIN_BUFFER_SIZE || size > MAX_SIZE_OPTION)
        return fail(err, errsize, "bad value '%.*s' for 'buffer': must be "
                    "between 256 and 1GiB", (int)vlen, val);
      o->buffer_size = size;
    } else if (is(key, klen, "chunk")) {
      if (size < 4096 || size > MAX_SIZE_OPTION)
        return fail(err, errsize, "bad value '%.*s' for 'chunk': must be "
                    "between 4KiB and 1GiB", (int)vlen, val);
      o->mmap_chunk = size;
    } else if (is(key, klen, "max_event")) {
      if (size < 4096 || size > MAX_SIZE_OPTION)
        return fail(err, errsize, "bad value '%.*s' for 'max_event': must "
                    "be between 4KiB and 1GiB", (int)vlen, val);
      o->max_event = size;
    } else {
      /* At least the library's own names: "process_sort_index"... */
      if (size < TW_MIN_MAX_STRING)
        return fail(err, errsize, "bad value '%.*s' for 'max_string': "
                    "must be at least %u", (int)vlen, val,
                    TW_MIN_MAX_STRING);
      o->max_string = size;
    }
  } else if (is(key, klen, "format")) {
    if (is(val, vlen, "array"))
      o->format = TW_FORMAT_ARRAY;
    else if (is(val, vlen, "object"))
      o->format = TW_FORMAT_OBJECT;
    else
      return fail(err, errsize, "bad value '%.*s' for 'format': expected "
                  "array or object", (int)vlen, val);
  } else if (is(key, klen, "sink")) {
    if (is(val, vlen, "auto"))
      o->sink = TW_SINK_AUTO;
    else if (is(val, vlen, "file"))
      o->sink = TW_SINK_FILE;
    else if (is(val, vlen, "mmap"))
      o->sink = TW_SINK_MMAP;
    else if (is(val, vlen, "gzip"))
      o->sink = TW_SINK_GZIP;
    else
      return fail(err, errsize, "bad value '%.*s' for 'sink': expected "
                  "auto, file, mmap or gzip", (int)vlen, val);
  } else if (is(key, klen, "utf8") || is(key, klen, "nonfinite") ||
             is(key, klen, "long")) {
    const char *lenient = is(key, klen, "utf8") ? "replace"
                          : is(key, klen, "nonfinite") ? "null" : "truncate";
    unsigned flag = is(key, klen, "utf8") ? TW_OPT_REJECT_INVALID_UTF8
                    : is(key, klen, "nonfinite") ? TW_OPT_REJECT_NONFINITE
                    : TW_OPT_REJECT_LONG_STRINGS;
    if (is(val, vlen, "reject"))
      o->flags |= flag;
    else if (is(val, vlen, lenient))
      o->flags &= ~flag;
    else
      return fail(err, errsize, "bad value '%.*s' for '%.*s': expected %s "
                  "or reject", (int)vlen, val, (int)klen, key, lenient);
  } else {
    return fail(err, errsize, "unknown option '%.*s'", (int)klen, key);
  }
  return 0;
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
    const char *item = p, *end = strchr(p, ','), *eq;
    size_t len;

    if (!end)
      end = p + strlen(p);
    p = *end ? end + 1 : end;
    while (item < end && *item == ' ')
      item++;
    len = (size_t)(end - item);
    while (len && item[len - 1] == ' ')
      len--;
    if (len == 0)
      continue;                           /* "a,,b" and a trailing comma */
    eq = memchr(item, '=', len);
    if (eq)
      rc = apply(&o, item, (size_t)(eq - item), eq + 1,
                 len - (size_t)(eq - item) - 1, err, errsize);
    else
      rc = apply(&o, item, len, NULL, 0, err, errsize);
    if (rc)
      return rc;
  }
  o.struct_size = opts->struct_size;      /* the caller's, not ours */
  memcpy(opts, &o, o.struct_size);
  return 0;
}
