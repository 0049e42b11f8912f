/* event.c -- the thin helpers over tw_emit, one per common phase */
#include "internal.h"

#include <string.h>

int tw_complete(tw_writer *w, const char *cat, const char *name,
                uint64_t ts_ns, uint64_t dur_ns, const tw_arg *args,
                size_t nargs)
{
  return w ? tw__emit_complete(w, cat, name, ts_ns, dur_ns, args, nargs)
           : 0;
}

int tw_begin(tw_writer *w, const char *cat, const char *name,
             const tw_arg *args, size_t nargs)
{
  return w ? tw__emit_now(w, TW__SHAPE('B', 0), cat, name, args, nargs)
           : 0;
}

int tw_end(tw_writer *w, const char *cat, const char *name,
           const tw_arg *args, size_t nargs)
{
  return w ? tw__emit_now(w, TW__SHAPE('E', 0), cat, name, args, nargs)
           : 0;
}

int tw_instant(tw_writer *w, const char *cat, const char *name, char scope,
               const tw_arg *args, size_t nargs)
{
  return w ? tw__emit_now(w, TW__SHAPE('I', scope), cat, name, args, nargs)
           : 0;
}

int tw_counter(tw_writer *w, const char *cat, const char *name,
               const tw_arg *series, size_t nseries)
{
  tw_event ev = tw__event('C', cat, name, series, nseries);
  return w ? tw_emit(w, &ev) : 0;
}

static int with_id(tw_writer *w, char ph, const char *cat, const char *name,
                   uint64_t id, unsigned flags, const tw_arg *args,
                   size_t nargs)
{
  tw_event ev;
  if (!w)
    return 0;
  ev = tw__event(ph, cat, name, args, nargs);
  ev.has = TW_HAS_ID;
  ev.flags = flags;
  ev.id = id;
  return tw_emit(w, &ev);
}

int tw_async_begin(tw_writer *w, const char *cat, const char *name,
                   uint64_t id, const tw_arg *args, size_t nargs)
{
  return with_id(w, 'b', cat, name, id, 0, args, nargs);
}

int tw_async_instant(tw_writer *w, const char *cat, const char *name,
                     uint64_t id, const tw_arg *args, size_t nargs)
{
  return with_id(w, 'n', cat, name, id, 0, args, nargs);
}

int tw_async_end(tw_writer *w, const char *cat, const char *name,
                 uint64_t id, const tw_arg *args, size_t nargs)
{
  return with_id(w, 'e', cat, name, id, 0, args, nargs);
}

int tw_flow_start(tw_writer *w, const char *cat, const char *name,
                  uint64_t id)
{
  return with_id(w, 's', cat, name, id, 0, NULL, 0);
}

int tw_flow_step(tw_writer *w, const char *cat, const char *name,
                 uint64_t id)
{
  return with_id(w, 't', cat, name, id, 0, NULL, 0);
}

int tw_flow_end(tw_writer *w, const char *cat, const char *name, uint64_t id)
{
  return with_id(w, 'f', cat, name, id, TW_EV_BP_ENCLOSING, NULL, 0);
}

/* A metadata event: name with one argument. */
static int metadata(tw_writer *w, const char *name, tw_arg arg)
{
  tw_event ev = tw__event('M', NULL, name, &arg, 1);
  return w ? tw_emit(w, &ev) : 0;
}

int tw_process_name(tw_writer *w, const char *name)
{
  return metadata(w, "process_name", tw_arg_str("name", name));
}

int tw_thread_name(tw_writer *w, const char *name)
{
  return metadata(w, "thread_name", tw_arg_str("name", name));
}

int tw_process_sort_index(tw_writer *w, int64_t index)
{
  return metadata(w, "process_sort_index", tw_arg_int("sort_index", index));
}

int tw_thread_sort_index(tw_writer *w, int64_t index)
{
  return metadata(w, "thread_sort_index", tw_arg_int("sort_index", index));
}

int tw_process_labels(tw_writer *w, const char *labels)
{
  return metadata(w, "process_labels", tw_arg_str("labels", labels));
}

/* A global instant: DevTools does not draw 'R', which Perfetto and
 * chrome://tracing read as an instant. */
int tw_mark(tw_writer *w, const char *cat, const char *name)
{
  tw_event ev = tw__event('I', cat, name, NULL, 0);
  ev.instant_scope = 'g';
  return w ? tw_emit(w, &ev) : 0;
}

tw_span tw_span_begin(tw_writer *w, const char *cat, const char *name)
{
  tw_span s;
  s.w = w;
  s.cat = cat;
  s.name = name;
  s.start_ns = w ? tw_now_ns() : 0;
  return s;
}

int tw_span_end(tw_span *span)
{
  tw_writer *w;
  if (!span || !span->w)
    return 0;
  w = span->w;
  span->w = NULL;
  return tw_complete(w, span->cat, span->name, span->start_ns,
                     tw_now_ns() - span->start_ns, NULL, 0);
}
