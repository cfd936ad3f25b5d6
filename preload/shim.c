/* shim.c: the constructor and the one place that decides what runs in this process: reads the
 * configuration, opens the run folder, starts sampling, the writer and (if this process leads)
 * the markers watcher; starts again in a fork child; and decides the way out, once: shim_finish
 * for exit, exec and the return from main, shim_finish_signal_safe (fatal.c's path) for _exit,
 * _Exit and fatal signals. The work itself is done by the modules it calls. When anything
 * needed is missing it says so once and leaves the target alone: the target's behaviour, output
 * and exit status must never depend on whether the shim works. */
#include "shim.h"

#include <errno.h>
#include <fcntl.h>
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
#include "credsync.h"
#include "dlbusy.h"
#include "execenv.h"
#include "fatal.h"
#include "fdcache.h"
#include "fdgate.h"
#include "fds.h"
#include "interpose.h"
#include "kchain.h"
#include "leader.h"
#include "lifetime.h"
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
#include "runfolder.h"
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
    dlbusy_after_fork_child();
}

/* No libunwind warm-up (sampler.c) and no libunwind walk under way in another thread's handler
 * while the child is made (dlbusy.h). */
static void atfork_prepare(void)
{
    sampler_fork_prepare();
    dlbusy_fork_prepare();
}

/* glibc's daemon() ends its parent with an _exit(0) inside the C library, past every
 * wrapper: the parent's run is finished here, in the parent's fork handler, when the fork
 * made a child (fork leaves errno alone on success; the daemon wrapper cleared it). */

static void atfork_parent(void)
{
    int saved = errno;
    dlbusy_fork_done();
    sampler_fork_parent();
    if (interpose_in_daemon() && saved == 0)
        shim_finish("ok");
    errno = saved;
}

static void atfork_child(void)
{
    int saved = errno;
    struct ps_xfsz x;
    ps_xfsz_hold_alone(&x); /* a fork child has only this thread */
    fds_alone(1);
    reset_locks_in_child();
    dlbusy_fork_done(); /* the prepare's share, counted in the child's by reset_locks_in_child */
    sampler_fork_child();
    shim_after_fork_child();
    fds_alone(0);
    ps_xfsz_release(&x);
    errno = saved;
}

static int make_dirs(const char *path, unsigned *mode)
{
    struct stat st;
    /* The run's folder is there but for the run's first process: one stat, no mkdir per
     * component (the answer is the same: a folder we may write in). */
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        *mode = st.st_mode;
        return access(path, W_OK | X_OK);
    }
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
    if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    *mode = st.st_mode;
    return access(buf, W_OK | X_OK);
}

/* ---- start and finish ---- */

void shim_finish(const char *status)
{
    if (!ps_active || getpid() != ps_pid || atomic_exchange(&finished, 1))
        return;
    ps_guard_enter();
    fdgate_forget_freed(); /* the writer's last pass must not wait for this thread */
    struct ps_xfsz x;
    ps_xfsz_hold(&x);
    struct ps_thread *t = thread_self();
    if (t)
        clock_disarm(t);
    sampler_close(); /* no other thread's sample after the last flush either */
    writer_stop(); /* first: its takeover check must not start a watcher after leader_stop */
    writer_way_out();
    leader_stop(0);
    unsampled_finish(); /* before the last drain hands back the threads that exited */
    writer_maps_catch_up();
    writer_flush_last(0);
    uint64_t orphans = atomic_load(&ps_samples_orphan);
    if (orphans)
        ps_log("%llu samples arrived on threads without a buffer and were dropped", (unsigned long long)orphans);
    int exec = strcmp(status, "exec") == 0;
    procs_line(exec ? "exec" : "exit", exec ? NULL : status);
    if (leader_owns_meta() && !exec)
        meta_write_exit(status);
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
    sampler_reopen();
    kchain_resume();
    struct ps_thread *t = thread_self();
    if (t)
        clock_arm(t, 1);
    leader_resume();
    writer_start();
}

/* ---- calls refused to a process of several threads ---- */

