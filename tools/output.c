/* output.c -- write a trace (plain or gzip) for the command-line tool
 *
 * See output.h for the contract.  The bytes go through a 64 KiB buffer
 * (through deflate first for gzip, zlib writing the gzip header and
 * trailer) to the temporary file, created at the first byte, or to the
 * target itself when it is written directly.
 */
#include "config.h"

#include "output.h"
#include "internal.h"
#include "layout.h"       /* tw__layout_head, TW__LAYOUT_SEP */
#include "fdio.h"         /* tw__write_all */
#include "rotate.h"       /* tw__open_directory_of */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#if defined(__GNUC__) || defined(__clang__)
# define PRINTF_LIKE(fmt, args) __attribute__((format(printf, fmt, args)))
#else
# define PRINTF_LIKE(fmt, args)
#endif

#define OUT_BUF ((size_t)64 * 1024)  /* output buffer */
#define MSG_MAX (2 * PATH_MAX + 256)
#define DEFAULT_LEVEL 6
#define STDOUT_NAME "standard output"

struct twt_out {
  char *target;            /* the final path (or STDOUT_NAME) */
  char *tmp;               /* the temporary file, while it exists */
  int fd;                  /* -1 until opened */
  int to_stdout;           /* fd 1: never closed */
  int direct;              /* write target itself: no temporary file */
  int set_mode;            /* give the file mode (and owner) below */
  mode_t mode;
  int set_owner;
  uid_t uid;
  gid_t gid;
  char tag[32];            /* of the temporary name */
  int gzip;                /* deflate into one gzip member */
  int level;
  z_stream z;
  int z_ready;             /* deflateInit2 done */
  unsigned char *buf;      /* OUT_BUF bytes: the output buffer */
  size_t used;             /* bytes pending in buf */
  uint64_t bytes;          /* bytes written to the file */
  uint64_t records;        /* records written */
  int ndjson;              /* one record a line, nothing else */
  int committed;           /* twt_out_commit succeeded */
  int err;                 /* the first error: sticky */
  char msg[MSG_MAX];
};

/* ============================================================ errors */

/* Record the first error and return rc. */
PRINTF_LIKE(3, 4)
static int fail(twt_out *o, int rc, const char *fmt, ...)
{
  va_list ap;

  if (o->err)
    return o->err;
  o->err = rc;
  va_start(ap, fmt);
  vsnprintf(o->msg, sizeof o->msg, fmt, ap);
  va_end(ap);
  return rc;
}

/* A failed system call on path: -errno, "what PATH: strerror". */
static int sys_fail(twt_out *o, const char *what, const char *path)
{
  int e = errno ? errno : EIO;

  return fail(o, -e, "%s %s: %s", what, path, strerror(e));
}

/* The file being written, for messages. */
static const char *file_name(const twt_out *o)
{
  return o->tmp ? o->tmp : o->target;
}

/* ============================================================= files */

/* Write all of data to fd at its position: the library's write loop
 * (src/fdio.c: EINTR and short writes retried).  0 or -1 (errno set). */
static int write_all(int fd, const void *data, size_t len)
{
  struct iovec iov;
  int rc;

  iov.iov_base = (void *)data;
  iov.iov_len = len;
  if ((rc = tw__write_all(fd, &iov, 1, -1)) != 0) {
    errno = -rc;
    return -1;
  }
  return 0;
}

/* A pseudo-random 32-bit value for temporary names. */
static uint32_t name_bits(unsigned attempt)
{
  static unsigned counter;
  struct timespec ts;
  uint64_t x;

  clock_gettime(CLOCK_REALTIME, &ts);
  x = (uint64_t)getpid() * UINT64_C(0x9E3779B97F4A7C15) ^
      (uint64_t)ts.tv_nsec * UINT64_C(0xBF58476D1CE4E5B9) ^
      (uint64_t)ts.tv_sec ^
      ((uint64_t)__atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED) << 40) ^
      attempt;
  x ^= x >> 31;
  x *= UINT64_C(0x94D049BB133111EB);
  x ^= x >> 29;
  return (uint32_t)x;
}

/* Create the temporary file ".NAME.TAG-XXXXXXXX" beside the target, with
 * mode 0666 less the umask.  0 or a negative code. */
