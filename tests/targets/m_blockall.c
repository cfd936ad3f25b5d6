/* m_blockall MODE SECONDS [CPU_FILE]: worker threads that block every signal, as liblzma's do
 * (xz -T2): main blocks everything with pthread_sigmask, starts 2 workers (they inherit the
 * mask), restores its own mask, and each worker burns SECONDS of its own CPU time in burn_worker.
 * MODE says who owns SIGPROF:
 *   plain    nobody: the shim can keep sampling the workers;
 *   handler  the target installs a SIGPROF handler of its own first (it never fires): its masks
 *            must then be kept as asked, and the workers' CPU is unsampled;
 *   raw      the workers block SIGPROF with a raw rt_sigprocmask system call: unsampled.
 * Each worker prints whether it sees SIGPROF (and SIGTERM) blocked in its own mask; with
 * CPU_FILE, each worker's tid and CPU time in ns go there ("<tid> <ns>" lines). The workers run
 * inside a phase "work" (include/perfscope.h). Exit 0. */
#define _GNU_SOURCE
#include "burn.h"
#include "perfscope.h"
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_worker)

static double seconds = 1.0;
static const char *mode = "plain";
static FILE *cpu_out;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static int seen_prof[3], seen_term[3]; /* by worker number: what it saw of its own mask */

static void *worker(void *arg)
{
    long n = (long)arg;
    if (strcmp(mode, "raw") == 0) {
        /* The kernel's sigset is 8 bytes; rt_sigprocmask past the C library. */
        unsigned long prof = 1ul << (SIGPROF - 1);
        syscall(SYS_rt_sigprocmask, SIG_BLOCK, &prof, NULL, sizeof prof);
    }
    sigset_t now;
    pthread_sigmask(SIG_BLOCK, NULL, &now);
    seen_prof[n] = sigismember(&now, SIGPROF);
    seen_term[n] = sigismember(&now, SIGTERM);
    burn_worker(seconds);
    pthread_mutex_lock(&out_lock);
    if (cpu_out)
        fprintf(cpu_out, "%ld %llu\n", (long)syscall(SYS_gettid), (unsigned long long)thread_cpu_ns());
    pthread_mutex_unlock(&out_lock);
    return NULL;
}

static void on_prof(int sig)
{
    (void)sig;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        mode = argv[1];
    if (argc > 2)
        seconds = atof(argv[2]);
    if (argc > 3 && !(cpu_out = fopen(argv[3], "w")))
        return 2;
    if (strcmp(mode, "handler") == 0)
        signal(SIGPROF, on_prof);
    perfscope_begin("work");
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t th[2];
    for (long i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, worker, (void *)(i + 1));
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    perfscope_end("work", -1);
    for (int n = 1; n <= 2; n++)
        printf("worker %d: SIGPROF %s, SIGTERM %s\n", n, seen_prof[n] ? "blocked" : "open", seen_term[n] ? "blocked" : "open");
    sigset_t now;
    pthread_sigmask(SIG_BLOCK, NULL, &now);
    printf("main: SIGPROF %s\n", sigismember(&now, SIGPROF) ? "blocked" : "open");
    if (cpu_out)
        fclose(cpu_out);
    return 0;
}
