/* command.c -- the command-line layer of the tool (see command.h) */
#include "config.h"

#include "command.h"
#include "internal.h"     /* tw__parse_size: the options' size parser */
#include "jsonscan.h"     /* twt_jstream */
#include "tracewriter.h"  /* tw_now_ns */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define MSG_MAX (2 * PATH_MAX + 256)

int twt_cmd_error(const char *command, const char *fmt, ...)
{
  va_list ap;

  fprintf(stderr, TWT_CLI_PROGRAM " %s: ", command);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  return TWT_CLI_RUNTIME;
}

const struct twt_cmd_opt twt_cmd_common_options[] = {
  { "output", 'o', "OUT", "write to OUT, gzip if it ends in .gz\n"
                          "(default: the standard output)" },
  { "ndjson", TWT_CMD_OPT_NDJSON, NULL,
    "one record a line and nothing else (newline-\n"
    "delimited JSON: BigQuery, DuckDB, ClickHouse)" },
  { "quiet", 'q', NULL, "print nothing but errors" },
  { "no-parts", TWT_CMD_OPT_NO_PARTS, NULL, "read only the files named" },
  { "max-line", 'm', "SIZE", "the longest record (default: 64MiB)" },
  { "help", 'h', NULL, "show this help and exit" },
  { NULL, 0, NULL, NULL }
};

struct twt_cmd_opt twt_cmd_opt_resolve(const struct twt_cmd_opt *o)
{
  struct twt_cmd_opt r = *o;

  if (o->name)
    return r;
  for (const struct twt_cmd_opt *c = twt_cmd_common_options; c->name; c++)
    if (c->val == o->val) {
      r.name = c->name;
      r.arg = o->arg ? o->arg : c->arg;
      r.help = o->help ? o->help : c->help;
      if (!c->arg)
        r.arg = NULL;
      return r;
    }
  abort();                          /* a table names no common option */
}

void twt_cmd_getopt_init(struct twt_cmd_getopt *g,
                         const struct twt_cmd_opt *opts)
{
  size_t n = 0, s = 0;

  memset(g, 0, sizeof *g);
  g->shorts[s++] = ':';
  for (; opts[n].name || opts[n].val; n++) {
    struct twt_cmd_opt o = twt_cmd_opt_resolve(&opts[n]);
    if (n == TWT_CMD_OPTS_MAX)
      abort();                      /* raise TWT_CMD_OPTS_MAX */
    g->longs[n].name = o.name;
    g->longs[n].has_arg = o.arg ? required_argument : no_argument;
    g->longs[n].val = o.val;
    if (o.val < 0x100) {
      g->shorts[s++] = (char)o.val;
      if (o.arg)
        g->shorts[s++] = ':';
    }
  }
}

/* The width of "  -x, --name ARG". */
static size_t option_width(const struct twt_cmd_opt *o)
{
  return 2 + 4 + 2 + strlen(o->name) + (o->arg ? 1 + strlen(o->arg) : 0);
}

void twt_cmd_print_options(FILE *out, const struct twt_cmd_opt *opts)
{
  size_t column = 0;

  for (size_t i = 0; opts[i].name || opts[i].val; i++) {
    struct twt_cmd_opt o = twt_cmd_opt_resolve(&opts[i]);
    if (option_width(&o) + 2 > column)
      column = option_width(&o) + 2;
  }
  for (size_t i = 0; opts[i].name || opts[i].val; i++) {
    struct twt_cmd_opt o = twt_cmd_opt_resolve(&opts[i]);
    const char *line = o.help;
    size_t width = option_width(&o);
    if (o.val < 0x100)
      fprintf(out, "  -%c, --%s", o.val, o.name);
    else
      fprintf(out, "      --%s", o.name);
    if (o.arg)
      fprintf(out, " %s", o.arg);
    for (;;) {
      const char *end = strchr(line, '\n');
      size_t len = end ? (size_t)(end - line) : strlen(line);
      fprintf(out, "%*s%.*s\n", (int)(column - width), "", (int)len, line);
      if (!end)
        break;
      line = end + 1;
      width = 0;
    }
  }
}

