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

DEFINE_BURN_SINK
DEFINE_BURN(burn_blocked)

static double seconds;

static void *worker(void *arg)
{
    uint64_t prof = 1ull << (SIGPROF - 1);
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, &prof, NULL, sizeof prof);
    burn_blocked(seconds);
    return arg;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    int n = atoi(argv[1]);
    seconds = atol(argv[2]) / 1e6;
    for (int i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, worker, NULL) != 0 || pthread_join(t, NULL) != 0)
            return 1;
    }
    return 0;
}
