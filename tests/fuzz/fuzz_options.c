/* fuzz_options.c -- fuzz tw_options_parse
 *
 * The input, cut at its first NUL, is an options string.  Checked:
 *
 *  - tw_options_parse returns 0 or TW_EOPTION, nothing else;
 *  - on TW_EOPTION the options are unchanged (memcmp with a copy) and the
 *    message is non-empty and NUL-terminated within errsize, for every
 *    errsize (a buffer of exactly errsize bytes, so AddressSanitizer sees
 *    any write past it; errsize 1 gives "", NULL is allowed);
 *  - the result does not depend on the message buffer, and parsing is
 *    idempotent (every key sets an absolute value, so parsing the same
 *    string again over the result changes nothing);
 *  - on 0 the options are within the documented ranges and tw_open_fd
 *    accepts them (never TW_EOPTION or TW_EVERSION): the writer opens on a
 *    memfd (a regular file, so the mmap sink works too), closes with 0,
 *    and the file is a strictly valid trace (gzip: a gzip file).
 *
 * Sizes are only shrunk before the open (a 1 GiB buffer is valid, but
 * eight of them are not for a fuzzer), after their ranges were checked.
 * Options are compared with memcmp, padding included: every copy here is
 * a memcpy and the parse is deterministic, so equal options are equal
 * bytes, and fields added to tw_options later are compared too.
 */
#include "fuzz.h"

#include "jsoncheck.h"
#include "tracewriter.h"

/* Parse str over a copy of *start with an err buffer of errsize bytes
 * (none if errsize is 0); check the error contract; return the code and
 * the result in *out. */
static int parse(const tw_options *start, const char *str, size_t errsize,
                 tw_options *out)
{
  char *err = errsize ? malloc(errsize) : NULL;
  int rc;

  if (errsize && !err)
    FZ_FAIL("harness: out of memory");
  if (err)
    memset(err, 'X', errsize);
  memcpy(out, start, sizeof *out);        /* padding too, for memcmp */
  rc = tw_options_parse(out, str, err, errsize);
  FZ_CHECK(rc == 0 || rc == TW_EOPTION, "tw_options_parse returned %s (%d)",
           tw_err_name(rc), rc);
  if (rc == TW_EOPTION) {
    FZ_CHECK(memcmp(out, start, sizeof *out) == 0,
             "options changed by a failed parse");
    if (err) {
      size_t n = strnlen(err, errsize);
      FZ_CHECK(n < errsize, "error message not NUL-terminated in %zu bytes",
               errsize);
      FZ_CHECK(errsize == 1 || n > 0, "empty error message (errsize %zu)",
               errsize);
    }
  }
  free(err);
  return rc;
}

/* Open a writer with o on the scratch memfd, close it, check the file. */
static void open_with(const tw_options *parsed)
{
  tw_options o = *parsed;
  tw_writer *w;
  int fd = fz_file(), err = 0, rc;
  size_t len;
  char *file, msg[200];

  /* Keep memory and time small; the ranges were checked by the caller. */
  if (o.buffer_size > 65536)
    o.buffer_size = 65536;
  if (o.mmap_chunk > 65536)
    o.mmap_chunk = 65536;
  o.flags &= ~TW_OPT_SYNC;
#ifdef TW_CRASH_MAX_WRITERS
  /* The crash hook would take SIGSEGV, SIGABRT... from libFuzzer and the
   * sanitizers, which report this target's failures. */
  o.crash = TW_CRASH_OFF;
#endif
  /* Rotation needs a path: tw_open_fd refuses it, with TW_EOPTION. */
  if (o.rotate_size || o.rotate_interval_ns) {
    w = tw_open_fd(fd, &o, &err);
    FZ_CHECK(w == NULL && err == TW_EOPTION,
             "tw_open_fd took rotation: %s (%d)", tw_err_name(err), err);
    o.rotate_size = o.rotate_interval_ns = 0;
  }
  w = tw_open_fd(fd, &o, &err);
  FZ_CHECK(w != NULL, "tw_open_fd refused parsed options: %s (%d)",
           tw_err_name(err), err);
  FZ_CHECK(tw_emit(w, &(tw_event){ .ph = 'i', .name = "x" }) == 0, "tw_emit");
  rc = tw_close(w);
  FZ_CHECK(rc == 0, "tw_close: %s (%d)", tw_err_name(rc), rc);
  file = fz_read_all(fd, &len);
  if (o.sink == TW_SINK_GZIP) {
    FZ_CHECK(len >= 18 && (unsigned char)file[0] == 0x1f &&
             (unsigned char)file[1] == 0x8b, "gzip sink: not a gzip file");
  } else {
    jc_doc *d = jc_parse(file, len, msg, sizeof msg);
    if (!d) {
      fz_dump("file", file, len);
      FZ_FAIL("not a strict JSON trace: %s", msg);
    }
    /* process_name, the clock record, the event */
    FZ_CHECK(jc_len(d, jc_trace_events(d)) == 3, "not 3 records");
    jc_free(d);
  }
  free(file);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  tw_options start, a, b, c, again;
  char *str = malloc(size + 1);
  int rc, rc2;

  if (!str)
    FZ_FAIL("harness: out of memory");
  memcpy(str, data, size);
  str[size] = '\0';

  FZ_CHECK(tw_options_init(&start) == 0, "tw_options_init");
  rc = parse(&start, str, 256, &a);
  rc2 = parse(&start, str, 1 + size % 40, &b);
  FZ_CHECK(rc2 == rc && memcmp(&a, &b, sizeof a) == 0,
           "the result depends on errsize");
  rc2 = parse(&start, str, 0, &c);
  FZ_CHECK(rc2 == rc && memcmp(&a, &c, sizeof a) == 0,
           "the result depends on err being NULL");

  if (rc == 0) {
    FZ_CHECK(a.struct_size == sizeof a, "struct_size changed");
    FZ_CHECK(a.buffer_size >= TW_MIN_BUFFER_SIZE &&
             a.buffer_size <= ((size_t)1 << 30), "buffer %zu", a.buffer_size);
    FZ_CHECK(a.mmap_chunk >= 4096 && a.mmap_chunk <= ((size_t)1 << 30),
             "chunk %zu", a.mmap_chunk);
    FZ_CHECK(a.max_event >= 4096 && a.max_event <= ((size_t)1 << 30),
             "max_event %zu", a.max_event);
    FZ_CHECK(a.max_string >= TW_MIN_MAX_STRING &&
             a.max_string <= ((size_t)1 << 30), "max_string %zu",
             a.max_string);
    FZ_CHECK(a.buffer_count >= 2 && a.buffer_count <= TW_MAX_BUFFER_COUNT,
             "buffers %u", a.buffer_count);
    FZ_CHECK(a.gzip_level >= 1 && a.gzip_level <= 9, "gzip %d", a.gzip_level);
    FZ_CHECK(a.process_name == NULL && a.file_mode == 0644,
             "a field with no key changed");
    rc2 = parse(&a, str, 256, &again);
    FZ_CHECK(rc2 == 0 && memcmp(&a, &again, sizeof a) == 0,
             "parsing the same string twice changes the result");
    open_with(&a);
  }
  free(str);
  return 0;
}
