/* r_sigapi: the C library's other ways to set a disposition than sigaction, which call its
 * internal sigaction past the shim's wrapper (sigset, sigignore, siginterrupt), signal()'s
 * flags, and what sigaction queries read back; one line each, the same without the shim:
 * - sigset(SIGTERM, h): returns SIG_DFL, a query reads h; sigset(SIGPROF, h) then 0.3 s of
 *   CPU: h never runs (nobody sends SIGPROF; the shim's sampling signals are not the target's);
 * - siginterrupt(SIGALRM, 1) then signal(SIGALRM, h): a read interrupted by a 0.1 s timer fails
 *   with EINTR (not restarted until a child writes, 1.5 s later); signal(SIGUSR2, SIG_ERR):
 *   SIG_ERR, EINVAL;
 * - queries of SIGTERM, SIGPROF and SIGINT after actions with flags and a full mask: the
 *   flags, the signal-return trampoline and the mask (without SIGKILL and SIGSTOP) as set;
 * - sigignore(SIGHUP), then SIGTERM back to SIG_DFL by sigaction and raised: killed by it. */
#define _GNU_SOURCE
#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* the old calls are the point */
#include "burn.h"
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_sigapi)

static volatile sig_atomic_t hits;
static void h(int sig)
{
    (void)sig;
    hits++;
}

static const char *name(sighandler_t f)
{
    return f == SIG_DFL ? "SIG_DFL" : f == SIG_IGN ? "SIG_IGN" : f == SIG_ERR ? "SIG_ERR" : f == h ? "h" : "other";
}

static void query(const char *what, int sig)
{
    struct sigaction q;
    memset(&q, 0, sizeof q);
    int rc = sigaction(sig, NULL, &q);
    printf("%-28s rc=%d handler=%s flags=%#x restorer=%s mask=%#llx\n", what, rc, name(q.sa_handler),
           (unsigned)q.sa_flags, q.sa_restorer ? "set" : "none",
           (unsigned long long)((unsigned long *)&q.sa_mask)[0]);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    printf("sigset(SIGTERM, h) = %s\n", name(sigset(SIGTERM, h)));
    query("SIGTERM after sigset", SIGTERM);
    sigset(SIGPROF, h);
    burn_sigapi(0.3);
    printf("h ran %d times in 0.3 s of CPU\n", (int)hits);
    sigset(SIGPROF, SIG_DFL);

    int p[2];
    if (pipe(p) != 0)
        return 1;
    siginterrupt(SIGALRM, 1);
    signal(SIGALRM, h);
    pid_t writer = fork();
    if (writer == 0) {
        usleep(1500000);
        if (write(p[1], "x", 1) != 1)
            _exit(1);
        _exit(0);
    }
    struct itimerval t = { { 0, 0 }, { 0, 100000 } };
    setitimer(ITIMER_REAL, &t, NULL);
    char c;
    ssize_t n = read(p[0], &c, 1);
    printf("read with a 0.1 s timer: %zd (%s)\n", n, n < 0 ? strerror(errno) : "data: not interrupted");
    kill(writer, SIGKILL);
    waitpid(writer, NULL, 0);
    errno = 0;
    sighandler_t r = signal(SIGUSR2, SIG_ERR);
    printf("signal(SIGUSR2, SIG_ERR) = %s, errno %d\n", name(r), errno);

    struct sigaction a;
    memset(&a, 0, sizeof a);
    a.sa_handler = SIG_DFL;
    a.sa_flags = SA_RESTART | SA_NODEFER;
    sigfillset(&a.sa_mask);
    sigaction(SIGTERM, &a, NULL);
    query("SIGTERM: SIG_DFL, full mask", SIGTERM);
    sigaction(SIGPROF, &a, NULL);
    query("SIGPROF: SIG_DFL, full mask", SIGPROF);
    a.sa_handler = h;
    sigemptyset(&a.sa_mask);
    a.sa_flags = 0;
    sigaction(SIGPROF, &a, NULL);
    query("SIGPROF: h", SIGPROF);
    sigaction(SIGPROF, NULL, NULL);
    a.sa_handler = SIG_DFL;
    sigaction(SIGPROF, &a, NULL);
    sigaction(SIGINT, &a, NULL);
    a.sa_handler = h;
    sigaction(SIGINT, &a, NULL);
    a.sa_handler = SIG_DFL;
    a.sa_flags = SA_ONSTACK;
    sigaddset(&a.sa_mask, SIGUSR1);
    sigaction(SIGINT, &a, NULL);
    query("SIGINT: h, then SIG_DFL+ONSTACK", SIGINT);
    printf("sigignore(SIGHUP) = %d\n", sigignore(SIGHUP));
    query("SIGHUP after sigignore", SIGHUP);

    a.sa_handler = SIG_DFL;
    a.sa_flags = 0;
    sigemptyset(&a.sa_mask);
    sigaction(SIGTERM, &a, NULL);
    raise(SIGTERM);
    printf("still here after raise(SIGTERM)\n");
    return 0;
}
