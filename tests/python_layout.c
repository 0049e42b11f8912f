/* python_layout.c -- the C layout of the structs the Python binding mirrors
 *
 * Prints one line per struct ("tw_event 144") and per field
 * ("tw_event.name 16 8": offset and size), as the compiler lays them out,
 * for python/tests/test_layout.py to compare with the ctypes mirrors in
 * python/tracewriter/_lib.py.  Not a test by itself: test_python.sh runs
 * the Python tests, which run it.
 */
#include "tracewriter.h"

#include <stddef.h>
#include <stdio.h>

#define STRUCT(type) printf("%s %zu\n", #type, sizeof(type))
#define FIELD(type, field)                                                \
  printf("%s.%s %zu %zu\n", #type, #field, offsetof(type, field),         \
         sizeof(((type *)0)->field))

int main(void)
{
  STRUCT(tw_options);
  FIELD(tw_options, struct_size);
  FIELD(tw_options, buffer_size);
  FIELD(tw_options, format);
  FIELD(tw_options, sink);
  FIELD(tw_options, gzip_level);
  FIELD(tw_options, flags);
  FIELD(tw_options, max_string);
  FIELD(tw_options, max_event);
  FIELD(tw_options, process_name);
  FIELD(tw_options, file_mode);
  FIELD(tw_options, commit);
  FIELD(tw_options, buffer_count);
  FIELD(tw_options, mmap_chunk);
  FIELD(tw_options, flush_interval_ns);
  FIELD(tw_options, on_full);
  FIELD(tw_options, crash);
  FIELD(tw_options, rotate_size);
  FIELD(tw_options, rotate_interval_ns);
  FIELD(tw_options, rotate_keep);
  FIELD(tw_options, timebase);
  FIELD(tw_options, rank);
  FIELD(tw_options, gzip_threads);

  STRUCT(tw_arg);
  FIELD(tw_arg, name);
  FIELD(tw_arg, type);
  FIELD(tw_arg, len);
  FIELD(tw_arg, v);
  FIELD(tw_arg, v.i);
  FIELD(tw_arg, v.u);
  FIELD(tw_arg, v.d);
  FIELD(tw_arg, v.b);
  FIELD(tw_arg, v.s);

  STRUCT(tw_event);
  FIELD(tw_event, ph);
  FIELD(tw_event, instant_scope);
  FIELD(tw_event, has);
  FIELD(tw_event, flags);
  FIELD(tw_event, name);
  FIELD(tw_event, cat);
  FIELD(tw_event, ts);
  FIELD(tw_event, dur);
  FIELD(tw_event, tts);
  FIELD(tw_event, tdur);
  FIELD(tw_event, pid);
  FIELD(tw_event, tid);
  FIELD(tw_event, id);
  FIELD(tw_event, bind_id);
  FIELD(tw_event, id_scope);
  FIELD(tw_event, cname);
  FIELD(tw_event, args);
  FIELD(tw_event, nargs);
  FIELD(tw_event, reserved);

  STRUCT(tw_stats);
  FIELD(tw_stats, events);
  FIELD(tw_stats, bytes);
  FIELD(tw_stats, commits);
  FIELD(tw_stats, rejected);
  FIELD(tw_stats, strings_truncated);
  FIELD(tw_stats, utf8_replaced);
  FIELD(tw_stats, dropped);
  FIELD(tw_stats, error);
  FIELD(tw_stats, output_bytes);
  FIELD(tw_stats, rotations);
  return 0;
}
