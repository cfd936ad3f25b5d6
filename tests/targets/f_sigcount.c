/* f_sigcount: prints "R" on stdout, waits (at most 60 s) for a SIGINT, waits 0.3 s more for any
 * second one, then says on stderr how many SIGINTs came ("sigint N") and exits 3. For a Ctrl-C on
 * a terminal under perfscope record: the one from the terminal, never a second forwarded one. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t n;

static void on_int(int sig)
{
    (void)sig;
    n++;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_int;
    sigaction(SIGINT, &sa, NULL);
    (void)!write(1, "R\n", 2);
    for (int i = 0; i < 6000 && !n; i++)
        usleep(10000);
    usleep(300000);
    fprintf(stderr, "sigint %d\n", (int)n);
    return 3;
}
