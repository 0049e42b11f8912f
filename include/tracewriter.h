/* tracewriter.h -- the public interface of libtracewriter
 *
 * tracewriter writes Chrome Trace Event Format JSON (what Perfetto,
 * chrome://tracing and Chrome DevTools open) incrementally to a file.  The
 * file is a complete, strictly valid JSON document again at every commit
 * point, so a process that crashes or is killed leaves a trace that opens,
 * and memory stays bounded however long the process runs.
 *
 * Conventions, for every function below unless its paragraph says otherwise:
 *
 *  - Functions that can fail return 0 on success or a negative error code:
 *    the negated errno for system errors (-ENOSPC, -EIO, ...) or one of the
 *    TW_E* codes below.  tw_strerror() turns a code into a message.
 *  - A NULL writer is a valid, disabled writer: every call on it returns 0
 *    (or does nothing) at once.  tw_global() returns NULL when tracing is
 *    off, so instrumented code needs no "if".
 *  - The library never exits or aborts, and never prints (tw_global()'s
 *    one line about a bad environment aside).  It allocates in tw_open*,
 *    at a thread's first event on a writer (its staging area and buffer
 *    slot, freed when the thread exits or the writer closes), the first
 *    time a thread emits an event larger than 4 KiB (a scratch buffer
 *    that grows to at most max_event bytes), and when a file is begun
 *    again (rotation, a copytruncate: the new file's sink and, gzip,
 *    zlib's state): never per event.
 *  - All strings are NUL-terminated UTF-8 unless a length is given.
 *
 * Thread safety: any number of threads may emit events on one writer at
 * once; the events of one thread appear in the file in the order they were
 * emitted.  tw_close() must not race with other calls on the same writer.
 * Nothing here is async-signal-safe.  A crash is handled by the library's
 * own signal handler instead: see the crash option (tw_options.crash).
 */
#ifndef TRACEWRITER_H
#define TRACEWRITER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
# define TW_EXTERN
#elif defined(__GNUC__) && __GNUC__ >= 4
# define TW_EXTERN __attribute__((visibility("default")))
#else
# define TW_EXTERN
#endif

#define TW_VERSION_MAJOR 0
#define TW_VERSION_MINOR 1
#define TW_VERSION_PATCH 0
#define TW_VERSION_STRING "0.1.0"

/* The version of the library actually linked, as "MAJOR.MINOR.PATCH". */
TW_EXTERN const char *tw_version(void);

/* ------------------------------------------------------------------------
 * Error codes
 *
 * System errors are the negated errno.  The library's own codes sit below
 * -1000 so they never collide with an errno.  TW_ERRNO_MAP is the one table
 * that generates the enum, tw_strerror() and tw_err_name().
 */
#define TW_ERRNO_MAP(XX)                                                      \
  XX(EOPTION,   -1001, "invalid option key or value")                        \
  XX(EVERSION,  -1002, "options or stats struct from an incompatible version")\
  XX(EEVENT,    -1003, "invalid event: missing or wrong field for its phase")\
  XX(EUTF8,     -1004, "string is not valid UTF-8")                          \
  XX(ENONFINITE,-1005, "number is NaN or infinite")                          \
  XX(ETOOLONG,  -1006, "string longer than max_string")                      \
  XX(ETOOBIG,   -1007, "event larger than max_event once formatted")         \
  XX(EJSON,     -1008, "raw JSON argument is not valid JSON")                \
  XX(ETOOMANY,  -1009, "too many arguments (more than TW_MAX_ARGS)")         \
  XX(EFORKED,   -1010, "writer belongs to the parent process (after fork)")  \
  XX(ESINK,     -1011, "sink not available for this output")                \
  XX(EZLIB,     -1012, "zlib error")                                         \
  XX(EDROPPED,  -1013, "event dropped: every buffer full (on_full=drop)")   \
  XX(EBUSY,     -1014, "another writer has this trace file open (put %p in the path for a file per process)")

typedef enum tw_errno {
#define TW__ERR_ENUM(name, value, msg) TW_##name = (value),
  TW_ERRNO_MAP(TW__ERR_ENUM)
#undef TW__ERR_ENUM
  TW_ERRNO_END_ = -2000
} tw_errno;

/* A static, human-readable message for an error code (0 gives "success";
 * a negated errno gives strerror's text; an unknown code gives "unknown
 * error").  Thread-safe; the string is never freed. */
TW_EXTERN const char *tw_strerror(int code);

/* The symbolic name of an error code: "TW_EEVENT", "ENOSPC", "0" ... or
 * "UNKNOWN".  Thread-safe; static string. */
TW_EXTERN const char *tw_err_name(int code);

/* ------------------------------------------------------------------------
 * Options
 */

/* Layout of the file: a bare array (the default; Perfetto opens a truncated
 * array, which matters after a crash) or {"traceEvents":[...]}. */
enum tw_format { TW_FORMAT_ARRAY = 0, TW_FORMAT_OBJECT = 1 };

