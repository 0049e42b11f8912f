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

  clock_gettime(CLOCK_REALTIME, &rt);
  real = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec;
  return tw__layout_clock_record_of(cfg, mono, real, ts_offset, base_ns,
                                    tw__pid(), tw__tid(), buf, cap, len);
}

int tw__layout_clock_record_of(const tw__fmt_config *cfg, uint64_t mono,
                               uint64_t real, int64_t ts_offset,
                               uint64_t base_ns, int64_t pid, int64_t tid,
                               char *buf, size_t cap, size_t *len)
{
  tw__fmt_defaults def = { 0, pid, tid };
  tw__fmt_notes notes = { 0, 0 };
  tw_arg args[4];
  tw_event ev;
  int rc;

  args[0] = tw_arg_str(TW__LAYOUT_CLOCK_KEY_ID, TW__LAYOUT_CLOCK_SYNC_ID);
  args[1] = tw_arg_uint(TW__LAYOUT_CLOCK_KEY_MONO, mono);
  args[2] = tw_arg_uint(TW__LAYOUT_CLOCK_KEY_REAL, real);
  args[3] = tw_arg_uint(TW__LAYOUT_CLOCK_KEY_BASE, base_ns);
  memset(&ev, 0, sizeof ev);
  ev.ph = 'c';
  ev.name = TW__LAYOUT_CLOCK_NAME;
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

size_t tw__layout_number_at(const char *path)
{
  static const char *const known[] = { ".json.gz", ".json", ".gz" };
  const char *base = strrchr(path, '/');
  size_t n = strlen(path), b;
  const char *dot;

  b = base ? (size_t)(base - path) + 1 : 0;
  for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) {
    size_t kl = strlen(known[k]);
    if (n - b > kl && strcmp(path + n - kl, known[k]) == 0)
      return n - kl;
  }
  dot = strrchr(path + b, '.');
  return dot && dot > path + b ? (size_t)(dot - path) : n;
}

void tw__layout_gzip_end(unsigned char *e, const char *tail, size_t n,
                         uint32_t crc, uint32_t isize)
{
  unsigned char *t = e + TW__LAYOUT_GZ_STORED_HDR + n;

  e[0] = 0x01;                                  /* BFINAL=1, BTYPE=00 */
  e[1] = (unsigned char)(n & 0xff);
  e[2] = (unsigned char)((n >> 8) & 0xff);
  e[3] = (unsigned char)(~n & 0xff);
  e[4] = (unsigned char)((~n >> 8) & 0xff);
  memcpy(e + TW__LAYOUT_GZ_STORED_HDR, tail, n);
  for (int b = 0; b < 4; b++) {
    t[b] = (unsigned char)(crc >> (8 * b));
    t[4 + b] = (unsigned char)(isize >> (8 * b));
  }
}
