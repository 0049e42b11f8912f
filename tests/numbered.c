/* numbered.c -- numbered events: the tests' one emitter and one checker
 * (see numbered.h) */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* gettid */
#endif
#include "numbered.h"
#include "gunzip.h"

#include <errno.h>
#include <unistd.h>

const char *tu_numbered_ctx = "";

/* "abc...zabc...": a pad of n is its first n characters. */
static char pad_text[TU_PAD_MAX + 1];

/* Before main(), so that a forked child has it too. */
__attribute__((constructor)) static void fill_pad(void)
{
  for (size_t k = 0; k < TU_PAD_MAX; k++)
    pad_text[k] = (char)('a' + k % 26);
}

/* "ev<i>" into name[32], without snprintf (async-signal-safe). */
static void event_name(char *name, int i)
{
  char digits[16];
  size_t n = 0, k = 0;
  unsigned u = i < 0 ? 0u - (unsigned)i : (unsigned)i;

  do
    digits[n++] = (char)('0' + u % 10);
  while ((u /= 10) != 0);
  name[k++] = 'e';
  name[k++] = 'v';
  if (i < 0)
    name[k++] = '-';
  while (n > 0)
    name[k++] = digits[--n];
  name[k] = '\0';
}

int tu_emit_pad(const tu_family *f, tw_writer *w, int i, size_t padlen)
{
  char name[32];
  tw_arg args[2];

  if (padlen > TU_PAD_MAX)
    return -EINVAL;
  event_name(name, i);
  args[0] = tw_arg_int("i", i);
  args[1] = tw_arg_strn("pad", pad_text, padlen);
  return tw_complete(w, f->cat, name, TU_TS(i), TU_DUR(i), args,
                     f->pad_of ? 2 : 1);
}

int tu_emit(const tu_family *f, tw_writer *w, int i)
{
  return tu_emit_pad(f, w, i, f->pad_of ? f->pad_of(i) : 0);
}

int tu_emit_range(const tu_family *f, tw_writer *w, int from, int to)
{
  int rc = 0;

  for (int i = from; i < to && rc == 0; i++)
    rc = tu_emit(f, w, i);
  return rc;
}

/* The family's pid and tid, -1 for unchecked. */
static int64_t want_pid(const tu_family *f)
{
  return f->pid ? f->pid : (int64_t)getpid();
}

static int64_t want_tid(const tu_family *f)
{
  return f->tid ? f->tid : (int64_t)gettid();
}

void tu_check_pname(const tu_family *f, const jc_doc *d, jc_val e)
{
  jc_val args;

  if (e < 0)
    fail_msg("%s: no process_name record", tu_numbered_ctx);
  assert_int_equal(jc_type(d, e), JC_OBJECT);
  tu_assert_str(d, e, "ph", "M");
  tu_assert_str(d, e, "name", "process_name");
  if (want_pid(f) >= 0)
    tu_assert_int(d, e, "pid", want_pid(f));
  if (f->pname_tid > 0)
    tu_assert_int(d, e, "tid", f->pname_tid);
  else if (f->pname_tid == 0 && want_tid(f) >= 0)
    tu_assert_int(d, e, "tid", want_tid(f));
  tu_assert_absent(d, e, "ts");
  args = jc_get(d, e, "args");
  assert_true(args >= 0);
  assert_int_equal(jc_type(d, args), JC_OBJECT);
  assert_int_equal(jc_len(d, args), 1);
  tu_assert_str(d, args, "name", f->pname);
}

