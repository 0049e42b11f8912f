/* snapshot.c -- "tracewriter snapshot": a consistent copy of a live trace
 *
 * See snapshot.h for the contract.  The work is the reader's (every
 * complete record read, each cut one dropped) and the output's (head,
 * records, tail; a temporary file renamed at the end): this file opens
 * them, refuses a copy over the file itself, and reports.
 */
#include "config.h"

#include "snapshot.h"
#include "command.h"      /* the command-line layer */
#include "output.h"
#include "reader.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROGRAM TWT_CLI_PROGRAM
#define DEFAULT_GZIP_LEVEL 6
#define STDOUT_NAME "standard output"

void twt_snapshot_options_init(struct twt_snapshot_options *opts)
{
  memset(opts, 0, sizeof *opts);
  opts->max_record = TWT_READ_DEFAULT_MAX_RECORD;
  opts->compress = TWT_OUT_BY_NAME;
  opts->gzip_level = DEFAULT_GZIP_LEVEL;
}

/* What the reader found and the output wrote, into the report. */
static void report(const twt_reader *r, const twt_out *o,
                   struct twt_snapshot_report *rep)
{
  const struct twt_read_info *info = twt_reader_info(r);

  rep->records = info->records;
  rep->dropped_records = info->dropped_records;
  rep->dropped_bytes = info->dropped_bytes;
  rep->junk_bytes = info->junk_bytes;
  rep->input_bytes = info->input_bytes;
  rep->json_bytes = info->json_bytes;
  rep->gzip_discarded = info->gzip_discarded;
  rep->gzip_trailing = info->gzip_trailing;
  rep->was_gzip = info->gzip;
  rep->object_form = info->object_form;
  rep->had_tail = info->had_tail;
  rep->gzip_cut = info->gzip_cut;
  rep->gzip_corrupt = info->gzip_corrupt;
  rep->complete = info->ended && !info->dropped_records &&
                  !info->junk_bytes && !info->gzip_discarded &&
                  !info->gzip_corrupt;
  if (o) {
    rep->out_gzip = twt_out_is_gzip(o);
    rep->output_bytes = twt_out_bytes(o);
  }
}

int twt_snapshot_file(const char *in, const char *out,
                      const struct twt_snapshot_options *opts,
                      struct twt_snapshot_report *rep,
                      char *err, size_t errsize)
{
  struct twt_snapshot_options defaults;
  struct twt_snapshot_report local_rep;
  struct twt_read_options ro;
  struct twt_out_options oo;
  struct stat st;
  twt_reader *r = NULL;
  twt_out *o = NULL;
  char msg[2 * PATH_MAX + 256];
  int rc;

  if (!rep)
    rep = &local_rep;
  memset(rep, 0, sizeof *rep);
  if (err && errsize)
    err[0] = '\0';
  if (!opts) {
    twt_snapshot_options_init(&defaults);
    opts = &defaults;
  }
  if (!in) {
    if (err && errsize)
      snprintf(err, errsize, "(null): no input file");
    return -EINVAL;
  }
  memset(&ro, 0, sizeof ro);
  ro.max_record = opts->max_record;
  ro.flags = TWT_READ_FOLLOW | TWT_READ_LAYOUT; /* a record being appended,
                                               whole; our layout */
  if ((rc = twt_reader_open(&r, in, &ro, err, errsize)) != 0)
    return rc;
  msg[0] = '\0';
  if (fstat(twt_reader_fd(r), &st) != 0) {
    rc = -errno;
    snprintf(msg, sizeof msg, "%s: stat: %s", in, strerror(errno));
    goto done;
  }
  if (out && strcmp(out, "-") != 0 && twt_out_same_file(out, &st)) {
    rc = -EEXIST;
    snprintf(msg, sizeof msg, "%s: the copy %s is the trace itself", in,
             out);
    goto done;
  }
  twt_out_options_init(&oo);
  if (opts->compress == TWT_SNAPSHOT_AS_INPUT)
    oo.compress = twt_reader_info(r)->gzip ? TWT_OUT_GZIP : TWT_OUT_PLAIN;
  else
    oo.compress = opts->compress;
  oo.level = opts->gzip_level;
  oo.tag = "snapshot";
  if ((rc = twt_out_open(&o, out, &oo, msg, sizeof msg)) != 0)
    goto done;
  if ((rc = twt_out_copy_trace(o, r)) == 0)
    rc = twt_out_commit(o);
  if (rc != 0)
    snprintf(msg, sizeof msg, "%s", twt_reader_error(r)[0] ?
             twt_reader_error(r) : twt_out_error(o));
  report(r, o, rep);

done:
  if (rc != 0 && err && errsize)
    snprintf(err, errsize, "%s", msg);
  twt_out_close(o);
  twt_reader_close(r);
  return rc;
}

