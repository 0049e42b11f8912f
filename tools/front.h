/* front.h -- the parts of the trace reader, and what they share
 *
 * The reader (reader.h) is read the way libarchive reads formats: byte
 * sources give the JSON text chunk by chunk, and front ends, peers
 * behind one descriptor (struct twt_front), read it:
 *
 *   source.c         the byte sources: pread(2) of a plain file, inflate
 *                    of a gzip one (several members, a cut or stale end);
 *   front_layout.c   the crash-layout reader: the library's own layout,
 *                    one record per line, and every way a crash leaves
 *                    it (it bids only on what it can prove is ours: our
 *                    head line, then the process_name record and the
 *                    clock record with our sync id, each on one line);
 *   front_general.c  the general reader: any Chrome Trace Event JSON
 *                    document (the scanner of jsonscan.c behind the
 *                    descriptor); it bids on everything, low;
 *   reader.c         the API, the loop that feeds the chunks to the
 *                    front end, and the bidding on the first bytes.
 *
 * One struct twt_reader holds the state of all of them, each part its
 * own fields; no part but reader.c calls another part's functions but
 * through the descriptor and the functions below.  Private to the
 * reader's files.
 */
#ifndef TWT_TOOLS_FRONT_H
#define TWT_TOOLS_FRONT_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#include "layout.h"       /* TW__LAYOUT_HEAD_ROOM, TW__LAYOUT_GZ_END_LEN */
#include "jsonscan.h"     /* twt_scan, struct twt_scan_info */
#include "reader.h"

#if defined(__GNUC__) || defined(__clang__)
# define PRINTF_LIKE(fmt, args) __attribute__((format(printf, fmt, args)))
#else
# define PRINTF_LIKE(fmt, args)
#endif

#define READ_BUF    ((size_t)64 * 1024)  /* input read size */
#define WS_KEEP     ((size_t)64 * 1024)  /* padding after text kept as is */
#define TAIL_MAX    ((size_t)4096)       /* longest tail line recognised */
#define HEAD_MAX    TW__LAYOUT_HEAD_ROOM /* the longest head */
#define MSG_MAX     (PATH_MAX + 256)
#define END_OF_DATA (-1)                 /* what ends the last line */
#define FOLLOW_MAX  16                   /* TWT_READ_FOLLOW's growths */
#define MEMBERS_MAX ((size_t)1024 * 1024) /* members of an object kept */

/* The gzip sink rewrites, at every commit, a stored final block holding
 * the tail and the trailer after the deflate data.  A commit cut within
 * its first bytes leaves the end of the old stored block and trailer
 * after the new data, and inflate may decode those stale bytes as data
 * before it fails (or runs out of input): garbage glued to the last
 * committed record would lose it.  So the output inflated from the last
 * GZ_GUARD bytes of the file (the old block and trailer are at most
 * 5 + 4 + 8 bytes) is held back.  At each block boundary among them, the
 * old block and trailer that a commit ending there would have written are
 * computed (each tail the library writes or wrote, the CRC and size of
 * the output so far); if the file is exactly that much longer and ends
 * with a suffix of them, the file is such a cut commit and only the
 * output up to that boundary is used.  Otherwise all the held output is
 * used, unless inflate failed.  The output of GZ_GUARD bytes of input is
 * bounded (258 bytes per 2 bits). */
#define GZ_GUARD    ((uint64_t)32)
#define GZ_HOLD_MAX ((size_t)256 * 1024)
#define GZ_TAILS    4                    /* the tails looked for */
#define GZ_TAIL_MAX 8                    /* room for "\n]}\n" */
_Static_assert(TW__LAYOUT_GZ_END_LEN(GZ_TAIL_MAX) <= GZ_GUARD,
               "the guard holds a whole stored block and trailer");