int twt_cmd_option(const char *command, void (*usage)(FILE *), int opt,
                   const char *arg, char **argv, struct twt_cmd_common *c)
{
  switch (opt) {
  case 'o':
    if (arg[0] == '\0')
      return twt_cli_usage_error(command, usage, "empty output name");
    c->output = arg;
    return TWT_CMD_TAKEN;
  case 'q':
    c->quiet = 1;
    return TWT_CMD_TAKEN;
  case 'm':
    if (twt_cli_parse_size(arg, &c->max_record) != 0 ||
        c->max_record < TWT_READ_MIN_MAX_RECORD)
      return twt_cli_usage_error(command, usage, "bad --max-line '%s' (at "
                                 "least %zu)", arg,
                                 (size_t)TWT_READ_MIN_MAX_RECORD);
    return TWT_CMD_TAKEN;
  case TWT_CMD_OPT_NO_PARTS:
    c->no_parts = 1;
    return TWT_CMD_TAKEN;
  case TWT_CMD_OPT_NDJSON:
    c->ndjson = 1;
    return TWT_CMD_TAKEN;
  case 'h':
    usage(stdout);
    return TWT_CLI_OK;
  case ':':
  case '?':
    return twt_cli_option_error(command, usage, opt, argv);
  default:                          /* a command's own, not handled */
    return twt_cli_option_error(command, usage, '?', argv);
  }
}

void twt_cmd_warn(void *command, const char *msg)
{
  fprintf(stderr, TWT_CLI_PROGRAM " %s: %s\n", (const char *)command, msg);
}

int twt_cmd_open_input(const char *command, const struct twt_cmd_common *c,
                       char *const *paths, size_t n, twt_tin **tp)
{
  struct twt_tin_options to;
  char msg[MSG_MAX];

  memset(&to, 0, sizeof to);
  to.max_record = c->max_record;
  to.no_parts = c->no_parts;
  to.quiet = c->quiet;
  to.warn = twt_cmd_warn;
  to.warn_arg = (void *)command;
  to.events_unparsed = c->events_unparsed;
  if (twt_tin_open(tp, paths, n, &to, msg, sizeof msg) != 0)
    return twt_cmd_error(command, "%s", msg);
  return -1;
}

int twt_cmd_open_output(const char *command, const struct twt_cmd_common *c,
                        twt_tin *const *ins, size_t n, twt_out **op)
{
  struct twt_out_options oo;
  char msg[MSG_MAX];

  *op = NULL;
  if (c->output && strcmp(c->output, "-") != 0) {
    for (size_t i = 0; i < n; i++)
      if (twt_tin_has_file(ins[i], c->output))
        return twt_cmd_error(command, "%s: the output is one of the "
                             "inputs", c->output);
  }
  twt_out_options_init(&oo);
  oo.compress = TWT_OUT_BY_NAME;
  oo.tag = command;
  oo.ndjson = c->ndjson;
  if (twt_out_open(op, c->output, &oo, msg, sizeof msg) != 0)
    return twt_cmd_error(command, "%s", msg);
  return -1;
}

const char *twt_cmd_output_name(const struct twt_cmd_common *c)
{
  return c->output && strcmp(c->output, "-") != 0 ? c->output
                                                  : "standard output";
}

int twt_cmd_rewrite(const twt_rec *r, int64_t shift, const char *pid,
                    size_t pid_len, twt_cmd_buf *b, const char **text,
                    size_t *len)
{
  char ts[TWT_REC_NUM_MAX];
  twt_rec_span at[2];
  const char *with[2];
  size_t wlen[2], ne = 0;

  if (shift && (r->has & TWT_REC_TS)) {
    at[ne] = r->ts_v;
    with[ne] = ts;
    wlen[ne] = twt_rec_us_shift_text(r->text + r->ts_v.off, r->ts_v.len,
                                     shift, ts);
    if (wlen[ne] == 0)            /* not a number it can move exactly */
      wlen[ne] = twt_rec_us_text(r->ts + shift, ts);
    ne++;
  }
  if (pid && r->pid_v.len && (pid_len != r->pid_v.len ||
                              memcmp(pid, r->text + r->pid_v.off,
                                     pid_len) != 0)) {
    at[ne] = r->pid_v;
    with[ne] = pid;
    wlen[ne++] = pid_len;
  }
  if (ne == 0) {
    *text = r->text;
    *len = r->len;
    return 0;
  }
  if (ne == 2 && at[1].off < at[0].off) {   /* in text order */
    twt_rec_span t = at[0];
    const char *w = with[0];
    size_t l = wlen[0];
    at[0] = at[1], with[0] = with[1], wlen[0] = wlen[1];
    at[1] = t, with[1] = w, wlen[1] = l;
  }
  return twt_cmd_edit(r->text, r->len, at, with, wlen, ne, b, text, len);
}

