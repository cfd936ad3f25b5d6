/* reftimer.h: a reference tick timer for the tests that check the shim's tick-timer counts.
 *
 * The kernel delivers a CPU-time timer's expiry only at a scheduler tick that finds the thread
 * running past it (overruns counted in si_overrun). On a loaded 2-CPU VM a thread was seen to run
 * 20-130 ms of CPU with no delivery at all, so what a thread's CPU time x rate predicts and what
 * any tick timer can have delivered by the thread's end differ by up to such a gap. The truth for
 * the shim's tick timer is therefore what the kernel delivered to an identical timer of the
 * target's own: CLOCK_THREAD_CPUTIME_ID, the same period (1e9 / hz ns, as the shim's), signalled
 * to the same thread, on a real-time signal the shim leaves alone. Both see the same ticks, so
 * their records (1 + si_overrun each) differ only by where each period starts.
 *
 * Use: reftimer_install() once; each thread reftimer_start(&r, hz) on itself, reads r.records
 * whenever it likes. Never call from a signal handler; the handler itself only adds. */
#ifndef PERFSCOPE_TEST_REFTIMER_H
#define PERFSCOPE_TEST_REFTIMER_H

#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define REFTIMER_SIGNAL (SIGRTMIN + 5)

struct reftimer {
    volatile uint64_t records, events;
    timer_t id;
};

static __thread struct reftimer *reftimer_self;

static inline void reftimer_on_signal(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    struct reftimer *r = reftimer_self;
    if (r && si->si_code == SI_TIMER) {
        r->records += 1 + (uint64_t)(si->si_overrun > 0 ? si->si_overrun : 0);
        r->events++;
    }
}

static inline int reftimer_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = reftimer_on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    return sigaction(REFTIMER_SIGNAL, &sa, NULL);
}

/* Arms r on the calling thread's CPU clock: first expiry and period one period of CPU time. */
static inline int reftimer_start(struct reftimer *r, unsigned hz)
{
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = REFTIMER_SIGNAL;
    sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    r->records = r->events = 0;
    reftimer_self = r;
    if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &r->id) != 0)
        return -1;
    long period = (long)(1000000000ull / hz);
    struct itimerspec its = {{period / 1000000000L, period % 1000000000L},
                             {period / 1000000000L, period % 1000000000L}};
    return timer_settime(r->id, 0, &its, NULL);
}

#endif
