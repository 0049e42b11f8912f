/* format_test.h -- what the tests of the formatter share
 *
 * The tests of what tracewriter writes (tests/test_format_*.c) write
 * through the public API into a temporary file, close the writer, read
 * the file back with the strict JSON checker and compare every field of
 * every record with what was emitted: the exact set of keys (so an
 * optional field that should be absent is), strings byte for byte,
 * numbers exactly, timestamps as exact integer nanoseconds.  A session
 * (sess) records the events a test emits and checks them all at its end;
 * format_test.c has the helpers.
 */
#ifndef TW_FORMAT_TEST_H
#define TW_FORMAT_TEST_H

#include "testutil.h"
#include "viewer_rules.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#define U_FFFD "\xef\xbf\xbd"

typedef struct rec {
  tw_event ev;           /* what the record must say */
  uint64_t lo, hi;       /* window of the default ts */
  int dur_window;        /* dur only known to end by hi */
} rec;

typedef struct sess {
  char *path;
  tw_writer *w;
  tw_options o;
  rec *recs;             /* the good events, in order */
  size_t n, cap;
  uint64_t nbad;         /* events refused */
  jc_doc *doc;           /* the file as read back by s_close */
  size_t nmarks;
  char marks[256][16];   /* names of the marker events */
} sess;

/* The open session, for the teardown when a test fails half-way (its
 * sess is static, so it outlives cmocka's longjmp). */
extern sess *cur_sess;

#define S_CALL(s, expected, call)                                          \
  do {                                                                     \
    uint64_t lo_ = tw_now_ns();                                            \
    int rc_ = (call);                                                      \
    uint64_t hi_ = tw_now_ns();                                            \
    rc_equal(rc_, 0, #call);                                               \
    s_add((s), (expected), lo_, hi_);                                      \
  } while (0)

int64_t my_tid(void);

/* s[0..n) made printable for a failure message (\xNN for the rest). */
const char *shown(const char *s, size_t n, char *out, size_t cap);

/* v must be a string whose decoded bytes are exactly s[0..n). */
void assert_jstr(const jc_doc *d, jc_val v, const char *s, size_t n,
                 const char *what);

/* The raw text of v must be exactly text. */
void assert_raw(const jc_doc *d, jc_val v, const char *text);

void assert_hex(const jc_doc *d, jc_val v, uint64_t id,
                const char *what);

int is_ws(char c);

/* A raw JSON arg: written as given, outer whitespace aside, with its
 * newlines turned into spaces. */
void assert_raw_json(const jc_doc *d, jc_val v, const char *in,
                     size_t n);

/* One member key present exactly once, as a string equal to s[0..n). */
void key_str(const jc_doc *d, jc_val obj, const char *key,
             const char *s, size_t n, size_t *nkeys);

void key_true(const jc_doc *d, jc_val obj, const char *key,
              size_t *nkeys);

/* One argument, member v of the args object, against what was emitted. */
void check_arg(const jc_doc *d, jc_val args, jc_val v, const tw_arg *a);

/* Compare one record with the event that was expected to produce it:
 * every key that must be there, nothing else.  Defaults: ts within
 * [lo, hi], pid = getpid(), tid = the calling thread.  With dur_window,
 * dur is only known to end by hi. */
void check_event(const jc_doc *d, jc_val obj, const tw_event *ev,
                 uint64_t lo, uint64_t hi, int dur_window);

/* The bytes on disk: the head, then one record per line, then the tail
 * and nothing after it, not even a newline; each record line is a JSON object by itself.
 * nevents counts the records but the document's clock record, which is
 * a line too. */
void check_layout(const char *path, size_t nevents, int object_form);

void *pool_alloc(size_t n);

void pool_free(void);

void s_open(sess *s, const tw_options *o);

rec *s_add(sess *s, const tw_event *expected, uint64_t lo, uint64_t hi);

void rc_equal(int rc, int want, const char *what);

/* Emit ev, which must succeed and be written as expected. */
void s_emit_as(sess *s, const tw_event *ev, const tw_event *expected);

/* Emit ev, which must succeed and be written as it is. */
void s_emit(sess *s, const tw_event *ev);

/* A plain, always-good event, to show that the writer goes on. */
void s_good(sess *s);

/* Emit ev, which must be refused with code, leave the writer healthy and
 * be counted; then a good event. */
void s_bad(sess *s, const tw_event *ev, int code);

void s_stats(sess *s, tw_stats *st);

int default_program_name(const char *s, size_t n);

/* The first record: the process_name metadata event. */
void check_first(const sess *s, const jc_doc *d, jc_val obj);

/* Close, check the stats, the layout and every record.  Returns the
 * document (jc_free it) for further checks. */
jc_doc *s_close(sess *s);

/* The i-th good event's record (0 = the first after process_name). */
jc_val s_record(const jc_doc *d, size_t i);

/* Free the session and the document s_close returned (d may be NULL). */
void s_done(sess *s, jc_doc *d);

void s_finish(sess *s);

tw_event mkev(char ph, const char *cat, const char *name);

/* An event with every default but ts (so the output is exact). */
tw_event mkev_ts(char ph, const char *cat, const char *name,
                 uint64_t ts);


/* The strings' reference model, written from Unicode chapter 3 (table
 * 3-7) apart from src/format_string.c: s[0..n) with every maximal
 * ill-formed subpart replaced by U+FFFD into out (3n bytes), returning
 * the length and setting *bad; and where a string longer than max is
 * cut (never inside a character; a run of more than 3 continuation
 * bytes is junk, cut where asked). */
size_t ref_replace(const unsigned char *s, size_t n, unsigned char *out,
                   int *bad);
size_t ref_cut(const unsigned char *s, size_t max);

/* The random tests' generator (xorshift64*): its state, seeded by the
 * test (from tu_seed), the next number, one below n. */
extern uint64_t rng;
uint64_t rnd(void);
unsigned rn(unsigned n);

/* After a failed assertion: free what the test left (every test's
 * teardown). */
int teardown(void **state);

#endif /* TW_FORMAT_TEST_H */
