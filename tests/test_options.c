/* test_options.c -- tw_options_init and the options string
 *
 * Defaults, forward compatibility of the struct, every key and value of
 * tw_options_parse, every bad case (TW_EOPTION, options untouched, a
 * message naming the culprit), and the parsed options driving tw_open.
 */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <unistd.h>

/* ------------------------------------------------------------- helpers */

static tw_options fresh(void)
{
  tw_options o;
  assert_int_equal(tw_options_init(&o), 0);
  return o;
}

/* Parse str into a fresh options struct, which must succeed; returns the
 * result. */
static tw_options parse_ok(const char *str)
{
  tw_options o = fresh();
  char err[256] = "untouched";
  int rc = tw_options_parse(&o, str, err, sizeof err);

  if (rc != 0)
    fail_msg("tw_options_parse(\"%s\") = %d (%s): %s", str, rc,
             tw_err_name(rc), err);
  assert_string_equal(err, "");
  assert_int_equal(o.struct_size, sizeof o);
  return o;
}

/* str must fail with TW_EOPTION, leave the options as they were, and say
 * something containing what (the bad key or value). */
static void parse_bad(const char *str, const char *what)
{
  tw_options o = fresh(), copy;
  char err[512];
  int rc;

  /* Start from non-default values: a failed parse must keep them. */
  o.buffer_size = 12345;
  o.format = TW_FORMAT_OBJECT;
  o.flags = TW_OPT_REJECT_NONFINITE;
  o.max_string = 77;
  memcpy(&copy, &o, sizeof o);
  memset(err, 'Z', sizeof err);
  rc = tw_options_parse(&o, str, err, sizeof err);
  if (rc != TW_EOPTION)
    fail_msg("tw_options_parse(\"%s\") = %d (%s), expected TW_EOPTION", str,
             rc, tw_err_name(rc));
  assert_memory_equal(&o, &copy, sizeof o);
  assert_non_null(memchr(err, '\0', sizeof err));
  if (!strstr(err, what))
    fail_msg("tw_options_parse(\"%s\"): message \"%s\" does not name "
             "\"%s\"", str, err, what);
}

/* ------------------------------------------------------------ defaults */

static void test_init_defaults(void **state)
{
  tw_options o;

  (void)state;
  memset(&o, 0xAA, sizeof o);
  assert_int_equal(tw_options_init(&o), 0);
  assert_int_equal(o.struct_size, sizeof(tw_options));
  assert_int_equal(o.buffer_size, TW_DEFAULT_BUFFER_SIZE);
  assert_int_equal(o.format, TW_FORMAT_ARRAY);
  assert_int_equal(o.sink, TW_SINK_AUTO);
  assert_int_equal(o.flags, 0);
  assert_int_equal(o.max_string, TW_DEFAULT_MAX_STRING);
  assert_int_equal(o.max_event, TW_DEFAULT_MAX_EVENT);
  assert_null(o.process_name);
  assert_int_equal(o.file_mode, 0644);
  assert_int_equal(o.gzip_level, TW_DEFAULT_GZIP_LEVEL);
  assert_int_equal(o.commit, TW_COMMIT_AUTO);
  assert_int_equal(o.buffer_count, TW_DEFAULT_BUFFER_COUNT);
  assert_int_equal(o.mmap_chunk, TW_DEFAULT_MMAP_CHUNK);
  assert_int_equal(o.flush_interval_ns, 0);
  assert_int_equal(o.on_full, TW_ON_FULL_BLOCK);

  assert_int_equal(tw_options_init_sized(NULL, sizeof o), -EINVAL);
  assert_int_equal(tw_options_init(NULL), -EINVAL);
}

/* A size too small to be a tw_options at all is the struct_size mistake
 * that tw_open and tw_options_parse report: TW_EVERSION; a NULL pointer
 * is -EINVAL, whatever the size. */
static void test_init_too_small(void **state)
{
  tw_options o, copy;
  const size_t sizes[] = { 0, 1, sizeof(size_t),
                           offsetof(tw_options, format),
                           offsetof(tw_options, file_mode) };
  char err[64];

  (void)state;
  memset(&o, 0x55, sizeof o);
  memcpy(&copy, &o, sizeof o);
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    assert_int_equal(tw_options_init_sized(&o, sizes[i]), TW_EVERSION);
    assert_memory_equal(&o, &copy, sizeof o);      /* nothing written */
    assert_int_equal(tw_options_init_sized(NULL, sizes[i]), -EINVAL);
  }
  /* The same mistake through struct_size, at parse and at open. */
  assert_int_equal(tw_options_init(&o), 0);
  o.struct_size = offsetof(tw_options, file_mode);
  assert_int_equal(tw_options_parse(&o, "sync", err, sizeof err),
                   TW_EVERSION);
  {
    int error = 0;
    assert_null(tw_open_stream(stderr, &o, &error));
    assert_int_equal(error, TW_EVERSION);
  }
}

