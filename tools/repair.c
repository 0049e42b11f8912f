/* repair.c -- "tracewriter repair": make a crashed trace strictly valid
 *
 * See repair.h for the contract.  How it works: the input is streamed
 * through tools/reader.h, which yields every complete record and says
 * whether the file is already exactly valid (or, when the crash-layout
 * reader finds fault with it, the general reader finds it one strict
 * JSON document: a record spread over lines).  Pass 1 only checks; it runs
 * when the file may be valid (a plain file that ends with "]" or "}",
 * with or without a newline, and every gzip file).  A valid file is left
 * alone.  Otherwise pass 2 reads it again and writes head + records +
 * tail through tools/output.h: into a temporary file next to the target
 * (created at the first record, so a file that is not a trace leaves
 * nothing behind), synced and renamed over the target.
 */
#include "config.h"

#include "repair.h"
#include "command.h"      /* the command-line layer */
#include "output.h"
#include "reader.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROGRAM TWT_CLI_PROGRAM
#define READ_BUF ((size_t)64 * 1024)
#define DEFAULT_GZIP_LEVEL 6

/* The message into err, unless one is there already; returns rc. */
TWT_CLI_PRINTF(4, 5)
static int say(char *err, size_t errsize, int rc, const char *fmt, ...)
{
  va_list ap;

  if (err && errsize && err[0] == '\0') {
    va_start(ap, fmt);
    vsnprintf(err, errsize, fmt, ap);
    va_end(ap);
  }
  return rc;
}

/* Read all of r, only to check it. */
static int check_only(twt_reader *r)
{
  twt_read_item item;
  int rc;

  while ((rc = twt_reader_next(r, &item)) > 0)
    continue;
  return rc;
}

/* Copy the file read by r, byte for byte, to o. */
static int copy_raw(twt_reader *r, twt_out *o, char *err, size_t errsize,
                    const char *in)
{
  char *buf = malloc(READ_BUF);
  uint64_t off = 0;
  ssize_t n;
  int rc = 0;

  if (!buf)
    return say(err, errsize, -ENOMEM, "%s: out of memory", in);
  while ((n = pread(twt_reader_fd(r), buf, READ_BUF, (off_t)off)) != 0) {
    if (n < 0) {
      if (errno == EINTR)
        continue;
      rc = say(err, errsize, -errno, "%s: read: %s", in, strerror(errno));
      break;
    }
    off += (uint64_t)n;
    if ((rc = twt_out_write(o, buf, (size_t)n)) != 0)
      break;
  }
  free(buf);
  return rc;
}

/* 1 if the plain file may be valid: it ends with "]" or "}", and perhaps
 * one newline. */
static int may_be_valid(int fd, uint64_t size)
{
  char end[2];

  if (size < 2 || pread(fd, end, 2, (off_t)size - 2) != 2)
    return 0;
  if (end[1] == '\n')
    end[1] = end[0];
  return end[1] == ']' || end[1] == '}';
}

/* What the reader found, into the report. */
static void report(const twt_reader *r, struct twt_repair_report *rep)
{
  const struct twt_read_info *info = twt_reader_info(r);

  rep->kept_records = info->records;
  rep->dropped_records = info->dropped_records;
  rep->dropped_bytes = info->dropped_bytes;
  rep->junk_bytes = info->junk_bytes;
  rep->input_bytes = info->input_bytes;
  rep->json_bytes = info->json_bytes;
  rep->was_gzip = info->gzip;
  rep->object_form = info->object_form;
  rep->had_tail = info->had_tail;
  rep->gzip_cut = info->gzip_cut;
  rep->gzip_corrupt = info->gzip_corrupt;
  rep->gzip_stale = info->gzip_stale;
  rep->gzip_trailing = info->gzip_trailing;
  rep->gzip_discarded = info->gzip_discarded;
}

/* 1 if the file r reads is one strict JSON trace however it is laid out
 * (a record spread over two lines, say, which the crash-layout reader
 * takes for a cut one): read again by the general reader, whose report
 * then goes into rep.  A strict file is never changed. */
static int strict_anyhow(twt_reader *r, size_t max_record,
                         struct twt_repair_report *rep)
{
  struct twt_read_options ro;
  twt_reader *g;
  int strict;

  memset(&ro, 0, sizeof ro);
  ro.max_record = max_record;
  ro.flags = TWT_READ_GENERAL;
  if (twt_reader_open_fd(&g, twt_reader_fd(r), "", &ro, NULL, 0) != 0)
    return 0;
  strict = check_only(g) == 0 && twt_reader_info(g)->strict &&
           twt_reader_info(g)->records > 0;
  if (strict)
    report(g, rep);
  twt_reader_close(g);
  return strict;
}

