/* arm.h: one arm of a matrix: a fresh process (and its process group) run to its end, with its
 * standard output and error kept in its run folder (target.stdout, target.stderr: llama-bench's
 * JSON is read from there), a time limit, and an interrupt that can stop it early. */
#ifndef PERFSCOPE_REPORT_ARM_H
#define PERFSCOPE_REPORT_ARM_H

#include <signal.h>

#define ARM_KILL_GRACE_S 5.0 /* SIGTERM, then SIGKILL this much later */

struct arm_outcome {
    int started;        /* fork and exec were attempted; 0: error says why not */
    int exited, code;   /* a normal exit and its status (127: exec failed) */
    int signaled, sig;
    int timed_out;      /* the limit was reached and the process group was killed */
    int interrupted;    /* *stop became nonzero and the process group was killed */
    double wall_s;
    char error[256];
};

/* Runs argv (argv[0] looked up in PATH when it has no '/') with envp, in dir's files; stdin is
 * /dev/null. Stops it when timeout_s passes (<= 0: no limit) or *stop becomes nonzero. */
void arm_run(char *const *argv, char *const *envp, const char *dir, double timeout_s,
             volatile sig_atomic_t *stop, struct arm_outcome *out);

#endif
