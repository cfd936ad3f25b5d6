/* x_strict [CODE]: enters seccomp strict mode (only read, write, exit and sigreturn allowed from
 * then on), burns 0.1 s of CPU without a system call (so a sampling signal lands in strict mode),
 * writes one line and ends its only thread with a raw exit(2) of CODE (default 0; exit_group is
 * not allowed). Without the shim: "strict ok", status CODE (the status of the process's last
 * thread to end, this one). */
#include <linux/seccomp.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

volatile uint64_t sink;

int main(int argc, char **argv)
{
    int code = argc > 1 ? atoi(argv[1]) : 0;
    /* CPU time measured before strict mode: the loop's length, in iterations of 0.1 s. */
    struct timespec a, b;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
    uint64_t x = 1, n = 0;
    do {
        for (int i = 0; i < 1000000; i++)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
        n++;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    } while ((b.tv_sec - a.tv_sec) * 1000000000ll + (b.tv_nsec - a.tv_nsec) < 20000000ll);
    n *= 5;
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT) != 0)
        return 2;
    for (uint64_t k = 0; k < n; k++)
        for (int i = 0; i < 1000000; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            __asm__ volatile("" : "+r"(x));
        }
    sink = x;
    static const char msg[] = "strict ok\n";
    syscall(SYS_write, 1, msg, sizeof msg - 1);
    syscall(SYS_exit, code);
    return 0;
}
