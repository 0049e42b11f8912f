/* cli.c -- helpers shared by the subcommands of the tracewriter tool */
#include "config.h"

#include "cli.h"
#include "internal.h"     /* tw__parse_size: the options' size parser */

#include <getopt.h>
#include <stdarg.h>
#include <string.h>

int twt_cli_parse_size(const char *text, size_t *out)
{
  uint64_t v;

  if (tw__parse_size(text, strlen(text), &v) != 0 || v > SIZE_MAX)
    return -1;
  *out = (size_t)v;
  return 0;
}

int twt_cli_usage_error(const char *command, void (*usage)(FILE *),
                        const char *fmt, ...)
{
  va_list ap;

  fprintf(stderr, TWT_CLI_PROGRAM " %s: ", command);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n\n");
  usage(stderr);
  return TWT_CLI_USAGE;
}

int twt_cli_option_error(const char *command, void (*usage)(FILE *), int opt,
                         char **argv)
{
  if (opt == ':')
    return twt_cli_usage_error(command, usage, "option '%s' needs a value",
                               argv[optind - 1]);
  if (optopt) {
    char short_option[3] = { '-', (char)optopt, '\0' };
    return twt_cli_usage_error(command, usage, "unknown option '%s'",
                               short_option);
  }
  return twt_cli_usage_error(command, usage, "unknown option '%s'",
                             argv[optind - 1]);
}

int twt_cli_parse_file_args(const char *command, void (*usage)(FILE *),
                            int with_dry_run, size_t min_line,
                            const char *what, int argc, char **argv,
                            struct twt_cli_args *a)
{
  static const struct option long_options[] = {
    { "output",   required_argument, NULL, 'o' },
    { "dry-run",  no_argument,       NULL, 'n' },
    { "quiet",    no_argument,       NULL, 'q' },
    { "max-line", required_argument, NULL, 'm' },
    { "help",     no_argument,       NULL, 'h' },
    { NULL, 0, NULL, 0 }
  };
  int opt;

  memset(a, 0, sizeof *a);
  optind = 0;                       /* glibc: start afresh on every call */
  opterr = 0;                       /* our messages name the command */
  while ((opt = getopt_long(argc, argv, ":o:nqm:h", long_options,
                            NULL)) != -1) {
    switch (opt) {
    case 'o':
      a->output = optarg;
      break;
    case 'n':
      if (!with_dry_run)
        return twt_cli_usage_error(command, usage, "unknown option '%s'",
                                   argv[optind - 1]);
      a->dry_run = 1;
      break;
    case 'q':
      a->quiet = 1;
      break;
    case 'm':
      if (twt_cli_parse_size(optarg, &a->max_line) != 0 ||
          a->max_line < min_line)
        return twt_cli_usage_error(command, usage, "bad --max-line '%s' (at "
                                   "least %zu)", optarg, min_line);
      break;
    case 'h':
      usage(stdout);
      return TWT_CLI_OK;
    default:
      return twt_cli_option_error(command, usage, opt, argv);
    }
  }
  if (optind >= argc)
    return twt_cli_usage_error(command, usage, "no FILE to %s", what);
  if (optind + 1 < argc)
    return twt_cli_usage_error(command, usage, "unexpected argument '%s'",
                               argv[optind + 1]);
  a->input = argv[optind];
  if (a->output && a->output[0] == '\0')
    return twt_cli_usage_error(command, usage, "empty output name");
  return -1;
}

void twt_cli_append(char *buf, size_t size, size_t *n, const char *fmt, ...)
{
  va_list ap;
  int k;

  if (!buf || *n >= size)
    return;
  va_start(ap, fmt);
  k = vsnprintf(buf + *n, size - *n, fmt, ap);
  va_end(ap);
  if (k > 0)
    *n += (size_t)k;
}

const char *twt_cli_plural(uint64_t n, const char *one, const char *many)
{
  return n == 1 ? one : many;
}
