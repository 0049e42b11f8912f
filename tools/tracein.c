/* tracein.c -- one trace read from its files (see tracein.h)
 *
 * The files are read one at a time through tools/reader.h (asking for
 * the dropped items too, to say where they were); each record is parsed
 * (tools/records.h) and sorted into metadata, the clock record and
 * events.  Metadata records are remembered by key -- their name, pid and
 * tid -- with a hash of their text, in an open-addressing table, so that
 * a record that a later part repeats word for word is dropped.
 */
#include "config.h"

#include "tracein.h"
#include "layout.h"       /* TW__LAYOUT_CLOCK_SYNC_ID */
#include "rotate.h"       /* tw__rotated_name */

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MSG_MAX (2 * PATH_MAX + 256)

#if defined(__GNUC__) || defined(__clang__)
# define TIN_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
# define TIN_PRINTF(fmt, args)
#endif
#define META_SLOTS (2 * TWT_TIN_META_MAX)   /* a power of two */

struct file {
  char *path;
  dev_t dev;
  ino_t ino;
  uint64_t size;
};

struct meta_slot {
  uint64_t key;            /* 0: empty */
  uint64_t text;           /* hash of the record's text */
};

struct twt_tin {
  struct twt_tin_options opts;
  struct file *files;
  size_t nfiles, cur;      /* the file being read (== nfiles: done) */
  twt_reader *r;
  uint64_t base_pos;       /* JSON bytes of the files before cur */
  uint64_t done_bytes;     /* sizes of the files read to their end */
  uint64_t part_dropped, part_dropped_bytes, part_first_drop;

  struct meta_slot *meta;  /* META_SLOTS, allocated at the first 'M' */
  size_t meta_used;

  struct twt_tin_clock clock;
  int64_t base_delta, cur_delta, shift;
  int have_base;

  size_t pre_file;         /* 1 + the file whose members were found by
                              a first pass (all_members), or 0 */
  char *pre;               /* ... its members */
  size_t pre_len;
  int pre_ok;
  struct twt_scan_big pre_big[TWT_SCAN_BIG_MAX]; /* ... those too big */
  unsigned pre_nbig;
  struct twt_scan_big tail_big[TWT_SCAN_BIG_MAX]; /* the tail file's */
  unsigned tail_nbig;
  char *tail_path;

  int form_known, object_form;
  char *tail;              /* the tail of the last file in the output's
                              form (malloc'd) */
  size_t tail_len;
  int tail_form;           /* the form of that file */

  struct twt_tin_stats stats;
  int err;
  char msg[MSG_MAX];
};

/* =========================================================== errors */

TIN_PRINTF(3, 4)
static int fail(twt_tin *t, int rc, const char *fmt, ...)
{
  va_list ap;

  if (t->err)
    return t->err;
  t->err = rc;
  va_start(ap, fmt);
  vsnprintf(t->msg, sizeof t->msg, fmt, ap);
  va_end(ap);
  return rc;
}

/* A warning: given to the caller's opts.warn (the command layer prints
 * it), never printed here. */
TIN_PRINTF(2, 3)
static void warn(const twt_tin *t, const char *fmt, ...)
{
  char msg[MSG_MAX];
  va_list ap;

  if (t->opts.quiet || !t->opts.warn)
    return;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  t->opts.warn(t->opts.warn_arg, msg);
}

/* ============================================================ parts */

struct part {
  unsigned long long n;
  char *name;
};

static int part_cmp(const void *a, const void *b)
{
  const struct part *x = a, *y = b;

  return x->n < y->n ? -1 : x->n > y->n;
}

/* The rotated parts of path in its directory, ascending: *parts (each a
 * malloc'ed path), *n.  0 or -errno. */