/* unshare of a user namespace (and of CLONE_THREAD, CLONE_SIGHAND, CLONE_VM), and setns into a
 * user, mount or time namespace, are refused (EINVAL, EUSERS) to a process of more than one
 * thread, or whose threads share its filesystem information, as every pthread does: under the
 * shim `unshare -U`, `unshare -r` and `nsenter -m` failed. The wrappers (interpose.c) make such
 * a refused call once more with the shim's threads stopped and joined, and start them again
 * after it (shim_threads_back), whatever its result: the steps of an exec that fails. A joined
 * thread may still be in the kernel's thread group for a moment (it wakes its joiner before it
 * releases its files and filesystem information): the kernel's count of threads is waited for,
 * at most WAIT_ALONE_NS. Not done (the refusal stands, as it would have): on a second thread
 * while one is doing it; once the way out has begun; under a seccomp filter (threads started
 * from a filtered thread would carry its filter). Not from a signal handler: the restart
 * allocates. 1 when threads were stopped. */
#define WAIT_ALONE_NS 200000000ull
static _Atomic int aside_busy;
static int aside_writer, aside_watcher; /* what shim_threads_back starts again */

int shim_threads_aside(void)
{
    int saved = errno;
    if (!ps_active || getpid() != ps_pid || atomic_load(&finished) || fds_sealed())
        return 0; /* (a vfork child shares our memory: the threads are its parent's) */
    if (atomic_exchange(&aside_busy, 1))
        return 0;
    long threads = threads_in_process(); /* -1 when /proc cannot tell: stopped all the same */
    ps_guard_enter();
    aside_writer = writer_stop();
    aside_watcher = leader_stop(1);
    int stopped = aside_writer + aside_watcher;
    if (!stopped) {
        ps_guard_leave();
        atomic_store(&aside_busy, 0);
        errno = saved;
        return 0;
    }
    /* The count the kernel must reach (libunwind's warm-up thread, detached, ends by itself). */
    long alone = threads - stopped;
    uint64_t until = ps_now_ns() + WAIT_ALONE_NS;
    while (threads > 0 && threads_in_process() > alone && ps_now_ns() < until) {
        struct timespec ms = { 0, 200000 };
        nanosleep(&ms, NULL);
    }
    ps_guard_leave();
    errno = saved;
    return 1;
}

void shim_threads_back(void)
{
    int saved = errno;
    ps_guard_enter();
    if (!atomic_load(&finished)) {
        if (aside_watcher)
            leader_resume();
        if (aside_writer)
            writer_start();
    }
    aside_writer = aside_watcher = 0;
    ps_guard_leave();
    atomic_store(&aside_busy, 0);
    errno = saved;
}

static void start_sampling(void)
{
    if (ps_cfg.hz <= 0)
        return;
    if (writer_open_files() != 0) /* names only: the files come with the first sample */
        return;
    clock_setup();
    if (sampler_install() != 0) {
        ps_log("cannot install the SIGPROF handler (%s): stack samples are off", strerror(errno));
        return;
    }
    threads_adopt_existing(); /* before the shim starts threads of its own */
}

/* This thread's clock starts last, once the shim's own start-up work on this thread is
 * done: its file I/O here is not the target's CPU, and a signal landing in this deep start-up
 * path is what valgrind once could not deliver (it killed the target with SIGSEGV, "can't
 * extend stack"). */
static void start_this_thread(void)
{
    if (ps_cfg.hz <= 0 || !sampler_installed())
        return;
    threads_started();
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
    unsigned dir_mode = 0;
    int dir_rc = make_dirs(ps_cfg.out_dir, &dir_mode);
    int dir_errno = errno;
    log_start(dir_rc == 0);
    if (dir_rc != 0) {
        ps_log("cannot use the output folder %s (%s); the target runs unmeasured", ps_cfg.out_dir, strerror(dir_errno));
        runid_unusable();
        return;
    }
    fds_run_share(dir_mode);
    procs_start();
    meta_image_start();
    config_export_absolute();
    runid_export();
    ps_active = 1;
    threads_setup();
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
    if (ps_cfg.hz <= 0)
        clock_setup();
    start_sampling();
    procs_line("start", NULL);
    leader_start();
    fatal_install_all();
    fdgate_closed_at_start();
    writer_start();
    start_this_thread();
}

