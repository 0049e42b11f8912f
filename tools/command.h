/* command.h -- the command-line layer of the tracewriter tool
 *
 * One layer for every command (demo, repair, snapshot, cat, merge,
 * slice, stats, split): the exit statuses, usage errors, sizes and
 * messages (twt_cli_*); and what the trace commands share (twt_cmd_*):
 * their common options (-o, -q, -m, --no-parts, --ndjson, -h), the
 * output trace, a record rewritten with another timestamp or pid.  Each
 * command is a function of its own argv (argv[0] its name) that returns
 * the exit status: 0 success, 1 an error (the message names the file,
 * and the byte for bad input), 2 a usage error.  Not thread-safe (they
 * print).
 */
#ifndef TWT_TOOLS_COMMAND_H
#define TWT_TOOLS_COMMAND_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "output.h"
#include "records.h"
#include "tracein.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ progress */

/* A line on stderr, rewritten twice a second, once the work has taken
 * more than a second, when stderr is a terminal: "tracewriter CMD: 41%
 * (1.1 GiB of 2.7 GiB)" or, when the total is unknown (gzip), the JSON
 * bytes read. */
typedef struct twt_progress {
  int enabled;
  int shown;
  const char *command;
  uint64_t start_ns, next_ns;
} twt_progress;

void twt_progress_init(twt_progress *p, const char *command);
/* done of total (0: unknown) input bytes, json bytes read. */
void twt_progress_update(twt_progress *p, uint64_t done, uint64_t total,
                         uint64_t json);
void twt_progress_end(twt_progress *p);

/* Write bytes for people into out: "512 bytes", "3.4 KiB", "1.2 GiB". */
void twt_format_bytes(uint64_t bytes, char *out, size_t outsize);

/* ===================================================== every command */

#define TWT_CLI_PROGRAM "tracewriter"

/* Exit statuses shared by the commands. */
enum { TWT_CLI_OK = 0, TWT_CLI_RUNTIME = 1, TWT_CLI_USAGE = 2 };

#if defined(__GNUC__) || defined(__clang__)
# define TWT_CLI_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
# define TWT_CLI_PRINTF(fmt, args)
#endif

/* Parse "SIZE" as the library's options do (tw__parse_size): decimal
 * digits, then nothing or k, kb, kib, m, mb, mib, g, gb, gib in any case
 * (powers of 1024).  0 and *out, or -1 (bad text or an overflow). */
int twt_cli_parse_size(const char *text, size_t *out);

/* A usage error of command: "tracewriter COMMAND: message", a blank line
 * and the usage, on stderr.  Returns TWT_CLI_USAGE. */
TWT_CLI_PRINTF(3, 4)
int twt_cli_usage_error(const char *command, void (*usage)(FILE *),
                        const char *fmt, ...);

/* The usage error for what getopt_long returned as opt (':' a missing
 * value, anything else an unknown option), given the ":" optstring
 * convention and opterr = 0.  Returns TWT_CLI_USAGE. */
int twt_cli_option_error(const char *command, void (*usage)(FILE *), int opt,
                         char **argv);

/* The arguments of a command that reads one trace. */
struct twt_cli_args {
  const char *input;       /* FILE */
  const char *output;      /* -o, --output (NULL: not given) */
  int quiet;               /* -q, --quiet */
  int dry_run;             /* -n, --dry-run (only where allowed) */
  size_t max_line;         /* -m, --max-line (0: not given) */
};

struct twt_cmd_opt;

/* Parse "[OPTIONS] FILE" (options and FILE in any order) for command,
 * whose usage() prints its help, with the options of the table opts
 * (struct twt_cmd_opt; among -o, -q, -m, -h and -n, --dry-run).
 * min_line is the least --max-line accepted; what names FILE in "no FILE
 * to <what>".  Returns -1 with *a filled, or the exit status to return
 * at once: TWT_CLI_OK after --help (printed on stdout), TWT_CLI_USAGE after
 * a usage error (printed on stderr).  Resets getopt (optind). */
int twt_cli_parse_file_args(const char *command, void (*usage)(FILE *),
                            const struct twt_cmd_opt *opts, size_t min_line,
                            const char *what, int argc, char **argv,
                            struct twt_cli_args *a);

/* The text helpers of records.h (twt_text_append, twt_text_plural),
 * under the command layer's names. */
#define twt_cli_append twt_text_append
#define twt_cli_plural twt_text_plural

/* What the reading of a trace dropped or found damaged, as repair and
 * snapshot report it (their summaries share these words). */
struct twt_cli_damage {
  const char *sep;         /* before "dropped": "; " or ", " */
  const char *cut_word;    /* "cut" or "partial" (records) */
  uint64_t dropped_records, dropped_bytes, junk_bytes;
  int had_tail, gzip_cut, gzip_corrupt, gzip_stale;
  uint64_t gzip_discarded, gzip_trailing;
};