/* The state of inflating one gzip file. */
typedef struct gzsrc {
  z_stream z;
  int z_ready;             /* inflateInit2 done */
  unsigned char *out;      /* READ_BUF bytes: inflate's output */
  const unsigned char *in_next; /* unread input in the reader's ibuf */
  size_t in_left;
  int eof;                 /* the file is read to its size */
  uint64_t consumed;       /* compressed bytes consumed */
  int stuck;               /* calls without progress */
  int finished;            /* inflate is over */
  int released;            /* ... and the held output given */
  int clean;               /* inflate reached the end of the member */
  uint64_t guard;          /* output of input past this offset is held */
  unsigned char end[GZ_GUARD]; /* the file's last end_len bytes */
  size_t end_len;
  char tails[GZ_TAILS][GZ_TAIL_MAX]; /* the stored block's tail: "\n]"
                              and "\n]}", then 0.1's "\n]\n" and
                              "\n]}\n" */
  uLong tail_crc[GZ_TAILS]; /* crc32 of each tail */
  uLong crc;               /* crc32 of all output so far */
  uint64_t out_total;      /* all output so far */
  char *hold;              /* output held back (GZ_HOLD_MAX bytes) */
  size_t hold_len;
  size_t stale_at;         /* hold_len at the matching block boundary */
  int stale_found;         /* ... found */
  int overflow;            /* the hold overflowed: stop holding */
  const char *queued;      /* a chunk to give after the current one */
  size_t queued_len;
} gzsrc;

enum state {
  ST_HEAD,                 /* line 1 */
  ST_BETWEEN,              /* between lines: padding, commas, newlines */
  ST_RECORD,               /* in a line that began with "{" */
  ST_TAIL,                 /* in a line that began with "]" */
  ST_JUNK,                 /* in a line being skipped */
  ST_DONE                  /* the end: info final */
};

/* The padding and commas after the text of the current line so far.  The
 * first WS_KEEP bytes are kept in line[content..len); the rest counted. */
typedef struct run {
  uint64_t len;            /* bytes */
  uint64_t commas;         /* commas among them */
  uint64_t extra;          /* bytes not kept */
  int extra_odd;           /* ... some of them not spaces */
} run;

struct twt_reader {
  tw__json_shapes *shapes; /* the layout's records' shapes: made at its
                              first record (NULL: none yet; the general
                              front end's scanner has its own) */
  /* The file. */
  char *name;              /* named in messages */
  int fd;
  int own_fd;              /* close fd at the end */
  uint64_t size;           /* its size when opened (or rewound) */
  uint64_t pos;            /* the next offset to read */
  unsigned follows;        /* times size grew (TWT_READ_FOLLOW) */
  size_t max_record;
  unsigned flags;          /* TWT_READ_* */
  int err;                 /* the first error: sticky */
  char msg[MSG_MAX];       /* its message */

  /* The source of JSON text. */
  unsigned char *ibuf;     /* READ_BUF bytes read from the file */
  const char *chunk;       /* the chunk being scanned */
  size_t chunk_len, chunk_pos;
  int src_end;             /* no more chunks */
  gzsrc gz;

  /* The scanner. */
  enum state state;
  uint64_t offset;         /* JSON bytes scanned */
  int blank;               /* whitespace or NULs came before any head */
  char head[HEAD_MAX + 1];
  size_t head_len;
  char ctail[HEAD_MAX + TAIL_MAX + 4]; /* the head's members and those
                              of a tail line "],\"k\":v}" together */
  int past_events;         /* a line "],..." was read: no more events */
  char ext_tail[HEAD_MAX + 4]; /* a head with members (timebase=kineto,
                              rank): the tail that keeps them, "]",
                              members, "}" */
  size_t ext_tail_len;
  uint64_t line_no;        /* the current line, from 1 */
  uint64_t line_off;       /* offset of its text's first byte */
  char *line;              /* its text, then kept padding */
  const char *view;        /* or, for a record line that lies whole in
                              the chunk, its text there (not copied) */
  int join_pending;        /* a record line ended with a newline before
                              the record did: joined to the next line if
                              that one continues it (see can_join) */
  int joined;              /* the record line spans several lines */
  size_t len, cap, content;
  run run;
  int junk_record;         /* a junk line that began with "{" */
  uint64_t junk_content;   /* its bytes up to the last non-padding one */
  uint64_t junk_pad;       /* its padding after that */
  uint64_t commas;         /* commas since the last record */
  uint64_t lead;           /* commas on this line before its text */
  int first_pending;       /* no line of text after the head yet: the
                              first one must be a complete record */
  int after_tail;          /* a valid tail line ended with its newline */
  int tail_last;           /* the last line was a valid tail */
  int strict;              /* exactly valid so far */
  char tail[TAIL_MAX];     /* the last valid tail line */

