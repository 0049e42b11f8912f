/* reader.c -- stream the records of a tracewriter trace (.json, .json.gz)
 *
 * See reader.h for the contract, front.h for the reader's parts.  This
 * file is the API, the bidding and the loop:
 *
 *  - The first bytes of JSON text are offered to every front end (bid);
 *    the highest bidder reads the text: the crash-layout reader
 *    (front_layout.c) when they are provably the library's own, else the
 *    general reader (front_general.c).  When they do not tell yet, more
 *    are read (up to SNIFF_MAX), kept, then scanned as the first chunk.
 *  - twt_reader_next takes the chunks from the source (source.c) and
 *    feeds them to the front end until it has an item to yield, so
 *    records come one at a time; at the end of the text, the front end
 *    finishes (the info final, or an error).
 */
#include "internal.h"     /* config.h first */
#include "layout.h"       /* tw__layout_tail */
#include "front.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


/* Record the first error, "NAME: message", and return rc. */
PRINTF_LIKE(3, 4)
int twt__rd_fail(twt_reader *r, int rc, const char *fmt, ...)
{
  va_list ap;
  int n;

  if (r->err)
    return r->err;
  r->err = rc;
  n = snprintf(r->msg, sizeof r->msg, "%s: ", r->name);
  if (n >= 0 && (size_t)n < sizeof r->msg) {
    va_start(ap, fmt);
    vsnprintf(r->msg + n, sizeof r->msg - (size_t)n, fmt, ap);
    va_end(ap);
  }
  return rc;
}

/* A failed system call: -errno, "NAME: what: strerror". */
int twt__rd_sys_fail(twt_reader *r, const char *what)
{
  int e = errno ? errno : EIO;

  return fail(r, -e, "%s: %s", what, strerror(e));
}


const char *twt_read_bracket(int object_form, size_t *len)
{
  size_t n;
  const char *t = tw__layout_tail(object_form, &n);

  while (n > 0 && t[0] == '\n') {
    t++;
    n--;
  }
  while (n > 0 && t[n - 1] == '\n')
    n--;
  *len = n;
  return t;
}

/* ======================================================== the bidding */

/* The front ends, peers: the one that bids highest reads the text. */
static const struct twt_front *const fronts[] = {
  &twt__front_layout, &twt__front_general,
};
#define NFRONTS (sizeof fronts / sizeof fronts[0])
#define SNIFF_MAX   ((size_t)1024 * 1024) /* bytes read to decide */

/* The front end that reads the text beginning with p[0..n) (all of it
 * if at_end; decide: however little it is): the highest bidder, the
 * first of equal ones; NULL while one needs more bytes to bid. */
static const struct twt_front *bid(const char *p, size_t n, int at_end,
                                   int decide)
{
  const struct twt_front *best = NULL;
  int best_bid = 0;

  for (size_t i = 0; i < NFRONTS; i++) {
    int b = fronts[i]->bid(p, n, at_end);
    if (b < 0 && !decide)
      return NULL;
    if (b > best_bid) {
      best = fronts[i];
      best_bid = b;
    }
  }
  return best;
}

/* Set the front end, unless a flag forces one, and start it. */
static int choose(twt_reader *r, const struct twt_front *f)
{
  if (r->flags & TWT_READ_LAYOUT)
    f = &twt__front_layout;
  else if (r->flags & (TWT_READ_GENERAL | TWT_READ_MEMBERS_ONLY))
    f = &twt__front_general;
  r->front = f;
  return f->start(r);
}

/* Decide the front end on the text's first bytes: the current chunk, or
 * (when it does not tell) as many more as it takes, up to SNIFF_MAX,
 * kept in r->sniff, which then becomes the chunk scanned.  0 or a
 * code. */
static int sniff(twt_reader *r)
{
  const struct twt_front *f;
  int rc;

  if (r->flags & (TWT_READ_LAYOUT | TWT_READ_GENERAL |
                  TWT_READ_MEMBERS_ONLY))
    return choose(r, NULL);
  for (;;) {
    const char *p = r->chunk ? r->chunk + r->chunk_pos : "";
    size_t n = r->chunk_len - r->chunk_pos;
    int decide;

    if (!r->sniff_len && (f = bid(p, n, r->src_end, 0)) != NULL)
      return choose(r, f);          /* the chunk tells: scanned in place */
    if (n > 0) {
      if (r->sniff_len + n > r->sniff_cap) {
        size_t cap = r->sniff_len + n + READ_BUF;
        char *q = realloc(r->sniff, cap);
        if (!q)
          return fail(r, -ENOMEM, "out of memory");
        r->sniff = q;
        r->sniff_cap = cap;
      }
      memcpy(r->sniff + r->sniff_len, p, n);
      r->sniff_len += n;
      r->chunk_pos = r->chunk_len;
    }
    decide = r->src_end || r->sniff_len >= SNIFF_MAX;
    if ((f = bid(r->sniff, r->sniff_len, r->src_end, decide)) != NULL) {
      r->chunk = r->sniff;
      r->chunk_len = r->sniff_len;
      r->chunk_pos = 0;
      return choose(r, f);
    }
    if ((rc = twt__src_next(r)) != 0)
      return rc;
  }
}


