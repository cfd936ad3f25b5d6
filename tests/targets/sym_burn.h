/* sym_burn.h: CPU burners for the symbolizer's test targets (sym_target, sym_dl, sym_stripped).
 * SYM_BURN(fn) defines a never-inlined fn(seconds) that spins in its own body until the calling
 * thread has spent `seconds` more CPU. The thread's CPU clock is read only every SYM_SPIN
 * iterations (about 10 ms): the clock read is a system call whose samples land in [vdso] or the
 * kernel, not in fn, and the test compares fn's self share with the time measured around it. */
#ifndef PERFSCOPE_SYM_BURN_H
#define PERFSCOPE_SYM_BURN_H

#include <stdint.h>
#include <time.h>

#define SYM_SPIN 10000000

static inline uint64_t sym_thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#define SYM_BURN(fn)                                                                   \
    __attribute__((noinline, used)) uint64_t fn(double seconds)                        \
    {                                                                                  \
        uint64_t until = sym_thread_cpu_ns() + (uint64_t)(seconds * 1e9), x = 3;      \
        for (;;) {                                                                     \
            for (int i = 0; i < SYM_SPIN; i++) {                                       \
                x = x * 6364136223846793005ull + 1442695040888963407ull;               \
                __asm__ volatile("" : "+r"(x));                                        \
            }                                                                          \
            if (sym_thread_cpu_ns() >= until)                                          \
                break;                                                                 \
        }                                                                              \
        return x;                                                                      \
    }

#endif