/* Append to buf (size bytes, *n used; NUL-terminated) what d says, in
 * the order: "SEP dropped N CUT_WORD records (N bytes)", "SEP dropped N
 * bytes of other data", "; the tail was missing", "; the gzip data was
 * cut", "... corrupt", "; its end was stale bytes of an earlier
 * commit", "; N inflated bytes from the damaged end unused", "; ignored
 * N bytes after the gzip data" -- each only when it holds. */
void twt_cli_describe_damage(char *buf, size_t size, size_t *n,
                             const struct twt_cli_damage *d);

/* ================================================ the trace commands */

/* The options every trace command takes. */
struct twt_cmd_common {
  const char *output;      /* -o, --output (NULL: the standard output) */
  int quiet;               /* -q, --quiet: no summary, no warnings */
  int no_parts;            /* --no-parts: no rotated parts looked for */
  size_t max_record;       /* -m, --max-line (0: the reader's default) */
  int events_unparsed;     /* twt_tin_options.events_unparsed */
  int ndjson;              /* --ndjson: one record a line (twt_out) */
};

/* The long-only options' getopt_long values. */
#define TWT_CMD_OPT_NO_PARTS 0x100
#define TWT_CMD_OPT_NDJSON 0x180

/* One option of a command.  A command's options are one table, ended by
 * an entry whose name and val are 0: its getopt_long arrays and the
 * OPTIONS part of its --help are both made from it, so they cannot
 * disagree. */
struct twt_cmd_opt {
  const char *name;        /* the long name, without "--" */
  int val;                 /* what getopt_long returns: the short letter,
                              or a value >= 0x100 for a long-only one */
  const char *arg;         /* the argument's name in --help (NULL: none) */
  const char *help;        /* its text in --help, lines split by '\n' */
};

/* An entry of a command's table for the common option whose val is v
 * (-o, -q, -m, --no-parts, --ndjson, -h): its name and whether it takes
 * an argument come from the common table (twt_cmd_common_options); arg
 * and help, when not NULL, replace that table's words for this command. */
#define TWT_CMD_COMMON(v, arg, help) { NULL, (v), (arg), (help) }

/* --ndjson, -q, --no-parts, -m and -h, in this order (as --help lists
 * them after a command's own options), in the common table's words. */
#define TWT_CMD_COMMON_REST \
  TWT_CMD_COMMON(TWT_CMD_OPT_NDJSON, NULL, NULL), \
  TWT_CMD_COMMON('q', NULL, NULL), \
  TWT_CMD_COMMON(TWT_CMD_OPT_NO_PARTS, NULL, NULL), \
  TWT_CMD_COMMON('m', NULL, NULL), \
  TWT_CMD_COMMON('h', NULL, NULL)

/* The common options, with their usual argument names and help. */
extern const struct twt_cmd_opt twt_cmd_common_options[];

/* *o, with what a TWT_CMD_COMMON entry leaves out taken from the common
 * table. */
struct twt_cmd_opt twt_cmd_opt_resolve(const struct twt_cmd_opt *o);

#define TWT_CMD_OPTS_MAX 24

/* What getopt_long takes, made from a table (twt_cmd_getopt_init). */
struct twt_cmd_getopt {
  struct option longs[TWT_CMD_OPTS_MAX + 1];
  char shorts[2 + 2 * TWT_CMD_OPTS_MAX];   /* ":" first (see opterr) */
};

/* Fill g from the table opts (at most TWT_CMD_OPTS_MAX entries). */
void twt_cmd_getopt_init(struct twt_cmd_getopt *g,
                         const struct twt_cmd_opt *opts);

/* Print the table opts as --help lists options, on out: "  -x, --name
 * ARG", then the help at one column for the whole table, two spaces
 * after its longest option; the help's further lines at that column. */
void twt_cmd_print_options(FILE *out, const struct twt_cmd_opt *opts);

/* What twt_cmd_option makes of an option. */
#define TWT_CMD_TAKEN (-1)          /* one of the common options: taken */

/* Take opt (what getopt_long returned, arg its optarg), after the
 * command has taken its own options: a common option is taken
 * (TWT_CMD_TAKEN); anything else is a usage error (printed).  Returns
 * TWT_CMD_TAKEN or the exit status to return at once (after --help, or a
 * usage error). */
int twt_cmd_option(const char *command, void (*usage)(FILE *), int opt,
                   const char *arg, char **argv, struct twt_cmd_common *c);

/* Print a warning of the input's reading ("tracewriter COMMAND: msg"):
 * the twt_tin_options.warn of the commands (command: the arg). */
void twt_cmd_warn(void *command, const char *msg);

/* Open the input trace: the files, with their parts unless --no-parts.
 * Prints the error and returns TWT_CLI_RUNTIME, or returns -1 with *tp. */