/* A newer caller's struct is larger: the fields we do not know are
 * zeroed, and struct_size says how much we filled. */
static void test_init_larger(void **state)
{
  size_t size = sizeof(tw_options) + 64;
  unsigned char *buf = malloc(size);
  tw_options o;

  (void)state;
  assert_non_null(buf);
  memset(buf, 0xAA, size);
  assert_int_equal(tw_options_init_sized((tw_options *)buf, size), 0);
  for (size_t i = sizeof(tw_options); i < size; i++)
    if (buf[i] != 0)
      fail_msg("byte %zu past the known struct is 0x%02x, not 0", i, buf[i]);
  /* The known part holds the defaults. */
  assert_int_equal(tw_options_init(&o), 0);
  assert_memory_equal(buf, &o, sizeof o);
  assert_int_equal(((tw_options *)buf)->struct_size, sizeof(tw_options));
  /* Such a struct is accepted by tw_open and tw_options_parse. */
  assert_int_equal(tw_options_parse((tw_options *)buf, "format=object",
                                    NULL, 0), 0);
  assert_int_equal(((tw_options *)buf)->format, TW_FORMAT_OBJECT);
  for (size_t i = sizeof(tw_options); i < size; i++)
    assert_int_equal(buf[i], 0);
  free(buf);
}

/* ---------------------------------------------------------- the string */

static void test_parse_sizes(void **state)
{
  static const struct { const char *str; size_t want; } cases[] = {
    { "buffer=65536", 65536 },
    { "buffer=64KiB", 65536 },
    { "buffer=64k", 65536 },
    { "buffer=64K", 65536 },
    { "buffer=64KB", 65536 },
    { "buffer=256", 256 },
    { "buffer=1MiB", 1u << 20 },
    { "buffer=1m", 1u << 20 },
    { "buffer=1M", 1u << 20 },
    { "buffer=3MB", 3u << 20 },
    { "buffer=1G", 1u << 30 },
    { "buffer=1GiB", 1u << 30 },
    { "buffer=1g", 1u << 30 },
    { "buffer=1024MiB", 1u << 30 },
  };

  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tw_options o = parse_ok(cases[i].str);
    if (o.buffer_size != cases[i].want)
      fail_msg("\"%s\": buffer_size %zu, expected %zu", cases[i].str,
               o.buffer_size, cases[i].want);
  }
  assert_int_equal(parse_ok("max_string=64").max_string, TW_MIN_MAX_STRING);
  assert_int_equal(parse_ok("max_string=100").max_string, 100);
  assert_int_equal(parse_ok("max_string=2k").max_string, 2048);
  assert_int_equal(parse_ok("max_event=4096").max_event, 4096);
  assert_int_equal(parse_ok("max_event=8KiB").max_event, 8192);
  assert_int_equal(parse_ok("max_event=16m").max_event, 16u << 20);
}

static void test_parse_keywords(void **state)
{
  tw_options o;

  (void)state;
  assert_int_equal(parse_ok("format=object").format, TW_FORMAT_OBJECT);
  assert_int_equal(parse_ok("format=object,format=array").format,
                   TW_FORMAT_ARRAY);
  assert_int_equal(parse_ok("format=array").format, TW_FORMAT_ARRAY);
  assert_int_equal(parse_ok("sink=file").sink, TW_SINK_FILE);
  assert_int_equal(parse_ok("sink=file,sink=auto").sink, TW_SINK_AUTO);

  assert_int_equal(parse_ok("utf8=reject").flags, TW_OPT_REJECT_INVALID_UTF8);
  assert_int_equal(parse_ok("utf8=reject,utf8=replace").flags, 0);
  assert_int_equal(parse_ok("nonfinite=reject").flags,
                   TW_OPT_REJECT_NONFINITE);
  assert_int_equal(parse_ok("nonfinite=reject,nonfinite=null").flags, 0);
  assert_int_equal(parse_ok("long=reject").flags, TW_OPT_REJECT_LONG_STRINGS);
  assert_int_equal(parse_ok("long=reject,long=truncate").flags, 0);
  o = parse_ok("utf8=reject,nonfinite=reject,long=reject");
  assert_int_equal(o.flags, TW_OPT_REJECT_INVALID_UTF8 |
                   TW_OPT_REJECT_NONFINITE | TW_OPT_REJECT_LONG_STRINGS);

  /* Everything at once, with the other fields left at their defaults. */
  o = parse_ok("buffer=4KiB,format=object,sink=file,utf8=reject,"
               "nonfinite=null,long=reject,max_string=100,max_event=8k");
  assert_int_equal(o.buffer_size, 4096);
  assert_int_equal(o.format, TW_FORMAT_OBJECT);
  assert_int_equal(o.sink, TW_SINK_FILE);
  assert_int_equal(o.flags, TW_OPT_REJECT_INVALID_UTF8 |
                   TW_OPT_REJECT_LONG_STRINGS);
  assert_int_equal(o.max_string, 100);
  assert_int_equal(o.max_event, 8192);
  assert_int_equal(o.file_mode, 0644);
  assert_null(o.process_name);
}

