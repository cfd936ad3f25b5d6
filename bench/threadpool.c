/* bench/threadpool.c: a thread-pool target for `make bench`, shaped like an inference engine's
 * thread pool (ggml, OpenMP): as many threads as cores, each step a matrix-vector product
 * split by rows over the threads, the steps separated by a spinning barrier, so any thread
 * interrupted (by a profiler's signal, or by a profiler's own thread taking its core) stalls
 * the others (after a long spin it yields the core, as OpenMP's wait policy does, so an
 * overloaded machine does not turn the run into minutes). Fixed work: a fixed number of timed
 * steps (argv[1], default 20000) after a fixed number of warm-up steps (argv[2], default 2000).
 * Prints a checksum (so the work stays and a profiled run can be checked against an
 * unprofiled one) and the steps per second of the timed steps only, as llama-bench reports
 * tokens per second without the model's load: the pool's first steps measure where the
 * scheduler first puts its threads, not the pool (a second worker started on its creator's CPU
 * is migrated once, and until then the two take turns through the barrier's yield; any other
 * thread in the process, a profiler's included, changes that placement, and over the whole run
 * an idle thread made the pool 2.4% faster, over the timed steps 0.0%). The process's start
 * and end, a profiler's included, are measured elsewhere (the work target's CPU, fork+exec).
 * Never sleeps, never blocks in the kernel between steps.
 * Build: -O2 -g -fno-omit-frame-pointer -pthread. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N 384 /* rows = columns: 576 KB of floats, about 20-40 us a step on 2 threads */

static float mat[N][N];
static float vec[2][N];
static int nthreads;
static long steps = 20000;  /* timed */
static long warmup = 2000; /* before them, untimed */
static struct timespec timed_start; /* set by worker 0 once every thread is past the warm-up */

/* A sense-reversing spinning barrier, as ggml's and OpenMP's active wait. */
static _Atomic int arrived;
static _Atomic int sense;

static void barrier(int *local_sense)
{
    *local_sense = !*local_sense;
    if (atomic_fetch_add(&arrived, 1) == nthreads - 1) {
        atomic_store(&arrived, 0);
        atomic_store(&sense, *local_sense);
        return;
    }
    /* Spin, then yield the core between checks (OpenMP's active wait does the same after its
     * spin count): on a machine with more runnable threads than cores a pure spin waits a whole
     * time slice for a thread that is not running, and the run takes minutes. */
    for (long spins = 0; atomic_load_explicit(&sense, memory_order_acquire) != *local_sense; spins++) {
        if (spins < 20000)
            __builtin_ia32_pause();
        else
            sched_yield();
    }
}

/* Rows [lo, hi) of y = A x, then a normalisation that keeps the values bounded. */
__attribute__((noinline)) static void matvec_rows(const float *x, float *y, int lo, int hi)
{
    for (int r = lo; r < hi; r++) {
        float s = 0;
        for (int c = 0; c < N; c++)
            s += mat[r][c] * x[c];
        y[r] = s * (1.0f / N) + 0.001f * (float)(r & 7);
    }
}

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg, local_sense = 0;
    int lo = N * id / nthreads, hi = N * (id + 1) / nthreads;
    for (long s = 0; s < warmup + steps; s++) {
        matvec_rows(vec[s & 1], vec[!(s & 1)], lo, hi);
        barrier(&local_sense);
        /* Past the barrier every thread has finished the warm-up; the next step is timed. */
        if (id == 0 && s == warmup - 1)
            clock_gettime(CLOCK_MONOTONIC, &timed_start);
    }
    return NULL;
}

/* A step count from the command line: digits only, at most a billion; -1 when it is not one. */
static long count_arg(const char *s)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    return errno || end == s || *end || v < 0 || v > 1000000000L ? -1 : v;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        steps = count_arg(argv[1]);
    if (argc > 2)
        warmup = count_arg(argv[2]);
    if (argc > 3 || steps < 1 || warmup < 0) {
        fprintf(stderr, "usage: threadpool [timed steps, 1 to 1e9 [warm-up steps, 0 to 1e9]]\n");
        return 2;
    }
    cpu_set_t set;
    nthreads = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 2;
    if (nthreads < 1)
        nthreads = 1;
    uint32_t x = 12345;
    for (int r = 0; r < N; r++)
        for (int c = 0; c < N; c++) {
            x = x * 1664525u + 1013904223u;
            mat[r][c] = (float)(x >> 8) / (float)(1u << 24);
        }
    for (int c = 0; c < N; c++)
        vec[0][c] = 1.0f;
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &timed_start); /* without a warm-up; after one, worker 0 sets it again */
    pthread_t *th = calloc((size_t)nthreads, sizeof *th);
    if (!th)
        return 1;
    for (int i = 1; i < nthreads; i++)
        if (pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i) != 0) {
            perror("pthread_create");
            return 1;
        }
    worker((void *)0);
    for (int i = 1; i < nthreads; i++)
        pthread_join(th[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - timed_start.tv_sec) + (double)(t1.tv_nsec - timed_start.tv_nsec) / 1e9;
    uint64_t sum = 0;
    for (int c = 0; c < N; c++) {
        union { float f; uint32_t u; } v = { vec[(warmup + steps) & 1][c] };
        sum = sum * 31 + v.u;
    }
    printf("checksum %016" PRIx64 "\n", sum);
    printf("threads %d warmup %ld steps %ld steps_per_s %.1f\n", nthreads, warmup, steps, steps / secs);
    return 0;
}
