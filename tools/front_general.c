/* front_general.c -- the general front end: any Chrome Trace Event JSON
 * document, from any program, of any shape
 *
 * The scanner of jsonscan.c (pure: no I/O; fuzzed on its own) behind the
 * reader's descriptor (front.h): it bids on every text, low, so that it
 * reads all that the crash-layout reader cannot prove is ours.  What it
 * finds of the document (its members, what it skipped, where it was cut)
 * is the scanner's own info, which the reader's info points to
 * (info.doc): nothing is copied but the form and the tail to write.
 */
#include "internal.h"     /* config.h first */
#include "front.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Feed p[0..n) to the scanner until an item is ready. */
static ptrdiff_t general_feed(twt_reader *r, const char *p, size_t n)
{
  twt_scan_rec rec;
  int ready;
  ptrdiff_t k = twt_scan_feed(r->js, p, n, &rec, &ready);

  if (k > 0)
    r->offset += (uint64_t)k;
  r->info.object_form = twt_scan_info(r->js)->object_form;

  if (k < 0) {
    int rc = (int)k == TWT_SCAN_ETOOBIG ? TWT_READ_ELINE :
             (int)k == TWT_SCAN_ENOTTRACE ? TWT_READ_ENOTTRACE : (int)k;
    return fail(r, rc, "%s", twt_scan_error(r->js));
  }
  if (ready) {
    r->line_off = rec.offset;
    r->line_no = 0;
    if (rec.dropped) {
      r->info.dropped_records++;
      r->info.dropped_bytes += rec.len;
      if (r->flags & TWT_READ_DROPPED)
        yield(r, TWT_ITEM_CUT, NULL, rec.len);
    } else {
      r->info.records++;
      yield(r, TWT_ITEM_RECORD, rec.text, rec.len);
    }
  }
  return k;
}

/* The end of the text. */
static int general_finish(twt_reader *r)
{
  const struct twt_scan_info *in = twt_scan_info(r->js);
  int rc = twt_scan_end(r->js);
  size_t len;

  if (rc != 0) {
    rc = rc == TWT_SCAN_ENOTTRACE ? TWT_READ_ENOTTRACE : rc;
    fail(r, rc, "%s", twt_scan_error(r->js));
    twt__src_note_gzip(r);
    return rc;
  }
  if (in->records == 0 && in->cut) {
    rc = fail(r, TWT_READ_ENORECORD, "cut before the end of its first "
              "record: no record to keep");
    twt__src_note_gzip(r);
    return rc;
  }
  r->info.object_form = in->object_form;
  r->info.had_tail = in->done;
  /* The tail to write: the bracket, and for the object form the other
   * members, without the whitespace between their tokens. */
  free(r->gtail);
  len = in->members_len;
  if (!(r->gtail = malloc(len + 3)))
    return fail(r, -ENOMEM, "out of memory");
  r->gtail[0] = ']';
  len = 1 + twt_json_compact(r->gtail + 1, in->members ? in->members : "",
                             len);
  if (len > 1) {                  /* in the order of their keys */
    char *sorted = malloc(len);
    if (sorted && twt_rec_sort_members(sorted, r->gtail + 1, len - 1))
      memcpy(r->gtail + 1, sorted, len - 1);
    free(sorted);
  }
  if (in->object_form)
    r->gtail[len++] = '}';
  r->gtail[len] = '\0';
  r->info.tail = r->gtail;
  r->info.tail_len = len;
  r->info.ended = 1;
  r->info.strict = in->strict && in->done;  /* and the source whole */
  return 0;
}

/* Set the front end: the crash-layout reader (layout) or the general
 * one, unless a flag forces one. */

/* It reads any text of the format: the bid of last resort. */
static int general_bid(const char *p, size_t n, int at_end)
{
  (void)p;
  (void)n;
  (void)at_end;
  return TWT_BID_ANY;
}

/* Chosen: a scanner, with what the flags ask of it. */
static int general_start(twt_reader *r)
{
  r->info.general = 1;
  if (!(r->js = twt_scan_new(r->max_record, MEMBERS_MAX)))
    return fail(r, -ENOMEM, "out of memory");
  if (r->flags & TWT_READ_MEMBERS_ONLY)
    twt_scan_members_only(r->js);
  else if (r->flags & TWT_READ_MEMBERS)
    twt_scan_on_member(r->js, twt_rec_take, &r->rec);
  r->info.doc = twt_scan_info(r->js);
  return 0;
}

static void general_end(twt_reader *r)
{
  twt_scan_free(r->js);
  r->js = NULL;
  free(r->gtail);
  r->gtail = NULL;
}

const struct twt_front twt__front_general = {
  "general", general_bid, general_start, general_feed, general_finish,
  NULL, general_end,
};
