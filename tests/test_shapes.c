/* test_shapes.c -- the general reader (tools/jsonscan.c behind the
 * descriptor of tools/front_general.c): every shape of Chrome Trace
 * Event JSON that other programs write, read by every command
 *
 * Each test writes its file itself, in the shape another producer
 * writes: the PyTorch profiler's (Kineto) pretty-printed object with
 * members before and after traceEvents, Chrome's one-line object,
 * viztracer's ", "-separated object, an array with a byte-order mark,
 * CRLF, a trailing comma, "{}" and elements that are not objects, gzip
 * in several members, a document cut inside a record.  The output of
 * cat is parsed strictly and compared record by record with the records
 * written (each one's text, without the whitespace between its tokens,
 * byte for byte), and the members besides traceEvents value by value.
 * Files that are no trace give exit status 1 and a message naming the
 * file and the byte; hostile nesting and sizes neither crash nor grow.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf */
#endif

#include "testutil.h"
#include "tooltest.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>

#include "command.h"
#include "jsonscan.h"
#include "reader.h"
#include "records.h"

typedef int (*main_fn)(int, char **);

/* The records every shape holds: every kind of value the format allows
 * for ts, pid, tid and ids, and phases old and new. */
static const char *const RECS[] = {
  "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"tid\":1,"
    "\"args\":{\"name\":\"python3 \\\"main\\\"\"}}",
  "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":1,\"tid\":7,"
    "\"ts\":1694039968955744.123,\"dur\":12.5,"
    "\"args\":{\"grid\":[128,1,1],\"stream\":7,\"nested\":{\"a\":[true,"
    "false,null,-0.5e-3,\"\\u00e9\\n\"]}}}",
  "{\"ph\":\"X\",\"name\":\"step\",\"pid\":\"Spans\",\"tid\":\"\","
    "\"ts\":\"1694039968955750.5\",\"dur\":\"3\"}",
  "{\"ph\":\"B\",\"name\":\"exp\",\"pid\":-4,\"tid\":9007199254740993,"
    "\"ts\":1.6940399689558E15}",
  "{\"ph\":\"E\",\"pid\":-4,\"tid\":9007199254740993,"
    "\"ts\":1694039968955900}",
  "{\"ph\":\"b\",\"cat\":\"async\",\"name\":\"req\",\"id2\":{\"local\":"
    "\"0x2a\"},\"pid\":1,\"tid\":1,\"ts\":1694039968955800}",
  "{\"ph\":\"e\",\"cat\":\"async\",\"name\":\"req\",\"id2\":{\"local\":"
    "\"0x2a\"},\"pid\":1,\"tid\":1,\"ts\":1694039968955810}",
  "{\"ph\":\"S\",\"name\":\"legacy\",\"id\":\"0xff\",\"pid\":1,\"tid\":1,"
    "\"ts\":1694039968955801}",
  "{\"ph\":\"T\",\"name\":\"legacy\",\"id\":\"0xff\",\"pid\":1,\"tid\":1,"
    "\"ts\":1694039968955802,\"args\":{\"step\":\"one\"}}",
  "{\"ph\":\"p\",\"name\":\"legacy\",\"id\":\"0xff\",\"pid\":1,\"tid\":1,"
    "\"ts\":1694039968955803}",
  "{\"ph\":\"F\",\"name\":\"legacy\",\"id\":\"0xff\",\"pid\":1,\"tid\":1,"
    "\"ts\":1694039968955804}",
  "{\"ph\":\"s\",\"name\":\"flow\",\"id\":5,\"pid\":1,\"tid\":1,"
    "\"ts\":1694039968955805}",
  "{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"flow\",\"id\":5,\"pid\":1,"
    "\"tid\":7,\"ts\":1694039968955806}",
  "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"mark\",\"pid\":1,\"tid\":1,"
    "\"ts\":1694039968955807}",
  "{\"ph\":\"C\",\"name\":\"mem\",\"pid\":1,\"ts\":1694039968955808,"
    "\"args\":{\"bytes\":123456789012}}",
  "{\"ph\":\"X\",\"name\":\"thread time\",\"pid\":1,\"tid\":1,"
    "\"ts\":1694039968955809.25,\"dur\":4E0,\"tts\":1.5e3,"
    "\"tdur\":\"0.25\"}",
  "{}",
};
#define NRECS (sizeof RECS / sizeof RECS[0])

/* The members of the PyTorch profiler's object, before and after
 * traceEvents (name, value). */
static const char *const KINETO_BEFORE[][2] = {
  { "schemaVersion", "1" },
  { "deviceProperties", "[{\"id\":0,\"name\":\"NVIDIA H100 80GB HBM3\","
    "\"totalGlobalMem\":84929347584,\"computeMajor\":9,"
    "\"maxThreadsPerBlock\":1024}]" },
  { "distributedInfo", "{\"backend\":\"nccl\",\"rank\":0,\"world_size\":8,"
    "\"pg_config\":[{\"pg_name\":\"0\",\"ranks\":[0,1,2,3,4,5,6,7]}]}" },
  { "record_shapes", "1" },
};
static const char *const KINETO_AFTER[][2] = {
  { "traceName", "\"/tmp/rank0.1694039968.pt.trace.json\"" },
  { "displayTimeUnit", "\"ms\"" },
  { "baseTimeNanoseconds", "1694039968000000000" },
};

/* ============================================================ helpers */

/* The JSON text s written as Python's json.dump(indent=2) does: a
 * newline and indentation after every "{", "[" and ",", ": " between key
 * and value, the closing bracket on a line of its own; sep is what
 * follows each newline beyond the indentation ("\r\n" for CRLF: eol). */
static void pretty(tu_text *t, const char *s, int indent, const char *eol)
{
  int str = 0, esc = 0;

  for (; *s; s++) {
    char c = *s, pad[64];
    if (str) {
      tu_text_put(t, s, 1);
      if (esc)
        esc = 0;
      else if (c == '\\')
        esc = 1;
      else if (c == '"')
        str = 0;
      continue;
    }
    if (c == '"')
      str = 1;
    if ((c == '}' || c == ']') && s[-1] != '{' && s[-1] != '[') {
      indent -= 2;
      tu_text_puts(t, eol);
      memset(pad, ' ', (size_t)indent);
      tu_text_put(t, pad, (size_t)indent);
    }
    tu_text_put(t, s, 1);
    if (c == ':')
      tu_text_puts(t, " ");
    if (((c == '{' || c == '[') && s[1] != '}' && s[1] != ']') ||
        c == ',') {
      if (c != ',')
        indent += 2;
      tu_text_puts(t, eol);
      memset(pad, ' ', (size_t)indent);
      tu_text_put(t, pad, (size_t)indent);
    }
  }
}

/* s with ", " and ": " between tokens, as Python's json.dumps writes by
 * default (viztracer). */
static void spaced(tu_text *t, const char *s)
{
  int str = 0, esc = 0;

  for (; *s; s++) {
    tu_text_put(t, s, 1);
    if (str) {
      if (esc)
        esc = 0;
      else if (*s == '\\')
        esc = 1;
      else if (*s == '"')
        str = 0;
    } else if (*s == '"') {
      str = 1;
    } else if (*s == ',' || *s == ':') {
      tu_text_puts(t, " ");
    }
  }
}

enum shape { KINETO, CHROME, VIZTRACER, ARRAY_ODD, ONE_LINE };

/* The document of a shape. */
static tu_text make_doc(enum shape sh)
{
  tu_text t = { 0 };
  size_t i;

  switch (sh) {
  case KINETO:
    tu_text_puts(&t, "{\n");
    for (i = 0; i < sizeof KINETO_BEFORE / sizeof *KINETO_BEFORE; i++) {
      tu_text_puts(&t, "  \"");
      tu_text_puts(&t, KINETO_BEFORE[i][0]);
      tu_text_puts(&t, "\": ");
      pretty(&t, KINETO_BEFORE[i][1], 2, "\n");
      tu_text_puts(&t, ",\n");
    }
    tu_text_puts(&t, "  \"traceEvents\": [\n");
    for (i = 0; i < NRECS; i++) {
      tu_text_puts(&t, "  ");
      pretty(&t, RECS[i], 2, "\n");
      tu_text_puts(&t, i + 1 < NRECS ? ",\n" : "\n");
    }
    tu_text_puts(&t, "  ],\n");
    for (i = 0; i < sizeof KINETO_AFTER / sizeof *KINETO_AFTER; i++) {
      tu_text_puts(&t, "  \"");
      tu_text_puts(&t, KINETO_AFTER[i][0]);
      tu_text_puts(&t, "\": ");
      tu_text_puts(&t, KINETO_AFTER[i][1]);
      tu_text_puts(&t, i + 1 < sizeof KINETO_AFTER / sizeof *KINETO_AFTER ?
            ",\n" : "\n");
    }
    tu_text_puts(&t, "}");
    break;
  case CHROME:
    /* chrome://tracing's "Save": one line, metadata after. */
    tu_text_puts(&t, "{\"traceEvents\":[");
    for (i = 0; i < NRECS; i++) {
      tu_text_puts(&t, RECS[i]);
      if (i + 1 < NRECS)
        tu_text_puts(&t, ",");
    }
    tu_text_puts(&t, "],\"metadata\":{\"clock-domain\":\"LINUX_CLOCK_MONOTONIC\","
          "\"cpu-brand\":\"Intel(R) Xeon(R)\",\"trace-config\":\"\"}}\n");
    break;
  case VIZTRACER:
    tu_text_puts(&t, "{\"traceEvents\": [");
    for (i = 0; i < NRECS; i++) {
      spaced(&t, RECS[i]);
      if (i + 1 < NRECS)
        tu_text_puts(&t, ", ");
    }
    tu_text_puts(&t, "], \"viztracer_metadata\": {\"version\": \"0.16.3\", "
          "\"overflow\": false}, \"file_info\": {\"files\": {}, "
          "\"functions\": {}}}");
    break;
  case ARRAY_ODD:
    /* A byte-order mark, CRLF, pretty-printed, elements that are not
     * objects, a stray comma and a trailing one. */
    tu_text_puts(&t, "\xef\xbb\xbf[\r\n");
    for (i = 0; i < NRECS; i++) {
      pretty(&t, RECS[i], 2, "\r\n");
      tu_text_puts(&t, ",\r\n");
      if (i == 3)
        tu_text_puts(&t, "  42, \"not an event\", [1, {\"a\": 2}], null,,\r\n");
    }
    tu_text_puts(&t, "]\r\n");
    break;
  case ONE_LINE:
    tu_text_puts(&t, "[");
    for (i = 0; i < NRECS; i++) {
      tu_text_puts(&t, RECS[i]);
      if (i + 1 < NRECS)
        tu_text_puts(&t, ",");
    }
    tu_text_puts(&t, "]");
    break;
  }
  return t;
}

static int is_ph_(const jc_doc *d, jc_val ev, const char *ph)
{
  return jc_streq(d, jc_get(d, ev, "ph"), ph);
}

/* The events of d must be exactly the records RECS[from..to), each one's
 * text byte for byte: as written when it was on one line (spaced: with
 * ", " and ": "), without the whitespace between its tokens when it was
 * spread over lines. */
static void assert_records_as(const jc_doc *d, size_t from, size_t to,
                              int is_spaced)
{
  jc_val ev = jc_trace_events(d), v;
  size_t i = from;

  assert_true(ev >= 0);
  for (v = jc_first(d, ev); v >= 0; v = jc_next(d, v), i++) {
    size_t len;
    const char *raw = jc_raw(d, v, &len);
    tu_text want = { 0 };
    if (is_ph_(d, v, "c") &&        /* the clock record of a file in the */
        jc_streq(d, jc_get(d, v, "name"), "clock_sync")) {
      i--;                          /* library's layout: not one of RECS */
      continue;
    }
    assert_true(i < to);
    if (is_spaced)
      spaced(&want, RECS[i]);
    else
      tu_text_puts(&want, RECS[i]);
    if (len != want.len || memcmp(raw, want.p, len) != 0)
      fail_msg("record %zu: got %.*s\nwant %s", i, (int)len, raw, want.p);
    free(want.p);
  }
  assert_int_equal(i, to);
}

static void assert_records(const jc_doc *d, size_t from, size_t to)
{
  assert_records_as(d, from, to, 0);
}

/* Member key of the object d must hold exactly value (raw JSON without
 * whitespace between tokens). */
static void assert_member(const jc_doc *d, const char *key,
                          const char *value)
{
  jc_val v = jc_get(d, jc_root(d), key);
  size_t len;
  const char *raw;

  assert_true(v >= 0);
  raw = jc_raw(d, v, &len);
  if (len != strlen(value) || memcmp(raw, value, len) != 0)
    fail_msg("member %s: got %.*s\nwant %s", key, (int)len, raw, value);
}

/* cat of the file at in must give every record, and (object form) the
 * members wanted. */
static void assert_cat(const char *dir, const char *in, enum shape sh)
{
  char *out = tt_in_dir(dir, "out.json"), *err = tt_in_dir(dir, "err");
  char *argv[] = { "cat", "-o", out, (char *)in, NULL };
  jc_doc *d;

  assert_int_equal(tt_run_argv(twt_tool_cat_main, argv, NULL, err), 0);
  d = tt_load_file(out);
  assert_records_as(d, 0, NRECS, sh == VIZTRACER);
  if (sh == KINETO) {
    assert_int_equal(jc_type(d, jc_root(d)), JC_OBJECT);
    for (size_t i = 0; i < sizeof KINETO_BEFORE / sizeof *KINETO_BEFORE;
         i++)
      assert_member(d, KINETO_BEFORE[i][0], KINETO_BEFORE[i][1]);
    for (size_t i = 0; i < sizeof KINETO_AFTER / sizeof *KINETO_AFTER; i++)
      assert_member(d, KINETO_AFTER[i][0], KINETO_AFTER[i][1]);
    assert_int_equal(jc_count_key(d, jc_root(d), "traceEvents"), 1);
  } else if (sh == CHROME) {
    assert_member(d, "metadata", "{\"clock-domain\":"
                  "\"LINUX_CLOCK_MONOTONIC\",\"cpu-brand\":"
                  "\"Intel(R) Xeon(R)\",\"trace-config\":\"\"}");
  } else if (sh == VIZTRACER) {
    assert_member(d, "viztracer_metadata", "{\"version\":\"0.16.3\","
                  "\"overflow\":false}");
    assert_member(d, "file_info", "{\"files\":{},\"functions\":{}}");
  } else {
    assert_int_equal(jc_type(d, jc_root(d)), JC_ARRAY);
  }
  jc_free(d);
  /* The output, in the library's layout, reads back the same. */
  {
    char *again = tt_in_dir(dir, "again.json");
    char *argv2[] = { "cat", "-o", again, out, NULL };
    size_t l1, l2;
    char *a, *b;
    assert_int_equal(tt_run_argv(twt_tool_cat_main, argv2, NULL, NULL), 0);
    a = tu_read_file(out, &l1);
    b = tu_read_file(again, &l2);
    assert_int_equal(l1, l2);
    assert_memory_equal(a, b, l1);
    free(a);
    free(b);
    free(again);
  }
  free(out);
  free(err);
}

