/* ring.h: the per-thread sample rings and the registry of sampled threads.
 *
 * Each sampled thread owns one single-producer single-consumer ring: its SIGPROF handler is the
 * only producer, the writer thread the only consumer. The registry is a fixed array that the
 * handler can search without locks or allocation. Nothing here may block or allocate on the
 * handler's side. */
#ifndef PERFSCOPE_RING_H
#define PERFSCOPE_RING_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#define PS_MAX_THREADS 4096
#define PS_RING_SLOTS 256
/* Extra frame room in each ring slot: the fast unwinder also records the handler's own frames
 * before they are dropped. */
#define PS_HANDLER_FRAMES 16

/* One sample as the handler leaves it; the writer turns it into the file's record. */
struct ps_slot_rec {
    uint64_t time_ns;
    uint32_t tid;
    uint32_t nframes;
    uint32_t weight;     /* 1 + timer overruns: the record is written this many times */
    uint32_t flags;      /* PS_REC_* */
    uint64_t frames[];   /* max_frames */
};
#define PS_REC_NO_LIBUNWIND 1u /* taken by frame pointers / PC alone (loader or shim) */

/* The producer's fields and the consumer's sit on cache lines of their own, and the producer
 * keeps the tail as it last read it: a sample writes its slot and head, and reads the consumer's
 * line only when the ring looks full by that older tail. */
struct ps_ring {
    _Atomic uint64_t head;      /* next slot the producer fills */
    uint64_t tail_seen;         /* the producer's last reading of tail (never ahead of it) */
    _Atomic uint64_t dropped;   /* samples lost to a full ring (weighted) */
    uint32_t slots;
    uint32_t rec_size;
    _Alignas(64) _Atomic uint64_t tail; /* next slot the consumer reads */
    _Alignas(64) unsigned char data[];
};

enum ps_thread_state { PS_T_FREE = 0, PS_T_CLAIMED, PS_T_LIVE, PS_T_EXITED };

/* The unsampled check of one thread (unsampled.c): its CPU time and our signals at the last
 * check, the stretch of unsampled CPU not yet written, and what its exit hook saw. Written by
 * the writer thread (and the exit path once the writer is stopped); end_* by the thread itself
 * before its state becomes PS_T_EXITED. */
struct ps_unsampled {
    uint64_t cpu_ns, arrived, check_ns;
    uint64_t span_t0, span_t1, span_cpu;
    uint64_t end_ns, end_cpu_ns;
    int end_blocked, end_known, final_done, counted;
    /* Set first thing in its exit hook, before the hook blocks SIGPROF: a mask read from /proc
     * from then on is the hook's, not the thread's (unsampled.c). */
    _Atomic int ending;
};

struct ps_thread {
    _Atomic int state;
    _Atomic pid_t tid;
    struct ps_ring *ring;
    int perf_fd;            /* -1 when the tick timer (or nothing) samples this thread */
    void *perf_rb;          /* its ring buffer mapping: overwritten (signal delivery) or, with
                             * kchain, the kernel's call chains */
    size_t perf_rb_len;
    /* perf_rb holds the kernel's call-chain records (PERFSCOPE_UNWIND=kernel): the writer
     * drains it under its io lock and, once the event is closed (perf_fd -1) and the buffer
     * empty, unmaps it and clears this (kchain.h). */
    int kchain;
    uint64_t chain_tail;    /* how far the writer has read it (the header page's is writable) */
    /* Sampled by the kernel's call chains since it started (kept after its buffer goes): its
     * mask cannot hide it from sampling (unsampled.c). */
    int chain_sampled;
    /* Its perf event still runs its first, random period (clock.c): the handler sets the
     * whole period at the first overflow (clock_first_overflow). */
    int perf_first;
    int has_timer;
    timer_t timer;
    uintptr_t stack_lo, stack_hi; /* for frame-pointer walks; 0,0 when unknown */
    int foreign;            /* found in /proc/self/task, not started through our wrapper */
    int unw_ok;             /* registered on itself (not found in /proc): the handler may use libunwind */
    char comm[16];
    uint64_t comm_checked_ns;
    _Atomic uint64_t arrived; /* our signals that reached the thread (weighted), kept or dropped */
    /* Written by this thread's handler alone (no locked instruction, no line shared between
     * threads); kept across a slot's reuse, so sums over the registry count exited threads. */
    _Atomic uint64_t taken;        /* samples kept (weighted) */
    _Atomic uint64_t signals;      /* signals that gave a sample */
    _Atomic uint64_t no_libunwind; /* samples taken by frame pointers or PC instead (weighted) */
    /* When this thread's handler began (0: none running): sampler_close waits for it. A stamp,
     * not a count: one left by a target's handler that longjmp'd out of ours ages out. */
    _Atomic uint64_t in_handler;
    struct ps_unsampled us;
};

extern struct ps_thread ps_threads[PS_MAX_THREADS];
extern _Atomic int ps_threads_used; /* high-water mark of the array */

struct ps_ring *ring_new(uint32_t slots, uint32_t max_frames);
/* Into the cache below for a later ring_new (a fork child's forking thread takes its own back
 * at once), or unmapped when the cache is full. */
void ring_free(struct ps_ring *r);
/* Keeps r for a later ring_new without unmapping it: 1, or 0 when the cache is full (r untouched). */
int ring_cache_put(struct ps_ring *r);
/* Producer side (handler): a slot to fill, or NULL when full; then ring_commit. */
struct ps_slot_rec *ring_reserve(struct ps_ring *r);
void ring_commit(struct ps_ring *r);
/* Consumer side: the oldest filled slot or NULL; then ring_release. */
struct ps_slot_rec *ring_peek(struct ps_ring *r);
void ring_release(struct ps_ring *r);

/* Registry: claim a slot for tid (never from the handler). */
struct ps_thread *thread_claim(pid_t tid);
/* The calling thread's entry (async-signal-safe: TLS, else a lock-free scan). */
struct ps_thread *thread_self(void);
void thread_set_self(struct ps_thread *t);
pid_t ps_gettid(void);
/* Adds w to a counter only the calling thread's handler writes (plain load and store). */
static inline void thread_count(_Atomic uint64_t *c, uint64_t w)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + w, memory_order_relaxed);
}
/* The per-thread counters summed over the registry (async-signal-safe). */
void threads_sample_totals(uint64_t *taken, uint64_t *signals, uint64_t *no_libunwind);

#endif
