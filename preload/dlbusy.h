/* dlbusy.h: keeps the SIGPROF handler's libunwind from waiting on the dynamic loader's lock.
 *
 * libunwind looks up the unwind tables of a return address it has not cached yet through
 * dl_iterate_phdr, which takes the loader's write lock. glibc's dlclose holds that lock while
 * it unmaps and frees the library (free takes a malloc arena's lock), and a target's own
 * dl_iterate_phdr callback runs under it and may do anything. So a handler that interrupted a
 * thread inside malloc, then waits in libunwind for a lock whose holder waits for that thread,
 * stops both for good: a deadlock the target never had.
 *
 * The rule: while any thread is inside dlclose or a dl_iterate_phdr that did not come from a
 * handler ("busy"), a handler walks frame pointers instead of libunwind, and libunwind's own
 * dl_iterate_phdr from a handler finds no object (that frame ends its stack) rather than wait.
 * A thread becoming busy first waits for the handlers already inside the real dl_iterate_phdr,
 * which never wait for it (it holds nothing yet), so one of the two always sees the other.
 * Everything here is async-signal-safe; the handler side never waits at all. Not covered:
 * the C library's own internal dlclose (an iconv module's), which no wrapper sees. */
#ifndef PERFSCOPE_DLBUSY_H
#define PERFSCOPE_DLBUSY_H

/* Around dlclose and every dl_iterate_phdr not made from a handler. */
void dlbusy_enter(void);
void dlbusy_leave(void);

/* The handler: whether any thread is busy (then no libunwind). */
int dlbusy_now(void);

/* libunwind's dl_iterate_phdr from a handler: 1 when it may go on to the real one (then
 * dlbusy_handler_leave after it), 0 when a thread is busy (find nothing). */
int dlbusy_handler_enter(void);
void dlbusy_handler_leave(void);

/* A fork child has only the forking thread: the counts are its own. */
void dlbusy_after_fork_child(void);

#endif