/* The keys the header documents beyond the basic ones. */
static void test_parse_more_keys(void **state)
{
  tw_options o;

  (void)state;
  assert_int_equal(parse_ok("sink=mmap").sink, TW_SINK_MMAP);
  assert_int_equal(parse_ok("sink=gzip").sink, TW_SINK_GZIP);
  assert_int_equal(parse_ok("mmap").sink, TW_SINK_MMAP);
  assert_int_equal(parse_ok("gzip").sink, TW_SINK_GZIP);
  o = parse_ok("gzip=6");
  assert_int_equal(o.sink, TW_SINK_GZIP);
  assert_int_equal(o.gzip_level, 6);
  assert_int_equal(parse_ok("commit=inline").commit, TW_COMMIT_INLINE);
  assert_int_equal(parse_ok("commit=background").commit,
                   TW_COMMIT_BACKGROUND);
  assert_int_equal(parse_ok("commit=inline,commit=auto").commit,
                   TW_COMMIT_AUTO);
  assert_int_equal(parse_ok("buffers=2").buffer_count, 2);
  assert_int_equal(parse_ok("buffers=8").buffer_count, 8);
  assert_int_equal(parse_ok("chunk=64KiB").mmap_chunk, 65536);
  assert_int_equal(parse_ok("chunk=4096").mmap_chunk, 4096);
  assert_int_equal(parse_ok("flush=100ms").flush_interval_ns, 100000000u);
  assert_int_equal(parse_ok("flush=2s").flush_interval_ns, 2000000000u);
  assert_int_equal(parse_ok("flush=500us").flush_interval_ns, 500000u);
  assert_int_equal(parse_ok("flush=750ns").flush_interval_ns, 750u);
  assert_int_equal(parse_ok("flush=1s,flush=off").flush_interval_ns, 0);
  assert_int_equal(parse_ok("on_full=drop").on_full, TW_ON_FULL_DROP);
  assert_int_equal(parse_ok("on_full=drop,on_full=block").on_full,
                   TW_ON_FULL_BLOCK);
  assert_int_equal(parse_ok("sync").flags, TW_OPT_SYNC);
  o = parse_ok("sync,utf8=reject");
  assert_int_equal(o.flags, TW_OPT_SYNC | TW_OPT_REJECT_INVALID_UTF8);
}

static void test_parse_spacing(void **state)
{
  tw_options o;

  (void)state;
  o = parse_ok("  format=object ,  buffer=1k  ");
  assert_int_equal(o.format, TW_FORMAT_OBJECT);
  assert_int_equal(o.buffer_size, 1024);
  o = parse_ok("format=object,,buffer=2k");
  assert_int_equal(o.format, TW_FORMAT_OBJECT);
  assert_int_equal(o.buffer_size, 2048);
  o = parse_ok("format=object,");
  assert_int_equal(o.format, TW_FORMAT_OBJECT);
  o = parse_ok(",format=object");
  assert_int_equal(o.format, TW_FORMAT_OBJECT);
  o = parse_ok(",, , ,");
  {
    tw_options d = fresh();
    assert_memory_equal(&o, &d, sizeof o);
  }
}

/* NULL and "" are valid and change nothing. */
static void test_parse_empty(void **state)
{
  tw_options o = fresh(), copy;
  char err[64];

  (void)state;
  o.buffer_size = 4096;
  o.format = TW_FORMAT_OBJECT;
  memcpy(&copy, &o, sizeof o);
  memset(err, 'Z', sizeof err);
  assert_int_equal(tw_options_parse(&o, NULL, err, sizeof err), 0);
  assert_memory_equal(&o, &copy, sizeof o);
  assert_string_equal(err, "");
  assert_int_equal(tw_options_parse(&o, "", err, sizeof err), 0);
  assert_memory_equal(&o, &copy, sizeof o);
  assert_int_equal(tw_options_parse(&o, NULL, NULL, 0), 0);
  assert_int_equal(tw_options_parse(&o, "", NULL, 0), 0);
  assert_memory_equal(&o, &copy, sizeof o);
  assert_int_equal(tw_options_parse(NULL, "format=object", err, sizeof err),
                   -EINVAL);
}

