/* event.c -- the thin helpers over tw_emit, one per common phase */
#include "internal.h"

#include <stddef.h>
#include <string.h>

/* The fields of an event of phase ph at now on the calling thread that
 * tw__emit_common reads, and the first 16 bytes (the padding in them
 * too, one store). */
static inline __attribute__((always_inline)) void
event_common(tw_event *ev, char ph, const char *cat, const char *name,
             const tw_arg *args, size_t nargs)
{
  memset(ev, 0, offsetof(tw_event, name));
  ev->ph = ph;
  ev->name = name;
  ev->cat = cat;
  ev->ts = 0;
  ev->dur = 0;
  ev->args = args;
  ev->nargs = nargs;
}

/* The rest of an event begun by event_common.  Field by field, not one
 * memset of the whole event: the compiler then writes the zeros with a
 * few 16-byte stores instead of a string instruction of 18 steps (about
 * 20 instructions less per event). */
static inline __attribute__((always_inline)) void
event_rest(tw_event *ev)
{
  ev->tts = 0;
  ev->tdur = 0;
  ev->pid = 0;
  ev->tid = 0;
  ev->id = 0;
  ev->bind_id = 0;
  ev->id_scope = NULL;
  ev->cname = NULL;
  ev->reserved[0] = NULL;
  ev->reserved[1] = NULL;
}

/* An event of phase ph at now on the calling thread. */
static inline __attribute__((always_inline)) tw_event
event(char ph, const char *cat, const char *name, const tw_arg *args,
      size_t nargs)
{
  tw_event ev;

  event_common(&ev, ph, cat, name, args, nargs);
  event_rest(&ev);
  return ev;
}

/* ev, begun by event_common, through tw_emit: the events that
 * tw__emit_common leaves. */
static __attribute__((noinline)) int emit_rest(tw_writer *w, tw_event *ev)
{
  event_rest(ev);
  return tw_emit(w, ev);
}

/* ev, begun by event_common: the common path, else tw_emit. */
static inline __attribute__((always_inline)) int
emit_common(tw_writer *w, tw_event *ev)
{
  if (TW__LIKELY(tw__emit_common(w, ev) == 0))
    return 0;
  return emit_rest(w, ev);
}

int tw_complete(tw_writer *w, const char *cat, const char *name,
                uint64_t ts_ns, uint64_t dur_ns, const tw_arg *args,
                size_t nargs)
{
  return w ? tw__emit_x(w, cat, name, ts_ns, dur_ns, args, nargs) : 0;
}

int tw__complete_event(tw_writer *w, const char *cat, const char *name,
                       uint64_t ts_ns, uint64_t dur_ns, const tw_arg *args,
                       size_t nargs)
{
  tw_event ev;

  event_common(&ev, 'X', cat, name, args, nargs);
  ev.has = TW_HAS_TS;
  ev.ts = ts_ns;
  ev.dur = dur_ns;
  return emit_common(w, &ev);
}

int tw_begin(tw_writer *w, const char *cat, const char *name,
             const tw_arg *args, size_t nargs)
{
  tw_event ev;
  if (!w)
    return 0;
  event_common(&ev, 'B', cat, name, args, nargs);
  return emit_common(w, &ev);
}

int tw_end(tw_writer *w, const char *cat, const char *name,
           const tw_arg *args, size_t nargs)
{
  tw_event ev;
  if (!w)
    return 0;
  event_common(&ev, 'E', cat, name, args, nargs);
  return emit_common(w, &ev);
}

int tw_instant(tw_writer *w, const char *cat, const char *name, char scope,
               const tw_arg *args, size_t nargs)
{
  tw_event ev;
  if (!w)
    return 0;
  event_common(&ev, 'I', cat, name, args, nargs);
  ev.instant_scope = scope;
  return emit_common(w, &ev);
}

int tw_counter(tw_writer *w, const char *cat, const char *name,
               const tw_arg *series, size_t nseries)
{
  tw_event ev = event('C', cat, name, series, nseries);
  return w ? tw_emit(w, &ev) : 0;
}

static int with_id(tw_writer *w, char ph, const char *cat, const char *name,
                   uint64_t id, unsigned flags, const tw_arg *args,
                   size_t nargs)
{
  tw_event ev;
  if (!w)
    return 0;
  ev = event(ph, cat, name, args, nargs);
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
  tw_event ev = event('M', NULL, name, &arg, 1);
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
  tw_event ev = event('I', cat, name, NULL, 0);
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
