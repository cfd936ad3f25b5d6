/* burn.h: helpers shared by the shim's test targets.
 *
 * DEFINE_BURN(fn) defines a distinct, never-inlined function `fn(seconds)` that spins in its own
 * body until the calling thread has spent `seconds` more of its own CPU time
 * (CLOCK_THREAD_CPUTIME_ID). The clock is read only every million iterations (about a
 * millisecond), so that almost every sample lands in fn's own instructions, not in a system call,
 * and the target itself spends almost no time in the kernel. */
#ifndef PERFSCOPE_TEST_BURN_H
#define PERFSCOPE_TEST_BURN_H

#include <stdint.h>
#include <time.h>

static inline uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t process_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The sink keeps the loops from being optimised away. */
extern volatile uint64_t burn_sink;

#define DEFINE_BURN(fn)                                                              \
    __attribute__((noinline, used)) uint64_t fn(double seconds)                      \
    {                                                                                \
        uint64_t until = thread_cpu_ns() + (uint64_t)(seconds * 1e9);                \
        uint64_t x = (uint64_t)(uintptr_t)&burn_sink | 1, n = 0;                     \
        for (;;) {                                                                   \
            for (int i = 0; i < 1000000; i++) {                                       \
                x = x * 6364136223846793005ull + 1442695040888963407ull;             \
                __asm__ volatile("" : "+r"(x));                                      \
            }                                                                        \
            n++;                                                                     \
            if (thread_cpu_ns() >= until)                                            \
                break;                                                               \
        }                                                                            \
        burn_sink += x;                                                              \
        return n;                                                                    \
    }

#define DEFINE_BURN_SINK volatile uint64_t burn_sink;

#endif
