/* t_sigprof: installs its own SIGPROF handler (SA_SIGINFO | SA_RESTART) and an ITIMER_PROF of
 * 10 ms, burns 0.5 s of CPU, stops the timer and prints
 *   "ticks N foreign M"
 * N: SIGPROFs with si_code SI_KERNEL (its own itimer's), M: any other SIGPROF it was handed. */
#define _GNU_SOURCE
#include "burn.h"
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_prof)

static volatile sig_atomic_t ticks, foreign;

static void on_prof(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    if (si->si_code == SI_KERNEL)
        ticks++;
    else
        foreign++;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_prof;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGPROF, &sa, NULL) != 0) {
        perror("sigaction");
        return 1;
    }
    struct itimerval it = {{0, 10000}, {0, 10000}};
    if (setitimer(ITIMER_PROF, &it, NULL) != 0) {
        perror("setitimer");
        return 1;
    }
    burn_prof(0.5);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &off, NULL);
    printf("ticks %d foreign %d\n", (int)ticks, (int)foreign);
    return 0;
}
