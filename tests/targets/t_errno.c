/* t_errno: sets errno to known values and burns 0.5 s of CPU reading it back after every step
 * of a tight loop (through a volatile pointer, so each read is a load). Prints "errno kept" and
 * exits 0 when errno never changed; else prints what it saw and exits 1. */
#define _GNU_SOURCE
#include "burn.h"
#include <errno.h>
#include <stdio.h>

__attribute__((noinline)) static long spin_errno(volatile int *ep, int want, double seconds)
{
    uint64_t until = thread_cpu_ns() + (uint64_t)(seconds * 1e9);
    uint64_t x = 1;
    long changed = 0;
    do {
        for (int i = 0; i < 100000; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            if (*ep != want) {
                changed++;
                *ep = want;
            }
        }
    } while (thread_cpu_ns() < until);
    __asm__ volatile("" : : "r"(x));
    return changed;
}

int main(void)
{
    volatile int *ep = &errno;
    long changed = 0;
    static const int values[] = {4242, EINTR, 0, EAGAIN, 7};
    for (int k = 0; k < 5; k++) {
        *ep = values[k];
        changed += spin_errno(ep, values[k], 0.1);
    }
    if (changed) {
        printf("errno changed %ld times\n", changed);
        return 1;
    }
    printf("errno kept\n");
    return 0;
}
