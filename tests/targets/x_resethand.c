/* x_resethand: Node's way with SIGTERM: a handler installed with SA_RESETHAND (every signal
 * blocked while it runs) that tidies up and raises the signal again, so the process ends by the
 * signal's default action. Burns 0.1 s of CPU, then sends itself SIGTERM. It also asks, as a
 * program may, what its disposition is: its own handler before, SIG_DFL inside the handler (the
 * one-shot reset), each time with the flags the query returned. Without the shim: "query ok
 * flags 0x...", "term handler reset ok flags 0x...", then killed by SIGTERM (143 in a shell). */
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

/* " flags 0x<hex>\n", without stdio (a signal handler says it too). */
static void say_flags(unsigned long v)
{
    char buf[32] = " flags 0x";
    char hex[17];
    int n = 0;
    do {
        hex[n++] = "0123456789abcdef"[v % 16];
        v /= 16;
    } while (v);
    size_t at = strlen(buf);
    while (n)
        buf[at++] = hex[--n];
    buf[at++] = '\n';
    buf[at] = 0;
    say(buf);
}

static void on_term(int sig)
{
    struct sigaction q;
    int ok = sigaction(sig, NULL, &q) == 0;
    say(ok && q.sa_handler == SIG_DFL ? "term handler reset ok" : "term handler not reset");
    say_flags(ok ? (unsigned)q.sa_flags : 0);
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
    int ok = sigaction(SIGTERM, NULL, &q) == 0;
    say(ok && q.sa_handler == on_term && (q.sa_flags & SA_RESETHAND) && sigismember(&q.sa_mask, SIGINT) ? "query ok"
                                                                                                   : "query differs");
    say_flags(ok ? (unsigned)q.sa_flags : 0);
    burn_before_term(0.1);
    kill(getpid(), SIGTERM);
    for (;;)
        pause();
}
