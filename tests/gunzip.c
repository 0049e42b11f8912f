/* gunzip.c -- inflate a gzip member, for the tests that read .gz traces */
#include "gunzip.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

char *tu_gunzip(const void *buf, size_t len, size_t *outlen)
{
  z_stream z;
  size_t cap = len * 4 + 65536, n = 0;
  char *out = malloc(cap), *bigger;
  int zr = Z_MEM_ERROR;

  if (!out)
    return NULL;
  memset(&z, 0, sizeof z);
  if (inflateInit2(&z, 16 + 15) != Z_OK) {
    free(out);
    return NULL;
  }
  z.next_in = (Bytef *)(uintptr_t)buf;
  z.avail_in = (uInt)len;
  do {
    if (cap - n < 65536) {
      if (!(bigger = realloc(out, cap * 2)))
        break;
      out = bigger;
      cap *= 2;
    }
    z.next_out = (Bytef *)out + n;
    z.avail_out = (uInt)(cap - n - 1);
    zr = inflate(&z, Z_NO_FLUSH);
    n = (size_t)((char *)z.next_out - out);
  } while (zr == Z_OK);
  inflateEnd(&z);
  if (zr != Z_STREAM_END || z.avail_in != 0) {
    free(out);
    return NULL;
  }
  out[n] = '\0';
  if (outlen)
    *outlen = n;
  return out;
}
