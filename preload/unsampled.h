/* unsampled.h: the CPU time of threads that ran with SIGPROF blocked, which the sampler could
 * not see (the target's own SIGPROF handler, a raw rt_sigprocmask, setcontext, threads that
 * were running before the shim): measured per thread from its CPU clock, written as stretches
 * to unsampled.jsonl (docs/formats.md) and summed into meta.json, never silently lost. Never
 * from the signal handler; the checks run on the writer thread and on the way out. */
#ifndef PERFSCOPE_UNSAMPLED_H
#define PERFSCOPE_UNSAMPLED_H

#include "ring.h"

/* A thread the sampler takes on (self: the calling thread): its CPU time so far is not ours to
 * count. */
void unsampled_thread_start(struct ps_thread *t, int self);
/* On the exiting thread, before SIGPROF is blocked for its exit: its CPU time and mask. */
void unsampled_thread_end(struct ps_thread *t);
/* Whether the slot of thread t, which exited, may be handed back: its last check is done (or
 * no check runs). Until then the drain keeps it, with the stretch it holds, for the next pass or
 * the way out; a thread that exits between this pass's check and its drain is not lost. */
int unsampled_thread_retired(const struct ps_thread *t);
/* From the writer thread, each pass, before the rings are drained (threads that exited are
 * handed back there). */
void unsampled_pass(void);
/* On the way out (exit, exec), once the writer is stopped and before the last drain: the last
 * checks, every stretch written, one log line with the total. */
void unsampled_finish(void);
/* This process's unsampled CPU seconds and the threads they belong to (meta.json). */
void unsampled_totals(double *cpu_s, int *threads);

#endif
