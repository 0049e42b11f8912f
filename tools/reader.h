/* reader.h -- stream the records of a tracewriter trace (.json, .json.gz)
 *
 * A trace written by libtracewriter is one record per line:
 *
 *     [                           (or {"traceEvents":[ in object form)
 *     {"ph":"M","name":"process_name",...}
 *     ,{...}  or  {...},          (one comma between records)
 *     ...
 *     ]                           (or ]} or ],"key":...} in object form)
 *
 * and strings are always escaped, so a raw newline never occurs inside a
 * record.  A file left by a crash, or read while a process writes it, can
 * differ from that in the ways the library's sinks allow:
 *
 *   - the last commit cut at any byte (a multi-page write stops at a page
 *     boundary), with the old tail, or part of it, after it;
 *   - runs of spaces between a record and the next comma, and records cut
 *     among complete ones (the mmap sink: each thread copies ",\n{...}"
 *     into a region of the file reserved for it, whose unused rest stays
 *     spaces, so a cut record is a prefix of ",\n{...}" followed by
 *     spaces, and may leave a stray comma: "{A},     ," then "\n{B}");
 *   - runs of spaces, or of NUL bytes (unwritten blocks after a power
 *     loss), before the tail or where the tail should be;
 *   - a gzip member cut short, followed by stale bytes of the stored final
 *     block and trailer of an earlier commit, or by trailing garbage.
 *
 * The reader yields every complete record anywhere in the file, in file
 * order, with its offset, and drops (and counts) every cut record and
 * every line that is neither a record, padding nor the tail.  A record is
 * complete if its line, stripped of commas and padding, is one strictly
 * valid JSON object.  Unless TWT_READ_LAYOUT is given, a record line that
 * ends with a newline before the record ends, followed by a line that
 * continues it (whitespace, a quote or a closing brace first, as inside
 * a pretty-printed record: never a new record, the tail or padding), is
 * joined to it, and the record, once whole, yielded without the
 * whitespace between its tokens (info.joined_records).  It never
 * rejects a file for what it drops: only a
 * file that is not a trace at all (its first line is not the head, or the
 * line after the head is not a complete record) is an error.
 *
 * Memory is bounded whatever the size of the file: a 64 KiB read buffer
 * (and one for inflate, and 256 KiB held back at the end of a gzip
 * member), and the current line: up to max_record bytes of text plus
 * 64 KiB of padding after it (longer padding is counted, not kept).
 * Padding (spaces, NULs) is skipped 32 bytes at a time.
 *
 * A reader reads only regular files, up to the size they had when it was
 * opened (TWT_READ_FOLLOW: or a little further), with pread(2): a file
 * that another process is writing can be read (each record read is then
 * one the writer wrote, or dropped as cut), and the reader never writes.
 * One reader is not thread-safe; different readers are independent.  No
 * function prints or exits.
 *
 * Two front ends, peers behind one descriptor (tools/front.h), bid on
 * the file's first bytes, never its name: a file that provably begins as
 * the library's files do (its head line, then the process_name and
 * clock records, each on one line) is read by the crash-layout reader
 * described above (tools/front_layout.c); any other file -- a Chrome
 * Trace Event JSON document of any shape, from any program -- by the
 * general reader (tools/front_general.c, tools/jsonscan.h).
 * TWT_READ_LAYOUT and TWT_READ_GENERAL force one.  Both yield the same
 * items; the general reader's TWT_ITEM_CUT items are records that are not
 * valid JSON, and its info.tail, for the object form, holds the
 * document's other members: "],\"key\":value...}".
 *
 * These functions are for the command-line tool (repair, snapshot, and
 * the commands built on them) and its tests; they are not part of
 * libtracewriter.
 */
#ifndef TWT_TOOLS_READER_H
#define TWT_TOOLS_READER_H

#include <stddef.h>
#include <stdint.h>

#include "errors.h"       /* the tools' error codes */
#include "jsonscan.h"     /* struct twt_scan_big */
#include "records.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Errors besides the negated errno of a failed system call (-ENOENT,
 * -EACCES, -EISDIR for a directory, -EINVAL for a file that is not a
 * regular file, -ENOMEM ...): the tools' codes (tools/errors.h).  The
 * message (twt_reader_error) always explains, naming the file. */
#define TWT_READ_ENOTTRACE TWT_ENOTTRACE /* not a trace: empty, not JSON
                                     of a trace, or (TWT_READ_LAYOUT) the
                                     first line is not the head, or the
                                     line after it is not a JSON object */
#define TWT_READ_ENORECORD TWT_ENORECORD /* a trace cut before the end of
                                     its first record: no record in it */
