/* ring.c: the lock-free rings between each thread's SIGPROF handler and the writer, and the
 * thread registry the handler searches. The handler-side functions (ring_reserve, ring_commit,
 * thread_self) must never allocate, lock or make a call that is not async-signal-safe. */
#include "ring.h"

#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

struct ps_thread ps_threads[PS_MAX_THREADS];
_Atomic int ps_threads_used;

static __thread struct ps_thread *self_entry;
static __thread pid_t self_tid;

pid_t ps_gettid(void)
{
    /* A fork child inherits the parent's TLS values, so the cache is reset by the fork
     * path (thread_set_self(NULL) clears it). */
    if (!self_tid)
        self_tid = (pid_t)syscall(SYS_gettid);
    return self_tid;
}

/* Rings of threads that ended, kept for the next threads: a program that starts and ends
 * threads by the thousand (a thread per task) paid an mmap and an munmap of 170 KiB for each,
 * and the munmap's TLB shootdown across the CPUs was a fifth of such a run's CPU time (64,000
 * threads four at a time: r_threadchurn). Each cell holds one ring or NULL, taken and filled by
 * an exchange or a compare-exchange: no list, no lock. A fork child keeps its parent's (its
 * own copies). */
#define RING_CACHE 16
static struct ps_ring *_Atomic cache[RING_CACHE];

static void ring_unmap(struct ps_ring *r)
{
    munmap(r, offsetof(struct ps_ring, data) + (size_t)r->slots * r->rec_size);
}

struct ps_ring *ring_new(uint32_t slots, uint32_t max_frames)
{
    uint32_t rec = (uint32_t)(sizeof(struct ps_slot_rec) + 8u * max_frames);
    size_t size = offsetof(struct ps_ring, data) + (size_t)slots * rec;
    for (int i = 0; i < RING_CACHE; i++) {
        struct ps_ring *s = atomic_load_explicit(&cache[i], memory_order_relaxed) ? atomic_exchange(&cache[i], NULL)
                                                                                  : NULL;
        if (!s)
            continue;
        if (s->slots != slots || s->rec_size != rec) {
            ring_unmap(s);
            continue;
        }
        atomic_store(&s->head, 0);
        s->tail_seen = 0;
        atomic_store(&s->dropped, 0);
        atomic_store(&s->tail, 0);
        return s;
    }
    /* mmap, not malloc: rings are made in pthread_create's wrapper and at fork, where the
     * target's allocator must not be disturbed. */
    struct ps_ring *r = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (r == MAP_FAILED)
        return NULL;
    r->slots = slots;
    r->rec_size = rec;
    return r;
}

int ring_cache_put(struct ps_ring *r)
{
    for (int i = 0; i < RING_CACHE; i++) {
        struct ps_ring *none = NULL;
        if (!atomic_load_explicit(&cache[i], memory_order_relaxed) && atomic_compare_exchange_strong(&cache[i], &none, r))
            return 1;
    }
    return 0;
}

void ring_free(struct ps_ring *r)
{
    if (r && !ring_cache_put(r))
        ring_unmap(r);
}

/* The slot at head is free if it was by the tail last read (an acquire, so the consumer was
 * done with it); only when it looks full is the tail read again. */
struct ps_slot_rec *ring_reserve(struct ps_ring *r)
{
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    if (head - r->tail_seen >= r->slots) {
        r->tail_seen = atomic_load_explicit(&r->tail, memory_order_acquire);
        if (head - r->tail_seen >= r->slots)
            return NULL;
    }
    return (struct ps_slot_rec *)(r->data + (head % r->slots) * r->rec_size);
}

/* A release store, no locked instruction: head has one writer. The caller's writer_note_sample
 * fence orders it before its look at the writer's idle flag. */
void ring_commit(struct ps_ring *r)
{
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    atomic_store_explicit(&r->head, head + 1, memory_order_release);
}

struct ps_slot_rec *ring_peek(struct ps_ring *r)
{
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    if (tail == head)
        return NULL;
    return (struct ps_slot_rec *)(r->data + (tail % r->slots) * r->rec_size);
}

void ring_release(struct ps_ring *r)
{
    atomic_fetch_add_explicit(&r->tail, 1, memory_order_release);
}

struct ps_thread *thread_claim(pid_t tid)
{
    for (int i = 0; i < PS_MAX_THREADS; i++) {
        int expected = PS_T_FREE;
        /* A plain look first: thousands of slots may be taken (threads that ended, awaiting
         * the writer), and a failed compare-exchange is a locked instruction each. */
        if (atomic_load_explicit(&ps_threads[i].state, memory_order_relaxed) == PS_T_FREE &&
            atomic_compare_exchange_strong(&ps_threads[i].state, &expected, PS_T_CLAIMED)) {
            struct ps_thread *t = &ps_threads[i];
            t->ring = NULL;
            t->perf_fd = -1;
            t->chain_sampled = 0;
            t->has_timer = 0;
            t->stack_lo = t->stack_hi = 0;
            t->foreign = 0;
            t->unw_ok = 0;
            t->comm[0] = 0;
            t->comm_checked_ns = 0;
            atomic_store(&t->arrived, 0);
            atomic_store(&t->in_handler, 0); /* a stamp the slot's last thread left (a longjmp) */
            memset(&t->us, 0, sizeof t->us);
            atomic_store(&t->tid, tid);
            int used = atomic_load(&ps_threads_used);
            while (used < i + 1 && !atomic_compare_exchange_weak(&ps_threads_used, &used, i + 1))
                ;
            return t;
        }
    }
    return NULL;
}

struct ps_thread *thread_self(void)
{
    if (self_entry)
        return self_entry;
    pid_t tid = ps_gettid();
    int used = atomic_load_explicit(&ps_threads_used, memory_order_acquire);
    for (int i = 0; i < used; i++) {
        struct ps_thread *t = &ps_threads[i];
        if (atomic_load_explicit(&t->state, memory_order_acquire) == PS_T_LIVE &&
            atomic_load_explicit(&t->tid, memory_order_relaxed) == tid) {
            self_entry = t;
            return t;
        }
    }
    return NULL;
}

void threads_sample_totals(uint64_t *taken, uint64_t *signals, uint64_t *no_libunwind)
{
    uint64_t a = 0, b = 0, c = 0;
    int used = atomic_load(&ps_threads_used);
    for (int i = 0; i < used; i++) {
        a += atomic_load_explicit(&ps_threads[i].taken, memory_order_relaxed);
        b += atomic_load_explicit(&ps_threads[i].signals, memory_order_relaxed);
        c += atomic_load_explicit(&ps_threads[i].no_libunwind, memory_order_relaxed);
    }
    *taken = a;
    *signals = b;
    *no_libunwind = c;
}

void thread_set_self(struct ps_thread *t)
{
    self_entry = t;
    if (!t)
        self_tid = 0;
}
