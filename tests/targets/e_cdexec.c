/* e_cdexec: changes directory, then starts a new image of itself (issue 8, defect 9: with a
 * relative LD_PRELOAD, ld.so refused the shim in the new image). Usage:
 *   e_cdexec MODE DIR ENVFILE [PRELOAD OUT]
 * chdir(DIR), then, by MODE:
 *   execv       execv of itself ("child")
 *   execve-own  execve with an environment it builds: LD_PRELOAD=PRELOAD, PERFSCOPE_OUT=OUT,
 *               PERFSCOPE_HZ=199, KEEP="x y:z" (the shim must hand all but its own paths on
 *               byte for byte)
 *   execve-noshim  execve with the environment less LD_PRELOAD: the new image runs unmeasured
 *   posix_spawn posix_spawn of itself with environ, then waits
 *   system      system("<itself> child ENVFILE"), then waits
 *   vfork       vfork, chdir in the child too, execv of itself, then waits
 * The child ("e_cdexec child ENVFILE") burns 50 ms of CPU, writes its environment to ENVFILE
 * (one entry a line) and prints "child done"; a parent that waited prints "parent done". Exit 0,
 * or 1 when a child failed; 2 on bad usage. */
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

static int waited(pid_t pid)
{
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return 1;
    printf("parent done\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "child") == 0) {
        burn_cpu(0.05);
        FILE *f = fopen(argv[2], "w");
        if (!f)
            return 1;
        for (char **e = environ; *e; e++)
            fprintf(f, "%s\n", *e);
        fclose(f);
        printf("child done\n");
        return 0;
    }
    if (argc < 4)
        return 2;
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return 2;
    self[n] = 0;
    const char *mode = argv[1], *envfile = argv[3];
    if (chdir(argv[2]) != 0)
        return 2;
    char *child[] = {self, "child", (char *)envfile, NULL};
    fflush(stdout);
    if (strcmp(mode, "execv") == 0) {
        execv(self, child);
    } else if (strcmp(mode, "execve-own") == 0 && argc > 5) {
        char preload[4096], out[4096];
        snprintf(preload, sizeof preload, "LD_PRELOAD=%s", argv[4]);
        snprintf(out, sizeof out, "PERFSCOPE_OUT=%s", argv[5]);
        char *envp[] = {preload, out, "PERFSCOPE_HZ=199", "KEEP=x y:z", NULL};
        execve(self, child, envp);
    } else if (strcmp(mode, "execve-noshim") == 0) {
        char *envp[256];
        int k = 0;
        for (char **e = environ; *e && k < 255; e++)
            if (strncmp(*e, "LD_PRELOAD=", 11) != 0)
                envp[k++] = *e;
        envp[k] = NULL;
        execve(self, child, envp);
    } else if (strcmp(mode, "posix_spawn") == 0) {
        pid_t pid;
        if (posix_spawn(&pid, self, NULL, NULL, child, environ) != 0)
            return 1;
        return waited(pid);
    } else if (strcmp(mode, "system") == 0) {
        char cmd[8300];
        snprintf(cmd, sizeof cmd, "'%s' child '%s'", self, envfile);
        int st = system(cmd);
        if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            return 1;
        printf("parent done\n");
        return 0;
    } else if (strcmp(mode, "vfork") == 0) {
        pid_t pid = vfork();
        if (pid == 0) {
            if (chdir("/") == 0)
                execv(self, child);
            _exit(127);
        }
        return waited(pid);
    } else {
        return 2;
    }
    perror("exec");
    return 1;
}
