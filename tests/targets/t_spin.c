/* t_spin [SECONDS]: burns CPU on two threads (main and "spin-2") for SECONDS of each thread's
 * CPU time (default 20), for tests that kill it partway. */
#define _GNU_SOURCE
#include "burn.h"
#include <pthread.h>
#include <stdlib.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_spin)

static double seconds = 20;

static void *run(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "spin-2");
    burn_spin(seconds);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        seconds = atof(argv[1]);
    pthread_t th;
    pthread_create(&th, NULL, run, NULL);
    burn_spin(seconds);
    pthread_join(th, NULL);
    return 0;
}