static int find_parts(const char *path, struct part **parts, size_t *n)
{
  size_t size = strlen(path) + 32, plen, slen, blen, cap = 0;
  char *n0 = malloc(size), *n1 = malloc(size), *dir = NULL;
  const char *slash, *base;
  struct dirent *e;
  DIR *d = NULL;
  int rc = 0;

  *parts = NULL;
  *n = 0;
  if (!n0 || !n1) {
    rc = -ENOMEM;
    goto done;
  }
  if (tw__rotated_name(n0, size, path, 0) != 0 ||
      tw__rotated_name(n1, size, path, 1) != 0)
    goto done;                    /* no room for a number: no parts */
  /* The number follows the "." at tw__layout_number_at: the prefix ends
   * after that dot, the suffix begins after the six digits. */
  plen = tw__layout_number_at(path) + 1;
  slen = strlen(n0) - plen - 6;
  slash = strrchr(n0, '/');
  base = slash ? slash + 1 : n0;
  blen = plen - (size_t)(base - n0);
  if (!(dir = slash ? strndup(n0, (size_t)(slash - n0) + 1) : strdup("./"))) {
    rc = -ENOMEM;
    goto done;
  }
  if (!(d = opendir(dir)))
    goto done;                    /* unreadable directory: no parts */
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name), digits, i;
    unsigned long long num = 0;
    if (len < blen + 6 + slen || memcmp(e->d_name, base, blen) != 0 ||
        memcmp(e->d_name + len - slen, n0 + plen + 6, slen) != 0)
      continue;
    digits = len - blen - slen;
    for (i = 0; i < digits; i++) {
      char c = e->d_name[blen + i];
      if (c < '0' || c > '9' || num > ULLONG_MAX / 10 - 1)
        break;
      num = num * 10 + (unsigned long long)(c - '0');
    }
    if (i < digits || num == 0)
      continue;
    if (*n == cap) {
      struct part *p = realloc(*parts, (cap = cap ? 2 * cap : 16) *
                               sizeof **parts);
      if (!p) {
        rc = -ENOMEM;
        goto done;
      }
      *parts = p;
    }
    (*parts)[*n].n = num;
    (*parts)[*n].name = malloc(strlen(dir) + len + 1);
    if (!(*parts)[*n].name) {
      rc = -ENOMEM;
      goto done;
    }
    /* "./" only when path had no directory: keep names as given. */
    sprintf((*parts)[*n].name, "%s%s", slash ? dir : "", e->d_name);
    (*n)++;
  }
  if (*n > 1)
    qsort(*parts, *n, sizeof **parts, part_cmp);
done:
  if (d)
    closedir(d);
  free(dir);
  free(n0);
  free(n1);
  return rc;
}

/* Add path to t's files, checking what it is. */
static int add_file(twt_tin *t, const char *path, size_t *cap)
{
  struct stat st;
  struct file *f;

  if (stat(path, &st) != 0)
    return fail(t, -errno, "%s: %s", path, strerror(errno));
  if (S_ISDIR(st.st_mode))
    return fail(t, -EISDIR, "%s: is a directory", path);
  if (!S_ISREG(st.st_mode))
    return fail(t, -EINVAL, "%s: not a regular file%s: the commands read "
                "files, which they may read twice (a first pass finds the "
                "members after the events); save it to a file first", path,
                S_ISFIFO(st.st_mode) ? " but a pipe" : "");
  for (size_t i = 0; i < t->nfiles; i++)
    if (t->files[i].dev == st.st_dev && t->files[i].ino == st.st_ino)
      return fail(t, -EEXIST, "%s: the same file as %s, read once only",
                  path, t->files[i].path);
  if (t->nfiles == *cap) {
    f = realloc(t->files, (*cap = *cap ? 2 * *cap : 8) * sizeof *f);
    if (!f)
      return fail(t, -ENOMEM, "out of memory");
    t->files = f;
  }
  f = &t->files[t->nfiles];
  if (!(f->path = strdup(path)))
    return fail(t, -ENOMEM, "out of memory");
  f->dev = st.st_dev;
  f->ino = st.st_ino;
  f->size = (uint64_t)st.st_size;
  t->nfiles++;
  return 0;
}

