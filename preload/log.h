/* log.h: perfscope.log, the shim's one place to say what went wrong or was skipped: one line
 * each, prefixed perfscope[pid]:, in <out>/perfscope.log (stderr only for the one line saying the
 * folder is unusable). Never for the signal handler or the fatal path (it formats and may take a
 * lock); never a line on the target's stderr once the folder is known. */
#ifndef PERFSCOPE_LOG_H
#define PERFSCOPE_LOG_H

/* One line into <out>/perfscope.log (stderr when the folder is unusable). Not for the handler. */
void ps_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same, at most once per distinct key for the life of the process. */
void ps_log_once(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same, and not when perfscope.log already has the very line from another process or image
 * (its text after the prefix; the file's first MiB is read): for facts about the machine that
 * every image of a run meets alike, such as the leader's counters finding no RAPL or no NVML,
 * which a leader that execs (a wrapper script, a pyenv shim: `exec python ...`) met again at
 * every image. Not on a target's thread: it reads the log. */
void ps_log_run_once(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Once at start, when the run folder is decided: lines logged until now waited; with
 * folder_ok they go to perfscope.log, else they are dropped and later lines go to stderr. */
void log_start(int folder_ok);
/* In a fork child: the log_once lock another thread may have held is free again. */
void log_after_fork(void);

#endif
