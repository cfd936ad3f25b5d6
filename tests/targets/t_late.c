/* t_late SHIM REPORT: threads that exist before the shim starts. Starts two named threads
 * ("late-a", "late-b") spinning in burn_late_a / burn_late_b, lets them run 50 ms, then loads SHIM
 * with dlopen (its constructor must find them through /proc/self/task), and lets each burn 0.3 s
 * more of its CPU time. REPORT gets one JSON line per thread:
 *   {"tid":N,"name":..,"fn":..,"addr":N,"t0_ns":N,"cpu0_ns":N,"cpu_ns":N}
 * t0_ns: CLOCK_MONOTONIC just after dlopen returned; cpu0_ns: the thread's CPU time then (read
 * through its CPU clock id); cpu_ns: its CPU time at the end. */
#define _GNU_SOURCE
#include "burn.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_late_a)
DEFINE_BURN(burn_late_b)

struct job {
    const char *name, *fn;
    uint64_t (*burn)(double);
    pid_t tid;
    volatile int go;
    uint64_t cpu_ns;
};

static void *run(void *arg)
{
    struct job *j = arg;
    j->tid = (pid_t)syscall(SYS_gettid);
    pthread_setname_np(pthread_self(), j->name);
    while (!j->go)
        j->burn(0.005);
    j->burn(0.3);
    j->cpu_ns = thread_cpu_ns();
    return NULL;
}

static uint64_t cpu_of(pthread_t th)
{
    clockid_t cid;
    struct timespec ts;
    if (pthread_getcpuclockid(th, &cid) != 0 || clock_gettime(cid, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: t_late SHIM REPORT\n");
        return 2;
    }
    struct job jobs[2] = {{"late-a", "burn_late_a", burn_late_a, 0, 0, 0},
                          {"late-b", "burn_late_b", burn_late_b, 0, 0, 0}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, run, &jobs[i]);
    usleep(50000);
    if (!dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL)) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    uint64_t t0 = mono_ns(), cpu0[2];
    for (int i = 0; i < 2; i++) {
        cpu0[i] = cpu_of(th[i]);
        jobs[i].go = 1;
    }
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    FILE *f = fopen(argv[2], "w");
    if (!f)
        return 1;
    for (int i = 0; i < 2; i++)
        fprintf(f, "{\"tid\":%d,\"name\":\"%s\",\"fn\":\"%s\",\"addr\":%lu,\"t0_ns\":%llu,\"cpu0_ns\":%llu,\"cpu_ns\":%llu}\n",
                (int)jobs[i].tid, jobs[i].name, jobs[i].fn, (unsigned long)(uintptr_t)jobs[i].burn,
                (unsigned long long)t0, (unsigned long long)cpu0[i], (unsigned long long)jobs[i].cpu_ns);
    fclose(f);
    return 0;
}
