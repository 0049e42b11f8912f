/* busguard.h -- the mmap sink's guard against a file cut under it
 *
 * A file truncated under the writer (logrotate's copytruncate) leaves
 * the pages of an mmap sink's windows past the new end: a store there
 * raises SIGBUS.  A trace library must not kill its host for that, so
 * the sink registers its windows here, and the crash hook's handler
 * (crash.c), installed for SIGBUS by tw__bus_guard_install, asks
 * tw__bus_guard_fixes first: a fault in a registered window gets an
 * anonymous page mapped in its place, the store goes there (that record
 * is lost: the file was cut) and the thread goes on.  tw__bus_cuts counts
 * such faults; a thread that sees it change takes a new region, and the
 * reservation (which checks the file's size) begins a new document.  A
 * window stays registered while a thread's region leases it, so a fault
 * inside one is never in memory unmapped meanwhile.
 */
#ifndef TW_BUSGUARD_H
#define TW_BUSGUARD_H

#include <signal.h>
#include <stddef.h>

/* Install the handler for SIGBUS (crash.c: the crash hook's handler,
 * which asks tw__bus_guard_fixes first).  Returns 0 or -errno. */
int tw__bus_guard_install(void);

/* Guard the mapping [map, map + len), or stop guarding it.  Thread-safe
 * (a lock-free table); a window that finds the table full goes
 * unguarded. */
void tw__bus_guard_add(void *map, size_t len);
void tw__bus_guard_remove(void *map, size_t len);

/* From the SIGBUS handler: if si is a fault in a guarded window, map an
 * anonymous page over the faulting page and return 1 (the store then
 * goes there); else 0.  Async-signal-safe: atomics and one mmap(2). */
int tw__bus_guard_fixes(const siginfo_t *si);

/* Faults fixed so far (atomic). */
extern unsigned tw__bus_cuts;

#endif /* TW_BUSGUARD_H */
