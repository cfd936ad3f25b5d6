/* x_resethand: Node's way with SIGTERM: a handler installed with SA_RESETHAND (every signal
 * blocked while it runs) that tidies up and raises the signal again, so the process ends by the
 * signal's default action. Burns 0.1 s of CPU, then sends itself SIGTERM. It also asks, as a
 * program may, what its disposition is: its own handler before, SIG_DFL inside the handler (the
 * one-shot reset). Without the shim: "query ok", "term handler reset ok", then killed by SIGTERM
 * (143 in a shell). */
#include "burn.h"
#include <signal.h>
#include <string.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_before_term)

static void say(const char *s)
{
    if (write(1, s, strlen(s)) < 0) { /* nothing to do */ }
}

static void on_term(int sig)
{
    struct sigaction q;
    say(sigaction(sig, NULL, &q) == 0 && q.sa_handler == SIG_DFL ? "term handler reset ok\n" : "term handler not reset\n");
    raise(sig); /* blocked until the handler returns; then SIG_DFL ends the process */
}

int main(void)
{
    struct sigaction sa, q;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_term;
    sa.sa_flags = SA_RESETHAND;
    sigfillset(&sa.sa_mask);
    if (sigaction(SIGTERM, &sa, NULL) != 0)
        return 2;
    say(sigaction(SIGTERM, NULL, &q) == 0 && q.sa_handler == on_term && (q.sa_flags & SA_RESETHAND) &&
                sigismember(&q.sa_mask, SIGINT)
            ? "query ok\n"
            : "query differs\n");
    burn_before_term(0.1);
    kill(getpid(), SIGTERM);
    for (;;)
        pause();
}
