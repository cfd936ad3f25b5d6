/* k_threads N SECONDS CPU_FILE: N worker threads alive at once (they meet at a barrier before
 * they start), each burning SECONDS of its own CPU time in burn_worker, then writing "<tid> <CPU
 * ns>" to CPU_FILE. For PERFSCOPE_UNWIND=kernel (t_shim_kchain): more threads than the locked
 * memory allows buffers for must still all be sampled. Exit 0. */
#define _GNU_SOURCE
#include "burn.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_worker)

static double seconds;
static pthread_barrier_t all_here;
static FILE *cpu_out;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&all_here);
    uint64_t c0 = thread_cpu_ns();
    burn_worker(seconds);
    uint64_t used = thread_cpu_ns() - c0;
    pthread_mutex_lock(&out_lock);
    fprintf(cpu_out, "%ld %llu\n", (long)syscall(SYS_gettid), (unsigned long long)used);
    pthread_mutex_unlock(&out_lock);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    int n = atoi(argv[1]);
    seconds = atof(argv[2]);
    cpu_out = fopen(argv[3], "w");
    if (n < 1 || n > 256 || !cpu_out)
        return 2;
    pthread_t t[256];
    pthread_barrier_init(&all_here, NULL, (unsigned)n);
    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, worker, NULL) != 0)
            return 1;
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    return fclose(cpu_out) == 0 ? 0 : 1;
}