static int create_temp(twt_out *o)
{
  const char *slash = strrchr(o->target, '/');
  int dir_len = slash ? (int)(slash - o->target) + 1 : 0;
  const char *base = slash ? slash + 1 : o->target;
  size_t size = strlen(o->target) + sizeof o->tag + 32;
  int rc;

  if (!(o->tmp = malloc(size)))
    return fail(o, -ENOMEM, "out of memory");
  for (unsigned attempt = 0; attempt < 100; attempt++) {
    /* Keep the name under NAME_MAX however long base is. */
    snprintf(o->tmp, size, "%.*s.%.200s.%s-%08" PRIx32, dir_len, o->target,
             base, o->tag, name_bits(attempt));
    o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (o->fd >= 0)
      return 0;
    if (errno != EEXIST)
      break;
  }
  rc = sys_fail(o, "cannot create a temporary file", o->tmp);
  free(o->tmp);
  o->tmp = NULL;
  return rc;
}

/* Open the file: the temporary file (with the mode and owner asked for),
 * the target itself, or standard output; set up deflate. */
static int open_file(twt_out *o)
{
  int rc;

  if (!(o->buf = malloc(OUT_BUF)))
    return fail(o, -ENOMEM, "out of memory");
  if (o->to_stdout) {
    o->fd = STDOUT_FILENO;
  } else if (o->direct) {
    if ((o->fd = open(o->target, O_WRONLY | O_TRUNC | O_CLOEXEC)) < 0)
      return sys_fail(o, "cannot open", o->target);
  } else {
    if ((rc = create_temp(o)) != 0)
      return rc;
    if (o->set_mode && fchmod(o->fd, o->mode) != 0)
      return sys_fail(o, "cannot set the mode of", o->tmp);
    /* Keep the owner when we may (root repairing someone's trace). */
    if (o->set_owner && fchown(o->fd, o->uid, o->gid) != 0) {
      /* not an error: the file is ours */
    }
  }
  if (o->gzip) {
    memset(&o->z, 0, sizeof o->z);
    rc = deflateInit2(&o->z, o->level, Z_DEFLATED, 16 + 15, 8,
                      Z_DEFAULT_STRATEGY);
    if (rc != Z_OK)
      return fail(o, rc == Z_MEM_ERROR ? -ENOMEM : TWT_OUT_EZLIB,
                  "deflateInit2 failed (zlib %s)", zlibVersion());
    o->z_ready = 1;
  }
  return 0;
}

static int flush_buf(twt_out *o)
{
  if (o->used && write_all(o->fd, o->buf, o->used) != 0)
    return sys_fail(o, "cannot write", file_name(o));
  o->bytes += o->used;
  o->used = 0;
  return 0;
}

/* Deflate z's pending input with flush into buf, writing every full
 * buffer. */
static int deflate_some(twt_out *o, int flush)
{
  int rc;

  do {
    o->z.next_out = o->buf + o->used;
    o->z.avail_out = (uInt)(OUT_BUF - o->used);
    rc = deflate(&o->z, flush);
    if (rc == Z_STREAM_ERROR)
      return fail(o, TWT_OUT_EZLIB, "deflate failed");
    o->used = OUT_BUF - o->z.avail_out;
    if (o->used == OUT_BUF && (rc = flush_buf(o)) != 0)
      return rc;
    /* Z_BUF_ERROR: no progress possible, not fatal (more input comes). */
  } while (o->z.avail_in > 0 || (flush == Z_FINISH && rc != Z_STREAM_END) ||
           o->z.avail_out == 0);
  return 0;
}

/* fsync the directory holding path (best effort: the rename is done). */
static void sync_dir(const char *path)
{
  int fd = tw__open_directory_of(path);

  if (fd >= 0) {
    (void)fsync(fd);
    close(fd);
  }
}

/* ============================================================== API */

void twt_out_options_init(struct twt_out_options *opts)
{
  memset(opts, 0, sizeof *opts);
  opts->compress = TWT_OUT_PLAIN;
  opts->level = DEFAULT_LEVEL;
  opts->tag = "tmp";
}

static int has_gz_suffix(const char *path)
{
  size_t n = strlen(path);

  return n >= 3 && strcmp(path + n - 3, ".gz") == 0;
}

