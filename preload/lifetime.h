/* lifetime.h: the shim's threads never keep a process alive (docs/shim.md). When the main thread
 * has ended (pthread_exit, or a raw exit: seccomp strict mode) and the last of the target's
 * threads is gone, the shim finishes the run and its threads end, so the process ends as it
 * would without them: glibc's exit(0) when the main thread left through pthread_exit, the main
 * thread's own status after a raw exit (the shim's threads end by the same raw exit). Never
 * called from a signal handler. */
#ifndef PERFSCOPE_LIFETIME_H
#define PERFSCOPE_LIFETIME_H

/* The pthread_exit wrapper, on the main thread: it is leaving, the target may end soon. */
void lifetime_main_exiting(void);
/* A thread of the target is ending (its thread-specific-data destructor). */
void lifetime_thread_ending(void);
/* The main thread may end without any wrapper seeing it (it entered seccomp strict mode). */
void lifetime_watch_closely(void);
/* A thread of the shim's starts (+1) or ends (-1), as the last thing it does: after a raw exit
 * of the main thread has finished the run, -1 does not return (the thread ends by the same raw
 * exit, with the main thread's code). */
void lifetime_shim_thread(int delta);
/* A shim thread's period: `normal`, or 10 ms while the target may be ending. */
long lifetime_period_ms(long normal);
/* On a shim thread, each pass: 1 when the target's threads are all gone; the run has then
 * been finished (shim_finish with the main thread's status) and the calling thread must end. */
int lifetime_check(void);
/* In a fork child: the parent's main thread is not this one. */
void lifetime_after_fork(void);

#endif