/* Where the bytes go.  AUTO picks GZIP for a tw_open path ending in ".gz",
 * FILE otherwise.  tw_open_stream takes only AUTO or FILE.  MMAP needs a
 * regular file open for reading and writing (O_RDWR), without O_APPEND
 * (tw_open opens it so).  Anything else is TW_ESINK at open. */
enum tw_sink { TW_SINK_AUTO = 0, TW_SINK_FILE = 1, TW_SINK_MMAP = 2,
               TW_SINK_GZIP = 3 };

/* Who writes commits to the output.  INLINE: the thread that fills a
 * buffer (or calls tw_flush) writes it.  BACKGROUND: a committer thread
 * writes full buffers while producers fill the next one (buffer_count
 * buffers in all); producers wait only when every buffer is full.  AUTO:
 * BACKGROUND for gzip (deflate stays off the producers' threads), INLINE
 * otherwise. */
enum tw_commit { TW_COMMIT_AUTO = 0, TW_COMMIT_INLINE = 1,
                 TW_COMMIT_BACKGROUND = 2 };

/* What a producer does when every buffer is full because the committer
 * (the disk, or the compressor) cannot keep up.  BLOCK waits for a free
 * buffer.  DROP never waits: the event is dropped (TW_EDROPPED, counted in
 * tw_stats) and the next commit carries a global instant event
 * "tracewriter: events dropped" with the count, so the loss shows in the
 * viewer.  Only a background committer can be full. */
enum tw_on_full { TW_ON_FULL_BLOCK = 0, TW_ON_FULL_DROP = 1 };

/* What the writer does when the process dies by a signal (tw_options.crash).
 * OFF: nothing; the file keeps its last commit.  COMMIT: the crash hook.
 * The open function installs (once per process, and again if the program
 * has replaced it since) a handler for SIGSEGV, SIGBUS, SIGFPE, SIGILL,
 * SIGABRT and SIGTERM that commits what every such writer of the process
 * has buffered, then puts back the action the program had before and
 * raises the signal again (after an instruction's fault: returns to it, to
 * fault again with the same address), so the process dies as it would
 * have, or the program's own handler runs, after the commit.  A crash then
 * loses nothing emitted before it.
 *
 * The handler is async-signal-safe: it allocates nothing and takes no lock
 * (a crashed thread may hold the writer's); it calls only write, writev,
 * pwrite, pwritev, ftruncate, fdatasync (sync option), nanosleep, getpid,
 * gettid, sigaction and raise, and zlib's deflate and crc32 for gzip (pure
 * computation: zlib allocates only at open).  It reads each buffer's
 * length, published only once a whole record is copied in, so a record
 * half-copied by any thread is left out and every one before it is
 * written.  A commit in flight in another thread is waited for (at most
 * TW_CRASH_WAIT_MS); one that the crashing thread itself was making (a
 * fault inside the library) is left as it is: the file can then be cut
 * inside that commit, as after SIGKILL.  Committing threads block SIGTERM
 * meanwhile, so SIGTERM does not cut a commit (unless one outlasts the
 * wait).  The mmap sink needs nothing (each record is committed as it is
 * copied).
 *
 * On a streamed output (pipe, stdio stream) the tail is written too only
 * if the signal's previous action was the default (the process is sure to
 * die); a process that survives its own handler goes on with a consistent
 * trace on every sink.
 *
 * Limits: at most TW_CRASH_MAX_WRITERS writers of a process have the hook
 * at once (opening another fails with TW_EOPTION); a signal the program
 * ignores (SIG_IGN) at open is left alone; a handler the program installs
 * after open replaces the hook (install yours first: it runs after the
 * commit); a stack overflow needs an alternate signal stack (sigaltstack)
 * for any handler to run.  After fork(), a child's crash never commits the
 * parent's writers. */
enum tw_crash { TW_CRASH_OFF = 0, TW_CRASH_COMMIT = 1 };

#define TW_CRASH_MAX_WRITERS     16u
#define TW_CRASH_WAIT_MS         2000u

/* Bits of tw_options.flags: strict behaviour is opt-in per kind of bad
 * input; the defaults replace and go on. */
#define TW_OPT_REJECT_INVALID_UTF8 0x01u /* TW_EUTF8 instead of U+FFFD */
#define TW_OPT_REJECT_NONFINITE    0x02u /* TW_ENONFINITE instead of null */
#define TW_OPT_REJECT_LONG_STRINGS 0x04u /* TW_ETOOLONG instead of cutting */
#define TW_OPT_SYNC                0x08u /* fdatasync each commit (mmap:
                                            msync of the mapped window, and
                                            fdatasync if it moved, at
                                            tw_flush and tw_close) */
#define TW_OPT_FORMAT_COMMITTER    0x10u /* with a committer thread
                                            (commit=background, gzip,
                                            flush=): producers copy most
                                            events unformatted and the
                                            committer formats them; the
                                            file is the same byte for
                                            byte (tracewriter(7)) */

