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

/* Once at start, with the page size: sizes the buffers for the asked rate and frames. A
 * thread's buffer has a power of two of data pages (and a header page), 16 (64 KiB: 120 ms at
 * 997 Hz of records of the default 64 frames, 536 bytes) up to 256 (1 MiB), as many as 120 ms
 * of the largest records at the asked rate take. */
void kchain_setup(long page);
/* The data bytes of one buffer (a power of two), and the mapping's length. */
size_t kchain_data_bytes(void);
size_t kchain_map_len(void);
/* The next smaller mapping's length after `len` (half the data pages), or 0 below 16 pages: a
 * thread refused the locked memory for a whole buffer tries a smaller one before the timer. */
size_t kchain_map_len_smaller(size_t len);
/* A buffer of len bytes is mapped: the writer's passes come often enough for the smallest. */
void kchain_mapped(size_t len);
/* The deepest chain asked of the kernel (sample_max_stack): max_frames, at most 127, the
 * kernel's default limit; 0 (the kernel's own limit) once a lower one refused that. */
extern unsigned kchain_max_stack;
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
/* The way out's last drain is done (called under the io lock at its end): from now on nothing
 * is moved or counted, so the exit line and meta.json count what the file holds. Resumed when a
 * failed exec lets the image go on. */
void kchain_stop(void);
void kchain_resume(void);
/* How long the writer may sleep between passes so that no buffer fills past half at the asked
 * rate (ms). */
long kchain_pass_ms(void);

#endif
