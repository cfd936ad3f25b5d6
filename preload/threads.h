/* threads.h: which of the target's threads are sampled: registered when they start, handed back
 * when they exit, adopted when they existed before the shim. Never from the signal handler (it
 * allocates rings); never changes a thread's behaviour beyond its SIGPROF clock. */
#ifndef PERFSCOPE_THREADS_H
#define PERFSCOPE_THREADS_H

#include <pthread.h>

/* Once at start: the thread-specific-data key whose destructor hands an exiting thread back. */
void threads_setup(void);
/* On the new thread (the pthread_create trampoline, start, a fork child): ring, bounds, clock. */
void threads_started(void);
/* pthread_setname_np on the calling thread: its comm without a /proc read. */
void threads_named(pthread_t thread, const char *name);
/* How many threads the process has now, from /proc/self/task's link count (one stat); -1 when
 * it cannot be told. */
long threads_in_process(void);
/* At start: threads already running (a library constructor started them). */
void threads_adopt_existing(void);
/* From the writer thread: adopted threads that are gone get their clocks closed and their rings
 * handed to the writer (they have no exit hook of ours). */
void threads_reap_foreign(void);
/* In a fork child: forget the parent's threads (our copies of their clocks and rings). */
void threads_forget_after_fork(void);

#endif