static void test_parse_bad(void **state)
{
  static const struct { const char *str, *what; } cases[] = {
    { "bogus=1", "bogus" },
    { "bogus", "bogus" },
    { "format=object,bogus=1", "bogus" },     /* nothing applied */
    { "buffer=1k,bogus", "bogus" },
    { "buffer=", "buffer" },
    { "buffer=abc", "abc" },
    { "buffer=12x", "12x" },
    { "buffer=-1", "-1" },
    { "buffer=1.5k", "1.5k" },
    { "buffer=64 KiB", "64 KiB" },
    { "buffer=100", "100" },
    { "buffer=255", "255" },
    { "buffer=0", "0" },
    { "buffer=2G", "2G" },
    { "buffer=1025MiB", "1025MiB" },
    { "buffer=99999999999999999999999", "99999999999999999999999" },
    { "buffer=18446744073709551616", "18446744073709551616" },
    { "buffer=17179869184G", "17179869184G" },
    { "format=json", "json" },
    { "format=", "format" },
    { "format=OBJECT", "OBJECT" },
    { "sink=floppy", "floppy" },
    { "utf8=maybe", "maybe" },
    { "nonfinite=zero", "zero" },
    { "long=cut", "cut" },
    { "max_string=0", "0" },
    { "max_string=63", "63" },
    { "max_string=x", "x" },
    { "max_event=100", "100" },
    { "max_event=2GiB", "2GiB" },
    { "=1", "" },
    { "gzip=0", "0" },
    { "gzip=10", "10" },
    { "buffers=1", "1" },
    { "buffers=9", "9" },
    { "commit=sometimes", "sometimes" },
    { "chunk=100", "100" },
    { "flush=10", "10" },
    { "flush=0ms", "0ms" },
    { "flush=1.5s", "1.5s" },
    { "flush=abc", "abc" },
    { "flush=", "flush" },
    { "flush=99999999999999999999h", "99999999999999999999h" },
    { "on_full=maybe", "maybe" },
  };

  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    parse_bad(cases[i].str, cases[i].what);
}

/* The message buffer: NULL, size 0, and too small (cut, NUL-terminated). */
static void test_parse_errbuf(void **state)
{
  tw_options o = fresh(), copy;
  char full[512], small[8], zero[4];

  (void)state;
  memcpy(&copy, &o, sizeof o);
  assert_int_equal(tw_options_parse(&o, "bogus=1", NULL, 0), TW_EOPTION);
  assert_int_equal(tw_options_parse(&o, "bogus=1", NULL, 100), TW_EOPTION);
  memset(zero, 'Z', sizeof zero);
  assert_int_equal(tw_options_parse(&o, "bogus=1", zero, 0), TW_EOPTION);
  assert_memory_equal(zero, "ZZZZ", 4);               /* not touched */
  assert_memory_equal(&o, &copy, sizeof o);

  assert_int_equal(tw_options_parse(&o, "bogus=1", full, sizeof full),
                   TW_EOPTION);
  assert_true(strlen(full) > sizeof small);
  memset(small, 'Z', sizeof small);
  assert_int_equal(tw_options_parse(&o, "bogus=1", small, sizeof small),
                   TW_EOPTION);
  assert_int_equal(small[sizeof small - 1], '\0');
  assert_int_equal(strlen(small), sizeof small - 1);
  assert_memory_equal(small, full, sizeof small - 1);
  assert_memory_equal(&o, &copy, sizeof o);

  /* A size of 1 leaves just the terminator. */
  memset(small, 'Z', sizeof small);
  assert_int_equal(tw_options_parse(&o, "bogus=1", small, 1), TW_EOPTION);
  assert_int_equal(small[0], '\0');
  assert_int_equal(small[1], 'Z');
}

/* A struct that is not a tw_options of a known version. */
static void test_parse_bad_struct(void **state)
{
  tw_options o = fresh(), copy;
  char err[128];

  (void)state;
  o.struct_size = 8;
  memcpy(&copy, &o, sizeof o);
  assert_int_equal(tw_options_parse(&o, "format=object", err, sizeof err),
                   TW_EVERSION);
  assert_memory_equal(&o, &copy, sizeof o);
}

/* One size parser: the units in any case, all powers of 1024, for every
 * key that takes a size. */
static void test_parse_size_units_any_case(void **state)
{
  static const struct { const char *value; size_t want; } cases[] = {
    { "64kb", 64u << 10 }, { "64Kb", 64u << 10 }, { "64kB", 64u << 10 },
    { "64kib", 64u << 10 }, { "64KIB", 64u << 10 }, { "64kIb", 64u << 10 },
    { "1mib", 1u << 20 }, { "1Mib", 1u << 20 }, { "1mb", 1u << 20 },
    { "1MIB", 1u << 20 }, { "1gib", 1u << 30 }, { "1gb", 1u << 30 },
    { "1GB", 1u << 30 }, { "1Gb", 1u << 30 }, { "4096", 4096 },
  };
  static const char *const bad[] = {
    "64kibb", "64b", "64B", "64 k", "k", "64ki", "64mi", "1t", "1TiB",
    "+64", "0x40", "64kk", "64k\xc4\xb1" "b",   /* a dotless i */
  };
  static const char *const keys[] = { "buffer", "chunk", "max_string",
                                      "max_event", "rotate" };

  (void)state;
  for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
      char str[64];
      tw_options o;
      uint64_t got;

      snprintf(str, sizeof str, "%s=%s", keys[k], cases[i].value);
      o = parse_ok(str);
      got = k == 0 ? o.buffer_size : k == 1 ? o.mmap_chunk
            : k == 2 ? o.max_string : k == 3 ? o.max_event : o.rotate_size;
      if (got != cases[i].want)
        fail_msg("\"%s\": %llu, expected %zu", str,
                 (unsigned long long)got, cases[i].want);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
      char str[64];
      snprintf(str, sizeof str, "%s=%s", keys[k], bad[i]);
      parse_bad(str, bad[i]);
    }
  }
}

