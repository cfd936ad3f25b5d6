/* r_vfork: the parent profiles itself with ITIMER_PROF and a SIGPROF handler; a vfork child
 * resets SIGPROF to SIG_DFL before exec, as spawn helpers do for every signal the parent
 * handles. The child shares the parent's memory but not its signal dispositions, so the parent
 * keeps its handler: it survives 0.3 s of CPU with its timer running. */
#include "burn.h"
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_parent)

static volatile sig_atomic_t ticks;

static void on_prof(int s)
{
    (void)s;
    ticks++;
}

int main(void)
{
    signal(SIGPROF, on_prof);
    struct itimerval it = {{0, 10000}, {0, 10000}};
    setitimer(ITIMER_PROF, &it, NULL);
    pid_t pid = vfork();
    if (pid == 0) {
        signal(SIGPROF, SIG_DFL);
        execl("/bin/true", "true", (char *)NULL);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    burn_parent(0.3);
    printf("child status %d; parent survived, profiling ticks: %s\n", st, ticks > 0 ? "yes" : "none");
    return 0;
}
