/* shim.h: the orchestrator (shim.c): whether the shim works in this process and for which pid,
 * its time base, and the entry points the wrappers and handlers call to follow a fork and to
 * finish. config.h comes with it (the parts, and tests/counters_unit.c, find ps_cfg here).
 * Nothing here may be called from the signal handler except ps_now_ns(), and, from the fatal
 * path or _exit, shim_finish_signal_safe(). */
#ifndef PERFSCOPE_SHIM_H
#define PERFSCOPE_SHIM_H

#include <stdint.h>
#include <sys/types.h>

#include "config.h"

#define PS_API __attribute__((visibility("default")))

/* CLOCK_MONOTONIC in ns; async-signal-safe (vDSO). */
uint64_t ps_now_ns(void);

/* What the wrappers and handlers ask of the orchestrator (shim.c). */
/* In a fork child (pthread_atfork): new files, new timers, new writer. */
void shim_after_fork_child(void);
/* The one way out: exit, exec ("exec"), return from main; flushes and joins. */
void shim_finish(const char *status);
/* The way out from a signal handler or _exit: once, async-signal-safe (fatal_finish). */
void shim_finish_signal_safe(const char *status);
/* exec failed: the image goes on, so sampling does too. */
void shim_resume_after_failed_exec(void);
/* The unshare and setns wrappers, a call the kernel refused to a process of several threads to
 * be made once more: the shim's own threads stopped and joined (1), or not (0: none, or not now,
 * shim.c); then started again by shim_threads_back. Keep errno. */
int shim_threads_aside(void);
void shim_threads_back(void);
/* The prctl/seccomp wrappers, before the calling thread enters seccomp strict mode (strict)
 * or gets a filter (every_thread: SECCOMP_FILTER_FLAG_TSYNC). Returns what
 * shim_seccomp_refused needs when the call then fails. Keeps errno. */
int shim_before_seccomp(int strict, int every_thread);
void shim_seccomp_refused(int before);

/* CLOCK_MONOTONIC when the shim started in this image. */
extern uint64_t ps_start_ns;

/* Set when the shim is working in this process (sampling or leader duties). */
extern int ps_active;
/* The process the shim's state belongs to: a vfork child (getpid() differs) must leave it alone. */
extern pid_t ps_pid;

#endif
