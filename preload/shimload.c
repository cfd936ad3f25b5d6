/* shimload.c: the shim's own dlopens against a target's descriptor-number calls (shimload.h).
 * It must never make either side wait past SHIMLOAD_HOLD_NS from a load's start, and never
 * change errno for the target's call. */
#include "shimload.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "shim.h"

#define SHIMLOAD_HOLD_NS 50000000ull /* 50 ms */

static _Atomic int loads;               /* the shim's dlopens under way */
static _Atomic uint64_t loading_since;  /* the latest of them began then (monotonic ns) */
static _Atomic int number_calls;        /* a target's dup2, dup3 or close_range under way */

static void pause_briefly(void)
{
    struct timespec ts = {0, 50000};
    nanosleep(&ts, NULL);
}

/* A load under way that began less than SHIMLOAD_HOLD_NS ago. */
static int load_holds(void)
{
    return atomic_load(&loads) > 0 && ps_now_ns() - atomic_load(&loading_since) < SHIMLOAD_HOLD_NS;
}

void shimload_number_call_begin(void)
{
    int saved = errno;
    for (;;) {
        atomic_fetch_add(&number_calls, 1);
        if (!load_holds())
            break;
        atomic_fetch_sub(&number_calls, 1);
        pause_briefly();
    }
    errno = saved;
}

void shimload_number_call_end(void)
{
    atomic_fetch_sub(&number_calls, 1);
}

void *shimload_open(const char *name, int flags)
{
    uint64_t since = ps_now_ns();
    /* The start first, then the count: a call that sees the count sees this start or a later one. */
    atomic_store(&loading_since, since);
    atomic_fetch_add(&loads, 1);
    while (atomic_load(&number_calls) > 0 && ps_now_ns() - since < SHIMLOAD_HOLD_NS)
        pause_briefly();
    void *h = dlopen(name, flags);
    atomic_fetch_sub(&loads, 1);
    return h;
}

void shimload_after_fork_child(void)
{
    atomic_store(&loads, 0); /* a load under way in another thread is not the child's */
    atomic_store(&number_calls, 0);
}