#define TWT_READ_ELINE     TWT_ETOOBIG   /* a record longer than
                                     max_record */
#define TWT_READ_EZLIB     TWT_EZLIB     /* an internal zlib error */
#define TWT_READ_ESHRANK   TWT_ESHRANK   /* the file shrank while it was
                                     read (not with TWT_READ_FOLLOW):
                                     what was read may not be one
                                     version */

/* The longest record held in memory by default (the library's max_event
 * is 1 MiB by default; it can be raised, so readers accept far more), and
 * the smallest max_record accepted (smaller values are raised to it). */
#define TWT_READ_DEFAULT_MAX_RECORD ((size_t)64 * 1024 * 1024)
#define TWT_READ_MIN_MAX_RECORD     ((size_t)4096)

/* Flags of struct twt_read_options. */
#define TWT_READ_DROPPED 1u        /* twt_reader_next also yields the items
                                     it drops (TWT_ITEM_CUT, TWT_ITEM_JUNK) */
#define TWT_READ_FOLLOW  2u        /* a plain file that a process is writing:
                                     when the size it had at open ends
                                     inside a line, read on to its size now
                                     (up to 16 times), so that a record
                                     being appended is read whole */
#define TWT_READ_LAYOUT  4u        /* read with the crash-layout reader
                                     whatever the file holds (repair,
                                     snapshot) */
#define TWT_READ_MEMBERS 16u       /* find each record's members while
                                     checking it: item.rec (one pass) */
#define TWT_READ_GENERAL 8u        /* read with the general reader
                                     (tools/jsonscan.h) whatever the file
                                     holds */
#define TWT_READ_MEMBERS_ONLY 32u  /* only find the document's members
                                     (info.doc->members, those after the
                                     events too): the general reader,
                                     its records skipped, none yielded:
                                     the first pass of a command that
                                     must know every member before it
                                     writes a record */

/* Options of twt_reader_open.  NULL means the defaults: max_record
 * TWT_READ_DEFAULT_MAX_RECORD, no flags. */
struct twt_read_options {
  size_t max_record;       /* longest record line held, bytes (0: the
                              default); a longer line that begins like a
                              record stops the reader with TWT_READ_ELINE
                              rather than being dropped silently */
  unsigned flags;          /* TWT_READ_* */
};

/* What twt_reader_next yields. */
enum twt_item_kind {
  TWT_ITEM_RECORD = 0,      /* a complete record */
  TWT_ITEM_CUT = 1,         /* dropped: a line that began like a record
                              ("{") but is not one complete JSON object */
  TWT_ITEM_JUNK = 2         /* dropped: a line that is neither a record,
                              padding nor a valid tail */
};

typedef struct twt_read_item {
  int kind;                /* enum twt_item_kind */
  const char *text;        /* RECORD: the JSON object, "{" to "}", without
                              separators or padding; not NUL-terminated;
                              valid until the next call on the reader.
                              NULL for the other kinds. */
  size_t len;              /* RECORD: bytes of text; CUT, JUNK: bytes
                              dropped (the line's text; padding and
                              separators around it are not counted) */
  uint64_t offset;         /* offset of its first byte in the JSON text
                              (the decompressed text for gzip) */
  uint64_t line;           /* its line number, from 1 (the head; 0 for
                              the general reader) */
  const twt_rec *rec;       /* RECORD, with TWT_READ_MEMBERS: its members,
                              found while it was checked (one pass), as
                              spans; twt_rec_finish reads their values.
                              Valid until the next call.  Otherwise
                              NULL. */
} twt_read_item;

