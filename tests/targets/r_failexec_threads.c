/* r_failexec_threads: two threads spin while main spins 0.3 s of its CPU, makes an exec that fails
 * (ENOENT), then spins 0.7 s more and exits 0. Prints the CLOCK_MONOTONIC ns of the failed exec. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
static double cpu(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec / 1e9; }
static void *spin(void *a) { (void)a; for (volatile unsigned long i = 0;; i++) ; return NULL; }
int main(void)
{
    pthread_t a, b; pthread_create(&a, NULL, spin, NULL); pthread_create(&b, NULL, spin, NULL);
    while (cpu() < 0.3) ;
    struct timespec n; clock_gettime(CLOCK_MONOTONIC, &n);
    char *argv[] = { "nope", NULL };
    execv("/nonexistent/nope", argv);
    printf("%lld\n", (long long)n.tv_sec * 1000000000LL + n.tv_nsec); fflush(stdout);
    double s = cpu(); while (cpu() < s + 0.7) ;
    return 0;
}
