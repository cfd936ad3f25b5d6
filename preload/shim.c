/* shim.c: the constructor and the one place that decides what runs in this process: reads the
 * configuration, opens the run folder, starts sampling, the writer and (if this process leads)
 * the markers watcher; and the one way out (shim_finish) for exit, _exit, exec and fatal
 * signals. When anything needed is missing it says so once and leaves the target alone: the
 * target's behaviour, output and exit status must never depend on whether the shim works. */
#include "shim.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "clock.h"
#include "counters/counters.h"
#include "leader.h"
#include "lifecycle.h"
#include "log.h"
#include "markers.h"
#include "meta.h"
#include "ring.h"
#include "sampler.h"
#include "writer.h"
#include "xfsz.h"

int ps_active;
uint64_t ps_start_ns;
_Atomic int ps_is_leader;
pid_t ps_pid;
extern int ps_owns_meta;

static pthread_key_t thread_key;
static _Atomic int finished;

uint64_t ps_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static pthread_mutex_t listed_lock = PTHREAD_MUTEX_INITIALIZER; /* ps_run_pids' cache */

/* A fork child has only the forking thread: locks another thread held at the fork are
 * reset, or the child's first log line or boundary would wait forever. */
static void reset_locks_in_child(void)
{
    log_after_fork();
    pthread_mutex_init(&listed_lock, NULL);
    markers_after_fork();
}

void shim_after_fork_child(void);

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

/* ---- the run's processes (procs.jsonl) ---- */

static void procs_line(const char *event, const char *status)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return;
    cJSON_AddNumberToObject(o, "pid", (double)getpid());
    cJSON_AddNumberToObject(o, "ppid", (double)getppid());
    cJSON_AddStringToObject(o, "event", event);
    cJSON_AddNumberToObject(o, "t_ns", (double)ps_now_ns());
    if (status)
        cJSON_AddStringToObject(o, "status", status);
    if (strcmp(event, "start") == 0) {
        char exe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n > 0) {
            exe[n] = 0;
            cJSON_AddStringToObject(o, "exe", exe);
        }
        if (writer_files_ok())
            cJSON_AddStringToObject(o, "samples", strrchr(ps_bin_path, '/') + 1);
    }
    markers_append_jsonl("procs.jsonl", o);
    cJSON_Delete(o);
}

/* Made at start: the fatal path may run on a small alternate signal stack. */
static char procs_path[PATH_MAX];