  struct twt_read_info info;
  twt_read_item item;       /* the item to yield */
  int ready;               /* ... is there */

  twt_rec rec;              /* the members of the record yielded */

  int lines_only;          /* no layout_fast: TWT_READ_LINES_ONLY was
                              set at open (tests compare both ways) */

  /* The front end: the one that won the bidding (reader.c). */
  const struct twt_front *front; /* NULL until the text's first bytes
                              tell which one reads it */
  char *sniff;             /* the first bytes, while they do not tell
                              (kept, then scanned as the first chunk) */
  size_t sniff_len, sniff_cap;
  struct twt_scan_info ldoc; /* the document as the crash-layout reader
                              finds it (its members: info.doc) */
  twt_scan *js;            /* the general reader (front_general.c) */
  char *gtail;             /* its tail: "]", members, "}" */
};

/* =========================================================== errors */

/* A front end.  The reader offers the text's first bytes to each
 * (bid), gives the text to the one that bid highest (feed), then its
 * end (finish).  Unless a flag forces one (TWT_READ_LAYOUT,
 * TWT_READ_GENERAL, TWT_READ_MEMBERS_ONLY). */
struct twt_front {
  const char *name;
  /* How surely the text that begins with p[0..n) (all of it if at_end)
   * is one this front end reads: -1 more bytes are needed to tell, 0
   * not at all, more the surer (TWT_BID_*). */
  int (*bid)(const char *p, size_t n, int at_end);
  /* Chosen: set up to read from the text's first byte.  0 or a code. */
  int (*start)(twt_reader *r);
  /* Read p[0..n), the next bytes of the text, until an item is ready
   * (r->ready, through twt__rd_yield), adding what it used to r->offset.
   * Returns the bytes used, or a negative code (twt__rd_fail). */
  ptrdiff_t (*feed)(twt_reader *r, const char *p, size_t n);
  /* The end of the text: make the info final (info.ended; info.strict
   * as far as the text goes: the reader adds the source's part), or
   * fail.  Called again while it yields items (r->ready). */
  int (*finish)(twt_reader *r);
  /* 1 if the text read so far ends inside a record not yet complete
   * (TWT_READ_FOLLOW then reads on as the file grows); NULL: never. */
  int (*in_record)(const twt_reader *r);
  /* Free what start allocated (at rewind and close).  NULL: nothing. */
  void (*end)(twt_reader *r);
};

#define TWT_BID_ANY    1  /* reads any text of the format */
#define TWT_BID_PROVED 2  /* the text is provably the one it reads */

extern const struct twt_front twt__front_layout;   /* front_layout.c */
extern const struct twt_front twt__front_general;  /* front_general.c */

/* reader.c: record the first error, "NAME: message", and return rc (a
 * later error keeps the first); a failed system call: -errno, "NAME:
 * what: strerror". */
PRINTF_LIKE(3, 4)
int twt__rd_fail(twt_reader *r, int rc, const char *fmt, ...);
int twt__rd_sys_fail(twt_reader *r, const char *what);
#define fail twt__rd_fail
#define sys_fail twt__rd_sys_fail

/* Yield an item at the end of the current call. */
static inline void twt__rd_yield(twt_reader *r, int kind, const char *text,
                                 size_t len)
{
  r->item.rec = NULL;
  if (kind == TWT_ITEM_RECORD && (r->flags & TWT_READ_MEMBERS)) {
    r->rec.text = text;
    r->rec.len = len;
    r->item.rec = &r->rec;
  }
  r->item.kind = kind;
  r->item.text = text;
  r->item.len = len;
  r->item.offset = r->line_off;
  r->item.line = r->line_no;
  r->ready = 1;
}
#define yield twt__rd_yield

/* source.c: the byte sources. */
int twt__src_start(twt_reader *r);  /* the file's size, gzip or not */
int twt__src_next(twt_reader *r);   /* the next chunk (r->src_end) */
void twt__src_end(twt_reader *r);   /* free inflate's state */
int twt__src_whole(const twt_reader *r); /* the text came whole from the
                              file: plain, or one gzip member inflated to
                              its end and nothing after it */
void twt__src_note_gzip(twt_reader *r); /* add to the message of an
                              error at the end of a damaged gzip member */

#endif /* TWT_TOOLS_FRONT_H */
