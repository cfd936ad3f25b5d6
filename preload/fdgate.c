/* fdgate.c: the shim's own descriptor allocations against the target's number calls (fdgate.h).
 * It must never make either side wait past FDGATE_HOLD_NS from its start, never change errno,
 * and never hold a lock: the target's side runs wherever close() may (a signal handler, a vfork
 * child, whose writes here land in its parent's memory: at worst a wait of the parent's). */
#include "fdgate.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>


#define FDGATE_HOLD_NS 50000000ull /* 50 ms: the most either side waits for the other */
#define FDGATE_HOLE_NS 20000000ull /* 20 ms: a freed number still free is the target's so long */
/* An announcement is microseconds (an open and a read; a library's load, milliseconds). The
 * allocations' count not back at zero for a second is one that will not end: a thread that died
 * inside one (cancelled, or left by a handler's longjmp), or a fork's miscount. The target's
 * calls then stop waiting for it, rather than each waiting its 50 ms for ever after. */
#define FDGATE_STUCK_NS 1000000000ull
/* The same for the target's calls seen from an allocation: after one wait for calls under way
 * lasted FDGATE_SLOW_CALL_NS by itself (a close that lingers, or one that never ends), the next
 * ones only yield the CPU this many times (counted: the gate's clock moves by ticks), until one
 * sees no call under way. */
#define FDGATE_SLOW_CALL_NS 25000000ull
/* A number 0-2 the target fills and frees again: waited for again while freed this recently (a
 * close and an open at once take microseconds). */
#define FDGATE_REFILL_NS 200000ull
#define FDGATE_SUSPECT_YIELDS 16
#define STDIO_SLOTS 3              /* the numbers remembered: 0, 1 and 2 */

static _Alignas(64) _Atomic int allocs; /* the shim's allocations announced */
static _Atomic uint64_t alloc_since;   /* the latest of them announced then (monotonic ns) */
static _Atomic uint64_t allocs_busy_from; /* when the count last left zero (about) */
static _Atomic int calls_suspect;      /* a wait for the target's calls ran out */
static _Atomic int trouble;            /* FDGATE_TROUBLE_*: seen, for the log */
/* On a line of its own: every target close writes it twice, the allocations' side rarely. */
static _Alignas(64) _Atomic int target_calls; /* the target's number calls announced */
/* This thread's shares of the two counts, raised before them and lowered after them: a handler
 * that interrupts this thread sees its own share in the count, and never waits for it (it
 * cannot end before the handler returns). */
static __thread int in_target_call;    /* inside a call (from before it counts to after) */
static __thread int calls_here;        /* of which counted in target_calls now */
static __thread int allocs_here;
static __thread int cancel_state;      /* the thread's own, while its allocations hold it off */

static _Atomic uint64_t freed_ns[STDIO_SLOTS]; /* when the target last freed 0, 1, 2 (0: never) */
static __thread uint64_t freed_here[STDIO_SLOTS]; /* the same, when this thread freed it */

/* The gate's clock: the coarse one (a tick, 4 ms at 250 Hz, against bounds of 20 and 50 ms) is
 * read from the vDSO's data alone, never a system call, where the fine one falls back to one on
 * a clock source the vDSO cannot read (a VM's). */
static uint64_t gate_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The fine clock, for the freeing of numbers 0-2 (rare: a shell's redirections, a daemon's
 * start): a system call on a VM's clock source, paid there only. */
static uint64_t fine_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int number_free(unsigned fd)
{
    int saved = errno;
    int r = fcntl((int)fd, F_GETFD) < 0 && errno == EBADF;
    errno = saved;
    return r;
}

/* A number the target freed less than FDGATE_HOLE_NS ago that is still free. seen: the freeing
 * times this allocation has met so far. A number freed again since it was first met has been
 * filled and freed by the target in between: the fill came and went, and the number is waited
 * for again only while its new freeing is younger than FDGATE_REFILL_NS, in which a program that
 * closes and opens again at once (`close(0); open(...)` in a loop) fills it; one that works
 * between (stdin closed, a file opened and closed on 0 between stretches of work) is not
 * waited for again, or each of its closes would start the wait over until its bound. The
 * freeing times are the fine clock's (fine_now), read only when a number 0-2 is freed. */
