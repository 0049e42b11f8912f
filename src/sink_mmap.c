/* sink_mmap.c -- the mmap sink (not yet implemented) */
#include "internal.h"
#include "sink.h"

int tw__sink_mmap_open(tw__sink **out, int fd, int own_fd,
                       const char *tail, size_t tail_len, size_t chunk)
{
  (void)out; (void)fd; (void)own_fd; (void)tail; (void)tail_len; (void)chunk;
  return TW_ESINK;
}