/* Add path, preceded by its rotated parts unless no_parts. */
static int add_path(twt_tin *t, const char *path, size_t *cap)
{
  struct part *parts = NULL;
  size_t n = 0, i;
  int rc = 0;

  if (!t->opts.no_parts && (rc = find_parts(path, &parts, &n)) != 0)
    return fail(t, rc, "%s: cannot list its rotated parts: %s", path,
                strerror(-rc));
  for (i = 0; i < n && rc == 0; i++)
    rc = add_file(t, parts[i].name, cap);
  for (i = 0; i < n; i++)
    free(parts[i].name);
  free(parts);
  if (rc)
    return rc;
  /* A writer killed inside a rotation (tracewriter(7), ROTATION) leaves
   * the live file with its numbered name as well, or (no hard links)
   * for an instant no live file: the parts are then the whole trace. */
  if (n > 0) {
    struct stat st;
    const struct file *last = &t->files[t->nfiles - 1];
    if (stat(path, &st) != 0 ? errno == ENOENT
                             : st.st_dev == last->dev && st.st_ino == last->ino)
      return 0;
  }
  return add_file(t, path, cap);
}

/* ============================================================== API */

int twt_tin_open(twt_tin **tp, char *const *paths, size_t n,
                 const struct twt_tin_options *opts, char *err,
                 size_t errsize)
{
  size_t cap = 0;
  twt_tin *t;
  int rc = 0;

  *tp = NULL;
  if (err && errsize)
    err[0] = '\0';
  if (!(t = calloc(1, sizeof *t))) {
    if (err && errsize)
      snprintf(err, errsize, "out of memory");
    return -ENOMEM;
  }
  if (opts)
    t->opts = *opts;
  for (size_t i = 0; i < n && rc == 0; i++)
    rc = add_path(t, paths[i], &cap);
  if (rc == 0 && t->nfiles == 0)
    rc = fail(t, -EINVAL, "no input file");
  if (rc != 0) {
    if (err && errsize)
      snprintf(err, errsize, "%s", t->msg);
    twt_tin_close(t);
    return rc;
  }
  for (size_t i = 0; i < t->nfiles; i++)
    t->stats.input_bytes += t->files[i].size;
  *tp = t;
  return 0;
}

/* Warn about what the file just read dropped. */
static void warn_dropped(twt_tin *t, const struct twt_read_info *info)
{
  const char *name = t->files[t->cur].path;
  char what[512];
  size_t k = 0;

#define ADD(...) twt_text_append(what, sizeof what, &k, __VA_ARGS__)
  what[0] = '\0';
  if (t->part_dropped)
    ADD("dropped %" PRIu64 " cut %s and other data (%" PRIu64 " %s), the "
        "first at byte %" PRIu64, t->part_dropped,
        twt_text_plural(t->part_dropped, "record", "records"),
        t->part_dropped_bytes,
        twt_text_plural(t->part_dropped_bytes, "byte", "bytes"),
        t->part_first_drop);
  if (info->doc->cut)
    ADD("%sthe document was cut at byte %" PRIu64, k ? "; " : "",
        info->doc->stop_offset);
  if (info->doc->stopped)
    ADD("%sread up to byte %" PRIu64 ", where %s", k ? "; " : "",
        info->doc->stop_offset, info->doc->stop_why);
  if (info->doc->skipped)
    ADD("%s%" PRIu64 " %s that %s not objects skipped", k ? "; " : "",
        info->doc->skipped, twt_text_plural(info->doc->skipped, "event", "events"),
        info->doc->skipped == 1 ? "is" : "are");
  if (info->doc->members_dropped)
    ADD("%s%" PRIu64 " members besides traceEvents too long to keep",
        k ? "; " : "", info->doc->members_dropped);
  if (t->form_known && !t->object_form && info->object_form && info->tail) {
    size_t n;
    const char *bare = twt_read_bracket(1, &n);
    if (info->tail_len != n || memcmp(info->tail, bare, n) != 0)
      ADD("%sits members besides traceEvents left out: the output is an "
          "array, as the first file with a record", k ? "; " : "");
  }
  if (info->gzip_cut)
    ADD("%sthe gzip data was cut", k ? "; " : "");
  if (info->gzip_corrupt)
    ADD("%sthe gzip data was corrupt", k ? "; " : "");
  if (info->gzip_discarded)
    ADD("%s%" PRIu64 " bytes inflated from its damaged end unused",
        k ? "; " : "", info->gzip_discarded);
#undef ADD
  if (k)
    warn(t, "%s: %s (kept %" PRIu64 " %s)", name, what, info->records,
         twt_text_plural(info->records, "record", "records"));
}