#define TW_DEFAULT_BUFFER_SIZE   (64u * 1024u)
#define TW_DEFAULT_BUFFER_COUNT  4u
#define TW_MAX_BUFFER_COUNT      8u
#define TW_DEFAULT_MMAP_CHUNK    (1024u * 1024u)
#define TW_DEFAULT_GZIP_LEVEL    1
#define TW_MIN_BUFFER_SIZE       256u
#define TW_DEFAULT_MAX_STRING    (64u * 1024u)
#define TW_MIN_MAX_STRING        64u
#define TW_MIN_ROTATE_SIZE       4096u
#define TW_DEFAULT_MAX_EVENT     (1024u * 1024u)
#define TW_MAX_ARGS              1024u
#define TW_MAX_JSON_DEPTH        64u

/* Options for tw_open*.  Always start from tw_options_init(), which fills
 * the defaults, then set fields or call tw_options_parse().  New fields are
 * only ever appended; struct_size tells the library which ones the caller
 * knows, so a program built against an older header keeps working. */
typedef struct tw_options {
  size_t struct_size;     /* set by tw_options_init: sizeof(tw_options) as
                             the caller compiled it; do not change */
  size_t buffer_size;     /* bytes buffered between commits; a full buffer
                             commits (default 64 KiB, at least 256) */
  int format;             /* enum tw_format (default TW_FORMAT_ARRAY) */
  int sink;               /* enum tw_sink (default TW_SINK_AUTO) */
  int gzip_level;         /* 1..9 for the gzip sink (default
                             TW_DEFAULT_GZIP_LEVEL) */
  unsigned flags;         /* TW_OPT_* bits (default 0) */
  size_t max_string;      /* longest string written, in input bytes; longer
                             ones are cut on a UTF-8 boundary or rejected
                             (default 64 KiB, from 64 to 1 GiB) */
  size_t max_event;       /* largest formatted record; larger events fail
                             with TW_ETOOBIG (default 1 MiB, at least 4 KiB) */
  const char *process_name; /* name in the first record (default: the
                             program's short name); copied at open */
  int file_mode;          /* permission bits for tw_open's file (default
                             0644, before the umask) */
  int commit;             /* enum tw_commit (default TW_COMMIT_AUTO) */
  unsigned buffer_count;  /* buffers of buffer_size with a background
                             committer, 2..TW_MAX_BUFFER_COUNT (default 4) */
  size_t mmap_chunk;      /* the mmap sink grows the file by this much
                             (default 1 MiB, at least 4 KiB) */
  uint64_t flush_interval_ns; /* > 0: a committer thread commits at least
                             this often, so the file is never older than
                             that (default 0: commit only when a buffer
                             fills, at tw_flush and tw_close) */
  int on_full;            /* enum tw_on_full (default TW_ON_FULL_BLOCK) */
  int crash;              /* enum tw_crash (default TW_CRASH_OFF) */
  uint64_t rotate_size;   /* tw_open only.  > 0: once the file holds this
                             many bytes (compressed bytes for gzip) past
                             its head and metadata, the commit finishes it
                             and starts a new one (default 0: never; at
                             least 4 KiB) */
  uint64_t rotate_interval_ns; /* tw_open only.  > 0: the first commit
                             this long after a file was begun, if the file
                             holds events, finishes it and starts a new
                             one (default 0: never) */
  unsigned rotate_keep;   /* with rotation: finished files kept; the
                             oldest beyond that are deleted (default 0:
                             keep every one) */
  int timebase;           /* enum tw_timebase: the clock of every "ts"
                             (default TW_TIMEBASE_MONOTONIC) */
  int rank;               /* the process's rank among many (a distributed
                             job's), written as distributedInfo (object
                             form) and as the process's label and sort
                             index; TW_RANK_AUTO (the default): the RANK
                             environment variable if set, else none */
  unsigned gzip_threads;  /* the gzip sink: the most threads deflating one
                             commit, the committing thread and workers
                             (1..17; 1: no worker thread).  0 (the
                             default): one per CPU, the workers started
                             only once commits take half the writer's
                             time, and a commit split only while they
                             take a quarter of it */
} tw_options;

/* The clock of the "ts" fields.  MONOTONIC: CLOCK_MONOTONIC, tw_now_ns,
 * as given.  KINETO: what the PyTorch profiler (Kineto) writes, so that
 * its traces and ours line up: microseconds of the wall clock since a
 * base that every process of a run shares, the wall clock floored to a
 * multiple of 7889238 s (about three months); converted from the
 * monotonic clock by the offset read at open (so no NTP step moves it);
 * the object form carries the base as "baseTimeNanoseconds". */
enum tw_timebase { TW_TIMEBASE_MONOTONIC = 0, TW_TIMEBASE_KINETO = 1 };
#define TW_KINETO_BASE_SECONDS 7889238u
/* rank: take it from the RANK environment variable, else write none. */
#define TW_RANK_AUTO 0x7fffffff

/* Fill *opts with the defaults.  Use the macro tw_options_init(opts); it
 * passes the size of the struct the caller was compiled with.  Returns 0,
 * -EINVAL if opts is NULL, or TW_EVERSION (as tw_open and tw_options_parse
 * for such a struct_size) if size is smaller than any tw_options ever
 * published; *opts is then left untouched. */
