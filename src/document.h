/* document.h -- the metadata store that every document begins with
 *
 * The store is document.c's: the writer keeps one (w->meta, under
 * w->meta_lock) and begins every document -- the first at open, each
 * rotation's, each restart after a copytruncate -- with its records.
 * Declared here, apart from writer.h, so that its unit test can use it
 * without a writer.
 */
#ifndef TW_DOCUMENT_H
#define TW_DOCUMENT_H

#include <stddef.h>
#include <stdint.h>

#include "layout.h"

/* Room before the records for the head (layout.h). */
#define TW__META_GAP TW__LAYOUT_HEAD_ROOM
#define TW__META_MAX_ENTRIES 1024u
#define TW__META_BYTES (64u * 1024u)

/* The 'M' records to write again at the top of every new file.  Not
 * thread-safe: the writer guards it. */
typedef struct tw__meta {
  char *data;              /* TW__META_GAP bytes, then the records */
  size_t len;              /* bytes of records */
  size_t cap;              /* room for records */
  unsigned n;              /* records */
  char saved;              /* see tw__meta_document_start */
  struct tw__meta_entry {
    uint32_t off, len;     /* the record in data + TW__META_GAP */
    uint64_t name_hash;    /* the key: the event's name, pid and (thread_*
                              only) tid */
    int64_t pid, tid;
  } *ent;
} tw__meta;

/* Allocate room for cap bytes of records.  Returns 0 or -ENOMEM. */
int tw__meta_init(tw__meta *m, size_t cap);
void tw__meta_free(tw__meta *m);

/* Keep rec[0..len), a formatted 'M' record (leading comma included) for
 * the event name of process pid and thread tid, in the place of an older
 * one with the same key; forget the oldest records but the first when
 * full.  A record that does not fit (larger than the store, or than the
 * room the first record leaves) is not kept, and an older one with its
 * key stays.  The store never becomes empty once it holds a record. */
void tw__meta_remember(tw__meta *m, const char *name, int64_t pid,
                       int64_t tid, const char *rec, size_t len);

/* The start of a new file: head followed by the records (the first
 * without its comma), in place; *len its length.  There must be at least
 * one record.  Valid until tw__meta_document_done, which must follow. */
char *tw__meta_document_start(tw__meta *m, const char *head,
                              size_t head_len, size_t *len);
void tw__meta_document_done(tw__meta *m);

#endif /* TW_DOCUMENT_H */
