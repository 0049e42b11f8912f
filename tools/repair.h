/* repair.h -- "tracewriter repair": make a crashed trace strictly valid
 *
 * A trace written by libtracewriter is one record per line:
 *
 *     [                        (or {"traceEvents":[ in object form)
 *     {"ph":"M","name":"process_name",...}
 *     ,{...}
 *     ,{...}
 *     ]                        (or ]} in object form)
 *
 * A process killed inside a commit can leave the last commit cut at any
 * byte (a multi-page write stops at a page boundary), records cut among
 * complete ones in the mmap sink's space padding (one per writing
 * thread), NUL blocks, or a gzip member without its final block and
 * trailer: see reader.h.  Repair keeps every complete record, drops the
 * rest, and writes head + records + tail again (ending exactly at the
 * tail's last byte): strict JSON, in the same form (array or object) and
 * the same compression (plain or gzip) as the input.  A file that is
 * already strictly valid (its tail followed by one newline or by nothing)
 * is not rewritten.
 *
 * Memory is bounded whatever the size of the file: the input is streamed
 * through tools/reader.h (one record held at a time, up to max_line
 * bytes) and written through tools/output.h.
 *
 * These functions are for the command-line tool and its tests; they are
 * not part of libtracewriter.  They print nothing (twt_tool_repair_main
 * excepted) and keep no global state (twt_tool_repair_main resets getopt's),
 * so repairs of different files may run in parallel threads.  Repair a
 * trace only once no process writes it any more.
 */
#ifndef TWT_TOOLS_REPAIR_H
#define TWT_TOOLS_REPAIR_H

#include <stddef.h>
#include <stdint.h>

#include "reader.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The longest record line kept by default, and the smallest max_line
 * accepted (smaller values are raised to it): see reader.h. */
#define TWT_REPAIR_DEFAULT_MAX_LINE TWT_READ_DEFAULT_MAX_RECORD
#define TWT_REPAIR_MIN_MAX_LINE     TWT_READ_MIN_MAX_RECORD

/* Errors of twt_repair_file besides the negated errno of a failed system
 * call (-ENOENT, -EACCES, -ENOSPC, -EISDIR for a directory, -EINVAL for a
 * FIFO or a device, -ENOMEM ...).  err always explains, naming the
 * file. */
#define TWT_REPAIR_ENOTTRACE TWT_READ_ENOTTRACE /* not a tracewriter trace:
                                       empty, the first line is not the
                                       head, or the second line is not a
                                       JSON object */
#define TWT_REPAIR_ENORECORD TWT_READ_ENORECORD /* a trace cut before the
                                       end of its first record: nothing
                                       to keep */
#define TWT_REPAIR_ELINE     TWT_READ_ELINE /* a record line longer than
                                       max_line */
#define TWT_REPAIR_EZLIB     TWT_READ_EZLIB /* zlib failed on the output (or
                                       an internal zlib error) */

/* Options of twt_repair_file_ex.  Start from twt_repair_options_init. */
struct twt_repair_options {
  size_t max_line;         /* longest record line held in memory, bytes
                              (default TWT_REPAIR_DEFAULT_MAX_LINE) */
  int dry_run;             /* 1: scan and report, write nothing */
  int gzip_level;          /* level of a rewritten gzip file, 1..9
                              (default 6) */
};

/* What a repair found and did. */
struct twt_repair_report {
  uint64_t kept_records;   /* complete records in the output (for a valid
                              input: in the file), the first one included */
  uint64_t dropped_records; /* partial or invalid lines that began like a
                              record ("{"): dropped */
  uint64_t dropped_bytes;  /* bytes of those lines (their padding not
                              counted) */
  uint64_t junk_bytes;     /* bytes of other lines that were neither
                              records, padding nor the tail: dropped */
  uint64_t input_bytes;    /* size of the input file (compressed) */
  uint64_t json_bytes;     /* bytes of JSON read (decompressed for gzip) */
  uint64_t output_bytes;   /* bytes written to the output file (0 if none
                              was written) */
  uint64_t gzip_trailing;  /* gzip: bytes after the end of the member,
                              ignored */
  int was_valid;           /* the input was already a strictly valid trace
                              in the library's layout: not rewritten */
  int was_gzip;            /* the input was gzip (it starts 1f 8b) */
  int object_form;         /* {"traceEvents":[ ... ]} rather than [ ... ] */
  int had_tail;            /* a valid tail line was found in the input */
  int gzip_cut;            /* gzip: the compressed data ended before the
                              end of the member (truncated) */
  int gzip_corrupt;        /* gzip: inflate stopped at invalid data */
  int gzip_stale;          /* gzip: the file ended with the stored block
                              and trailer of an earlier commit (a commit
                              cut in its first bytes) */
  uint64_t gzip_discarded; /* gzip: bytes inflated from the damaged end
                              of the data (stale or invalid), not used */
  int written;             /* an output file was written (repaired, or a
                              valid input copied to out) */
  int in_place;            /* the output replaced the input */
};

/* Fill *opts with the defaults. */
void twt_repair_options_init(struct twt_repair_options *opts);

/* Repair the trace at in.  With out == NULL (or naming the same file) the
 * repaired trace replaces in atomically: a temporary file in the same
 * directory is written, fsync'ed, given in's permission bits (and owner
 * when allowed), and renamed over in (a symbolic link is followed: its
 * target is replaced).  With out, in is left alone and out is written
 * the same way (a valid input is copied to out as it is); out may also be
 * an existing non-regular file such as /dev/stdout, then written directly.
 * A valid input with out == NULL is left untouched (same inode, same
 * bytes, same mtime).
 *
 * Returns 0 (repaired, or already valid: see rep->was_valid) or a negative
 * code: TWT_REPAIR_* or a negated errno, with a one-line message naming the
 * file in err (if err is not NULL and errsize > 0; always NUL-terminated).
 * On error no file is changed and no temporary file is left.  rep may be
 * NULL; when given it is filled as far as the scan got, even on error. */
int twt_repair_file(const char *in, const char *out,
                    struct twt_repair_report *rep, char *err, size_t errsize);

/* The same with options (opts NULL: the defaults). */
int twt_repair_file_ex(const char *in, const char *out,
                       const struct twt_repair_options *opts,
                       struct twt_repair_report *rep,
                       char *err, size_t errsize);

/* The one-line summary printed by the tool, without a newline, e.g.
 *   "trace.json: kept 12345 records, dropped 1 partial record (873
 *    bytes); repaired in place"
 *   "trace.json: already valid (12345 records)"
 * written into buf (always NUL-terminated, truncated to fit). */
void twt_repair_describe(const char *in, const char *out,
                         const struct twt_repair_report *rep,
                         char *buf, size_t size);

/* The "repair" subcommand: argv[0] is "repair".
 *   tracewriter repair [-o OUT] [-n] [-q] [--max-line SIZE] FILE
 * Prints the summary on stdout and errors on stderr.  Returns the exit
 * status: 0 repaired or already valid, 1 an error (I/O, not a trace, a
 * line too long), 2 a usage error.  Resets getopt (optind) itself, so it
 * may be called more than once in a process. */
int twt_tool_repair_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif


#endif /* TWT_TOOLS_REPAIR_H */