/* ========================================================= the API */

void twt_repair_options_init(struct twt_repair_options *opts)
{
  memset(opts, 0, sizeof *opts);
  opts->max_line = TWT_REPAIR_DEFAULT_MAX_LINE;
  opts->gzip_level = DEFAULT_GZIP_LEVEL;
}

int twt_repair_file(const char *in, const char *out,
                    struct twt_repair_report *rep, char *err, size_t errsize)
{
  return twt_repair_file_ex(in, out, NULL, rep, err, errsize);
}

int twt_repair_file_ex(const char *in, const char *out,
                       const struct twt_repair_options *opts,
                       struct twt_repair_report *rep,
                       char *err, size_t errsize)
{
  struct twt_repair_options defaults;
  struct twt_repair_report local_rep;
  struct twt_read_options ro;
  struct twt_out_options oo;
  struct stat st;
  twt_reader *r = NULL;
  twt_out *o = NULL;
  int in_place, strict = 0, rc;

  if (!rep)
    rep = &local_rep;
  memset(rep, 0, sizeof *rep);
  if (err && errsize)
    err[0] = '\0';
  twt_repair_options_init(&defaults);
  if (opts) {
    defaults.max_line = opts->max_line;
    defaults.dry_run = opts->dry_run;
    if (opts->gzip_level >= 1 && opts->gzip_level <= 9)
      defaults.gzip_level = opts->gzip_level;
  }
  if (!in)
    return say(err, errsize, -EINVAL, "(null): no input file");
  memset(&ro, 0, sizeof ro);
  ro.max_record = defaults.max_line ? defaults.max_line :
                  TWT_REPAIR_MIN_MAX_LINE;
  ro.flags = TWT_READ_LAYOUT;        /* the library's files, crash-cut */
  if ((rc = twt_reader_open(&r, in, &ro, err, errsize)) != 0)
    return rc;
  if (fstat(twt_reader_fd(r), &st) != 0) {
    rc = say(err, errsize, -errno, "%s: stat: %s", in, strerror(errno));
    goto done;
  }
  in_place = !out || twt_out_same_file(out, &st);

  /* Pass 1: only check, when the file may be valid as it is. */
  if (defaults.dry_run || twt_reader_info(r)->gzip ||
      may_be_valid(twt_reader_fd(r), (uint64_t)st.st_size)) {
    rc = check_only(r);
    report(r, rep);
    if ((rc == TWT_READ_ENOTTRACE || rc == TWT_READ_ENORECORD) &&
        strict_anyhow(r, ro.max_record, rep)) {
      rc = 0;                       /* strict, in another layout */
      rep->was_valid = strict = 1;
      if (err && errsize)
        err[0] = '\0';
      if (defaults.dry_run || in_place)
        goto done;
      if ((rc = twt_reader_rewind(r)) != 0)
        goto reader_error;
      goto copy;
    }
    if (rc != 0)
      goto reader_error;
    strict = twt_reader_info(r)->strict ||
             strict_anyhow(r, ro.max_record, rep);
    rep->was_valid = strict;
    if (defaults.dry_run || (strict && in_place))
      goto done;
    if ((rc = twt_reader_rewind(r)) != 0)
      goto reader_error;
  }

  /* Pass 2: write head + records + tail (or, for a valid file and -o, a
   * copy byte for byte). */
copy:
  twt_out_options_init(&oo);
  oo.compress = twt_reader_info(r)->gzip && !strict ? TWT_OUT_GZIP :
                TWT_OUT_PLAIN;
  oo.level = defaults.gzip_level;
  oo.tag = "repair";
  if (in_place) {
    /* Keep the owner when we may (root repairing someone's trace). */
    oo.set_owner = st.st_uid != geteuid() || st.st_gid != getegid();
    oo.uid = st.st_uid;
    oo.gid = st.st_gid;
  }
  {
    char msg[2 * PATH_MAX + 256];
    if ((rc = twt_out_open(&o, in_place ? in : out, &oo, msg,
                           sizeof msg)) != 0) {
      say(err, errsize, rc, "%s: %s", in, msg);
      goto done;
    }
  }
  rc = strict ? copy_raw(r, o, err, errsize, in) : twt_out_copy_trace(o, r);
  if (!strict)
    report(r, rep);
  if (rc != 0 && twt_reader_error(r)[0])
    goto reader_error;
  if (rc == 0)
    rc = twt_out_commit(o);
  if (rc != 0)
    goto output_error;
  rep->written = 1;
  rep->in_place = in_place;
  rep->output_bytes = twt_out_bytes(o);
  goto done;

reader_error:
  say(err, errsize, rc, "%s", twt_reader_error(r));
  goto done;
output_error:
  say(err, errsize, rc, "%s: %s", in, twt_out_error(o));
done:
  twt_out_close(o);
  twt_reader_close(r);
  return rc;
}

