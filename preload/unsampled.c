/* unsampled.c: the CPU time the sampler could not see (unsampled.h). A thread that keeps
 * SIGPROF blocked gets no samples; where the shim cannot keep SIGPROF out of its mask
 * (sigmask.c: the target's own SIGPROF handler, a raw rt_sigprocmask, setcontext, a thread
 * already running before the shim), its CPU time is measured instead. Every 250 ms (a writer
 * pass) every sampled thread's CPU clock is read; when it ran at least UNSAMPLED_MIN_NS since the last check
 * and our signals stand for less than half of that, its mask is read from
 * /proc/self/task/<tid>/status: with SIGPROF blocked, the CPU time the signals do not stand for
 * is unsampled. Consecutive unsampled checks make one stretch, written to unsampled.jsonl when
 * the thread is sampled again, ends, or has run UNSAMPLED_SPAN_NS, so the report can share it
 * out over the phases by time. A thread's exit hook records its last CPU time and mask, so a
 * thread that lived between two passes is counted too. Never from the signal handler; only the
 * writer thread, or the way out once the writer is stopped, touches the checks. */
#include "unsampled.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


#include "clock.h"
#include "config.h"
#include "fdcache.h"
#include "fds.h"
#include "log.h"
#include "markers.h"
#include "safefmt.h"
#include "sampler.h"
#include "shim.h"
#include "sigmask.h"
#include "runfolder.h"

#define UNSAMPLED_MIN_NS 1000000ull       /* less CPU than this since the last check: wait */
#define UNSAMPLED_SPAN_NS 1000000000ull   /* a stretch is written after at most this long */
#define UNSAMPLED_CHECK_NS 250000000ull   /* live threads' clocks read at most this often */

static uint64_t total_ns;   /* this process's unsampled CPU time so far */
static int total_threads;   /* threads with some */
static pid_t totals_pid;    /* whose totals they are (a fork child starts from zero) */