/* Decide where the output goes: fill target, direct and the mode. */
static int plan(twt_out *o, const char *path)
{
  struct stat st;

  if (!path || strcmp(path, "-") == 0) {
    o->to_stdout = o->direct = 1;
    o->target = strdup(STDOUT_NAME);
  } else if (stat(path, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      errno = EISDIR;
      return sys_fail(o, "cannot write", path);
    }
    if (!S_ISREG(st.st_mode)) {
      o->direct = 1;
      o->target = strdup(path);
    } else {
      /* Replace the file itself, not a symbolic link to it. */
      if (!(o->target = realpath(path, NULL)))
        return sys_fail(o, "cannot resolve", path);
      if (!o->set_mode) {
        o->set_mode = 1;
        o->mode = st.st_mode & 07777;
      }
    }
  } else if (errno != ENOENT) {
    return sys_fail(o, "cannot write", path);
  } else {
    o->target = strdup(path);       /* new file: 0666 less the umask */
  }
  if (!o->target)
    return fail(o, -ENOMEM, "out of memory");
  return 0;
}

int twt_out_open(twt_out **op, const char *path,
                 const struct twt_out_options *opts, char *err, size_t errsize)
{
  struct twt_out_options defaults;
  twt_out *o;
  int rc;

  *op = NULL;
  if (err && errsize)
    err[0] = '\0';
  if (!opts) {
    twt_out_options_init(&defaults);
    opts = &defaults;
  }
  if (!(o = calloc(1, sizeof *o))) {
    if (err && errsize)
      snprintf(err, errsize, "out of memory");
    return -ENOMEM;
  }
  o->fd = -1;
  o->level = opts->level >= 1 && opts->level <= 9 ? opts->level :
             DEFAULT_LEVEL;
  snprintf(o->tag, sizeof o->tag, "%s", opts->tag ? opts->tag : "tmp");
  o->ndjson = opts->ndjson;
  o->set_mode = opts->set_mode;
  o->mode = opts->mode;
  o->set_owner = opts->set_owner;
  o->uid = opts->uid;
  o->gid = opts->gid;
  if ((rc = plan(o, path)) != 0) {
    if (err && errsize)
      snprintf(err, errsize, "%s", o->msg);
    twt_out_close(o);
    return rc;
  }
  o->gzip = opts->compress == TWT_OUT_GZIP ||
            (opts->compress == TWT_OUT_BY_NAME && !o->to_stdout &&
             has_gz_suffix(path));
  *op = o;
  return 0;
}

int twt_out_write(twt_out *o, const void *data, size_t len)
{
  int rc;

  if (o->err)
    return o->err;
  if (o->fd < 0 && (rc = open_file(o)) != 0)
    return rc;
  if (o->gzip) {
    const unsigned char *p = data;
    while (len > 0) {               /* avail_in is a uInt */
      size_t part = len > (size_t)1 << 30 ? (size_t)1 << 30 : len;
      o->z.next_in = (unsigned char *)p;
      o->z.avail_in = (uInt)part;
      if ((rc = deflate_some(o, Z_NO_FLUSH)) != 0)
        return rc;
      p += part;
      len -= part;
    }
    return 0;
  }
  if (len > OUT_BUF - o->used) {
    if ((rc = flush_buf(o)) != 0)
      return rc;
    if (len >= OUT_BUF) {           /* a big record: straight through */
      if (write_all(o->fd, data, len) != 0)
        return sys_fail(o, "cannot write", file_name(o));
      o->bytes += len;
      return 0;
    }
  }
  memcpy(o->buf + o->used, data, len);
  o->used += len;
  return 0;
}

/* The head, then the newline that the first record's separator leaves
 * (src/layout.h: the head takes the place of its comma). */
static int write_head(twt_out *o, int object_form)
{
  size_t len;
  const char *head = tw__layout_head(object_form, &len);
  int rc = twt_out_write(o, head, len);

  return rc ? rc : twt_out_write(o, &TW__LAYOUT_SEP[1],
                                 TW__LAYOUT_SEP_LEN - 1);
}