/* The fatal-signal path's exit line: built by hand, no allocation. */
static void procs_exit_line_signal_safe(const char *status)
{
    char line[160], num[24];
    size_t n = 0;
    const char *parts[] = { "{\"pid\":", NULL, ",\"event\":\"exit\",\"status\":\"", status, "\"}\n" };
    long v = (long)getpid();
    int k = 0;
    char rev[24];
    do {
        rev[k++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (int i = 0; i < k; i++)
        num[i] = rev[k - 1 - i];
    num[k] = 0;
    parts[1] = num;
    for (int i = 0; i < 5; i++) {
        size_t l = strlen(parts[i]);
        if (n + l >= sizeof line)
            return;
        memcpy(line + n, parts[i], l);
        n += l;
    }
    int fd = open(procs_path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd >= 0) {
        if (write(fd, line, n) < 0) { /* nothing to do */ }
        ps_real_close(fd);
    }
}

/* The run's processes as procs.jsonl lists them (started, not exited), parsed again only when
 * the file changed: the leader asks at every counter read. */
static pid_t listed[256];
static int nlisted;
static struct stat listed_st;

static void parse_procs(const char *path)
{
    nlisted = 0;
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    char line[8192];
    while (fgets(line, sizeof line, f)) {
        cJSON *o = cJSON_Parse(line);
        if (!o)
            continue;
        cJSON *pid = cJSON_GetObjectItemCaseSensitive(o, "pid");
        cJSON *ev = cJSON_GetObjectItemCaseSensitive(o, "event");
        if (cJSON_IsNumber(pid) && cJSON_IsString(ev)) {
            pid_t p = (pid_t)pid->valuedouble;
            int at = -1;
            for (int i = 0; i < nlisted; i++)
                if (listed[i] == p)
                    at = i;
            if (strcmp(ev->valuestring, "exit") == 0) {
                if (at >= 0)
                    listed[at] = listed[--nlisted];
            } else if (at < 0 && nlisted < (int)(sizeof listed / sizeof listed[0])) {
                listed[nlisted++] = p;
            }
        }
        cJSON_Delete(o);
    }
    fclose(f);
}

int ps_run_pids(pid_t *pids, int max)
{
    char path[PATH_MAX];
    ps_path(path, sizeof path, "procs.jsonl");
    struct stat st;
    if (stat(path, &st) != 0)
        return 0;
    pthread_mutex_lock(&listed_lock);
    if (st.st_size != listed_st.st_size || st.st_ino != listed_st.st_ino ||
        st.st_mtim.tv_sec != listed_st.st_mtim.tv_sec || st.st_mtim.tv_nsec != listed_st.st_mtim.tv_nsec) {
        parse_procs(path);
        listed_st = st;
    }
    int alive = 0;
    for (int i = 0; i < nlisted && alive < max; i++)
        if (kill(listed[i], 0) == 0 || errno == EPERM)
            pids[alive++] = listed[i];
    pthread_mutex_unlock(&listed_lock);
    return alive;
}

/* ---- threads ---- */

static void thread_key_destructor(void *v)
{
    struct ps_thread *t = v;
    if (!t || getpid() != ps_pid)
        return;
    /* No SIGPROF may run on this thread once its ring is handed back. */
    sigset_t prof;
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    pthread_sigmask(SIG_BLOCK, &prof, NULL);
    clock_disarm(t);
    thread_set_self(NULL);
    atomic_store(&t->state, PS_T_EXITED);
}

static void stack_bounds(struct ps_thread *t)
{
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return;
    void *addr;
    size_t size;
    if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
        t->stack_lo = (uintptr_t)addr;
        t->stack_hi = (uintptr_t)addr + size;
    }
    pthread_attr_destroy(&attr);
}

void shim_thread_started(void)
{
    if (!ps_active || ps_cfg.hz <= 0 || !sampler_installed() || getpid() != ps_pid)
        return;
    ps_guard_enter();
    struct ps_thread *t = thread_claim(ps_gettid());
    if (t) {
        t->ring = ring_new(PS_RING_SLOTS, (uint32_t)ps_cfg.max_frames + PS_HANDLER_FRAMES);
        stack_bounds(t);
        if (!t->ring) {
            atomic_store(&t->state, PS_T_FREE);
        } else {
            atomic_store(&t->state, PS_T_LIVE);
            thread_set_self(t);
            pthread_setspecific(thread_key, t);
            clock_arm(t, 1);
        }
    } else {
        ps_log_once("threads", "more than %d threads: later threads are not sampled", PS_MAX_THREADS);
    }
    ps_guard_leave();
}

void shim_thread_named(pthread_t thread, const char *name)
{
    if (!ps_active || !name)
        return;
    pid_t tid = 0;
    if (pthread_equal(thread, pthread_self()))
        tid = ps_gettid();
    else
        return; /* another thread's name is picked up from /proc by the writer */
    struct ps_thread *t = thread_self();
    if (t && t->tid == tid) {
        char buf[16] = { 0 };
        strncpy(buf, name, 15);
        memcpy(t->comm, buf, 16);
        t->comm_checked_ns = ps_now_ns();
    }
}

/* Threads already running when the shim starts (a library constructor started them). */
static void adopt_existing_threads(void)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task");
    DIR *d = opendir(path);
    if (!d)
        return;
    struct dirent *e;
    pid_t self = ps_gettid();
    while ((e = readdir(d)) != NULL) {
        pid_t tid = (pid_t)atoi(e->d_name);
        if (tid <= 0 || tid == self)
            continue;
        struct ps_thread *t = thread_claim(tid);
        if (!t)
            break;
        t->foreign = 1;
        t->ring = ring_new(PS_RING_SLOTS, (uint32_t)ps_cfg.max_frames + PS_HANDLER_FRAMES);
        if (!t->ring) {
            atomic_store(&t->state, PS_T_FREE);
            continue;
        }
        atomic_store(&t->state, PS_T_LIVE);
        clock_arm(t, 0);
    }
    closedir(d);
}

/* ---- fatal signals ---- */

static const int fatal_signals[] = { SIGHUP, SIGINT, SIGQUIT, SIGILL, SIGABRT, SIGFPE, SIGSEGV, SIGBUS, SIGPIPE,
                                     SIGALRM, SIGTERM, SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ, SIGSYS };