/* In a fork child (pthread_atfork's child handler): new files, new timers, new writer. */
void shim_after_fork_child(void)
{
    if (!ps_active)
        return;
    ps_pid = getpid();
    clock_transit_after_fork_child();
    fds_io_after_fork_child();
    ps_shim_threads_after_fork_child();
    credsync_after_fork();
    atomic_store(&finished, 0);
    sampler_reopen();
    kchain_resume(); /* forked while another thread was on the way out */
    runid_after_fork();
    fatal_after_fork();
    lifetime_after_fork();
    meta_after_fork();
    threads_forget_after_fork();
    atomic_store(&ps_samples_orphan, 0);
    writer_forget_after_fork();
    fdcache_forget_after_fork();
    leader_forget_after_fork();
    if (fds_sealed()) {
        /* A child of a thread under a seccomp filter has the filter too: no file may be opened
         * here, so it cannot have sample files of its own. Its start and end are still
         * recorded, through the descriptors its parent kept (its copies of the parent's own
         * files are closed). */
        char meta[PATH_MAX];
        ps_path(meta, sizeof meta, RUN_META);
        fds_seal(1);
        fds_unkeep(ps_bin_path);
        fds_unkeep(ps_maps_path);
        fds_unkeep(meta);
        fds_unkeep("/proc/self/stat");
        fds_unkeep("/proc/self/status");
        ps_log("forked under a seccomp filter: this process is not sampled (it may not open files)");
        procs_line("start", NULL);
        return;
    }
    if (ps_cfg.hz > 0 && sampler_installed() && writer_open_files() == 0)
        threads_started();
    procs_line("start", NULL);
    leader_start();
    writer_start();
}

/* ---- seccomp ---- */

/* Before the calling thread enters seccomp strict mode (only read, write, exit and sigreturn
 * from then on; not even the TSC: the vDSO clock faults): it is no longer sampled, and the
 * fatal-signal stand-ins step aside, since everything they do would kill the thread. The end
 * of the process is watched from the shim's threads (lifetime.c). */
static void before_strict(void)
{
    int tid = (int)ps_gettid();
    ps_log("thread %d enters seccomp strict mode: it is no longer sampled, and fatal signals are no longer "
           "recorded (the shim's handlers need system calls strict mode kills)", tid);
    struct ps_thread *t = thread_self();
    if (t)
        clock_disarm(t);
    dlbusy_thread_strict();
    fatal_step_aside();
    if (tid == (int)getpid())
        lifetime_watch_closely();
}

/* Before a seccomp filter is installed on the calling thread (every_thread: synchronised onto
 * every thread, the shim's too): the filter may kill the process on any open, so the files the
 * shim still needs are opened now and kept, and no file is opened on a covered thread again. */
static void before_filter(int every_thread)
{
    if (ps_cfg.hz > 0 && writer_files_ok()) {
        writer_make_files(); /* made at the first sample otherwise: too late under the filter */
        sampler_warm_libunwind_now(); /* its files and pipe (the filter may not allow them later) */
        fds_keep(ps_bin_path, O_WRONLY, 0);
        fds_keep(ps_maps_path, O_WRONLY | O_APPEND, 0);
    }
    char path[PATH_MAX];
    fds_keep(procs_path_of_run(), O_WRONLY | O_APPEND, 0);
    ps_path(path, sizeof path, RUN_LOG);
    fds_keep(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (leader_is_us()) {
        ps_path(path, sizeof path, RUN_PHASES);
        fds_keep(path, O_WRONLY | O_APPEND, 0); /* only if there is one already */
        ps_path(path, sizeof path, RUN_COUNTERS);
        fds_keep(path, O_WRONLY | O_APPEND, 0); /* the counters lines read before the filter */
    }
    if (ps_cfg.markers[0])
        fds_keep(ps_cfg.markers, O_WRONLY | O_CREAT | O_APPEND, 0644);
    fds_keep("/proc/self/stat", O_RDONLY, 0);
    fds_keep("/proc/self/status", O_RDONLY, 0);
    if (leader_owns_meta()) {
        meta_note_end_unseen("a seccomp filter was installed: a process it kills ends unseen");
        meta_keep_for_filter();
    }
    ps_log("a seccomp filter is being installed on %s: from now on the shim opens no file %s (the files it "
           "needs stay open); maps snapshots%s stop there, and a process the filter kills ends unseen",
           every_thread ? "every thread" : "this thread", every_thread ? "at all" : "on the target's threads",
           every_thread ? ", thread names, markers and counters" : " and thread names");
    if (fds_seal(every_thread) != 0)
        ps_log("a thread of the shim's was still opening a file after 2 s: the filter may kill the process");
}

int shim_before_seccomp(int strict, int every_thread)
{
    if (!ps_active || getpid() != ps_pid)
        return 0;
    int saved = errno, before = fds_sealed();
    ps_guard_enter();
    struct ps_xfsz x;
    ps_xfsz_hold(&x);
    if (strict)
        before_strict();
    else
        before_filter(every_thread);
    ps_xfsz_release(&x);
    ps_guard_leave();
    errno = saved;
    return before;
}

void shim_seccomp_refused(int before)
{
    fds_unseal(before);
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