int twt_out_record(twt_out *o, int object_form, const char *text, size_t len)
{
  int rc;

  /* Most records: the separator and the record fit in the buffer of a
   * plain file already open. */
  if (o->records && !o->ndjson && !o->gzip && !o->err && o->fd >= 0 &&
      len + TW__LAYOUT_SEP_LEN <= OUT_BUF - o->used) {
    memcpy(o->buf + o->used, TW__LAYOUT_SEP, TW__LAYOUT_SEP_LEN);
    memcpy(o->buf + o->used + TW__LAYOUT_SEP_LEN, text, len);
    o->used += TW__LAYOUT_SEP_LEN + len;
    o->records++;
    return 0;
  }
  if (o->ndjson) {
    if ((rc = twt_out_write(o, text, len)) != 0 ||
        (rc = twt_out_write(o, "\n", 1)) != 0)
      return rc;
    o->records++;
    return 0;
  }
  if (o->records == 0) {
    if ((rc = write_head(o, object_form)) != 0)
      return rc;
  } else if ((rc = twt_out_write(o, TW__LAYOUT_SEP,
                                 TW__LAYOUT_SEP_LEN)) != 0) {
    return rc;
  }
  if ((rc = twt_out_write(o, text, len)) != 0)
    return rc;
  o->records++;
  return 0;
}

int twt_out_end(twt_out *o, int object_form, const char *tail, size_t len)
{
  int rc;

  if (o->ndjson)
    return 0;
  if (!tail)
    tail = twt_read_bracket(object_form, &len);
  if (o->records == 0) {
    if ((rc = write_head(o, object_form)) != 0)
      return rc;
  } else if ((rc = twt_out_write(o, "\n", 1)) != 0) {
    return rc;
  }
  return twt_out_write(o, tail, len);
}

int twt_out_copy_trace(twt_out *o, twt_reader *r)
{
  const struct twt_read_info *info = twt_reader_info(r);
  twt_read_item item;
  int rc;

  while ((rc = twt_reader_next(r, &item)) > 0)
    if ((rc = twt_out_record(o, info->object_form, item.text,
                             item.len)) != 0)
      return rc;
  if (rc == 0)
    rc = twt_out_end(o, info->object_form, info->tail, info->tail_len);
  return rc;
}

int twt_out_same_file(const char *path, const struct stat *st)
{
  struct stat o;

  return stat(path, &o) == 0 && o.st_dev == st->st_dev &&
         o.st_ino == st->st_ino;
}

int twt_out_commit(twt_out *o)
{
  const char *name;
  int rc, fd;

  if (o->err)
    return o->err;
  if (o->fd < 0 && (rc = open_file(o)) != 0)
    return rc;
  if (o->gzip) {
    o->z.next_in = NULL;
    o->z.avail_in = 0;
    if ((rc = deflate_some(o, Z_FINISH)) != 0)
      return rc;
  }
  if ((rc = flush_buf(o)) != 0)
    return rc;
  name = file_name(o);
  if (o->to_stdout) {
    o->committed = 1;               /* a pipe or a terminal: no fsync */
    return 0;
  }
  if (fsync(o->fd) != 0 && !(o->direct && (errno == EINVAL ||
                                          errno == EROFS)))
    return sys_fail(o, "cannot fsync", name);
  fd = o->fd;
  o->fd = -1;
  if (close(fd) != 0 && errno != EINTR)
    return sys_fail(o, "cannot close", name);
  if (o->tmp) {
    if (rename(o->tmp, o->target) != 0)
      return sys_fail(o, "cannot rename the new file to", o->target);
    free(o->tmp);
    o->tmp = NULL;
    sync_dir(o->target);
  }
  o->committed = 1;
  return 0;
}

void twt_out_close(twt_out *o)
{
  if (!o)
    return;
  if (o->z_ready)
    deflateEnd(&o->z);
  if (o->fd >= 0 && !o->to_stdout)
    close(o->fd);
  if (o->tmp) {
    unlink(o->tmp);
    free(o->tmp);
  }
  free(o->target);
  free(o->buf);
  free(o);
}

const char *twt_out_error(const twt_out *o)
{
  return o->msg;
}

uint64_t twt_out_bytes(const twt_out *o)
{
  return o->bytes;
}

uint64_t twt_out_records(const twt_out *o)
{
  return o->records;
}

int twt_out_is_gzip(const twt_out *o)
{
  return o->gzip;
}

int twt_out_is_ndjson(const twt_out *o)
{
  return o->ndjson;
}

int twt_out_is_direct(const twt_out *o)
{
  return o->direct;
}