static _Atomic int fatal_once;

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGHUP: return "SIGHUP";
    case SIGINT: return "SIGINT";
    case SIGQUIT: return "SIGQUIT";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    case SIGFPE: return "SIGFPE";
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGPIPE: return "SIGPIPE";
    case SIGALRM: return "SIGALRM";
    case SIGTERM: return "SIGTERM";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
    case SIGXCPU: return "SIGXCPU";
    case SIGXFSZ: return "SIGXFSZ";
    case SIGSYS: return "SIGSYS";
    case SIGPROF: return "SIGPROF";
    case SIGKILL: return "SIGKILL";
    default: return "signal";
    }
}

int shim_is_fatal_signal(int sig)
{
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++)
        if (fatal_signals[i] == sig)
            return 1;
    return 0;
}

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
    (void)si;
    (void)uc;
    int saved = errno;
    if (getpid() == ps_pid && !atomic_exchange(&fatal_once, 1)) {
        char status[32] = "signal ";
        strcat(status, signal_name(sig));
        shim_finish_signal_safe(status);
    }
    /* The target's own disposition for this signal is the default: restore it and let the
     * signal do what it would have done. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    ps_real_sigaction(sig, &dfl, NULL);
    lifecycle_forget_fatal(sig);
    syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig); /* not the cached tid: a vfork child shares it */
    errno = saved;
}

void shim_install_fatal(int sig)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fatal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    if (ps_real_sigaction(sig, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL)
        if (ps_real_sigaction(sig, &sa, NULL) == 0)
            lifecycle_own_fatal(sig);
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
    writer_flush(0);
    uint64_t orphans = atomic_load(&ps_samples_orphan);
    if (orphans)
        ps_log("%llu samples arrived on threads without a buffer and were dropped", (unsigned long long)orphans);
    int exec = strcmp(status, "exec") == 0;
    procs_line(exec ? "exec" : "exit", exec ? NULL : status);
    if (ps_owns_meta && !exec)
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
    ps_guard_enter();
    struct ps_xfsz x;
    ps_xfsz_hold(&x);
    writer_flush(1);
    if (ps_owns_meta)
        meta_rewrite_status(status);
    procs_exit_line_signal_safe(status);
    ps_xfsz_release(&x);
    ps_guard_leave();
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
    shim_thread_started();
    adopt_existing_threads();
}

static void start(void)
{
    ps_start_ns = ps_now_ns();
    ps_pid = getpid();
    config_read();
    int dir_rc = make_dirs(ps_cfg.out_dir);
    int dir_errno = errno;
    log_start(dir_rc == 0);
    if (dir_rc != 0) {
        ps_log("cannot use the output folder %s (%s); the target runs unmeasured", ps_cfg.out_dir, strerror(dir_errno));
        return;
    }
    ps_path(procs_path, sizeof procs_path, "procs.jsonl");
    config_export_absolute();
    ps_active = 1;
    pthread_key_create(&thread_key, thread_key_destructor);
    pthread_atfork(NULL, NULL, atfork_child);
    if (ps_cfg.hz <= 0)
        clock_setup();
    start_sampling();
    procs_line("start", NULL);
    leader_start();
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++)
        shim_install_fatal(fatal_signals[i]);
    writer_start();
}

/* In a fork child (called by the fork wrapper): new files, new timers, new writer. */
void shim_after_fork_child(void)
{
    if (!ps_active)
        return;
    ps_pid = getpid();
    atomic_store(&finished, 0);
    atomic_store(&fatal_once, 0);
    thread_set_self(NULL);
    int used = atomic_load(&ps_threads_used);
    for (int i = 0; i < used; i++) {
        struct ps_thread *t = &ps_threads[i];
        if (atomic_load(&t->state) == PS_T_FREE)
            continue;
        clock_forget_inherited(t);
        ring_free(t->ring);
        t->ring = NULL;
        atomic_store(&t->state, PS_T_FREE);
    }
    atomic_store(&ps_threads_used, 0);
    atomic_store(&ps_samples_taken, 0);
    atomic_store(&ps_signals_taken, 0);
    atomic_store(&ps_samples_no_libunwind, 0);
    atomic_store(&ps_samples_orphan, 0);
    writer_forget_after_fork();
    leader_forget_after_fork();
    if (ps_cfg.hz > 0 && sampler_installed() && writer_open_files() == 0) {
        writer_maps_snapshot(0);
        shim_thread_started();
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
    if (lifecycle_exit_code(&code) && (code & 0xff) != 0)
        snprintf(status, sizeof status, "exit %d", code & 0xff);
    shim_finish(status);
    errno = saved;
}
