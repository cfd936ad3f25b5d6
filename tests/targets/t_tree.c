/* t_tree REPORT LIBBURN BURNEXE SECONDS: a process tree under the shim. In order:
 *   parent burns in burn_parent;
 *   a fork child burns in burn_child_exit and ends with exit(0);
 *   a fork child burns in burn_child__exit and ends with _exit(0);
 *   posix_spawn of BURNEXE, then system("BURNEXE ..."): each burns in its own burn_main;
 *   dlopen(LIBBURN), lib_burn() for SECONDS (times around the call reported), dlclose;
 *   parent burns in burn_parent again, reports, then execs BURNEXE (same pid, new image).
 * Each process appends one JSON line to REPORT: tag, pid, ppid, fn, addr, cpu_ns (+ t0, t1). */
#define _GNU_SOURCE
#include "burn.h"
#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
DEFINE_BURN_SINK
DEFINE_BURN(burn_parent)
DEFINE_BURN(burn_child_exit)
DEFINE_BURN(burn_child__exit)

static const char *report;

static void put(const char *tag, const char *fn, void *addr, uint64_t t0, uint64_t t1)
{
    char buf[512];
    int n = snprintf(buf, sizeof buf,
                     "{\"tag\":\"%s\",\"pid\":%d,\"ppid\":%d,\"fn\":\"%s\",\"addr\":%lu,\"cpu_ns\":%llu,"
                     "\"t0\":%llu,\"t1\":%llu}\n",
                     tag, (int)getpid(), (int)getppid(), fn, (unsigned long)(uintptr_t)addr,
                     (unsigned long long)thread_cpu_ns(), (unsigned long long)t0, (unsigned long long)t1);
    int fd = open(report, O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd < 0 || write(fd, buf, n) != n) {
        perror(report);
        _exit(1);
    }
    close(fd);
}

static void wait_ok(pid_t pid, const char *what)
{
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "%s failed (status %#x)\n", what, st);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: t_tree REPORT LIBBURN BURNEXE SECONDS\n");
        return 2;
    }
    report = argv[1];
    const char *lib = argv[2], *burnexe = argv[3], *secs = argv[4];
    double s = atof(secs);
    burn_parent(s);

    pid_t pid = fork();
    if (pid == 0) {
        burn_child_exit(s);
        put("fork_exit", "burn_child_exit", (void *)burn_child_exit, 0, 0);
        exit(0);
    }
    wait_ok(pid, "fork child (exit)");
    pid = fork();
    if (pid == 0) {
        burn_child__exit(s);
        put("fork__exit", "burn_child__exit", (void *)burn_child__exit, 0, 0);
        _exit(0);
    }
    wait_ok(pid, "fork child (_exit)");

    char *spawn_argv[] = {(char *)burnexe, (char *)secs, (char *)report, "spawn", NULL};
    if (posix_spawn(&pid, burnexe, NULL, NULL, spawn_argv, environ) != 0) {
        perror("posix_spawn");
        return 1;
    }
    wait_ok(pid, "posix_spawn child");
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' %s '%s' system", burnexe, secs, report);
    int st = system(cmd);
    if (st != 0) {
        fprintf(stderr, "system() child failed (status %#x)\n", st);
        return 1;
    }

    void *h = dlopen(lib, RTLD_NOW);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    uint64_t (*lib_burn)(double) = (uint64_t (*)(double))dlsym(h, "lib_burn");
    if (!lib_burn) {
        fprintf(stderr, "dlsym: %s\n", dlerror());
        return 1;
    }
    uint64_t t0 = mono_ns();
    lib_burn(s);
    uint64_t t1 = mono_ns();
    put("dlopen", "lib_burn", (void *)lib_burn, t0, t1);
    dlclose(h);

    burn_parent(s / 2);
    put("parent", "burn_parent", (void *)burn_parent, 0, mono_ns());
    execl(burnexe, burnexe, secs, report, "exec", (char *)NULL);
    perror("execl");
    return 1;
}