/* One duration parser: ns, us, ms, s, m, h in any case, or off. */
static void test_parse_duration_units(void **state)
{
  static const struct { const char *value; uint64_t want; } cases[] = {
    { "1ns", 1 }, { "7NS", 7 }, { "3us", 3000 }, { "3US", 3000 },
    { "10ms", 10000000 }, { "10MS", 10000000 }, { "10Ms", 10000000 },
    { "2s", 2000000000ull }, { "2S", 2000000000ull },
    { "5m", 300000000000ull }, { "5M", 300000000000ull },
    { "1h", 3600000000000ull }, { "1H", 3600000000000ull },
    { "off", 0 },
  };
  static const char *const bad[] = { "10", "1.5s", "1sec", "1min", "OFF",
                                     "0s", "0ns", "-1s", "1 s", "s",
                                     "5124095576h" };

  (void)state;
  for (int k = 0; k < 2; k++) {
    const char *key = k ? "rotate_every" : "flush";
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
      char str[64];
      tw_options o;
      uint64_t got;

      snprintf(str, sizeof str, "%s=1s,%s=%s", key, key, cases[i].value);
      o = parse_ok(str);
      got = k ? o.rotate_interval_ns : o.flush_interval_ns;
      if (got != cases[i].want)
        fail_msg("\"%s\": %llu ns, expected %llu", str,
                 (unsigned long long)got, (unsigned long long)cases[i].want);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
      char str[64];
      snprintf(str, sizeof str, "%s=%s", key, bad[i]);
      parse_bad(str, bad[i]);
    }
  }
  /* The largest duration that fits, and one more nanosecond's worth. */
  assert_int_equal(parse_ok("flush=18446744073709551615ns").flush_interval_ns,
                   UINT64_MAX);
  parse_bad("flush=18446744073709551616ns", "18446744073709551616ns");
  parse_bad("flush=18446744073709552us", "18446744073709552us");
}

/* Blanks (spaces and tabs) around keys, values and commas are ignored;
 * inside a value they are not. */
static void test_parse_blanks(void **state)
{
  tw_options o;

  (void)state;
  o = parse_ok("buffer=64KiB, sync");
  assert_int_equal(o.buffer_size, 65536);
  assert_int_equal(o.flags, TW_OPT_SYNC);
  o = parse_ok(" buffer = 2k ,\tformat\t=\tobject\t,\tgzip = 3 ,mmap ");
  assert_int_equal(o.buffer_size, 2048);
  assert_int_equal(o.format, TW_FORMAT_OBJECT);
  assert_int_equal(o.gzip_level, 3);
  assert_int_equal(o.sink, TW_SINK_MMAP);
  o = parse_ok("\t,\t, sync =on\t");
  assert_int_equal(o.flags, TW_OPT_SYNC);
  parse_bad("buffer=64 KiB", "64 KiB");
  parse_bad("buf fer=1k", "buf fer");
  parse_bad("format=ob ject", "ob ject");
  parse_bad("buffer = ", "buffer");
  parse_bad(" = 1k", "missing key");
}

/* The new bounds: max_string at most 1 GiB, like the other sizes. */
static void test_parse_max_string_bounds(void **state)
{
  tw_options o;
  int error = 0;

  (void)state;
  assert_int_equal(parse_ok("max_string=1GiB").max_string, 1u << 30);
  assert_int_equal(parse_ok("max_string=64").max_string, 64);
  parse_bad("max_string=1073741825", "1073741825");
  parse_bad("max_string=2GiB", "2GiB");
  /* Set directly, the same bounds hold at open. */
  o = fresh();
  o.max_string = ((size_t)1 << 30) + 1;
  assert_null(tw_open_stream(stderr, &o, &error));
  assert_int_equal(error, TW_EOPTION);
  o.max_string = TW_MIN_MAX_STRING - 1;
  error = 0;
  assert_null(tw_open_stream(stderr, &o, &error));
  assert_int_equal(error, TW_EOPTION);
  /* And a value out of any enum's range, or negative. */
  o = fresh();
  o.format = -1;
  error = 0;
  assert_null(tw_open_stream(stderr, &o, &error));
  assert_int_equal(error, TW_EOPTION);
  o = fresh();
  o.flags = 0x100;
  error = 0;
  assert_null(tw_open_stream(stderr, &o, &error));
  assert_int_equal(error, TW_EOPTION);
}

