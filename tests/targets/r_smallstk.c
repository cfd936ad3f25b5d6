/* r_smallstk BYTES: a thread with a 32 KiB stack (as thread pools that size their stacks tightly
 * make them) recurses until about BYTES of it are in use, then burns 0.3 s of CPU there, so the
 * samples land while the stack is nearly full. Prints one line and exits 0. */
#include "burn.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_small)

static long use;

__attribute__((noinline)) static void deep(long left)
{
    volatile char pad[512];
    memset((char *)pad, 1, sizeof pad);
    if (left > 512)
        deep(left - 512);
    else
        burn_small(0.3);
    burn_sink += pad[3];
}

static void *worker(void *a)
{
    (void)a;
    deep(use);
    return NULL;
}

int main(int argc, char **argv)
{
    use = argc > 1 ? atol(argv[1]) : 18000;
    pthread_attr_t at;
    pthread_attr_init(&at);
    if (pthread_attr_setstacksize(&at, 32768) != 0)
        return 2;
    pthread_t t;
    if (pthread_create(&t, &at, worker, NULL) != 0) {
        printf("pthread_create failed\n");
        return 3;
    }
    pthread_join(t, NULL);
    printf("ok with %ld bytes of a 32 KiB stack in use\n", use);
    return 0;
}
