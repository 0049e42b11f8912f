/* layout.h -- the file's framing, defined once: head, separator, tail and
 * the first record
 *
 *     [                                     the head (or {"traceEvents":[)
 *     {"ph":"M","name":"process_name",...}  the first record, at once
 *     ,{"ph":"c","name":"clock_sync",...}   the clock record
 *     ,{...}                                every later record: the
 *     ...                                     separator ",\n" then "{...}"
 *     ]                                     the tail "\n]" (or "\n]}")
 *
 * The writer, rotation, the sinks and the tools frame files with these.
 * A record as the formatter makes it begins with the separator, which
 * format.c writes itself, fused with the record's first bytes for speed
 * (a change of the separator is made here and there); the first record
 * of a file loses its separator to the head.
 */
#ifndef TW_LAYOUT_H
#define TW_LAYOUT_H

#include <stddef.h>

#include "internal.h"

/* What begins every record but the first. */
#define TW__LAYOUT_SEP ",\n"
#define TW__LAYOUT_SEP_LEN 2

/* The deepest record the library writes: the record, its "args" object
 * and a raw JSON argument TW_MAX_JSON_DEPTH deep (tw_arg_json, whose
 * check, tw__json_validate in src/json.c, allows that depth).  The tools accept records
 * exactly this deep, from this one definition. */
#define TW__LAYOUT_RECORD_DEPTH (TW_MAX_JSON_DEPTH + 2u)

/* The longest fixed head ("[" or {"traceEvents":[). */
#define TW__LAYOUT_HEAD_MAX 16
/* Room for a writer's head (tw__layout_build_head), kept free before the
 * first record. */
#define TW__LAYOUT_HEAD_ROOM 256

/* The head and the tail of the array form (object_form 0) or of the
 * object form {"traceEvents":[...]} (1): static strings, *len their
 * length. */
const char *tw__layout_head(int object_form, size_t *len);
const char *tw__layout_tail(int object_form, size_t *len);

/* Format the first record of a file, the process_name metadata event of
 * the calling process named name (NULL: the program's short name), into
 * buf[0..cap) with its separator, like any record.  Returns 0 and its
 * length in *len (and in *notes what formatting cut or replaced in the
 * name, for the stats), TW_ETOOBIG if it needs more than cap bytes, or
 * the formatter's error for a bad name. */
int tw__layout_first_record(const char *name, const tw__fmt_config *cfg,
                            char *buf, size_t cap, size_t *len,
                            tw__fmt_notes *notes);

/* The clock record that follows the first record of every document: a
 * clock sync event ('c', name "clock_sync", args.sync_id
 * TW__LAYOUT_CLOCK_SYNC_ID) at now on the trace clock, with args
 * monotonic_ns and realtime_ns, the two clocks read one after the other:
 * it ties the trace's timestamps to the wall clock, so that traces of
 * other processes and machines can be put on one timeline (tracewriter
 * merge).  The trace clock is CLOCK_MONOTONIC (tw_now_ns) plus ts_offset
 * (0, or with timebase=kineto the wall clock's offset less the base);
 * base_ns, when not 0, is written as args.kineto_base_ns: then ts is
 * microseconds of the wall clock since that base.  Formatted into
 * buf[0..cap) with its separator.  Returns 0 and *len, or TW_ETOOBIG. */
#define TW__LAYOUT_CLOCK_SYNC_ID "tracewriter.realtime"
int tw__layout_clock_record(const tw__fmt_config *cfg, int64_t ts_offset,
                            uint64_t base_ns, char *buf, size_t cap,
                            size_t *len);

/* A writer's head into buf (TW__LAYOUT_HEAD_ROOM bytes): the fixed head,
 * or in the object form with base_ns (not 0) or rank (>= 0) the keys
 * the PyTorch profiler writes before "traceEvents" -- schemaVersion,
 * displayTimeUnit, baseTimeNanoseconds, distributedInfo {rank,
 * world_size (when >= 0)} -- so that tools such as Holistic Trace
 * Analysis read it as they read its traces.  Returns its length. */
size_t tw__layout_build_head(int object_form, uint64_t base_ns, long rank,
                             long world_size, char *buf);

/* The clock record's name and argument keys, for those that read it
 * (the tools) as for the writer. */
#define TW__LAYOUT_CLOCK_NAME     "clock_sync"
#define TW__LAYOUT_CLOCK_KEY_ID   "sync_id"
#define TW__LAYOUT_CLOCK_KEY_MONO "monotonic_ns"
#define TW__LAYOUT_CLOCK_KEY_REAL "realtime_ns"

/* The argument of a timebase=kineto clock record: the base its ts
 * count from. */
#define TW__LAYOUT_CLOCK_KEY_BASE "kineto_base_ns"

/* The same record for given clocks (mono on the monotonic clock, real
 * on the wall clock, ns), ts_offset and base_ns as above, and pid and
 * tid: pure (what merge writes for its output). */
int tw__layout_clock_record_of(const tw__fmt_config *cfg, uint64_t mono,
                               uint64_t real, int64_t ts_offset,
                               uint64_t base_ns, int64_t pid, int64_t tid,
                               char *buf, size_t cap, size_t *len);

/* Turn records[0..len) (whole records, each with its separator) into the
 * start of a document in place: head[0..head_len) takes the place of the
 * first record's comma (its newline stays: "[\n{...}"), so it is written
 * over records[0] and into the TW__LAYOUT_HEAD_ROOM bytes that the
 * caller keeps free before records.  Returns where the document starts;
 * *doc_len is its length.  records[0] is overwritten: keep it if it
 * matters. */
char *tw__layout_document(const char *head, size_t head_len, char *records,
                          size_t len, size_t *doc_len);

/* Where the number of a rotated file goes in path: the offset of the
 * "." that begins ".NNNNNN", before ".json.gz", ".json" or ".gz", else
 * before the last extension of the base name, else at the end
 * (trace.json -> trace.000001.json).  Pure: the one rule for the writer's
 * rotation and the tools (which look for parts and name split's). */
size_t tw__layout_number_at(const char *path);

/* The end of every gzip commit (src/sink_gzip.c): a stored final block
 * holding tail[0..n) -- 0x01, LEN and ~LEN little-endian, the bytes --
 * then the gzip trailer: crc, the CRC-32 of all the uncompressed data
 * (the tail included), and isize, its length mod 2^32, little-endian.
 * Into e, TW__LAYOUT_GZ_END_LEN(n) bytes; n at most 65535.  Pure: the
 * one definition for the sink and the tools' reader, which recognises
 * what a cut commit leaves of an old one. */
#define TW__LAYOUT_GZ_STORED_HDR 5
#define TW__LAYOUT_GZ_TRAILER 8
#define TW__LAYOUT_GZ_END_LEN(n) \
  (TW__LAYOUT_GZ_STORED_HDR + (n) + TW__LAYOUT_GZ_TRAILER)
void tw__layout_gzip_end(unsigned char *e, const char *tail, size_t n,
                         uint32_t crc, uint32_t isize);

#endif /* TW_LAYOUT_H */
