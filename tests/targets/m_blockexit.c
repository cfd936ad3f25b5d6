/* m_blockexit ROUNDS THREADS SECONDS CPU_FILE: threads that block SIGPROF and end together. The
 * target installs a SIGPROF handler of its own (it never fires), so the shim keeps every mask as
 * asked; main blocks every signal and starts THREADS threads (they inherit the mask), each burns
 * SECONDS of its own CPU time, writes "<tid> <ns>" (its CPU time) to CPU_FILE, meets the others
 * at a barrier and returns at once: their exits fall within microseconds of each other, inside
 * the writer's pass that the first exit wakes. ROUNDS times over, on a driver thread: main calls
 * pthread_exit once it has started it, as some servers do, and from then on every thread's exit
 * wakes the shim's writer at once (it watches for the process's last thread). Exit 0 (the
 * driver's exit, the process's last thread). */
#define _GNU_SOURCE
#include "burn.h"
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_blocked)

static double seconds;
static FILE *cpu_out;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t done;

static void *worker(void *arg)
{
    (void)arg;
    burn_blocked(seconds);
    pthread_mutex_lock(&out_lock);
    fprintf(cpu_out, "%ld %llu\n", (long)syscall(SYS_gettid), (unsigned long long)thread_cpu_ns());
    fflush(cpu_out);
    pthread_mutex_unlock(&out_lock);
    pthread_barrier_wait(&done);
    return NULL;
}

static void on_prof(int sig)
{
    (void)sig;
}

static int rounds, nthreads;

static void *driver(void *arg)
{
    (void)arg;
    for (int r = 0; r < rounds; r++) {
        pthread_t th[64];
        pthread_barrier_init(&done, NULL, (unsigned)nthreads);
        for (int i = 0; i < nthreads; i++)
            if (pthread_create(&th[i], NULL, worker, NULL) != 0)
                exit(2);
        for (int i = 0; i < nthreads; i++)
            pthread_join(th[i], NULL);
        pthread_barrier_destroy(&done);
    }
    fclose(cpu_out);
    exit(0);
}

int main(int argc, char **argv)
{
    if (argc != 5)
        return 2;
    rounds = atoi(argv[1]);
    nthreads = atoi(argv[2]);
    seconds = atof(argv[3]);
    if (rounds < 1 || nthreads < 1 || nthreads > 64 || !(cpu_out = fopen(argv[4], "w")))
        return 2;
    signal(SIGPROF, on_prof);
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, NULL);
    pthread_t th;
    if (pthread_create(&th, NULL, driver, NULL) != 0)
        return 2;
    pthread_exit(NULL);
}
