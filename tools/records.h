/* records.h -- the fields of one record, and the text they are made of
 *
 * The commands that work on a trace's events (cat, merge, slice, stats)
 * read records through tools/reader.h, which yields only complete,
 * strictly valid JSON objects.  These functions find the members that
 * the commands need in such an object, in one pass and without copying:
 *
 *     {"ph":"X","name":"db.query","cat":"db","ts":1234.567,"dur":8.250,
 *      "pid":12,"tid":13,"args":{...}}
 *
 * Members may come in any order (the library writes ph first, others
 * may not); a member given twice counts as its last value, as in
 * JavaScript.  Keys are compared as written (a key spelled with \u
 * escapes is not recognised).  Timestamps and durations are JSON
 * numbers in microseconds (or strings holding them), read into integer
 * nanoseconds exactly by decimal arithmetic (beyond the nanosecond,
 * rounded down); moved by rewriting their text exactly.
 *
 * Also here: the text of a timestamp, JSON strings decoded for people
 * and patterns, and the durations the commands take as options.  Pure:
 * no I/O, no allocation, no global state.
 */
#ifndef TWT_TOOLS_RECORDS_H
#define TWT_TOOLS_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where a member's value is in the record's text: text + off, len bytes
 * (strings with their quotes); len 0 when the member is absent. */
typedef struct twt_rec_span {
  size_t off, len;
} twt_rec_span;

/* One record and the members the commands use. */
typedef struct twt_rec {
  const char *text;        /* the JSON object, "{" to "}" */
  size_t len;
  char ph;                 /* the phase (the first character of "ph"'s
                              string), or 0 if none */
  unsigned has;            /* TWT_REC_* bits: the numbers read */
  int64_t ts, dur;         /* nanoseconds (TWT_REC_TS, TWT_REC_DUR) */
  int64_t pid, tid;        /* integers (TWT_REC_PID, TWT_REC_TID) */
  twt_rec_span ph_v, name, cat, ts_v, dur_v, pid_v, tid_v, id, id2, scope,
              args;
} twt_rec;

#define TWT_REC_TS  1u      /* "ts" is a number in range */
#define TWT_REC_DUR 2u      /* "dur" is a number in range */
#define TWT_REC_PID 4u      /* "pid" is an integer (in int64_t) */
#define TWT_REC_TID 8u      /* "tid" is an integer (in int64_t) */

/* Find the members of the object text[0..len), which must be valid JSON
 * (as the reader yields it).  Returns 0, or -1 if it is not an object. */
int twt_rec_parse(twt_rec *r, const char *text, size_t len);

/* The same in two halves, for a reader that finds the members while it
 * checks the record (twt_json_check_ex): twt_rec_take(r, key, klen, voff,
 * vlen) for each member (key NULL: a new record, r cleared), then
 * twt_rec_finish(r, text, len) once the whole is valid. */
void twt_rec_take(void *r, const char *key, size_t klen, size_t voff,
                  size_t vlen);
void twt_rec_finish(twt_rec *r, const char *text, size_t len);

/* The value of the top-level member key of the object obj[0..len) (valid
 * JSON), as a span of obj; len 0 if there is none. */
twt_rec_span twt_rec_member(const char *obj, size_t len, const char *key);

/* Call fn(arg, key, klen, value) for each member of the object
 * obj[0..len) (valid JSON), in order; key is the raw key without its
 * quotes.  Stops when fn returns nonzero.  Returns 0, or -1 if obj is not
 * an object. */
typedef int (*twt_rec_member_fn)(void *arg, const char *key, size_t klen,
                                 twt_rec_span value);
int twt_rec_each(const char *obj, size_t len, twt_rec_member_fn fn, void *arg);

/* 1 if the JSON string token tok[0..n) (with its quotes) is exactly s,
 * written without escapes. */
int twt_rec_str_is(const char *tok, size_t n, const char *s);

/* The JSON number tok[0..n) as an int64_t: 0, or -1 if it is not an
 * integer in range. */