/* sync as a key with a value; the numbers of buffers, keep and gzip. */
static void test_parse_words_and_numbers(void **state)
{
  tw_options o;

  (void)state;
  assert_int_equal(parse_ok("sync=on").flags, TW_OPT_SYNC);
  assert_int_equal(parse_ok("sync,sync=off").flags, 0);
  assert_int_equal(parse_ok("sync=off,sync").flags, TW_OPT_SYNC);
  assert_int_equal(parse_ok("buffers=02").buffer_count, 2);
  assert_int_equal(parse_ok("keep=3").rotate_keep, 3);
  assert_int_equal(parse_ok("keep=4294967295").rotate_keep, UINT32_MAX);
  assert_int_equal(parse_ok("keep=3,keep=all").rotate_keep, 0);
  assert_int_equal(parse_ok("rotate=4KiB").rotate_size, 4096);
  assert_int_equal(parse_ok("rotate=8G").rotate_size, (uint64_t)8 << 30);
  assert_int_equal(parse_ok("rotate=8G,rotate=off").rotate_size, 0);
  o = parse_ok("sink=file,gzip=9");
  assert_int_equal(o.sink, TW_SINK_GZIP);
  assert_int_equal(o.gzip_level, 9);
  o = parse_ok("gzip=9,sink=file");                /* later items win */
  assert_int_equal(o.sink, TW_SINK_FILE);
  assert_int_equal(o.gzip_level, 9);
  parse_bad("sync=yes", "yes");
  parse_bad("keep=4294967296", "4294967296");
  parse_bad("keep=0", "0");
  parse_bad("keep=1k", "1k");
  parse_bad("rotate=4095", "4095");
  parse_bad("rotate=0", "0");
  parse_bad("buffers=", "buffers");
  parse_bad("gzip=1k", "1k");
  parse_bad("mmap=1", "mmap");
}

/* The messages, word for word: what a user reads in tw_global's line. */
static void test_parse_messages(void **state)
{
  static const struct { const char *str, *msg; } cases[] = {
    { "rotat=1G", "unknown option 'rotat'; did you mean 'rotate'?" },
    { "bufer=1k", "unknown option 'bufer'; did you mean 'buffer'?" },
    { "bogus", "unknown option 'bogus'" },
    { "xy=1", "unknown option 'xy'" },
    { "=1", "missing key before '='" },
    { "buffer", "missing value for 'buffer': expected a size such as "
                "65536, 64KiB or 1MiB" },
    { "buffer=huge", "bad value 'huge' for 'buffer': expected a size such "
                     "as 65536, 64KiB or 1MiB" },
    { "buffer=2G", "bad value '2G' for 'buffer': must be between 256 and "
                   "1GiB" },
    { "rotate=1k", "bad value '1k' for 'rotate': must be at least 4KiB, or "
                   "off" },
    { "flush=0ms", "bad value '0ms' for 'flush': must be at least 1ns, or "
                   "off" },
    { "flush=10", "bad value '10' for 'flush': expected a duration such as "
                  "100ms, 2s or 1h, or off" },
    { "keep=x", "bad value 'x' for 'keep': expected a number, or all" },
    { "buffers=9", "bad value '9' for 'buffers': must be between 2 and 8" },
    { "commit=x", "bad value 'x' for 'commit': expected auto, inline or "
                  "background" },
    { "utf8=x", "bad value 'x' for 'utf8': expected replace or reject" },
    { "mmap=1", "bad value '1' for 'mmap': 'mmap' takes no value" },
  };

  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tw_options o = fresh();
    char err[256];

    assert_int_equal(tw_options_parse(&o, cases[i].str, err, sizeof err),
                     TW_EOPTION);
    if (strcmp(err, cases[i].msg) != 0)
      fail_msg("\"%s\": message \"%s\", expected \"%s\"", cases[i].str,
               err, cases[i].msg);
  }
}

/* ---------------------------------------------- the result drives tw_open */

static void test_parse_drives_open(void **state)
{
  char *path = tu_tmppath(".json");
  tw_options o = parse_ok("format=object,buffer=1KiB");
  tw_writer *w;
  tw_stats s;
  jc_doc *d;
  jc_val root, ev, e;
  int err = 0;

  (void)state;
  o.process_name = "opts";
  w = tw_open(path, &o, &err);
  assert_non_null(w);
  /* Object form from the first commit on. */
  tu_assert_tail(path, 1);
  for (int i = 0; i < 50; i++) {
    tw_arg a = tw_arg_int("i", i);
    assert_int_equal(tw_complete(w, "c", "e", 1000u * (uint64_t)i, 10, &a, 1),
                     0);
  }
  /* 1 KiB of buffer: the 50 events (~100 bytes each) made commits. */
  assert_int_equal(tw_get_stats(w, &s), 0);
  assert_true(s.commits > 2);
  assert_int_equal(tw_close(w), 0);

  tu_assert_tail(path, 1);
  d = tu_load(path);
  root = jc_root(d);
  assert_int_equal(jc_type(d, root), JC_OBJECT);
  ev = jc_get(d, root, "traceEvents");
  assert_true(ev >= 0);
  assert_int_equal(ev, tu_events(d));
  assert_int_equal(jc_len(d, ev), 51);
  e = jc_first(d, ev);
  tu_assert_str(d, e, "ph", "M");
  tu_assert_str(d, e, "name", "process_name");
  tu_assert_str(d, jc_get(d, e, "args"), "name", "opts");
  for (int i = 0; i < 50; i++) {
    e = jc_next(d, e);
    tu_assert_str(d, e, "ph", "X");
    tu_assert_str(d, e, "name", "e");
    tu_assert_str(d, e, "cat", "c");
    tu_assert_us(d, e, "ts", 1000u * (uint64_t)i);
    tu_assert_us(d, e, "dur", 10);
    tu_assert_int(d, jc_get(d, e, "args"), "i", i);
  }
  assert_int_equal(jc_next(d, e), -1);
  jc_free(d);
  tu_cleanup(path);
}

