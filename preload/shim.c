/* shim.c: the constructor and the one place that decides what runs in this process: reads the
 * configuration, opens the run folder, starts sampling, the writer and (if this process leads)
 * the markers watcher; starts again in a fork child; and decides the way out, once: shim_finish
 * for exit, exec and the return from main, shim_finish_signal_safe (fatal.c's path) for _exit,
 * _Exit and fatal signals. The work itself is done by the modules it calls. When anything
 * needed is missing it says so once and leaves the target alone: the target's behaviour, output
 * and exit status must never depend on whether the shim works. */
#include "shim.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "counters/counters.h"
#include "execenv.h"
#include "fatal.h"
#include "interpose.h"
#include "leader.h"
#include "log.h"
#include "markers.h"
#include "meta.h"
#include "procs.h"
#include "ring.h"
#include "runid.h"
#include "sampler.h"
#include "threads.h"
#include "unsampled.h"
#include "writer.h"
#include "xfsz.h"

int ps_active;
uint64_t ps_start_ns;
pid_t ps_pid;

static _Atomic int finished;

uint64_t ps_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A fork child has only the forking thread: locks another thread held at the fork are
 * reset, or the child's first log line or boundary would wait forever. */
static void reset_locks_in_child(void)
{
    log_after_fork();
    procs_after_fork();
    markers_after_fork();
}

static void atfork_child(void)
{
    int saved = errno;
    struct ps_xfsz x;
    ps_xfsz_hold(&x);
    reset_locks_in_child();
    shim_after_fork_child();
    ps_xfsz_release(&x);
    errno = saved;
}

static int make_dirs(const char *path)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(buf, 0755) != 0 && errno != EEXIST)
        return -1;
    struct stat st;
    if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return access(buf, W_OK | X_OK);
}

/* ---- start and finish ---- */

static double sampled_cpu_s(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    double user = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
    double sys = (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    /* The perf clock counts user time only where the kernel refuses more; else both. */
    return ps_clock_in_use == PS_CLOCK_PERF && !ps_perf_counts_kernel ? user : user + sys;
}

void shim_finish(const char *status)
{
    if (!ps_active || getpid() != ps_pid || atomic_exchange(&finished, 1))
        return;
    ps_guard_enter();
    struct ps_xfsz x;
    ps_xfsz_hold(&x);
    struct ps_thread *t = thread_self();
    if (t)
        clock_disarm(t);
    writer_stop(); /* first: its takeover check must not start a watcher after leader_stop */
    leader_stop();
    unsampled_finish(); /* before the last drain hands back the threads that exited */
    writer_flush(0);
    uint64_t orphans = atomic_load(&ps_samples_orphan);
    if (orphans)
        ps_log("%llu samples arrived on threads without a buffer and were dropped", (unsigned long long)orphans);
    int exec = strcmp(status, "exec") == 0;
    procs_line(exec ? "exec" : "exit", exec ? NULL : status);
    if (leader_owns_meta() && !exec)
        meta_write_exit(status, sampled_cpu_s());
    counters_close();
    ps_xfsz_release(&x);
    ps_guard_leave();
}

/* The way out when the caller may be a signal handler (_exit, _Exit, fatal signals): only
 * async-signal-safe work, every wait bounded. No thread is joined, nothing is allocated. */
void shim_finish_signal_safe(const char *status)
{
    if (!ps_active || getpid() != ps_pid || atomic_exchange(&finished, 1))
        return;
    fatal_finish(status);
}

/* exec failed: the image goes on, so sampling does too. */
void shim_resume_after_failed_exec(void)
{
    if (!ps_active || getpid() != ps_pid)
        return;
    atomic_store(&finished, 0);
    struct ps_thread *t = thread_self();
    if (t)
        clock_arm(t, 1);
    leader_resume();
    writer_start();
}

static void start_sampling(void)
{
    if (ps_cfg.hz <= 0)
        return;
    if (writer_open_files() != 0)
        return;
    clock_setup();
    writer_maps_snapshot(0);
    if (sampler_install() != 0) {
        ps_log("cannot install the SIGPROF handler (%s): stack samples are off", strerror(errno));
        return;
    }
    threads_started();
    threads_adopt_existing();
}

static void start(void)
{
    ps_start_ns = ps_now_ns();
    ps_pid = getpid();
    config_read();
    execenv_start(); /* before anything changes the environment: config_export_absolute */
    /* A run folder is one run: a folder that holds another run, or an earlier one that is
     * over, gets nothing from this process (one line on stderr per process tree). */
    char why[PATH_MAX + 768];
    if (runid_decide(why, sizeof why) == RUNID_OTHER) {
        if (why[0] && write(2, why, strlen(why)) < 0) { /* stderr gone: stay quiet */ }
        runid_export();
        return;
    }
    int dir_rc = make_dirs(ps_cfg.out_dir);
    int dir_errno = errno;
    log_start(dir_rc == 0);
    if (dir_rc != 0) {
        ps_log("cannot use the output folder %s (%s); the target runs unmeasured", ps_cfg.out_dir, strerror(dir_errno));
        return;
    }
    procs_start();
    config_export_absolute();
    runid_export();
    ps_active = 1;
    threads_setup();
    pthread_atfork(NULL, NULL, atfork_child);
    if (ps_cfg.hz <= 0)
        clock_setup();
    start_sampling();
    procs_line("start", NULL);
    leader_start();
    fatal_install_all();
    writer_start();
}

/* In a fork child (pthread_atfork's child handler): new files, new timers, new writer. */
void shim_after_fork_child(void)
{
    if (!ps_active)
        return;
    ps_pid = getpid();
    atomic_store(&finished, 0);
    runid_after_fork();
    fatal_after_fork();
    threads_forget_after_fork();
    atomic_store(&ps_samples_taken, 0);
    atomic_store(&ps_signals_taken, 0);
    atomic_store(&ps_samples_no_libunwind, 0);
    atomic_store(&ps_samples_orphan, 0);
    writer_forget_after_fork();
    leader_forget_after_fork();
    if (ps_cfg.hz > 0 && sampler_installed() && writer_open_files() == 0) {
        writer_maps_snapshot(0);
        threads_started();
    }
    procs_line("start", NULL);
    leader_start();
    writer_start();
}

__attribute__((constructor)) static void perfscope_init(void)
{
    if (getauxval(AT_SECURE))
        return; /* setuid/setgid: never write files for a privileged image */
    int saved = errno;
    ps_guard_enter();
    struct ps_xfsz x;
    ps_xfsz_hold(&x);
    start();
    ps_xfsz_release(&x);
    ps_guard_leave();
    errno = saved;
}

__attribute__((destructor)) static void perfscope_fini(void)
{
    int saved = errno;
    char status[32] = "ok";
    int code;
    /* The status the parent sees is the low 8 bits: exit(256) is a success. */
    if (interpose_exit_code(&code) && (code & 0xff) != 0)
        snprintf(status, sizeof status, "exit %d", code & 0xff);
    shim_finish(status);
    errno = saved;
}
