/* arm.c: run one matrix arm (arm.h). It must never leave the arm's processes running after it
 * returns (the whole process group is killed on a timeout or an interrupt), never block signals
 * for the child, and never write to our own stdout or stderr from the child. */
#include "arm.h"
#include "runfolder.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void nap_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL); /* an interrupt cuts it short: fine */
}

/* In the child: its own process group, files, default signals; then exec. Never returns. */
static void child(char *const *argv, char *const *envp, const char *dir)
{
    setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    char path[PATH_MAX];
    int in = open("/dev/null", O_RDONLY);
    runfolder_path(path, sizeof path, dir, RUN_TARGET_STDOUT, NULL, 0);
    int out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    runfolder_path(path, sizeof path, dir, RUN_TARGET_STDERR, NULL, 0);
    int err = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0)
        _exit(126);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    if (in > 2)
        close(in);
    if (out > 2)
        close(out);
    if (err > 2)
        close(err);
    execvpe(argv[0], argv, envp);
    dprintf(2, "perfscope-report matrix: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

static void kill_group(pid_t pid, int *status, int *reaped)
{
    kill(-pid, SIGTERM);
    kill(pid, SIGTERM);
    double until = now_s() + ARM_KILL_GRACE_S;
    while (now_s() < until) {
        pid_t r = waitpid(pid, status, WNOHANG);
        if (r == pid) {
            *reaped = 1;
            break;
        }
        nap_ms(20);
    }
    kill(-pid, SIGKILL); /* the rest of the group, or the leader itself when it did not stop */
    if (!*reaped) {
        while (waitpid(pid, status, 0) < 0 && errno == EINTR)
            ;
        *reaped = 1;
    }
}

void arm_run(char *const *argv, char *const *envp, const char *dir, double timeout_s,
             volatile sig_atomic_t *stop, struct arm_outcome *o)
{
    memset(o, 0, sizeof *o);
    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(o->error, sizeof o->error, "fork: %s", strerror(errno));
        return;
    }
    if (pid == 0)
        child(argv, envp, dir);
    setpgid(pid, pid); /* also here, so the group exists before we might signal it */
    o->started = 1;
    int status = 0, reaped = 0;
    while (!reaped) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) {
            reaped = 1;
            break;
        }
        if (r < 0 && errno != EINTR) {
            snprintf(o->error, sizeof o->error, "waitpid: %s", strerror(errno));
            break;
        }
        if (stop && *stop) {
            o->interrupted = 1;
            kill_group(pid, &status, &reaped);
            break;
        }
        if (timeout_s > 0 && now_s() - t0 > timeout_s) {
            o->timed_out = 1;
            kill_group(pid, &status, &reaped);
            break;
        }
        nap_ms(10);
    }
    if (reaped)
        kill(-pid, SIGKILL); /* children the arm left behind in its group */
    o->wall_s = now_s() - t0;
    if (reaped && WIFEXITED(status)) {
        o->exited = 1;
        o->code = WEXITSTATUS(status);
    } else if (reaped && WIFSIGNALED(status)) {
        o->signaled = 1;
        o->sig = WTERMSIG(status);
    }
}
