/* gunzip.h -- inflate a gzip member, for the tests that read .gz traces */
#ifndef TW_TEST_GUNZIP_H
#define TW_TEST_GUNZIP_H

#include <stddef.h>

/* Inflate buf[0..len), which must be exactly one complete gzip member
 * (Z_STREAM_END: CRC and ISIZE match) with no byte after it.  Returns the
 * bytes, NUL-terminated (free them), and their count in *outlen (if not
 * NULL); NULL if buf is not such a member or memory runs out. */
char *tu_gunzip(const void *buf, size_t len, size_t *outlen);

#endif /* TW_TEST_GUNZIP_H */