#define plural twt_cli_plural

void twt_repair_describe(const char *in, const char *out,
                         const struct twt_repair_report *rep,
                         char *buf, size_t size)
{
  size_t n = 0;

#define ADD(...) twt_cli_append(buf, size, &n, __VA_ARGS__)
  if (!buf || size == 0)
    return;
  buf[0] = '\0';
  if (rep->was_valid) {
    ADD("%s: already valid (%" PRIu64 " %s)", in, rep->kept_records,
        plural(rep->kept_records, "record", "records"));
    if (rep->written && out)
      ADD("; copied to %s", out);
    return;
  }
  ADD("%s: kept %" PRIu64 " %s", in, rep->kept_records,
      plural(rep->kept_records, "record", "records"));
  if (!rep->dropped_records && !rep->junk_bytes)
    ADD(", dropped nothing");
  twt_cli_describe_damage(buf, size, &n, &(struct twt_cli_damage){
    ", ", "partial", rep->dropped_records, rep->dropped_bytes,
    rep->junk_bytes, rep->had_tail, rep->gzip_cut, rep->gzip_corrupt,
    rep->gzip_stale, rep->gzip_discarded, rep->gzip_trailing });
  if (!rep->written)
    ADD("; nothing written (dry run)");
  else if (rep->in_place)
    ADD("; repaired in place");
  else
    ADD("; written to %s", out);
#undef ADD
}

/* ====================================================== the command */

const struct twt_cmd_opt twt_tool_repair_options[] = {
  TWT_CMD_COMMON('o', NULL, "write the repaired trace to OUT and leave FILE\n"
                 "alone (default: replace FILE, atomically)"),
  { "dry-run", 'n', NULL, "say what would be done, write nothing" },
  TWT_CMD_COMMON('q', NULL, NULL),
  TWT_CMD_COMMON('m', NULL, "the longest record to keep, in bytes (suffixes\n"
                 "k, m, g: KiB, MiB, GiB; default: 64MiB)"),
  TWT_CMD_COMMON('h', NULL, NULL),
  { NULL, 0, NULL, NULL }
};

static void repair_usage(FILE *out)
{
  fprintf(out,
    "Usage: " PROGRAM " repair [-o OUT] [-n] [-q] [--max-line SIZE] FILE\n"
    "\n"
    "Make a trace left by a crash strictly valid JSON again: keep every\n"
    "complete record, drop the ones cut by the crash, write the tail.  A\n"
    "gzip trace (.json.gz) is inflated as far as it goes and written back\n"
    "as gzip.  A trace that is already valid is left untouched.  Repair a\n"
    "trace only once no process writes it any more (to copy a live trace,\n"
    "use '" PROGRAM " snapshot').\n"
    "\n");
  twt_cmd_print_options(out, twt_tool_repair_options);
  fprintf(out,
    "\n"
    "Exit status: 0 repaired or already valid, 1 an error (I/O, not a\n"
    "trace, a record longer than --max-line), 2 a usage error.\n");
}

int twt_tool_repair_main(int argc, char **argv)
{
  struct twt_repair_options opts;
  struct twt_repair_report rep;
  struct twt_cli_args a;
  char message[PATH_MAX + 256], summary[2 * PATH_MAX + 256];
  int status;

  status = twt_cli_parse_file_args("repair", repair_usage,
                                   twt_tool_repair_options,
                                   TWT_REPAIR_MIN_MAX_LINE, "repair",
                                   argc, argv, &a);
  if (status >= 0)
    return status;
  twt_repair_options_init(&opts);
  opts.dry_run = a.dry_run;
  if (a.max_line)
    opts.max_line = a.max_line;
  if (twt_repair_file_ex(a.input, a.output, &opts, &rep, message,
                         sizeof message) != 0) {
    fprintf(stderr, PROGRAM " repair: %s\n", message);
    return TWT_CLI_RUNTIME;
  }
  if (!a.quiet) {
    twt_repair_describe(a.input, a.output, &rep, summary, sizeof summary);
    printf("%s\n", summary);
  }
  return TWT_CLI_OK;
}
