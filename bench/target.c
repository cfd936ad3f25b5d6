/* bench/target.c: fixed-work target for `make bench`.
 * Two threads each run a fixed number of arithmetic iterations (not a fixed time) at the
 * leaf of a 40-deep chain of noinline functions, so every sample has a deep stack to unwind.
 * Build: -O2 -g -fno-omit-frame-pointer -pthread. Prints a checksum so the work stays.
 * Usage: target [iterations per thread] (default BENCH_ITERS). */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NTHREADS 2
#define BENCH_ITERS 850000000ULL

/* The leaf: a serial multiply/xor-shift chain the compiler cannot shorten or vectorise. */
__attribute__((noinline)) static uint64_t leaf(uint64_t x, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        x ^= x >> 29;
    }
    return x;
}

#include "chain.h"

static uint64_t iters = BENCH_ITERS;

static void *worker(void *arg)
{
    uint64_t *out = arg;
    *out = f0(*out, iters);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        iters = strtoull(argv[1], NULL, 10);
    pthread_t th[NTHREADS];
    uint64_t res[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        res[i] = (uint64_t)i + 1;
        if (pthread_create(&th[i], NULL, worker, &res[i]) != 0) {
            perror("pthread_create");
            return 1;
        }
    }
    uint64_t sum = 0;
    for (int i = 0; i < NTHREADS; i++) {
        pthread_join(th[i], NULL);
        sum ^= res[i];
    }
    printf("checksum %016" PRIx64 "\n", sum);
    return 0;
}
