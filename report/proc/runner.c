/* runner.c: the process runner (runner.h). It must never leave the command's processes running
 * after it returns (the whole process group is killed on a timeout or an interrupt; with
 * same_group, the command itself), never signal its own process group, never block
 * signals for the child, and never write to our own stdout or stderr from the child. */
#include "runner.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void nap_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL); /* an interrupt cuts it short: fine */
}

/* Opens path as fd (flags, mode 0644), or leaves fd as it is when path is NULL. */
static int redirect(const char *path, int flags, int fd)
{
    if (!path)
        return 0;
    int f = open(path, flags, 0644);
    if (f < 0)
        return -1;
    if (f != fd) {
        dup2(f, fd);
        close(f);
    }
    return 0;
}

/* In the child: its own process group, files, default signals; then exec. Never returns. */
static void child(const struct proc_cmd *c)
{
    if (!c->same_group)
        setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    if (redirect(c->stdin_path, O_RDONLY, 0) != 0 ||
        redirect(c->stdout_path, O_WRONLY | O_CREAT | O_TRUNC, 1) != 0 ||
        redirect(c->stderr_path, O_WRONLY | O_CREAT | O_TRUNC, 2) != 0 ||
        (c->cwd && chdir(c->cwd) != 0))
        _exit(126);
    execvpe(c->argv[0], c->argv, c->envp);
    int err = errno;
    dprintf(2, "%s: cannot run %s: %s\n", c->who, c->argv[0], strerror(err));
    /* As the shell and env(1): 127 when the command is not found, 126 when it is there but
     * cannot be run (no execute permission, not an executable). */
    _exit(err == ENOENT || err == ENOTDIR ? 127 : 126);
}

/* Waits for pid with its rusage; r as waitpid. */
static pid_t reap(pid_t pid, int *status, int flags, struct rusage *ru)
{
    return wait4(pid, status, flags, ru);
}

/* Lets the command end by itself for up to s seconds: 1 when it did. */
static int wait_end(pid_t pid, double s, int *status, struct rusage *ru)
{
    for (double until = now_s() + s; now_s() < until; nap_ms(20))
        if (reap(pid, status, WNOHANG, ru) == pid)
            return 1;
    return 0;
}

static void kill_group(const struct proc_cmd *c, pid_t pid, int own_group, int *status, int *reaped,
                       struct rusage *ru)
{
    if (c->before_kill) {
        c->before_kill(c->before_kill_arg);
        if (wait_end(pid, PROC_KILL_GRACE_S, status, ru)) {
            *reaped = 1;
            if (own_group)
                kill(-pid, SIGKILL);
            return;
        }
    }
    if (own_group)
        kill(-pid, SIGTERM);
    kill(pid, SIGTERM);
    if (wait_end(pid, PROC_KILL_GRACE_S, status, ru))
        *reaped = 1;
    /* the rest of the group, or the leader itself when it did not stop */
    kill(own_group ? -pid : pid, SIGKILL);
    if (!*reaped) {
        while (reap(pid, status, 0, ru) < 0 && errno == EINTR)
            ;
        *reaped = 1;
    }
}

void proc_run(const struct proc_cmd *cmd, double timeout_s, volatile sig_atomic_t *stop,
              struct proc_outcome *o)
{
    memset(o, 0, sizeof *o);
    int own = !cmd->same_group;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    o->start_ns = now_ns();
    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(o->error, sizeof o->error, "fork: %s", strerror(errno));
        return;
    }
    if (pid == 0)
        child(cmd);
    if (own)
        setpgid(pid, pid); /* also here, so the group exists before we might signal it */
    o->started = 1;
    o->pid = (int)pid;
    int status = 0, reaped = 0;
    while (!reaped) {
        pid_t r = reap(pid, &status, WNOHANG, &ru);
        if (r == pid) {
            reaped = 1;
            break;
        }
        if (cmd->forward && *cmd->forward) {
            int sig = *cmd->forward;
            *cmd->forward = 0;
            kill(pid, sig); /* the command decides what the signal means */
        }
        if (r < 0 && errno != EINTR) {
            snprintf(o->error, sizeof o->error, "waitpid: %s", strerror(errno));
            break;
        }
        if (stop && *stop) {
            o->interrupted = 1;
            kill_group(cmd, pid, own, &status, &reaped, &ru);
            break;
        }
        if (timeout_s > 0 && now_s() - t0 > timeout_s) {
            o->timed_out = 1;
            kill_group(cmd, pid, own, &status, &reaped, &ru);
            break;
        }
        nap_ms(10);
    }
    if (reaped && own)
        kill(-pid, SIGKILL); /* children the command left behind in its group */
    o->wall_s = now_s() - t0;
    o->end_ns = now_ns();
    o->status = status;
    o->user_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
    o->sys_s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    o->maxrss_kib = ru.ru_maxrss;
    if (reaped && WIFEXITED(status)) {
        o->exited = 1;
        o->code = WEXITSTATUS(status);
    } else if (reaped && WIFSIGNALED(status)) {
        o->signaled = 1;
        o->sig = WTERMSIG(status);
    }
}