TW_EXTERN int tw_options_init_sized(tw_options *opts, size_t size);
#define tw_options_init(opts) tw_options_init_sized((opts), sizeof(tw_options))

/* Apply an options string to *opts (already initialised), e.g.
 * "buffer=256KiB,format=object,utf8=reject".  Items are separated by
 * commas, each "key=value" or a bare key, applied from left to right;
 * blanks (spaces, tabs) around keys, values and commas are ignored, empty
 * items skipped.  SIZE: bytes, with an optional unit in any case, all
 * powers of 1024: k, kb, kib, m, mb, mib, g, gb, gib.  DURATION: a number
 * and a unit in any case: ns, us, ms, s, m (minutes), h.  Keys and words
 * are case-sensitive.  The keys, the field each sets, range and default:
 *   buffer=SIZE                   buffer_size, 256 to 1GiB; default 64KiB
 *   buffers=N                     buffer_count, 2 to 8; default 4
 *   commit=auto|inline|background commit; default auto
 *   flush=DURATION|off            flush_interval_ns; default off
 *   on_full=block|drop            on_full; default block
 *   formatter=producer|committer  TW_OPT_FORMAT_COMMITTER; default producer
 *   sync, sync=off|on             TW_OPT_SYNC; default off
 *   crash=off|commit              crash; default off
 *   rotate=SIZE|off               rotate_size, at least 4KiB; default off
 *   rotate_every=DURATION|off     rotate_interval_ns; default off
 *   keep=N|all                    rotate_keep, at least 1; default all
 *   timebase=monotonic|kineto     timebase; default monotonic
 *   rank=N|auto                   rank, 0 to 2147483646; default auto
 *   format=array|object           format; default array
 *   sink=auto|file|mmap|gzip      sink; default auto
 *   mmap                          sink=mmap
 *   gzip, gzip=LEVEL              gzip_level, 1 to 9, and sink=gzip; default 1
 *   gzip_threads=N|auto           gzip_threads, 1 to 17; default auto
 *   chunk=SIZE                    mmap_chunk, 4KiB to 1GiB; default 1MiB
 *   utf8=replace|reject           TW_OPT_REJECT_INVALID_UTF8; default replace
 *   nonfinite=null|reject         TW_OPT_REJECT_NONFINITE; default null
 *   long=truncate|reject          TW_OPT_REJECT_LONG_STRINGS; default truncate
 *   max_string=SIZE               max_string, 64 to 1GiB; default 64KiB
 *   max_event=SIZE                max_event, 4KiB to 1GiB; default 1MiB
 * On error returns TW_EOPTION, leaves *opts unchanged, and writes a message
 * naming the bad key or value into err (if err is not NULL and errsize > 0;
 * always NUL-terminated).  A NULL or empty string is valid and changes
 * nothing.  Returns TW_EVERSION for a struct_size the library does not
 * know, -EINVAL if opts is NULL.  Thread-safe. */
TW_EXTERN int tw_options_parse(tw_options *opts, const char *str,
                               char *err, size_t errsize);

/* ------------------------------------------------------------------------
 * Writers
 */
typedef struct tw_writer tw_writer;

/* Write a trace to the file at path: the head and the first records (a
 * process_name metadata event, the clock record) are committed at once,
 * so the file is a valid trace from the start.  What is at path:
 * nothing -- the file is made complete before the path names it (never
 * taking the name of a file made meanwhile); an existing regular file or
 * a symbolic link to one -- opened by the kernel (its permissions and
 * protected_symlinks apply) and written in place, inode, mode, owner and
 * hard links kept; /dev/stdout, /dev/stderr, /dev/stdin, /dev/fd/N,
 * /proc/self/fd/N -- that descriptor, written as tw_open_fd would (a file
 * opened for appending is appended to); a FIFO or device -- streamed.
 * One writer per file: the file is locked (an OFD lock) from open to
 * close and across rotation, and a second tw_open of it, in any process,
 * fails with TW_EBUSY.  opts may be NULL for the defaults.  Returns the writer, or NULL
 * with *error (if error is not NULL) set to the reason (a process_name
 * longer than about 4 KiB once escaped is TW_ETOOBIG).  A file created or
 * truncated before a later step failed is left in place.
 *
 * Rotation (rotate_size, rotate_interval_ns): at the commit that is due,
 * a new file that begins with the head and the 'M' records emitted so far
 * (the latest per name, process and thread, at most 64 KiB) takes the
 * path, and the old one, renamed path with ".NNNNNN" before its extension
 * (trace.json -> trace.000001.json, numbered from 1 in order, beside the
 * file a link leads to), is finished with its inode and links, the new
 * file getting its mode and owner; the path names a complete trace at
 * every moment, and every
 * file is a complete trace on its own; with rotate_keep, older finished
 * files are deleted.  The files stay in the directory that path named at
 * open, whatever the working directory later; a name too long for the
 * numbers fails here with -ENAMETOOLONG.  A 'B' whose 'E' lands in
 * the next file is left open in its file, and the 'E' alone in the next
 * (viewers ignore it): spans are not carried over; 'X' events are always
 * whole.  If the new file cannot be begun, the old one keeps the path and
 * the error is sticky.  tw_open_fd and tw_open_stream refuse rotation
 * (TW_EOPTION), and so does tw_open of a descriptor's name such as
 * /dev/stdout; tw_open of anything but a regular file, such as a FIFO or
 * /dev/null, refuses it with TW_ESINK. */
