/* r_failexec_threads: two threads spin while main spins 0.3 s of its CPU, makes an exec that fails
 * (ENOENT), then spins 0.7 s more and exits 0. Prints the CLOCK_MONOTONIC ns of the failed exec.
 * main reads its CPU clock (a system call) every 100,000 turns: reading it every turn made most
 * of main's time system time, which the perf clock does not sample, and left main about 60
 * samples for its 0.7 s (the test's bound is 50). */
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
    while (cpu() < 0.3)
        for (volatile int i = 0; i < 100000; i++) ;
    struct timespec n; clock_gettime(CLOCK_MONOTONIC, &n);
    char *argv[] = { "nope", NULL };
    execv("/nonexistent/nope", argv);
    printf("%lld\n", (long long)n.tv_sec * 1000000000LL + n.tv_nsec); fflush(stdout);
    double s = cpu();
    while (cpu() < s + 0.7)
        for (volatile int i = 0; i < 100000; i++) ;
    return 0;
}
