/* fdgate.c: the shim's own descriptor allocations against the target's number calls (fdgate.h).
 * It must never make either side wait past FDGATE_HOLD_NS from its start, never change errno,
 * and never hold a lock: the target's side runs wherever close() may (a signal handler, a vfork
 * child, whose writes here land in its parent's memory: at worst a wait of the parent's). */
#include "fdgate.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "shim.h"

#define FDGATE_HOLD_NS 50000000ull /* 50 ms: the most either side waits for the other */
#define FDGATE_HOLE_NS 20000000ull /* 20 ms: a freed number still free is the target's so long */
#define STDIO_SLOTS 3              /* the numbers remembered: 0, 1 and 2 */

static _Atomic int allocs;             /* the shim's allocations announced */
static _Atomic uint64_t alloc_since;   /* the latest of them announced then (monotonic ns) */
static _Atomic int target_calls;       /* the target's number calls announced */
static __thread int in_target_call;    /* this thread is inside one */

static _Atomic uint64_t freed_ns[STDIO_SLOTS]; /* when the target last freed 0, 1, 2 (0: never) */

static int number_free(unsigned fd)
{
    int saved = errno;
    int r = fcntl((int)fd, F_GETFD) < 0 && errno == EBADF;
    errno = saved;
    return r;
}

/* A number the target freed less than FDGATE_HOLE_NS ago that is still free. */
static int hole_pending(uint64_t now)
{
    for (unsigned fd = 0; fd < STDIO_SLOTS; fd++) {
        uint64_t at = atomic_load(&freed_ns[fd]);
        if (at && now - at < FDGATE_HOLE_NS && number_free(fd))
            return 1;
    }
    return 0;
}

static void pause_ns(long ns)
{
    struct timespec ts = { 0, ns };
    nanosleep(&ts, NULL);
}

void fdgate_alloc_begin(void)
{
    int saved = errno;
    uint64_t since = ps_now_ns();
    for (;;) {
        /* Unannounced while a freed number waits to be filled: the target's dup2 that fills it
         * must not wait for us. */
        while (ps_now_ns() - since < FDGATE_HOLD_NS && hole_pending(ps_now_ns()))
            pause_ns(250000); /* the target fills it within microseconds, or it ages */
        /* The start first, then the count: a call that sees the count sees this start or a
         * later one. From here the target's new calls wait; the ones under way end first. */
        atomic_store(&alloc_since, ps_now_ns());
        atomic_fetch_add(&allocs, 1);
        for (int i = 0; atomic_load(&target_calls) > 0 && ps_now_ns() - since < FDGATE_HOLD_NS; i++) {
            if (i < 64)
                sched_yield(); /* a close or dup2 under way: microseconds */
            else
                pause_ns(50000);
        }
        /* A close that ended before the count was seen may have freed a number meanwhile. */
        if (ps_now_ns() - since >= FDGATE_HOLD_NS || !hole_pending(ps_now_ns()))
            break;
        atomic_fetch_sub(&allocs, 1);
    }
    errno = saved;
}

void fdgate_alloc_end(void)
{
    atomic_fetch_sub(&allocs, 1);
}

/* An allocation announced less than FDGATE_HOLD_NS ago. */
static int alloc_holds(void)
{
    return atomic_load(&allocs) > 0 && ps_now_ns() - atomic_load(&alloc_since) < FDGATE_HOLD_NS;
}

void fdgate_target_begin(void)
{
    int saved = errno;
    for (int i = 0;; i++) {
        atomic_fetch_add(&target_calls, 1);
        if (!alloc_holds()) {
            in_target_call++;
            break;
        }
        atomic_fetch_sub(&target_calls, 1);
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
        uint64_t now = ps_now_ns();
        for (unsigned fd = first; fd <= last && fd < STDIO_SLOTS; fd++)
            atomic_store(&freed_ns[fd], now);
    }
    errno = saved;
}

void fdgate_target_end(void)
{
    in_target_call--;
    atomic_fetch_sub(&target_calls, 1);
}

int fdgate_in_target_call(void)
{
    return in_target_call > 0;
}

void fdgate_after_fork_child(void)
{
    atomic_store(&allocs, 0);
    atomic_store(&target_calls, 0);
}