static int hole_pending(uint64_t seen[STDIO_SLOTS])
{
    uint64_t now = 0;
    for (unsigned fd = 0; fd < STDIO_SLOTS; fd++) {
        uint64_t at = atomic_load(&freed_ns[fd]);
        if (!at || at == freed_here[fd])
            continue; /* never freed (the common case reads no clock), or by this very thread:
                       * only it could fill the number, and it is here */
        if (!now)
            now = fine_now();
        uint64_t age = now > at ? now - at : 0; /* (freed by another thread since the clock read) */
        if (!seen[fd])
            seen[fd] = at;
        else if (seen[fd] != at && age >= FDGATE_REFILL_NS)
            continue;
        if (age < FDGATE_HOLE_NS && number_free(fd))
            return 1;
    }
    return 0;
}

/* A raw system call: the C library's nanosleep is a cancellation point, and the target's dup2,
 * which is none, would have become one while it waits here. */
static void pause_ns(long ns)
{
    struct timespec ts = { 0, ns };
    syscall(SYS_nanosleep, &ts, NULL);
}

static void announce(uint64_t now)
{
    allocs_here++;
    atomic_signal_fence(memory_order_seq_cst);
    /* The start first, then the count: a call that sees the count sees this start or a later
     * one (and a busy-from no older than this stretch's). */
    atomic_store(&alloc_since, now);
    if (atomic_load(&allocs) == 0)
        atomic_store(&allocs_busy_from, now);
    atomic_fetch_add(&allocs, 1);
}

static void withdraw(void)
{
    atomic_fetch_sub(&allocs, 1);
    atomic_signal_fence(memory_order_seq_cst);
    allocs_here--;
}

/* The target's calls under way on other threads. */
static int other_calls(void)
{
    return atomic_load(&target_calls) - calls_here > 0;
}

static void count_call(void)
{
    calls_here++;
    atomic_signal_fence(memory_order_seq_cst);
    atomic_fetch_add(&target_calls, 1);
}

static void uncount_call(void)
{
    atomic_fetch_sub(&target_calls, 1);
    atomic_signal_fence(memory_order_seq_cst);
    calls_here--;
}

void fdgate_alloc_begin(void)
{
    int saved = errno;
    /* No cancellation of this thread (a target's, starting or leaving) while it holds an
     * announcement: a thread cancelled inside one would leave the count up for good. The
     * thread's own state comes back with its last end. */
    if (allocs_here == 0) {
        int old = PTHREAD_CANCEL_ENABLE;
        pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
        cancel_state = old;
    }
    uint64_t since = gate_now();
    uint64_t seen[STDIO_SLOTS] = { 0 };
    for (;;) {
        /* Unannounced while a freed number waits to be filled: the target's dup2 that fills it
         * must not wait for us. */
        while (hole_pending(seen) && gate_now() - since < FDGATE_HOLD_NS)
            pause_ns(250000); /* the target fills it within microseconds, or it ages */
        /* From here the target's new calls wait; the ones under way end first. */
        uint64_t calls_from = gate_now();
        announce(calls_from);
        int suspect = atomic_load(&calls_suspect);
        uint64_t t = calls_from;
        for (int i = 0; other_calls() && (t = gate_now()) - since < FDGATE_HOLD_NS; i++) {
            if (suspect && i >= FDGATE_SUSPECT_YIELDS)
                break; /* gone ahead, the call under way left to chance */
            if (i < 64)
                sched_yield(); /* a close or dup2 under way: microseconds */
            else
                pause_ns(50000);
        }
        if (!other_calls()) {
            if (suspect)
                atomic_store(&calls_suspect, 0);
        } else if (t - calls_from >= FDGATE_SLOW_CALL_NS && !atomic_exchange(&calls_suspect, 1)) {
            atomic_fetch_or(&trouble, FDGATE_TROUBLE_CALLS);
        }
        /* A close that ended before the count was seen may have freed a number meanwhile. */
        if (!hole_pending(seen) || gate_now() - since >= FDGATE_HOLD_NS)
            break;
        withdraw();
    }
    errno = saved;
}

