/* m_unwself.c: a target that uses libunwind itself, beside a thread the shim samples
 * (tests/t_shim_dllock.sh). The walker thread unwinds its own stack step by step (unw_step,
 * which takes libunwind's cache lock and, for an address not in that 128-entry cache, calls
 * dl_iterate_phdr under it) from inside 4096 distinct functions, so it keeps missing; the
 * worker runs through the same functions, so the shim's handler keeps walking new addresses
 * with libunwind as well. For ARGV[1] seconds (default 2). Prints how deep the walker's stacks
 * were at least (the same with and without a profiler) and exits 0. */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static _Atomic int stop;
static __thread int walking_thread, min_depth = 1 << 30;

void probe(void);
#define MANY_FNS_CALL probe
#include "many_fns.h"

void probe(void)
{
    if (!walking_thread)
        return;
    unw_context_t ctx;
    unw_cursor_t cur;
    int depth = 0;
    if (unw_getcontext(&ctx) == 0 && unw_init_local(&cur, &ctx) == 0)
        while (depth < 64 && unw_step(&cur) > 0)
            depth++;
    if (depth < min_depth)
        min_depth = depth;
}

static void *run(void *arg)
{
    walking_thread = arg != NULL;
    unsigned x = 1;
    for (size_t i = 0; !atomic_load(&stop); i++)
        x = many_fns[(i * 2053) % MANY_FNS](x);
    return walking_thread ? (void *)(long)min_depth : (void *)(long)(x & 1);
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 2.0;
    pthread_t walker, worker;
    if (pthread_create(&walker, NULL, run, (void *)1) != 0 || pthread_create(&worker, NULL, run, NULL) != 0)
        return 1;
    struct timespec t = {(time_t)secs, (long)((secs - (time_t)secs) * 1e9)};
    nanosleep(&t, NULL);
    atomic_store(&stop, 1);
    void *depth;
    pthread_join(walker, &depth);
    pthread_join(worker, NULL);
    printf("walker's stacks at least %ld frames deep\n", (long)depth >= 3 ? 3L : (long)depth);
    return 0;
}