/* Reset the reader to the start of its file: no front end yet. */
static int start(twt_reader *r)
{
  if (r->front && r->front->end)
    r->front->end(r);
  r->front = NULL;
  r->err = 0;
  r->msg[0] = '\0';
  memset(&r->info, 0, sizeof r->info);
  memset(&r->ldoc, 0, sizeof r->ldoc);
  r->info.doc = &r->ldoc;
  r->offset = 0;
  r->ready = 0;
  r->sniff_len = 0;
  return twt__src_start(r);
}

/* The reader of fd, named name: allocated and started, or NULL with the
 * message in err. */
static int open_reader(twt_reader **rp, int fd, int own_fd, const char *name,
                       const struct twt_read_options *opts,
                       char *err, size_t errsize)
{
  twt_reader *r = calloc(1, sizeof *r);
  int rc;

  *rp = NULL;
  if (!r || !(r->name = strdup(name)) || !(r->ibuf = malloc(READ_BUF))) {
    if (r) {
      free(r->name);
      free(r);
    }
    if (own_fd)
      close(fd);
    if (err && errsize)
      snprintf(err, errsize, "%s: out of memory", name);
    return -ENOMEM;
  }
  r->fd = fd;
  r->own_fd = own_fd;
  r->lines_only = getenv("TWT_READ_LINES_ONLY") != NULL;
  r->max_record = TWT_READ_DEFAULT_MAX_RECORD;
  if (opts) {
    if (opts->max_record)
      r->max_record = opts->max_record < TWT_READ_MIN_MAX_RECORD ?
                      TWT_READ_MIN_MAX_RECORD : opts->max_record;
    if (r->max_record > SIZE_MAX / 4)  /* no overflow in the sums */
      r->max_record = SIZE_MAX / 4;
    r->flags = opts->flags;
  }
  if ((rc = start(r)) != 0) {
    if (err && errsize)
      snprintf(err, errsize, "%s", r->msg);
    twt_reader_close(r);
    return rc;
  }
  *rp = r;
  return 0;
}

int twt_reader_open(twt_reader **rp, const char *path,
                    const struct twt_read_options *opts,
                    char *err, size_t errsize)
{
  int fd, flags;

  if (err && errsize)
    err[0] = '\0';
  *rp = NULL;
  if (!path) {
    if (err && errsize)
      snprintf(err, errsize, "(null): no file name");
    return -EINVAL;
  }
  /* O_NONBLOCK: a FIFO must not block the open; it is refused below. */
  if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0) {
    int e = errno;
    if (err && errsize)
      snprintf(err, errsize, "%s: cannot open: %s", path, strerror(e));
    return -e;
  }
  if ((flags = fcntl(fd, F_GETFL)) >= 0)
    (void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return open_reader(rp, fd, 1, path, opts, err, errsize);
}

int twt_reader_open_fd(twt_reader **rp, int fd, const char *name,
                       const struct twt_read_options *opts,
                       char *err, size_t errsize)
{
  if (err && errsize)
    err[0] = '\0';
  return open_reader(rp, fd, 0, name ? name : "(fd)", opts, err, errsize);
}

int twt_reader_next(twt_reader *r, twt_read_item *item)
{
  int rc;

  while (!r->err) {
    if (r->ready) {
      r->ready = 0;
      *item = r->item;
      return 1;
    }
    if (r->info.ended)
      return 0;
    if (!r->front && (r->chunk_pos < r->chunk_len || r->src_end)) {
      if ((rc = sniff(r)) != 0)
        return rc;
      continue;
    }
    if (r->chunk_pos < r->chunk_len) {
      ptrdiff_t k = r->front->feed(r, r->chunk + r->chunk_pos,
                                   r->chunk_len - r->chunk_pos);
      if (k < 0)
        return (int)k;
      r->chunk_pos += (size_t)k;
    } else if (!r->src_end) {
      if ((rc = twt__src_next(r)) != 0)
        return rc;
    } else if ((rc = r->front->finish(r)) != 0) {
      return rc;
    } else if (r->info.ended) {
      r->info.strict = r->info.strict && twt__src_whole(r);
    }
    r->info.json_bytes = r->offset;
  }
  return r->err;
}

int twt_reader_rewind(twt_reader *r)
{
  return start(r);
}

const struct twt_read_info *twt_reader_info(const twt_reader *r)
{
  return &r->info;
}

const char *twt_reader_error(const twt_reader *r)
{
  return r->msg;
}

int twt_reader_fd(const twt_reader *r)
{
  return r->fd;
}

void twt_reader_close(twt_reader *r)
{
  if (!r)
    return;
  if (r->front && r->front->end)
    r->front->end(r);
  twt__src_end(r);
  if (r->own_fd && r->fd >= 0)
    close(r->fd);
  free(r->sniff);
  free(r->ibuf);
  free(r->name);
  tw__json_shapes_free(r->shapes);
  free(r);
}

