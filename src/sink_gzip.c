/* sink_gzip.c -- the gzip sink (not yet implemented) */
#include "internal.h"
#include "sink.h"

int tw__sink_gzip_open(tw__sink **out, int fd, int own_fd,
                       const char *tail, size_t tail_len, int level)
{
  (void)out; (void)fd; (void)own_fd; (void)tail; (void)tail_len; (void)level;
  return TW_ESINK;
}
