/* gunzip.c -- inflate gzip data, for the tests that read .gz traces
 * (see gunzip.h) */
#include "gunzip.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* Inflate the gzip member at buf[0..len) until it ends, the input runs
 * out or the data is wrong.  Returns inflate's last code (Z_STREAM_END,
 * Z_BUF_ERROR: input exhausted, or an error), or Z_MEM_ERROR with *out
 * NULL if memory runs out; else *out holds the bytes, NUL-terminated,
 * *outlen their count, *used the input consumed, *msg zlib's message. */
static int inflate_member(const void *buf, size_t len, char **out,
                          size_t *outlen, size_t *used, char *msg,
                          size_t msgsize)
{
  z_stream z;
  size_t cap = len * 4 + 65536, n = 0;
  char *o = malloc(cap), *bigger;
  int zr;

  *out = NULL;
  if (!o)
    return Z_MEM_ERROR;
  memset(&z, 0, sizeof z);
  if (inflateInit2(&z, 16 + 15) != Z_OK) {     /* gzip only */
    free(o);
    return Z_MEM_ERROR;
  }
  z.next_in = (Bytef *)(uintptr_t)buf;
  z.avail_in = (uInt)len;
  do {
    if (cap - n < 65536) {
      if (!(bigger = realloc(o, cap * 2))) {
        inflateEnd(&z);
        free(o);
        return Z_MEM_ERROR;
      }
      o = bigger;
      cap *= 2;
    }
    z.next_out = (Bytef *)o + n;
    z.avail_out = (uInt)(cap - n - 1);
    /* The flush mode does not matter to inflate but for Z_FINISH and
     * Z_BLOCK: it always gives all it can. */
    zr = inflate(&z, Z_NO_FLUSH);
    n = (size_t)((char *)z.next_out - o);
  } while (zr == Z_OK);
  if (msg && msgsize)
    snprintf(msg, msgsize, "%s", z.msg ? z.msg : "");
  inflateEnd(&z);
  o[n] = '\0';
  *out = o;
  *outlen = n;
  *used = len - z.avail_in;
  return zr;
}

char *tu_gunzip_why(const void *buf, size_t len, size_t *outlen, char *why,
                    size_t whysize)
{
  char *out, msg[128];
  size_t n, used;
  int zr = inflate_member(buf, len, &out, &n, &used, msg, sizeof msg);

  if (!out || zr != Z_STREAM_END || used != len) {
    if (why && whysize) {
      if (!out)
        snprintf(why, whysize, "out of memory");
      else if (zr != Z_STREAM_END)
        snprintf(why, whysize, "not a complete gzip member: inflate %d "
                 "(%s) after %zu of %zu bytes", zr, msg, used, len);
      else
        snprintf(why, whysize, "%zu bytes after the end of the gzip "
                 "member", len - used);
    }
    free(out);
    return NULL;
  }
  if (outlen)
    *outlen = n;
  return out;
}

char *tu_gunzip(const void *buf, size_t len, size_t *outlen)
{
  return tu_gunzip_why(buf, len, outlen, NULL, 0);
}

char *tu_gunzip_prefix(const void *buf, size_t len, size_t *outlen,
                       enum tu_gz_end *end)
{
  char *out;
  size_t n, used;
  int zr = inflate_member(buf, len, &out, &n, &used, NULL, 0);

  if (!out)
    return NULL;
  if (end)
    *end = zr == Z_STREAM_END ? TU_GZ_COMPLETE
           : zr == Z_BUF_ERROR ? TU_GZ_CUT : TU_GZ_CORRUPT;
  if (outlen)
    *outlen = n;
  return out;
}