int twt_rec_int(const char *tok, size_t n, int64_t *out);

/* The JSON number tok[0..n), microseconds, or a string holding one
 * ("1694039968955744.5": some producers write that), in any spelling
 * (decimals, exponent), in nanoseconds, exactly: a fraction of a
 * nanosecond is dropped toward minus infinity, so that comparing the
 * result with a whole number of nanoseconds is exact.  0, or -1 if it is
 * not a number, has more than 38 significant digits, or is out of range
 * (about 292 years). */
int twt_rec_us_to_ns(const char *tok, size_t n, int64_t *ns);

/* Compare the numbers (or strings holding numbers) a and b exactly,
 * whatever their spelling: *cmp < 0, 0 or > 0.  0, or -1 if one is not
 * a number that twt_rec_us_to_ns reads. */
int twt_rec_us_cmp(const char *a, size_t an, const char *b, size_t bn,
                   int *cmp);

/* The timestamp tok[0..n) (microseconds: a number, or a string holding
 * one) moved by shift_ns, by exact decimal arithmetic on its text,
 * written into buf (at least TWT_REC_NUM_MAX bytes): in plain decimal
 * notation, with as many decimals as the text had or the shift needs,
 * quoted if tok was.  1694039968955744.123 moved by -1.5 s reads
 * 1694039967455744.123.  Returns the length, or 0 if tok is not such a
 * number. */
#define TWT_REC_NUM_MAX 48
size_t twt_rec_us_shift_text(const char *tok, size_t n, int64_t shift_ns,
                             char *buf);

/* Write ns as microseconds with three decimals ("-12.500", "1234.567"),
 * as the library does, into buf (at least TWT_REC_US_MAX bytes, not
 * NUL-terminated).  Returns the length. */
#define TWT_REC_US_MAX 26
size_t twt_rec_us_text(int64_t ns, char *buf);

/* Decode the JSON string token tok[0..n) (with its quotes, valid) into
 * UTF-8 in out[0..cap - 1], NUL-terminated, cut on a character boundary
 * if it does not fit.  Returns the decoded length (before any cut). */
size_t twt_rec_str_decode(const char *tok, size_t n, char *out, size_t cap);

/* The length of the longest prefix of the JSON string token tok[0..n)
 * (with its opening quote, valid), at most max bytes, that ends between
 * two characters (never inside an escape or a UTF-8 sequence): appending
 * a closing quote makes it a valid token again. */
size_t twt_rec_str_cut(const char *tok, size_t n, size_t max);

/* A 64-bit hash of data[0..n), mixed with seed. */
uint64_t twt_rec_hash(const void *data, size_t n, uint64_t seed);

/* Parse a duration for the command line: an optional sign, a decimal
 * number with an optional fraction, and a unit of the options
 * (tw__parse_duration: ns, us, ms, s, m, h), e.g. "10s", "12.5ms",
 * "-1.25s"; a lone "0" needs no unit.  Into nanoseconds (a fraction
 * below the nanosecond is dropped).  Returns 0, or -1 (bad text, out of
 * range). */
int twt_rec_parse_duration(const char *text, int64_t *ns);

/* Append printf-style text at buf + *n (size bytes in all), keeping buf
 * NUL-terminated and truncated to fit. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 4, 5)))
#endif
void twt_text_append(char *buf, size_t size, size_t *n, const char *fmt, ...);

/* one if n == 1, else many ("1 record", "2 records"). */
const char *twt_text_plural(uint64_t n, const char *one, const char *many);

/* The members m[0..len) (each as ,"key":value, valid JSON without the
 * whitespace between tokens) in the order of their keys (bytes; members
 * of one key keep their order), into dst (len bytes; not m): so that a
 * document's members are written the same whatever order they stood in,
 * before its events or after them.  Returns len, or 0 (dst not used)
 * when m is not such members or memory ran out. */
size_t twt_rec_sort_members(char *dst, const char *m, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* TWT_TOOLS_RECORDS_H */
