/* runner.h: the one process runner, for the matrix's arms and `perfscope record`: a command (argv, environment, working folder, where its standard input,
 * output and error go) run as a fresh process in a process group of its own (or, for record, in ours, so a terminal
 * keeps it in the foreground), to its end, with a
 * time limit and an interrupt that can stop it early. It knows nothing of run folders, shims or
 * matrices: callers say where the files are. It must never leave the command's processes
 * running after proc_run returns. */
#ifndef PERFSCOPE_REPORT_PROC_RUNNER_H
#define PERFSCOPE_REPORT_PROC_RUNNER_H

#include <signal.h>

#define PROC_KILL_GRACE_S 5.0 /* SIGTERM, then SIGKILL this much later */

struct proc_cmd {
    char *const *argv;         /* argv[0] looked up in PATH when it has no '/' */
    char *const *envp;
    const char *cwd;           /* the child's working folder; NULL: ours */
    const char *stdin_path;    /* opened for reading; NULL: ours */
    const char *stdout_path;   /* created or truncated; NULL: ours */
    const char *stderr_path;   /* created or truncated; NULL: ours */
    const char *who;           /* names us in the child's "cannot run" line on its stderr */
    int same_group;            /* 1: the child stays in our process group (record: a terminal's
                                * job control and reads keep working); never killed as a group */
    volatile sig_atomic_t *forward; /* NULL, or where the caller's signal handler puts a signal
                                * number: sent on to the child, then set back to 0 */
    void (*before_kill)(void *arg); /* NULL, or called once on a timeout or *stop before the
                                * command is signalled, for what it started elsewhere (a
                                * container: the client is only a remote control); the command
                                * then gets PROC_KILL_GRACE_S to end by itself */
    void *before_kill_arg;
};

struct proc_outcome {
    int pid;            /* the child's process id */
    int started;        /* fork and exec were attempted; 0: error says why not */
    int exited, code;   /* a normal exit and its status (126: the command found but not run, or a
                         * file or cwd failed; 127: not found), proc_never_ran */
    int signaled, sig;
    int timed_out;      /* the limit was reached and the process group was killed */
    int interrupted;    /* *stop became nonzero and the process group was killed */
    int status;         /* the raw wait4 status */
    double wall_s;
    double user_s, sys_s; /* the child's rusage as wait4 gave it (its waited-for descendants too) */
    long maxrss_kib;
    long long start_ns, end_ns; /* CLOCK_MONOTONIC: before fork, after the reap */
    char error[256];
};

/* Whether the child never became the command: it exited 126 (found but not run: no execute
 * permission, not an executable; or a file or cwd failed) or 127 (not found), as the shell and
 * env(1) say. A command of the user's own that exits so is counted the same. */
static inline int proc_never_ran(const struct proc_outcome *a)
{
    return a->exited && (a->code == 126 || a->code == 127);
}

/* Runs cmd; the paths in it are opened before the child changes to cwd. Stops it when
 * timeout_s passes (<= 0: no limit) or *stop (NULL: never) becomes nonzero. */
void proc_run(const struct proc_cmd *cmd, double timeout_s, volatile sig_atomic_t *stop,
              struct proc_outcome *out);

#endif
