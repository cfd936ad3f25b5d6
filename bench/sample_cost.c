/* bench/sample_cost.c: where the CPU time of one stack sample goes, for `make bench`.
 * One thread runs a fixed amount of work at the leaf of a 40-deep call chain (as
 * bench/target.c) under a per-thread perf task-clock at RATE Hz, set up the way the shim sets it
 * up (user time only; overflow signalled as SIGPROF through a read-only two-page ring buffer,
 * or as a synchronous SIGTRAP), with handlers that do more and more of what the shim's does:
 *   none      no clock (the baseline);
 *   ring      ring delivery, a handler that returns at once: the kernel's timer interrupt,
 *             the overflow, the signal's delivery and return;
 *   sigtrap   the same with synchronous SIGTRAP delivery;
 *   tick      the per-thread POSIX CPU timer (timer_create on the thread's CPU clock,
 *             SIGEV_THREAD_ID), the shim's clock at rates up to the kernel's tick rate, with a
 *             handler that returns at once: the kernel checks it at the scheduler tick and
 *             queues SIGPROF from there (at most one signal a tick, whatever RATE asks);
 *   fp        ring + clock_gettime + a frame-pointer walk into a preallocated slot;
 *   libunwind ring + clock_gettime + unw_backtrace (libunwind's caching fast tracer) into it;
 *   unw_step  ring + clock_gettime + libunwind's step-by-step walk from the signal context;
 *   callchain no signal at all: the kernel records each overflow's user call chain (frame
 *             pointers) into a ring buffer that a reader would drain later.
 * Two figures per mode. The thread's own CPU clock (user + system, handler included) over the
 * same work, alternated over ROUNDS rounds; cost per signal = (CPU - CPU of `none` in the same
 * round) / signals: everything, cache effects after the return included, but noisy. And the
 * interruption itself, timed by the TSC: the work loop reads it each iteration, so each
 * interruption is a gap; the handler stamps its entry and exit (callchain: the record's time),
 * which tells the gap of each signal from the other interrupts and splits it into before the
 * handler (timer interrupt, overflow, wakeup, signal frame), the handler, and after it
 * (sigreturn). Medians printed one line per mode: "mode NAME us_per_signal X min A max B
 * signals N gap_us G pre P handler H post Q"; the line of `none` gives, in the same places, the
 * interrupts of its first round (signals) and their median length (gap_us): the machine's own.
 * `shim FILE` as the third and fourth arguments opens no clock and installs no handler (run it
 * under the shim's LD_PRELOAD): it writes each gap to FILE, for bench/pool.py to tell the
 * shim's signals from the other interrupts by the shim's own sample times.
 * It only measures: it is not the shim and shares no code with it.
 * Build: -O2 -g -fno-omit-frame-pointer -pthread -lunwind (x86-64).
 * Usage: sample_cost [rounds] [rate] [main | shim FILE]. */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include <fcntl.h>
#include <libunwind.h>
#include <pthread.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#ifndef TRAP_PERF
#define TRAP_PERF 6
#endif

enum { M_NONE, M_RING, M_SIGTRAP, M_FP, M_UNW, M_STEP, M_CHAIN, M_TICK, M_COUNT };
static const char *names[M_COUNT] = { "none", "ring", "sigtrap", "fp", "libunwind", "unw_step", "callchain", "tick" };

static volatile int mode;
static volatile uint64_t signals;
static uint64_t slot[128];
static uintptr_t stack_lo, stack_hi;

/* The TSC gaps of one run and the handler's stamps: [0] its entry, [1] its exit. */
#define MAX_GAPS 16384
#define MAX_STAMPS 4096
static uint64_t gap_at[MAX_GAPS][2];
static uint32_t ngaps;
static uint64_t stamp[MAX_STAMPS][2];
static volatile uint32_t nstamps;
static uint64_t gap_min; /* TSC ticks: 1 us */

static uint32_t walk_fp(const ucontext_t *uc, uint64_t *frames, uint32_t max)
{
    uint32_t n = 0;
    frames[n++] = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    uintptr_t fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
    while (n < max && fp >= stack_lo && fp + 16 <= stack_hi && !(fp & 7)) {
        uintptr_t next = ((const uintptr_t *)fp)[0];
        frames[n++] = ((const uintptr_t *)fp)[1];
        if (next <= fp)
            break;
        fp = next;
    }
    return n;
}

static uint32_t walk_step(ucontext_t *uc, uint64_t *frames, uint32_t max)
{
    unw_cursor_t c;
    uint32_t n = 0;
    if (unw_init_local2(&c, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) < 0)
        return 0;
    do {
        unw_word_t ip;
        if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || !ip)
            break;
        frames[n++] = ip;
    } while (n < max && unw_step(&c) > 0);
    return n;
}