/* 80 and its first 64 bytes. */
#define LONG64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define LONG80 LONG64 "ABCDEFGHIJKLMNOP"

/* Every combination of the three reject flags, set by the string, makes
 * exactly its kind of bad input fail and lets the others through
 * replaced; the file holds what was accepted. */
static void test_parse_flag_combinations(void **state)
{
  (void)state;
  for (unsigned m = 0; m < 8; m++) {
    char str[128];
    char *path = tu_tmppath(".json");
    tw_options o;
    tw_writer *w;
    tw_arg a;
    jc_doc *d;
    jc_val ev, e;
    int err = 0, rc, n = 0;
    int rej_utf8 = (m & 1) != 0, rej_nf = (m & 2) != 0, rej_long = (m & 4) != 0;

    snprintf(str, sizeof str, "utf8=%s,nonfinite=%s,long=%s,max_string=64",
             rej_utf8 ? "reject" : "replace", rej_nf ? "reject" : "null",
             rej_long ? "reject" : "truncate");
    o = parse_ok(str);
    assert_int_equal(o.flags,
                     (rej_utf8 ? TW_OPT_REJECT_INVALID_UTF8 : 0u) |
                     (rej_nf ? TW_OPT_REJECT_NONFINITE : 0u) |
                     (rej_long ? TW_OPT_REJECT_LONG_STRINGS : 0u));
    o.process_name = "flags";
    w = tw_open(path, &o, &err);
    assert_non_null(w);

    a = tw_arg_str("s", "a\xc3(b");
    rc = tw_complete(w, NULL, "utf8", 1000, 1, &a, 1);
    assert_int_equal(rc, rej_utf8 ? TW_EUTF8 : 0);
    n += rc == 0;
    a = tw_arg_double("d", NAN);
    rc = tw_complete(w, NULL, "nonfinite", 2000, 1, &a, 1);
    assert_int_equal(rc, rej_nf ? TW_ENONFINITE : 0);
    n += rc == 0;
    a = tw_arg_str("s", LONG80);
    rc = tw_complete(w, NULL, "long", 3000, 1, &a, 1);
    assert_int_equal(rc, rej_long ? TW_ETOOLONG : 0);
    n += rc == 0;
    a = tw_arg_str("s", "fine");
    assert_int_equal(tw_complete(w, NULL, "ok", 4000, 1, &a, 1), 0);
    n++;
    assert_int_equal(tw_close(w), 0);

    tu_assert_tail(path, 0);
    d = tu_load(path);
    ev = tu_events(d);
    assert_int_equal(jc_len(d, ev), (size_t)n + 1);
    e = jc_first(d, ev);
    tu_assert_str(d, jc_get(d, e, "args"), "name", "flags");
    if (!rej_utf8) {
      e = jc_next(d, e);
      tu_assert_str(d, e, "name", "utf8");
      tu_assert_str(d, jc_get(d, e, "args"), "s", "a\xef\xbf\xbd(b");
    }
    if (!rej_nf) {
      e = jc_next(d, e);
      tu_assert_str(d, e, "name", "nonfinite");
      assert_int_equal(jc_type(d, jc_get(d, jc_get(d, e, "args"), "d")),
                       JC_NULL);
      assert_true(jc_get(d, jc_get(d, e, "args"), "d") >= 0);
    }
    if (!rej_long) {
      e = jc_next(d, e);
      tu_assert_str(d, e, "name", "long");
      tu_assert_str(d, jc_get(d, e, "args"), "s", LONG64);
    }
    e = jc_next(d, e);
    tu_assert_str(d, e, "name", "ok");
    tu_assert_str(d, jc_get(d, e, "args"), "s", "fine");
    assert_int_equal(jc_next(d, e), -1);
    jc_free(d);
    tu_cleanup(path);
  }
}

/* max_string limits the caller's strings; it must not cut or refuse the
 * library's own first record ("name":"process_name"), which viewers
 * recognise by that exact name: at the smallest max_string allowed, the
 * record is intact (smaller values are TW_EOPTION, see test_parse_bad). */
