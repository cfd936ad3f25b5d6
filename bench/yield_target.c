/* bench/yield_target.c: the known-CPU target of bench/yield_load.py. Two threads each burn
 * SECONDS of their own CPU time (CLOCK_THREAD_CPUTIME_ID) in yield_leaf, reading the clock only
 * every ~1 ms of work, so nearly all of it is user time in one function. At its end each thread
 * appends to FILE one line: "tid start_ns end_ns cpu_ns utime_ns stime_ns nvcsw nivcsw" (its
 * CLOCK_MONOTONIC start and end, its CPU clock, getrusage(RUSAGE_THREAD)'s user and system time
 * and context switches); main adds its own line after the join, then one line "task tid ns" for
 * every other thread still alive (the profiler's own: writer, watcher) with its CPU time so far
 * (/proc/self/task/<tid>/schedstat).
 * Usage: yield_target SECONDS FILE. Build: -O2 -g -fno-omit-frame-pointer -pthread. */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double seconds = 2.0;
static FILE *out;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
volatile uint64_t sink;

static uint64_t ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void yield_leaf(double s)
{
    uint64_t until = ns(CLOCK_THREAD_CPUTIME_ID) + (uint64_t)(s * 1e9), x = 1;
    do {
        for (int i = 0; i < 1000000; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            __asm__ volatile("" : "+r"(x));
        }
    } while (ns(CLOCK_THREAD_CPUTIME_ID) < until);
    sink += x;
}

static void report(uint64_t start)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    uint64_t end = ns(CLOCK_MONOTONIC), cpu = ns(CLOCK_THREAD_CPUTIME_ID);
    pthread_mutex_lock(&lock);
    fprintf(out, "%ld %llu %llu %llu %llu %llu %ld %ld\n", (long)syscall(SYS_gettid), (unsigned long long)start,
            (unsigned long long)end, (unsigned long long)cpu,
            (unsigned long long)ru.ru_utime.tv_sec * 1000000000ull + (unsigned long long)ru.ru_utime.tv_usec * 1000ull,
            (unsigned long long)ru.ru_stime.tv_sec * 1000000000ull + (unsigned long long)ru.ru_stime.tv_usec * 1000ull,
            ru.ru_nvcsw, ru.ru_nivcsw);
    pthread_mutex_unlock(&lock);
}

static void *worker(void *arg)
{
    (void)arg;
    uint64_t start = ns(CLOCK_MONOTONIC);
    yield_leaf(seconds);
    report(start);
    return NULL;
}

int main(int argc, char **argv)
{
    uint64_t start = ns(CLOCK_MONOTONIC);
    if (argc < 3 || !(out = fopen(argv[2], "w")))
        return 2;
    seconds = atof(argv[1]);
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, worker, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    report(start);
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        long tid = atol(e->d_name);
        if (tid <= 0 || tid == (long)syscall(SYS_gettid))
            continue;
        char path[64];
        unsigned long long run = 0;
        snprintf(path, sizeof path, "/proc/self/task/%ld/schedstat", tid);
        FILE *f = fopen(path, "r");
        if (f && fscanf(f, "%llu", &run) == 1)
            fprintf(out, "task %ld %llu\n", tid, run);
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    fclose(out);
    return 0;
}
