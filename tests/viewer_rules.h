/* viewer_rules.h -- the library's refusals for the viewers' sake, as a
 * model for the tests (test_format_random, tests/fuzz/fuzz_format.c)
 *
 * Written from the viewers' sources apart from src/format.c, so that the
 * tests check the library against the rules instead of repeating it:
 * Perfetto's JSON importer at ec5d16b (numbers) and Catapult's
 * trace_event_importer.html and base/color_scheme.html at 6fd8bbe (shapes
 * that fail chrome://tracing's import).  See tracewriter(7), WHAT EACH
 * VIEWER SHOWS.
 */
#ifndef TW_TESTS_VIEWER_RULES_H
#define TW_TESTS_VIEWER_RULES_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "tracewriter.h"

/* 1 if the library must refuse ev for a number Perfetto cannot read
 * right: a time from 2^63 ns (ts, ts + dur on 'X', tts, tts + tdur), a
 * pid or tid outside 0..4294967295, a numeric "sort_index" outside
 * int32_t on process_sort_index or thread_sort_index.  now: the default
 * ts. */
static inline int vr_numbers_refused(const tw_event *ev, uint64_t now)
{
  const uint64_t end = UINT64_C(1) << 63;
  uint64_t ts = (ev->has & TW_HAS_TS) ? ev->ts : now;
  uint64_t tts = (ev->has & TW_HAS_TTS) ? ev->tts : 0;

  if (ts >= end || (ev->ph == 'X' && ev->dur >= end - ts) || tts >= end ||
      ((ev->has & TW_HAS_TDUR) && ev->tdur >= end - tts) ||
      ((ev->has & TW_HAS_PID) && (uint64_t)ev->pid > UINT32_MAX) ||
      ((ev->has & TW_HAS_TID) && (uint64_t)ev->tid > UINT32_MAX))
    return 1;
  if (ev->ph != 'M' || !ev->name ||
      (strcmp(ev->name, "process_sort_index") != 0 &&
       strcmp(ev->name, "thread_sort_index") != 0))
    return 0;
  for (size_t i = 0; ev->args && i < ev->nargs; i++) {
    const tw_arg *a = &ev->args[i];
    if (a->name && strcmp(a->name, "sort_index") == 0 &&
        ((a->type == TW_ARG_INT && (a->v.i < INT32_MIN ||
                                    a->v.i > INT32_MAX)) ||
         (a->type == TW_ARG_UINT && a->v.u > INT32_MAX) ||
         (a->type == TW_ARG_DOUBLE && isfinite(a->v.d) &&
          (a->v.d < INT32_MIN || a->v.d > INT32_MAX))))
      return 1;
  }
  return 0;
}

/* The color names of Catapult's base/color_scheme.html, its spelling
 * kept. */
static const char *const vr_colors[] = {
  "thread_state_uninterruptible", "thread_state_iowait",
  "thread_state_running", "thread_state_runnable", "thread_state_sleeping",
  "thread_state_unknown", "background_memory_dump", "light_memory_dump",
  "detailed_memory_dump", "vsync_highlight_color", "generic_work", "good",
  "bad", "terrible", "black", "grey", "white", "yellow", "olive",
  "rail_response", "rail_animation", "rail_idle", "rail_load", "startup",
  "heap_dump_stack_frame", "heap_dump_object_type",
  "heap_dump_child_node_arrow", "cq_build_running", "cq_build_passed",
  "cq_build_failed", "cq_build_abandoned", "cq_build_attempt_runnig",
  "cq_build_attempt_passed", "cq_build_attempt_failed",
};
#define VR_NCOLORS (sizeof vr_colors / sizeof vr_colors[0])

/* 1 if ev would make chrome://tracing fail its whole import, which the
 * library refuses (after checking the strings): a cname not among its
 * color names, a clock sync 'c' without a "sync_id" argument, an 'f' with
 * neither cat nor bp. */
static inline int vr_catapult_refuses(const tw_event *ev)
{
  int known = ev->cname == NULL, sync = 0;

  for (size_t i = 0; !known && i < VR_NCOLORS; i++)
    known = strcmp(ev->cname, vr_colors[i]) == 0;
  for (size_t i = 0; ev->args && i < ev->nargs; i++)
    sync |= ev->args[i].name && strcmp(ev->args[i].name, "sync_id") == 0;
  return !known || (ev->ph == 'c' && !sync) ||
         (ev->ph == 'f' && !ev->cat && !(ev->flags & TW_EV_BP_ENCLOSING));
}

#endif /* TW_TESTS_VIEWER_RULES_H */