int twt_cmd_open_input(const char *command, const struct twt_cmd_common *c,
                       char *const *paths, size_t n, twt_tin **tp);

/* Open the output (c->output: gzip if its name ends in ".gz"; the
 * standard output, plain, without it or with "-"), refusing a file that
 * is one of the inputs ins[0..n).  Prints the error and returns
 * TWT_CLI_RUNTIME, or returns -1 with *op. */
int twt_cmd_open_output(const char *command, const struct twt_cmd_common *c,
                        twt_tin *const *ins, size_t n, twt_out **op);

/* Print "tracewriter COMMAND: message" on stderr; returns
 * TWT_CLI_RUNTIME. */
TWT_CLI_PRINTF(2, 3)
int twt_cmd_error(const char *command, const char *fmt, ...);

/* A buffer that grows, for rewritten records. */
typedef struct twt_cmd_buf {
  char *p;
  size_t cap;
} twt_cmd_buf;

/* r's text with its ts moved by shift ns, exactly on its decimal text
 * (twt_rec_us_shift_text; if it has one and shift is not 0) and its pid
 * value replaced by the JSON token pid[0..pid_len) (if pid is not NULL,
 * r has a pid and the token differs from it): *text, *len point into b,
 * or to r's own text when nothing changes.  Returns 0 or -ENOMEM. */
int twt_cmd_rewrite(const twt_rec *r, int64_t shift, const char *pid,
                    size_t pid_len, twt_cmd_buf *b, const char **text,
                    size_t *len);

void twt_cmd_buf_free(twt_cmd_buf *b);

/* text[0..len) with the values at[0..n) (spans of text, in order, not
 * overlapping; a span of length 0 is left alone) replaced by with[i]
 * (wlen[i] bytes), into b: *out, *outlen.  Returns 0 or -ENOMEM. */
int twt_cmd_edit(const char *text, size_t len, const twt_rec_span *at,
                 const char *const *with, const size_t *wlen, size_t n,
                 twt_cmd_buf *b, const char **out, size_t *outlen);

/* Copy the member path holds at off (len bytes of JSON text: "key":
 * value, as twt_tin_big_members gives it) to o after a comma, checked
 * whole first and written without the whitespace between its tokens, in
 * memory that does not grow with it.  0 copied; 1 not valid JSON (left
 * out, with a warning unless quiet); or an exit status (printed). */
int twt_cmd_copy_member(const char *command, const char *path, uint64_t off,
                        uint64_t len, twt_out *o, int quiet);

/* twt_cmd_finish_output, with the members of in too big to keep
 * (twt_tin_big_members) copied from their file before the tail's last
 * "}". */
int twt_cmd_finish_tin(const char *command, twt_out *o, int object_form,
                       const char *tail, size_t tail_len, twt_tin *in,
                       int quiet);

/* Finish the output: the tail (NULL: the form's), commit; prints the
 * error.  Returns 0 or TWT_CLI_RUNTIME. */
int twt_cmd_finish_output(const char *command, twt_out *o, int object_form,
                          const char *tail, size_t tail_len);

/* Update the progress line with what in has read. */
void twt_cmd_progress(twt_progress *p, const twt_tin *in);

/* The input's error, printed; returns TWT_CLI_RUNTIME. */
int twt_cmd_input_error(const char *command, const twt_tin *t);

/* The output's error, printed; returns TWT_CLI_RUNTIME. */
int twt_cmd_output_error(const char *command, const twt_out *o);

/* The name of the output for messages ("standard output" for NULL or
 * "-"). */
const char *twt_cmd_output_name(const struct twt_cmd_common *c);

/* The commands: argv[0] is the command's name; each returns the exit
 * status, prints errors, warnings and its summary on stderr, and resets
 * getopt (optind) itself.  See their usage (--help) and tracewriter(1). */
int twt_tool_cat_main(int argc, char **argv);
int twt_tool_merge_main(int argc, char **argv);
int twt_tool_slice_main(int argc, char **argv);
int twt_tool_stats_main(int argc, char **argv);
int twt_tool_split_main(int argc, char **argv);
int twt_tool_demo_main(int argc, char **argv);   /* demo.c */

/* Their option tables (struct twt_cmd_opt), for the tests. */
extern const struct twt_cmd_opt twt_tool_cat_options[];
extern const struct twt_cmd_opt twt_tool_merge_options[];
extern const struct twt_cmd_opt twt_tool_slice_options[];
extern const struct twt_cmd_opt twt_tool_stats_options[];
extern const struct twt_cmd_opt twt_tool_split_options[];
extern const struct twt_cmd_opt twt_tool_demo_options[];
extern const struct twt_cmd_opt twt_tool_repair_options[];
extern const struct twt_cmd_opt twt_tool_snapshot_options[];

#ifdef __cplusplus
}
#endif

#endif /* TWT_TOOLS_COMMAND_H */