/* The file being read ended. */
static void file_done(twt_tin *t)
{
  const struct twt_read_info *info = twt_reader_info(t->r);

  warn_dropped(t, info);
  t->stats.dropped_records += info->dropped_records;
  t->stats.dropped_bytes += info->dropped_bytes + info->junk_bytes;
  t->stats.files_done++;
  t->stats.any_gzip |= info->gzip;
  /* With no record yet, the output's form is this file's: a trace of
   * no event keeps its form and its members. */
  if (!t->form_known)
    t->object_form = info->object_form;
  /* The tail of the last file in the output's form (a file in the
   * other form has members that have no place in it, or none). */
  if (info->tail && (!t->form_known || info->object_form == t->object_form)) {
    char *p = realloc(t->tail, info->tail_len + 1);
    if (p) {
      memcpy(p, info->tail, info->tail_len);
      t->tail = p;
      t->tail_len = info->tail_len;
      t->tail_form = info->object_form;
      t->tail_nbig = 0;
      free(t->tail_path);
      if ((t->tail_path = strdup(t->files[t->cur].path)) != NULL &&
          info->doc->nbig) {
        t->tail_nbig = info->doc->nbig;
        memcpy(t->tail_big, info->doc->big, info->doc->nbig * sizeof *info->doc->big);
      }
    }
  }
  t->base_pos += info->json_bytes;
  t->done_bytes += t->files[t->cur].size;
  t->stats.json_bytes = t->base_pos;
  twt_reader_close(t->r);
  t->r = NULL;
  t->cur++;
}

static int open_file(twt_tin *t)
{
  struct twt_read_options ro;
  char msg[MSG_MAX];
  int rc;

  memset(&ro, 0, sizeof ro);
  ro.max_record = t->opts.max_record;
  ro.flags = TWT_READ_DROPPED;
  /* Each record's view (item.rec) filled while the reader checks it:
   * one pass.  Not for cat (events_unparsed): reporting the members of
   * every record costs it a third more instructions a byte (14.2 to
   * 18.8 in make bench-tools), where its records that begin {"ph":"P"
   * on their own clock need none; the others are parsed once more. */
  if (!t->opts.events_unparsed)
    ro.flags |= TWT_READ_MEMBERS;
  rc = twt_reader_open(&t->r, t->files[t->cur].path, &ro, msg, sizeof msg);
  if (rc != 0)
    return fail(t, rc, "%s", msg);
  t->part_dropped = t->part_dropped_bytes = t->part_first_drop = 0;
  return 0;
}

/* 1 if a metadata record with this key and text is new (or changed). */
static int meta_is_new(twt_tin *t, const twt_rec *r)
{
  uint64_t key = 1, text;
  size_t i;

  if (!t->meta) {
    if (!(t->meta = calloc(META_SLOTS, sizeof *t->meta)))
      return 1;                   /* no table: keep every one */
  }
  key = twt_rec_hash(r->text + r->name.off, r->name.len, key);
  key = twt_rec_hash(r->text + r->pid_v.off, r->pid_v.len, key);
  key = twt_rec_hash(r->text + r->tid_v.off, r->tid_v.len, key);
  key |= key == 0;
  text = twt_rec_hash(r->text, r->len, 7);
  for (i = key & (META_SLOTS - 1); t->meta[i].key;
       i = (i + 1) & (META_SLOTS - 1)) {
    if (t->meta[i].key == key) {
      if (t->meta[i].text == text)
        return 0;
      t->meta[i].text = text;
      return 1;
    }
  }
  if (t->meta_used >= TWT_TIN_META_MAX) {
    t->stats.meta_overflow++;
    return 1;
  }
  t->meta[i].key = key;
  t->meta[i].text = text;
  t->meta_used++;
  return 1;
}

