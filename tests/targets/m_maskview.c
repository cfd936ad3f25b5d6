/* m_maskview: what a program sees of its own signal mask, and what its children inherit, through
 * every call that sets or reads a mask. Prints one line per step; the output must be the same
 * with and without the shim (the shim keeps SIGPROF out of the kernel's mask for sampling, but
 * must show the target the mask it asked for, and give children that mask). Children are run
 * without LD_PRELOAD and print the SigBlk line the kernel gave them (/proc/self/status), so what
 * they show is the mask they inherited, not a view. Exit 0. */
#define _GNU_SOURCE
#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* sigblock, sigsetmask, sighold: wrapped too */
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static char **env_without_preload(void)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **e = calloc(n + 1, sizeof *e);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0)
            e[k++] = environ[i];
    return e;
}

static int has(const sigset_t *s, int sig)
{
    return sigismember(s, sig) == 1;
}

static void show(const char *what)
{
    sigset_t a, b;
    pthread_sigmask(SIG_BLOCK, NULL, &a);
    sigprocmask(SIG_BLOCK, NULL, &b);
    int same = 1;
    for (int s = 1; s < NSIG; s++)
        same &= has(&a, s) == has(&b, s);
    printf("%-34s SIGPROF %-7s SIGUSR1 %-7s bsd %08x same %d\n", what, has(&a, SIGPROF) ? "blocked" : "open",
           has(&a, SIGUSR1) ? "blocked" : "open", (unsigned)siggetmask(), same);
}

static const char *grep_argv[] = { "grep", "SigBlk", "/proc/self/status", NULL };

static void child_exec(const char *what)
{
    fflush(stdout);
    pid_t p = fork();
    if (p == 0) {
        printf("%-34s ", what);
        fflush(stdout);
        execve("/bin/grep", (char **)grep_argv, env_without_preload());
        _exit(127);
    }
    waitpid(p, NULL, 0);
}

static void child_vfork(const char *what, int set_own)
{
    printf("%-34s ", what);
    fflush(stdout);
    char **env = env_without_preload();
    pid_t p = vfork();
    if (p == 0) {
        if (set_own) {
            sigset_t s;
            sigemptyset(&s);
            sigaddset(&s, SIGUSR2);
            sigprocmask(SIG_SETMASK, &s, NULL);
        }
        execve("/bin/grep", (char **)grep_argv, env);
        _exit(127);
    }
    waitpid(p, NULL, 0);
}

static void child_spawn(const char *what, int own_mask)
{
    printf("%-34s ", what);
    fflush(stdout);
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    if (own_mask) {
        sigset_t s;
        sigemptyset(&s);
        sigaddset(&s, SIGUSR1);
        posix_spawnattr_setsigmask(&at, &s);
        posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK);
    }
    pid_t p;
    if (posix_spawn(&p, "/bin/grep", NULL, &at, (char **)grep_argv, env_without_preload()) == 0)
        waitpid(p, NULL, 0);
    posix_spawnattr_destroy(&at);
}

static void child_system(const char *what)
{
    printf("%-34s ", what);
    fflush(stdout);
    if (system("env -u LD_PRELOAD grep SigBlk /proc/self/status") != 0)
        printf("system failed\n");
}

static void child_popen(const char *what)
{
    printf("%-34s ", what);
    FILE *f = popen("env -u LD_PRELOAD grep SigBlk /proc/self/status", "r");
    char line[128] = "";
    if (f) {
        if (!fgets(line, sizeof line, f))
            line[0] = 0;
        pclose(f);
    }
    printf("%s", line);
}

static _Atomic int sent;

static void *pending_in_thread(void *arg)
{
    (void)arg;
    while (!atomic_load(&sent))
        ;
    sigset_t pend;
    sigpending(&pend);
    printf("%-34s %s\n", "pthread_kill(SIGPROF): pending", has(&pend, SIGPROF) ? "yes" : "no");
    return NULL;
}

