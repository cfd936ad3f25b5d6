/* r_loadwait: what a program does while one of its threads is inside dlopen (the loader's lock
 * held by a library's constructor, tests/targets/r_loadwait_lib.c). Usage: r_loadwait LIB MODE.
 * MODE exit: main dlopens LIB itself (its constructor exits the process). MODE exec, fork or
 * none: thread A dlopens LIB while main computes 0.15 s of CPU (samples come), then main execs
 * /bin/echo, forks (the child makes 3 dup2 calls and says so), or only waits for A. Each step
 * is said on stderr. First every wrapper a profiler may put on the C library's calls made here
 * is called once, so that none is looked up later (the lookup takes the loader's lock). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "burn.h"

DEFINE_BURN_SINK
DEFINE_BURN(loadwait_burn)

static const char *lib;

static int each(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)info, (void)size, (void)data;
    return 1;
}

static void call_each_once(void)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_BLOCK, &none, NULL);
    pthread_sigmask(SIG_BLOCK, &none, NULL);
    dl_iterate_phdr(each, NULL);
    int p[2];
    if (pipe2(p, O_CLOEXEC) == 0) {
        close(p[0]);
        close(p[1]);
    }
    if (dup2(2, 40) == 40)
        close(40);
    char *argv[] = { "x", NULL };
    execv("/nonexistent/x", argv);
    execl("/nonexistent/x", "x", (char *)NULL);
}

static void *opener(void *arg)
{
    (void)arg;
    void *h = dlopen(lib, RTLD_NOW);
    fprintf(stderr, "A: dlopen done (%s)\n", h ? "loaded" : dlerror());
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    lib = argv[1];
    const char *mode = argv[2];
    call_each_once();
    if (strcmp(mode, "exit") == 0) {
        dlopen(lib, RTLD_NOW);
        fprintf(stderr, "main: the constructor did not exit\n");
        return 0;
    }
    pthread_t a;
    if (pthread_create(&a, NULL, opener, NULL) != 0)
        return 2;
    loadwait_burn(0.15);
    if (strcmp(mode, "exec") == 0) {
        execl("/bin/echo", "echo", "exec: done", (char *)NULL);
        return 9;
    }
    if (strcmp(mode, "fork") == 0) {
        pid_t p = fork();
        if (p == 0) {
            for (int i = 0; i < 3; i++)
                dup2(2, 60 + i);
            fprintf(stderr, "child: done\n");
            _exit(0);
        }
        int status;
        waitpid(p, &status, 0);
    }
    pthread_join(a, NULL);
    fprintf(stderr, "main: done\n");
    return 0;
}
