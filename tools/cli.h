/* cli.h -- helpers shared by the subcommands of the tracewriter tool
 *
 * Each subcommand (repair, snapshot, ...) parses its own options with
 * getopt_long and prints its own usage; these keep their messages, size
 * arguments and summaries alike.  Not thread-safe (they print).
 */
#ifndef TWT_TOOLS_CLI_H
#define TWT_TOOLS_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

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

/* Parse "[-o OUT] [-q] [-m SIZE] [-n] [-h] FILE" (long forms --output,
 * --quiet, --max-line, --dry-run, --help; options and FILE in any order)
 * for command, whose usage() prints its help; -n only if with_dry_run.
 * min_line is the least --max-line accepted; what names FILE in "no FILE
 * to <what>".  Returns -1 with *a filled, or the exit status to return
 * at once: TWT_CLI_OK after --help (printed on stdout), TWT_CLI_USAGE after
 * a usage error (printed on stderr).  Resets getopt (optind). */
int twt_cli_parse_file_args(const char *command, void (*usage)(FILE *),
                            int with_dry_run, size_t min_line,
                            const char *what, int argc, char **argv,
                            struct twt_cli_args *a);

/* Append printf-style text at buf + *n (size bytes in all), keeping buf
 * NUL-terminated and truncated to fit. */
TWT_CLI_PRINTF(4, 5)
void twt_cli_append(char *buf, size_t size, size_t *n, const char *fmt, ...);

/* one if n == 1, else many ("1 record", "2 records"). */
const char *twt_cli_plural(uint64_t n, const char *one, const char *many);

#ifdef __cplusplus
}
#endif

#endif /* TWT_TOOLS_CLI_H */
