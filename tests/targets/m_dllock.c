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

#define F1(n) static __attribute__((noinline)) unsigned fn_##n(unsigned x) \
    { for (int i = 0; i < 40; i++) x = x * 2654435761u + 0x##n; return x; }
#define F16(p) F1(p##0) F1(p##1) F1(p##2) F1(p##3) F1(p##4) F1(p##5) F1(p##6) F1(p##7) \
    F1(p##8) F1(p##9) F1(p##a) F1(p##b) F1(p##c) F1(p##d) F1(p##e) F1(p##f)
#define F256(p) F16(p##0) F16(p##1) F16(p##2) F16(p##3) F16(p##4) F16(p##5) F16(p##6) F16(p##7) \
    F16(p##8) F16(p##9) F16(p##a) F16(p##b) F16(p##c) F16(p##d) F16(p##e) F16(p##f)
F256(0) F256(1) F256(2) F256(3) F256(4) F256(5) F256(6) F256(7)
F256(8) F256(9) F256(a) F256(b) F256(c) F256(d) F256(e) F256(f)

#define T1(n) fn_##n,
#define T16(p) T1(p##0) T1(p##1) T1(p##2) T1(p##3) T1(p##4) T1(p##5) T1(p##6) T1(p##7) \
    T1(p##8) T1(p##9) T1(p##a) T1(p##b) T1(p##c) T1(p##d) T1(p##e) T1(p##f)
#define T256(p) T16(p##0) T16(p##1) T16(p##2) T16(p##3) T16(p##4) T16(p##5) T16(p##6) T16(p##7) \
    T16(p##8) T16(p##9) T16(p##a) T16(p##b) T16(p##c) T16(p##d) T16(p##e) T16(p##f)
static unsigned (*const table[])(unsigned) = {
    T256(0) T256(1) T256(2) T256(3) T256(4) T256(5) T256(6) T256(7)
    T256(8) T256(9) T256(a) T256(b) T256(c) T256(d) T256(e) T256(f)
};
#define NFN (sizeof table / sizeof table[0])

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
        x = table[(i * 2053) % NFN](x);
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