/* stats of in counts n records. */
static void assert_stats_counts_n(const char *dir, const char *in, size_t n)
{
  char *out = tt_in_dir(dir, "stats.txt");
  char *argv[] = { "stats", (char *)in, NULL }, want[64];
  char *buf;

  assert_int_equal(tt_run_argv(twt_tool_stats_main, argv, out, NULL), 0);
  buf = tu_read_file(out, NULL);
  snprintf(want, sizeof want, "records      %zu:", n);
  if (!strstr(buf, want))
    fail_msg("stats: no \"%s\" in\n%s", want, buf);
  free(buf);
  free(out);
}

/* stats of in counts every record. */
static void assert_stats_counts(const char *dir, const char *in)
{
  assert_stats_counts_n(dir, in, NRECS);
}

/* ============================================================== tests */

/* Every shape, plain and gzip, read whole by cat and stats. */
static void test_every_shape(void **state)
{
  char *dir = tt_make_dir();
  (void)state;

  for (int sh = KINETO; sh <= ONE_LINE; sh++) {
    tu_text t = make_doc((enum shape)sh);
    char *in = tt_in_dir(dir, "in.json"), *gz = tt_in_dir(dir, "in.gz");
    size_t gzlen;
    unsigned char *g;

    tt_write_bytes(in, t.p, t.len);
    assert_cat(dir, in, (enum shape)sh);
    assert_stats_counts(dir, in);
    g = tt_gz_member(t.p, t.len, &gzlen);
    tt_write_bytes(gz, g, gzlen);
    assert_cat(dir, gz, (enum shape)sh);
    free(g);
    free(t.p);
    free(in);
    free(gz);
  }
  tt_remove_dir(dir);
}

/* A trace in the library's layout (the head, one record a line) where
 * some records are spread over lines, pretty-printed (LF and CRLF), and
 * one is cut (a crash) among them: the crash-layout reader reads the
 * spread ones whole, on one line, and drops only the cut one; cat and
 * stats give every record. */
static void test_layout_spread(void **state)
{
  char *dir = tt_make_dir(), *in = tt_in_dir(dir, "spread.json");
  static const char *const eols[] = { "\n", "\r\n" };
  (void)state;

  for (size_t k = 0; k < 2; k++) {
    tu_text t = { 0 };
    size_t spread = 0;
    twt_reader *r;
    twt_read_item it;
    char err[256];
    int rc;

    tu_text_puts(&t, "[\n");
    tu_text_puts(&t, RECS[0]);
    tu_text_puts(&t, ",\n");              /* the library's clock record */
    tu_text_put(&t, TT_CLOCK_LINE, sizeof TT_CLOCK_LINE - 3);
    for (size_t i = 1; i < NRECS; i++) {
      tu_text_puts(&t, ",\n");
      if (i == 3)                   /* a record cut by a crash */
        tu_text_puts(&t, "{\"ph\":\"X\",\"name\":\"cut\",\"ts\":12,\"pid\":1,\n");
      if (i % 3 == 1) {
        size_t at = t.len;
        pretty(&t, RECS[i], 0, eols[k]);
        spread += memchr(t.p + at, '\n', t.len - at) != NULL;  /* not {} */
      } else {
        tu_text_puts(&t, RECS[i]);
      }
    }
    tu_text_puts(&t, "\n]");
    tt_write_bytes(in, t.p, t.len);

    assert_int_equal(twt_reader_open(&r, in, NULL, err, sizeof err), 0);
    while ((rc = twt_reader_next(r, &it)) > 0)
      continue;
    assert_int_equal(rc, 0);
    assert_int_equal(twt_reader_info(r)->general, 0);
    assert_int_equal(twt_reader_info(r)->joined_records, spread);
    assert_int_equal(twt_reader_info(r)->records, NRECS + 1);
    assert_int_equal(twt_reader_info(r)->dropped_records, 1);
    twt_reader_close(r);

    assert_cat(dir, in, ONE_LINE);
    assert_stats_counts_n(dir, in, NRECS + 1);
    free(t.p);
  }
  free(in);
  tt_remove_dir(dir);
}

/* gzip in several members, cut anywhere between them: read as one text,
 * as gzip -d does. */
static void test_gzip_members(void **state)
{
  char *dir = tt_make_dir(), *in = tt_in_dir(dir, "in.json.gz");
  tu_text t = make_doc(KINETO), all = { 0 };
  size_t cuts[] = { 0, 1, 100, t.len / 2, t.len - 3, t.len };
  (void)state;

  for (size_t i = 0; i + 1 < sizeof cuts / sizeof *cuts; i++) {
    size_t gl;
    unsigned char *g = tt_gz_member(t.p + cuts[i], cuts[i + 1] - cuts[i],
                                    &gl);
    tu_text_put(&all, (const char *)g, gl);
    free(g);
  }
  tt_write_bytes(in, all.p, all.len);
  assert_cat(dir, in, KINETO);
  free(all.p);
  free(t.p);
  free(in);
  tt_remove_dir(dir);
}

/* A document cut at every byte inside the events: every complete record
 * before the cut is read, with a warning; never more, never an error
 * once one record is whole. */
static void test_cut_anywhere(void **state)
{
  char *dir = tt_make_dir(), *in = tt_in_dir(dir, "cut.json");
  char *out = tt_in_dir(dir, "out.json"), *err = tt_in_dir(dir, "err");
  tu_text t = make_doc(KINETO);
  const char *ev = strstr(t.p, "\"traceEvents\"");
  size_t first = (size_t)(ev - t.p);
  (void)state;

  for (size_t cut = first; cut < t.len; cut += 7) {
    char *argv[] = { "cat", "-q", "-o", out, in, NULL };
    size_t whole = 0, end = 0;
    int rc;
    const char *p = strchr(ev, '[') + 1;

    tt_write_bytes(in, t.p, cut);
    /* How many records end before the cut: each ends at the "}" that
     * closes it at indentation 2. */
    while ((p = strstr(p, "\n  }")) && (size_t)(p - t.p) + 4 <= cut) {
      whole++;
      p += 4;
      end = (size_t)(p - t.p);
    }
    (void)end;
    /* "{}" is on one line: it ends at "  {}". */
    if (strstr(t.p, "  {}") && (size_t)(strstr(t.p, "  {}") - t.p) + 4 <=
        cut)
      whole++;
    rc = tt_run_argv(twt_tool_cat_main, argv, NULL, err);
    if (whole == 0) {
      assert_int_equal(rc, 1);
      continue;
    }
    assert_int_equal(rc, 0);
    {
      jc_doc *d = tt_load_file(out);
      assert_records(d, 0, whole);
      jc_free(d);
    }
  }
  free(t.p);
  free(in);
  free(out);
  free(err);
  tt_remove_dir(dir);
}

/* Files that are no trace: exit status 1, a message naming the file and
 * the byte where it stopped making sense. */
static void test_not_traces(void **state)
{
  static const struct {
    const char *name, *text, *says;
  } cases[] = {
    { "obj.json", "{\"schemaVersion\":1,\"events\":[{\"ph\":\"X\"}]}",
      "without traceEvents" },
    { "data.csv", "ts,name,dur\n1,a,2\n", "byte 0" },
    { "bad.json", "{\"traceEvents\" [", "byte 15" },
    { "nums.json", "[1,2,3]", "element 1 is a number, not an event" },
    { "words.txt", "hello world", "byte 0" },
    { "zeros.bin", "\0\0\0\0\0\0\0\0", "" },
  };
  char *dir = tt_make_dir(), *err = tt_in_dir(dir, "err");
  (void)state;

  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char *in = tt_in_dir(dir, cases[i].name);
    main_fn fns[] = { twt_tool_cat_main, twt_tool_stats_main };
    const char *names[] = { "cat", "stats" };
    size_t len = strlen(cases[i].text);

    tt_write_bytes(in, cases[i].text, len ? len : 8);
    for (size_t f = 0; f < 2; f++) {
      char *argv[] = { (char *)names[f], in, NULL };
      char *msg;
      assert_int_equal(tt_run_argv(fns[f], argv, NULL, err), 1);
      msg = tu_read_file(err, NULL);
      if (!strstr(msg, in) || !strstr(msg, cases[i].says))
        fail_msg("%s %s: %s", names[f], cases[i].name, msg);
      free(msg);
    }
    free(in);
  }
  /* Random bytes. */
  {
    char *in = tt_in_dir(dir, "random.bin"), buf[4096];
    char *argv[] = { "stats", in, NULL };
    srand(tt_seed());
    for (size_t i = 0; i < sizeof buf; i++)
      buf[i] = (char)(rand() & 0xff);
    buf[0] = 'x';                   /* not "[" or "{" by chance */
    tt_write_bytes(in, buf, sizeof buf);
    assert_int_equal(tt_run_argv(twt_tool_stats_main, argv, NULL, err), 1);
    free(in);
  }
  free(err);
  tt_remove_dir(dir);
}

/* Hostile sizes and nesting: a million-deep value inside a record and
 * among the members, a never-closed nesting, a 100 MB string: no crash,
 * memory bounded (the record limit), the other records kept. */
static void test_hostile(void **state)
{
  char *dir = tt_make_fast_dir(), *in = tt_in_dir(dir, "h.json");
  char *out = tt_in_dir(dir, "out.json");
  const size_t deep = 1000000;
  tu_text t = { 0 };
  (void)state;

  tu_text_puts(&t, "{\"traceEvents\":[");
  tu_text_puts(&t, RECS[1]);
  tu_text_puts(&t, ",{\"ph\":\"i\",\"args\":");
  for (size_t i = 0; i < deep; i++)
    tu_text_puts(&t, "[");
  for (size_t i = 0; i < deep; i++)
    tu_text_puts(&t, "]");
  tu_text_puts(&t, "},");
  tu_text_puts(&t, RECS[2]);
  tu_text_puts(&t, "],\"deep\":");
  for (size_t i = 0; i < deep; i++)
    tu_text_puts(&t, "{\"a\":");
  tu_text_puts(&t, "1");
  for (size_t i = 0; i < deep; i++)
    tu_text_puts(&t, "}");
  tu_text_puts(&t, ",\"big\":\"");
  {
    size_t n = 100u * 1000 * 1000;
    char *s = malloc(n);
    assert_non_null(s);
    memset(s, 'a', n);
    tu_text_put(&t, s, n);
    free(s);
  }
  tu_text_puts(&t, "\",\"k\":2}");
  tt_write_bytes(in, t.p, t.len);
  free(t.p);
  {
    char *argv[] = { "cat", "-q", "-o", out, in, NULL };
    jc_doc *d;
    assert_int_equal(tt_run_argv(twt_tool_cat_main, argv, NULL, NULL), 0);
    d = tt_load_file(out);
    {
      jc_val ev = jc_trace_events(d);
      assert_int_equal(jc_len(d, ev), 2);
      size_t len = 0;
      assert_member(d, "k", "2");
      /* Passed through from the file (not held); the member nested a
       * million deep is left out: deeper than any JSON it checks. */
      assert_non_null(jc_str(d, jc_get(d, jc_root(d), "big"), &len));
      assert_int_equal(len, 100u * 1000 * 1000);
      assert_int_equal(jc_get(d, jc_root(d), "deep"), -1);
    }
    jc_free(d);
  }
  /* Never closed: cut, no record. */
  t = (tu_text){ 0 };
  tu_text_puts(&t, "[");
  for (size_t i = 0; i < deep; i++)
    tu_text_puts(&t, "[");
  tt_write_bytes(in, t.p, t.len);
  free(t.p);
  {
    char *argv[] = { "stats", in, NULL };
    assert_int_equal(tt_run_argv(twt_tool_stats_main, argv, NULL, NULL), 1);
  }
  free(in);
  free(out);
  tt_remove_dir(dir);
}

/* The strict checker of the tools accepts exactly TWT_RECORD_DEPTH,
 * the library's TW_MAX_JSON_DEPTH plus the record and its args. */
