/* procs.h: procs.jsonl, the run's process tree: one line when a process starts, execs or exits,
 * read back for the run's live pids (the leader's memory and GPU memory by pid, the takeover
 * check). Never rewrites or truncates the file: every process of the run appends to it. Only
 * procs_exit_line_signal_safe may be called from a signal handler. */
#ifndef PERFSCOPE_PROCS_H
#define PERFSCOPE_PROCS_H

#include <sys/types.h>

/* At start, once the run folder is known: the fatal path's copy of the file's path. */
void procs_start(void);
/* One line for this process: event "start", "exec" or "exit" (with its status). */
void procs_line(const char *event, const char *status);
/* The fatal-signal path's exit line: built by hand, no allocation (async-signal-safe). */
void procs_exit_line_signal_safe(const char *status);
/* procs.jsonl's path, made at start (for fds_keep). */
const char *procs_path_of_run(void);
/* Pids of the run's live processes (from procs.jsonl), at most max; returns the count. */
int ps_run_pids(pid_t *pids, int max);
/* The run's sampling figures so far: the sums of every exit and exec line's "sampling" in
 * procs.jsonl (the images that had ended, this one's own exit line included once written). Not
 * for a signal handler (file reads, allocation). 0, or -1 when the file cannot be read. */
struct procs_sampling {
    int images;
    double samples, distinct_samples, sampled_cpu_s;
};
int procs_run_sampling(struct procs_sampling *out);
/* Before a target's dup2 onto fd: the kept descriptor on procs.jsonl, if that is it, is forgotten. */
void procs_forget_fd(int fd);
/* In a fork child: the lock a parent thread may have held is free again. */
void procs_after_fork(void);

#endif