void fdgate_alloc_end(void)
{
    withdraw();
    if (allocs_here == 0) {
        int saved = errno;
        pthread_setcancelstate(cancel_state, NULL);
        errno = saved;
    }
}

/* An allocation of another thread's announced less than FDGATE_HOLD_NS ago, in a stretch of
 * announcements that began less than FDGATE_STUCK_NS ago. */
static int alloc_holds(void)
{
    if (atomic_load(&allocs) - allocs_here <= 0)
        return 0;
    uint64_t now = gate_now();
    if (now - atomic_load(&alloc_since) >= FDGATE_HOLD_NS)
        return 0;
    if (now - atomic_load(&allocs_busy_from) >= FDGATE_STUCK_NS) {
        if (!(atomic_load(&trouble) & FDGATE_TROUBLE_ALLOCS))
            atomic_fetch_or(&trouble, FDGATE_TROUBLE_ALLOCS);
        return 0;
    }
    return 1;
}

void fdgate_target_begin(void)
{
    int saved = errno;
    /* Marked first: a handler that interrupts from here on and allocates must not wait for this
     * call, which cannot end before the handler returns. */
    in_target_call++;
    atomic_signal_fence(memory_order_seq_cst);
    uint64_t since = 0;
    for (int i = 0;; i++) {
        count_call();
        if (!alloc_holds())
            break;
        /* Never past FDGATE_HOLD_NS from this call's start, however the allocations overlap. */
        uint64_t now = gate_now();
        if (!since)
            since = now;
        else if (now - since >= FDGATE_HOLD_NS)
            break;
        uncount_call();
        if (i < 64)
            sched_yield(); /* an open under way: microseconds */
        else
            pause_ns(50000); /* a library being loaded: longer */
    }
    errno = saved;
}

void fdgate_freed(unsigned first, unsigned last)
{
    int saved = errno;
    if (first < STDIO_SLOTS) {
        uint64_t now = fine_now();
        for (unsigned fd = first; fd <= last && fd < STDIO_SLOTS; fd++) {
            freed_here[fd] = now;
            atomic_store(&freed_ns[fd], now);
        }
    }
    errno = saved;
}

void fdgate_closed_at_start(void)
{
    int saved = errno;
    struct pollfd p[STDIO_SLOTS];
    for (unsigned fd = 0; fd < STDIO_SLOTS; fd++)
        p[fd] = (struct pollfd){ .fd = (int)fd, .events = 0 };
    if (poll(p, STDIO_SLOTS, 0) >= 0) /* one system call: POLLNVAL marks a number not open */
        for (unsigned fd = 0; fd < STDIO_SLOTS; fd++)
            if (p[fd].revents & POLLNVAL)
                fdgate_freed(fd, fd);
    errno = saved;
}

void fdgate_target_end(void)
{
    uncount_call();
    atomic_signal_fence(memory_order_seq_cst);
    in_target_call--;
}

int fdgate_in_target_call(void)
{
    return in_target_call > 0;
}

void fdgate_thread_exit(void)
{
    while (calls_here > 0)
        uncount_call();
    in_target_call = 0;
    while (allocs_here > 0)
        withdraw();
}

int fdgate_trouble(void)
{
    return atomic_load(&trouble);
}

void fdgate_forget_freed(void)
{
    for (unsigned fd = 0; fd < STDIO_SLOTS; fd++)
        atomic_store(&freed_ns[fd], 0);
}

void fdgate_after_fork_child(void)
{
    /* The forking thread's own, if it forked inside one (a handler's fork): they end here. */
    atomic_store(&allocs, allocs_here);
    atomic_store(&target_calls, calls_here);
}
