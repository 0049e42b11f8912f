/* output.h -- write a trace (plain or gzip) for the command-line tool
 *
 * The output of a command that writes a new trace (repair, snapshot, and
 * the commands built on tools/reader.h): either a regular file, written
 * under a temporary name in the same directory, synced and renamed over
 * its name at twt_out_commit, so that the name never holds a partial
 * trace; or written directly: the standard output, or an existing file
 * that is not a regular file (/dev/null, a FIFO, a terminal).
 *
 * twt_out_record and twt_out_end write the library's layout, which the
 * reader reads back: the head and the first record on the first line
 * after it, ",\n" before every later record, and "\n" and the tail at the
 * end, with nothing after the tail (not even a newline: Perfetto rejects
 * bytes after the final "]" that fall in a later read chunk):
 *
 *     [\n{first}                (or {"traceEvents":[\n{first})
 *     ,\n{...}
 *     \n]                       (or \n]} or the object form's tail)
 *
 * Nothing is created before the first byte is written, so a command that
 * fails before (on an input that is not a trace) leaves no file.  On any
 * error no temporary file is left, and an existing file of that name is
 * unchanged.  Every function returns 0 or a negative code (a negated
 * errno, or TWT_OUT_EZLIB) with a message naming the file in
 * twt_out_error; the first error is sticky.  No function prints or exits.
 * One twt_out is not thread-safe; different ones are independent.
 */
#ifndef TWT_TOOLS_OUTPUT_H
#define TWT_TOOLS_OUTPUT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "reader.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TWT_OUT_EZLIB TWT_EZLIB    /* zlib failed */

/* How the output is compressed. */
enum twt_out_compress {
  TWT_OUT_PLAIN = 0,
  TWT_OUT_GZIP = 1,               /* one gzip member */
  TWT_OUT_BY_NAME = 2             /* gzip if the name ends in ".gz" */
};

/* Options of twt_out_open.  Start from twt_out_options_init. */
struct twt_out_options {
  int compress;            /* enum twt_out_compress (default TWT_OUT_PLAIN) */
  int level;               /* gzip level 1..9 (default 6) */
  const char *tag;         /* the temporary file is ".NAME.TAG-XXXXXXXX"
                              (default "tmp") */
  int set_mode;            /* give the new file mode (default: an existing
                              file's mode, or 0666 less the umask) */
  mode_t mode;
  int set_owner;           /* give the new file uid and gid (when allowed:
                              an error to do so is ignored) */
  uid_t uid;
  gid_t gid;
  int ndjson;              /* newline-delimited JSON: each record then a
                              newline, and nothing else (no head, no
                              separators, no tail) */
};

typedef struct twt_out twt_out;

/* Fill *opts with the defaults. */
void twt_out_options_init(struct twt_out_options *opts);

/* Prepare the output to path; NULL or "-" is the standard output.  Checks
 * what path is now: a directory is refused (-EISDIR); an existing file
 * that is not a regular file is written directly; a symbolic link is
 * followed (its target is replaced); an existing regular file keeps its
 * permission bits.  Nothing is created yet.  Returns 0 and *op, or a
 * negative code with *op = NULL and a message in err (if err is not NULL
 * and errsize > 0; always NUL-terminated). */
int twt_out_open(twt_out **op, const char *path,
                 const struct twt_out_options *opts, char *err,
                 size_t errsize);

/* Append len raw bytes (compressed if the output is gzip). */
int twt_out_write(twt_out *o, const void *data, size_t len);

/* Append one record, text[0..len) (a JSON object, one line): the first
 * one after the head of the form (object_form: {"traceEvents":[), the
 * later ones after ",\n".  object_form is used at the first record or
 * twt_out_end only. */
int twt_out_record(twt_out *o, int object_form, const char *text, size_t len);

/* Append "\n" and the tail, tail[0..len) without a newline ("]", "]}",
 * or an object form's "],...}"); NULL: the tail of the form.  A trace
 * without records gets its head first. */
int twt_out_end(twt_out *o, int object_form, const char *tail, size_t len);

/* Write every record r yields from where it is, then "\n" and its tail:
 * a copy of what r reads, strict JSON.  Returns 0 or the negative code of
 * the first failure, whose message is in twt_reader_error(r) (reading) or
 * twt_out_error(o) (writing). */
int twt_out_copy_trace(twt_out *o, twt_reader *r);

/* 1 if path names the file st describes (the same device and inode),
 * to refuse an output that would replace the input. */
int twt_out_same_file(const char *path, const struct stat *st);

/* Finish: end the gzip member, write out the buffer, fsync, and rename
 * the temporary file over the path (then fsync its directory).  Creates
 * an empty output if nothing was written. */
int twt_out_commit(twt_out *o);

/* Free everything; before twt_out_commit, remove the temporary file (what
 * was written directly stays written).  NULL is fine. */
void twt_out_close(twt_out *o);

/* The message of the first error, or "" if none. */
const char *twt_out_error(const twt_out *o);

/* Bytes written to the file so far (compressed), and records written. */
uint64_t twt_out_bytes(const twt_out *o);
uint64_t twt_out_records(const twt_out *o);

/* 1 if the output is gzip. */
int twt_out_is_gzip(const twt_out *o);

/* 1 if the output is newline-delimited JSON (records only). */
int twt_out_is_ndjson(const twt_out *o);

/* 1 if the output is written directly (standard output or a file that is
 * not a regular file): nothing is renamed. */
int twt_out_is_direct(const twt_out *o);

#ifdef __cplusplus
}
#endif

#endif /* TWT_TOOLS_OUTPUT_H */
