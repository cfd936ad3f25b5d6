/* m_dlstorm.c: a target whose main thread calls dl_iterate_phdr in a tight loop for ARGV[1]
 * seconds (default 1.5), then stays quiet 2 s (tests/t_shim_dllock.sh). A worker runs the whole
 * time through 64 pairs mid_k -> leaf_k: during the storm it moves to the next pair every 20 ms
 * (so the stack through each pair is first walked while the storm is on), after it it cycles
 * through all of them. Built without frame pointers, so only the unwind tables give the
 * worker's whole stack. Prints the time the storm ended (CLOCK_MONOTONIC ns) and exits 0. */
#define _GNU_SOURCE
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static _Atomic int stop, storming = 1;

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

#define PAIR(k) \
    __attribute__((noinline)) unsigned leaf_##k(unsigned x) \
    { for (int i = 0; i < 20000; i++) x = x * 2654435761u + k; return x; } \
    __attribute__((noinline)) unsigned mid_##k(unsigned x) { return leaf_##k(x) + 1; }
#define PAIR8(p) PAIR(p##0) PAIR(p##1) PAIR(p##2) PAIR(p##3) PAIR(p##4) PAIR(p##5) PAIR(p##6) PAIR(p##7)
PAIR8(1) PAIR8(2) PAIR8(3) PAIR8(4) PAIR8(5) PAIR8(6) PAIR8(7) PAIR8(8)
#define MID(k) mid_##k,
#define MID8(p) MID(p##0) MID(p##1) MID(p##2) MID(p##3) MID(p##4) MID(p##5) MID(p##6) MID(p##7)
static unsigned (*volatile mids[64])(unsigned) = {MID8(1) MID8(2) MID8(3) MID8(4) MID8(5) MID8(6) MID8(7) MID8(8)};

__attribute__((noinline)) void *worker(void *arg)
{
    (void)arg;
    unsigned x = 1;
    long long start = now_ns();
    for (unsigned i = 0; !atomic_load(&stop); i++) {
        unsigned k = atomic_load(&storming) ? (unsigned)((now_ns() - start) / 20000000) % 64 : i % 64;
        x = mids[k](x);
    }
    return (void *)(long)(x & 1);
}

static int nothing(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)info;
    (void)size;
    (void)data;
    return 0;
}

int main(int argc, char **argv)
{
    long long storm = (long long)((argc > 1 ? atof(argv[1]) : 1.5) * 1e9);
    pthread_t w;
    if (pthread_create(&w, NULL, worker, NULL) != 0)
        return 1;
    for (long long end = now_ns() + storm; now_ns() < end;)
        dl_iterate_phdr(nothing, NULL);
    atomic_store(&storming, 0);
    printf("%lld\n", now_ns());
    fflush(stdout);
    struct timespec quiet = {2, 0};
    nanosleep(&quiet, NULL);
    atomic_store(&stop, 1);
    pthread_join(w, NULL);
    return 0;
}
