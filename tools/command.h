/* command.h -- what the trace commands (cat, merge, slice, stats) share
 *
 * Their common options (-o, -q, -m, --no-parts, -h), the output trace,
 * a record rewritten with another timestamp or pid, and their messages.
 * The commands themselves are in cat.c, merge.c, slice.c and stats.c;
 * each main returns the exit status: 0 success, 1 an error (the message
 * names the file, and the byte for bad input), 2 a usage error.
 */
#ifndef TWT_TOOLS_COMMAND_H
#define TWT_TOOLS_COMMAND_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "output.h"
#include "records.h"
#include "tracein.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The options every trace command takes. */
struct twt_cmd_common {
  const char *output;      /* -o, --output (NULL: the standard output) */
  int quiet;               /* -q, --quiet: no summary, no warnings */
  int no_parts;            /* --no-parts: no rotated parts looked for */
  size_t max_record;       /* -m, --max-line (0: the reader's default) */
  int events_unparsed;     /* twt_tin_options.events_unparsed */
  int ndjson;              /* --ndjson: one record a line (twt_out) */
};

/* Their getopt_long entries, and the short options. */
#define TWT_CMD_OPT_NO_PARTS 0x100
#define TWT_CMD_OPT_NDJSON 0x180
#define TWT_CMD_SHORT ":o:qm:h"
#define TWT_CMD_LONG \
  { "output",   required_argument, NULL, 'o' }, \
  { "quiet",    no_argument,       NULL, 'q' }, \
  { "max-line", required_argument, NULL, 'm' }, \
  { "no-parts", no_argument,       NULL, TWT_CMD_OPT_NO_PARTS }, \
  { "ndjson",   no_argument,       NULL, TWT_CMD_OPT_NDJSON }, \
  { "help",     no_argument,       NULL, 'h' }

/* What twt_cmd_option makes of an option. */
#define TWT_CMD_TAKEN (-1)          /* one of the common options: taken */

/* Take opt (what getopt_long returned, arg its optarg), after the
 * command has taken its own options: a common option is taken
 * (TWT_CMD_TAKEN); anything else is a usage error (printed).  Returns
 * TWT_CMD_TAKEN or the exit status to return at once (after --help, or a
 * usage error). */
int twt_cmd_option(const char *command, void (*usage)(FILE *), int opt,
                   const char *arg, char **argv, struct twt_cmd_common *c);

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
 * (twt_rec_us_shift_text; if it has one and shift is not
 * 0) and its pid replaced by pid (if set_pid and it has an integer pid):
 * *text, *len point into b, or to r's own text when nothing changes.
 * Returns 0 or -ENOMEM. */
int twt_cmd_rewrite(const twt_rec *r, int64_t shift, int set_pid,
                    int64_t pid, twt_cmd_buf *b, const char **text,
                    size_t *len);

void twt_cmd_buf_free(twt_cmd_buf *b);

/* text[0..len) with the values at[0..n) (spans of text, in order, not
 * overlapping; a span of length 0 is left alone) replaced by with[i]
 * (wlen[i] bytes), into b: *out, *outlen.  Returns 0 or -ENOMEM. */
int twt_cmd_edit(const char *text, size_t len, const twt_rec_span *at,
                 const char *const *with, const size_t *wlen, size_t n,
                 twt_cmd_buf *b, const char **out, size_t *outlen);

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

#ifdef __cplusplus
}
#endif

#endif /* TWT_TOOLS_COMMAND_H */
