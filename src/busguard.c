/* busguard.c -- the mmap sink's guard against a file cut under it (see
 * busguard.h)
 */
#include "internal.h"
#include "busguard.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#define GUARD_SLOTS 1024

static struct {
  uintptr_t start, end;    /* atomic; end 0: free, or being filled */
} guarded[GUARD_SLOTS];
/* The page size, read when the first window is guarded: the handler
 * calls no sysconf. */
static uintptr_t guard_page;
unsigned tw__bus_cuts;     /* atomic: faults fixed */

void tw__bus_guard_add(void *map, size_t len)
{
  uintptr_t start = (uintptr_t)map;

  if (!__atomic_load_n(&guard_page, __ATOMIC_RELAXED)) {
    long page = sysconf(_SC_PAGESIZE);
    __atomic_store_n(&guard_page, page > 0 ? (uintptr_t)page : 4096,
                     __ATOMIC_SEQ_CST);
  }
  for (unsigned i = 0; i < GUARD_SLOTS; i++) {
    uintptr_t none = 0;
    if (__atomic_compare_exchange_n(&guarded[i].start, &none, start, 0,
                                    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
      __atomic_store_n(&guarded[i].end, start + len, __ATOMIC_SEQ_CST);
      return;
    }
  }
  /* Every slot taken: this window is not guarded. */
}

void tw__bus_guard_remove(void *map, size_t len)
{
  for (unsigned i = 0; i < GUARD_SLOTS; i++)
    if (__atomic_load_n(&guarded[i].start, __ATOMIC_SEQ_CST) ==
        (uintptr_t)map &&
        __atomic_load_n(&guarded[i].end, __ATOMIC_SEQ_CST) ==
        (uintptr_t)map + len) {
      __atomic_store_n(&guarded[i].end, 0, __ATOMIC_SEQ_CST);
      __atomic_store_n(&guarded[i].start, 0, __ATOMIC_SEQ_CST);
      return;
    }
}

int tw__bus_guard_fixes(const siginfo_t *si)
{
  uintptr_t a = (uintptr_t)si->si_addr;
  uintptr_t page = __atomic_load_n(&guard_page, __ATOMIC_SEQ_CST);

  if (si->si_code != BUS_ADRERR || !page)
    return 0;
  for (unsigned i = 0; i < GUARD_SLOTS; i++) {
    uintptr_t start = __atomic_load_n(&guarded[i].start, __ATOMIC_SEQ_CST);
    uintptr_t end = __atomic_load_n(&guarded[i].end, __ATOMIC_SEQ_CST);
    if (start && a >= start && a < end) {
      if (mmap((void *)(a - a % page), (size_t)page, PROT_READ | PROT_WRITE,
               MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED)
        return 0;
      __atomic_add_fetch(&tw__bus_cuts, 1, __ATOMIC_SEQ_CST);
      return 1;
    }
  }
  return 0;
}
