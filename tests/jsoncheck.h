/* jsoncheck.h -- a strict JSON checker and reader, for the tests only
 *
 * jc_parse accepts exactly one RFC 8259 value and nothing else: the whole
 * grammar is checked by a hand-written validator (jsmn, which tokenizes the
 * document, lets through trailing commas, empty elements, bad literals, raw
 * control bytes and more, even with JSMN_STRICT).  Checked on top of the
 * grammar: strictly valid UTF-8 (no overlongs, no encoded surrogates,
 * nothing above U+10FFFF), \u surrogates paired (high then low), and a
 * nesting depth of at most JC_MAX_DEPTH.  Only space, tab, LF and CR may
 * surround the value; any other byte after it (a NUL too) is an error.
 *
 * A parsed document is read-only and owns a copy of its input, so the
 * caller's buffer may be freed after jc_parse.  There is no global mutable
 * state: different documents may be used from different threads at once.
 *
 * Values are named by a jc_val, an index into the document; -1 means
 * "none".  Every accessor accepts -1 (or any out-of-range index) and then
 * answers "none": -1, 0, NULL or NAN, as each contract says.  Walk a
 * container in linear time with jc_first / jc_next; jc_index is O(i).
 */
#ifndef JSONCHECK_H
#define JSONCHECK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The deepest nesting of arrays/objects accepted ("[[1]]" has depth 2). */
#define JC_MAX_DEPTH 512

typedef struct jc_doc jc_doc;          /* opaque parsed document */
typedef int jc_val;                    /* index of a value in a doc; -1 = none */

/* Parse and strictly validate buf[0..len) (need not be NUL-terminated; buf
 * may be NULL when len is 0).  Returns a new document to free with jc_free,
 * or NULL on any invalid input (or out of memory, or len above 2 GiB - 2),
 * then writing a one-line reason starting "offset N: " (N = byte offset of
 * the problem) into err[0..errsize), truncated to fit.  err may be NULL. */
jc_doc *jc_parse(const char *buf, size_t len, char *err, size_t errsize);

/* Read the whole file at path and jc_parse it.  Returns NULL when the file
 * cannot be read (err then names the path and the reason) or its content
 * is invalid.  A ".gz" file is read as it is (not decompressed), so it is
 * rejected as invalid JSON. */
jc_doc *jc_parse_file(const char *path, char *err, size_t errsize);

/* Free a document and everything it owns; d may be NULL. */
void jc_free(jc_doc *d);

/* The top-level value (0), or -1 if d is NULL. */
jc_val jc_root(const jc_doc *d);

enum jc_type { JC_OBJECT, JC_ARRAY, JC_STRING, JC_NUMBER, JC_TRUE, JC_FALSE, JC_NULL };

/* The type of v.  v must be a valid value: for -1 or an out-of-range
 * index this returns JC_NULL, so check v >= 0 before trusting a JC_NULL. */
enum jc_type jc_type(const jc_doc *d, jc_val v);

/* Number of elements of an array / members of an object; 0 for scalars
 * and for -1. */
size_t jc_len(const jc_doc *d, jc_val v);

/* The i-th (from 0) element of an array, or the i-th member's value of an
 * object; -1 if i is out of range or v is not a container.  O(i): use
 * jc_first / jc_next for linear walks. */
jc_val jc_index(const jc_doc *d, jc_val arr, size_t i);

/* The first element of an array, or the first member's VALUE of an
 * object; -1 if empty or not a container. */
jc_val jc_first(const jc_doc *d, jc_val container);

/* The next element / member value after v in the same container, -1 at the
 * end (and for the root).  O(1). */
jc_val jc_next(const jc_doc *d, jc_val v);

/* The raw (undecoded) text of the key of the member whose value is
 * member_value, WITHOUT the quotes, as in the input (not NUL-terminated:
 * use *len, which is set if len != NULL).  NULL (and *len = 0) if
 * member_value is not the value of an object member. */
const char *jc_key_raw(const jc_doc *d, jc_val member_value, size_t *len);

/* The value of the first member of obj whose decoded key equals the
 * NUL-terminated key; -1 if there is none or obj is not an object. */
jc_val jc_get(const jc_doc *d, jc_val obj, const char *key);

/* How many members of obj have this decoded key (0 if obj is not an
 * object); above 1 means a duplicate key. */
size_t jc_count_key(const jc_doc *d, jc_val obj, const char *key);

/* The decoded string v: escapes resolved, \u escapes as UTF-8 (surrogate
 * pairs combined); \u0000 is kept and counted in *len.  The text is owned
 * by the doc (valid until jc_free) and NUL-terminated; *len is set if
 * len != NULL.  NULL (and *len = 0) if v is not a string. */
const char *jc_str(const jc_doc *d, jc_val v, size_t *len);

/* 1 if v is a string whose decoded value equals the NUL-terminated s
 * (same length, same bytes), else 0. */
int jc_streq(const jc_doc *d, jc_val v, const char *s);

/* The raw text of v as in the input (strings WITH their quotes, containers
 * with their brackets), not NUL-terminated; *len is set if len != NULL.
 * NULL (and *len = 0) for -1. */
const char *jc_raw(const jc_doc *d, jc_val v, size_t *len);

/* The number v as a double, like strtod in the "C" locale whatever the
 * process locale is (±HUGE_VAL past the double range); NAN if v is not a
 * number. */
double jc_num(const jc_doc *d, jc_val v);

/* 0 and *out = the value if v is a number written as an integer (no '.',
 * no exponent; "-0" is 0) that fits int64_t; -1 otherwise (*out unset). */
int jc_int64(const jc_doc *d, jc_val v, int64_t *out);

/* Same as jc_int64 for uint64_t; any '-' (even "-0") is rejected. */
int jc_uint64(const jc_doc *d, jc_val v, uint64_t *out);

/* A timestamp in microseconds written with at most 3 decimals ("1234.567",
 * "12", "0.5"; no '-', no exponent) as exact integer nanoseconds, without
 * floating point: 0 and *ns set, or -1 if v is not such a number or the
 * result does not fit uint64_t ("1.2345" and "-1" are -1). */
int jc_us_to_ns(const jc_doc *d, jc_val v, uint64_t *ns);

/* The events array of a trace: the root if it is an array, else
 * root["traceEvents"] if the root is an object and that member is an
 * array; -1 otherwise. */
jc_val jc_trace_events(const jc_doc *d);

#ifdef __cplusplus
}
#endif

#endif /* JSONCHECK_H */
