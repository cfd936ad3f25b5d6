/* kchain.h: stacks the kernel takes (PERFSCOPE_UNWIND=kernel). Each sampled thread's perf
 * task-clock writes, at every overflow, the thread's user call chain (the kernel's frame-pointer
 * walk, as `perf record -g` takes it) and its time into a ring buffer of the thread's own, and
 * sends no signal: the thread is stopped for the timer interrupt alone. The writer moves the
 * records into the thread's sample ring under its io lock (no handler runs for such a thread, so
 * the writer is that ring's only producer), and unmaps a buffer once its event is closed and it
 * is empty. Never from a signal handler; nothing here blocks or allocates. */
#ifndef PERFSCOPE_KCHAIN_H
#define PERFSCOPE_KCHAIN_H

#include <stddef.h>

#include "ring.h"

/* Data pages of one thread's buffer (a power of two; one more page is the header). At the
 * default 64 frames a record is at most 536 bytes: 64 KiB hold 120 ms at 997 Hz. */
#define KCHAIN_DATA_PAGES 16

/* The mapping's length for page size `page`. */
size_t kchain_map_len(long page);
/* Moves t's records into its sample ring until that is full or none is left, counting them as
 * the handler counts its samples (lost records as drops): 1 when records are left for later,
 * else 0. The io lock held. */
int kchain_pump(struct ps_thread *t);
/* Whether t's buffer holds records not yet moved. */
int kchain_pending(const struct ps_thread *t);
/* Unmaps t's buffer once its event is closed (perf_fd -1) and nothing is left in it (the io
 * lock held); the slot may then be handed back. */
void kchain_retire_if_done(struct ps_thread *t);
/* The same for every thread of the registry (the io lock held). */
void kchain_retire_done(void);
/* How long the writer may sleep between passes so that no buffer fills past half at the asked
 * rate (ms). */
long kchain_pass_ms(void);

#endif
