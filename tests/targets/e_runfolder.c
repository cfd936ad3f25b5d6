/* e_runfolder: processes that start in a run folder (issue 8, defect 10; docs/shim.md: a run folder
 * is one run). Modes:
 *   burn         burns 50 ms of CPU, prints "burn done"
 *   tree N       posix_spawns itself "burn" N times, one after the other, with its own
 *                environment; prints "tree done"
 *   scrubbed     posix_spawns itself "burn" with an environment of LD_PRELOAD, PERFSCOPE_OUT and
 *                PERFSCOPE_HZ only (no PERFSCOPE_RUN_ID: env -i or a hand-built environment);
 *                prints "scrubbed done"
 * Exits 0, or 1 when a child failed. */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "burn.h"

DEFINE_BURN_SINK
DEFINE_BURN(burn_cpu)

extern char **environ;

static int spawn_burn(const char *self, char **envp)
{
    char *argv[] = {(char *)self, "burn", NULL};
    pid_t pid;
    if (posix_spawn(&pid, self, NULL, NULL, argv, envp) != 0)
        return 1;
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    fflush(stdout);
    if (strcmp(argv[1], "burn") == 0) {
        burn_cpu(0.05);
        printf("burn done\n");
        return 0;
    }
    if (strcmp(argv[1], "tree") == 0 && argc > 2) {
        int bad = 0;
        for (int i = 0; i < atoi(argv[2]); i++)
            bad |= spawn_burn("/proc/self/exe", environ);
        printf("tree done\n");
        return bad;
    }
    if (strcmp(argv[1], "scrubbed") == 0) {
        static char vars[3][4096];
        char *envp[4] = {NULL};
        const char *names[] = {"LD_PRELOAD", "PERFSCOPE_OUT", "PERFSCOPE_HZ"};
        int n = 0;
        for (int i = 0; i < 3; i++)
            if (getenv(names[i])) {
                snprintf(vars[n], sizeof vars[n], "%s=%s", names[i], getenv(names[i]));
                envp[n] = vars[n];
                n++;
            }
        int bad = spawn_burn("/proc/self/exe", envp);
        printf("scrubbed done\n");
        return bad;
    }
    return 2;
}
