/* sink.c -- the sink factory: the sink that the options ask for, framed
 * by the layout's tail (the writer never asks which sink it has; sink.h)
 */
#include "internal.h"
#include "layout.h"
#include "sink.h"

#include <unistd.h>

int tw__sink_open(int fd, int own_fd, const tw_options *o, tw__sink **out)
{
  size_t tail_len;
  const char *tail = tw__layout_tail(o->format == TW_FORMAT_OBJECT,
                                     &tail_len);
  int rc;

  switch (o->sink) {
  case TW_SINK_MMAP:
    rc = tw__sink_mmap_open(out, fd, own_fd, tail, tail_len, o->mmap_chunk);
    break;
  case TW_SINK_GZIP:
    rc = tw__sink_gzip_open(out, fd, own_fd, tail, tail_len, o->gzip_level,
                            o->gzip_threads);
    break;
  default:
    rc = tw__sink_file_open(out, fd, own_fd, tail, tail_len);
    break;
  }
  if (rc && own_fd)
    close(fd);
  return rc;
}

int tw__sink_open_stream(FILE *stream, const tw_options *o, tw__sink **out)
{
  size_t tail_len;
  const char *tail = tw__layout_tail(o->format == TW_FORMAT_OBJECT,
                                     &tail_len);

  return tw__sink_stream_open(out, stream, tail, tail_len);
}
