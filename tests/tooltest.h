/* tooltest.h -- helpers of the tests of the command-line tool's code
 *
 * Shared by test_repair, test_snapshot and test_reader: private
 * directories, traces written with the library and their records,
 * comparisons of files with those records (through the strict checker),
 * gzip members, running a command with its output captured, random seeds
 * and deadlines.  Every function fails the test (cmocka) on error.
 */
#ifndef TW_TOOLTEST_H
#define TW_TOOLTEST_H

#include "testutil.h"

#include <sys/types.h>
#include <time.h>

/* ============================================================ files */

/* A new private directory under $TMPDIR or /tmp, so that a stray
 * temporary file is noticed (malloc'ed name). */
char *tt_make_dir(void);
/* The same in /dev/shm when there is one and TMPDIR is not set, for
 * tests that write hundreds of files (each output is fsync'ed) or large
 * ones: what they test does not depend on the file system. */
char *tt_make_fast_dir(void);
/* dir/name, malloc'ed. */
char *tt_in_dir(const char *dir, const char *name);
/* How many entries dir holds (. and .. excepted). */
int tt_count_files(const char *dir);
/* Remove dir and every file in it; free the name. */
void tt_remove_dir(char *dir);
/* Write data[0..len) to path. */
void tt_write_bytes(const char *path, const void *data, size_t len);
/* The file's bytes must be exactly data[0..len). */
void tt_assert_file_is(const char *path, const void *data, size_t len);

/* The records of a valid trace: their raw text and where each sits. */
typedef struct tt_records {
  size_t n;
  char **raw;              /* text of record i (malloc'ed) */
  size_t *rawlen;
  size_t *start;           /* offset of its "{" in the file */
  size_t *end;             /* offset just after its "}" */
} tt_records;

/* Enough of a stat to tell a file was not touched. */
typedef struct tt_snap {
  ino_t ino;
  off_t size;
  struct timespec mtime;
  mode_t mode;
} tt_snap;

/* The fields of tt_snap, now. */
tt_snap tt_take_snap(const char *path);
/* Both must be equal: the file was not touched. */
void tt_assert_same_snap(const tt_snap *a, const tt_snap *b);

/* =================================================== library traces */

/* Options for the test traces: the file sink, a 4 KiB buffer (many
 * commits), a process name with a quote. */
void tt_trace_options(tw_options *o, int object_form);
/* Emit event number i, of several phases and argument types. */
void tt_emit_event(tw_writer *w, size_t i);
/* Write a trace of nevents events (plus the process_name record) with
 * the library.  big: the size of one string argument of a last event
 * (0: none). */
void tt_write_trace(const char *path, int object_form, size_t nevents,
                    size_t big);
/* The records of the valid trace buf[0..len) (parsed strictly). */
void tt_records_of(const char *buf, size_t len, tt_records *r);
void tt_records_free(tt_records *r);
/* How many records of exp are complete in a prefix of cut bytes. */
size_t tt_complete_in(const tt_records *exp, size_t cut);

/* The tail the tools write: the file ends exactly at the bracket. */
const char *tt_out_tail(int object_form);
/* The length of the library's tail, which must end buf[0..len): "\n]"
 * (or "\n]}"), nothing after the bracket. */
size_t tt_lib_tail_len(const char *buf, size_t len, int object_form);
/* json[0..len) must be strict JSON in the library's layout holding
 * exactly the first n records of exp, byte for byte, and end exactly with
 * the tools' tail. */
void tt_assert_trace_mem(const char *json, size_t len, const tt_records *exp,
                         size_t n, int object_form);
/* The same for a file, and for a file that must be one complete gzip
 * member of such a trace. */
void tt_assert_trace_file(const char *path, const tt_records *exp, size_t n,
                          int object_form);
void tt_assert_gzip_trace_file(const char *path, const tt_records *exp,
                               size_t n, int object_form);

/* ============================================================= gzip */

/* data[0..len) as one gzip member (zlib, level 6); *out_len set. */
unsigned char *tt_gz_member(const void *data, size_t len, size_t *out_len);
/* Inflate gz[0..len) as far as it goes.  *complete: the member ended
 * (Z_STREAM_END) exactly at the end of the input.  Returns the text
 * (malloc'ed, NUL-terminated), *out_len its length. */
char *tt_gz_inflate(const unsigned char *gz, size_t len, size_t *out_len,
                    int *complete);

/* ============================================== commands, seeds, time */

/* Call fn(argc, argv) with stdout and stderr sent to the files out_path
 * and err_path (NULL: /dev/null); returns what fn returns. */
int tt_run(int (*fn)(int, char **), int argc, char **argv,
           const char *out_path, const char *err_path);
/* tt_run on argv, NULL-terminated. */
int tt_run_argv(int (*fn)(int, char **), char **argv, const char *out_path,
                const char *err_path);
/* The file at path, strictly parsed as it is (tt_load_raw). */
jc_doc *tt_load_file(const char *path);
/* The seed of the random tests: tu_seed() of testutil.h (TW_TEST_SEED,
 * or the clock; printed). */
unsigned tt_seed(void);
/* Name the program in the message of testutil.h's deadline (exit 1,
 * "timed out: what"), which stays TW_TEST_TIMEOUT like every test's: a
 * shorter one of its own failed test_snapshot under TSan on a busy
 * machine, where it runs slower but does not hang. */
void tt_deadline(const char *what);
/* A shorter guard around one step: returns what tt_guard_end needs to
 * restore the program's deadline. */
unsigned tt_guard_begin(unsigned seconds, const char *what);
void tt_guard_end(unsigned left);

/* buf[0..len) parsed strictly as it is, every record included (the
 * document's clock record, which tu_load_mem leaves out).  Fails the
 * test if it is not strict JSON. */
jc_doc *tt_load_raw(const char *buf, size_t len);

/* Records the library writes at the start of every document: the
 * process_name record and the clock record. */
#define TT_DOC_RECORDS 2

/* A clock record as the library writes it, on a line of its own after
 * the process_name record: a file made by hand in the library's layout
 * has it there (the crash-layout reader reads only what proves to be
 * the library's: its head, then these two records), and its separator. */
#define TT_CLOCK_LINE \
  "{\"ph\":\"c\",\"name\":\"clock_sync\",\"ts\":1.000,\"pid\":1," \
  "\"tid\":1,\"args\":{\"sync_id\":\"tracewriter.realtime\"," \
  "\"monotonic_ns\":1000,\"realtime_ns\":1700000000000001000}},\n"
#define TT_FIRST_LINES \
  "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"tid\":1," \
  "\"args\":{\"name\":\"t\"}},\n" TT_CLOCK_LINE

#endif /* TW_TOOLTEST_H */