/* What the reader found so far; final once twt_reader_next returned 0. */
struct twt_read_info {
  int gzip;                /* the file is gzip (it starts 1f 8b) */
  int object_form;         /* {"traceEvents":[ ... ]} rather than [ ... ]
                              (known once the head is read, that is once
                              twt_reader_next returned anything) */
  int had_tail;            /* a valid tail line was found */
  const char *tail;        /* the tail to write: the last valid tail line
                              found (without its newline), or "]" / "]}"
                              for the form; valid until twt_reader_close */
  size_t tail_len;
  int ended;               /* the end of the data was reached */
  int strict;              /* (once ended) the file is exactly a valid
                              trace in the library's layout: the head,
                              records one comma apart, JSON whitespace
                              only, the tail, at most one newline after
                              it; for gzip, one complete member and
                              nothing after it.  Such a file needs no
                              repair. */
  uint64_t records;        /* complete records yielded */
  uint64_t joined_records; /* records spread over several lines, read
                              whole (not with TWT_READ_LAYOUT) */
  uint64_t dropped_records; /* TWT_ITEM_CUT lines */
  uint64_t dropped_bytes;  /* ... their bytes */
  uint64_t junk_bytes;     /* bytes of TWT_ITEM_JUNK lines */
  uint64_t input_bytes;    /* size of the file read: its size at open (or
                              more with TWT_READ_FOLLOW) */
  uint64_t json_bytes;     /* bytes of JSON text read (decompressed) */
  int gzip_cut;            /* gzip: the data ended before the end of the
                              member */
  int gzip_corrupt;        /* gzip: inflate stopped at invalid data (or a
                              bad CRC or length in the trailer) */
  int gzip_stale;          /* gzip: the file ended with what is left of
                              the stored block and trailer of an earlier
                              commit (a commit cut in its first bytes) */
  uint64_t gzip_trailing;  /* gzip: bytes after the member, ignored */
  uint64_t gzip_discarded; /* gzip: bytes inflated from the damaged end of
                              the data (stale or invalid), not used */
  unsigned gzip_members;   /* gzip members read (several: one after the
                              other, as gzip -d does) */

  int general;             /* read by the general reader (the text is
                              not provably the library's layout) */
  /* The document as the front end that reads it found it: its members
   * besides traceEvents (doc->members, each as ,"key":value, those after
   * the events too once read; NULL: none), the members over 1 MiB not
   * kept (doc->big, doc->nbig: where each lies in the JSON text, for a
   * command to copy from the file), and, from the general reader, what
   * it skipped (doc->skipped, stray_commas, members_dropped, bom) and
   * where the text was cut or stopped making sense (doc->cut, stopped,
   * stop_offset, stop_why).  The general reader's own info
   * (tools/jsonscan.h), not a copy; the crash-layout reader fills only
   * the members its head and tail hold.  Never NULL; valid until the
   * next call. */
  const struct twt_scan_info *doc;
};

typedef struct twt_reader twt_reader;

/* The closing bracket of the form (object_form 0: "]", 1: "]}"): the
 * library's tail (src/layout.h) without its newlines, which is what the
 * tools write after the newline that ends the last record, and nothing
 * after it.  A static string; *len its length. */
const char *twt_read_bracket(int object_form, size_t *len);

/* Open the trace at path for reading.  The file is opened with O_NONBLOCK
 * (a FIFO does not hang the open) and must be a regular file (-EISDIR for
 * a directory, -EINVAL otherwise), not empty (TWT_READ_ENOTTRACE); gzip is
 * recognised by its magic bytes.  Nothing else is read yet: errors in the
 * content come from twt_reader_next.  opts may be NULL (the defaults).
 * Returns 0 and *rp, or a negative code with *rp = NULL and a one-line
 * message naming the file in err (if err is not NULL and errsize > 0;
 * always NUL-terminated). */
int twt_reader_open(twt_reader **rp, const char *path,
                    const struct twt_read_options *opts,
                    char *err, size_t errsize);

/* The same on an open file descriptor, named name in messages.  The fd is
 * borrowed: read with pread(2) from offset 0 (its file offset is not
 * used or moved), and not closed by twt_reader_close. */
int twt_reader_open_fd(twt_reader **rp, int fd, const char *name,
                       const struct twt_read_options *opts,
                       char *err, size_t errsize);

/* The next item: a complete record, or, with TWT_READ_DROPPED, a dropped
 * line.  Returns 1 and fills *item, 0 at the end of the data (the info is
 * then final), or a negative code (TWT_READ_* or -errno) with the message
 * in twt_reader_error; an error is sticky: later calls return it again.
 * The first call reads the head: an input that is not a trace fails
 * there.  item->text stays valid until the next call on r. */
int twt_reader_next(twt_reader *r, twt_read_item *item);

/* Start again from the beginning of the file (its size is taken again),
 * as if just opened: the info and any error are reset. */
int twt_reader_rewind(twt_reader *r);

/* What was found so far (see struct twt_read_info).  Never NULL; valid
 * until twt_reader_close. */
const struct twt_read_info *twt_reader_info(const twt_reader *r);

/* The message of the first error ("NAME: what"), or "" if none. */
const char *twt_reader_error(const twt_reader *r);

/* The file descriptor read (to fstat it, or to copy the file). */
int twt_reader_fd(const twt_reader *r);

/* Close the file (unless borrowed) and free everything.  NULL is fine. */
void twt_reader_close(twt_reader *r);

#ifdef __cplusplus
}
#endif

#endif /* TWT_TOOLS_READER_H */
