/* r_exitsig [DELAY_US]: SIGALRM every millisecond (the first after DELAY_US, default 1000) while
 * the main thread allocates and frees in a loop; the handler ends the process with _exit(3), the
 * async-signal-safe way. The signal lands inside malloc or free (holding the arena lock) most of
 * the time: whatever the shim does in _exit must not need that lock. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static void on_alarm(int sig)
{
    (void)sig;
    _exit(3);
}

int main(int argc, char **argv)
{
    long delay = argc > 1 ? atol(argv[1]) : 1000;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 1000}, {delay / 1000000, delay % 1000000}};
    setitimer(ITIMER_REAL, &it, NULL);
    void *p[64] = {0};
    for (unsigned long i = 0;; i++) {
        int k = i % 64;
        free(p[k]);
        p[k] = malloc(2000 + (i % 7) * 1000); /* above tcache: takes the arena lock */
    }
}
