/* r_unwearly: a program linked with libunwind whose main calls unw_backtrace once at start,
 * before the shim's writer first uses libunwind (so the fast tracer's pthread key is made by
 * the program's call, not in the slot the shim kept for it), then spins ARGV[1] seconds of CPU
 * (default 1). Prints how deep its own backtrace was (at least 3 frames: the same with and
 * without a profiler) and exits 0. */
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 1.0;
    void *pcs[16];
    int n = unw_backtrace(pcs, 16);
    struct timespec a, b;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
    volatile unsigned x = 0;
    do {
        for (int i = 0; i < 100000; i++)
            x += i;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
    } while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < secs);
    printf("own backtrace at least %d frames\n", n >= 3 ? 3 : n);
    return 0;
}