TW_EXTERN tw_writer *tw_open(const char *path, const tw_options *opts,
                             int *error);

/* Like tw_open on an open file descriptor, which stays the caller's: the
 * writer never closes it.  The trace starts at the fd's current offset.
 * A regular file is committed in place (it is cut at the current offset,
 * and the tail is rewritten at every commit).  Anything else -- a pipe,
 * FIFO, socket, terminal, device, or an fd opened with O_APPEND -- cannot
 * be rewritten: the writer streams records and writes the tail only
 * at tw_close, so the output is a valid trace only after tw_close (a
 * truncated array before, which Perfetto still opens). */
TW_EXTERN tw_writer *tw_open_fd(int fd, const tw_options *opts, int *error);

/* Like tw_open_fd on a stdio stream, which stays the caller's (tw_close
 * flushes it, never closes it).  Always streams: the tail is written at
 * tw_close only.  The writer calls fwrite/fflush under its own lock; do not
 * write to the stream from elsewhere while the writer is open. */
TW_EXTERN tw_writer *tw_open_stream(FILE *stream, const tw_options *opts,
                                    int *error);

/* Commit: write the buffered records and the tail so the file is a complete
 * JSON document holding every event emitted before the call.  Returns 0 or
 * the writer's (sticky) error. */
TW_EXTERN int tw_flush(tw_writer *w);

/* Commit, close the file (tw_open only) and free the writer, always, even
 * on error.  Returns 0 or the first error the writer met, including that of
 * the last commit and of close(2).  In a child after fork(), frees the
 * writer without writing anything and returns 0. */
TW_EXTERN int tw_close(tw_writer *w);

/* The writer's sticky error: 0 while all is well, else the first I/O error
 * (TW_EFORKED in a child after fork).
 * Once set, every event call and tw_flush returns it at once; the file keeps
 * its last commit.  Bad input (TW_EEVENT, TW_EUTF8...) is returned by the
 * call that made it and is never sticky.  Returns 0 for NULL. */
TW_EXTERN int tw_errcode(const tw_writer *w);

/* Counters of a writer, copied by tw_get_stats().  New fields are only
 * ever appended: a program built against an older, smaller tw_stats keeps
 * working (it gets the fields it knows). */
typedef struct tw_stats {
  uint64_t events;           /* events written (staged or committed) */
  uint64_t bytes;            /* bytes of records written, head included */
  uint64_t commits;          /* commits done */
  uint64_t rejected;         /* events refused as bad input */
  uint64_t strings_truncated;/* strings cut to max_string */
  uint64_t utf8_replaced;    /* strings with invalid UTF-8 replaced */
  uint64_t dropped;          /* events dropped by on_full=drop */
  int error;                 /* the sticky error, as tw_errcode() */
  uint64_t output_bytes;     /* bytes committed to the output, the tail not
                                counted: compressed bytes for gzip; the
                                mmap sink's padding not counted; with
                                rotation, every file's */
  uint64_t rotations;        /* files begun by rotation */
  uint64_t restarts;         /* documents begun again at the start of the
                                file because it was truncated under the
                                writer (logrotate's copytruncate) */
} tw_stats;

/* Copy the writer's counters into *stats.  Use the macro
 * tw_get_stats(w, &s); it passes the size of the struct the caller was
 * compiled with.  A size smaller than the first published tw_stats is
 * TW_EVERSION; a larger one (a newer header) gets the fields this library
 * knows and zeros after them.  Returns 0, -EINVAL if stats is NULL, or
 * TW_EVERSION.  A NULL writer gives all zeros.  Thread-safe. */
TW_EXTERN int tw_get_stats_sized(tw_writer *w, tw_stats *stats, size_t size);
#define tw_get_stats(w, stats) \
  tw_get_stats_sized((w), (stats), sizeof(tw_stats))

/* ------------------------------------------------------------------------
 * Events
 */

/* Argument types.  Strings are escaped; raw JSON is checked (strict RFC
 * 8259, at most TW_MAX_JSON_DEPTH deep) and written as it is, newlines
 * turned into spaces. */
enum tw_arg_type { TW_ARG_INT = 1, TW_ARG_UINT, TW_ARG_DOUBLE, TW_ARG_BOOL,
                   TW_ARG_STRING, TW_ARG_NULL, TW_ARG_JSON };

/* Passed as a length: the string is NUL-terminated (its length is
 * strlen's). */