int twt_cmd_edit(const char *text, size_t len, const twt_rec_span *at,
                 const char *const *with, const size_t *wlen, size_t n,
                 twt_cmd_buf *b, const char **out, size_t *outlen)
{
  size_t need = len, w = 0, from = 0;

  for (size_t i = 0; i < n; i++)
    need += wlen[i];
  if (need > b->cap) {
    char *p = realloc(b->p, need);
    if (!p)
      return -ENOMEM;
    b->p = p;
    b->cap = need;
  }
  for (size_t i = 0; i < n; i++) {
    if (!at[i].len)
      continue;
    memcpy(b->p + w, text + from, at[i].off - from);
    w += at[i].off - from;
    memcpy(b->p + w, with[i], wlen[i]);
    w += wlen[i];
    from = at[i].off + at[i].len;
  }
  memcpy(b->p + w, text + from, len - from);
  *out = b->p;
  *outlen = w + len - from;
  return 0;
}

void twt_cmd_buf_free(twt_cmd_buf *b)
{
  free(b->p);
  b->p = NULL;
  b->cap = 0;
}

int twt_cmd_output_error(const char *command, const twt_out *o)
{
  return twt_cmd_error(command, "%s", twt_out_error(o));
}

int twt_cmd_input_error(const char *command, const twt_tin *t)
{
  return twt_cmd_error(command, "%s", twt_tin_error(t));
}

static int out_write(void *arg, const char *p, size_t n)
{
  return twt_out_write(arg, p, n);
}

int twt_cmd_copy_member(const char *command, const char *path, uint64_t off,
                        uint64_t len, twt_out *o, int quiet)
{
  char *buf = malloc(65536);
  int rc = 0;

  if (!buf)
    return twt_cmd_error(command, "out of memory");
  /* Twice: checked whole first (nothing written of a bad one), then
   * copied, as zlib reads it (a plain file as it is, gzip inflated:
   * the offsets are in the JSON text). */
  for (int pass = 0; pass < 2 && rc == 0; pass++) {
    gzFile f = gzopen(path, "rb");
    twt_jstream j;
    uint64_t left = len;
    if (!f || gzseek(f, (z_off_t)off, SEEK_SET) != (z_off_t)off) {
      if (f)
        gzclose(f);
      free(buf);
      return twt_cmd_error(command, "%s: cannot read its member at byte %"
                           PRIu64 " again", path, off);
    }
    twt_jstream_init(&j, 1);
    if (pass == 1 && twt_out_write(o, ",", 1) != 0)
      rc = -2;
    while (rc == 0 && left > 0) {
      int n = gzread(f, buf, (unsigned)(left < 65536 ? left : 65536));
      if (n <= 0) {
        rc = -1;
        break;
      }
      left -= (uint64_t)n;
      rc = twt_jstream_feed(&j, buf, (size_t)n, pass ? out_write : NULL, o);
    }
    if (rc == 0)
      rc = twt_jstream_end(&j);
    gzclose(f);
  }
  free(buf);
  if (rc == -2)
    return twt_cmd_output_error(command, o);
  if (rc != 0) {
    if (!quiet)
      fprintf(stderr, TWT_CLI_PROGRAM " %s: %s: the member of %" PRIu64
              " bytes at byte %" PRIu64 " is not valid JSON: left out\n",
              command, path, len, off);
    return 1;
  }
  return 0;
}

int twt_cmd_finish_tin(const char *command, twt_out *o, int object_form,
                       const char *tail, size_t tail_len, twt_tin *in,
                       int quiet)
{
  const struct twt_scan_big *big;
  const char *path;
  unsigned nbig = twt_tin_big_members(in, &big, &path);
  int rc;

  if (!nbig || !object_form || !tail || tail_len < 2 ||
      tail[tail_len - 1] != '}' || twt_out_is_ndjson(o))
    return twt_cmd_finish_output(command, o, object_form, tail, tail_len);
  /* The tail without its "}", each member too big to keep copied from
   * the file, then the "}". */
  if (twt_out_end(o, object_form, tail, tail_len - 1) != 0)
    return twt_cmd_output_error(command, o);
  for (unsigned k = 0; k < nbig; k++)
    if ((rc = twt_cmd_copy_member(command, path, big[k].off, big[k].len, o,
                                  quiet)) < 0 || rc > 1)
      return rc;
  if (twt_out_write(o, "}", 1) != 0 || twt_out_commit(o) != 0)
    return twt_cmd_output_error(command, o);
  return 0;
}

int twt_cmd_finish_output(const char *command, twt_out *o, int object_form,
                          const char *tail, size_t tail_len)
{
  if (twt_out_end(o, object_form, tail, tail_len) != 0 ||
      twt_out_commit(o) != 0)
    return twt_cmd_output_error(command, o);
  return 0;
}

void twt_cmd_progress(twt_progress *p, const twt_tin *in)
{
  if (!p->enabled)                /* per record: nothing to do, fast */
    return;
  twt_progress_update(p, twt_tin_done_bytes(in), twt_tin_total_bytes(in),
                      twt_tin_stats(in)->json_bytes);
}

