/* r_profreset: the target profiles itself with setitimer(ITIMER_PROF). Its SIGPROF handler is
 * installed with SA_RESETHAND and SIGUSR1 in sa_mask. The first (one-shot) tick runs the handler,
 * which records whether SIGUSR1 is blocked while it runs; the disposition is then SIG_DFL again,
 * so a second tick kills the process by SIGPROF (status -SIGPROF). */
#include "burn.h"
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

DEFINE_BURN_SINK

static volatile sig_atomic_t calls, usr1_blocked = -1;

static void on_prof(int sig)
{
    (void)sig;
    sigset_t cur;
    sigprocmask(SIG_BLOCK, NULL, &cur);
    usr1_blocked = sigismember(&cur, SIGUSR1);
    calls++;
}

/* Spins until the handler ran or `seconds` of CPU time went by. */
__attribute__((noinline)) static void burn_until_tick(double seconds)
{
    uint64_t until = thread_cpu_ns() + (uint64_t)(seconds * 1e9);
    uint64_t x = 1;
    while (!calls && thread_cpu_ns() < until) {
        for (int i = 0; i < 10000; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            __asm__ volatile("" : "+r"(x));
        }
    }
    burn_sink += x;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_prof;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGUSR1);
    sa.sa_flags = SA_RESETHAND;
    sigaction(SIGPROF, &sa, NULL);
    struct itimerval once = {{0, 0}, {0, 20000}}; /* one tick after 20 ms of CPU */
    setitimer(ITIMER_PROF, &once, NULL);
    burn_until_tick(3.0);
    struct sigaction q;
    sigaction(SIGPROF, NULL, &q);
    printf("handler ran %d time(s); SIGUSR1 blocked in the handler: %s; disposition after: %s\n",
           (int)calls, usr1_blocked == 1 ? "yes" : usr1_blocked == 0 ? "no" : "-",
           q.sa_handler == SIG_DFL ? "SIG_DFL" : "still the handler");
    fflush(stdout);
    calls = 0;
    setitimer(ITIMER_PROF, &once, NULL);
    burn_until_tick(3.0); /* SIG_DFL: the tick ends the process */
    printf("still alive after the second tick; handler ran %d time(s)\n", (int)calls);
    return 0;
}
