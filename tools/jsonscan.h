/* jsonscan.h -- the general front end: any Chrome Trace Event JSON
 * document, streamed, one record at a time
 *
 * The crash-layout reader (reader.c) knows the library's own layout, one
 * record per line.  This scanner reads any document of the format, as
 * other programs write it (the PyTorch profiler, Chrome, viztracer ...):
 *
 *   - the array form [ {...}, ... ], or the object form { "key": value,
 *     ..., "traceEvents": [ {...}, ... ], "key": value ... } with any
 *     members, holding any JSON values, before and after traceEvents;
 *   - any whitespace: records spread over many lines, or the whole
 *     document on one line (no line-length limit, only max_record);
 *   - a UTF-8 byte-order mark; a trailing comma before "]" or stray
 *     commas between elements (counted); elements that are not objects
 *     (skipped and counted); "{}" (yielded: a record with no members);
 *   - a document cut anywhere: every complete record before the cut is
 *     yielded, and the info says where it was cut.
 *
 * It is fed the JSON text chunk by chunk (twt_scan_feed) and yields each
 * record of traceEvents whole: its text, "{" to "}", valid JSON at most
 * TWT_RECORD_DEPTH deep.  A record spread over lines (a newline, CR or
 * tab between its tokens) is yielded with the whitespace between its
 * tokens removed, so that every record the tools write is one line;
 * every value keeps its bytes.  A record that is not valid JSON is
 * dropped and counted.  The members other than traceEvents are kept (up
 * to max_members bytes; more are counted and dropped), each with a
 * comma before it, for the commands that write one input back.
 *
 * Memory: the scanner holds at most one record (max_record bytes) and the
 * members kept; nesting is counted, never recursed into, so a value
 * nested a million deep, a 100 MB string outside the events, or bytes
 * that are no JSON at all cost no more memory than that.  Pure: no I/O,
 * no global state; one scanner is not thread-safe.
 */
#ifndef TWT_JSONSCAN_H
#define TWT_JSONSCAN_H

#include <stddef.h>
#include <stdint.h>

#include "errors.h"       /* the tools' error codes */
#include "json.h"         /* the grammar: tw__json_check ... */
#include "layout.h"       /* TW__LAYOUT_RECORD_DEPTH */

