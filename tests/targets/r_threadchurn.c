/* r_threadchurn: ROUNDS rounds of four threads started and joined, each spinning twenty thousand
 * iterations (some microseconds): thousands of threads a second, four alive at a time. Prints the
 * threads started. The shim's registry takes a slot for each thread, and a slot comes back only
 * at the writer's next pass: a registry filled by threads that already ended left later threads
 * unsampled. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static volatile long sink;

static void *spin(void *arg)
{
    for (long i = 0; i < 20000; i++)
        sink += i;
    return arg;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 16000, started = 0;
    for (int r = 0; r < rounds; r++) {
        pthread_t t[4];
        for (int i = 0; i < 4; i++) {
            if (pthread_create(&t[i], NULL, spin, NULL) != 0)
                return 1;
            started++;
        }
        for (int i = 0; i < 4; i++)
            pthread_join(t[i], NULL);
    }
    printf("%d\n", started);
    return 0;
}
