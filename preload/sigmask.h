/* sigmask.h: SIGPROF kept out of the signal masks the target asks for, so threads that block
 * every signal (liblzma's workers, many thread pools) are still sampled, while the target is
 * shown the mask it asked for (sigmask.c; docs/shim.md "Threads that block SIGPROF"). This holds
 * only while the target has no SIGPROF disposition of its own: then the masks go to the kernel
 * as asked, and what such threads spend is counted as unsampled (unsampled.h). Never changes
 * which of the target's signals are delivered when, nor the mask a new image inherits. */
#ifndef PERFSCOPE_SIGMASK_H
#define PERFSCOPE_SIGMASK_H

#include <spawn.h>
#include <pthread.h>
#include <signal.h>

/* This thread's kernel mask lacks SIGPROF only because the shim took it out: the target asked
 * for it blocked. Initial-exec TLS, read by the signal handler. */
extern __thread int ps_prof_hidden;

/* The C library's pthread_sigmask, past the wrapper: for the shim's own mask changes. */
int ps_real_pthread_sigmask(int how, const sigset_t *set, sigset_t *old);
/* Every signal blocked on the calling thread, the mask before in *old; sigmask_restore puts it
 * back. Around the shim's work on a target's thread that a target's handler must not interrupt
 * (a drain, a read through a kept descriptor, a lock a handler's call would wait for). */
void sigmask_block_all(sigset_t *old);
void sigmask_restore(const sigset_t *old);

/* Around pthread_create, on the creating thread: what the new thread inherits (1: SIGPROF
 * hidden; attr may be NULL), with SIGPROF held blocked for the call where it is hidden (held). */
int sigmask_before_create(const pthread_attr_t *attr, int *held);
void sigmask_after_create(int held);
/* First thing on the new thread: what it inherited from its creator. */
void sigmask_inherit(int hidden);
/* On a thread the sampler takes on (new thread, start, fork child): SIGPROF unblocked if the
 * target has no SIGPROF disposition of its own, remembered as blocked for the target. */
void sigmask_thread_start(void);
/* In the thread's exit hook: SIGPROF blocked for the rest of its life, whatever it asks. */
void sigmask_thread_end(void);
/* Around exec: the new image inherits the mask the target asked for (SIGPROF blocked again
 * where it was hidden); a failed exec takes it back out. */
void sigmask_before_exec(void);
void sigmask_after_failed_exec(void);
/* Around a child started without exec in this process (posix_spawn, system, popen): SIGPROF
 * held blocked for the call where it is hidden, so the child inherits the asked mask (unless
 * attr sets one). Returns what to hand to the release. */
int sigmask_hold_for_child(const posix_spawnattr_t *attr);
void sigmask_release_after_child(int held);

/* The C library's mask functions behind the wrappers, looked up now (interpose.c, before a
 * clone() whose child must not take the loader's lock). */
void sigmask_resolve_wrappers(void);

#endif