static void test_small_max_string_first_record(void **state)
{
  static const char *const strs[] = { "max_string=64",
                                      "max_string=64,long=reject" };

  (void)state;
  for (size_t k = 0; k < 2; k++) {
    char *path = tu_tmppath(".json");
    tw_options o = parse_ok(strs[k]);
    tw_writer *w;
    jc_doc *d;
    jc_val e;
    int err = 0;
    char got[64];
    int ok;

    o.process_name = "pn";
    w = tw_open(path, &o, &err);
    if (!w) {
      tu_cleanup(path);
      fail_msg("tw_open with \"%s\": NULL, error %d (%s)", strs[k], err,
               tw_err_name(err));
    }
    assert_int_equal(tw_close(w), 0);
    tu_assert_tail(path, 0);
    d = tu_load(path);
    e = jc_first(d, tu_events(d));
    ok = jc_streq(d, jc_get(d, e, "name"), "process_name");
    snprintf(got, sizeof got, "%s",
             jc_str(d, jc_get(d, e, "name"), NULL) ?
             jc_str(d, jc_get(d, e, "name"), NULL) : "(none)");
    if (ok) {
      tu_assert_str(d, e, "ph", "M");
      tu_assert_str(d, jc_get(d, e, "args"), "name", "pn");
    }
    jc_free(d);
    tu_cleanup(path);
    if (!ok)
      fail_msg("with \"%s\" the first record is named \"%s\", not "
               "\"process_name\"", strs[k], got);
  }
}

/* max_event from the string bounds formatted records: at max_event=4KiB a
 * record of about 6 KB is refused, records of about 1.1 KB and 3.1 KB
 * (one plain ASCII string of 1000 / 3000 bytes) are written. */
static void test_parse_max_event_drives_emit(void **state)
{
  char *path = tu_tmppath(".json");
  tw_options o = parse_ok("max_event=4KiB");
  static char big[6000];
  tw_writer *w;
  tw_arg a;
  jc_doc *d;
  int err = 0, rc;

  (void)state;
  memset(big, 'b', sizeof big - 1);
  o.process_name = "max-event";
  w = tw_open(path, &o, &err);
  assert_non_null(w);
  a = tw_arg_str("s", big);
  assert_int_equal(tw_complete(w, NULL, "big", 1, 1, &a, 1), TW_ETOOBIG);
  a = tw_arg_strn("s", big, 1000);
  rc = tw_complete(w, NULL, "fits", 1, 1, &a, 1);
  if (rc != 0) {
    tw_close(w);
    tu_cleanup(path);
    fail_msg("a record of about 1100 bytes (a 1000-byte ASCII string) "
             "under max_event=4KiB: %d (%s), expected 0", rc,
             tw_err_name(rc));
  }
  a = tw_arg_strn("s", big, 3000);
  rc = tw_complete(w, NULL, "fits", 1, 1, &a, 1);
  if (rc != 0) {
    tw_close(w);
    tu_cleanup(path);
    fail_msg("a record of about 3100 bytes (a 3000-byte ASCII string) "
             "under max_event=4KiB: %d (%s), expected 0", rc,
             tw_err_name(rc));
  }
  assert_int_equal(tw_close(w), 0);
  tu_assert_tail(path, 0);
  d = tu_load(path);
  assert_int_equal(jc_len(d, tu_events(d)), 3);
  tu_assert_str(d, jc_index(d, tu_events(d), 1), "name", "fits");
  tu_assert_str(d, jc_get(d, jc_index(d, tu_events(d), 1), "args"), "s",
                big + sizeof big - 1 - 1000);
  tu_assert_str(d, jc_index(d, tu_events(d), 2), "name", "fits");
  tu_assert_str(d, jc_get(d, jc_index(d, tu_events(d), 2), "args"), "s",
                big + sizeof big - 1 - 3000);
  jc_free(d);
  tu_cleanup(path);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_init_defaults),
    cmocka_unit_test(test_init_too_small),
    cmocka_unit_test(test_init_larger),
    cmocka_unit_test(test_parse_sizes),
    cmocka_unit_test(test_parse_keywords),
    cmocka_unit_test(test_parse_more_keys),
    cmocka_unit_test(test_parse_spacing),
    cmocka_unit_test(test_parse_empty),
    cmocka_unit_test(test_parse_bad),
    cmocka_unit_test(test_parse_errbuf),
    cmocka_unit_test(test_parse_bad_struct),
    cmocka_unit_test(test_parse_size_units_any_case),
    cmocka_unit_test(test_parse_duration_units),
    cmocka_unit_test(test_parse_blanks),
    cmocka_unit_test(test_parse_max_string_bounds),
    cmocka_unit_test(test_parse_words_and_numbers),
    cmocka_unit_test(test_parse_messages),
    cmocka_unit_test(test_parse_drives_open),
    cmocka_unit_test(test_parse_flag_combinations),
    cmocka_unit_test(test_small_max_string_first_record),
    cmocka_unit_test(test_parse_max_event_drives_emit),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