static void test_depth_limit(void **state)
{
  tu_text t = { 0 };
  (void)state;

  assert_int_equal(TWT_RECORD_DEPTH, TW_MAX_JSON_DEPTH + 2);
  for (unsigned d = 1; d <= TWT_RECORD_DEPTH + 1; d++) {
    t.len = 0;
    for (unsigned i = 0; i < d; i++)
      tu_text_puts(&t, "[");
    for (unsigned i = 0; i < d; i++)
      tu_text_puts(&t, "]");
    assert_int_equal(twt_json_check(t.p, t.len, TWT_RECORD_DEPTH, NULL),
                     d <= TWT_RECORD_DEPTH ? 0 : -1);
  }
  free(t.p);
  /* The grammar: what jsmn lets through is refused. */
  {
    static const char *const bad[] = { "[1,,2]", "{\"a\":1,}", "[tru]",
      "[1] [2]", "\"a\tb\"", "[01]", "[1.]", "[-]", "\"\\x\"",
      "\"\\ud800\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"", "{\"a\" 1}", "",
      "[", "{\"a\":}", "[1e]" };
    static const char *const good[] = { "[1,2]", "{\"a\":{}}", "-0.5e+3",
      "\"\\ud83d\\ude00 \xe2\x82\xac\"", " [ true , false , null ] ",
      "0", "[[],{}]" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
      if (twt_json_check(bad[i], strlen(bad[i]), 8, NULL) == 0)
        fail_msg("accepted %s", bad[i]);
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
      if (twt_json_check(good[i], strlen(good[i]), 8, NULL) != 0)
        fail_msg("refused %s", good[i]);
  }
}


/* 1 if a and b found the same members (the same values). */
static int same_members(const twt_rec *a, const twt_rec *b)
{
  const twt_rec_span *x[] = { &a->ph_v, &a->name, &a->cat, &a->ts_v,
    &a->dur_v, &a->pid_v, &a->tid_v, &a->id, &a->id2, &a->scope,
    &a->args };
  const twt_rec_span *y[] = { &b->ph_v, &b->name, &b->cat, &b->ts_v,
    &b->dur_v, &b->pid_v, &b->tid_v, &b->id, &b->id2, &b->scope,
    &b->args };

  for (size_t i = 0; i < sizeof x / sizeof *x; i++)
    if (x[i]->len != y[i]->len ||
        (x[i]->len && memcmp(a->text + x[i]->off, b->text + y[i]->off,
                             x[i]->len) != 0))
      return 0;
  return 1;
}

static int is_space_(char c)
{
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* The record t as the scanner must yield it: without the whitespace
 * between its tokens when a newline, CR or tab is among it. */
static void expected_text(const tu_text *t, tu_text *want)
{
  int str = 0, esc = 0, nl = 0;
  size_t b = 0, e = t->len;

  /* Whitespace around the record is not part of it. */
  while (b < e && is_space_(t->p[b]))
    b++;
  while (e > b && is_space_(t->p[e - 1]))
    e--;
  for (size_t i = b; i < e; i++) {
    char c = t->p[i];
    if (str) {
      if (esc)
        esc = 0;
      else if (c == '\\')
        esc = 1;
      else if (c == '"')
        str = 0;
    } else if (c == '"') {
      str = 1;
    } else if (c == '\n' || c == '\r' || c == '\t') {
      nl = 1;
    }
  }
  want->len = 0;
  if (!nl) {
    tu_text_put(want, t->p + b, e - b);
    return;
  }
  want->len = twt_json_compact(want->p, t->p + b, e - b);
}

/* Variants of the records -- mutated bytes, whitespace between tokens,
 * cut -- must be accepted by the tools' one-pass checker exactly when
 * the test's strict checker accepts them; the scanner, fed the variant
 * as an array's element in chunks of every size, must yield a valid
 * one as the text expected (compacted where it spread over lines) with
 * the members found while it was checked where twt_rec_parse finds
 * them in that text, and never yield an invalid one. */
static void test_checker_matches(void **state)
{
  static const char pool[] = "\"\\{}[],:0123456789.eE+-tfnul \n\r\t\x01"
                             "\x80\xc3\xa9\xff ";
  tu_text t = { 0 }, doc = { 0 }, want = { 0 };
  unsigned seed = tt_seed();
  (void)state;

  srand(seed);
  want.cap = 1;
  for (int iter = 0; iter < 20000; iter++) {
    const char *rec = RECS[(size_t)rand() % NRECS];
    int muts = rand() % 4, ok;
    jc_doc *d;

    t.len = 0;
    if (rand() % 3 == 0)
      pretty(&t, rec, 2, rand() % 2 ? "\n" : "\r\n");
    else if (rand() % 2)
      spaced(&t, rec);
    else
      tu_text_puts(&t, rec);
    for (int m = 0; m < muts && t.len > 1; m++) {
      size_t at = (size_t)rand() % t.len;
      char c = pool[(size_t)rand() % (sizeof pool - 1)];
      switch (rand() % 4) {
      case 0:
        t.p[at] = c;
        break;
      case 1:
        tu_text_put(&t, " ", 1);
        memmove(t.p + at + 1, t.p + at, t.len - at - 1);
        t.p[at] = c;
        break;
      case 2:
        memmove(t.p + at, t.p + at + 1, t.len - at - 1);
        t.len--;
        break;
      default:
        t.len = at + 1;
        break;
      }
    }
    d = jc_parse(t.p, t.len, NULL, 0);
    ok = d != NULL && jc_type(d, jc_root(d)) == JC_OBJECT;
    if ((twt_json_check(t.p, t.len, TWT_RECORD_DEPTH, NULL) == 0) !=
        (d != NULL))
      fail_msg("seed %u: checker %s %.*s", seed, d ? "refused" : "accepted",
               (int)t.len, t.p);
    jc_free(d);

    /* Through the scanner, in chunks of k bytes. */
    doc.len = 0;
    tu_text_puts(&doc, "[");
    tu_text_put(&doc, t.p, t.len);
    tu_text_puts(&doc, "]");
    if (want.cap < t.len + 1) {
      want.p = realloc(want.p, t.len + 1);
      want.cap = t.len + 1;
    }
    if (ok)
      expected_text(&t, &want);
    {
      size_t k = 1 + (size_t)rand() % (doc.len + 16), pos = 0;
      twt_rec got;
      twt_scan *sc = twt_scan_new(1 << 20, 1 << 20);
      int yielded = 0;
      assert_non_null(sc);
      twt_scan_on_member(sc, twt_rec_take, &got);
      while (pos < doc.len) {
        size_t n = doc.len - pos < k ? doc.len - pos : k, off = 0;
        while (off < n) {
          twt_scan_rec r;
          int ready;
          ptrdiff_t used = twt_scan_feed(sc, doc.p + pos + off, n - off,
                                         &r, &ready);
          if (used < 0)
            break;
          off += (size_t)used;
          if (ready && !r.dropped) {
            twt_rec ref;
            jc_doc *rd = jc_parse(r.text, r.len, NULL, 0);
            if (!rd)
              fail_msg("seed %u: yielded an invalid %.*s from %.*s", seed,
                       (int)r.len, r.text, (int)t.len, t.p);
            jc_free(rd);
            /* (An invalid variant may hold a valid record before what
             * is wrong, "{...},junk": any record yielded is valid.) */
            if (ok && (r.len != want.len ||
                       memcmp(r.text, want.p, r.len) != 0))
              fail_msg("seed %u: yielded %.*s from %.*s", seed,
                       (int)r.len, r.text, (int)t.len, t.p);
            twt_rec_finish(&got, r.text, r.len);
            assert_int_equal(twt_rec_parse(&ref, r.text, r.len), 0);
            if (!same_members(&got, &ref))
              fail_msg("seed %u: the members of %.*s, read from %.*s",
                       seed, (int)r.len, r.text, (int)t.len, t.p);
            yielded++;
          }
          if (used == 0 && !ready)
            break;
        }
        pos += n;
      }
      (void)twt_scan_end(sc);
      if (ok && t.p[0] == '{' && yielded != 1)
        fail_msg("seed %u: %d records from %.*s", seed, yielded,
                 (int)t.len, t.p);
      twt_scan_free(sc);
    }
  }
  free(t.p);
  free(doc.p);
  free(want.p);
}

/* ======================================================= exact values */

/* Timestamps are moved and compared exactly on their decimal text,
 * whatever their spelling; nothing goes through a double. */
static void test_exact_arithmetic(void **state)
{
  static const struct {
    const char *in;
    int64_t shift_ns;
    const char *out;
  } moves[] = {
    { "1694039968955744.123", -1500000000, "1694039967455744.123" },
    { "1694039968955744.123456789", 1, "1694039968955744.124456789" },
    { "1694039968955744", 500, "1694039968955744.5" },
    { "1694039968955744", -1000000, "1694039968954744" },
    { "\"1694039968955744.5\"", 250, "\"1694039968955744.75\"" },
    { "1.694039968955744123E15", 0, "1694039968955744.123" },
    { "1.6940399689558e15", 1000, "1694039968955801" },
    { "16940399689557441e-1", 0, "1694039968955744.1" },
    { "0.5", -1000, "-0.5" },
    { "-0", 1, "0.001" },
    { "12", -12000, "0" },
    { "9007199254740993", 0, "9007199254740993" },
  };
  static const struct {
    const char *a, *b;
    int cmp;
  } cmps[] = {
    { "1500", "1.5e3", 0 },
    { "\"1500.000\"", "1500", 0 },
    { "1500.0000001", "1500", 1 },
    { "1694039968955744.123", "1694039968955744.1229999999", 1 },
    { "-1.5", "-1.49", -1 },
    { "9007199254740993", "9007199254740992", 1 },
  };
  char buf[TWT_REC_NUM_MAX];
  (void)state;

  for (size_t i = 0; i < sizeof moves / sizeof *moves; i++) {
    size_t n = twt_rec_us_shift_text(moves[i].in, strlen(moves[i].in),
                                     moves[i].shift_ns, buf);
    if (n != strlen(moves[i].out) || memcmp(buf, moves[i].out, n) != 0)
      fail_msg("%s %+" PRId64 " ns: got %.*s, want %s", moves[i].in,
               moves[i].shift_ns, (int)n, buf, moves[i].out);
  }
  for (size_t i = 0; i < sizeof cmps / sizeof *cmps; i++) {
    int c = 99;
    assert_int_equal(twt_rec_us_cmp(cmps[i].a, strlen(cmps[i].a), cmps[i].b,
                                    strlen(cmps[i].b), &c), 0);
    assert_int_equal(c, cmps[i].cmp);
  }
  {
    int64_t ns;
    assert_int_equal(twt_rec_us_to_ns("1.5e3", 5, &ns), 0);
    assert_int_equal(ns, 1500000);
    assert_int_equal(twt_rec_us_to_ns("\"-0.0015\"", 9, &ns), 0);
    assert_int_equal(ns, -2);       /* -1.5 ns: rounded down */
    assert_int_equal(twt_rec_us_to_ns("\"x\"", 3, &ns), -1);
    assert_int_equal(twt_rec_us_to_ns("1e400", 5, &ns), -1);
  }
}

/* merge --offset moves each timestamp by exact decimal arithmetic and
 * changes nothing else; a record it need not change passes byte for
 * byte (viztracer's ", " spacing kept). */
static void test_exact_merge(void **state)
{
  static const char *const in_recs[] = {
    "{\"ph\": \"X\", \"name\": \"a\", \"ts\": 1694039968955744.123, "
      "\"dur\": 1.5e1, \"pid\": \"p\", \"tid\": 1}",
    "{\"ph\":\"i\",\"name\":\"b\",\"ts\":\"1694039968955750.5\","
      "\"pid\":\"p\",\"tid\":1,\"s\":\"t\"}",
    "{\"ph\":\"X\",\"name\":\"c\",\"ts\":1.6940399689558E15,\"dur\":2,"
      "\"pid\":\"p\",\"tid\":1}",
  };
  static const char *const want[] = {
    "{\"ph\": \"X\", \"name\": \"a\", \"ts\": 1694039967455744.123, "
      "\"dur\": 1.5e1, \"pid\": \"p\", \"tid\": 1}",
    "{\"ph\":\"i\",\"name\":\"b\",\"ts\":\"1694039967455750.5\","
      "\"pid\":\"p\",\"tid\":1,\"s\":\"t\"}",
    "{\"ph\":\"X\",\"name\":\"c\",\"ts\":1694039967455800,\"dur\":2,"
      "\"pid\":\"p\",\"tid\":1}",
  };
  char *dir = tt_make_dir(), *in = tt_in_dir(dir, "viz.json");
  char *out = tt_in_dir(dir, "out.json"), off[PATH_MAX + 16];
  tu_text t = { 0 };
  jc_doc *d;
  jc_val v;
  size_t i = 0;
  (void)state;

  tu_text_puts(&t, "{\"traceEvents\": [");
  for (size_t k = 0; k < 3; k++) {
    tu_text_puts(&t, in_recs[k]);
    tu_text_puts(&t, k < 2 ? ", " : "");
  }
  tu_text_puts(&t, "], \"viztracer_metadata\": {\"version\": \"0.16.3\"}}");
  tt_write_bytes(in, t.p, t.len);
  free(t.p);
  snprintf(off, sizeof off, "%s=-1.5s", in);
  {
    char *argv[] = { "merge", "-q", "--offset", off, "-o", out, in, NULL };
    assert_int_equal(tt_run_argv(twt_tool_merge_main, argv, NULL, NULL), 0);
  }
  d = tt_load_file(out);
  for (v = jc_first(d, jc_trace_events(d)); v >= 0; v = jc_next(d, v)) {
    size_t len;
    const char *raw = jc_raw(d, v, &len);
    assert_true(i < 3);
    if (len != strlen(want[i]) || memcmp(raw, want[i], len) != 0)
      fail_msg("got %.*s\nwant %s", (int)len, raw, want[i]);
    i++;
  }
  assert_int_equal(i, 3);
  jc_free(d);
  /* cat changes nothing: every record byte for byte. */
  {
    char *argv[] = { "cat", "-q", "-o", out, in, NULL };
    assert_int_equal(tt_run_argv(twt_tool_cat_main, argv, NULL, NULL), 0);
    d = tt_load_file(out);
    i = 0;
    for (v = jc_first(d, jc_trace_events(d)); v >= 0; v = jc_next(d, v)) {
      size_t len;
      const char *raw = jc_raw(d, v, &len);
      assert_int_equal(len, strlen(in_recs[i]));
      assert_memory_equal(raw, in_recs[i], len);
      i++;
    }
    assert_int_equal(i, 3);
    jc_free(d);
  }
  free(in);
  free(out);
  tt_remove_dir(dir);
}

/* slice compares timestamps exactly whatever their spelling: at the
 * window's edges, a tenth of a nanosecond decides. */
static void test_exact_slice(void **state)
{
  static const char *const recs[] = {
    "{\"ph\":\"i\",\"name\":\"before\",\"ts\":\"1499.9999\",\"pid\":1,"
      "\"tid\":1,\"s\":\"t\"}",
    "{\"ph\":\"i\",\"name\":\"first\",\"ts\":1.5e3,\"pid\":1,\"tid\":1,"
      "\"s\":\"t\"}",
    "{\"ph\":\"i\",\"name\":\"inside\",\"ts\":\"1999.9999\",\"pid\":1,"
      "\"tid\":1,\"s\":\"t\"}",
    "{\"ph\":\"i\",\"name\":\"at end\",\"ts\":2000.0000,\"pid\":1,\"tid\":1,"
      "\"s\":\"t\"}",
  };
  char *dir = tt_make_dir(), *in = tt_in_dir(dir, "s.json");
  char *out = tt_in_dir(dir, "out.json");
  tu_text t = { 0 };
  jc_doc *d;
  jc_val ev;
  (void)state;

  tu_text_puts(&t, "[");
  for (size_t k = 0; k < 4; k++) {
    tu_text_puts(&t, recs[k]);
    tu_text_puts(&t, k < 3 ? ",\n" : "]");
  }
  tt_write_bytes(in, t.p, t.len);
  free(t.p);
  {
    char *argv[] = { "slice", "-q", "--from", "@1500us", "--to", "@2ms",
                     "-o", out, in, NULL };
    assert_int_equal(tt_run_argv(twt_tool_slice_main, argv, NULL, NULL), 0);
  }
  d = tt_load_file(out);
  ev = jc_trace_events(d);
  assert_int_equal(jc_len(d, ev), 2);
  assert_true(jc_streq(d, jc_get(d, jc_index(d, ev, 0), "name"), "first"));
  assert_true(jc_streq(d, jc_get(d, jc_index(d, ev, 1), "name"), "inside"));
  jc_free(d);
  free(in);
  free(out);
  tt_remove_dir(dir);
}


/* ================================================= one timeline */

/* The ts, in ns, of the event named name in the output at path. */
static int64_t ts_of(const char *path, const char *name)
{
  jc_doc *d = tt_load_file(path);
  jc_val v;
  uint64_t ns = 0;
  int found = 0;

  for (v = jc_first(d, jc_trace_events(d)); v >= 0; v = jc_next(d, v))
    if (jc_streq(d, jc_get(d, v, "name"), name)) {
      assert_int_equal(jc_us_to_ns(d, jc_get(d, v, "ts"), &ns), 0);
      found++;
    }
  assert_int_equal(found, 1);
  jc_free(d);
  return (int64_t)ns;
}

/* merge keeps apart the processes of different inputs that share a pid,
 * integer or string ("Spans", ""): every (input, pid) pair is one
 * output pid, the first input keeps its own, the same pair is written
 * the same everywhere (metadata included), and --explain (even with -q)
 * names what it rewrote. */
static void test_merge_pids(void **state)
{
  /* The pids of each input, as JSON tokens; "Spans #2" is what input
   * 2's "Spans" would become: taken already, it must not merge. */
  static const char *const pids[3][4] = {
    { "\"Spans\"", "7", "\"\"", NULL },
    { "\"Spans\"", "\"Spans #2\"", "7", "\"\"" },
    { "7", "\"Spans\"", "8", NULL },
  };
  char *dir = tt_make_dir(), *out = tt_in_dir(dir, "out.json");
  char *err = tt_in_dir(dir, "err"), *in[3];
  const char *seen[3][4] = { { NULL } };
  jc_doc *d;
  jc_val v;
  char *msg;
  (void)state;

  for (int i = 0; i < 3; i++) {
    tu_text t = { 0 };
    char name[16], rec[160];
    snprintf(name, sizeof name, "in%d.json", i);
    in[i] = tt_in_dir(dir, name);
    tu_text_puts(&t, "[");
    for (int k = 0, first = 1; k < 4 && pids[i][k]; k++) {
      for (int rep = 0; rep < 2; rep++) {
        if (rep == 0)
          snprintf(rec, sizeof rec, "%s{\"ph\":\"M\",\"name\":"
                   "\"process_name\",\"pid\":%s,\"tid\":1,\"args\":"
                   "{\"name\":\"p%d_%d\"}}", first ? "" : ",", pids[i][k],
                   i, k);
        else
          snprintf(rec, sizeof rec, ",{\"ph\":\"X\",\"name\":\"p%d_%d\","
                   "\"pid\":%s,\"tid\":1,\"ts\":%d,\"dur\":1}", i, k,
                   pids[i][k], 10 * k + i);
        tu_text_puts(&t, rec);
        first = 0;
      }
    }
    tu_text_puts(&t, "]");
    tt_write_bytes(in[i], t.p, t.len);
    free(t.p);
  }
  {
    char *argv[] = { "merge", "-q", "--explain", "-o", out, in[0], in[1],
                     in[2], NULL };
    assert_int_equal(tt_run_argv(twt_tool_merge_main, argv, NULL, err), 0);
  }
  d = tt_load_file(out);
  for (v = jc_first(d, jc_trace_events(d)); v >= 0; v = jc_next(d, v)) {
    jc_val nm = jc_get(d, v, "name");
    size_t len, plen;
    const char *s;
    const char *p = jc_raw(d, jc_get(d, v, "pid"), &plen);
    int i, k;
    if (jc_streq(d, nm, "process_name"))
      nm = jc_get(d, jc_get(d, v, "args"), "name");
    s = jc_str(d, nm, &len);
    assert_true(s && sscanf(s, "p%d_%d", &i, &k) == 2);
    assert_true(i >= 0 && i < 3 && k >= 0 && k < 4);
    if (!seen[i][k]) {
      seen[i][k] = p;
      /* Not the pid of any other (input, pid). */
      for (int a = 0; a < 3; a++)
        for (int b = 0; b < 4; b++)
          if ((a != i || b != k) && seen[a][b] &&
              strncmp(seen[a][b], p, plen) == 0 &&
              (seen[a][b][plen] == ',' || seen[a][b][plen] == '}'))
            fail_msg("input %d's %s and input %d's %s both written as "
                     "%.*s", i, pids[i][k], a, pids[a][b], (int)plen, p);
    } else if (strncmp(seen[i][k], p, plen) != 0) {
      fail_msg("input %d's %s written two ways", i, pids[i][k]);
    }
  }
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 4 && pids[i][k]; k++) {
      assert_non_null(seen[i][k]);
      if (i == 0)                   /* the first input keeps its pids */
        assert_memory_equal(seen[i][k], pids[i][k], strlen(pids[i][k]));
    }
  jc_free(d);
  msg = tu_read_file(err, NULL);
  if (!strstr(msg, "\"Spans\" -> \"Spans #2\"") ||
      !strstr(msg, "7 -> 4194304") || !strstr(msg, "\"\" -> \" #2\"") ||
      !strstr(msg, "\"Spans\" -> \"Spans #3\"") ||
      strstr(msg, "in0.json: 1 pid") || strstr(msg, "in0.json: 2 pids"))
    fail_msg("--explain says:\n%s", msg);
  free(msg);
  for (int i = 0; i < 3; i++)
    free(in[i]);
  free(out);
  free(err);
  tt_remove_dir(dir);
}

/* A tracewriter trace (monotonic ts, or timebase=kineto, and its clock
 * record) and a PyTorch profiler trace written here from the same
 * wall-clock instant -- with
 * baseTimeNanoseconds (ts relative to it) and without (epoch ts) --
 * land within 1 ms of each other after merge, in either order, and
 * --explain says which rule placed each. */
static void test_merge_kineto(void **state)
{
  char *dir = tt_make_dir(), *eng = tt_in_dir(dir, "engine.json");
  char *kin = tt_in_dir(dir, "rank0.pt.trace.json");
  char *out = tt_in_dir(dir, "out.json"), *err = tt_in_dir(dir, "err");
  const int64_t quarter = (int64_t)91 * 24 * 3600 * 1000000000;
  struct timespec rt;
  int64_t mono, real;
  tw_options o;
  tw_writer *w;
  int rc = 0;
  (void)state;

  /* The engine's trace on the monotonic clock, then on the profiler's
   * timebase (timebase=kineto: its clock record says the base). */
  for (int tb = 0; tb < 2; tb++) {
  tw_options_init(&o);
  o.timebase = tb ? TW_TIMEBASE_KINETO : TW_TIMEBASE_MONOTONIC;
  w = tw_open(eng, &o, &rc);
  assert_non_null(w);
  mono = (int64_t)tw_now_ns();
  assert_int_equal(clock_gettime(CLOCK_REALTIME, &rt), 0);
  real = (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec;
  assert_int_equal(tw_complete(w, "engine", "engine.step", (uint64_t)mono,
                               1000, NULL, 0), 0);
  assert_int_equal(tw_close(w), 0);

  for (int with_base = 0; with_base < 2; with_base++) {
    int64_t base = with_base ? real - real % quarter : 0;
    int64_t rel = real - base;
    char *doc;
    assert_true(asprintf(&doc,
      "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [],\n"
      "  \"distributedInfo\": {\"rank\": 0},\n"
      "  \"displayTimeUnit\": \"ms\",\n  \"traceEvents\": [\n"
      "  {\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\",\n"
      "    \"pid\": 0, \"tid\": 7,\n    \"ts\": %" PRId64 ".%03d,"
      " \"dur\": 1.000\n  }\n  ],\n  \"traceName\": \"r0\"\n}\n",
      rel / 1000, (int)(rel % 1000)) > 0);
    if (with_base) {
      free(doc);
      assert_true(asprintf(&doc,
        "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [],\n"
        "  \"distributedInfo\": {\"rank\": 0},\n"
        "  \"displayTimeUnit\": \"ms\",\n"
        "  \"baseTimeNanoseconds\": %" PRId64 ",\n  \"traceEvents\": [\n"
        "  {\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\",\n"
        "    \"pid\": 0, \"tid\": 7,\n    \"ts\": %" PRId64 ".%03d,"
        " \"dur\": 1.000\n  }\n  ],\n  \"traceName\": \"r0\"\n}\n",
        base, rel / 1000, (int)(rel % 1000)) > 0);
    }
    tt_write_bytes(kin, doc, strlen(doc));
    free(doc);
    for (int order = 0; order < 2; order++) {
      char *argv[] = { "merge", "-q", "--explain", "-o", out,
                       order ? kin : eng, order ? eng : kin, NULL };
      int64_t a, b;
      char *msg;
      assert_int_equal(tt_run_argv(twt_tool_merge_main, argv, NULL, err), 0);
      a = ts_of(out, "engine.step");
      b = ts_of(out, "gemm");
      if (llabs(a - b) > 1000000)
        fail_msg("timebase %d base %d order %d: %" PRId64 " and %" PRId64
                 " are %" PRId64 " ns apart", tb, with_base, order, a, b,
                 a - b);
      msg = tu_read_file(err, NULL);
      assert_non_null(strstr(msg, with_base ? "baseTimeNanoseconds " :
                             "since the epoch"));
      assert_non_null(strstr(msg, "its clock record"));
      assert_non_null(strstr(msg, "the reference"));
      free(msg);
    }
  }
  }
  free(eng);
  free(kin);
  free(out);
  free(err);
  tt_remove_dir(dir);
}


/* ============================================================ ndjson */

/* The lines of the file at path (each ending with "\n", nothing else)
 * must be exactly want[0..n), each one strict JSON. */
static void assert_ndjson(const char *path, const char *const *want,
                          size_t n)
{
  size_t len, i = 0;
  char *buf = tu_read_file(path, &len), *p = buf;

  assert_true(len > 0 && buf[len - 1] == '\n');
  while (p < buf + len) {
    char *nl = memchr(p, '\n', (size_t)(buf + len - p)), err[128];
    jc_doc *d;
    assert_non_null(nl);
    d = jc_parse(p, (size_t)(nl - p), err, sizeof err);
    if (!d)
      fail_msg("line %zu: %s", i + 1, err);
    assert_int_equal(jc_type(d, jc_root(d)), JC_OBJECT);
    jc_free(d);
    if (want) {
      assert_true(i < n);
      if ((size_t)(nl - p) != strlen(want[i]) ||
          memcmp(p, want[i], strlen(want[i])) != 0)
        fail_msg("line %zu: %.*s\nwant %s", i + 1, (int)(nl - p), p,
                 want[i]);
    }
    i++;
    p = nl + 1;
  }
  assert_int_equal(i, n);
  free(buf);
}

/* --ndjson: one record a line and nothing else, for cat, slice and
 * merge, whatever the input's shape. */
static void test_ndjson(void **state)
{
  char *dir = tt_make_dir(), *in = tt_in_dir(dir, "k.json");
  char *in2 = tt_in_dir(dir, "c.json"), *out = tt_in_dir(dir, "out.ndjson");
  tu_text k = make_doc(KINETO), c = make_doc(CHROME);
  (void)state;

  tt_write_bytes(in, k.p, k.len);
  tt_write_bytes(in2, c.p, c.len);
  {
    char *argv[] = { "cat", "-q", "--ndjson", "-o", out, in, NULL };
    assert_int_equal(tt_run_argv(twt_tool_cat_main, argv, NULL, NULL), 0);
    assert_ndjson(out, RECS, NRECS);
  }
  {
    char *argv[] = { "slice", "-q", "--ndjson", "-o", out, in, NULL };
    assert_int_equal(tt_run_argv(twt_tool_slice_main, argv, NULL, NULL), 0);
    assert_ndjson(out, NULL, NRECS);
  }
  {
    char *argv[] = { "merge", "-q", "--ndjson", "-o", out, in, in2, NULL };
    assert_int_equal(tt_run_argv(twt_tool_merge_main, argv, NULL, NULL), 0);
    assert_ndjson(out, NULL, 2 * NRECS + 1);  /* + the clock record */
  }
  {
    char *argv[] = { "stats", "--ndjson", in, NULL };
    assert_int_equal(tt_run_argv(twt_tool_stats_main, argv, NULL, NULL), 2);
  }
  free(k.p);
  free(c.p);
  free(in);
  free(in2);
  free(out);
  tt_remove_dir(dir);
}


/* A member of more than 1 MiB (Chrome's stackFrames and samples, its
 * systemTraceEvents of ftrace text) is passed through whole, wherever it
 * stands, by cat, slice and split (each part), plain and gzip, in memory
 * that does not grow with it: copied from the file, checked as it goes.
 * One that is not valid JSON is left out, with a warning. */
static void test_member_too_long(void **state)
{
  const size_t big = 3u << 19;            /* 1.5 MiB of string */
  char *dir = tt_make_dir(), *in = tt_in_dir(dir, "in.json");
  char *gz = tt_in_dir(dir, "in.json.gz");
  char *out = tt_in_dir(dir, "out.json"), *err = tt_in_dir(dir, "err");
  char *part = tt_in_dir(dir, "part.json");
  tu_text doc = { 0 };
  size_t len, glen;
  unsigned char *g;
  char *msg;
  jc_doc *d;
  (void)state;

  tu_text_puts(&doc, "{ \"before\": 1, \"big\": \"");
  for (size_t i = 0; i < big; i++)
    tu_text_put(&doc, i % 1000 == 999 ? "\\u00e9" : "x",
                i % 1000 == 999 ? 6 : 1);
  tu_text_puts(&doc, "\", \"traceEvents\": [\n");
  for (int i = 0; i < 400; i++) {
    char rec[128];
    snprintf(rec, sizeof rec, "  {\"ph\": \"i\", \"ts\": %d, \"pid\": 1, "
             "\"tid\": 1, \"s\": \"t\"}%s\n", i, i < 399 ? "," : "");
    tu_text_puts(&doc, rec);
  }
  tu_text_puts(&doc, "], \"samples\": [");
  for (size_t i = 0; i < big / 8; i++)
    tu_text_puts(&doc, i ? ", 12345" : "12345");
  tu_text_puts(&doc, "], \"after\": 2}\n");
  tt_write_bytes(in, doc.p, doc.len);
  g = tt_gz_member(doc.p, doc.len, &glen);
  tt_write_bytes(gz, g, glen);
  free(g);
  for (int k = 0; k < 4; k++) {
    char *file = k == 1 ? gz : in;
    char *cat_argv[] = { "cat", "-o", out, file, NULL };
    char *slice_argv[] = { "slice", "-o", out, file, NULL };
    char *split_argv[] = { "split", "-s", "8k", "-o", part, file, NULL };
    char *name = out;
    if (k < 2)
      assert_int_equal(tt_run_argv(twt_tool_cat_main, cat_argv, NULL, err),
                       0);
    else if (k == 2)
      assert_int_equal(tt_run_argv(twt_tool_slice_main, slice_argv, NULL,
                                   err), 0);
    else
      assert_int_equal(tt_run_argv(twt_tool_split_main, split_argv, NULL,
                                   err), 0);
    for (int p = 1; p <= (k == 3 ? 2 : 1); p++) {
      char pn[PATH_MAX];
      jc_val v;
      if (k == 3) {
        snprintf(pn, sizeof pn, "%s/part.%06d.json", dir, p);
        name = pn;
      }
      d = tt_load_file(name);
      if (k < 3)
        assert_int_equal(jc_len(d, jc_trace_events(d)), 400);
      assert_int_equal(jc_num(d, jc_get(d, jc_root(d), "before")), 1);
      assert_int_equal(jc_num(d, jc_get(d, jc_root(d), "after")), 2);
      v = jc_get(d, jc_root(d), "big");
      assert_true(v >= 0);
      assert_int_equal(jc_str(d, v, &len) != NULL, 1);
      assert_int_equal(len, big + big / 1000);   /* é: two bytes */
      assert_int_equal(jc_len(d, jc_get(d, jc_root(d), "samples")),
                       big / 8);
      jc_free(d);
    }
    msg = tu_read_file(err, &len);
    assert_null(strstr(msg, "too long to keep"));
    free(msg);
  }
  /* Not valid JSON: left out, said. */
  {
    char *cat_argv[] = { "cat", "-o", out, in, NULL };
    char *at = strstr(doc.p, "12345, 12345");
    at[5] = ';';
    tt_write_bytes(in, doc.p, doc.len);
    assert_int_equal(tt_run_argv(twt_tool_cat_main, cat_argv, NULL, err), 0);
    d = tt_load_file(out);
    assert_int_equal(jc_get(d, jc_root(d), "samples"), -1);
    assert_true(jc_get(d, jc_root(d), "big") >= 0);
    jc_free(d);
    msg = tu_read_file(err, &len);
    assert_non_null(strstr(msg, "is not valid JSON: left out"));
    free(msg);
  }
  free(doc.p);
  free(in);
  free(gz);
  free(part);
  free(out);
  free(err);
  tt_remove_dir(dir);
}

/* A member kept besides traceEvents is written back as it was read: its
 * key is checked like its value, and one that is not strict JSON (a raw
 * control byte, invalid UTF-8) stops the reading there, with a warning,
 * instead of reaching the output. */
static void test_member_keys(void **state)
{
  static const char bad_keys[][8] = { "a\x01", "\xc0\xaf", "\\q" };
  char *dir = tt_make_dir(), *in = tt_in_dir(dir, "in.json");
  char *out = tt_in_dir(dir, "out.json"), *err = tt_in_dir(dir, "err");
  (void)state;

  for (size_t i = 0; i < sizeof bad_keys / sizeof *bad_keys; i++) {
    char doc[256];
    /* Not the library's layout: the general reader reads it. */
    int n = snprintf(doc, sizeof doc, "{ \"traceEvents\": [\n  {\"ph\": "
                     "\"i\", \"ts\": 1, \"pid\": 1, \"tid\": 1, \"s\": "
                     "\"t\"}\n],\n\"ok\": 2, \"%s\": 1}\n", bad_keys[i]);
    char *argv[] = { "cat", "-o", out, in, NULL };
    size_t len;
    char *msg;
    jc_doc *d;

    tt_write_bytes(in, doc, (size_t)n);
    assert_int_equal(tt_run_argv(twt_tool_cat_main, argv, NULL, err), 0);
    d = tt_load_file(out);
    assert_int_equal(jc_len(d, jc_trace_events(d)), 1);
    assert_int_equal(jc_num(d, jc_get(d, jc_root(d), "ok")), 2);
    assert_int_equal(jc_len(d, jc_root(d)), 2);   /* the bad one left out */
    jc_free(d);
    msg = tu_read_file(err, &len);
    assert_non_null(strstr(msg, "a valid JSON string (a key)"));
    free(msg);
  }
  free(in);
  free(out);
  free(err);
  tt_remove_dir(dir);
}

/* The output's form and tail: that of the first file with a record, and
 * the tail of the last file of that form.  Files of both forms read as
 * one trace, and a trace of the object form with no valid record, give
 * strict JSON with every record and the members that have a place. */
static void test_mixed_forms(void **state)
{
  static const char arr[] =
      "[\n{\"ph\":\"i\",\"name\":\"a\",\"ts\":1,\"pid\":1,\"tid\":1,"
      "\"s\":\"t\"}\n]\n";
  static const char obj[] =
      "{\"traceEvents\":[\n{\"ph\":\"i\",\"name\":\"b\",\"ts\":2,"
      "\"pid\":1,\"tid\":1,\"s\":\"t\"}\n],\"meta\":1}\n";
  /* The object form, its only record invalid (a bare word for a key). */
  static const char none[] =
      "{\n  \"schemaVersion\": 1,\n  \"traceEvents\": [\n  {\"ph\": \"X\","
      " name: \"x\"}\n  ],\n  \"traceName\": \"t\"\n}\n";
  char *dir = tt_make_dir(), *a = tt_in_dir(dir, "a.json");
  char *b = tt_in_dir(dir, "b.json"), *n = tt_in_dir(dir, "n.json");
  char *out = tt_in_dir(dir, "out.json"), *parts = tt_in_dir(dir, "p.json");
  char *part1 = tt_in_dir(dir, "p.000001.json");
  jc_doc *d;
  (void)state;

  tt_write_bytes(a, arr, sizeof arr - 1);
  tt_write_bytes(b, obj, sizeof obj - 1);
  tt_write_bytes(n, none, sizeof none - 1);
  {
    /* An array first: an array, b's member has no place. */
    char *argv[] = { "cat", "-q", "-o", out, a, b, NULL };
    assert_int_equal(tt_run_argv(twt_tool_cat_main, argv, NULL, NULL), 0);
    d = tt_load_file(out);
    assert_int_equal(jc_type(d, jc_root(d)), JC_ARRAY);
    assert_int_equal(jc_len(d, jc_root(d)), 2);
    assert_true(jc_streq(d, jc_get(d, jc_index(d, jc_root(d), 1), "name"),
                         "b"));
    jc_free(d);
  }
  {
    /* An object first: an object, with b's member (a has none). */
    char *argv[] = { "cat", "-q", "-o", out, b, a, NULL };
    assert_int_equal(tt_run_argv(twt_tool_cat_main, argv, NULL, NULL), 0);
    d = tt_load_file(out);
    assert_int_equal(jc_len(d, jc_trace_events(d)), 2);
    assert_true(jc_streq(d, jc_get(d, jc_index(d, jc_trace_events(d), 1),
                                   "name"), "a"));
    assert_int_equal(jc_num(d, jc_get(d, jc_root(d), "meta")), 1);
    jc_free(d);
  }
  {
    /* No valid record: the object form and its members, no event. */
    char *argv[] = { "cat", "-q", "-o", out, n, NULL };
    assert_int_equal(tt_run_argv(twt_tool_cat_main, argv, NULL, NULL), 0);
    d = tt_load_file(out);
    assert_int_equal(jc_type(d, jc_trace_events(d)), JC_ARRAY);
    assert_int_equal(jc_len(d, jc_trace_events(d)), 0);
    assert_true(jc_streq(d, jc_get(d, jc_root(d), "traceName"), "t"));
    assert_int_equal(jc_num(d, jc_get(d, jc_root(d), "schemaVersion")), 1);
    jc_free(d);
  }
  {
    char *argv[] = { "slice", "-q", "-o", out, n, NULL };
    assert_int_equal(tt_run_argv(twt_tool_slice_main, argv, NULL, NULL), 0);
    d = tt_load_file(out);
    assert_int_equal(jc_len(d, jc_trace_events(d)), 0);
    assert_true(jc_streq(d, jc_get(d, jc_root(d), "traceName"), "t"));
    jc_free(d);
  }
  {
    char *argv[] = { "split", "-q", "--size", "4k", "-o", parts, n, NULL };
    assert_int_equal(tt_run_argv(twt_tool_split_main, argv, NULL, NULL), 0);
    d = tt_load_file(part1);
    assert_int_equal(jc_len(d, jc_trace_events(d)), 0);
    assert_true(jc_streq(d, jc_get(d, jc_root(d), "traceName"), "t"));
    jc_free(d);
  }
  free(a);
  free(b);
  free(n);
  free(out);
  free(parts);
  free(part1);
  tt_remove_dir(dir);
}

/* slice --clip: complete events that cross the window's edges are cut
 * to it (ts and dur rewritten); one inside stays byte for byte; without
 * --clip all are kept whole. */
static void test_slice_clip(void **state)
{
  static const char *const recs[] = {
    "{\"ph\":\"X\",\"name\":\"a\",\"ts\":900,\"dur\":200,\"pid\":1,"
      "\"tid\":1}",
    "{\"dur\":300,\"ph\":\"X\",\"name\":\"b\",\"ts\":\"1900.5\",\"pid\":1,"
      "\"tid\":1}",
    "{\"ph\":\"X\",\"name\":\"c\",\"ts\":8e2,\"dur\":1500,\"pid\":1,"
      "\"tid\":1}",
    "{\"ph\":\"X\",\"name\":\"d\",\"ts\":1200,\"dur\":10,\"pid\":1,"
      "\"tid\":1}",
    "{\"ph\":\"X\",\"name\":\"e\",\"ts\":100,\"dur\":10,\"pid\":1,"
      "\"tid\":1}",
  };
  static const struct { int64_t ts, dur; } clipped[] = {
    { 1000000, 100000 }, { 1900500, 99500 }, { 1000000, 1000000 },
    { 1200000, 10000 },
  };
  char *dir = tt_make_dir(), *in = tt_in_dir(dir, "s.json");
  char *out = tt_in_dir(dir, "out.json");
  tu_text t = { 0 };
  (void)state;

  tu_text_puts(&t, "[");
  for (size_t k = 0; k < 5; k++) {
    tu_text_puts(&t, recs[k]);
    tu_text_puts(&t, k < 4 ? ",\n" : "]");
  }
  tt_write_bytes(in, t.p, t.len);
  free(t.p);
  for (int with_clip = 0; with_clip < 2; with_clip++) {
    char *argv[] = { "slice", "-q", "--from", "@1ms", "--to", "@2ms", "-o",
                     out, in, with_clip ? "--clip" : NULL, NULL };
    jc_doc *d;
    jc_val ev;
    assert_int_equal(tt_run_argv(twt_tool_slice_main, argv, NULL, NULL), 0);
    d = tt_load_file(out);
    ev = jc_trace_events(d);
    assert_int_equal(jc_len(d, ev), 4);
    for (size_t k = 0; k < 4; k++) {
      jc_val v = jc_index(d, ev, k);
      uint64_t ts, dur;
      size_t len;
      const char *raw = jc_raw(d, v, &len);
      assert_int_equal(jc_us_to_ns(d, jc_get(d, v, "dur"), &dur), 0);
      if (!with_clip || k == 3) {   /* whole: byte for byte */
        assert_int_equal(len, strlen(recs[k]));
        assert_memory_equal(raw, recs[k], len);
        continue;
      }
      if (jc_type(d, jc_get(d, v, "ts")) == JC_STRING) {
        /* Written as a string: it stays one, moved to the window. */
        assert_int_equal(k, 1);
        assert_true(jc_streq(d, jc_get(d, v, "ts"), "1900.500"));
      } else {
        assert_int_equal(jc_us_to_ns(d, jc_get(d, v, "ts"), &ts), 0);
        assert_int_equal((int64_t)ts, clipped[k].ts);
      }
      assert_int_equal((int64_t)dur, clipped[k].dur);
    }
    jc_free(d);
  }
  free(in);
  free(out);
  tt_remove_dir(dir);
}


/* ============================================================= split */

static int cmp_str(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Append the raw text of every event (not 'M', not the clock record) of
 * the trace at path to *v (*n of them); and check that each B/E pair and
 * b/e span of it is whole: as many ends as beginnings per key. */
static void collect(const char *path, char ***v, size_t *n, size_t *metas)
{
  jc_doc *d = tt_load_file(path);
  jc_val e;
  int64_t open_be[4] = { 0 }, open_async = 0;

  *metas = 0;
  for (e = jc_first(d, jc_trace_events(d)); e >= 0; e = jc_next(d, e)) {
    size_t len;
    const char *raw = jc_raw(d, e, &len);
    int64_t tid = 0;
    if (is_ph_(d, e, "M")) {
      ++*metas;
      continue;
    }
    if (is_ph_(d, e, "c"))
      continue;
    (void)jc_int64(d, jc_get(d, e, "tid"), &tid);
    if (is_ph_(d, e, "B"))
      open_be[tid & 3]++;
    if (is_ph_(d, e, "E"))
      assert_true(open_be[tid & 3]-- > 0);
    if (is_ph_(d, e, "b"))
      open_async++;
    if (is_ph_(d, e, "e"))
      assert_true(open_async-- > 0);
    *v = realloc(*v, (*n + 1) * sizeof **v);
    assert_non_null(*v);
    (*v)[(*n)++] = strndup(raw, len);
  }
  for (int k = 0; k < 4; k++)
    assert_int_equal(open_be[k], 0);
  assert_int_equal(open_async, 0);
  jc_free(d);
}

static void free_strs(char **v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    free(v[i]);
  free(v);
}

/* split --every and --size: every part strict and self-contained (the
 * names repeated), each span whole in one part, the parts together
 * holding every event once; cat of the parts gives them back. */
static void test_split(void **state)
{
  char *dir = tt_make_dir(), *in = tt_in_dir(dir, "big.json");
  char *out = tt_in_dir(dir, "part.json"), *back = tt_in_dir(dir, "b.json");
  char **want = NULL;
  size_t nwant = 0, metas;
  tu_text t = { 0 };
  (void)state;

  /* 400 events over 4 ms: a B/E around all of it on thread 1, short
   * B/E pairs and X events on threads 2 and 3, async spans across
   * parts, instants. */
  tu_text_puts(&t, "{\"traceEvents\":[\n{\"ph\":\"M\",\"name\":\"process_name\","
        "\"pid\":1,\"tid\":1,\"args\":{\"name\":\"engine\"}},\n"
        "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":2,"
        "\"args\":{\"name\":\"worker\"}},\n"
        "{\"ph\":\"B\",\"name\":\"run\",\"pid\":1,\"tid\":1,\"ts\":0}");
  for (int i = 0; i < 400; i++) {
    char rec[256];
    int ts = 10 * i + 1;
    switch (i % 8) {
    case 0:
      snprintf(rec, sizeof rec, ",\n{\"ph\":\"B\",\"name\":\"step\","
               "\"pid\":1,\"tid\":2,\"ts\":%d}", ts);
      break;
    case 3:
      snprintf(rec, sizeof rec, ",\n{\"ph\":\"E\",\"pid\":1,\"tid\":2,"
               "\"ts\":%d}", ts);
      break;
    case 4:
      snprintf(rec, sizeof rec, ",\n{\"ph\":\"b\",\"cat\":\"req\","
               "\"name\":\"r\",\"id\":%d,\"pid\":1,\"tid\":3,\"ts\":%d}",
               i, ts);
      break;
    case 6:
      snprintf(rec, sizeof rec, ",\n{\"ph\":\"i\",\"name\":\"tick\","
               "\"s\":\"t\",\"pid\":1,\"tid\":3,\"ts\":%d}", ts);
      break;
    default:
      snprintf(rec, sizeof rec, ",\n{\"ph\":\"X\",\"name\":\"k%d\","
               "\"pid\":1,\"tid\":3,\"ts\":%d,\"dur\":4}", i, ts);
      break;
    }
    tu_text_puts(&t, rec);
    if (i % 8 == 4 && i >= 40) {    /* the span begun 36 events before */
      snprintf(rec, sizeof rec, ",\n{\"ph\":\"e\",\"cat\":\"req\","
               "\"name\":\"r\",\"id\":%d,\"pid\":1,\"tid\":3,\"ts\":%d}",
               i - 40, ts);
      tu_text_puts(&t, rec);
    }
  }
  for (int i = 360; i < 400; i += 8) {
    char rec[256];
    snprintf(rec, sizeof rec, ",\n{\"ph\":\"e\",\"cat\":\"req\","
             "\"name\":\"r\",\"id\":%d,\"pid\":1,\"tid\":3,\"ts\":4001}",
             i + 4);
    tu_text_puts(&t, rec);
  }
  tu_text_puts(&t, ",\n{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":4002}\n],"
        "\"displayTimeUnit\":\"ns\"}");
  tt_write_bytes(in, t.p, t.len);
  free(t.p);
  collect(in, &want, &nwant, &metas);
  qsort(want, nwant, sizeof *want, cmp_str);

  for (int mode = 0; mode < 2; mode++) {
    char *argv[] = { "split", "-q", "-o", out, mode ? "--size" : "--every",
                     mode ? "4k" : "500us", in, NULL };
    char **got = NULL, **catv = NULL;
    size_t ngot = 0, ncat = 0, nparts = 0;
    char *cat_argv[64] = { "cat", "-q", "--no-parts", "-o", back };
    size_t cat_argc = 5;

    assert_int_equal(tt_run_argv(twt_tool_split_main, argv, NULL, NULL), 0);
    for (unsigned long k = 1;; k++) {
      char name[PATH_MAX];
      size_t m;
      snprintf(name, sizeof name, "%s/part.%06lu.json", dir, k);
      if (access(name, F_OK) != 0)
        break;
      nparts++;
      collect(name, &got, &ngot, &m);
      assert_int_equal(m, 2);       /* the names, in every part */
      assert_true(cat_argc < 63);
      cat_argv[cat_argc++] = strdup(name);
    }
    assert_true(nparts >= 4);
    qsort(got, ngot, sizeof *got, cmp_str);
    assert_int_equal(ngot, nwant);
    for (size_t i = 0; i < nwant; i++)
      assert_string_equal(got[i], want[i]);
    cat_argv[cat_argc] = NULL;
    assert_int_equal(tt_run_argv(twt_tool_cat_main, cat_argv, NULL, NULL), 0);
    collect(back, &catv, &ncat, &metas);
    assert_int_equal(metas, 2);
    qsort(catv, ncat, sizeof *catv, cmp_str);
    assert_int_equal(ncat, nwant);
    for (size_t i = 0; i < nwant; i++)
      assert_string_equal(catv[i], want[i]);
    for (size_t i = 5; i < cat_argc; i++) {
      assert_int_equal(unlink(cat_argv[i]), 0);
      free(cat_argv[i]);
    }
    free_strs(got, ngot);
    free_strs(catv, ncat);
  }
  free_strs(want, nwant);
  free(in);
  free(out);
  free(back);
  tt_remove_dir(dir);
}


/* stats counts every record whatever its pid's type, rows threads by
 * pid and tid as written (strings too), and says what it could not
 * place on the timeline. */
static void test_stats_places(void **state)
{
  char *dir = tt_make_dir(), *in = tt_in_dir(dir, "k.json");
  char *out = tt_in_dir(dir, "stats.json");
  tu_text t = make_doc(KINETO);
  char *argv[] = { "stats", "--json", "-o", out, in, NULL };
  jc_doc *d;
  jc_val th, v, unpl;
  int64_t n, events = 0, sum = 0;
  int saw_string_pid = 0;
  (void)state;

  tt_write_bytes(in, t.p, t.len);
  free(t.p);
  assert_int_equal(tt_run_argv(twt_tool_stats_main, argv, NULL, NULL), 0);
  d = tt_load_file(out);
  assert_int_equal(jc_int64(d, jc_get(d, jc_root(d), "records"), &n), 0);
  assert_int_equal(n, NRECS);
  assert_int_equal(jc_int64(d, jc_get(d, jc_root(d), "events"), &events),
                   0);
  assert_int_equal(events, NRECS - 1);
  th = jc_get(d, jc_root(d), "threads");
  for (v = jc_first(d, th); v >= 0; v = jc_next(d, v)) {
    int64_t e;
    assert_int_equal(jc_int64(d, jc_get(d, v, "events"), &e), 0);
    sum += e;
    if (jc_streq(d, jc_get(d, v, "pid"), "Spans") &&
        jc_streq(d, jc_get(d, v, "tid"), ""))
      saw_string_pid = 1;
  }
  assert_int_equal(sum, events);
  assert_true(saw_string_pid);
  unpl = jc_get(d, jc_root(d), "unplaced");
  assert_int_equal(jc_int64(d, jc_get(d, unpl, "no_ts"), &n), 0);
  assert_int_equal(n, 1);           /* {} */
  assert_int_equal(jc_int64(d, jc_get(d, unpl, "no_pid"), &n), 0);
  assert_int_equal(n, 1);
  jc_free(d);
  free(in);
  free(out);
  tt_remove_dir(dir);
}


/* A file truncated while it is read: the records before the cut are
 * read, then the reader ends (a cut document), without a crash or an
 * error; /dev/zero is refused at once. */
static void test_truncated_while_read(void **state)
{
  char *dir = tt_make_dir(), *in = tt_in_dir(dir, "t.json");
  tu_text t = { 0 };
  struct twt_read_options ro = { 0, TWT_READ_GENERAL };
  twt_reader *r;
  twt_read_item item;
  char err[512];
  uint64_t n = 0;
  int rc;
  (void)state;

  tu_text_puts(&t, "{\"traceEvents\":[");
  for (int i = 0; i < 20000; i++) {
    char rec[128];
    snprintf(rec, sizeof rec, "%s{\"ph\":\"i\",\"name\":\"e%d\",\"ts\":%d,"
             "\"pid\":1,\"tid\":1,\"s\":\"t\"}", i ? ",\n  " : "", i, i);
    tu_text_puts(&t, rec);
  }
  tu_text_puts(&t, "]}");
  tt_write_bytes(in, t.p, t.len);
  assert_int_equal(twt_reader_open(&r, in, &ro, err, sizeof err), 0);
  while ((rc = twt_reader_next(r, &item)) > 0)
    if (++n == 100)
      assert_int_equal(truncate(in, (off_t)(t.len / 2)), 0);
  /* Said, not taken for a trace cut by its writer. */
  assert_int_equal(rc, TWT_READ_ESHRANK);
  assert_true(n >= 100 && n < 20000);
  assert_non_null(strstr(twt_reader_error(r), "shrank"));
  twt_reader_close(r);
  /* Emptied while stats reads it, in the library's layout too: stats
   * says so and exits 1. */
  for (int layout = 0; layout < 2; layout++) {
    tu_text u = { 0 };
    char *errf = tt_in_dir(dir, "err"), *msg;
    char *argv[] = { "stats", in, NULL };
    size_t cut = 0;
    if (layout)
      tu_text_puts(&u, "[\n{\"ph\":\"M\",\"name\":\"process_name\"},\n"
                   TT_CLOCK_LINE);
    else
      tu_text_puts(&u, "[");
    for (int i = 0; i < 20000; i++) {
      char rec[128];
      snprintf(rec, sizeof rec, "%s{\"ph\":\"i\",\"name\":\"e%d\","
               "\"ts\":%d,\"pid\":1,\"tid\":1,\"s\":\"t\"}",
               i ? ",\n" : "", i, i);
      tu_text_puts(&u, rec);
    }
    tu_text_puts(&u, "\n]");
    tt_write_bytes(in, u.p, u.len);
    /* The reader reads the size it had at open: emptied before it
     * reads past its first chunk. */
    {
      twt_reader *r2;
      twt_read_item it;
      int rc2;
      assert_int_equal(twt_reader_open(&r2, in, NULL, err, sizeof err), 0);
      assert_int_equal(twt_reader_next(r2, &it), 1);
      assert_int_equal(truncate(in, 0), 0);
      while ((rc2 = twt_reader_next(r2, &it)) > 0)
        cut++;
      assert_int_equal(rc2, TWT_READ_ESHRANK);
      twt_reader_close(r2);
    }
    tt_write_bytes(in, "", 0);
    assert_int_equal(tt_run_argv(twt_tool_stats_main, argv, NULL, errf), 1);
    msg = tu_read_file(errf, NULL);
    assert_non_null(strstr(msg, in));
    free(msg);
    free(errf);
    free(u.p);
  }
  free(t.p);
  {
    char *argv[] = { "stats", "/dev/zero", NULL };
    assert_int_equal(tt_run_argv(twt_tool_stats_main, argv, NULL, NULL), 1);
  }
  free(in);
  tt_remove_dir(dir);
}

/* ================================== shapes taken for the wrong layout */

/* The events of the output at path: how many. */
static size_t count_events(const char *path)
{
  jc_doc *d = tt_load_file(path);
  size_t n = jc_len(d, jc_trace_events(d));

  jc_free(d);
  return n;
}

/* Every command reads the file at in whole: cat gives every record (the
 * members wanted, sh as for assert_cat), stats counts them, slice
 * without a window and merge of it alone keep them all. */
static void assert_read_whole(const char *dir, const char *in,
                              enum shape sh)
{
  char *out = tt_in_dir(dir, "whole.json");

  assert_cat(dir, in, sh);
  assert_stats_counts(dir, in);
  {
    char *argv[] = { "slice", "-q", "-o", out, (char *)in, NULL };
    assert_int_equal(tt_run_argv(twt_tool_slice_main, argv, NULL, NULL), 0);
    assert_int_equal(count_events(out), NRECS);
  }
  {
    char *argv[] = { "merge", "-q", "-o", out, (char *)in, NULL };
    assert_int_equal(tt_run_argv(twt_tool_merge_main, argv, NULL, NULL), 0);
    assert_int_equal(count_events(out), NRECS);
  }
  free(out);
}

/* An array of events indented as Python's json.dump(events, f,
 * indent=2) and JavaScript's JSON.stringify(events, null, 2) write it
 * ("[", a newline, two spaces, "{", a newline, four spaces, "\"ph\": "
 * ...; no newline at the end), and with a tab (indent="\t"): every
 * command reads it whole.  The crash-layout reader takes only what
 * proves to be the library's (its head, the process_name record, the
 * clock record); "[", a newline and spaces is not that. */
static void test_indented_arrays(void **state)
{
  static const char *const indents[] = { "  ", "\t", "    " };
  char *dir = tt_make_dir(), *in = tt_in_dir(dir, "indented.json");
  tu_text one = make_doc(ONE_LINE);
  (void)state;

  for (size_t k = 0; k < sizeof indents / sizeof *indents; k++) {
    tu_text t = { 0 };
    const char *s = one.p;
    int depth = 0, str = 0, esc = 0;
    /* json.dump(indent=...) of the one-line array. */
    for (; *s; s++) {
      char c = *s;
      if (str) {
        tu_text_put(&t, s, 1);
        if (esc)
          esc = 0;
        else if (c == '\\')
          esc = 1;
        else if (c == '"')
          str = 0;
        continue;
      }
      if (c == '"')
        str = 1;
      if ((c == '}' || c == ']') && s[-1] != '{' && s[-1] != '[') {
        depth--;
        tu_text_puts(&t, "\n");
        for (int d = 0; d < depth; d++)
          tu_text_puts(&t, indents[k]);
      }
      tu_text_put(&t, s, 1);
      if (c == ':')
        tu_text_puts(&t, " ");
      if (((c == '{' || c == '[') && s[1] != '}' && s[1] != ']') ||
          c == ',') {
        if (c != ',')
          depth++;
        tu_text_puts(&t, "\n");
        for (int d = 0; d < depth; d++)
          tu_text_puts(&t, indents[k]);
      }
    }
    assert_memory_equal(t.p, k == 1 ? "[\n\t{\n\t\t\"ph\": \"M\"," :
                        k == 0 ? "[\n  {\n    \"ph\": \"M\"," :
                        "[\n    {\n        \"ph\": \"M\",", k == 1 ? 17 :
                        k == 0 ? 20 : 26);
    tt_write_bytes(in, t.p, t.len);
    assert_read_whole(dir, in, ONE_LINE);
    free(t.p);
  }
  free(one.p);
  free(in);
  tt_remove_dir(dir);
}

/* The object form with one record a line -- as the library writes its
 * own, but without its process_name and clock records -- and members
 * after the events, as other programs write them: a member after
 * "]," on lines of its own (traceAnnotations, an array of objects:
 * none of them an event), on the line of the "]", and after a head of
 * members on one line ({"schemaVersion":1,"baseTimeNanoseconds":...,
 * "traceEvents":[).  Every record is an event, only those; every member
 * is kept, with no warning. */
static void test_object_not_ours(void **state)
{
  static const char *const heads[] = {
    "{\"traceEvents\":[\n",
    "{\"traceEvents\":[\n",
    "{\"schemaVersion\":1,\"baseTimeNanoseconds\":1700000000000000000,"
      "\"traceEvents\":[\n",
  };
  static const char *const tails[] = {
    "\n],\n\"traceAnnotations\":[\n{\"name\":\"a1\",\"ts\":1},\n"
      "{\"name\":\"a2\",\"ts\":2},\n{\"name\":\"a3\",\"ts\":3}\n]}\n",
    "\n],\"displayTimeUnit\":\"ns\"}\n",
    "\n],\"displayTimeUnit\":\"ns\",\"traceName\":\"r0\"}\n",
  };
  char *dir = tt_make_dir(), *in = tt_in_dir(dir, "obj.json");
  char *out = tt_in_dir(dir, "out.json"), *err = tt_in_dir(dir, "err");
  (void)state;

  for (size_t k = 0; k < 3; k++) {
    tu_text t = { 0 };
    char *argv[] = { "cat", "-q", "-o", out, in, NULL };
    size_t elen;
    char *msg;
    jc_doc *d;

    tu_text_puts(&t, heads[k]);
    for (size_t i = 0; i < NRECS; i++) {
      tu_text_puts(&t, RECS[i]);
      if (i + 1 < NRECS)
        tu_text_puts(&t, ",\n");
    }
    tu_text_puts(&t, tails[k]);
    tt_write_bytes(in, t.p, t.len);
    free(t.p);

    assert_int_equal(tt_run_argv(twt_tool_cat_main, argv, NULL, err), 0);
    msg = tu_read_file(err, &elen);
    if (elen)
      fail_msg("shape %zu: cat -q said: %s", k, msg);
    free(msg);
    d = tt_load_file(out);
    assert_records(d, 0, NRECS);
    if (k == 0) {
      assert_member(d, "traceAnnotations", "[{\"name\":\"a1\",\"ts\":1},"
                    "{\"name\":\"a2\",\"ts\":2},{\"name\":\"a3\",\"ts\":3}]");
    } else {
      assert_member(d, "displayTimeUnit", "\"ns\"");
    }
    if (k == 2) {
      assert_member(d, "schemaVersion", "1");
      assert_member(d, "baseTimeNanoseconds", "1700000000000000000");
      assert_member(d, "traceName", "\"r0\"");
    }
    jc_free(d);
    assert_stats_counts(dir, in);
  }
  free(in);
  free(out);
  free(err);
  tt_remove_dir(dir);
}

/* ====================================== members after the events */

/* A PyTorch profiler trace as Kineto writes it in many versions
 * (libkineto/src/output_json.cpp): pretty-printed, schemaVersion and
 * deviceProperties before traceEvents, traceName, displayTimeUnit and
 * baseTimeNanoseconds after it (where = 0); the same with
 * baseTimeNanoseconds before it (1); the same members on one line before
 * it, one event a line (2).  ts are wall-clock us less the base. */
static char *kineto_doc(int where, int64_t base, int64_t real,
                        const char *name)
{
  int64_t rel = real - base;
  char *doc;

  if (where == 2)
    assert_true(asprintf(&doc,
      "{\"schemaVersion\":1,\"baseTimeNanoseconds\":%" PRId64 ","
      "\"traceEvents\":[\n"
      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"pid\":0,"
      "\"tid\":7,\"ts\":%" PRId64 ".%03d,\"dur\":1.000}\n"
      "],\"traceName\":\"r0\",\"displayTimeUnit\":\"ms\"}\n",
      base, name, rel / 1000, (int)(rel % 1000)) > 0);
  else
    assert_true(asprintf(&doc,
      "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [],\n"
      "%s"
      "  \"traceEvents\": [\n"
      "  {\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\",\n"
      "    \"pid\": 0, \"tid\": 7,\n    \"ts\": %" PRId64 ".%03d,"
      " \"dur\": 1.000\n  }\n  ],\n  \"traceName\": \"r0\",\n"
      "  \"displayTimeUnit\": \"ms\"%s\n}\n",
      where ? "  \"baseTimeNanoseconds\": BASE,\n" : "", name,
      rel / 1000, (int)(rel % 1000),
      where ? "" : ",\n  \"baseTimeNanoseconds\": BASE") > 0);
  /* BASE: the number (asprintf cannot place it twice in one format). */
  {
    char *at = strstr(doc, "BASE"), *full;
    if (at) {
      assert_true(asprintf(&full, "%.*s%" PRId64 "%s", (int)(at - doc), doc,
                           base, at + 4) > 0);
      free(doc);
      doc = full;
    }
  }
  return doc;
}

/* merge of two PyTorch traces and a tracewriter one: the PyTorch ones on
 * their baseTimeNanoseconds wherever it stands (not on "us since the
 * epoch", 55 years away), and the output the same byte for byte whether
 * the member comes before or after the events. */
static void test_members_after_events(void **state)
{
  char *dir = tt_make_dir(), *eng = tt_in_dir(dir, "engine.json");
  char *k1 = tt_in_dir(dir, "rank0.pt.trace.json");
  char *k2 = tt_in_dir(dir, "rank1.pt.trace.json");
  char *out = tt_in_dir(dir, "out.json"), *err = tt_in_dir(dir, "err");
  char *first = NULL, *cat_first = NULL;
  size_t first_len = 0, cat_first_len = 0;
  const int64_t quarter = (int64_t)91 * 24 * 3600 * 1000000000;
  struct timespec rt;
  int64_t mono, real, base;
  tw_options o;
  tw_writer *w;
  int rc = 0;
  (void)state;

  tw_options_init(&o);
  w = tw_open(eng, &o, &rc);
  assert_non_null(w);
  mono = (int64_t)tw_now_ns();
  assert_int_equal(clock_gettime(CLOCK_REALTIME, &rt), 0);
  real = (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec;
  base = real - real % quarter;
  assert_int_equal(tw_complete(w, "engine", "engine.step", (uint64_t)mono,
                               1000, NULL, 0), 0);
  assert_int_equal(tw_close(w), 0);

  for (int where = 0; where < 3; where++) {
    char *doc = kineto_doc(where, base, real, "gemm");
    char *argv[] = { "merge", "-q", "--explain", "-o", out, k1, k2, eng,
                     NULL };
    char *msg, *got;
    size_t len;
    tt_write_bytes(k1, doc, strlen(doc));
    free(doc);
    doc = kineto_doc(where, base, real, "gemm2");
    tt_write_bytes(k2, doc, strlen(doc));
    free(doc);
    assert_int_equal(tt_run_argv(twt_tool_merge_main, argv, NULL, err), 0);
    msg = tu_read_file(err, NULL);
    if (!strstr(msg, "baseTimeNanoseconds 1") || strstr(msg, "epoch"))
      fail_msg("where %d: %s", where, msg);
    free(msg);
    {
      int64_t a = ts_of(out, "engine.step"), b = ts_of(out, "gemm"),
              c = ts_of(out, "gemm2");
      if (llabs(a - b) > 1000000 || b != c)
        fail_msg("where %d: engine.step %" PRId64 ", gemm %" PRId64
                 ", gemm2 %" PRId64, where, a, b, c);
    }
    /* cat too: the members in the order of their keys, wherever they
     * stood. */
    {
      char *cat_out = tt_in_dir(dir, "cat.json");
      char *cat_argv[] = { "cat", "-q", "-o", cat_out, k1, NULL };
      char *cat = NULL;
      assert_int_equal(tt_run_argv(twt_tool_cat_main, cat_argv, NULL, err),
                       0);
      cat = tu_read_file(cat_out, &len);
      free(cat_out);
      if (where == 0) {
        free(cat_first);
        cat_first = cat;
        cat_first_len = len;
        cat = NULL;
      } else if (where == 1 &&
                 (len != cat_first_len || memcmp(cat, cat_first, len))) {
        fail_msg("cat: %.*s\nand %.*s", (int)len, cat, (int)cat_first_len,
                 cat_first);
      }
      free(cat);
    }
    got = tu_read_file(out, &len);
    if (where < 2) {
      if (!first) {
        first = got;
        first_len = len;
        got = NULL;
      } else if (len != first_len || memcmp(got, first, len) != 0) {
        fail_msg("the member after the events gives another output");
      }
    }
    free(got);
  }
  free(first);
  free(cat_first);
  free(eng);
  free(k1);
  free(k2);
  free(out);
  free(err);
  tt_remove_dir(dir);
}

/* ====================================================== slice's ids */

/* slice with no window drops nothing: more distinct async ids and flow
 * ids than its tables hold (each span and flow ends before the next
 * begins: one open at a time), an async span whose end is read before
 * its begin and its step after both (Chrome writes "F", "S", "T" when
 * its threads flush apart), a flow step read after its "s" and "f", a
 * flow that fans out (one "s", several "f": the PyTorch profiler's
 * launch of several kernels, CUDA graphs), a flow id used again ("s",
 * "s", "f", "f"). */
static void test_slice_ids(void **state)
{
  static const char *const odd[] = {
    "{\"ph\":\"F\",\"name\":\"a\",\"id\":\"0x1\",\"pid\":1,\"tid\":2,"
      "\"ts\":30}",
    "{\"ph\":\"S\",\"name\":\"a\",\"id\":\"0x1\",\"pid\":1,\"tid\":1,"
      "\"ts\":10}",
    "{\"ph\":\"T\",\"name\":\"a\",\"id\":\"0x1\",\"pid\":1,\"tid\":1,"
      "\"ts\":20,\"args\":{\"step\":\"s1\"}}",
    "{\"ph\":\"s\",\"name\":\"fl\",\"id\":5,\"pid\":1,\"tid\":1,\"ts\":10}",
    "{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"fl\",\"id\":5,\"pid\":1,"
      "\"tid\":2,\"ts\":20}",
    "{\"ph\":\"t\",\"name\":\"fl\",\"id\":5,\"pid\":1,\"tid\":3,\"ts\":15}",
    "{\"ph\":\"s\",\"name\":\"launch\",\"id\":6,\"pid\":1,\"tid\":1,"
      "\"ts\":40}",
    "{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"launch\",\"id\":6,\"pid\":1,"
      "\"tid\":7,\"ts\":41}",
    "{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"launch\",\"id\":6,\"pid\":1,"
      "\"tid\":8,\"ts\":42}",
    "{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"launch\",\"id\":6,\"pid\":1,"
      "\"tid\":9,\"ts\":43}",
    "{\"ph\":\"s\",\"name\":\"re\",\"id\":7,\"pid\":1,\"tid\":1,\"ts\":50}",
    "{\"ph\":\"s\",\"name\":\"re\",\"id\":7,\"pid\":1,\"tid\":1,\"ts\":51}",
    "{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"re\",\"id\":7,\"pid\":1,"
      "\"tid\":2,\"ts\":52}",
    "{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"re\",\"id\":7,\"pid\":1,"
      "\"tid\":2,\"ts\":53}",
  };
  const size_t nodd = sizeof odd / sizeof *odd, nids = 70000;
  char *dir = tt_make_fast_dir(), *in = tt_in_dir(dir, "ids.json");
  char *out = tt_in_dir(dir, "out.json"), *err = tt_in_dir(dir, "err");
  tu_text t = { 0 };
  char rec[512], *msg;
  (void)state;

  tu_text_puts(&t, "[");
  for (size_t i = 0; i < nodd; i++) {
    tu_text_puts(&t, odd[i]);
    tu_text_puts(&t, ",\n");
  }
  for (size_t i = 0; i < nids; i++) {
    snprintf(rec, sizeof rec, "{\"ph\":\"b\",\"cat\":\"req\",\"name\":\"r\","
             "\"id\":\"0x%zx\",\"pid\":1,\"tid\":1,\"ts\":%zu},\n"
             "{\"ph\":\"e\",\"cat\":\"req\",\"name\":\"r\",\"id\":\"0x%zx\","
             "\"pid\":1,\"tid\":1,\"ts\":%zu},\n"
             "{\"ph\":\"s\",\"name\":\"q\",\"id\":%zu,\"pid\":1,\"tid\":1,"
             "\"ts\":%zu},\n"
             "{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"q\",\"id\":%zu,\"pid\":1,"
             "\"tid\":2,\"ts\":%zu}%s", i, 100 + 2 * i, i, 101 + 2 * i,
             1000 + i, 100 + 2 * i, 1000 + i, 101 + 2 * i,
             i + 1 < nids ? ",\n" : "]\n");
    tu_text_puts(&t, rec);
  }
  tt_write_bytes(in, t.p, t.len);
  free(t.p);
  {
    char *argv[] = { "slice", "-o", out, in, NULL };
    assert_int_equal(tt_run_argv(twt_tool_slice_main, argv, NULL, err), 0);
  }
  assert_int_equal(count_events(out), nodd + 4 * nids);
  msg = tu_read_file(err, NULL);
  if (strstr(msg, "dropped"))
    fail_msg("slice with no window said: %s", msg);
  free(msg);
  /* A window of the odd ones' time (10 to 60 us, the clock's start: the
   * first ts, 10 us): every one of them is in it, whole. */
  {
    char *argv[] = { "slice", "-q", "--to", "@60us", "-o", out, in, NULL };
    assert_int_equal(tt_run_argv(twt_tool_slice_main, argv, NULL, err), 0);
    assert_int_equal(count_events(out), nodd);
  }
  free(in);
  free(out);
  free(err);
  tt_remove_dir(dir);
}

/* split of a PyTorch-shaped trace (members before traceEvents and after
 * it: baseTimeNanoseconds, traceName, displayTimeUnit) gives every part
 * every member, the first parts too, so that each can be aligned; and of
 * a trace whose async spans have their end written before their
 * beginning (the library's threads each commit their own buffer), each
 * end lands in its beginning's part. */
static void test_split_members_async(void **state)
{
  char *dir = tt_make_dir(), *in = tt_in_dir(dir, "k.json");
  char *out = tt_in_dir(dir, "part.json");
  (void)state;

  /* Without async spans first (no part is held open to the end by one),
   * then with them. */
  for (int with_async = 0; with_async < 2; with_async++) {
    tu_text t = { 0 };
    size_t nparts = 0;

    tu_text_puts(&t, "{\n  \"schemaVersion\": 1,\n  \"traceEvents\": [\n");
    for (int i = 0; i < 600; i++) {
      char rec[512];
      /* Request i: its end first, then its beginning, 3 records apart. */
      if (i % 3 == 2 && with_async)
        snprintf(rec, sizeof rec, "  {\n    \"ph\": \"e\", \"cat\": \"req\", "
                 "\"name\": \"r\", \"id\": %d,\n    \"pid\": 1, \"tid\": 2, "
                 "\"ts\": %d\n  },\n", i, 10 * i + 5);
      else
        snprintf(rec, sizeof rec, "  {\n    \"ph\": \"X\", \"name\": \"k%d\", "
                 "\"pid\": 1, \"tid\": 3,\n    \"ts\": %d, \"dur\": 4\n  },\n",
                 i, 10 * i);
      tu_text_puts(&t, rec);
      if (i % 3 == 1 && i > 2 && with_async) {
        snprintf(rec, sizeof rec, "  {\n    \"ph\": \"b\", \"cat\": \"req\", "
                 "\"name\": \"r\", \"id\": %d,\n    \"pid\": 1, \"tid\": 1, "
                 "\"ts\": %d\n  },\n", i - 3 + 1, 10 * i);
        tu_text_puts(&t, rec);
      }
    }
    tu_text_puts(&t, "  {\"ph\": \"i\", \"name\": \"last\", \"pid\": 1, "
                 "\"tid\": 1, \"ts\": 7000, \"s\": \"t\"}\n  ],\n"
                 "  \"traceName\": \"rank0\",\n"
                 "  \"displayTimeUnit\": \"ms\",\n"
                 "  \"baseTimeNanoseconds\": 1700000000000000000\n}\n");
    tt_write_bytes(in, t.p, t.len);
    free(t.p);
    {
      char *argv[] = { "split", "-q", "-s", "4k", "-o", out, in, NULL };
      assert_int_equal(tt_run_argv(twt_tool_split_main, argv, NULL, NULL), 0);
    }
    {
      int part_of_b[600], part_of_e[600];
      memset(part_of_b, -1, sizeof part_of_b);
      memset(part_of_e, -1, sizeof part_of_e);
      for (int k = 1;; k++) {
        char name[PATH_MAX];
        jc_doc *d;
        jc_val v;
        snprintf(name, sizeof name, "%s/part.%06d.json", dir, k);
        if (access(name, F_OK) != 0)
          break;
        nparts++;
        d = tt_load_file(name);
        assert_member(d, "schemaVersion", "1");
        assert_member(d, "traceName", "\"rank0\"");
        assert_member(d, "displayTimeUnit", "\"ms\"");
        assert_member(d, "baseTimeNanoseconds", "1700000000000000000");
        for (v = jc_first(d, jc_trace_events(d)); v >= 0; v = jc_next(d, v)) {
          int64_t id;
          if (!is_ph_(d, v, "b") && !is_ph_(d, v, "e"))
            continue;
          assert_int_equal(jc_int64(d, jc_get(d, v, "id"), &id), 0);
          assert_true(id >= 0 && id < 600);
          (is_ph_(d, v, "b") ? part_of_b : part_of_e)[id] = k;
        }
        jc_free(d);
      }
      assert_true(nparts >= 4);
      for (int i = 2; with_async && i < 597; i += 3) {
        if (part_of_b[i] < 0 || part_of_b[i] != part_of_e[i])
          fail_msg("request %d: begins in part %d, ends in part %d", i,
                   part_of_b[i], part_of_e[i]);
      }
      for (size_t k = 1; k <= nparts; k++) {
        char name[PATH_MAX];
        snprintf(name, sizeof name, "%s/part.%06zu.json", dir, k);
        assert_int_equal(unlink(name), 0);
      }
    }
  }
  free(in);
  free(out);
  tt_remove_dir(dir);
}

/* merge keeps what the inputs' documents say: the output is an object
 * when an input is (a bare array flattened it), with the members that
 * still hold -- the reference's baseTimeNanoseconds (the output is on its
 * time base), distributedInfo when one rank is merged, each rank's
 * processes labelled "rank N" when several are, schemaVersion when all
 * agree; the first input keeps its pids even when they first appear
 * beyond its read-ahead window; inputs placed more than an hour apart
 * are named in a warning, and --explain says where each landed. */
static void test_merge_documents(void **state)
{
  char *dir = tt_make_dir(), *a = tt_in_dir(dir, "rank0.json");
  char *b = tt_in_dir(dir, "b.json"), *c = tt_in_dir(dir, "rank1.json");
  char *eng = tt_in_dir(dir, "engine.json");
  char *out = tt_in_dir(dir, "out.json"), *err = tt_in_dir(dir, "err");
  const int64_t base = INT64_C(1700000000000000000);
  char *msg;
  jc_doc *d;
  jc_val v;
  (void)state;

  for (int rank = 0; rank < 2; rank++) {
    tu_text t = { 0 };
    char rec[256];
    tu_text_puts(&t, "{\n  \"schemaVersion\": 1,\n  \"distributedInfo\": "
                 "{\"backend\": \"nccl\", \"rank\": ");
    tu_text_puts(&t, rank ? "1" : "0");
    tu_text_puts(&t, ", \"world_size\": 2},\n  \"traceEvents\": [\n");
    /* pid 1 for 2000 events (more than --window 4k), then pid 100. */
    for (int i = 0; i < 2100; i++) {
      snprintf(rec, sizeof rec, "  {\"ph\": \"X\", \"name\": \"op%d\", "
               "\"pid\": %d, \"tid\": 1, \"ts\": %d, \"dur\": 1}%s\n",
               i, i < 2000 ? 1 + rank : 100, 1000 + i, i < 2099 ? "," : "");
      tu_text_puts(&t, rec);
    }
    snprintf(rec, sizeof rec, "  ],\n  \"traceName\": \"rank%d\",\n"
             "  \"baseTimeNanoseconds\": %" PRId64 "\n}\n", rank, base);
    tu_text_puts(&t, rec);
    tt_write_bytes(rank ? c : a, t.p, t.len);
    free(t.p);
  }
  /* Another program's trace, pid 100 from its start. */
  {
    static const char doc[] = "[{\"ph\":\"X\",\"name\":\"other\",\"pid\":100,"
      "\"tid\":1,\"ts\":1500,\"dur\":1}]";
    tt_write_bytes(b, doc, sizeof doc - 1);
  }
  {
    char *argv[] = { "merge", "-q", "--window", "4k", "-o", out, a, b, NULL };
    assert_int_equal(tt_run_argv(twt_tool_merge_main, argv, NULL, err), 0);
  }
  d = tt_load_file(out);
  assert_int_equal(jc_type(d, jc_root(d)), JC_OBJECT);
  assert_member(d, "schemaVersion", "1");
  assert_member(d, "baseTimeNanoseconds", "1700000000000000000");
  assert_member(d, "distributedInfo", "{\"backend\":\"nccl\",\"rank\":0,"
                "\"world_size\":2}");
  for (v = jc_first(d, jc_trace_events(d)); v >= 0; v = jc_next(d, v)) {
    int64_t pid;
    if (is_ph_(d, v, "c") || is_ph_(d, v, "M"))
      continue;
    assert_int_equal(jc_int64(d, jc_get(d, v, "pid"), &pid), 0);
    if (jc_streq(d, jc_get(d, v, "name"), "other"))
      assert_int_equal(pid, 4194304);   /* b's pid 100 written anew */
    else if (jc_streq(d, jc_get(d, v, "name"), "op2050"))
      assert_int_equal(pid, 100);       /* the first input keeps its own */
  }
  jc_free(d);

  /* Two ranks: no distributedInfo, each one's processes labelled. */
  {
    char *argv[] = { "merge", "-q", "-o", out, a, c, NULL };
    int labels = 0;
    assert_int_equal(tt_run_argv(twt_tool_merge_main, argv, NULL, err), 0);
    d = tt_load_file(out);
    assert_int_equal(jc_type(d, jc_root(d)), JC_OBJECT);
    assert_true(jc_get(d, jc_root(d), "distributedInfo") < 0);
    assert_member(d, "baseTimeNanoseconds", "1700000000000000000");
    for (v = jc_first(d, jc_trace_events(d)); v >= 0; v = jc_next(d, v))
      if (jc_streq(d, jc_get(d, v, "name"), "process_labels")) {
        jc_val l = jc_get(d, jc_get(d, v, "args"), "labels");
        assert_true(jc_streq(d, l, "rank 0") || jc_streq(d, l, "rank 1"));
        labels++;
      }
    assert_int_equal(labels, 4);        /* pids 1 and 100, 2 and 100 */
    jc_free(d);
  }

  /* A trace of now and one of 2023: named, with their gap; --explain
   * says where each landed. */
  {
    tw_options o;
    tw_writer *w;
    int rc = 0;
    char *argv[] = { "merge", "--explain", "-o", out, a, eng, NULL };
    tw_options_init(&o);
    w = tw_open(eng, &o, &rc);
    assert_non_null(w);
    assert_int_equal(tw_complete(w, "engine", "step", tw_now_ns(), 1000,
                                 NULL, 0), 0);
    assert_int_equal(tw_close(w), 0);
    assert_int_equal(tt_run_argv(twt_tool_merge_main, argv, NULL, err), 0);
    msg = tu_read_file(err, NULL);
    if (!strstr(msg, "rank0.json and ") || !strstr(msg, "engine.json are ") ||
        !strstr(msg, "years apart") || !strstr(msg, "2023-11-14 22:13:20"))
      fail_msg("merge said: %s", msg);
    free(msg);
  }
  /* Inputs close together: no such warning. */
  {
    char *argv[] = { "merge", "-o", out, a, c, NULL };
    assert_int_equal(tt_run_argv(twt_tool_merge_main, argv, NULL, err), 0);
    msg = tu_read_file(err, NULL);
    if (strstr(msg, "apart"))
      fail_msg("merge said: %s", msg);
    free(msg);
  }
  free(a);
  free(b);
  free(c);
  free(eng);
  free(out);
  free(err);
  tt_remove_dir(dir);
}

/* Smaller wrong answers: an array of arrays is named for what it is;
 * stats shows long names (CUDA kernels') whole, not cut alike; slice
 * --clip keeps a ts or dur written as a string a string, and drops a
 * complete event that ends exactly where the window begins. */
static void test_small_answers(void **state)
{
  char *dir = tt_make_dir(), *in = tt_in_dir(dir, "s.json");
  char *out = tt_in_dir(dir, "out.txt"), *err = tt_in_dir(dir, "err");
  char *msg;
  (void)state;

  tt_write_bytes(in, "[[1,2],[3]]", 11);
  {
    char *argv[] = { "stats", in, NULL };
    assert_int_equal(tt_run_argv(twt_tool_stats_main, argv, NULL, err), 1);
    msg = tu_read_file(err, NULL);
    if (!strstr(msg, "element 1 is an array, not an event object"))
      fail_msg("stats said: %s", msg);
    free(msg);
  }
  {
    tu_text t = { 0 }, name = { 0 };
    char *argv[] = { "stats", "-o", out, in, NULL };
    tu_text_puts(&name, "void at::native::elementwise_kernel<128, 2, "
                 "at::native::gpu_kernel_impl<at::native::FillFunctor<float>"
                 " >(at::TensorIteratorBase&, at::native::FillFunctor<float> "
                 "const&)::{lambda(int)#1}>(int, ");
    tu_text_puts(&t, "[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":5,"
                 "\"name\":\"");
    tu_text_put(&t, name.p, name.len);
    tu_text_puts(&t, "A)\"},\n{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":9,"
                 "\"dur\":3,\"name\":\"");
    tu_text_put(&t, name.p, name.len);
    tu_text_puts(&t, "B)\"}]");
    tt_write_bytes(in, t.p, t.len);
    assert_int_equal(tt_run_argv(twt_tool_stats_main, argv, NULL, NULL), 0);
    msg = tu_read_file(out, NULL);
    tu_text_puts(&name, "A)");
    assert_non_null(strstr(msg, name.p));
    name.len -= 2;
    tu_text_puts(&name, "B)");
    assert_non_null(strstr(msg, name.p));
    free(msg);
    free(t.p);
    free(name.p);
  }
  {
    static const char doc[] =
      "[{\"ph\":\"X\",\"name\":\"a\",\"ts\":\"4\",\"dur\":\"10\",\"pid\":1,"
      "\"tid\":1},\n{\"ph\":\"X\",\"name\":\"b\",\"ts\":1,\"dur\":2,"
      "\"pid\":1,\"tid\":1},\n{\"ph\":\"i\",\"name\":\"c\",\"ts\":100,"
      "\"pid\":1,\"tid\":1,\"s\":\"t\"}]";
    char *argv[] = { "slice", "-q", "--clip", "--from", "@3us", "--to",
                     "@8us", "-o", out, in, NULL };
    jc_doc *d;
    jc_val ev;
    tt_write_bytes(in, doc, sizeof doc - 1);
    assert_int_equal(tt_run_argv(twt_tool_slice_main, argv, NULL, NULL), 0);
    d = tt_load_file(out);
    ev = jc_trace_events(d);
    assert_int_equal(jc_len(d, ev), 1);       /* b ends at 3 us: gone */
    assert_true(jc_streq(d, jc_get(d, jc_index(d, ev, 0), "ts"), "4.000"));
    assert_true(jc_streq(d, jc_get(d, jc_index(d, ev, 0), "dur"), "4.000"));
    jc_free(d);
  }
  free(in);
  free(out);
  free(err);
  tt_remove_dir(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_every_shape),
    cmocka_unit_test(test_layout_spread),
    cmocka_unit_test(test_gzip_members),
    cmocka_unit_test(test_cut_anywhere),
    cmocka_unit_test(test_not_traces),
    cmocka_unit_test(test_hostile),
    cmocka_unit_test(test_depth_limit),
    cmocka_unit_test(test_checker_matches),
    cmocka_unit_test(test_exact_arithmetic),
    cmocka_unit_test(test_exact_merge),
    cmocka_unit_test(test_exact_slice),
    cmocka_unit_test(test_merge_kineto),
    cmocka_unit_test(test_merge_pids),
    cmocka_unit_test(test_ndjson),
    cmocka_unit_test(test_mixed_forms),
    cmocka_unit_test(test_member_keys),
    cmocka_unit_test(test_member_too_long),
    cmocka_unit_test(test_slice_clip),
    cmocka_unit_test(test_split),
    cmocka_unit_test(test_stats_places),
    cmocka_unit_test(test_truncated_while_read),
    cmocka_unit_test(test_indented_arrays),
    cmocka_unit_test(test_object_not_ours),
    cmocka_unit_test(test_members_after_events),
    cmocka_unit_test(test_slice_ids),
    cmocka_unit_test(test_split_members_async),
    cmocka_unit_test(test_merge_documents),
    cmocka_unit_test(test_small_answers),
  };

  tt_deadline("test_shapes");
  return cmocka_run_group_tests(tests, NULL, NULL);
}
