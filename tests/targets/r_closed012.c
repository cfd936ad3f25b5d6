/* r_closed012 FILE: started with 0, 1 and 2 closed, opens /dev/null three times at once (as a
 * daemon fills them), starts a thread that burns 0.05 s, opens /dev/null and FILE, and writes
 * the five numbers into FILE: "0 1 2 3 4" without the shim. The shim's threads' first files, each
 * on the lowest free number for a moment before it moves high, took 0-2 from it (1 2 3, 0 2 1)
 * in 7-20 of 100 runs. */
#include "burn.h"
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_closed012)

static void *worker(void *arg)
{
    burn_closed012(0.05);
    return arg;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    int a = open("/dev/null", O_RDONLY), b = open("/dev/null", O_WRONLY), c = open("/dev/null", O_WRONLY);
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    int d = open("/dev/null", O_RDONLY);
    int o = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0)
        return 2;
    dprintf(o, "%d %d %d %d %d\n", a, b, c, d, o);
    return 0;
}
