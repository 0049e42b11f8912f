/* tracewriter.c -- the tracewriter command-line tool: its main()
 *
 *   tracewriter demo [-o FILE|-] [-O OPTIONS] [--threads N]   (demo.c)
 *                    [--rate N|max] [--seconds S | --requests N]
 *   tracewriter repair [-o OUT] [-n] [-q] [--max-line SIZE] FILE
 *   tracewriter snapshot [-o COPY] [-q] [--max-line SIZE] FILE
 *   tracewriter cat [-o OUT] [-q] [--no-parts] FILE...
 *   tracewriter merge [-o OUT] [-q] [--offset FILE=DURATION]...
 *                     [--window SIZE] FILE...
 *   tracewriter slice [-o OUT] [--from T] [--to T] [--pid P] [--tid T]
 *                     [--name GLOB] [--cat GLOB] FILE...
 *   tracewriter stats [--json] [--top N] FILE...
 *   tracewriter split -o OUT [--size SIZE] [--every DURATION] FILE...
 *   tracewriter --help | --version
 *
 * Each subcommand is one entry of the commands[] table: a name, a one-line
 * summary for the usage, and a function that gets the command's own argv
 * (argv[0] is the command name) and returns the exit status.  Exit status:
 * 0 success, 1 a run-time error (the trace could not be written), 2 a
 * usage error; snapshot also 3, a copy without some cut data.
 */
#include "config.h"

#include "tracewriter.h"
#include "command.h"      /* demo, cat, merge, slice, stats, split */
#include "repair.h"
#include "snapshot.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ================================================ commands and main() */

struct command {
  const char *name;
  const char *summary;     /* one line for the usage */
  int (*run)(int argc, char **argv); /* argv[0] is the command name */
};

static const struct command commands[] = {
  { "demo", "write the trace of a simulated multi-threaded server",
    twt_tool_demo_main },
  { "repair", "make a trace left by a crash strictly valid again",
    twt_tool_repair_main },
  { "snapshot", "copy a trace that a process is writing, consistently",
    twt_tool_snapshot_main },
  { "cat", "join the rotated parts of a trace into one trace",
    twt_tool_cat_main },
  { "merge", "merge traces of several processes onto one timeline",
    twt_tool_merge_main },
  { "slice", "the part of a trace in a time window, or of some threads",
    twt_tool_slice_main },
  { "stats", "what a trace holds, and what it takes to open it",
    twt_tool_stats_main },
  { "split", "cut a big trace into parts that a viewer opens",
    twt_tool_split_main },
};
#define COMMAND_COUNT (sizeof commands / sizeof commands[0])

static void usage(FILE *out)
{
  size_t i;

  fprintf(out,
    "Usage: " TWT_CLI_PROGRAM " COMMAND [OPTIONS]\n"
    "       " TWT_CLI_PROGRAM " --help | --version\n"
    "\n"
    "Tools for Chrome Trace Event Format JSON traces, written incrementally\n"
    "and crash-safely by libtracewriter.\n"
    "\n"
    "Commands:\n");
  for (i = 0; i < COMMAND_COUNT; i++)
    fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fprintf(out,
    "\n"
    "Run '" TWT_CLI_PROGRAM " COMMAND --help' for the options of a "
    "command.\n");
}

/* A usage error: the message (if fmt is not NULL), then the usage, on
 * stderr. */
TWT_CLI_PRINTF(1, 2)
static int usage_error(const char *fmt, ...)
{
  va_list ap;

  if (fmt) {
    fprintf(stderr, TWT_CLI_PROGRAM ": ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n\n");
  }
  usage(stderr);
  return TWT_CLI_USAGE;
}

/* --help and --version, given instead of a command. */
static int global_options(int argc, char **argv)
{
  static const struct option long_options[] = {
    { "help",    no_argument, NULL, 'h' },
    { "version", no_argument, NULL, 'V' },
    { NULL, 0, NULL, 0 }
  };
  int opt, want_help = 0, want_version = 0;

  opterr = 0;
  while ((opt = getopt_long(argc, argv, "hV", long_options, NULL)) != -1) {
    switch (opt) {
    case 'h':
      want_help = 1;
      break;
    case 'V':
      want_version = 1;
      break;
    default:
      if (optopt) {
        char short_option[3] = { '-', (char)optopt, '\0' };
        return usage_error("unknown option '%s'", short_option);
      }
      return usage_error("unknown option '%s'", argv[optind - 1]);
    }
  }
  /* Check the whole line before printing anything. */
  if (optind < argc)
    return usage_error("unexpected argument '%s'", argv[optind]);
  if (want_help)
    usage(stdout);
  else if (want_version)
    printf(TWT_CLI_PROGRAM " %s\n", tw_version());
  else                              /* only "--" */
    return usage_error(NULL);
  return TWT_CLI_OK;
}

int main(int argc, char **argv)
{
  int status = -1;
  size_t i;

  if (argc < 2)
    return usage_error(NULL);
  if (argv[1][0] == '-') {
    status = global_options(argc, argv);
  } else {
    for (i = 0; i < COMMAND_COUNT; i++)
      if (strcmp(argv[1], commands[i].name) == 0)
        status = commands[i].run(argc - 1, argv + 1);
    if (status < 0)
      return usage_error("unknown command '%s'", argv[1]);
  }
  /* Output that never reached stdout (a full disk, a closed pipe) is a
   * failure, not a success. */
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, TWT_CLI_PROGRAM ": standard output: %s\n",
            strerror(errno));
    return TWT_CLI_RUNTIME;
  }
  return status;
}
