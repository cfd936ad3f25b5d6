/* r_profign: a program that ignores SIGPROF (as nohup ignores SIGHUP) starts itself again by
 * posix_spawn, fork + exec and system(); an ignored signal stays ignored across exec, so each
 * child says SIGPROF is ignored and survives a SIGPROF sent to itself. Without the shim: three
 * children, each "SIG_IGN, survived", status 0. */
#define _GNU_SOURCE
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int child(const char *how)
{
    struct sigaction q;
    sigaction(SIGPROF, NULL, &q);
    printf("%s child: SIGPROF %s", how, q.sa_handler == SIG_IGN ? "SIG_IGN" : "not ignored");
    fflush(stdout);
    kill(getpid(), SIGPROF);
    printf(", survived a SIGPROF\n");
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc > 1)
        return child(argv[1]);
    signal(SIGPROF, SIG_IGN);
    pid_t pid;
    int st = 0;
    char *spawn_argv[] = { argv[0], "posix_spawn", NULL };
    if (posix_spawn(&pid, argv[0], NULL, NULL, spawn_argv, environ) == 0)
        waitpid(pid, &st, 0);
    printf("posix_spawn child status %#x\n", st);
    if ((pid = fork()) == 0) {
        execl(argv[0], argv[0], "fork+exec", (char *)NULL);
        _exit(127);
    }
    waitpid(pid, &st, 0);
    printf("fork+exec child status %#x\n", st);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "'%s' system", argv[0]);
    st = system(cmd);
    printf("system status %#x\n", st);
    return 0;
}
