/* x_pthread_exit [SECONDS]: the main thread starts one worker and ends with pthread_exit; the
 * worker burns SECONDS of CPU (default 0.2) and returns. glibc then ends the process with exit(0)
 * (the last thread): the atexit handler prints "atexit", the status is 0. Under the shim its
 * writer and watcher threads must not keep the process alive (docs/shim.md). */
#include "burn.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_worker)

static double seconds = 0.2;

static void at_exit(void)
{
    printf("atexit\n"); /* stdio flushed by exit: the end goes through exit(0) */
}

static void *worker(void *arg)
{
    (void)arg;
    burn_worker(seconds);
    printf("worker done\n");
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        seconds = atof(argv[1]);
    atexit(at_exit);
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0)
        return 1;
    pthread_exit(NULL);
}
