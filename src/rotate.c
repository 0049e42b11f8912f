/* rotate.c -- what rotation needs besides the writer: the names of the
 * finished files, and the metadata records repeated at the top of each
 * new file
 *
 * Each file of a rotated trace must be a complete trace on its own, so
 * the 'M' records (process and thread names, sort indexes, labels)
 * emitted so far are kept and written again after the head of every new
 * file.  They are kept in one allocation made at open, bounded: a record
 * with the same name and the same process (and thread, for thread_*
 * metadata) replaces the older one in its place, and when the store is
 * full the oldest records but the first (the writer's own process name,
 * remembered at open) are forgotten to make room.
 *
 * Also the directory's descriptor, which the rotating writer names its
 * files relative to (and tracewriter repair fsyncs after its rename).
 */
#include "internal.h"     /* config.h first */
#include "rotate.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tw__meta_init(tw__meta *m, size_t cap)
{
  memset(m, 0, sizeof *m);
  m->ent = calloc(TW__META_MAX_ENTRIES, sizeof *m->ent);
  m->data = malloc(TW__META_GAP + cap);
  if (!m->ent || !m->data) {
    free(m->ent);
    free(m->data);
    return -ENOMEM;
  }
  m->cap = cap;
  return 0;
}

void tw__meta_free(tw__meta *m)
{
  free(m->ent);
  free(m->data);
  m->ent = NULL;
  m->data = NULL;
}

/* FNV-1a: the name part of a record's key. */
static uint64_t name_hash(const char *s)
{
  uint64_t h = 14695981039346656037ull;

  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* Forget entry i, closing the gap in data and in ent. */
static void forget(tw__meta *m, unsigned i)
{
  char *recs = m->data + TW__META_GAP;
  size_t off = m->ent[i].off, len = m->ent[i].len;

  memmove(recs + off, recs + off + len, m->len - off - len);
  m->len -= len;
  memmove(&m->ent[i], &m->ent[i + 1], (m->n - i - 1) * sizeof *m->ent);
  m->n--;
  for (unsigned k = i; k < m->n; k++)
    m->ent[k].off -= (uint32_t)len;
}

/* Give entry i len bytes in place (its later records move). */
static void resize(tw__meta *m, unsigned i, size_t len)
{
  char *recs = m->data + TW__META_GAP;
  size_t end = m->ent[i].off + m->ent[i].len;
  uint32_t delta = (uint32_t)len - m->ent[i].len; /* modulo 2^32 */

  memmove(recs + m->ent[i].off + len, recs + end, m->len - end);
  m->len = m->len - m->ent[i].len + len;
  m->ent[i].len = (uint32_t)len;
  for (unsigned k = i + 1; k < m->n; k++)
    m->ent[k].off += delta;
}

void tw__meta_remember(tw__meta *m, const char *name, int64_t pid,
                       int64_t tid, const char *rec, size_t len)
{
  uint64_t h = name_hash(name);
  unsigned i;

  /* Process metadata is per process, whichever thread sets it. */
  if (strncmp(name, "thread_", 7) != 0)
    tid = 0;
  for (i = 0; i < m->n; i++)
    if (m->ent[i].name_hash == h && m->ent[i].pid == pid &&
        m->ent[i].tid == tid)
      break;
  /* What cannot fit beside the first record is not kept, and nothing is
   * forgotten for it: the older record, if any, stays. */
  if (len > m->cap || (i != 0 && m->n && m->ent[0].len + len > m->cap))
    return;
  if (i < m->n) {
    /* A newer value: in the older one's place, so that the first record
     * (the writer's own process name) stays first. */
    for (unsigned v = 1; m->len - m->ent[i].len + len > m->cap && v < m->n;)
      if (v == i)
        v++;
      else {
        forget(m, v);
        i -= v < i;
      }
    if (m->len - m->ent[i].len + len > m->cap)
      return;
    resize(m, i, len);
    memcpy(m->data + TW__META_GAP + m->ent[i].off, rec, len);
    return;
  }
  /* The oldest records but the first make room; the store is never left
   * empty, so a new file always has a record after its head. */
  while (m->n > 1 && (m->len + len > m->cap || m->n == TW__META_MAX_ENTRIES))
    forget(m, 1);
  if (m->len + len > m->cap || m->n == TW__META_MAX_ENTRIES)
    return;
  memcpy(m->data + TW__META_GAP + m->len, rec, len);
  m->ent[m->n].off = (uint32_t)m->len;
  m->ent[m->n].len = (uint32_t)len;
  m->ent[m->n].name_hash = h;
  m->ent[m->n].pid = pid;
  m->ent[m->n].tid = tid;
  m->n++;
  m->len += len;
}

const char *tw__meta_document_start(tw__meta *m, const char *head,
                                    size_t head_len, size_t *len)
{
  char *first = m->data + TW__META_GAP;

  /* The first record's leading comma gives way to the head. */
  m->saved = first[0];
  memcpy(first + 1 - head_len, head, head_len);
  *len = head_len + m->len - 1;
  return first + 1 - head_len;
}

void tw__meta_document_done(tw__meta *m)
{
  m->data[TW__META_GAP] = m->saved;
}

/* Where the ".NNNNNN" goes in the base name of path: before ".json.gz",
 * ".json" or ".gz", else before the last extension, else at the end. */
static size_t number_at(const char *path)
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

int tw__rotated_name(char *out, size_t size, const char *path,
                     unsigned long n)
{
  size_t at = number_at(path);
  int k = snprintf(out, size, "%.*s.%06lu%s", (int)at, path, n, path + at);

  return k < 0 || (size_t)k >= size ? -ENAMETOOLONG : 0;
}

int tw__open_directory_of(const char *path)
{
  const char *slash = strrchr(path, '/');
  char *dir;
  int fd;

  if (!slash)
    dir = strdup(".");
  else if (slash == path)
    dir = strdup("/");
  else
    dir = strndup(path, (size_t)(slash - path));
  if (!dir)
    return -ENOMEM;
  fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
#ifdef O_PATH
  if (fd < 0 && errno == EACCES)
    fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
#endif
  fd = fd >= 0 ? fd : -errno;
  free(dir);
  return fd;
}
