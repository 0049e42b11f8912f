/* fuzz_commands.c -- fuzz the trace commands (cat, slice, stats, merge,
 * split, repair) on any input file
 *
 * The input: byte 0 picks the command and its options, byte 1 the
 * longest record (-m) and whether the file is given gzip-compressed
 * (.json.gz, written here with zlib); the rest is the file's bytes.
 * Checked, for every input:
 *
 *  - the command returns 0 or 1 (never a usage error, never a crash:
 *    AddressSanitizer and UBSan watch);
 *  - when it returns 0, what it wrote is a trace the strict test
 *    checker (jc_parse) accepts, every element of its events an object;
 *    with --ndjson, every line one such object;
 *  - stats --json, when it returns 0, prints one JSON object;
 *  - cat gives the same status and bytes with the layout reader's
 *    one-pass path turned off (TWT_READ_LINES_ONLY).
 *
 * The files live in one private directory for the whole run, in
 * /dev/shm when there is one.
 */
#include "fuzz.h"

#include "command.h"
#include "repair.h"
#include "jsoncheck.h"

#include <dirent.h>
#include <fcntl.h>
#include <zlib.h>

static char dir[64];

/* Empty the directory: every file a command wrote. */
static void cleanup(void)
{
  DIR *d = opendir(dir);
  struct dirent *e;

  if (!d)
    FZ_FAIL("harness: %s: %s", dir, strerror(errno));
  while ((e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
        unlinkat(dirfd(d), e->d_name, 0) != 0)
      FZ_FAIL("harness: unlink %s: %s", e->d_name, strerror(errno));
  closedir(d);
}

static void at_exit(void)
{
  cleanup();
  (void)rmdir(dir);
}

static const char *in_dir(const char *name)
{
  static char path[8][128];        /* a ring: each name lives a while */
  static unsigned k;
  char *p = path[k++ % 8];
  snprintf(p, sizeof path[0], "%s/%s", dir, name);
  return p;
}

static void write_file(const char *path, const uint8_t *data, size_t n,
                       int gz)
{
  FILE *f;

  if (gz) {
    gzFile g = gzopen(path, "wb1");
    if (!g || (n && gzwrite(g, data, (unsigned)n) != (int)n) ||
        gzclose(g) != Z_OK)
      FZ_FAIL("harness: cannot write %s", path);
    return;
  }
  if (!(f = fopen(path, "wb")) || (n && fwrite(data, 1, n, f) != n) ||
      fclose(f) != 0)
    FZ_FAIL("harness: cannot write %s: %s", path, strerror(errno));
}

/* The whole file (malloc'ed; inflated when its name ends in .gz), or
 * NULL when there is none. */
static char *read_file(const char *path, size_t *len)
{
  size_t n = strlen(path);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  char *buf;

  if (fd >= 0 && n > 3 && strcmp(path + n - 3, ".gz") == 0) {
    gzFile g = gzdopen(fd, "rb");
    size_t cap = 1 << 16;
    int k;
    if (!g || !(buf = malloc(cap)))
      FZ_FAIL("harness: cannot read %s", path);
    *len = 0;
    while ((k = gzread(g, buf + *len, (unsigned)(cap - *len))) > 0)
      if ((*len += (size_t)k) == cap && !(buf = realloc(buf, cap *= 2)))
        FZ_FAIL("harness: out of memory");
    FZ_CHECK(k == 0 && gzclose(g) == Z_OK, "%s: not a whole gzip stream",
             path);
    return buf;
  }
  if (fd < 0) {
    FZ_CHECK(errno == ENOENT, "harness: %s: %s", path, strerror(errno));
    return NULL;
  }
  buf = fz_read_all(fd, len);
  close(fd);
  return buf;
}

/* path must hold a strict trace whose events are all objects, or, as
 * ndjson, one object a line. */
static void check_trace(const char *path, int ndjson)
{
  size_t len;
  char *text = read_file(path, &len), why[160];

  FZ_CHECK(text != NULL, "exit status 0 and no %s", path);
  if (ndjson) {
    for (size_t at = 0; at < len;) {
      const char *nl = memchr(text + at, '\n', len - at);
      size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
      jc_doc *d = jc_parse(text + at, n, why, sizeof why);
      if (!d)
        fz_dump("line", text + at, n);
      FZ_CHECK(d != NULL, "%s: a line is not JSON: %s", path, why);
      FZ_CHECK(jc_type(d, jc_root(d)) == JC_OBJECT, "%s: a line is not an "
               "object", path);
      jc_free(d);
      FZ_CHECK(nl != NULL, "%s: the last line has no newline", path);
      at += n + 1;
    }
  } else {
    jc_doc *d = jc_parse(text, len, why, sizeof why);
    jc_val events;
    if (!d)
      fz_dump("output", text, len);
    FZ_CHECK(d != NULL, "%s is not JSON: %s", path, why);
    events = jc_trace_events(d);
    FZ_CHECK(events >= 0, "%s has no events array", path);
    for (jc_val v = jc_first(d, events); v >= 0; v = jc_next(d, v))
      FZ_CHECK(jc_type(d, v) == JC_OBJECT, "%s: an event is not an object",
               path);
    jc_free(d);
  }
  free(text);
}

/* cat once more with the layout reader's one-pass path off
 * (TWT_READ_LINES_ONLY): the same status and the same bytes. */
static void same_without_fast_path(int argc, char **argv, int rc,
                                   const char *out)
{
  size_t len, len2;
  char *first = read_file(out, &len), *second;
  int rc2;

  (void)unlink(out);
  if (setenv("TWT_READ_LINES_ONLY", "1", 1) != 0)
    FZ_FAIL("harness: setenv: %s", strerror(errno));
  rc2 = twt_tool_cat_main(argc, argv);
  if (unsetenv("TWT_READ_LINES_ONLY") != 0)
    FZ_FAIL("harness: unsetenv: %s", strerror(errno));
  second = read_file(out, &len2);
  FZ_CHECK(rc2 == rc, "cat returned %d, %d without the one-pass path", rc,
           rc2);
  FZ_CHECK(!first == !second && (!first || (len == len2 &&
                                            memcmp(first, second, len) == 0)),
           "cat wrote other bytes without the one-pass path");
  free(first);
  free(second);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static const char *const max_line[4] = { "4k", "16k", "1m", "64m" };
  char *argv[16];
  int argc = 0, rc, gz, ndjson = 0;
  const char *in, *out;
  unsigned cmd;

  if (size < 2 || size > (1u << 20))
    return 0;
  if (!dir[0]) {
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(dir, sizeof dir, "%s/tw-fuzz-XXXXXX", base);
    if (!mkdtemp(dir))
      FZ_FAIL("harness: mkdtemp: %s", strerror(errno));
    atexit(at_exit);
  }
  cleanup();
  out = in_dir("out.json");
  cmd = data[0] % 9;
  gz = (data[1] >> 2) & 1;
  in = in_dir(gz ? "in.json.gz" : "in.json");
  write_file(in, data + 2, size - 2, gz);

  switch (cmd) {
  case 0: case 1:
    argv[argc++] = "cat";
    if (cmd == 1)
      argv[argc++] = "--ndjson", ndjson = 1;
    break;
  case 2: case 3:
    argv[argc++] = "slice";
    argv[argc++] = "--from";
    argv[argc++] = "1us";
    argv[argc++] = "--to";
    argv[argc++] = "3ms";
    if (cmd == 3)
      argv[argc++] = "--clip";
    break;
  case 4: case 5:
    argv[argc++] = "stats";
    if (cmd == 5)
      argv[argc++] = "--json";
    out = in_dir("report");
    break;
  case 6:
    argv[argc++] = "merge";          /* the file with a copy of itself */
    argv[argc++] = (char *)in_dir(gz ? "copy.json.gz" : "copy.json");
    write_file(argv[argc - 1], data + 2, size - 2, gz);
    break;
  case 8:
    argv[argc++] = "repair";         /* -o: the input stays */
    out = in_dir(gz ? "out.json.gz" : "out.json");
    break;
  default:
    argv[argc++] = "split";
    argv[argc++] = "--size";
    argv[argc++] = "4k";
    argv[argc++] = "--every";
    argv[argc++] = "1ms";
    break;
  }
  argv[argc++] = "-q";
  if (cmd != 8)
    argv[argc++] = "--no-parts";
  argv[argc++] = "-m";
  argv[argc++] = (char *)max_line[data[1] & 3];
  argv[argc++] = "-o";
  argv[argc++] = (char *)out;
  argv[argc++] = (char *)in;
  argv[argc] = NULL;

  switch (cmd) {
  case 0: case 1: rc = twt_tool_cat_main(argc, argv); break;
  case 2: case 3: rc = twt_tool_slice_main(argc, argv); break;
  case 4: case 5: rc = twt_tool_stats_main(argc, argv); break;
  case 6: rc = twt_tool_merge_main(argc, argv); break;
  case 8: rc = twt_tool_repair_main(argc, argv); break;
  default: rc = twt_tool_split_main(argc, argv); break;
  }
  FZ_CHECK(rc == 0 || rc == 1, "%s returned %d", argv[0], rc);
  if (cmd == 0)
    same_without_fast_path(argc, argv, rc, out);
  if (rc != 0)
    return 0;
  if (cmd == 4)
    return 0;                        /* tables */
  if (cmd == 5) {
    size_t len;
    char *text = read_file(out, &len), why[160];
    jc_doc *d = text ? jc_parse(text, len, why, sizeof why) : NULL;
    FZ_CHECK(d != NULL && jc_type(d, jc_root(d)) == JC_OBJECT,
             "stats --json printed no JSON object");
    jc_free(d);
    free(text);
  } else if (cmd == 7) {
    /* The parts: out.000001.json, out.000002.json ... each a trace. */
    int k = 1;
    char name[32];
    for (;; k++) {
      snprintf(name, sizeof name, "out.%06d.json", k);
      if (access(in_dir(name), F_OK) != 0)
        break;
      check_trace(in_dir(name), 0);
    }
    FZ_CHECK(k > 1, "split wrote no part");
  } else {
    check_trace(out, ndjson);
  }
  return 0;
}