/* If r is a clock record (ph 'c', args.sync_id the library's): 1, with
 * its clocks read into *mono, the trace's clock (the clock of its ts),
 * and *real (0 and 0 when they are not there).  A timebase=kineto
 * trace's ts count from args.kineto_base_ns on the wall clock: its trace
 * clock then reads real less that base. */
static int is_clock(const twt_rec *r, int64_t *mono, int64_t *real)
{
  const char *args = r->text + r->args.off;
  twt_rec_span v;

  *mono = *real = 0;
  if (r->ph != 'c' || !r->args.len)
    return 0;
  v = twt_rec_member(args, r->args.len, TW__LAYOUT_CLOCK_KEY_ID);
  if (!v.len || !twt_rec_str_is(args + v.off, v.len,
                                TW__LAYOUT_CLOCK_SYNC_ID))
    return 0;
  v = twt_rec_member(args, r->args.len, TW__LAYOUT_CLOCK_KEY_MONO);
  if (v.len && twt_rec_int(args + v.off, v.len, mono) == 0) {
    v = twt_rec_member(args, r->args.len, TW__LAYOUT_CLOCK_KEY_REAL);
    if (v.len && twt_rec_int(args + v.off, v.len, real) == 0) {
      int64_t base;
      v = twt_rec_member(args, r->args.len, TW__LAYOUT_CLOCK_KEY_BASE);
      if (v.len && twt_rec_int(args + v.off, v.len, &base) == 0)
        *mono = *real - base;
      return 1;
    }
  }
  *mono = *real = 0;
  return 1;
}

/* A clock record: returns 1 if it is to be yielded (the first). */
static int take_clock(twt_tin *t, const twt_rec *r, int64_t mono,
                      int64_t real, uint64_t offset)
{
  int64_t delta = real - mono, diff;

  if (!mono && !real)
    return 0;                     /* unreadable: not used, not kept */
  if (!t->have_base) {
    t->have_base = 1;
    t->base_delta = t->cur_delta = delta;
    t->clock.known = 1;
    t->clock.mono = mono;
    t->clock.real = real;
    t->clock.pid = (r->has & TWT_REC_PID) ? r->pid : 0;
    t->clock.tid = (r->has & TWT_REC_TID) ? r->tid : 0;
    return 1;
  }
  diff = delta - t->cur_delta;
  if (diff > TWT_TIN_CLOCK_TOLERANCE || diff < -TWT_TIN_CLOCK_TOLERANCE) {
    char d[TWT_REC_US_MAX + 1];
    t->cur_delta = delta;
    t->shift = delta - t->base_delta;
    t->stats.clock_shifts++;
    d[twt_rec_us_text(t->shift, d)] = '\0';
    warn(t, "%s: another clock than the first file's (another process or "
         "boot, or the wall clock was set): its timestamps from byte %"
         PRIu64 " on are moved by %s us onto the first file's clock",
         t->files[t->cur].path, offset, d);
  }
  return 0;
}

