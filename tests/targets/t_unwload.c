/* t_unwload: how soon after a process's first samples the shim has loaded libunwind. Burns
 * ARGV[1] ms of CPU from the start of main (samples walked by frame pointers until the load),
 * then sleeps in 0.25 ms steps, reading /proc/self/maps, until libunwind is mapped or 200 ms have
 * passed. Prints "burn_end_ms MAPPED_MS" (wall from main's start; -1: never mapped) and exits 0.
 * Links nothing of libunwind's itself. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double ms_since(const struct timespec *a, clockid_t c)
{
    struct timespec b;
    clock_gettime(c, &b);
    return (b.tv_sec - a->tv_sec) * 1e3 + (b.tv_nsec - a->tv_nsec) / 1e6;
}

static int libunwind_mapped(void)
{
    static char buf[1 << 20];
    int fd = open("/proc/self/maps", O_RDONLY);
    if (fd < 0)
        return 0;
    size_t len = 0;
    ssize_t n;
    while (len < sizeof buf - 1 && (n = read(fd, buf + len, sizeof buf - 1 - len)) > 0)
        len += (size_t)n;
    close(fd);
    buf[len] = '\0';
    return strstr(buf, "libunwind") != NULL;
}

int main(int argc, char **argv)
{
    double burn_ms = argc > 1 ? atof(argv[1]) : 3;
    struct timespec wall0, cpu0;
    clock_gettime(CLOCK_MONOTONIC, &wall0);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);
    volatile unsigned x = 0;
    while (ms_since(&cpu0, CLOCK_THREAD_CPUTIME_ID) < burn_ms)
        for (int i = 0; i < 10000; i++)
            x += i;
    double burn_end = ms_since(&wall0, CLOCK_MONOTONIC), mapped = -1;
    while (ms_since(&wall0, CLOCK_MONOTONIC) < 200) {
        if (libunwind_mapped()) {
            mapped = ms_since(&wall0, CLOCK_MONOTONIC);
            break;
        }
        struct timespec step = {0, 250000};
        nanosleep(&step, NULL);
    }
    printf("%.3f %.3f\n", burn_end, mapped);
    return 0;
}
