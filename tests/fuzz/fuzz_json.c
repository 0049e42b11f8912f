/* fuzz_json.c -- fuzz the raw-JSON validator through TW_ARG_JSON
 *
 * The input is the raw JSON of one argument (with its length; a second
 * emit passes it NUL-terminated when it holds no NUL).  The library must
 * accept exactly what the strict test checker accepts at depth <= 64:
 * tw_emit returns 0 iff jc_parse accepts and the nesting depth is at most
 * TW_MAX_JSON_DEPTH, and TW_EJSON otherwise.  An accepted value is written
 * as given, newlines turned into spaces, so the whole file stays strict
 * JSON and the argument reads back as the same text.
 */
#include "fuzz.h"

#include "jsoncheck.h"
#include "tracewriter.h"

/* Check the argument "j" of the event at index i: the input's text with
 * newlines as spaces, without the whitespace around it. */
static void check_written(const jc_doc *d, size_t i, const char *json,
                          size_t n)
{
  jc_val ev = jc_index(d, jc_trace_events(d), i);
  jc_val v = jc_get(d, jc_get(d, ev, "args"), "j");
  size_t b = 0, e = n, rlen;
  const char *raw = jc_raw(d, v, &rlen);

  while (b < e && (json[b] == ' ' || json[b] == '\t' || json[b] == '\n' ||
                   json[b] == '\r'))
    b++;
  while (e > b && (json[e - 1] == ' ' || json[e - 1] == '\t' ||
                   json[e - 1] == '\n' || json[e - 1] == '\r'))
    e--;
  FZ_CHECK(raw != NULL && rlen == e - b, "argument not found or resized");
  for (size_t k = 0; k < rlen; k++) {
    char want = json[b + k] == '\n' || json[b + k] == '\r' ? ' ' : json[b + k];
    FZ_CHECK(raw[k] == want, "argument changed at byte %zu", k);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  /* An exact-size copy: AddressSanitizer sees any read past the length. */
  char *json = malloc(size ? size : 1), *nul = NULL, *file, msg[200];
  int fd = fz_file(), err = 0, rc, accept, nul_ok = 0;
  unsigned depth;
  size_t len, emitted = 0;
  tw_options o;
  tw_writer *w;
  tw_arg arg;
  tw_event ev;
  jc_doc *d;

  if (!json)
    FZ_FAIL("harness: out of memory");
  if (size > 512 * 1024) {                /* a record under max_event */
    free(json);
    return 0;
  }
  memcpy(json, data, size);

  d = jc_parse(json, size, NULL, 0);
  depth = d ? fz_json_depth(json, size) : 0;
  accept = d != NULL && depth <= TW_MAX_JSON_DEPTH;
  jc_free(d);

  tw_options_init(&o);
  o.process_name = "fuzz";
  w = tw_open_fd(fd, &o, &err);
  FZ_CHECK(w != NULL, "tw_open_fd: %s", tw_err_name(err));

  memset(&ev, 0, sizeof ev);
  ev.ph = 'i';
  ev.name = "json";
  ev.has = TW_HAS_TS;
  ev.args = &arg;
  ev.nargs = 1;
  arg = tw_arg_json("j", json);
  arg.len = size;
  rc = tw_emit(w, &ev);
  if (accept) {
    FZ_CHECK(rc == 0, "valid JSON (depth %u) refused: %s (%d)", depth,
             tw_err_name(rc), rc);
    emitted++;
  } else {
    FZ_CHECK(rc == TW_EJSON, "invalid JSON (%s) gave %s (%d), not TW_EJSON",
             depth > TW_MAX_JSON_DEPTH ? "too deep" : "rejected by jc_parse",
             tw_err_name(rc), rc);
  }

  /* The same text NUL-terminated (TW_NUL_TERMINATED), when it holds no NUL. */
  if (!memchr(data, '\0', size)) {
    nul = malloc(size + 1);
    if (!nul)
      FZ_FAIL("harness: out of memory");
    memcpy(nul, data, size);
    nul[size] = '\0';
    arg = tw_arg_json("j", nul);
    rc = tw_emit(w, &ev);
    FZ_CHECK(rc == (accept ? 0 : TW_EJSON),
             "TW_NUL_TERMINATED length gave %s (%d), explicit length gave %s",
             tw_err_name(rc), rc, accept ? "0" : "TW_EJSON");
    nul_ok = rc == 0;
    emitted += nul_ok;
  }

  rc = tw_close(w);
  FZ_CHECK(rc == 0, "tw_close: %s (%d)", tw_err_name(rc), rc);
  file = fz_read_all(fd, &len);
  d = jc_parse(file, len, msg, sizeof msg);
  if (!d) {
    fz_dump("raw json", json, size);
    fz_dump("file", file, len);
    FZ_FAIL("the trace is not strict JSON: %s", msg);
  }
  /* After the document's records: process_name and the clock. */
  FZ_CHECK(jc_len(d, jc_trace_events(d)) == 2 + emitted,
           "%zu events, expected %zu", jc_len(d, jc_trace_events(d)),
           2 + emitted);
  if (accept)
    check_written(d, 2, json, size);
  if (nul_ok)
    check_written(d, 2 + (size_t)accept, nul, size);

  jc_free(d);
  free(file);
  free(nul);
  free(json);
  return 0;
}