static void handler(int sig, siginfo_t *si, void *ucv)
{
    uint64_t in = __builtin_ia32_rdtsc();
    (void)sig;
    (void)si;
    signals++;
    uint32_t k = nstamps;
    int m = mode;
    if (m == M_RING || m == M_SIGTRAP || m == M_TICK)
        goto out;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    slot[0] = (uint64_t)ts.tv_nsec;
    if (m == M_FP)
        slot[1] = walk_fp(ucv, slot + 2, 64);
    else if (m == M_UNW)
        slot[1] = (uint64_t)unw_backtrace((void **)(slot + 2), 80);
    else if (m == M_STEP)
        slot[1] = walk_step(ucv, slot + 2, 64);
out:
    if (k < MAX_STAMPS) {
        stamp[k][0] = in;
        stamp[k][1] = __builtin_ia32_rdtsc();
        nstamps = k + 1;
    }
}

__attribute__((noinline)) static uint64_t leaf(uint64_t x, uint64_t n)
{
    uint64_t last = __builtin_ia32_rdtsc();
    for (uint64_t i = 0; i < n; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        x ^= x >> 29;
        uint64_t t = __builtin_ia32_rdtsc();
        if (t - last > gap_min && ngaps < MAX_GAPS) {
            gap_at[ngaps][0] = last;
            gap_at[ngaps++][1] = t;
        }
        last = t;
    }
    return x;
}

#include "chain.h" /* f39 .. f0 over leaf */

#define CHAIN_PAGES 64 /* the call-chain ring: holds a whole run's records, read after it */

static timer_t tick_timer;
#define TICK_TIMES 4 /* the tick mode runs the work this many times (one signal a tick) */

/* The tick mode's clock: this thread's CPU-time timer, SIGPROF to this thread; 0 or -1. */
static int open_tick(void)
{
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = SIGPROF;
    ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    return timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &tick_timer);
}

/* Arms the tick timer at `rate` (0 disarms it). */
static void arm_tick(unsigned rate)
{
    struct itimerspec it;
    memset(&it, 0, sizeof it);
    if (rate) {
        it.it_interval.tv_nsec = (long)(1000000000ul / rate);
        it.it_value = it.it_interval;
    }
    timer_settime(tick_timer, 0, &it, NULL);
}

static int open_clock(int m, unsigned rate, void **rb)
{
    int sigtrap = m == M_SIGTRAP;
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = 1000000000ull / rate;
    a.wakeup_events = 1;
    a.disabled = 1;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    if (sigtrap) {
        a.sigtrap = 1;
        a.remove_on_exec = 1;
    }
    if (m == M_CHAIN) {
        a.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
        a.exclude_callchain_kernel = 1;
        a.use_clockid = 1;
        a.clockid = CLOCK_MONOTONIC;
        a.sample_max_stack = 64;
        a.wakeup_events = 0;
        a.watermark = 1;
        a.wakeup_watermark = CHAIN_PAGES * 4096 / 2;
    }
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0)
        return -1;
    *rb = NULL;
    if (m == M_CHAIN) {
        *rb = mmap(NULL, (CHAIN_PAGES + 1) * 4096ul, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (*rb == MAP_FAILED) {
            close(fd);
            return -1;
        }
    } else if (!sigtrap) {
        long page = sysconf(_SC_PAGESIZE);
        *rb = mmap(NULL, 2 * (size_t)page, PROT_READ, MAP_SHARED, fd, 0);
        struct f_owner_ex owner = { .type = F_OWNER_TID, .pid = (pid_t)syscall(SYS_gettid) };
        if (*rb == MAP_FAILED || fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK) < 0 ||
            fcntl(fd, F_SETSIG, SIGPROF) < 0 || fcntl(fd, F_SETOWN_EX, &owner) < 0) {
            close(fd);
            return -1;
        }
    }
    return fd;
}

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int g_argc;
static char **g_argv;
static int measure(void);

static void *thread_main(void *arg)
{
    (void)arg;
    return (void *)(intptr_t)measure();
}

/* The measuring runs on a thread of its own by default, as an engine's workers do; "main" as
 * the third argument measures on the main thread instead (libunwind's fast tracer walks a
 * different set of outermost C library frames there). */
int main(int argc, char **argv)
{
    g_argc = argc;
    g_argv = argv;
    if (argc > 3 && strcmp(argv[3], "main") == 0)
        return measure();
    pthread_t t;
    void *rc;
    if (pthread_create(&t, NULL, thread_main, NULL) != 0 || pthread_join(t, &rc) != 0)
        return 2;
    return (int)(intptr_t)rc;
}

