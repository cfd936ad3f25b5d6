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
void credsync_after(long nr, const long a[6]);

/* The shim's threads serve requests: counted by their creator before the thread is created (the
 * C library's setuid family reaches a thread from its creation: it must follow every call from
 * then on; credsync_thread_cancel when the creation failed), then, on the thread, at each wakeup
 * and as it ends. seen is the thread's own. */
void credsync_thread_start(unsigned *seen);
void credsync_thread_cancel(void);
void credsync_serve(unsigned *seen);
void credsync_thread_end(unsigned *seen);
/* In a fork child: the parent's threads and request are not here. */
void credsync_after_fork(void);

#endif
