/* shim.h: what the parts of the shim share: the configuration read once at start, the log,
 * the clock, and the run folder's file names. Nothing here may be called from the signal
 * handler except ps_now_ns(). */
#ifndef PERFSCOPE_SHIM_H
#define PERFSCOPE_SHIM_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>
#include <signal.h>
#include <pthread.h>
#include <stdatomic.h>

#define PS_API __attribute__((visibility("default")))

enum ps_clock { PS_CLOCK_AUTO, PS_CLOCK_PERF, PS_CLOCK_TIMER };
enum ps_unwind { PS_UNWIND_LIBUNWIND, PS_UNWIND_FP };

struct ps_config {
    char out_dir[PATH_MAX];      /* PERFSCOPE_OUT, or the folder of LLMPERFSCOPE_CPUPROF_OUT */
    char file_prefix[PATH_MAX];  /* "<out>/cpuprof": sample files are <prefix>.<pid>[.<n>].bin */
    int hz;                      /* requested samples per CPU second; 0: no stack sampling */
    enum ps_clock clock;         /* as asked */
    enum ps_unwind unwind;
    int max_frames;              /* 1..256 */
    int counter_ms;              /* 0: no periodic counter reads */
    char markers[PATH_MAX];      /* LLMPERFSCOPE_MARKERS, "" when unset */
    char powercap_root[PATH_MAX];
    char nvml_path[PATH_MAX];
};

extern struct ps_config ps_cfg;

/* CLOCK_MONOTONIC in ns; async-signal-safe (vDSO). */
uint64_t ps_now_ns(void);

/* One line into <out>/perfscope.log (stderr when the folder is unusable). Not for the handler. */
void ps_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same, at most once per distinct key for the life of the process. */
void ps_log_once(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Around the shim's writes on the target's threads: SIGXFSZ held, and taken back if our write
 * raised it (async-signal-safe). */
struct ps_xfsz {
    sigset_t saved;
    int was_pending;
};
void ps_xfsz_hold(struct ps_xfsz *x);
void ps_xfsz_release(const struct ps_xfsz *x);

/* "<out>/<name>" into buf. */
void ps_path(char *buf, size_t size, const char *name);

/* Pids of the run's live processes (from procs.jsonl), at most max; returns the count. */
int ps_run_pids(pid_t *pids, int max);

/* The C library's own functions behind the ones lifecycle.c wraps (the shim's internal calls
 * must never go through its own wrappers). Resolved on first use. */
#include <signal.h>
int ps_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old);
int ps_real_close(int fd);
int ps_real_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);

/* CLOCK_MONOTONIC when the shim started in this image. */
extern uint64_t ps_start_ns;

/* Set when the shim is working in this process (sampling or leader duties). */
extern int ps_active;
/* Whether this process is the run's leader now. */
extern _Atomic int ps_is_leader;

#endif