void tu_check_event_pad(const tu_family *f, const jc_doc *d, jc_val e,
                        int i, size_t padlen)
{
  char name[32];
  jc_val args;
  const char *s;
  size_t n;

  if (e < 0)
    fail_msg("%s: event %d is missing", tu_numbered_ctx, i);
  event_name(name, i);
  assert_int_equal(jc_type(d, e), JC_OBJECT);
  if (!jc_streq(d, jc_get(d, e, "name"), name))
    fail_msg("%s: record %d is not named %s: lost, repeated or out of "
             "order", tu_numbered_ctx, i, name);
  assert_int_equal(jc_len(d, e), 8);
  tu_assert_str(d, e, "ph", "X");
  tu_assert_str(d, e, "name", name);
  tu_assert_str(d, e, "cat", f->cat);
  tu_assert_us(d, e, "ts", TU_TS(i));
  tu_assert_us(d, e, "dur", TU_DUR(i));
  if (want_pid(f) >= 0)
    tu_assert_int(d, e, "pid", want_pid(f));
  else
    assert_int_equal(jc_type(d, jc_get(d, e, "pid")), JC_NUMBER);
  if (want_tid(f) >= 0)
    tu_assert_int(d, e, "tid", want_tid(f));
  else
    assert_int_equal(jc_type(d, jc_get(d, e, "tid")), JC_NUMBER);
  args = jc_get(d, e, "args");
  assert_true(args >= 0);
  assert_int_equal(jc_type(d, args), JC_OBJECT);
  assert_int_equal(jc_len(d, args), f->pad_of ? 2 : 1);
  tu_assert_int(d, args, "i", i);
  if (!f->pad_of)
    return;
  s = jc_str(d, jc_get(d, args, "pad"), &n);
  if (!s || n != padlen || memcmp(s, pad_text, n) != 0)
    fail_msg("%s: event %d: wrong pad (%zu bytes, expected %zu)",
             tu_numbered_ctx, i, n, padlen);
  assert_int_equal(jc_count_key(d, args, "pad"), 1);
}

void tu_check_event(const tu_family *f, const jc_doc *d, jc_val e, int i)
{
  tu_check_event_pad(f, d, e, i, f->pad_of ? f->pad_of(i) : 0);
}

int tu_check_prefix(const tu_family *f, const jc_doc *d)
{
  jc_val e = jc_first(d, tu_events(d));
  int i = 0;

  tu_check_pname(f, d, e);
  for (e = jc_next(d, e); e >= 0; e = jc_next(d, e), i++)
    tu_check_event(f, d, e, i);
  return i;
}

void tu_check_trace(const tu_family *f, const jc_doc *d, int n)
{
  int m = tu_check_prefix(f, d);

  if (m != n)
    fail_msg("%s: %d events in the trace, %d emitted", tu_numbered_ctx, m,
             n);
}

jc_doc *tu_load_trace(const char *buf, size_t len, int gz, int object_form)
{
  const char *tail = TU_TAIL(object_form);
  size_t tl = strlen(tail);
  char *json = NULL, why[256];
  jc_doc *d;
  jc_val root;

  if (gz) {
    if (!(json = tu_gunzip_why(buf, len, &len, why, sizeof why)))
      fail_msg("%s: %s", tu_numbered_ctx, why);
    buf = json;
  }
  if (len < tl || memcmp(buf + len - tl, tail, tl) != 0) {
    free(json);
    fail_msg("%s: the trace (%zu bytes) does not end with exactly its "
             "tail", tu_numbered_ctx, len);
  }
  d = tu_load_mem(buf, len);
  free(json);
  root = jc_root(d);
  assert_int_equal(jc_type(d, root), object_form ? JC_OBJECT : JC_ARRAY);
  if (object_form)
    assert_int_equal(jc_type(d, jc_get(d, root, "traceEvents")), JC_ARRAY);
  return d;
}

jc_doc *tu_load_trace_file(const char *path, int gz, int object_form)
{
  size_t len;
  char *buf = tu_read_file(path, &len);
  jc_doc *d = tu_load_trace(buf, len, gz, object_form);

  free(buf);
  return d;
}

void tu_check_file(const tu_family *f, const char *path, int gz,
                   int object_form, int n)
{
  jc_doc *d = tu_load_trace_file(path, gz, object_form);

  tu_check_trace(f, d, n);
  jc_free(d);
}

void tu_check_mem(const tu_family *f, const char *buf, size_t len, int gz,
                  int object_form, int n)
{
  jc_doc *d = tu_load_trace(buf, len, gz, object_form);

  tu_check_trace(f, d, n);
  jc_free(d);
}
