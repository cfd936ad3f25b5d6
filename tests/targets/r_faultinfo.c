/* r_faultinfo [segv|term]: traces a copy of itself (ptrace, its main thread) that burns 0.1 s of
 * CPU and then either writes to address 0x1001 (segv) or is sent SIGTERM by its tracer (term,
 * from another process: si_code SI_USER, the tracer's pid), and prints the siginfo of the last
 * time that signal was delivered to it, as a core dump or a debugger would see it, and how the
 * copy ended. Without the shim: "SIGSEGV code 1 addr 0x1001 (from the fault); killed by SIGSEGV"
 * and "SIGTERM code 0 (from the tracer); killed by SIGTERM". A stand-in for SIG_DFL that sends
 * the signal again with a bare tgkill showed code -6 (SI_TKILL) and the process's own pid. Every
 * other signal stop (the shim's SIGPROF) is passed on as it came. */
#define _GNU_SOURCE
#include "burn.h"
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_faultinfo)

static int crash(const char *mode)
{
    burn_faultinfo(0.1);
    if (strcmp(mode, "segv") == 0)
        *(volatile int *)0x1001 = 1;
    else
        for (;;)
            pause();
    return 2;
}

int main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], "child") == 0)
        return crash(argv[2]);
    const char *mode = argc > 1 ? argv[1] : "segv";
    int want = strcmp(mode, "segv") == 0 ? SIGSEGV : SIGTERM;
    pid_t pid = fork();
    if (pid == 0) {
        ptrace(PTRACE_TRACEME, 0, NULL, NULL);
        execl("/proc/self/exe", argv[0], "child", mode, (char *)NULL);
        _exit(127);
    }
    siginfo_t last;
    int seen = 0, status = 0, first = 1;
    memset(&last, 0, sizeof last);
    while (waitpid(pid, &status, 0) == pid) {
        if (WIFEXITED(status) || WIFSIGNALED(status))
            break;
        int sig = WSTOPSIG(status);
        siginfo_t si;
        if (first && sig == SIGTRAP) { /* the exec's stop */
            first = 0;
            ptrace(PTRACE_CONT, pid, NULL, 0);
            if (want == SIGTERM) {
                usleep(400000); /* the copy has burnt its 0.1 s and waits in pause() */
                kill(pid, SIGTERM);
            }
            continue;
        }
        if (ptrace(PTRACE_GETSIGINFO, pid, NULL, &si) == 0 && si.si_signo == want) {
            last = si;
            seen = 1;
        }
        ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig);
    }
    if (!seen)
        printf("SIG%s never delivered; ", sigabbrev_np(want));
    else if (want == SIGSEGV)
        printf("SIGSEGV code %d addr %p (%s); ", last.si_code, last.si_addr,
               last.si_code > 0 ? "from the fault" : "not from the fault");
    else
        printf("SIGTERM code %d (%s); ", last.si_code,
               last.si_code == SI_USER && last.si_pid == getpid() ? "from the tracer" : "not from the tracer");
    if (WIFSIGNALED(status))
        printf("killed by SIG%s\n", sigabbrev_np(WTERMSIG(status)));
    else
        printf("exited %d\n", WEXITSTATUS(status));
    return 0;
}