static void *thread_show(void *arg)
{
    show((const char *)arg);
    return NULL;
}

static void in_thread(const char *what, const sigset_t *attr_mask)
{
    fflush(stdout);
    pthread_attr_t at;
    pthread_attr_init(&at);
    if (attr_mask)
        pthread_attr_setsigmask_np(&at, attr_mask);
    pthread_t t;
    pthread_create(&t, &at, thread_show, (void *)what);
    pthread_join(t, NULL);
    pthread_attr_destroy(&at);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "exec-self") == 0) {
        show("exec'd image (inherited)");
        return 0;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    show("start");
    sigset_t prof, all, old, usr1;
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    sigfillset(&all);
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);

    pthread_sigmask(SIG_BLOCK, &prof, &old);
    show("pthread_sigmask BLOCK PROF");
    printf("%-34s SIGPROF %s\n", "  old mask", has(&old, SIGPROF) ? "blocked" : "open");
    pthread_sigmask(SIG_BLOCK, &usr1, &old);
    printf("%-34s SIGPROF %s\n", "  old mask after BLOCK USR1", has(&old, SIGPROF) ? "blocked" : "open");
    in_thread("thread (inherits)", NULL);
    child_exec("fork+exec child");
    child_vfork("vfork+exec child", 0);
    child_vfork("vfork, SETMASK USR2, exec", 1);
    child_spawn("posix_spawn child", 0);
    child_spawn("posix_spawn child, own mask", 1);
    child_system("system() child");
    child_popen("popen() child");
    pthread_sigmask(SIG_UNBLOCK, &prof, NULL);
    show("pthread_sigmask UNBLOCK PROF");
    child_exec("fork+exec child");

    sigprocmask(SIG_SETMASK, &all, NULL);
    show("sigprocmask SETMASK all");
    in_thread("thread (inherits all)", NULL);
    child_exec("fork+exec child");
    sigprocmask(SIG_SETMASK, &usr1, &old);
    show("sigprocmask SETMASK USR1");
    printf("%-34s SIGPROF %s\n", "  old mask", has(&old, SIGPROF) ? "blocked" : "open");
    in_thread("thread, attr mask all", &all);
    in_thread("thread, attr mask empty", &usr1);

    int was = sigblock(sigmask(SIGPROF));
    printf("%-34s %08x\n", "sigblock PROF: old", (unsigned)was);
    show("after sigblock");
    was = sigsetmask(0);
    printf("%-34s %08x\n", "sigsetmask 0: old", (unsigned)was);
    show("after sigsetmask 0");
    sighold(SIGPROF);
    show("sighold PROF");
    child_exec("fork+exec child");
    sigrelse(SIGPROF);
    show("sigrelse PROF");

    pthread_sigmask(SIG_SETMASK, &all, NULL);
    fflush(stdout);
    pid_t p = fork();
    if (p == 0) {
        char *args[] = { argv[0], "exec-self", NULL };
        execv("/proc/self/exe", args);
        _exit(127);
    }
    waitpid(p, NULL, 0);
    pthread_sigmask(SIG_SETMASK, &usr1, NULL);
    show("after exec-self");

    /* A SIGPROF the target did not ask for, while it blocks SIGPROF with its default action
     * (terminate): it waits, pending, as the target never unblocks it. */
    pthread_sigmask(SIG_SETMASK, &all, NULL);
    pthread_t t;
    pthread_create(&t, NULL, pending_in_thread, NULL);
    pthread_kill(t, SIGPROF);
    atomic_store(&sent, 1);
    pthread_join(t, NULL);
    kill(getpid(), SIGPROF);
    sigset_t pend;
    sigpending(&pend);
    printf("%-34s %s\n", "kill(self, SIGPROF): pending", has(&pend, SIGPROF) ? "yes" : "no");
    show("end");
    return 0;
}
