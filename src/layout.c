/* layout.c -- the file's framing (see layout.h) */
#include "internal.h"
#include "layout.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

_Static_assert(sizeof "{\"traceEvents\":[" - 1 <= TW__LAYOUT_HEAD_MAX,
               "TW__LAYOUT_HEAD_MAX holds the longest head");

const char *tw__layout_head(int object_form, size_t *len)
{
  const char *h = object_form ? "{\"traceEvents\":[" : "[";
  *len = strlen(h);
  return h;
}

const char *tw__layout_tail(int object_form, size_t *len)
{
  const char *t = object_form ? "\n]}" : "\n]";
  *len = strlen(t);
  return t;
}

int tw__layout_first_record(const char *name, const tw__fmt_config *cfg,
                            char *buf, size_t cap, size_t *len,
                            tw__fmt_notes *notes)
{
  tw__fmt_defaults def = { 0, tw__pid(), tw__tid() };
  tw_arg arg = tw_arg_str("name", name ? name : tw__program_name());
  tw_event ev;
  int rc;

  memset(&ev, 0, sizeof ev);
  ev.ph = 'M';
  ev.name = "process_name";
  ev.args = &arg;
  ev.nargs = 1;
  notes->truncated = notes->replaced = 0;
  rc = tw__format_event(&ev, &def, cfg, buf, cap, len, notes);
  return rc == TW__ENOROOM ? TW_ETOOBIG : rc;
}

int tw__layout_clock_record(const tw__fmt_config *cfg, int64_t ts_offset,
                            uint64_t base_ns, char *buf, size_t cap,
                            size_t *len)
{
  struct timespec rt;
  uint64_t mono = tw_now_ns(), real;
  tw__fmt_defaults def = { 0, tw__pid(), tw__tid() };
  tw__fmt_notes notes = { 0, 0 };
  tw_arg args[4];
  tw_event ev;
  int rc;

  clock_gettime(CLOCK_REALTIME, &rt);
  real = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec;
  args[0] = tw_arg_str("sync_id", TW__LAYOUT_CLOCK_SYNC_ID);
  args[1] = tw_arg_uint("monotonic_ns", mono);
  args[2] = tw_arg_uint("realtime_ns", real);
  args[3] = tw_arg_uint("kineto_base_ns", base_ns);
  memset(&ev, 0, sizeof ev);
  ev.ph = 'c';
  ev.name = "clock_sync";
  ev.has = TW_HAS_TS;
  ev.ts = (int64_t)mono + ts_offset > 0 ? (uint64_t)((int64_t)mono + ts_offset)
                                        : 0;
  ev.args = args;
  ev.nargs = base_ns ? 4 : 3;
  rc = tw__format_event(&ev, &def, cfg, buf, cap, len, &notes);
  return rc == TW__ENOROOM ? TW_ETOOBIG : rc;
}

size_t tw__layout_build_head(int object_form, uint64_t base_ns, long rank,
                             long world_size, char *buf)
{
  size_t len;
  const char *fixed = tw__layout_head(object_form, &len);
  int n;

  if (!object_form || (!base_ns && rank < 0)) {
    memcpy(buf, fixed, len);
    return len;
  }
  n = snprintf(buf, TW__LAYOUT_HEAD_ROOM, "{\"schemaVersion\":1,"
               "\"displayTimeUnit\":\"ms\",");
  if (base_ns)
    n += snprintf(buf + n, TW__LAYOUT_HEAD_ROOM - (size_t)n,
                  "\"baseTimeNanoseconds\":%llu,",
                  (unsigned long long)base_ns);
  if (rank >= 0 && world_size >= 0)
    n += snprintf(buf + n, TW__LAYOUT_HEAD_ROOM - (size_t)n,
                  "\"distributedInfo\":{\"rank\":%ld,\"world_size\":%ld},",
                  rank, world_size);
  else if (rank >= 0)
    n += snprintf(buf + n, TW__LAYOUT_HEAD_ROOM - (size_t)n,
                  "\"distributedInfo\":{\"rank\":%ld},", rank);
  n += snprintf(buf + n, TW__LAYOUT_HEAD_ROOM - (size_t)n,
                "\"traceEvents\":[");
  return (size_t)n;
}

char *tw__layout_document(const char *head, size_t head_len, char *records,
                          size_t len, size_t *doc_len)
{
  char *doc = records + 1 - head_len;

  memcpy(doc, head, head_len);
  *doc_len = head_len + len - 1;
  return doc;
}
