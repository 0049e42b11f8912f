/* tracein.h -- one trace read from its files, for cat, merge, slice and
 * stats
 *
 * A writer with rotation leaves its trace in parts: trace.000001.json,
 * trace.000002.json, ... (the finished ones, src/rotate.h) and trace.json
 * (the live one).  Each part is a complete document that begins with the
 * process_name record, the clock record and every metadata record
 * emitted so far.  A twt_tin reads such a trace as one stream of records:
 *
 *   - The files are read in the order given, one at a time, through
 *     tools/reader.h: every complete record of a cut file (a crash, a
 *     live file) is read, and what was dropped is said on stderr.  A
 *     file named alone whose directory holds its rotated parts (the
 *     names tw__rotated_name gives, six digits or more) stands for its
 *     parts, in ascending order, then itself, unless no_parts is set.
 *   - A metadata record ('M') is yielded once: again only if its text
 *     changed (a thread renamed).  Those that later parts repeat are
 *     dropped.
 *   - The clock record (TW__LAYOUT_CLOCK_SYNC_ID, src/layout.h) of the
 *     first document is yielded (kind TWT_TIN_CLOCK); later ones are not.
 *     Each gives realtime_ns - monotonic_ns, how the document's trace
 *     clock relates to the wall clock.  Within one process it is the
 *     same for every part, up to the few nanoseconds between the two
 *     clock reads; a part whose relation differs by more than
 *     TWT_TIN_CLOCK_TOLERANCE (another boot, another process, the wall
 *     clock stepped) gets a shift that puts its timestamps on the clock
 *     of the first document: every record carries the shift to apply.
 *
 * Memory is bounded: one reader at a time, and the table of metadata
 * keys (TWT_TIN_META_MAX of them; past that, metadata records are
 * yielded as they come).  Not thread-safe; different ones are
 * independent.  Nothing is printed: warnings go to the caller's
 * opts.warn (the command layer prints them).
 */
#ifndef TWT_TOOLS_TRACEIN_H
#define TWT_TOOLS_TRACEIN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "reader.h"
#include "records.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Beyond this difference in realtime - monotonic between two documents
 * of one input, the later one is on another clock (ns). */
#define TWT_TIN_CLOCK_TOLERANCE ((int64_t)1000000)
#define TWT_TIN_META_MAX 65536u

/* Options of twt_tin_open.  Zeroed means the defaults. */
struct twt_tin_options {
  size_t max_record;       /* the longest record (0: the reader's
                              default) */
  int no_parts;            /* read only the files named */
  int quiet;               /* no warnings */
  void (*warn)(void *arg, const char *msg); /* each warning (a line, no
                              newline; NULL: none); nothing is printed
                              here */
  void *warn_arg;
  int events_unparsed;     /* an event whose text begins {"ph":"P" and
                              needs no shift is yielded with r.text,
                              r.len and r.ph only, r.has 0, the other
                              members of r not set (for cat: faster) */
};

/* The kinds of records yielded. */
enum twt_tin_kind {
  TWT_TIN_EVENT = 0,        /* any record but the two below */
  TWT_TIN_META = 1,         /* a metadata record ('M'), first seen */
  TWT_TIN_CLOCK = 2         /* the clock record of the first document */
};

typedef struct twt_tin_rec {
  twt_rec r;                /* the record and its members; r.text is
                              valid until the next call */
  int kind;                /* enum twt_tin_kind */
  int64_t shift;           /* ns to add to r.ts to put it on the clock
                              of the input's first document */
  unsigned part;           /* the file it comes from (index) */
  uint64_t pos;            /* where it begins in the input: the JSON
                              bytes of the files before, and its offset
                              in its file */
} twt_tin_rec;

/* The clock record of the first document. */
struct twt_tin_clock {
  int known;               /* there was one */
  int64_t mono, real;      /* its monotonic_ns, realtime_ns */
  int64_t pid, tid;        /* its pid and tid (0 if not integers) */
};

typedef struct twt_tin twt_tin;

/* Open paths[0..n) as one trace.  Checks that every file (parts
 * included) can be opened; nothing is read yet.  Returns 0 and *tp, or a
 * negative code (the reader's, or -errno; -EEXIST for a file named
 * twice) with a message naming the file in err. */
