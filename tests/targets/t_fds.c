/* t_fds exec|list: "exec" burns CPU on two threads (so that the shim has per-thread events or
 * timers open), joins the second, then execs itself as "list" with LD_PRELOAD removed from the
 * environment (the new image runs without the shim). "list" prints every open descriptor other
 * than 0, 1, 2 as "fd N -> TARGET", then "end". Descriptors the shim opened without close-on-exec
 * show up there. */
#define _GNU_SOURCE
#include "burn.h"
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;
DEFINE_BURN_SINK
DEFINE_BURN(burn_fds)

static void *run(void *arg)
{
    (void)arg;
    burn_fds(0.05);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "list") == 0) {
        DIR *d = opendir("/proc/self/fd");
        if (!d) {
            perror("/proc/self/fd");
            return 1;
        }
        struct dirent *e;
        while ((e = readdir(d))) {
            int fd = atoi(e->d_name);
            if (e->d_name[0] == '.' || fd <= 2 || fd == dirfd(d))
                continue;
            char path[64], target[512];
            snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
            ssize_t n = readlink(path, target, sizeof target - 1);
            target[n > 0 ? n : 0] = 0;
            printf("fd %d -> %s\n", fd, target);
        }
        closedir(d);
        printf("end\n");
        return 0;
    }
    pthread_t th;
    pthread_create(&th, NULL, run, NULL);
    burn_fds(0.1);
    pthread_join(th, NULL);
    int n = 0;
    for (char **e = environ; *e; e++)
        n++;
    char **env = calloc(n + 1, sizeof *env);
    int k = 0;
    for (char **e = environ; *e; e++)
        if (strncmp(*e, "LD_PRELOAD=", 11) != 0)
            env[k++] = *e;
    fflush(stdout);
    char *args[] = {"t_fds", "list", NULL};
    execve("/proc/self/exe", args, env);
    perror("exec");
    return 1;
}
