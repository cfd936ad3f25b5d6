/* r_alias: sigaction(sig, &sa, &sa), the same struct for the new and the old action. The kernel
 * reads the new action first, so this installs the handler and returns the old one in sa. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

static volatile sig_atomic_t got;

static void h(int s)
{
    (void)s;
    got++;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = h;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, &sa);
    printf("old SIGUSR1 disposition %s\n", sa.sa_handler == SIG_DFL ? "SIG_DFL" : "other");
    raise(SIGUSR1);
    printf("SIGUSR1 handler ran %d time(s)\n", (int)got);
    fflush(stdout);
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = h;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGPROF, &sa, &sa);
    printf("old SIGPROF disposition %s\n", sa.sa_handler == SIG_DFL ? "SIG_DFL" : "other");
    raise(SIGPROF);
    printf("SIGPROF handler ran %d time(s) in all\n", (int)got);
    return 0;
}