/* ===================================================== every command */

int twt_cli_parse_size(const char *text, size_t *out)
{
  uint64_t v;

  if (tw__parse_size(text, strlen(text), &v) != 0 || v > SIZE_MAX)
    return -1;
  *out = (size_t)v;
  return 0;
}

void twt_cli_describe_damage(char *buf, size_t size, size_t *n,
                             const struct twt_cli_damage *d)
{
#define ADD(...) twt_cli_append(buf, size, n, __VA_ARGS__)
  if (d->dropped_records)
    ADD("%sdropped %" PRIu64 " %s %s (%" PRIu64 " %s)", d->sep,
        d->dropped_records, d->cut_word,
        twt_cli_plural(d->dropped_records, "record", "records"),
        d->dropped_bytes, twt_cli_plural(d->dropped_bytes, "byte",
                                         "bytes"));
  if (d->junk_bytes)
    ADD("%sdropped %" PRIu64 " %s of other data", d->sep, d->junk_bytes,
        twt_cli_plural(d->junk_bytes, "byte", "bytes"));
  if (!d->had_tail)
    ADD("; the tail was missing");
  if (d->gzip_cut)
    ADD("; the gzip data was cut");
  if (d->gzip_corrupt)
    ADD("; the gzip data was corrupt");
  if (d->gzip_stale)
    ADD("; its end was stale bytes of an earlier commit");
  if (d->gzip_discarded)
    ADD("; %" PRIu64 " inflated %s from the damaged end unused",
        d->gzip_discarded, twt_cli_plural(d->gzip_discarded, "byte",
                                          "bytes"));
  if (d->gzip_trailing)
    ADD("; ignored %" PRIu64 " %s after the gzip data", d->gzip_trailing,
        twt_cli_plural(d->gzip_trailing, "byte", "bytes"));
#undef ADD
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
                            const struct twt_cmd_opt *opts, size_t min_line,
                            const char *what, int argc, char **argv,
                            struct twt_cli_args *a)
{
  struct twt_cmd_getopt g;
  int opt;

  memset(a, 0, sizeof *a);
  twt_cmd_getopt_init(&g, opts);
  optind = 0;                       /* glibc: start afresh on every call */
  opterr = 0;                       /* our messages name the command */
  while ((opt = getopt_long(argc, argv, g.shorts, g.longs, NULL)) != -1) {
    switch (opt) {
    case 'o':
      a->output = optarg;
      break;
    case 'n':
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

/* ========================================================= progress */

#define PROGRESS_DELAY_NS (1000u * 1000u * 1000u)
#define PROGRESS_EVERY_NS (500u * 1000u * 1000u)

void twt_format_bytes(uint64_t bytes, char *out, size_t outsize)
{
  static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
  double value = (double)bytes;
  size_t unit = 0;

  if (bytes < 1024) {
    snprintf(out, outsize, "%" PRIu64 " %s", bytes,
             twt_cli_plural(bytes, "byte", "bytes"));
    return;
  }
  value /= 1024;
  while (value >= 1024 && unit + 1 < sizeof units / sizeof units[0]) {
    value /= 1024;
    unit++;
  }
  snprintf(out, outsize, "%.1f %s", value, units[unit]);
}

void twt_progress_init(twt_progress *p, const char *command)
{
  memset(p, 0, sizeof *p);
  p->enabled = isatty(STDERR_FILENO);
  p->command = command;
  p->start_ns = tw_now_ns();
  p->next_ns = p->start_ns + PROGRESS_DELAY_NS;
}

void twt_progress_update(twt_progress *p, uint64_t done, uint64_t total,
                         uint64_t json)
{
  char a[32], b[32];
  uint64_t now;

  if (!p->enabled || (now = tw_now_ns()) < p->next_ns)
    return;
  p->next_ns = now + PROGRESS_EVERY_NS;
  if (total && done <= total) {
    twt_format_bytes(done, a, sizeof a);
    twt_format_bytes(total, b, sizeof b);
    fprintf(stderr, "\r" TWT_CLI_PROGRAM " %s: %3u%% (%s of %s)   ",
            p->command, (unsigned)(done * 100 / total), a, b);
  } else {
    twt_format_bytes(json, a, sizeof a);
    fprintf(stderr, "\r" TWT_CLI_PROGRAM " %s: %s of JSON read   ",
            p->command, a);
  }
  p->shown = 1;
}

void twt_progress_end(twt_progress *p)
{
  if (p->shown)
    fprintf(stderr, "\r%70s\r", "");
  p->shown = 0;
}
