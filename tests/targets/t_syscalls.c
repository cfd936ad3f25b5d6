/* t_syscalls: a phase "sys" spent mostly in the kernel (read() of 1 MiB from /dev/zero until the
 * process has 0.6 s of CPU), then a phase "user" of 0.2 s in its own code (burn.h); prints its own
 * user and system CPU seconds for each phase as one JSON line:
 *   {"sys": {"user_s": U, "sys_s": S}, "user": {"user_s": U, "sys_s": S}}
 * so a test can tell which time the report's CPU s counts (t_tools_report_cputime). */
#define _GNU_SOURCE
#include "burn.h"
#include "perfscope.h"
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_user)

static char buf[1 << 20];

static void times(double *u, double *s)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    *u = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
    *s = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

int main(void)
{
    int fd = open("/dev/zero", O_RDONLY);
    if (fd < 0)
        return 1;
    double u0, s0, u1, s1, u2, s2;
    times(&u0, &s0);
    perfscope_begin("sys");
    uint64_t start = thread_cpu_ns();
    while (thread_cpu_ns() - start < 600000000ull)
        if (read(fd, buf, sizeof buf) < 0)
            return 1;
    perfscope_end("sys", -1);
    times(&u1, &s1);
    perfscope_begin("user");
    burn_user(0.2);
    perfscope_end("user", -1);
    times(&u2, &s2);
    printf("{\"sys\": {\"user_s\": %.6f, \"sys_s\": %.6f}, \"user\": {\"user_s\": %.6f, \"sys_s\": %.6f}}\n",
           u1 - u0, s1 - s0, u2 - u1, s2 - s1);
    return 0;
}
