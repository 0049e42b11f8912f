/* gunzip.h -- inflate gzip data, for the tests that read .gz traces
 *
 * The one inflate loop of the tests (tests/tooltest.c keeps its own for
 * the tool's tests).  tu_gunzip reads what must be one finished member;
 * tu_gunzip_prefix what a live, streamed or cut one holds so far.
 */
#ifndef TW_TEST_GUNZIP_H
#define TW_TEST_GUNZIP_H

#include <stddef.h>

/* Inflate buf[0..len), which must be exactly one complete gzip member
 * (Z_STREAM_END: CRC and ISIZE match) with no byte after it.  Returns the
 * bytes, NUL-terminated (free them), and their count in *outlen (if not
 * NULL); NULL if buf is not such a member or memory runs out. */
char *tu_gunzip(const void *buf, size_t len, size_t *outlen);

/* The same, and when it returns NULL a one-line reason in why[0..size)
 * (what inflate said and where, or how many bytes follow the member),
 * for a test's failure message.  why may be NULL. */
char *tu_gunzip_why(const void *buf, size_t len, size_t *outlen, char *why,
                    size_t whysize);

/* How the input of tu_gunzip_prefix ended. */
enum tu_gz_end {
  TU_GZ_COMPLETE,   /* the member ended (bytes after it are not read) */
  TU_GZ_CUT,        /* the input ran out inside the member */
  TU_GZ_CORRUPT     /* not gzip data from some byte on */
};

/* Inflate as much of the gzip member at buf[0..len) as decodes: the
 * stream need not be finished (a file being written, a pipe, a file cut
 * by a crash).  Returns the bytes decoded, NUL-terminated (free them),
 * their count in *outlen, and how the input ended in *end (if not NULL):
 * on TU_GZ_CORRUPT, what decoded before the bad byte.  NULL only if
 * memory runs out. */
char *tu_gunzip_prefix(const void *buf, size_t len, size_t *outlen,
                       enum tu_gz_end *end);

#endif /* TW_TEST_GUNZIP_H */