static double median(double *v, int n)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof v[0], cmp);
    return v[n / 2];
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double tsc_per_us;

/* The call-chain ring's records, read after the run: each one's time as a TSC stamp (mapped
 * through the run's two (TSC, monotonic) readings); returns how many. */
static uint64_t chain_records(void *rb, uint64_t tsc0, uint64_t ns0, uint64_t tsc1, uint64_t ns1)
{
    struct perf_event_mmap_page *pg = rb;
    uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE), n = 0;
    const unsigned char *data = (const unsigned char *)rb + pg->data_offset;
    double k = ns1 > ns0 ? (double)(tsc1 - tsc0) / (double)(ns1 - ns0) : 0;
    for (uint64_t off = 0; off + sizeof(struct perf_event_header) <= head && off + 16 <= pg->data_size;) {
        const struct perf_event_header *h = (const void *)(data + off);
        if (h->size == 0)
            break;
        if (h->type == PERF_RECORD_SAMPLE) {
            uint64_t t = *(const uint64_t *)(h + 1);
            if (nstamps < MAX_STAMPS) {
                stamp[nstamps][0] = stamp[nstamps][1] = tsc0 + (uint64_t)((double)(t - ns0) * k);
                nstamps++;
            }
            n++;
        }
        off += h->size;
    }
    return n;
}

/* Each stamped signal's gap: its length and its parts, in us, medians into out[4]. */
static void split_gaps(double out[4])
{
    static double part[4][MAX_STAMPS];
    int n = 0;
    uint32_t g = 0;
    for (uint32_t i = 0; i < nstamps; i++) {
        while (g < ngaps && gap_at[g][1] < stamp[i][0])
            g++;
        if (g == ngaps)
            break;
        if (gap_at[g][0] > stamp[i][0] || gap_at[g][1] < stamp[i][1])
            continue; /* not inside one gap (a stamp before the loop began) */
        part[0][n] = (double)(gap_at[g][1] - gap_at[g][0]) / tsc_per_us;
        part[1][n] = (double)(stamp[i][0] - gap_at[g][0]) / tsc_per_us;
        part[2][n] = (double)(stamp[i][1] - stamp[i][0]) / tsc_per_us;
        part[3][n] = (double)(gap_at[g][1] - stamp[i][1]) / tsc_per_us;
        n++;
    }
    for (int k = 0; k < 4; k++)
        out[k] = median(part[k], n);
}

/* Without a clock: every gap is an interrupt of the machine's own (the scheduler tick, a device,
 * another CPU's call): its median length into out[0], the rest 0. */
static void all_gaps(double out[4])
{
    static double len[MAX_GAPS];
    for (uint32_t i = 0; i < ngaps; i++)
        len[i] = (double)(gap_at[i][1] - gap_at[i][0]) / tsc_per_us;
    out[0] = median(len, (int)ngaps);
    out[1] = out[2] = out[3] = 0;
}

/* Under the shim: every gap of ROUNDS runs of the work, as "tid start_ns end_ns" lines
 * (CLOCK_MONOTONIC, the clock of the shim's sample times) into `path`, for the caller to match
 * with the shim's samples (bench/pool.py). */
static int measure_shim(int rounds, uint64_t iters, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return 2;
    uint64_t sink = 0;
    long tid = syscall(SYS_gettid);
    double cpu = 0;
    for (int r = 0; r < rounds; r++) {
        ngaps = 0;
        uint64_t tsc0 = __builtin_ia32_rdtsc(), ns0 = mono_ns();
        double t0 = thread_cpu();
        sink ^= f0(sink + (uint64_t)r, iters);
        cpu += thread_cpu() - t0;
        uint64_t tsc1 = __builtin_ia32_rdtsc(), ns1 = mono_ns();
        double k = (double)(ns1 - ns0) / (double)(tsc1 - tsc0);
        for (uint32_t i = 0; i < ngaps; i++)
            fprintf(f, "%ld %.0f %.0f\n", tid, (double)ns0 + (double)(gap_at[i][0] - tsc0) * k,
                    (double)ns0 + (double)(gap_at[i][1] - tsc0) * k);
    }
    printf("mode shim cpu_s %.6f\n", cpu);
    fprintf(stderr, "sink %llx\n", (unsigned long long)sink);
    return fclose(f) == 0 ? 0 : 2;
}

