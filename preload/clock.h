/* clock.h: per-thread sampling clocks (perf_event task-clock or POSIX CPU-time timer). Never
 * called from the signal handler; every descriptor it opens is close-on-exec, kept above the
 * target's numbers and marked as ours (fds.h). */
#ifndef PERFSCOPE_CLOCK_H
#define PERFSCOPE_CLOCK_H

#include "ring.h"
#include "shim.h"

/* CALLCHAIN: no signal at all, the kernel's call chains into a ring per thread
 * (PERFSCOPE_UNWIND=kernel, kchain.h). */
enum ps_perf_delivery { PS_PERF_RING, PS_PERF_REFRESH, PS_PERF_SIGTRAP, PS_PERF_CALLCHAIN };

extern enum ps_clock ps_clock_in_use;
extern enum ps_perf_delivery ps_perf_delivery;
const char *clock_delivery_name(void);
/* The kernel takes the stacks (PERFSCOPE_UNWIND=kernel on the perf clock): no signal of ours. */
int clock_kernel_chains(void);
extern int ps_kernel_hz;
extern int ps_perf_counts_kernel;
extern char ps_kernel_hz_source[64];
extern char ps_clock_reason[160];

/* Once at start: the kernel tick rate and which clock runs. */
void clock_setup(void);
/* Starts sampling thread t (self: t is the calling thread). 0, or -1 when it cannot. */
int clock_arm(struct ps_thread *t, int self);
void clock_disarm(struct ps_thread *t);
/* From the signal handler, at the first overflow of t's perf event (t->perf_first): the
 * event's period from now on is the whole one. Async-signal-safe (one ioctl), errno kept. */
void clock_first_overflow(struct ps_thread *t);
/* In a fork child: forget (and close our copies of) the parent's clocks. */
void clock_forget_inherited(struct ps_thread *t);
/* Moves t's perf descriptor to a new number; returns the old one (now free to close) or -1. */
int clock_relocate_fd(struct ps_thread *t);
/* Moves a descriptor of ours, opened close-on-exec, above the numbers a target normally uses
 * (close-on-exec): the new number; fd itself when it cannot move (no room); -1 (EBADF) when a
 * target's dup2 took the number before the move (ours is gone, nothing of the target's closed). */
int clock_move_fd_high(int fd);
/* The same for one opened without close-on-exec (pipe()): a lost one cannot be told apart. */
int clock_move_fd_high_any(int fd);
/* Whether fd is being moved right now (a target's dup2 onto it waits: fds.c). */
int clock_fd_in_transit(int fd);
/* In a fork child: no move is under way (the moving threads were not copied; a number left
 * marked would hold a dup2 onto it for the whole wait). */
void clock_transit_after_fork_child(void);
/* The number clock_move_fd_high moves descriptors to or above (half the descriptor limit, at
 * most 512). */
int clock_fd_base(void);
/* The CPU-time clock of thread tid of this process (user and system time). */
clockid_t clock_of_thread(pid_t tid);

#endif
