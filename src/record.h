/* record.h -- the staged entries of a deferred writer
 *
 * With formatting on the committer (writer.h, w->defer_limit), a slot
 * holds entries, each a header followed by its body:
 *
 *   TEXT   a record the producer formatted itself (the shapes the
 *          committer does not take, 'M' events): its JSON bytes
 *   EVENT  an event copied as it came, for the committer to format: the
 *          fields, then the bytes of its strings and args
 *
 * The producer encodes an event only when it has proved that the
 * formatter will take it as it is (no error, nothing cut or replaced, no
 * more than the writer's limit once formatted); anything else it formats
 * itself, so the call that caused an error returns it and every count of
 * the stats is the same.  The committer (commit.c) and the crash hook
 * (crash.c) render entries back into records with tw__format_event: the
 * same function on the same fields, so the same bytes.
 *
 * Entries take a multiple of 8 bytes (fields are read with memcpy all
 * the same); a slot's published length always falls between two
 * entries.
 */
#ifndef TW_RECORD_H
#define TW_RECORD_H

#include "internal.h"

/* The header of an entry. */
typedef struct tw__rec_head {
  uint32_t size;           /* bytes of the entry, this header and the
                              padding to a multiple of 8 included */
  uint32_t kind;           /* TW__REC_TEXT or TW__REC_EVENT; a TEXT
                              entry's padding (0..7 bytes) << 8 */
} tw__rec_head;

#define TW__REC_TEXT 1u
#define TW__REC_EVENT 2u

/* Args an EVENT entry holds at most: more go to the producer's
 * formatter. */
#define TW__REC_MAX_ARGS 16

/* Encode ev (def: the values of the fields it leaves to the library) as
 * an EVENT entry at buf[0..cap).  limit: the most bytes its record may
 * take once formatted (the writer's max_event, and what the committer's
 * buffer holds).  Returns 0 with *len the entry's size; TW__ENOROOM with
 * *len the size it needs; or 1: the event is not one to defer (a shape
 * the committer does not take, or one that formatting could refuse, cut
 * or replace), format it now.  No allocation, no lock. */
int tw__rec_encode(const tw_event *ev, const tw__fmt_defaults *def,
                   const tw__fmt_config *cfg, size_t limit, char *buf,
                   size_t cap, size_t *len);

/* Render the entries of data[*from..to) (whole entries) as records into
 * out[0..cap): a TEXT entry copied, an EVENT entry formatted.  Stops
 * before the first that does not fit.  Returns the bytes written, with
 * *from past the entries rendered and *formatted increased by the bytes
 * of the EVENT entries' records.  whole: out is the whole buffer, which
 * holds any entry; then an entry that does not fit anyway is skipped,
 * like one that the formatter refuses (neither should happen: the
 * producer checked).  Pure: no allocation, no lock, no stdio:
 * async-signal-safe. */
size_t tw__rec_render(const tw__fmt_config *cfg, const char *data,
                      size_t *from, size_t to, char *out, size_t cap,
                      int whole, uint64_t *formatted);

#endif /* TW_RECORD_H */