int twt_tin_next(twt_tin *t, twt_tin_rec *rec)
{
  twt_read_item item;
  int rc;

  if (t->err)
    return t->err;
  for (;;) {
    int64_t mono, real;
    if (!t->r) {
      if (t->cur == t->nfiles)
        return 0;
      if ((rc = open_file(t)) != 0)
        return rc;
    }
    rc = twt_reader_next(t->r, &item);
    if (rc < 0)
      return fail(t, rc, "%s", twt_reader_error(t->r));
    if (rc == 0) {
      file_done(t);
      continue;
    }
    if (item.kind != TWT_ITEM_RECORD) {
      if (t->part_dropped++ == 0)
        t->part_first_drop = item.offset;
      t->part_dropped_bytes += item.len;
      continue;
    }
    if (!t->form_known) {
      t->form_known = 1;
      t->object_form = twt_reader_info(t->r)->object_form;
    }
    t->stats.records++;
    if (t->opts.events_unparsed && !t->shift && item.len > 9 &&
        memcmp(item.text, "{\"ph\":\"", 7) == 0 && item.text[8] == '"' &&
        item.text[7] != 'M' && item.text[7] != 'c') {
      rec->r.has = 0;             /* nothing else read (see tracein.h) */
      rec->r.text = item.text;
      rec->r.len = item.len;
      rec->r.ph = item.text[7];
      rec->kind = TWT_TIN_EVENT;
      goto yield;
    }
    if (item.rec) {
      rec->r = *item.rec;           /* found while the reader checked it */
      twt_rec_finish(&rec->r, item.text, item.len);
    } else if (twt_rec_parse(&rec->r, item.text, item.len) != 0)
      return fail(t, TWT_READ_ENOTTRACE, "%s: byte %" PRIu64 ": a record "
                  "that is not an object", t->files[t->cur].path,
                  item.offset);
    rec->kind = TWT_TIN_EVENT;
    if (rec->r.ph == 'M') {
      if (!meta_is_new(t, &rec->r))
        continue;
      rec->kind = TWT_TIN_META;
    } else if (is_clock(&rec->r, &mono, &real)) {
      if (!take_clock(t, &rec->r, mono, real, item.offset))
        continue;
      rec->kind = TWT_TIN_CLOCK;
    }
  yield:
    rec->shift = t->shift;
    rec->part = (unsigned)t->cur;
    rec->pos = t->base_pos + item.offset;
    t->stats.yielded++;
    return 1;
  }
}

/* Every member of the object the file being read holds besides its
 * events, those that follow the events too, wherever they stand: once a
 * record was read, the members before the events are known; those after
 * them are found by a first pass over the file that only locates members
 * (its records skipped, not checked: a fraction of the reading's time),
 * the first time they are asked for.  A file is always read from a path
 * (the tools read regular files only, never a pipe), so it can be read
 * twice.  *len set; NULL if there are none. */
static const char *all_members(twt_tin *t, size_t *len)
{
  const struct twt_read_info *info;

  *len = 0;
  if (!t->r)
    return NULL;
  info = twt_reader_info(t->r);
  if (!info->ended && info->object_form && t->pre_file != t->cur + 1) {
    struct twt_read_options ro;
    twt_reader *r2;
    char msg[64];
    int rc;

    t->pre_file = t->cur + 1;
    t->pre_len = 0;
    t->pre_ok = 0;
    memset(&ro, 0, sizeof ro);
    ro.max_record = t->opts.max_record;
    ro.flags = TWT_READ_MEMBERS_ONLY;
    if (twt_reader_open(&r2, t->files[t->cur].path, &ro, msg,
                        sizeof msg) == 0) {
      twt_read_item it;
      const struct twt_read_info *i2 = twt_reader_info(r2);
      while ((rc = twt_reader_next(r2, &it)) > 0)
        continue;
      if (i2->object_form && i2->doc->members_len >= info->doc->members_len) {
        char *p = realloc(t->pre, i2->doc->members_len + 1);
        if (p) {
          t->pre = p;
          memcpy(p, i2->doc->members ? i2->doc->members : "", i2->doc->members_len);
          t->pre_len = i2->doc->members_len;
          t->pre_ok = 1;
          t->pre_nbig = i2->doc->nbig;
          if (i2->doc->nbig)
            memcpy(t->pre_big, i2->doc->big, i2->doc->nbig * sizeof *i2->doc->big);
        }
      }
      twt_reader_close(r2);
    }
  }
  if (!info->ended && t->pre_file == t->cur + 1 && t->pre_ok) {
    *len = t->pre_len;
    return t->pre_len ? t->pre : NULL;
  }
  *len = info->doc->members ? info->doc->members_len : 0;
  return info->doc->members;
}

int twt_tin_peek_form(twt_tin *t)
{
  struct twt_read_options ro;
  twt_read_item it;
  twt_reader *r;
  char msg[64];
  int form = -1;

  if (t->nfiles == 0)
    return -1;
  memset(&ro, 0, sizeof ro);
  ro.max_record = t->opts.max_record;
  if (twt_reader_open(&r, t->files[0].path, &ro, msg, sizeof msg) != 0)
    return -1;
  if (twt_reader_next(r, &it) >= 0 && twt_reader_info(r)->records)
    form = twt_reader_info(r)->object_form;
  twt_reader_close(r);
  return form;
}

