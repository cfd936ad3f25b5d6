/* credsync.h: the shim's threads keep the credentials of the target's (credsync.c). After a call
 * that changes the calling thread's credentials only (capset, prctl PR_SET_KEEPCAPS and
 * PR_SET_SECUREBITS) succeeded, each of the shim's threads takes that thread's resulting state.
 * The caller's side is async-signal-safe and waits a bounded time; it never allocates or locks. */
#ifndef PERFSCOPE_CREDSYNC_H
#define PERFSCOPE_CREDSYNC_H

/* Whether the system call nr with these arguments changes the calling thread's credentials in a
 * way the C library's setuid family then depends on (capset with pid 0 or the caller's own
 * thread, prctl PR_SET_KEEPCAPS / PR_SET_SECUREBITS). */
int credsync_wanted(long nr, const long a[6]);
/* On the target's thread, after such a call succeeded: each shim thread takes this thread's
 * state, and this waits for them (at most CREDSYNC_WAIT_MS) and for those ending to be gone.
 * Keeps errno. */
void credsync_after(void);

/* The shim's threads serve requests. Their creator takes a slot before creating one
 * (credsync_thread_start; the C library's setuid family reaches a thread from its creation) and
 * says whether the creation worked (credsync_thread_created); the thread serves at each wakeup
 * and as it ends. slot is the thread's own (-1: none). */
void credsync_thread_start(int *slot);
void credsync_thread_created(int *slot, int ok);
void credsync_serve(int *slot);
void credsync_thread_end(int *slot);
/* In a fork child: the parent's threads and request are not here. */
void credsync_after_fork(void);

#endif
