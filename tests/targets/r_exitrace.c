/* r_exitrace: the process ends while other threads are on the CPU. Three threads spin for good;
 * the main thread spins ARGV[2] seconds of CPU (default 0.3), then leaves by ARGV[1]: "return"
 * (from main), "_exit", or "term" (SIGTERM to itself, default action). Prints nothing; exits 0
 * (or dies by SIGTERM). */
#include "burn.h"
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_main)

static void *spinner(void *arg)
{
    volatile unsigned long x = (unsigned long)arg;
    for (;;)
        x = x * 2654435761u + 7;
    return NULL;
}

int main(int argc, char **argv)
{
    const char *way = argc > 1 ? argv[1] : "return";
    double seconds = argc > 2 ? atof(argv[2]) : 0.3;
    for (long i = 0; i < 3; i++) {
        pthread_t t;
        pthread_create(&t, NULL, spinner, (void *)i);
    }
    burn_main(seconds);
    if (strcmp(way, "_exit") == 0)
        _exit(0);
    if (strcmp(way, "term") == 0) {
        kill(getpid(), SIGTERM);
        pause();
    }
    return 0;
}