#define TW_NUL_TERMINATED ((size_t)-1)

typedef struct tw_arg {
  const char *name;       /* the key, escaped like any string; not NULL */
  int type;               /* enum tw_arg_type */
  size_t len;             /* STRING/JSON: byte length, or
                             TW_NUL_TERMINATED */
  union {
    int64_t i;            /* TW_ARG_INT */
    uint64_t u;           /* TW_ARG_UINT: above INT64_MAX written as
                             the nearest double (exponent form) */
    double d;             /* TW_ARG_DOUBLE: NaN/Inf -> null or rejected */
    int b;                /* TW_ARG_BOOL: nonzero is true */
    const char *s;        /* TW_ARG_STRING, TW_ARG_JSON; NULL -> null */
  } v;
} tw_arg;

/* Constructors for tw_arg, usable from C99 and C++. */
static inline tw_arg tw_arg_int(const char *name, int64_t v)
{ tw_arg a; a.name = name; a.type = TW_ARG_INT; a.len = 0; a.v.i = v; return a; }
static inline tw_arg tw_arg_uint(const char *name, uint64_t v)
{ tw_arg a; a.name = name; a.type = TW_ARG_UINT; a.len = 0; a.v.u = v; return a; }
static inline tw_arg tw_arg_double(const char *name, double v)
{ tw_arg a; a.name = name; a.type = TW_ARG_DOUBLE; a.len = 0; a.v.d = v; return a; }
static inline tw_arg tw_arg_bool(const char *name, int v)
{ tw_arg a; a.name = name; a.type = TW_ARG_BOOL; a.len = 0; a.v.b = v; return a; }
static inline tw_arg tw_arg_str(const char *name, const char *v)
{ tw_arg a; a.name = name; a.type = TW_ARG_STRING; a.len = TW_NUL_TERMINATED; a.v.s = v; return a; }
static inline tw_arg tw_arg_strn(const char *name, const char *v, size_t len)
{ tw_arg a; a.name = name; a.type = TW_ARG_STRING; a.len = len; a.v.s = v; return a; }
static inline tw_arg tw_arg_null(const char *name)
{ tw_arg a; a.name = name; a.type = TW_ARG_NULL; a.len = 0; a.v.s = NULL; return a; }
static inline tw_arg tw_arg_json(const char *name, const char *json)
{ tw_arg a; a.name = name; a.type = TW_ARG_JSON; a.len = TW_NUL_TERMINATED; a.v.s = json; return a; }

/* Bits of tw_event.has: which optional fields are set.  A zeroed tw_event
 * takes every default: ts = now, pid = getpid(), tid = the kernel thread
 * id, no id, no tts/tdur.  A bit not listed here is TW_EEVENT. */
#define TW_HAS_TS      0x01u /* ts given (else: now) */
#define TW_HAS_PID     0x02u /* pid given (else: getpid()) */
#define TW_HAS_TID     0x04u /* tid given (else: gettid()) */
#define TW_HAS_TTS     0x08u /* thread timestamp tts */
#define TW_HAS_TDUR    0x10u /* thread duration tdur (X) */
#define TW_HAS_ID      0x20u /* id, written "id":"0x.." (or as id2: flags) */
#define TW_HAS_BIND_ID 0x40u /* bind_id (flow v2 on X/B/I...) */

/* Bits of tw_event.flags: how some fields are written.  A bit not listed
 * here is TW_EEVENT. */
#define TW_EV_ID2_LOCAL    0x01u /* the id as "id2":{"local":"0x.."} (with
                                    TW_HAS_ID) */
#define TW_EV_ID2_GLOBAL   0x02u /* the id as "id2":{"global":"0x.."} (with
                                    TW_HAS_ID) */
#define TW_EV_FLOW_IN      0x04u /* "flow_in":true */
#define TW_EV_FLOW_OUT     0x08u /* "flow_out":true */
#define TW_EV_BP_ENCLOSING 0x10u /* "bp":"e" on flow events */

/* One event of any phase, for tw_emit().  Times are nanoseconds on the
 * CLOCK_MONOTONIC scale of tw_now_ns() (any scale works if used
 * consistently) and are written as microseconds with three decimals.
 * Numbers Perfetto cannot read right are TW_EEVENT: a time from 2^63 ns
 * (ts, ts + dur, tts, tts + tdur), a given pid or tid outside
 * 0..4294967295, a "sort_index" outside int32_t.
 *
 * Phases and what the library requires of each (anything missing is
 * TW_EEVENT):
 *   'X' complete: name; dur            'B'/'E' begin/end: name (E: optional)
 *   'I' or 'i' instant: name; instant_scope 'g','p','t' or 0 (thread);
 *       written as 'I', which Perfetto, chrome://tracing and DevTools all
 *       draw
 *   'C' counter: name; at least one arg, numbers only (the series)
 *   'b','n','e' async: name, an id (TW_HAS_ID); viewers key async ids
 *       by cat too, so give one (NULL: written "default", as
 *       chrome://tracing drops async events without a cat)
 *   's','t','f' flow: name, an id (cat, as above); 'f'/'t' may set
 *       TW_EV_BP_ENCLOSING; an 'f' needs a cat or TW_EV_BP_ENCLOSING
 *   'M' metadata: name.  Perfetto and chrome://tracing know
 *       process_name, thread_name (arg "name"), process_sort_index,
 *       thread_sort_index (arg "sort_index"); only chrome://tracing
 *       process_labels (arg "labels"): the helpers below build these
 *   'N','O','D' object created/snapshot/destroyed: name, an id (only
 *       chrome://tracing shows them)
 *   'R' mark: name (DevTools does not draw it; tw_mark writes 'I')
 *   'c' clock sync: name and an arg sync_id (only chrome://tracing reads
 *       it; "clock_sync", and issue_ts when the sync was issued earlier)
 * cname must be one of chrome://tracing's reserved color names (see
 * tw_emit(3)): it fails the whole import on any other.
 * Other fields are written whenever set, whatever the phase.
 */
