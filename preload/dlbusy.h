/* dlbusy.h: keeps the SIGPROF handler's libunwind from waiting on the dynamic loader's lock.
 *
 * libunwind looks up the unwind tables of a return address it has not cached yet through
 * dl_iterate_phdr, which takes the loader's write lock. glibc's dlclose holds that lock while
 * it unmaps and frees the library (free takes a malloc arena's lock), and a target's own
 * dl_iterate_phdr callback runs under it and may do anything. So a handler that interrupted a
 * thread inside malloc, then waits in libunwind for a lock whose holder waits for that thread,
 * stops both for good: a deadlock the target never had.
 *
 * The rule: a handler walks with libunwind only while no thread is inside dlclose or a
 * program's dl_iterate_phdr ("busy"), and holds those off for its whole walk ("walking"): a
 * thread becoming busy first sleeps until the walks under way are done, which never wait for it
 * (it holds nothing yet), so one of the two always sees the other. Otherwise the handler walks
 * frame pointers. A walk is never cut short half-way but once a wait ran out (below):
 * libunwind keeps what it found about an address for the thread's life, so a refused lookup
 * would leave every later stack through that address short. Never busy, so never waiting:
 * libunwind's own dl_iterate_phdr (the target's use of libunwind holds libunwind's cache lock
 * across it, which a walk needs) and the shim's (trivial callbacks that wait for nothing). A
 * busy thread waits 100 ms at most for walks: past that libunwind is off in the handler for
 * good (dlbusy_given_up), and a walk still under way then (slow, not abandoned: its thread
 * preempted, throttled, stopped) has its next lookup refused, while every busy thread from then
 * on first waits for those already inside the C library (they wait for the loader's lock at
 * most): a walk cut short costs nothing more once libunwind is off. A nested busy call (a
 * callback's dlclose) waits for nothing: the outer one did, and it may hold the lock. The
 * handler side never waits and is async-signal-safe.
 *
 * The loader's write lock itself: the handler also walks frame pointers while that lock is
 * taken by anyone. A recursive mutex sets its owner after its lock word when taken and clears it
 * before when let go; a handler that lands in between, in the very thread taking or letting go
 * of it (dlopen adds its first object to the list under it, with r_debug still saying
 * "consistent"), and walks into dl_iterate_phdr waits for itself for good (t_exceptions' dlopen
 * loop hung 2 runs in about 1,700 here, the CI once). Reading the lock word covers any holder
 * the wrappers never see: the loader's own dlopen and dlclose from inside the C library, a
 * failed dlopen's clean-up. Not covered: a holder no wrapper sees (a dlclose, a dl_iterate_phdr
 * from inside the C library or through a pointer from dlsym(RTLD_NEXT)) that takes the lock
 * after a walk has begun and then waits for the interrupted thread, and namespaces other than
 * the base one. */
#ifndef PERFSCOPE_DLBUSY_H
#define PERFSCOPE_DLBUSY_H

#include <link.h>
#include <stddef.h>

/* At start, before any sampling: finds the loader's write lock (glibc's, a recursive mutex at a
 * private place in ld.so's _rtld_global) by calling iterate (the C library's dl_iterate_phdr) and
 * looking for the one such mutex this thread owns inside the callback and not outside it. 0 when
 * found; else -1 with why (the handler then never walks with libunwind: dlbusy_handler_enter
 * says 0 every time). */
int dlbusy_find_loader_lock(int (*iterate)(int (*cb)(struct dl_phdr_info *, size_t, void *), void *),
                            char *why, size_t why_size);

/* Around dlclose and a program's dl_iterate_phdr. */
void dlbusy_enter(void);
void dlbusy_leave(void);

/* The handler, before a libunwind walk: 1 when it may walk (then dlbusy_handler_leave after
 * the walk), 0 when a thread is busy, the loader is changing its list, the loader's write lock
 * is taken (by anyone: the interrupted thread itself may be half-way through taking or letting
 * go of it), the lock was not found at start, or a wait ran out (walk frame pointers). */
int dlbusy_handler_enter(void);
void dlbusy_handler_leave(void);

/* Whether a busy thread's wait ran out (libunwind off in the handler from then on). */
int dlbusy_given_up(void);
/* A thread of the target's ending (threads.c, its key's destructor): the walk and the lookups it
 * left counted (a thread unwound out of the handler: one in asynchronous cancellation) are
 * uncounted, or every later dlclose would wait for them. Returns how many there were. */
int dlbusy_thread_exit(void);

/* Around the C library's dl_iterate_phdr when the shim's libunwind calls it (a lookup of an
 * address it has not cached). In a handler's walk: -1 once a wait has run out (dlbusy_given_up;
 * then do not call it: a walk that was slow rather than abandoned must not wait on a lock a busy
 * thread may now hold), else 1 and dlbusy_lookup_leave after the call; a busy thread that comes
 * after a wait ran out waits for the lookups under way before it goes on. Outside a handler's
 * walk (the warm-up): 0, call it, nothing to leave. Async-signal-safe. */
int dlbusy_lookup_enter(void);
void dlbusy_lookup_leave(void);

/* The calling thread enters seccomp strict mode: it never waits (futex would kill it). */
void dlbusy_thread_strict(void);

/* Around fork (pthread_atfork: prepare, then done in the parent and, after
 * dlbusy_after_fork_child, in the child): the forking thread is busy, so no walk is under way
 * when the child is made and none starts until the fork is done. A walk holds libunwind's own
 * locks (its cache's, its memory pool's) in another thread's handler; the child's copy of such a
 * lock stayed locked for good, and the child's first libunwind walk waited on it forever. Not
 * covered: a fork from a program's handler nested in our walk, or inside a dl_iterate_phdr
 * callback, which waits for no walk (it may hold what those walks need). */
void dlbusy_fork_prepare(void);
void dlbusy_fork_done(void);

/* In a fork child, which has only the forking thread: the counts are its own (its busy share,
 * and its walk when a program's handler nested in ours forked). (A child made by
 * _Fork or a raw clone runs no fork handler: a walk under way in the parent then costs it one
 * wait run out, and frame-pointer stacks.) */
void dlbusy_after_fork_child(void);

#endif
