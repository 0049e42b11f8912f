/* numbered.h -- numbered events: the tests' one emitter and one checker
 *
 * Event i of a test is a function of i and of the test's family alone:
 *
 *   {"ph":"X","name":"ev<i>","cat":CAT,"ts":TU_TS(i),"dur":TU_DUR(i),
 *    "pid":PID,"tid":TID,"args":{"i":i,"pad":"abcdefg..."}}
 *
 * (ts and dur written in microseconds), the pad being the first
 * pad_of(i) characters of "abc...zabc..." (no "pad" arg at all when the
 * family has no pad_of): a family chooses its records' sizes, records
 * larger than a buffer or a chunk among them.  A test emits events
 * 0..n-1, then reads the file back through the strict checker and
 * compares every record with what was emitted, field by field: the
 * process_name record first, then exactly events 0..n-1 (or a prefix of
 * them, where a fault or a kill may have cut the trace).
 *
 * The functions that check fail the test (cmocka) on any mismatch.
 */
#ifndef TW_TEST_NUMBERED_H
#define TW_TEST_NUMBERED_H

#include "testutil.h"

/* The timestamp and duration of event i, in nanoseconds. */
#define TU_TS(i) (1000000u + (uint64_t)(i) * 1001u)
#define TU_DUR(i) (7u + (uint64_t)(i))

/* The longest pad. */
#define TU_PAD_MAX 16383

typedef struct tu_family {
  const char *cat;          /* every event's "cat" */
  const char *pname;        /* the process_name record's args.name */
  size_t (*pad_of)(int i);  /* the pad of event i; NULL: no "pad" arg */
  int64_t pid, tid;         /* the pid and tid of every record: 0 the
                               calling process / thread, -1 unchecked */
  int64_t pname_tid;        /* the process_name record's tid, when the
                               thread that opened is not the one that
                               emits: 0 as tid, -1 unchecked */
} tu_family;

/* What the test is doing, prefixed to the checkers' own failure
 * messages: a test that loops over cases points it at its description
 * ("" by default). */
extern const char *tu_numbered_ctx;

/* Emit event i of family f on w (tw_complete: the pid and tid are the
 * caller's), with its pad f->pad_of(i), or with padlen characters (at
 * most TU_PAD_MAX, else -EINVAL).  Return what tw_complete returns.  No
 * allocation, no stdio, no cmocka: a forked child or a signal handler
 * may call them as it may call tw_complete. */
int tu_emit(const tu_family *f, tw_writer *w, int i);
int tu_emit_pad(const tu_family *f, tw_writer *w, int i, size_t padlen);
/* Emit events from..to-1 with tu_emit, stopping at the first that
 * fails: returns 0, or what that one returned. */
int tu_emit_range(const tu_family *f, tw_writer *w, int from, int to);

/* Record e must be the process_name record of family f: ph "M", the
 * family's pid and tid, no ts, args exactly {"name": f->pname}. */
void tu_check_pname(const tu_family *f, const jc_doc *d, jc_val e);

/* Record e must be event i of family f with its pad f->pad_of(i), or
 * with padlen characters: exactly the 8 members above (and args exactly
 * "i" and "pad"), each as emitted. */
void tu_check_event(const tu_family *f, const jc_doc *d, jc_val e, int i);
void tu_check_event_pad(const tu_family *f, const jc_doc *d, jc_val e,
                        int i, size_t padlen);

/* The records of d must be the process_name record, then events 0, 1,
 * ... m-1 of family f in order and nothing else.  tu_check_prefix
 * returns m; tu_check_trace requires m == n. */
int tu_check_prefix(const tu_family *f, const jc_doc *d);
void tu_check_trace(const tu_family *f, const jc_doc *d, int n);

/* The trace in buf[0..len), strictly checked: gz, one complete gzip
 * member with nothing after it (inflated first); then the JSON must be
 * of the form object_form says (the root an array, or an object with
 * "traceEvents") and end with exactly its tail (TU_TAIL), nothing after.
 * Read as tu_parse_trace (without the clock record).  jc_free() it. */
jc_doc *tu_load_trace(const char *buf, size_t len, int gz, int object_form);

/* The same for the file at path. */
jc_doc *tu_load_trace_file(const char *path, int gz, int object_form);

/* The trace in buf[0..len) (read as tu_load_trace), or in the file at
 * path, must hold exactly the process_name record and events 0..n-1 of
 * family f. */
void tu_check_mem(const tu_family *f, const char *buf, size_t len, int gz,
                  int object_form, int n);
void tu_check_file(const tu_family *f, const char *path, int gz,
                   int object_form, int n);

#endif /* TW_TEST_NUMBERED_H */
