/* snapshot.h -- "tracewriter snapshot": a consistent copy of a live trace
 *
 * A process writing a trace changes the file while it runs: the file
 * sink writes each commit's records over the old tail and a new tail
 * after them; the mmap sink copies records into the file in parallel,
 * from several threads; the gzip sink writes each commit's deflate data
 * over the old stored block and trailer.  A plain copy (cp) taken at the
 * wrong moment holds a torn commit: a cut record, a cut gzip member.
 *
 * A snapshot reads the file once, through tools/reader.h, up to the size
 * it had when opened (or, if that ends inside a record being appended, to
 * the end of that record), and writes every complete record it read,
 * then the tail: strict JSON, ending exactly at the tail's last byte, whatever
 * moment the writer was at.  Every record in the copy is one the writer
 * wrote, once; a record being written during the read is either whole in
 * the copy or dropped (and counted).  The snapshot never writes to the
 * file it reads.
 *
 * These functions are for the command-line tool and its tests; they are
 * not part of libtracewriter.  They print nothing (twt_tool_snapshot_main
 * excepted) and keep no global state (twt_tool_snapshot_main resets
 * getopt's).
 */
#ifndef TWT_TOOLS_SNAPSHOT_H
#define TWT_TOOLS_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "reader.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The exit status of the command when the copy is strict JSON but some
 * of the file's data was not in it (a record cut by a write in progress
 * or by a crash, bytes that were not records, damaged gzip data). */
#define TWT_SNAPSHOT_EXIT_CUT 3

/* The copy's compression (struct twt_snapshot_options.compress). */
#define TWT_SNAPSHOT_AS_INPUT (-1) /* gzip if the input is gzip */
                                  /* or an enum twt_out_compress value */

/* Options of twt_snapshot_file.  Start from twt_snapshot_options_init. */
struct twt_snapshot_options {
  size_t max_record;       /* longest record held, bytes (default
                              TWT_READ_DEFAULT_MAX_RECORD) */
  int compress;            /* TWT_SNAPSHOT_AS_INPUT, or TWT_OUT_PLAIN,
                              TWT_OUT_GZIP, TWT_OUT_BY_NAME (the default:
                              gzip if out ends in ".gz") */
  int gzip_level;          /* 1..9 (default 6) */
};

/* What a snapshot read and wrote. */
struct twt_snapshot_report {
  uint64_t records;        /* records copied */
  uint64_t dropped_records; /* records cut: not copied */
  uint64_t dropped_bytes;  /* ... their bytes */
  uint64_t junk_bytes;     /* bytes of lines that were not records, not
                              copied */
  uint64_t input_bytes;    /* size of the file when opened */
  uint64_t json_bytes;     /* bytes of JSON read (decompressed) */
  uint64_t output_bytes;   /* bytes written (compressed) */
  uint64_t gzip_discarded; /* gzip: bytes inflated from a damaged end */
  uint64_t gzip_trailing;  /* gzip: bytes after the member */
  int was_gzip;            /* the file is gzip */
  int out_gzip;            /* the copy is gzip */
  int object_form;         /* {"traceEvents":[ ... ]} */
  int had_tail;            /* the file had its tail (no commit or close
                              was in progress at its end) */
  int gzip_cut;            /* gzip: the data ended inside the member */
  int gzip_corrupt;        /* gzip: invalid data */
  int complete;            /* nothing was cut or dropped: every byte read
                              was a record, padding or the tail */
};

/* Fill *opts with the defaults. */
void twt_snapshot_options_init(struct twt_snapshot_options *opts);

/* Copy the trace at in to out: NULL or "-" is the standard output,
 * written directly; a regular file is written under a temporary name in
 * its directory and renamed at the end, so out never holds a partial
 * copy; an existing file that is not a regular file is written directly.
 * out naming in itself is refused (-EEXIST).  in is never written.
 * Returns 0 (see rep->complete) or a negative code: TWT_READ_* (in is not
 * a trace, or a record is longer than max_record) or a negated errno,
 * with a one-line message naming the file in err (if err is not NULL and
 * errsize > 0; always NUL-terminated).  On error no file is left.  rep
 * may be NULL. */
int twt_snapshot_file(const char *in, const char *out,
                      const struct twt_snapshot_options *opts,
                      struct twt_snapshot_report *rep,
                      char *err, size_t errsize);

/* The one-line summary printed by the tool, without a newline, e.g.
 *   "trace.json: copied 12345 records to copy.json"
 *   "trace.json: copied 12345 records to copy.json; dropped 2 cut
 *    records (873 bytes); the tail was missing"
 * written into buf (always NUL-terminated, truncated to fit). */
void twt_snapshot_describe(const char *in, const char *out,
                           const struct twt_snapshot_report *rep,
                           char *buf, size_t size);

/* The "snapshot" subcommand: argv[0] is "snapshot".
 *   tracewriter snapshot [-o COPY] [-q] [--max-line SIZE] FILE
 * Without -o, the copy goes to the standard output, gzip if FILE is;
 * with -o COPY, gzip if COPY ends in ".gz"; "-o -" is the standard
 * output, plain.  Prints the summary and errors on stderr.  Returns the
 * exit status: 0 a complete copy, TWT_SNAPSHOT_EXIT_CUT a strict copy
 * without some cut data, 1 an error, 2 a usage error.  Resets getopt
 * (optind) itself. */
int twt_tool_snapshot_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif /* TWT_TOOLS_SNAPSHOT_H */
