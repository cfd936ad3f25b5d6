/* sampler.h: the SIGPROF handler, its unwinders and the guard that keeps libunwind out of
 * threads interrupted inside the dynamic loader or the shim. The handler must never allocate,
 * lock, use stdio or change errno, and a full ring drops the sample, never waits. */
#ifndef PERFSCOPE_SAMPLER_H
#define PERFSCOPE_SAMPLER_H

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>

/* Depth of loader/shim calls the current thread is inside; >0: no libunwind in the handler. */
extern __thread int ps_guard_depth;
static inline void ps_guard_enter(void) { ps_guard_depth++; __atomic_signal_fence(__ATOMIC_SEQ_CST); }
static inline void ps_guard_leave(void) { __atomic_signal_fence(__ATOMIC_SEQ_CST); ps_guard_depth--; }

/* Set while this thread is inside libunwind: the descriptors libunwind makes for itself (its
 * memory-validation pipe) become ours, and it may close them (fds.c). */
extern __thread int ps_in_unwind;

/* Samples kept, signals that gave one, and those taken by fp/PC in a guard are counted per
 * thread (ring.h: struct ps_thread, threads_sample_totals). */
extern _Atomic uint64_t ps_samples_orphan;       /* signals for a thread with no ring */
extern _Atomic uint64_t ps_signals_chained;      /* SIGPROFs passed to the target's handler */
extern int ps_timer_cookie;                      /* sival_ptr of our timers */

/* Installs the handler (once). 0 or -1 (errno). */
int sampler_install(void);
/* Loads and initialises libunwind outside any handler, on a thread of its own started once
 * (the writer calls it once a first sample has come); the handler walks frame pointers until
 * then. */
void sampler_warm_libunwind_soon(void);
/* The same at once, on the calling thread (before a seccomp filter, which may forbid the opens
 * later); a warm-up under way elsewhere is waited for, but not past 50 ms from its start. */
void sampler_warm_libunwind_now(void);
/* pthread_atfork's three handlers for the warm-up: no fork in the middle of one. */
void sampler_fork_prepare(void);
void sampler_fork_parent(void);
void sampler_fork_child(void);
/* The target's SIGPROF disposition, as the target believes it is (for the sigaction wrapper). */
void sampler_get_target_action(struct sigaction *old);
void sampler_set_target_action(const struct sigaction *act);
int sampler_installed(void);
/* The way out, before the last flush (async-signal-safe, bounded): from now on a signal takes
 * no sample and counts nothing, and the handlers under way are waited for. */
void sampler_close(void);
/* The image goes on after all (a failed exec) or anew (a fork child): sampling again. */
void sampler_reopen(void);
int sampler_target_prof_default(void);
/* A target that ignores SIGPROF: exec keeps an ignored signal ignored but resets a handler to
 * SIG_DFL, so with the shim's handler in the kernel a new image (or a child that runs without
 * the shim: a static or set-user-ID program) would die of a SIGPROF it ignores without the
 * shim. Around an exec or a spawn the kernel holds the target's SIG_IGN (samples that come
 * meanwhile are dropped): 1 when it was switched, for sampler_handler_back after the call. */
/* libunwind may not run again in this process (its pipe's number taken by the target: it would
 * read, write and close the target's file there): the handler walks frame pointers from now on,
 * once the walks under way have ended; logged with why. */
void sampler_libunwind_off(const char *why);
int sampler_ignore_for_child(void);
void sampler_handler_back(int switched);
/* The unwinder in force: "libunwind", "fp" (PERFSCOPE_UNWIND=fp), or "pc" (under valgrind:
 * the interrupted instruction alone). */
const char *sampler_unwind_name(void);

#endif