typedef struct tw_event {
  char ph;                /* the phase letter */
  char instant_scope;     /* instants: 'g' global, 'p' process, 't' or 0
                             thread */
  unsigned has;           /* TW_HAS_* bits: the optional fields set */
  unsigned flags;         /* TW_EV_* bits: how fields are written */
  const char *name;       /* event name */
  const char *cat;        /* category list ("a,b"); NULL: none written */
  uint64_t ts;            /* ns, with TW_HAS_TS */
  uint64_t dur;           /* ns, for 'X' */
  uint64_t tts;           /* ns, with TW_HAS_TTS */
  uint64_t tdur;          /* ns, with TW_HAS_TDUR */
  int64_t pid;            /* with TW_HAS_PID: 0..4294967295 */
  int64_t tid;            /* with TW_HAS_TID: 0..4294967295 */
  uint64_t id;            /* with TW_HAS_ID, written "0x.." */
  uint64_t bind_id;       /* with TW_HAS_BIND_ID */
  const char *id_scope;   /* the scope of an async/flow/object id,
                             written "scope"; NULL: none */
  const char *cname;      /* color name, written as "cname"; NULL: none */
  const tw_arg *args;     /* nargs arguments, in order */
  size_t nargs;           /* at most TW_MAX_ARGS */
  const void *reserved[2]; /* for fields of later versions: must be NULL
                             (a zeroed event is right); else TW_EEVENT */
} tw_event;

/* Check and write one event.  The event is formatted and checked entirely
 * before any byte reaches the writer, so bad input never leaves a partial
 * record: it returns TW_EEVENT, TW_EUTF8, TW_ENONFINITE, TW_ETOOLONG,
 * TW_ETOOBIG, TW_EJSON or TW_ETOOMANY (by option; the defaults replace
 * invalid UTF-8 with U+FFFD, NaN/Inf with null and cut long strings) and
 * the writer goes on.  Returns 0, such a code, -EINVAL if ev is NULL,
 * -ENOMEM if a thread's scratch buffer cannot grow, TW_EDROPPED (with
 * on_full=drop), TW_EFORKED in a child after fork, or the sticky error. */
TW_EXTERN int tw_emit(tw_writer *w, const tw_event *ev);

/* The current time in nanoseconds, CLOCK_MONOTONIC: the default ts. */
TW_EXTERN uint64_t tw_now_ns(void);

/* Thin helpers over tw_emit for the common phases.  cat may be NULL; args
 * may be NULL when nargs is 0; times are ns of tw_now_ns(). */

/* 'X': a span of dur_ns starting at ts_ns. */
TW_EXTERN int tw_complete(tw_writer *w, const char *cat, const char *name,
                          uint64_t ts_ns, uint64_t dur_ns,
                          const tw_arg *args, size_t nargs);
/* 'B' and 'E' at now, on the calling thread. */
TW_EXTERN int tw_begin(tw_writer *w, const char *cat, const char *name,
                       const tw_arg *args, size_t nargs);
TW_EXTERN int tw_end(tw_writer *w, const char *cat, const char *name,
                     const tw_arg *args, size_t nargs);
/* Instant at now; scope 'g', 'p', 't' (or 0 for thread). */
TW_EXTERN int tw_instant(tw_writer *w, const char *cat, const char *name,
                         char scope, const tw_arg *args, size_t nargs);
/* Counter at now: each arg is one series (numeric types only). */
TW_EXTERN int tw_counter(tw_writer *w, const char *cat, const char *name,
                         const tw_arg *series, size_t nseries);
/* Async (nestable) begin/instant/end at now, keyed by cat + id. */
TW_EXTERN int tw_async_begin(tw_writer *w, const char *cat, const char *name,
                             uint64_t id, const tw_arg *args, size_t nargs);
TW_EXTERN int tw_async_instant(tw_writer *w, const char *cat,
                               const char *name, uint64_t id,
                               const tw_arg *args, size_t nargs);
TW_EXTERN int tw_async_end(tw_writer *w, const char *cat, const char *name,
                           uint64_t id, const tw_arg *args, size_t nargs);