static int measure(void)
{
    int argc = g_argc;
    char **argv = g_argv;
    int rounds = argc > 1 ? atoi(argv[1]) : 7;
    unsigned rate = argc > 2 ? (unsigned)atoi(argv[2]) : 997;
    uint64_t iters = 24000000ull; /* ~0.3 s of CPU */
    if (rounds < 1 || rounds > 99 || rate < 1)
        return 2;
    uint64_t c0 = __builtin_ia32_rdtsc(), n0 = mono_ns();
    while (mono_ns() - n0 < 20000000)
        ;
    tsc_per_us = (double)(__builtin_ia32_rdtsc() - c0) / (double)(mono_ns() - n0) * 1000.0;
    gap_min = (uint64_t)tsc_per_us;
    if (argc > 4 && strcmp(argv[3], "shim") == 0)
        return measure_shim(rounds, iters, argv[4]);
    char here;
    stack_hi = (uintptr_t)&here + 4096;
    stack_lo = (uintptr_t)&here - (1u << 20);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    sigaction(SIGTRAP, &sa, NULL);
    void *warm[8];
    unw_backtrace(warm, 8); /* libunwind's first-use set-up, outside any handler */
    static double cost[M_COUNT][99], gap[M_COUNT][4][99];
    static uint64_t nsig[M_COUNT][99];
    int refused[M_COUNT] = { 0 };
    uint64_t sink = 0;
    for (int r = 0; r < rounds; r++) {
        double base = 0;
        for (int k = 0; k < M_COUNT; k++) {
            int m = (k + r) % M_COUNT; /* rotate the order each round */
            void *rb = NULL;
            int fd = -1;
            if (m == M_TICK && open_tick() != 0) {
                refused[m] = 1;
                continue;
            }
            if (m != M_NONE && m != M_TICK) {
                fd = open_clock(m, rate, &rb);
                if (fd < 0) {
                    refused[m] = 1;
                    continue;
                }
            }
            mode = m;
            signals = 0;
            ngaps = nstamps = 0;
            uint64_t tsc0 = __builtin_ia32_rdtsc(), ns0 = mono_ns();
            double t0 = thread_cpu();
            if (fd >= 0)
                ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
            if (m == M_TICK)
                arm_tick(rate);
            /* the tick delivers at most one signal a tick: 4x the work gives it as many */
            uint64_t times = m == M_TICK ? TICK_TIMES : 1;
            for (uint64_t q = 0; q < times; q++)
                sink ^= f0(sink + (uint64_t)r, iters);
            if (fd >= 0)
                ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
            if (m == M_TICK) {
                arm_tick(0);
                timer_delete(tick_timer);
            }
            double t1 = thread_cpu();
            uint64_t tsc1 = __builtin_ia32_rdtsc(), ns1 = mono_ns();
            if (m == M_CHAIN)
                signals = chain_records(rb, tsc0, ns0, tsc1, ns1);
            double parts[4];
            if (m == M_NONE)
                all_gaps(parts);
            else
                split_gaps(parts);
            for (int q = 0; q < 4; q++)
                gap[m][q][r] = parts[q];
            if (rb)
                munmap(rb, (m == M_CHAIN ? CHAIN_PAGES + 1 : 2) * (size_t)sysconf(_SC_PAGESIZE));
            if (fd >= 0)
                close(fd);
            cost[m][r] = t1 - t0;
            nsig[m][r] = m == M_NONE ? ngaps : signals;
            if (m == M_NONE)
                base = t1 - t0;
        }
        /* the baseline of this round, whatever the order */
        for (int m = 1; m < M_COUNT; m++)
            cost[m][r] = nsig[m][r] ? (cost[m][r] - (m == M_TICK ? TICK_TIMES : 1) * (base ? base : cost[M_NONE][r])) /
                                          (double)nsig[m][r] * 1e6 : 0;
    }
    /* none: the interrupts a round without a clock and their median length, in the modes' format */
    printf("mode none us_per_signal 0 min 0 max 0 signals %llu gap_us %.2f pre 0 handler 0 post 0\n",
           (unsigned long long)nsig[M_NONE][0], median(gap[M_NONE][0], rounds));
    for (int m = 1; m < M_COUNT; m++) {
        if (refused[m]) {
            printf("mode %s refused\n", names[m]);
            continue;
        }
        double c[99];
        uint64_t s[99];
        for (int r = 0; r < rounds; r++) {
            c[r] = cost[m][r];
            s[r] = nsig[m][r];
        }
        qsort(c, (size_t)rounds, sizeof c[0], cmp);
        printf("mode %s us_per_signal %.2f min %.2f max %.2f signals %llu gap_us %.2f pre %.2f handler %.2f post %.2f\n",
               names[m], c[rounds / 2], c[0], c[rounds - 1], (unsigned long long)s[0], median(gap[m][0], rounds),
               median(gap[m][1], rounds), median(gap[m][2], rounds), median(gap[m][3], rounds));
    }
    fprintf(stderr, "sink %llx\n", (unsigned long long)sink);
    return 0;
}
