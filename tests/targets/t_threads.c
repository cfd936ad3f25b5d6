/* t_threads REPORT [SCALE [REF_HZ]]: main and three named threads each burn a known CPU time in their own
 * function (main 0.3 s in burn_main, "burn-a" 0.4 s in burn_a, "burn-b" 0.8 s in burn_b,
 * "burn-c" 1.2 s in burn_c; times multiplied by SCALE). At the end every thread's total CPU time
 * (CLOCK_THREAD_CPUTIME_ID) goes to REPORT as one JSON line per thread:
 *   {"tid":N,"name":"burn-a","fn":"burn_a","addr":N,"cpu0_ns":N,"t0_ns":N,"cpu_ns":N}
 * `addr` is the run-time address of the function (for nm-based symbol ranges); cpu0_ns and t0_ns
 * the thread's CPU time and CLOCK_MONOTONIC when it reached our code (main() for the main thread:
 * what it spent before, in exec and the dynamic loader, no sampler can see); user_ns and sys_ns
 * its user and system time by getrusage(RUSAGE_THREAD) at the end (the kernel's estimate), sys0_ns
 * its system time at t0; t1_ns CLOCK_MONOTONIC just after the burn (and after cpu_ns). With REF_HZ > 0 each thread also runs a
 * reference tick timer at that rate from t0 (reftimer.h): ref_records and ref_events are what the
 * kernel delivered to it up to t1_ns. */
#define _GNU_SOURCE
#include "burn.h"
#include "reftimer.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_main)
DEFINE_BURN(burn_a)
DEFINE_BURN(burn_b)
DEFINE_BURN(burn_c)

struct job {
    const char *name, *fn;
    uint64_t (*burn)(double);
    double seconds;
    pid_t tid;
    uint64_t cpu0_ns, t0_ns, cpu_ns, user_ns, sys_ns, sys0_ns, t1_ns, ref_records, ref_events;
    pthread_barrier_t *ready;
    unsigned ref_hz;
    struct reftimer ref;
};

static uint64_t thread_sys_ns(void)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return (uint64_t)ru.ru_stime.tv_sec * 1000000000ull + (uint64_t)ru.ru_stime.tv_usec * 1000ull;
}

static void start_reference(struct job *j)
{
    if (j->ref_hz && reftimer_start(&j->ref, j->ref_hz) != 0) {
        perror("reference timer");
        exit(1);
    }
}

static void *run(void *arg)
{
    struct job *j = arg;
    if (!j->t0_ns) {
        j->cpu0_ns = thread_cpu_ns();
        j->t0_ns = mono_ns();
        j->sys0_ns = thread_sys_ns();
        start_reference(j);
    }
    j->tid = (pid_t)syscall(SYS_gettid);
    pthread_setname_np(pthread_self(), j->name);
    pthread_barrier_wait(j->ready);
    j->burn(j->seconds);
    j->cpu_ns = thread_cpu_ns();
    /* The reference's records and t1 from one moment: a delivery between the two reads (one
     * can weigh 100 records and more) would count for the shim's samples before t1 and not here. */
    uint64_t events;
    do {
        events = j->ref.events;
        j->ref_records = j->ref.records;
        j->t1_ns = mono_ns();
    } while (j->ref.events != events);
    j->ref_events = events;
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    j->user_ns = (uint64_t)ru.ru_utime.tv_sec * 1000000000ull + (uint64_t)ru.ru_utime.tv_usec * 1000ull;
    j->sys_ns = (uint64_t)ru.ru_stime.tv_sec * 1000000000ull + (uint64_t)ru.ru_stime.tv_usec * 1000ull;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: t_threads REPORT [SCALE]\n");
        return 2;
    }
    uint64_t main_cpu0 = thread_cpu_ns(), main_t0 = mono_ns(), main_sys0 = thread_sys_ns();
    double scale = argc > 2 ? atof(argv[2]) : 1.0;
    unsigned ref_hz = argc > 3 ? (unsigned)atoi(argv[3]) : 0;
    if (ref_hz && reftimer_install() != 0) {
        perror("sigaction");
        return 1;
    }
    pthread_barrier_t ready;
    pthread_barrier_init(&ready, NULL, 4);
    struct job jobs[4] = {
        {.name = "burn-main", .fn = "burn_main", .burn = burn_main, .seconds = 0.3 * scale,
         .cpu0_ns = main_cpu0, .t0_ns = main_t0, .sys0_ns = main_sys0, .ready = &ready, .ref_hz = ref_hz},
        {.name = "burn-a", .fn = "burn_a", .burn = burn_a, .seconds = 0.4 * scale, .ready = &ready, .ref_hz = ref_hz},
        {.name = "burn-b", .fn = "burn_b", .burn = burn_b, .seconds = 0.8 * scale, .ready = &ready, .ref_hz = ref_hz},
        {.name = "burn-c", .fn = "burn_c", .burn = burn_c, .seconds = 1.2 * scale, .ready = &ready, .ref_hz = ref_hz},
    };
    start_reference(&jobs[0]);
    pthread_t th[4];
    for (int i = 1; i < 4; i++)
        if (pthread_create(&th[i], NULL, run, &jobs[i]) != 0) {
            perror("pthread_create");
            return 1;
        }
    run(&jobs[0]);
    for (int i = 1; i < 4; i++)
        pthread_join(th[i], NULL);
    FILE *f = fopen(argv[1], "w");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    for (int i = 0; i < 4; i++)
        fprintf(f, "{\"tid\":%d,\"name\":\"%s\",\"fn\":\"%s\",\"addr\":%lu,\"cpu0_ns\":%lu,"
                   "\"t0_ns\":%lu,\"cpu_ns\":%lu,\"user_ns\":%lu,\"sys_ns\":%lu,\"sys0_ns\":%lu,\"t1_ns\":%lu,"
                   "\"ref_records\":%lu,\"ref_events\":%lu}\n",
                (int)jobs[i].tid, jobs[i].name, jobs[i].fn, (unsigned long)(uintptr_t)jobs[i].burn,
                (unsigned long)jobs[i].cpu0_ns, (unsigned long)jobs[i].t0_ns, (unsigned long)jobs[i].cpu_ns,
                (unsigned long)jobs[i].user_ns, (unsigned long)jobs[i].sys_ns, (unsigned long)jobs[i].sys0_ns,
                (unsigned long)jobs[i].t1_ns,
                (unsigned long)jobs[i].ref_records, (unsigned long)jobs[i].ref_events);
    fclose(f);
    return 0;
}