int twt_tin_open(twt_tin **tp, char *const *paths, size_t n,
                 const struct twt_tin_options *opts, char *err,
                 size_t errsize);

/* The next record: 1, 0 at the end of the last file, or a negative code
 * with the message in twt_tin_error (sticky). */
int twt_tin_next(twt_tin *t, twt_tin_rec *rec);

/* The message of the first error, or "". */
const char *twt_tin_error(const twt_tin *t);

/* The first document's clock record (known once it has been read). */
const struct twt_tin_clock *twt_tin_clock(const twt_tin *t);

/* The files read, after expansion: how many, and the name of each. */
size_t twt_tin_files(const twt_tin *t);
const char *twt_tin_file(const twt_tin *t, size_t i);

/* 1 if the file at path is one of the input's files (the same inode). */
int twt_tin_has_file(const twt_tin *t, const char *path);

/* 1 if a file of t is also one of u's. */
int twt_tin_overlaps(const twt_tin *t, const twt_tin *u);

/* The value of the top-level member key of the document being read
 * (its members besides traceEvents, wherever they stand: before the
 * events or after them; once a record was read), copied into
 * val[0..cap) as raw JSON, NUL-terminated.  Returns its length, or 0 if
 * there is none (or it does not fit).  The first call on a file whose
 * events are followed by members finds them with a first pass over it
 * (its records skipped). */
size_t twt_tin_member(twt_tin *t, const char *key, char *val, size_t cap);

/* The members besides traceEvents of the document being read, all of
 * them (those after the events too, found as twt_tin_member does), each
 * as ,"key":value (whitespace as read); NULL if none or no file is
 * being read.  Valid until the next call on t. */
const char *twt_tin_members(twt_tin *t, size_t *len);

/* The members of the document too big to keep in memory (over 1 MiB:
 * Chrome's stackFrames, samples, systemTraceEvents): where each lies in
 * the JSON text of the file *path, to be copied from it (twt_cmd_
 * copy_member).  Those of the document being read (as twt_tin_members
 * finds them: after the events too), or after the end those of the file
 * whose tail is twt_tin_tail's.  Returns how many. */
unsigned twt_tin_big_members(twt_tin *t, const struct twt_scan_big **big,
                             const char **path);

/* The form of the input's first file, known from its first record
 * (read by a reader of its own, then closed: nothing of t moves): 1 the
 * object form, 0 an array, -1 not known (no record in it, or it cannot
 * be read: the reading proper says why). */
int twt_tin_peek_form(twt_tin *t);

/* The output's form (1: {"traceEvents":[...]}): that of the first file
 * with a record (of the last file read while there is none); and the
 * tail in that form: the last such file's (without its newline; a file
 * of the other form has its members left out, with a warning), valid
 * after the end until twt_tin_close. */
int twt_tin_object_form(const twt_tin *t);
const char *twt_tin_tail(const twt_tin *t, size_t *len);

/* What was read so far. */
struct twt_tin_stats {
  uint64_t records;        /* complete records read */
  uint64_t yielded;        /* ... yielded */
  uint64_t dropped_records; /* cut records dropped */
  uint64_t dropped_bytes;  /* bytes of them and of other junk */
  uint64_t json_bytes;     /* JSON text read */
  uint64_t input_bytes;    /* sizes of the files (compressed) */
  uint64_t files_done;     /* files read to their end */
  uint64_t clock_shifts;   /* documents whose clock was shifted */
  uint64_t meta_overflow;  /* metadata records not deduplicated */
  int any_gzip;            /* a file was gzip */
};
const struct twt_tin_stats *twt_tin_stats(const twt_tin *t);

/* The sum of the sizes of all the files (known at open). */
uint64_t twt_tin_total_bytes(const twt_tin *t);

void twt_tin_close(twt_tin *t);

/* The input bytes of t read so far (plain files: exact; gzip files:
 * counted when each ends), for progress. */
uint64_t twt_tin_done_bytes(const twt_tin *t);

#ifdef __cplusplus
}
#endif

#endif /* TWT_TOOLS_TRACEIN_H */
