/* cat.c -- "tracewriter cat": the rotated parts of a trace, joined
 *
 * The input (tools/tracein.h) does the work: it reads the parts in
 * order, yields each metadata record once and the first clock record
 * only, and says by how much to move the timestamps of a part written on
 * another clock.  cat writes what it yields, in the order read, through
 * tools/output.h.
 *
 * Only the first clock record is kept: two clock_sync events with the
 * same sync_id in one file stop chrome://tracing's importer ("A clock
 * domain cannot sync with itself", catapult's clock_sync_manager.html),
 * and every later part is put on the first one's clock anyway.
 */
#include "config.h"

#include "command.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define CMD "cat"

const struct twt_cmd_opt twt_tool_cat_options[] = {
  TWT_CMD_COMMON('o', NULL, NULL),
  TWT_CMD_COMMON(TWT_CMD_OPT_NDJSON, NULL, NULL),
  TWT_CMD_COMMON('q', NULL, NULL),
  TWT_CMD_COMMON(TWT_CMD_OPT_NO_PARTS, NULL, NULL),
  TWT_CMD_COMMON('m', NULL, "the longest record, in bytes (suffixes k, m, g;\n"
                 "default: 64MiB)"),
  TWT_CMD_COMMON('h', NULL, NULL),
  { NULL, 0, NULL, NULL }
};

static void cat_usage(FILE *out)
{
  fprintf(out,
    "Usage: " TWT_CLI_PROGRAM " cat [-o OUT] [-q] [--no-parts] [-m SIZE] "
    "FILE...\n"
    "\n"
    "Join the rotated parts of a trace back into one trace, in order:\n"
    "each FILE (.json or .json.gz, cut files too) is read after the\n"
    "parts that rotation left beside it (FILE.000001.json, ...), every\n"
    "metadata record (process and thread names) is written once, and\n"
    "only the first clock record is kept; a part written on another\n"
    "clock (another process or boot) is moved onto the first one's.\n"
    "\n");
  twt_cmd_print_options(out, twt_tool_cat_options);
  fprintf(out,
    "\n"
    "Exit status: 0 written, 1 an error (a file that cannot be read or is\n"
    "not a trace, the output), 2 a usage error.\n");
}

int twt_tool_cat_main(int argc, char **argv)
{
  struct twt_cmd_getopt g;
  struct twt_cmd_common c;
  twt_progress progress;
  twt_cmd_buf buf = { NULL, 0 };
  twt_tin_rec rec;
  twt_tin *in = NULL;
  twt_out *out = NULL;
  const char *tail;
  size_t tail_len;
  int opt, status, rc;

  memset(&c, 0, sizeof c);
  twt_cmd_getopt_init(&g, twt_tool_cat_options);
  optind = 0;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, g.shorts, g.longs, NULL)) != -1) {
    status = twt_cmd_option(CMD, cat_usage, opt, optarg, argv, &c);
    if (status != TWT_CMD_TAKEN)
      return status;
  }
  if (optind >= argc)
    return twt_cli_usage_error(CMD, cat_usage, "no FILE to join");
  c.events_unparsed = 1;          /* only shifted records are rewritten */
  if ((status = twt_cmd_open_input(CMD, &c, argv + optind,
                                   (size_t)(argc - optind), &in)) >= 0)
    return status;
  if ((status = twt_cmd_open_output(CMD, &c, &in, 1, &out)) >= 0)
    goto done;
  twt_progress_init(&progress, CMD);
  status = TWT_CLI_OK;
  while ((rc = twt_tin_next(in, &rec)) > 0) {
    const char *text;
    size_t len;
    if (twt_cmd_rewrite(&rec.r, rec.shift, NULL, 0, &buf, &text,
                        &len) != 0) {
      status = twt_cmd_error(CMD, "out of memory");
      goto done;
    }
    if (twt_out_record(out, twt_tin_object_form(in), text, len) != 0) {
      status = twt_cmd_output_error(CMD, out);
      goto done;
    }
    twt_cmd_progress(&progress, in);
  }
  twt_progress_end(&progress);
  if (rc < 0) {
    status = twt_cmd_input_error(CMD, in);
    goto done;
  }
  tail = twt_tin_tail(in, &tail_len);
  if ((status = twt_cmd_finish_tin(CMD, out, twt_tin_object_form(in), tail,
                                   tail_len, in, c.quiet)) != 0)
    goto done;
  if (!c.quiet) {
    const struct twt_tin_stats *s = twt_tin_stats(in);
    uint64_t files = twt_tin_files(in);
    fprintf(stderr, TWT_CLI_PROGRAM " " CMD ": %" PRIu64 " %s, %" PRIu64
            " %s to %s (%" PRIu64 " repeated metadata and clock %s "
            "left out)\n", files, twt_cli_plural(files, "file", "files"),
            twt_out_records(out),
            twt_cli_plural(twt_out_records(out), "record", "records"),
            twt_cmd_output_name(&c), s->records - s->yielded,
            twt_cli_plural(s->records - s->yielded, "record", "records"));
  }
done:
  twt_cmd_buf_free(&buf);
  twt_out_close(out);
  twt_tin_close(in);
  return status;
}
