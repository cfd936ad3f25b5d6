#define _GNU_SOURCE
/* m_dllock.c: a target that holds the dynamic loader's lock while it waits for another of its
 * threads, as a program's dl_iterate_phdr callback (or glibc's dlclose, which frees under the
 * lock) may: the shim's handler must never make that thread wait for the lock (tests/
 * t_shim_dllock.sh). A worker runs through 4096 distinct functions, so libunwind keeps meeting
 * return addresses it has not cached and looks their tables up through dl_iterate_phdr. The
 * holder, for about ARGV[1] seconds (default 2), takes the loader's lock in dl_iterate_phdr's
 * callback and keeps it until the worker has moved on and 2 ms have passed; when the worker does
 * not move for 1 s (stopped on the lock in a signal handler), that is a stall. Then the worker
 * runs 1 s more with the lock left alone (its stacks then must be whole: a profiler whose
 * unwinder was refused a lookup while the lock was held may have kept that). Prints the stalls
 * (0 without a profiler) and exits 0. Built without frame pointers by its test, so that only
 * the unwind tables give a whole stack. */
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static _Atomic unsigned long progress;
static _Atomic int stop;

#include "many_fns.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *worker(void *arg)
{
    (void)arg;
    unsigned x = 1;
    for (size_t i = 0; !atomic_load(&stop); i++) {
        x = many_fns[(i * 2053) % MANY_FNS](x);
        atomic_fetch_add(&progress, 1);
    }
    return (void *)(unsigned long)(x & 1);
}

static int stalls;

static int hold(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)info;
    (void)size;
    (void)data;
    unsigned long from = atomic_load(&progress);
    double t0 = now_s();
    for (;;) {
        double t = now_s();
        if (atomic_load(&progress) != from && t - t0 >= 0.002)
            break;
        if (t - t0 >= 1.0) {
            stalls++;
            break;
        }
        sched_yield();
    }
    return 1; /* the first object only: the lock is held all the same */
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 2.0;
    pthread_t w;
    if (pthread_create(&w, NULL, worker, NULL) != 0)
        return 1;
    struct timespec gap = {0, 2000000};
    for (double end = now_s() + secs; now_s() < end;) {
        dl_iterate_phdr(hold, NULL);
        nanosleep(&gap, NULL);
    }
    struct timespec quiet = {1, 0};
    nanosleep(&quiet, NULL);
    atomic_store(&stop, 1);
    pthread_join(w, NULL);
    printf("stalls: %d\n", stalls);
    return 0;
}