#define plural twt_cli_plural

void twt_snapshot_describe(const char *in, const char *out,
                           const struct twt_snapshot_report *rep,
                           char *buf, size_t size)
{
  size_t n = 0;

#define ADD(...) twt_cli_append(buf, size, &n, __VA_ARGS__)
  if (!buf || size == 0)
    return;
  buf[0] = '\0';
  ADD("%s: copied %" PRIu64 " %s to %s", in, rep->records,
      plural(rep->records, "record", "records"),
      out && strcmp(out, "-") != 0 ? out : STDOUT_NAME);
  /* The words repair uses too (snapshot says nothing of a stale end or
   * bytes after the member: it copies what a writer wrote so far). */
  twt_cli_describe_damage(buf, size, &n, &(struct twt_cli_damage){
    "; ", "cut", rep->dropped_records, rep->dropped_bytes, rep->junk_bytes,
    rep->had_tail, rep->gzip_cut, rep->gzip_corrupt, 0,
    rep->gzip_discarded, 0 });
#undef ADD
}

/* ====================================================== the command */

const struct twt_cmd_opt twt_tool_snapshot_options[] = {
  TWT_CMD_COMMON('o', "COPY", "write the copy to COPY, gzip if it ends in\n"
                 ".gz ('-': standard output, plain); default:\n"
                 "standard output, gzip if FILE is gzip"),
  TWT_CMD_COMMON('q', NULL, NULL),
  TWT_CMD_COMMON('m', NULL, "the longest record to copy, in bytes (suffixes\n"
                 "k, m, g: KiB, MiB, GiB; default: 64MiB)"),
  TWT_CMD_COMMON('h', NULL, NULL),
  { NULL, 0, NULL, NULL }
};

static void snapshot_usage(FILE *out)
{
  fprintf(out,
    "Usage: " PROGRAM " snapshot [-o COPY] [-q] [--max-line SIZE] FILE\n"
    "\n"
    "Copy a trace that another process may be writing: every complete\n"
    "record read, then the tail, strict JSON whatever the writer was\n"
    "doing (a plain cp can catch a commit half-written).  FILE (.json or\n"
    ".json.gz) is never modified.\n"
    "\n");
  twt_cmd_print_options(out, twt_tool_snapshot_options);
  fprintf(out,
    "\n"
    "The summary goes to standard error.  Exit status: 0 a complete copy,\n"
    "%d a strict copy without some data of FILE (a record cut by a write\n"
    "in progress or a crash), 1 an error, 2 a usage error.\n",
    TWT_SNAPSHOT_EXIT_CUT);
}

int twt_tool_snapshot_main(int argc, char **argv)
{
  struct twt_snapshot_options opts;
  struct twt_snapshot_report rep;
  struct twt_cli_args a;
  char message[2 * PATH_MAX + 256], summary[2 * PATH_MAX + 256];
  int status;

  status = twt_cli_parse_file_args("snapshot", snapshot_usage,
                                   twt_tool_snapshot_options,
                                   TWT_READ_MIN_MAX_RECORD, "copy", argc,
                                   argv, &a);
  if (status >= 0)
    return status;
  twt_snapshot_options_init(&opts);
  if (a.max_line)
    opts.max_record = a.max_line;
  /* Without -o: the standard output, compressed as FILE is; "-o -": the
   * standard output, plain; -o COPY: by COPY's name. */
  opts.compress = a.output ? TWT_OUT_BY_NAME : TWT_SNAPSHOT_AS_INPUT;

  /* Compressed bytes on a terminal help no one (gzip refuses too). */
  if (!a.output && isatty(STDOUT_FILENO)) {
    twt_reader *r;
    int gzip = twt_reader_open(&r, a.input, NULL, NULL, 0) == 0 &&
               twt_reader_info(r)->gzip;
    twt_reader_close(r);
    if (gzip) {
      fprintf(stderr, PROGRAM " snapshot: %s: not writing compressed data "
              "to a terminal; use -o COPY, or -o - for plain JSON\n",
              a.input);
      return TWT_CLI_RUNTIME;
    }
  }
  if (twt_snapshot_file(a.input, a.output, &opts, &rep, message,
                        sizeof message) != 0) {
    fprintf(stderr, PROGRAM " snapshot: %s\n", message);
    return TWT_CLI_RUNTIME;
  }
  if (!a.quiet) {
    twt_snapshot_describe(a.input, a.output, &rep, summary, sizeof summary);
    fprintf(stderr, "%s\n", summary);
  }
  return rep.complete ? TWT_CLI_OK : TWT_SNAPSHOT_EXIT_CUT;
}
