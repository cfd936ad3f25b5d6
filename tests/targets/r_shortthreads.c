/* r_shortthreads: N short threads, two at a time, each named "short" and spinning until it has
 * used US microseconds of its own CPU time (the clock read every ten thousand iterations, a few
 * microseconds, so none overshoots by more). Prints the threads' CPU time in all, in ns. Under
 * a sampler whose clock first fires after a whole period of a thread's CPU time, a thread that
 * uses less than that period is never sampled, whatever the threads' share of the CPU. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long burn_us;
static volatile uint64_t sink;

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *spin(void *arg)
{
    pthread_setname_np(pthread_self(), "short");
    uint64_t until = thread_cpu_ns() + (uint64_t)burn_us * 1000, x = 1, now;
    while ((now = thread_cpu_ns()) < until)
        for (int i = 0; i < 10000; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            __asm__ volatile("" : "+r"(x));
        }
    sink += x;
    *(uint64_t *)arg = thread_cpu_ns();
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 300;
    burn_us = argc > 2 ? atol(argv[2]) : 4000;
    uint64_t total = 0;
    for (int i = 0; i < n; i += 2) {
        pthread_t t[2];
        uint64_t cpu[2] = { 0, 0 };
        for (int k = 0; k < 2; k++)
            if (pthread_create(&t[k], NULL, spin, &cpu[k]) != 0)
                return 1;
        for (int k = 0; k < 2; k++)
            pthread_join(t[k], NULL);
        total += cpu[0] + cpu[1];
    }
    printf("%llu\n", (unsigned long long)total);
    return 0;
}