static uint64_t cpu_of(clockid_t c)
{
    struct timespec ts;
    if (clock_gettime(c, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void totals_here(void)
{
    if (totals_pid != getpid()) {
        totals_pid = getpid();
        total_ns = 0;
        total_threads = 0;
    }
}

void unsampled_thread_start(struct ps_thread *t, int self)
{
    memset(&t->us, 0, sizeof t->us);
    t->us.cpu_ns = cpu_of(self ? CLOCK_THREAD_CPUTIME_ID : clock_of_thread(t->tid));
    t->us.arrived = atomic_load(&t->arrived);
    t->us.check_ns = ps_now_ns();
}

static int self_prof_blocked(void)
{
    sigset_t now;
    if (ps_real_pthread_sigmask(SIG_BLOCK, NULL, &now) != 0)
        return -1;
    return sigismember(&now, SIGPROF) == 1;
}

void unsampled_thread_end(struct ps_thread *t)
{
    atomic_store(&t->us.ending, 1);
    t->us.end_cpu_ns = cpu_of(CLOCK_THREAD_CPUTIME_ID);
    t->us.end_ns = ps_now_ns();
    t->us.end_blocked = self_prof_blocked();
    t->us.end_known = t->us.end_cpu_ns > 0;
}

/* Whether thread tid of this process blocks SIGPROF now: 1, 0, or -1 (gone, unreadable). */
static int prof_blocked(pid_t tid)
{
    char path[64], buf[2048];
    /* Under a seccomp filter that may kill on open (fds.c's seal), no file is opened here. */
    if (!fds_may_open())
        return -1;
    snprintf(path, sizeof path, "/proc/self/task/%d/status", (int)tid);
    ssize_t n = fdcache_read(path, buf, sizeof buf); /* kept until the thread is handed back */
    if (n <= 0)
        return -1;
    const char *p = strstr(buf, "\nSigBlk:");
    if (!p)
        return -1;
    unsigned long long mask = strtoull(p + 8, NULL, 16);
    return (int)((mask >> (SIGPROF - 1)) & 1);
}

/* The thread's name, where the writer has not read it yet (a short process). */
static void fill_comm(struct ps_thread *t)
{
    if (t->comm[0])
        return;
    char path[64], name[17] = { 0 };
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)t->tid);
    int fd = fds_run_open(path, O_RDONLY, 0); /* not once a filter may forbid it */
    if (fd < 0)
        return;
    ssize_t n = read(fd, name, 16);
    ps_real_close(fd);
    if (n > 0 && name[n - 1] == '\n')
        n--;
    if (n > 0)
        memcpy(t->comm, name, (size_t)n);
}

static void close_span(struct ps_thread *t)
{
    struct ps_unsampled *u = &t->us;
    if (!u->span_cpu)
        return;
    /* Built without allocation: the way out runs this on the thread that exits or execs, which
     * may be a handler that interrupted malloc (an exec from a handler). */
    char comm[17], line[256];
    memcpy(comm, t->comm, 16);
    comm[16] = 0;
    struct safefmt f;
    safefmt_init(&f, line, sizeof line);
    safefmt_str(&f, "{\"pid\":");
    safefmt_i64(&f, (int64_t)getpid());
    safefmt_str(&f, ",\"tid\":");
    safefmt_i64(&f, (int64_t)t->tid);
    safefmt_str(&f, ",\"comm\":");
    safefmt_json_str(&f, comm);
    safefmt_str(&f, ",\"t0_ns\":");
    safefmt_u64(&f, u->span_t0);
    safefmt_str(&f, ",\"t1_ns\":");
    safefmt_u64(&f, u->span_t1);
    safefmt_str(&f, ",\"cpu_ns\":");
    safefmt_u64(&f, u->span_cpu);
    safefmt_str(&f, "}\n");
    if (!f.overflow)
        markers_append_line(RUN_UNSAMPLED, line);
    u->span_t0 = u->span_t1 = u->span_cpu = 0;
}

static void add_to_span(struct ps_thread *t, uint64_t from, uint64_t to, uint64_t cpu)
{
    struct ps_unsampled *u = &t->us;
    totals_here();
    if (!u->counted) {
        u->counted = 1;
        total_threads++;
        fill_comm(t);
        ps_log_once("unsampled", "thread %d (%.16s) runs with SIGPROF blocked (%s): it is not sampled; its CPU time is written to %s",
                    (int)t->tid, t->comm,
                    sampler_target_prof_default() ? "a mask the shim could not keep SIGPROF out of: a raw rt_sigprocmask, setcontext, a thread older than the shim, or a SIGPROF of the target's own waiting"
                                                  : "the target has a SIGPROF handler of its own, so its masks are kept as asked",
                    RUN_UNSAMPLED);
    }
    total_ns += cpu;
    if (!u->span_cpu)
        u->span_t0 = from;
    u->span_t1 = to;
    u->span_cpu += cpu;
}

/* One check of thread t: at time now it had used cpu ns; blocked: its mask then (1, 0), or -1
 * to read it when needed. */
static void check(struct ps_thread *t, uint64_t now, uint64_t cpu, int blocked)
{
    struct ps_unsampled *u = &t->us;
    if (t->chain_sampled) {
        /* The kernel takes this thread's samples whatever its mask: nothing to lose. */
        u->cpu_ns = cpu;
        u->arrived = atomic_load(&t->arrived);
        u->check_ns = now;
        return;
    }
    if (cpu < u->cpu_ns + UNSAMPLED_MIN_NS)
        return; /* too little to tell: the next check sees it with more */
    uint64_t arrived = atomic_load(&t->arrived);
    uint64_t d_cpu = cpu - u->cpu_ns;
    uint64_t covered = (arrived - u->arrived) * (1000000000ull / (uint64_t)ps_cfg.hz);
    uint64_t lost = 0;
    if (covered < d_cpu / 2) {
        if (blocked < 0) {
            blocked = prof_blocked(t->tid);
            /* The mask from /proc, of a thread that may be ending since its state was read
             * (the writer preempted in between), is not the thread's own: its exit hook blocks
             * SIGPROF (a sampled thread would read as blocked), one read showed SigBlk without
             * SIGPROF (0) for a thread whose hook had recorded it blocked, and a thread that is
             * gone cannot be read at all. Once its hook has begun, check_ended counts the
             * stretch with the mask the hook recorded first; an unreadable mask (/proc shut to
             * us) tells nothing either. So the stretch stays unspent for the next check: spent
             * here, m_blockexit lost a thread's 30 ms in about 1 run of 20. */
            if (blocked < 0 || atomic_load(&t->us.ending) || atomic_load(&t->state) != PS_T_LIVE)
                return;
        }
        if (blocked == 1)
            lost = d_cpu - covered;
    }
    if (lost)
        add_to_span(t, u->check_ns, now, lost);
    else
        close_span(t);
    if (u->span_cpu && now - u->span_t0 >= UNSAMPLED_SPAN_NS)
        close_span(t);
    u->cpu_ns = cpu;
    u->arrived = arrived;
    u->check_ns = now;
}

/* A thread that exited (its exit hook ran) or is gone (adopted, reaped): last check, stretch
 * written. */
static void check_ended(struct ps_thread *t)
{
    if (t->us.final_done)
        return;
    if (t->us.end_known)
        check(t, t->us.end_ns, t->us.end_cpu_ns, t->us.end_blocked);
    close_span(t);
    t->us.final_done = 1;
}

int unsampled_thread_retired(const struct ps_thread *t)
{
    return t->us.final_done || ps_cfg.hz <= 0 || !sampler_installed();
}

/* final: the way out (every thread, every stretch written). Otherwise threads that ended are
 * always seen (the drain after this pass hands them back), live ones every UNSAMPLED_CHECK_NS. */
static void check_all(int final)
{
    static uint64_t last_live;
    if (ps_cfg.hz <= 0 || !sampler_installed())
        return;
    uint64_t now = ps_now_ns();
    int live = final || now - last_live >= UNSAMPLED_CHECK_NS;
    if (live)
        last_live = now;
    pid_t self = ps_gettid();
    int n = atomic_load(&ps_threads_used);
    for (int i = 0; i < n; i++) {
        struct ps_thread *t = &ps_threads[i];
        int st = atomic_load(&t->state);
        if (st == PS_T_EXITED) {
            check_ended(t);
            continue;
        }
        if (st != PS_T_LIVE || !live)
            continue;
        if (t->tid == self) {
            check(t, ps_now_ns(), cpu_of(CLOCK_THREAD_CPUTIME_ID), self_prof_blocked());
        } else {
            uint64_t cpu = cpu_of(clock_of_thread(t->tid));
            if (cpu)
                check(t, ps_now_ns(), cpu, -1);
        }
        if (final)
            close_span(t);
    }
}

void unsampled_pass(void)
{
    check_all(0);
}

void unsampled_finish(void)
{
    check_all(1);
    totals_here();
    if (total_ns)
        ps_log("%.3f CPU s on %d thread(s) ran with SIGPROF blocked and were not sampled (%s)", (double)total_ns / 1e9,
               total_threads, RUN_UNSAMPLED);
}

void unsampled_totals(double *cpu_s, int *threads)
{
    totals_here();
    *cpu_s = (double)total_ns / 1e9;
    *threads = total_threads;
}
