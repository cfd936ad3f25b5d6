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

/* f39 calls the leaf, f38 calls f39, ... f0 calls f1. The `+ k` after each call keeps it a
 * real call (no sibling-call optimisation), so the chain stays 40 frames deep. */
#define LINK(k, next)                                                      \
    __attribute__((noinline)) static uint64_t f##k(uint64_t x, uint64_t n) \
    {                                                                      \
        uint64_t r = next(x + k, n);                                       \
        __asm__ volatile("" : "+r"(r));                                    \
        return r + k;                                                      \
    }
LINK(39, leaf) LINK(38, f39) LINK(37, f38) LINK(36, f37) LINK(35, f36)
LINK(34, f35) LINK(33, f34) LINK(32, f33) LINK(31, f32) LINK(30, f31)
LINK(29, f30) LINK(28, f29) LINK(27, f28) LINK(26, f27) LINK(25, f26)
LINK(24, f25) LINK(23, f24) LINK(22, f23) LINK(21, f22) LINK(20, f21)
LINK(19, f20) LINK(18, f19) LINK(17, f18) LINK(16, f17) LINK(15, f16)
LINK(14, f15) LINK(13, f14) LINK(12, f13) LINK(11, f12) LINK(10, f11)
LINK(9, f10)  LINK(8, f9)   LINK(7, f8)   LINK(6, f7)   LINK(5, f6)
LINK(4, f5)   LINK(3, f4)   LINK(2, f3)   LINK(1, f2)   LINK(0, f1)

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
