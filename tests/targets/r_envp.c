/* r_envp: main's envp after the program's own setenv has grown the environment 64 times (the C
 * library's copy of the array reallocated, the old copy freed): the array main was given must
 * be as it was, and an execve with it must work. Prints "envp intact" (or "envp changed"), then
 * execs /bin/sh, which prints "child ran"; "execve: <errno>" and status 1 if that failed. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static size_t count(char **v)
{
    size_t n = 0;
    while (v[n])
        n++;
    return n;
}

int main(int argc, char **argv, char **envp)
{
    (void)argc;
    (void)argv;
    char *first = envp[0];
    size_t n = count(envp);
    char name[32];
    for (int i = 0; i < 64; i++) {
        snprintf(name, sizeof name, "R_ENVP_%d", i);
        setenv(name, "1", 1);
    }
    void *churn[64]; /* what was freed is handed out again */
    for (int i = 0; i < 64; i++) {
        churn[i] = malloc(16 + 8 * (size_t)i);
        if (churn[i])
            memset(churn[i], 0x5a, 16 + 8 * (size_t)i);
    }
    printf("%s\n", envp[0] == first && count(envp) == n ? "envp intact" : "envp changed");
    fflush(stdout);
    char *args[] = { "/bin/sh", "-c", "echo child ran", NULL };
    execve("/bin/sh", args, envp);
    printf("execve: %s\n", strerrorname_np(errno));
    return 1;
}