const char *twt_tin_members(twt_tin *t, size_t *len)
{
  return all_members(t, len);
}

unsigned twt_tin_big_members(twt_tin *t, const struct twt_scan_big **big,
                             const char **path)
{
  const struct twt_read_info *info;
  size_t len;

  *big = NULL;
  *path = NULL;
  if (!t->r) {                    /* after the end: the tail's file */
    if (!t->tail_nbig || t->tail_form != t->object_form)
      return 0;
    *big = t->tail_big;
    *path = t->tail_path;
    return t->tail_nbig;
  }
  (void)all_members(t, &len);
  info = twt_reader_info(t->r);
  *path = t->files[t->cur].path;
  if (!info->ended && t->pre_file == t->cur + 1 && t->pre_ok) {
    *big = t->pre_big;
    return t->pre_nbig;
  }
  *big = info->doc->big;
  return info->doc->nbig;
}

size_t twt_tin_member(twt_tin *t, const char *key, char *val, size_t cap)
{
  twt_rec_span v;
  char *obj;
  size_t n = 0, ml;
  const char *m = all_members(t, &ml);

  if (cap == 0 || !m || ml < 2)
    return 0;
  /* ,"a":1,"b":2 -> {"a":1,"b":2} */
  if (!(obj = malloc(ml + 1)))
    return 0;
  obj[0] = '{';
  memcpy(obj + 1, m + 1, ml - 1);
  obj[ml] = '}';
  v = twt_rec_member(obj, ml + 1, key);
  if (v.len && v.len < cap) {
    memcpy(val, obj + v.off, v.len);
    val[v.len] = '\0';
    n = v.len;
  }
  free(obj);
  return n;
}

const char *twt_tin_error(const twt_tin *t)
{
  return t->msg;
}

const struct twt_tin_clock *twt_tin_clock(const twt_tin *t)
{
  return &t->clock;
}

size_t twt_tin_files(const twt_tin *t)
{
  return t->nfiles;
}

const char *twt_tin_file(const twt_tin *t, size_t i)
{
  return i < t->nfiles ? t->files[i].path : NULL;
}

int twt_tin_has_file(const twt_tin *t, const char *path)
{
  struct stat st;

  if (stat(path, &st) != 0)
    return 0;
  for (size_t i = 0; i < t->nfiles; i++)
    if (t->files[i].dev == st.st_dev && t->files[i].ino == st.st_ino)
      return 1;
  return 0;
}

int twt_tin_overlaps(const twt_tin *t, const twt_tin *u)
{
  for (size_t i = 0; i < t->nfiles; i++)
    for (size_t j = 0; j < u->nfiles; j++)
      if (t->files[i].dev == u->files[j].dev &&
          t->files[i].ino == u->files[j].ino)
        return 1;
  return 0;
}

int twt_tin_object_form(const twt_tin *t)
{
  return t->object_form;
}

const char *twt_tin_tail(const twt_tin *t, size_t *len)
{
  /* The output has the form of the first file with a record: the tail
   * of the last file of that form, else the bare bracket. */
  if (!t->tail_len || t->tail_form != t->object_form)
    return twt_read_bracket(t->object_form, len);
  *len = t->tail_len;
  return t->tail;
}

const struct twt_tin_stats *twt_tin_stats(const twt_tin *t)
{
  return &t->stats;
}

uint64_t twt_tin_total_bytes(const twt_tin *t)
{
  return t->stats.input_bytes;
}

uint64_t twt_tin_done_bytes(const twt_tin *t)
{
  uint64_t done = t->done_bytes;

  if (t->r && !twt_reader_info(t->r)->gzip)
    done += twt_reader_info(t->r)->json_bytes;
  return done;
}

void twt_tin_close(twt_tin *t)
{
  if (!t)
    return;
  twt_reader_close(t->r);
  for (size_t i = 0; i < t->nfiles; i++)
    free(t->files[i].path);
  free(t->files);
  free(t->meta);
  free(t->tail);
  free(t->pre);
  free(t->tail_path);
  free(t);
}