#ifdef __cplusplus
extern "C" {
#endif

/* The deepest record the tools accept: the deepest the library writes
 * (one definition, src/layout.h, from TW_MAX_JSON_DEPTH). */
#define TWT_RECORD_DEPTH TW__LAYOUT_RECORD_DEPTH

/* The checker is the project's one JSON grammar, the writer's too
 * (src/json.h): these are its functions under the tools' names.
 * twt_json_check(json, len, max_depth, bad): one strict RFC 8259 value
 * at most max_depth deep; twt_json_check_ex: the same, reporting an
 * object's members (validation and extraction in one pass);
 * twt_json_check_prefix: the value json begins with, whatever follows;
 * twt_json_compact: valid JSON without the whitespace between its
 * tokens; twt_jstream_*: the same grammar fed in pieces (a member of
 * megabytes copied from a file). */
typedef tw__json_member_fn twt_member_fn;
#define twt_json_check tw__json_check
#define twt_json_check_ex tw__json_check_ex
#define twt_json_check_prefix tw__json_check_prefix
#define twt_json_compact tw__json_compact
typedef tw__jstream twt_jstream;
typedef tw__jstream_out twt_jstream_out;
#define TWT_JSTREAM_DEPTH TW__JSTREAM_DEPTH
#define twt_jstream_init tw__jstream_init
#define twt_jstream_feed tw__jstream_feed
#define twt_jstream_end tw__jstream_end

/* A member too big to keep in memory (over max_members): where its text
 * ("key": value, the key's quote first) lies in the JSON text. */
struct twt_scan_big {
  uint64_t off, len;
};
#define TWT_SCAN_BIG_MAX 64       /* more are dropped, counted */

/* What the scanner found so far. */
struct twt_scan_info {
  int object_form;         /* the document is an object */
  int bom;                 /* it began with a UTF-8 byte-order mark */
  int events_found;        /* the events array was found */
  int done;                /* the document's last bracket was read */
  int strict;              /* (once ended) the text was checked to be
                              exactly one strict JSON document, at most
                              one newline after it: 0 too when an
                              element was skipped or a record or member
                              dropped unchecked */
  uint64_t records;        /* records yielded */
  uint64_t invalid;        /* records dropped: not valid JSON, or nested
                              deeper than TWT_RECORD_DEPTH */
  uint64_t invalid_bytes;  /* ... their bytes */
  uint64_t first_invalid;  /* offset of the first */
  uint64_t skipped;        /* elements of traceEvents that are not
                              objects, skipped */
  uint64_t stray_commas;   /* commas with no element before them (a
                              trailing comma before "]", ",,") */
  const char *members;     /* the other members of an object, each as
                              ,"key":value (whitespace kept) */
  size_t members_len;
  uint64_t members_dropped; /* members not kept (over max_members, and
                              more than TWT_SCAN_BIG_MAX of them) */
  const struct twt_scan_big *big; /* members over max_members, not kept:
                              where they are, in the order read */
  unsigned nbig;
  size_t members_before;   /* bytes of members that came before the
                              events array (the rest came after it) */
  uint64_t events_at;      /* offset of the events array's "[" ... */
  uint64_t events_end;     /* ... and of its "]", once events_ended */
  int events_ended;
  int cut;                 /* the data ended inside the document */
  int stopped;             /* the text stopped making sense: it was
                              read up to there, like a cut */
  uint64_t stop_offset;    /* where the cut or the nonsense is */
  char stop_why[96];       /* ... what was expected there */
};

/* A record yielded.  text is valid until the next call. */
typedef struct twt_scan_rec {
  const char *text;
  size_t len;
  uint64_t offset;         /* of its "{" in the JSON text */
  int dropped;             /* 1: not a record but one dropped (text
                              NULL, len its bytes) */
} twt_scan_rec;

typedef struct twt_scan twt_scan;

/* Errors (besides -ENOMEM). */
#define TWT_SCAN_ENOTTRACE TWT_ENOTTRACE /* not a trace */
#define TWT_SCAN_ETOOBIG   TWT_ETOOBIG   /* a record over max_record bytes */

/* A new scanner: records of up to max_record bytes, members kept up to
 * max_members bytes.  NULL when out of memory. */
twt_scan *twt_scan_new(size_t max_record, size_t max_members);

/* Only find the document's members: records are skipped as fast as
 * their end can be found, neither checked nor yielded (info.records
 * counts them).  A first pass that knows every member of a document,
 * those after its events too, before the events are read. */
void twt_scan_members_only(twt_scan *s);

/* Have each record's members reported while it is checked
 * (twt_json_check_ex); fn(arg, NULL, 0, 0, 0) first, for each record. */
void twt_scan_on_member(twt_scan *s, twt_member_fn fn, void *arg);

/* Scan p[0..n), the next bytes of the text.  Returns how many were used
 * (fewer than n when a record is ready: feed the rest again after it), or
 * a negative code with the message in twt_scan_error.  *ready is set to 1
 * when *rec is filled. */
ptrdiff_t twt_scan_feed(twt_scan *s, const char *p, size_t n,
                        twt_scan_rec *rec, int *ready);

/* The end of the text.  Returns 0 (the document was complete, or cut
 * after something of a trace: see the info), or TWT_SCAN_ENOTTRACE when
 * it was no trace (empty, no events array). */
int twt_scan_end(twt_scan *s);

const struct twt_scan_info *twt_scan_info(const twt_scan *s);

/* The message of the error ("not a trace: byte N: ..."), or "". */
const char *twt_scan_error(const twt_scan *s);

void twt_scan_free(twt_scan *s);

#ifdef __cplusplus
}
#endif

#endif /* TWT_JSONSCAN_H */
