/* k_blockshort N US: N threads one after another, each blocking SIGPROF with a raw
 * rt_sigprocmask system call (the shim cannot see it) and spinning until it has used US
 * microseconds of its own CPU time. Under PERFSCOPE_UNWIND=kernel no signal is involved, so none
 * of that time is unsampled, whenever the thread's end falls between the writer's checks
 * (t_shim_kchain). Exit 0. */
#define _GNU_SOURCE
#include "burn.h"
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static long burn_us;
static volatile uint64_t sink;

static void *worker(void *arg)
{
    uint64_t prof = 1ull << (SIGPROF - 1);
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, &prof, NULL, sizeof prof);
    uint64_t until = thread_cpu_ns() + (uint64_t)burn_us * 1000, x = 1;
    while (thread_cpu_ns() < until)
        for (int i = 0; i < 1000; i++)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
    sink += x;
    return arg;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    int n = atoi(argv[1]);
    burn_us = atol(argv[2]);
    for (int i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, worker, NULL) != 0 || pthread_join(t, NULL) != 0)
            return 1;
    }
    return 0;
}