/* Flow start/step/end at now on the calling thread; the end binds to the
 * enclosing slice ("bp":"e"). */
TW_EXTERN int tw_flow_start(tw_writer *w, const char *cat, const char *name,
                            uint64_t id);
TW_EXTERN int tw_flow_step(tw_writer *w, const char *cat, const char *name,
                           uint64_t id);
TW_EXTERN int tw_flow_end(tw_writer *w, const char *cat, const char *name,
                          uint64_t id);
/* Metadata for this process / the calling thread.  A sort index must fit
 * in int32_t (else TW_EEVENT). */
TW_EXTERN int tw_process_name(tw_writer *w, const char *name);
TW_EXTERN int tw_thread_name(tw_writer *w, const char *name);
TW_EXTERN int tw_process_sort_index(tw_writer *w, int64_t index);
TW_EXTERN int tw_thread_sort_index(tw_writer *w, int64_t index);
/* Labels shown beside the process name ("labels": "a,b"). */
TW_EXTERN int tw_process_labels(tw_writer *w, const char *labels);
/* A global instant ('I', scope 'g') at now: DevTools draws no 'R'. */
TW_EXTERN int tw_mark(tw_writer *w, const char *cat, const char *name);

/* ------------------------------------------------------------------------
 * Scoped spans: one 'X' event when the scope exits (GCC and Clang).
 *
 *   void handle(void) {
 *     TW_SCOPE(tw_global(), "http", "handle");
 *     ...
 *   }
 *
 * cat and name must stay valid until the scope ends (string literals do).
 * A NULL writer costs one test and no clock read.
 */
typedef struct tw_span {
  tw_writer *w;
  const char *cat;
  const char *name;
  uint64_t start_ns;
} tw_span;

/* Start a span now (a NULL writer gives an inert span). */
TW_EXTERN tw_span tw_span_begin(tw_writer *w, const char *cat,
                                const char *name);
/* Emit the span's 'X' event ending now; returns what tw_complete returns
 * (0 for an inert span).  Safe to call once per span. */
TW_EXTERN int tw_span_end(tw_span *span);

#define TW__CAT2(a, b) a##b
#define TW__CAT(a, b) TW__CAT2(a, b)
#if defined(__GNUC__) || defined(__clang__)
# define TW_SCOPE(w, cat, name)                                          \
    tw_span TW__CAT(tw__scope_, __LINE__)                               \
      __attribute__((cleanup(tw__span_cleanup), unused)) =              \
        tw_span_begin((w), (cat), (name))
static inline void tw__span_cleanup(tw_span *span) { (void)tw_span_end(span); }
#endif

/* ------------------------------------------------------------------------
 * The process-wide writer
 */

/* The process-wide writer, created at the first call from the environment:
 * TRACEWRITER_OUT (the path; "%p" becomes the pid, "%t" the time of the
 * opening in UTC as 20261122T071500Z, "%%" a percent sign) and
 * TRACEWRITER_OPTIONS (an options string, as tw_options_parse).  Returns
 * NULL when TRACEWRITER_OUT is unset or empty, or when the writer could not
 * be opened (tw_global_status() says why).
 *
 * When TRACEWRITER_OUT is set but the writer cannot be made (a bad
 * TRACEWRITER_OPTIONS, a path that cannot be opened), tracing stays off --
 * a typo in rotate= must not fill a disk -- and the first call writes one
 * line on stderr (fd 2, with write(2)), the library's only output:
 *   tracewriter: TRACEWRITER_OPTIONS: unknown option 'rotat'; did you
 *   mean 'rotate'? (tracing is off)
 * once per process, and again in a child after fork only if the child
 * tries to open its own file ("%p") and fails.  TRACEWRITER_QUIET set to a
 * non-empty value other than "0" silences it.
 *
 * The writer is committed at exit (atexit) and never freed.  In a child
 * after fork(), the parent's writer is never used: with "%p" in
 * TRACEWRITER_OUT the child's first call opens the child's own file;
 * without, it returns NULL (tracing off in the child).  Thread-safe.
 * After the first call, a call costs one acquire load (a word that says
 * the writer is ready for this process), a call that reads the fork
 * generation (one relaxed load), a compare and a relaxed load of the
 * writer: no lock, no read-modify-write, no system call. */
TW_EXTERN tw_writer *tw_global(void);

/* Why tw_global() returned NULL: 0 when tracing is simply off or the
 * writer is open (a failed atexit registration also reports -ENOMEM here
 * while the writer works), else the error of tw_options_parse or tw_open.  If
 * message is not NULL it receives a static, NUL-terminated explanation
 * naming the bad key, value or path ("" when there is none): the line
 * tw_global() printed, without "tracewriter: " and "(tracing is off)".
 * Calls tw_global() first, so in a child after fork it reports the
 * child's own attempt.  Prints nothing.  Thread-safe. */
TW_EXTERN int tw_global_status(const char **message);

#ifdef __cplusplus
}
#endif

#endif /* TRACEWRITER_H */
