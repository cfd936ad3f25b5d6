/* fdgate.h: the shim's own descriptor allocations kept out of the way of the target's calls that
 * name descriptor numbers.
 *
 * An open, eventfd, inotify or perf event, and the loader's open of a library, takes the lowest
 * free number. A single-threaded program (every shell, on every redirection) frees a number and
 * fills it again with the number in mind: `close(1); dup2(3, 1)`, `close(0); open("/dev/null")`.
 * Without the shim no other thread can take the number between the two; with it, the shim's
 * threads could: the dup2 then failed with EBUSY (the number reserved by an open under way), or
 * the open's file sat on the number, or the shim's move took the target's file away, and the
 * shell's `echo x >> f` lost its line ("I/O error", 456 in a loop of 20,000 with markers
 * appended beside it).
 *
 * So the target's close, close_range, dup2 and dup3 (fds.c) are announced around the call, and
 * the numbers a close frees are remembered with the time. An allocation of the shim's waits,
 * before it announces itself, while a number the target freed less than FDGATE_HOLE_NS ago is
 * still free (it may be about to be filled); then it announces itself and goes ahead only when
 * no target call is announced and no such number appeared meanwhile, else it withdraws and
 * tries again. A target call waits while an allocation is announced. Both sides announce, then
 * look, sequentially consistent: one of them always sees the other. Neither waits past
 * FDGATE_HOLD_NS from its start; a number the target fills later than FDGATE_HOLE_NS after
 * freeing it is left to chance, as is a number freed by a call the shim does not see (the C
 * library's own fclose or freopen, a raw system call).
 *
 * A thread holds off its own cancellation while it holds an announcement, and a thread cancelled
 * inside the target's close (a cancellation point) has its call uncounted as it ends
 * (fdgate_thread_exit; not by a cleanup handler in close, which a handler's longjmp out of the
 * close would leave dangling). The gate's own waits are no cancellation point. An announcement
 * that never ends all the same (that longjmp, a fork inside a handler, a thread the shim does
 * not follow) stops being waited for after a second or one long wait (FDGATE_STUCK_NS,
 * FDGATE_SUSPECT_YIELDS in fdgate.c). A thread never waits for its own announcements (a handler
 * interrupting it cannot wait for what it interrupted).
 *
 * Never from a signal handler on the allocation side; the target's side is async-signal-safe
 * (its calls are) and errno is left alone on both. */
#ifndef PERFSCOPE_FDGATE_H
#define PERFSCOPE_FDGATE_H

/* Around an allocation of the shim's, from before the number is taken until the shim lets go of
 * it (shimopen.h; shimload.c for the loader's). Each begin is one unit, ended by one end. */
void fdgate_alloc_begin(void);
void fdgate_alloc_end(void);

/* Around a target's call that names or frees a number (fds.c). fdgate_freed records numbers
 * first..last freed by it (a close or close_range that succeeded), before the end. */
void fdgate_target_begin(void);
void fdgate_freed(unsigned first, unsigned last);
/* At an image's start, before the shim's threads: 0, 1 or 2 not open then (the program was
 * started with them closed) count as freed by the target now, since a program so started fills
 * them first thing (a daemon's /dev/null): the shim's threads' first files took them for a
 * moment, and the program's first opens got 1, 2, 3 or 0, 2, 1 (a transparency review: 13-20
 * of 100 runs). */
void fdgate_closed_at_start(void);
void fdgate_target_end(void);
/* Whether the calling thread is between fdgate_target_begin and fdgate_target_end. */
int fdgate_in_target_call(void);

/* A thread of the target's ending (threads.c, its key's destructor): what it left counted (a
 * thread cancelled inside a close, a cancellation point) is uncounted. */
void fdgate_thread_exit(void);

/* What went wrong so far (FDGATE_TROUBLE_* bits), for perfscope.log: an allocation's count that
 * stayed up past FDGATE_STUCK_NS (the target's calls stopped waiting for it), a target's call
 * an allocation waited for to the end of its bound. */
#define FDGATE_TROUBLE_ALLOCS 1
#define FDGATE_TROUBLE_CALLS 2
int fdgate_trouble(void);

/* The process is on its way out (exit, exec, a fatal signal): the numbers it freed will not be
 * filled by the thread now waiting for the shim's last writes; no allocation waits for them. */
void fdgate_forget_freed(void);

/* In a fork child (its only thread): allocations and calls under way in other threads of the
 * parent are not the child's; the freed numbers are (the table is a copy). */
void fdgate_after_fork_child(void);

#endif
