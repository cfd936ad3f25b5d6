/* leader.h: one process of a run leads: it watches the markers and reads the whole-device
 * counters. The others try to take over when it exits. Must never block the target: the work
 * runs on the watcher thread (or a follower's writer thread), never on the target's threads. */
#ifndef PERFSCOPE_LEADER_H
#define PERFSCOPE_LEADER_H

#include <stddef.h>
#include <stdint.h>

/* At start: 1 when this process became the leader. first_of_run: it also starts the run. */
int leader_start(void);
/* From the writer thread of a follower: becomes the leader if the old one is gone. */
void leader_try_takeover(void);
/* Stops the watcher thread (exit/exec, pause 0: with its last reads; the lock is released with
 * the process; pause 1: to be started again, no last reads). 1 when it was joined (0: none,
 * this is the watcher itself, or it did not end within 2 s: then it is left running, asked to
 * stop). */
int leader_stop(int pause);
/* Wakes the watcher, running or about to, without asking for a pass (credsync.c);
 * async-signal-safe. */
void leader_poke(void);
/* A pass of the watcher now (lifetime.c); async-signal-safe. */
void leader_wake(void);
/* After a failed exec: the watcher starts again if we lead. */
void leader_resume(void);
/* In a fork child: the parent leads, not us. */
void leader_forget_after_fork(void);
/* This process started the run (or is its exec'd image): it writes meta.json's status at exit.
 * Async-signal-safe. */
int leader_owns_meta(void);
/* The watcher's passes so far (its wakeups: meta.json's shim cost). */
uint64_t leader_pass_count(void);
/* How often the watcher wakes while nothing happens (its counter period, else its timeout), while
 * it runs; 0 when there is no watcher. The writer's passes ride on those wakeups when they are
 * due no more often (writer.c). */
long leader_host_period_ms(void);
/* Whether this process is the run's leader now. */
int leader_is_us(void);
/* The run's start on CLOCK_MONOTONIC (its first process's start, handed down in .leader), for
 * the leader that checks the markers' t=; this process's start when unknown. */
uint64_t leader_run_start_ns(void);
/* Before the run is joined (runid.c): whether the folder has a .leader (1) or not (0), the run
 * id it names ("" when none) and whether a process holds the leader's lock now. Reads the file
 * by path; never takes the lock for longer than the look. */
int leader_folder_state(char *run_id, size_t size, int *lock_held);
/* The target wants descriptor number fd (dup2/dup3 onto it): if it is one the leader holds,
 * ours moves to another number first (fds.c's make_room). */
void leader_relocate_fd(int fd);

#endif
