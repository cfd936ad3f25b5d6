/* r_sigwait: the classic server layout. Main blocks every signal, starts a worker that burns CPU,
 * initialises (0.2 s of CPU), prints "ready" and waits in sigwait() for the signal it serves
 * (the test sends SIGTERM). Prints the signal sigwait returned; exits 0 for SIGTERM, 1 else. */
#include "burn.h"
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_work)

static void *worker(void *a)
{
    (void)a;
    burn_work(3.0);
    return NULL;
}

int main(void)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    pthread_t w;
    pthread_create(&w, NULL, worker, NULL);
    burn_work(0.2); /* initialisation */
    printf("ready\n");
    fflush(stdout);
    int sig = 0;
    sigwait(&all, &sig);
    printf("sigwait returned signal %d\n", sig);
    fflush(stdout);
    return sig == SIGTERM ? 0 : 1;
}
