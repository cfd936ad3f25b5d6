/* interpose.c: the C library functions the shim wraps (interpose.h), so it follows the target
 * through its life: threads (pthread_create), exec (fork is followed through pthread_atfork in
 * shim.c), the ways out (return from main, exit, _exit), unloads (dlclose; loads are seen by the
 * writer), the loader calls the handler must not unwind through (dl_iterate_phdr), signal
 * dispositions and waits (SIGPROF and the fatal ones), the namespace calls refused to a process
 * of several threads (unshare, setns), the credential calls the shim's threads must follow
 * (capset, prctl: credsync.c), and clone() (a child must not meet a shim thread half made). The
 * descriptor calls are fds.c's. Every
 * wrapper must behave, towards the target, exactly as the function it wraps: same results, same
 * errno; the shim's own calls use the ps_real_ functions, never these wrappers. */
#include "interpose.h"

#include <dlfcn.h>
#include <sched.h>
#include <errno.h>
#include <time.h>
#include <link.h>
#include <linux/capability.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "config.h"
#include "credsync.h"
#include "dlbusy.h"
#include "execenv.h"
#include "fatal.h"
#include "fds.h"
#include "lifetime.h"
#include "log.h"
#include "ring.h"
#include "sampler.h"
#include "shim.h"
#include "sigmask.h"
#include "threads.h"
#include "unwlib.h"
#include "writer.h"
#include "xfsz.h"

/* ---- real functions used inside the shim ---- */

static int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);
static int (*real_pthread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
static int (*real_dl_iterate_phdr)(int (*)(struct dl_phdr_info *, size_t, void *), void *);
static int (*real_sigtimedwait)(const sigset_t *, siginfo_t *, const struct timespec *);

int ps_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    PS_RESOLVE(sigaction);
    return real_sigaction(sig, act, old);
}

int ps_real_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    PS_RESOLVE(pthread_create);
    return real_pthread_create(t, attr, fn, arg);
}

/* One CPU of the creator's, for a new thread pinned near it: the creator's current one when it
 * runs under a normal policy and may run on more than one (a real-time creator could keep a
 * pinned thread from ever running there), else -1. */
static int pin_cpu(struct ps_thread_pin *pin)
{
    int policy = sched_getscheduler(0) & ~SCHED_RESET_ON_FORK;
    if (policy != SCHED_OTHER && policy != SCHED_BATCH)
        return -1;
    if (sched_getaffinity(0, sizeof pin->allowed, &pin->allowed) != 0 || CPU_COUNT(&pin->allowed) < 2)
        return -1;
    int cpu = sched_getcpu();
    return cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, &pin->allowed) ? cpu : -1;
}

/* Shim threads created and not yet running their first instruction. Until a thread runs, the C
 * library keeps it marked as not yet cloned (its setxid_futex is -1), and a child that glibc's
 * clone() makes then (no CLONE_VM: a copy of the memory, not of the threads) keeps that mark for
 * a thread it does not have: its setuid, setgid or setresuid waited for it forever. A launcher
 * that clones at the very start of main and drops its ids in the child hung in 12 to 15 of 20
 * runs at 997 Hz: the writer, pinned to its creator's CPU, does not run while main does. The
 * clone() wrapper (below, "the process tree") waits for them to run first, at most
 * START_WAIT_NS. A fork child is not concerned: the C library's fork gives it a list of its one
 * thread. */
#define START_WAIT_NS 100000000ull
static _Atomic int threads_starting;
/* clone() calls under way: a shim thread is not created meanwhile (each side announces itself,
 * then looks at the other: one of the two always sees the other). */
static _Atomic int clones_under_way;

static void *shim_thread_entry(void *fn)
{
    atomic_fetch_sub(&threads_starting, 1);
    return ((void *(*)(void *))fn)(NULL);
}

void ps_shim_threads_after_fork_child(void)
{
    atomic_store(&threads_starting, 0); /* the parent's, not yet running: not the child's */
    atomic_store(&clones_under_way, 0);
}

static int create_counted(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *))
{
    uint64_t until = ps_now_ns() + START_WAIT_NS;
    for (;;) {
        atomic_fetch_add(&threads_starting, 1);
        if (atomic_load(&clones_under_way) == 0 || ps_now_ns() >= until)
            break;
        atomic_fetch_sub(&threads_starting, 1);
        struct timespec pause = { 0, 50000 };
        nanosleep(&pause, NULL);
    }
    int rc = ps_real_pthread_create(t, attr, shim_thread_entry, (void *)fn);
    if (rc != 0)
        atomic_fetch_sub(&threads_starting, 1);
    return rc;
}

static int start_thread(pthread_t *t, void *(*fn)(void *), struct ps_thread_pin *pin)
{
    sigset_t all, before;
    sigfillset(&all);
    pthread_attr_t attr;
    if (pin)
        pin->cpu = -1;
    if (pthread_attr_init(&attr) == 0) {
        int rc = -1;
        if (pthread_attr_setsigmask_np(&attr, &all) == 0) {
            int cpu = pin ? pin_cpu(pin) : -1;
            cpu_set_t one;
            CPU_ZERO(&one);
            if (cpu >= 0) {
                CPU_SET(cpu, &one);
                if (pthread_attr_setaffinity_np(&attr, sizeof one, &one) == 0)
                    pin->cpu = cpu; /* before the thread exists: it reads it */
            }
            rc = create_counted(t, &attr, fn);
        }
        pthread_attr_destroy(&attr);
        if (rc != 0 && pin && pin->cpu >= 0) { /* refused as pinned (the CPU gone): anywhere */
            pin->cpu = -1;
            return start_thread(t, fn, NULL);
        }
        if (rc != -1)
            return rc;
    }
    ps_real_pthread_sigmask(SIG_BLOCK, &all, &before); /* the new thread inherits it */
    int rc = create_counted(t, NULL, fn);
    ps_real_pthread_sigmask(SIG_SETMASK, &before, NULL);
    return rc;
}

int ps_start_shim_thread(pthread_t *t, void *(*fn)(void *))
{
    return start_thread(t, fn, NULL);
}

int ps_start_shim_thread_near(pthread_t *t, void *(*fn)(void *), struct ps_thread_pin *pin)
{
    return start_thread(t, fn, pin);
}

void ps_shim_thread_unpin(struct ps_thread_pin *pin)
{
    if (pin->cpu < 0)
        return;
    cpu_set_t now;
    /* Only from the CPU the start chose: a mask someone else set since (taskset -a, a cpuset
     * that changed) is theirs, and stays. */
    if (sched_getaffinity(0, sizeof now, &now) == 0 && CPU_COUNT(&now) == 1 && CPU_ISSET(pin->cpu, &now))
        sched_setaffinity(0, sizeof pin->allowed, &pin->allowed);
    pin->cpu = -1;
}

int ps_join_shim_thread(pthread_t t, const char *what)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += 2;
    int rc = pthread_clockjoin_np(t, NULL, CLOCK_MONOTONIC, &until);
    if (rc == ETIMEDOUT)
        ps_log_once("join", "the %s thread did not stop within 2 s on the way out (waiting, most likely, "
                    "for the loader's lock the leaving thread holds): the way out went on without it", what);
    return rc == 0;
}

/* Inside the guard (the loader's lock is held in the callbacks). The shim's own calls: never
 * busy (dlbusy.h), their callbacks wait for nothing. */
int ps_real_dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
    PS_RESOLVE(dl_iterate_phdr);
    ps_guard_enter();
    int rc = real_dl_iterate_phdr(cb, data);
    ps_guard_leave();
    return rc;
}

int ps_real_sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout)
{
    PS_RESOLVE(sigtimedwait);
    return real_sigtimedwait(set, info, timeout);
}

/* ---- threads ---- */

struct start_args {
    void *(*fn)(void *);
    void *arg;
    int prof_hidden; /* the creator's mask, as the target sees it, blocked SIGPROF */
};

/* The shim's start of a new thread, not cancelled midway (its clock's descriptors, its slot): a
 * thread cancelled as soon as created left them taken (a perf event's descriptor at a low
 * number, the transit slot) and the descriptor gate's count up. A cancellation asked for
 * meanwhile acts at the thread's first cancellation point, as without the shim. Apart from the
 * trampoline, whose jump into the thread's function an address-taken local would prevent. */
__attribute__((noinline))
static void thread_start(int prof_hidden)
{
    int cancel_state = PTHREAD_CANCEL_ENABLE;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
    sigmask_inherit(prof_hidden);
    threads_started();
    pthread_setcancelstate(cancel_state, NULL);
}

__attribute__((optimize("optimize-sibling-calls")))
static void *thread_trampoline(void *p)
{
    struct start_args a = *(struct start_args *)p;
    free(p);
    thread_start(a.prof_hidden);
    return a.fn(a.arg); /* a jump: the thread's stacks hold no frame of the shim's */
}

PS_API int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    PS_RESOLVE(pthread_create);
    if (!ps_active || ps_cfg.hz <= 0)
        return real_pthread_create(t, attr, fn, arg);
    struct start_args *a = malloc(sizeof *a);
    if (!a)
        return real_pthread_create(t, attr, fn, arg);
    a->fn = fn;
    a->arg = arg;
    int held;
    a->prof_hidden = sigmask_before_create(attr, &held);
    int rc = real_pthread_create(t, attr, thread_trampoline, a);
    sigmask_after_create(held);
    if (rc != 0)
        free(a);
    return rc;
}

static int (*real_pthread_setname_np)(pthread_t, const char *);

PS_API int pthread_setname_np(pthread_t thread, const char *name)
{
    PS_RESOLVE(pthread_setname_np);
    int rc = real_pthread_setname_np(thread, name);
    if (rc == 0)
        threads_named(thread, name);
    return rc;
}

/* ---- the process tree ---- */

typedef int (*clone_fn)(void *);
static int (*real_clone)(clone_fn, void *, int, void *, ...);
static void resolve_for_a_clone_child(void);

PS_API int clone(clone_fn fn, void *stack, int flags, void *arg, ...)
{
    PS_RESOLVE(clone);
    va_list ap;
    va_start(ap, arg);
    pid_t *parent_tid = va_arg(ap, pid_t *); /* read whatever the flags: the C library does */
    void *tls = va_arg(ap, void *);
    pid_t *child_tid = va_arg(ap, pid_t *);
    va_end(ap);
    if (flags & CLONE_VM)
        return real_clone(fn, stack, flags, arg, parent_tid, tls, child_tid);
    resolve_for_a_clone_child();
    atomic_fetch_add(&clones_under_way, 1);
    if (atomic_load(&threads_starting) > 0) {
        int saved = errno;
        uint64_t until = ps_now_ns() + START_WAIT_NS;
        while (atomic_load(&threads_starting) > 0 && ps_now_ns() < until) {
            struct timespec pause = { 0, 50000 }; /* the CPU to a thread pinned to this one */
            nanosleep(&pause, NULL);
        }
        errno = saved;
    }
    int rc = real_clone(fn, stack, flags, arg, parent_tid, tls, child_tid);
    int saved = errno;
    atomic_fetch_sub(&clones_under_way, 1); /* (in the parent: the child's copy is its own) */
    errno = saved;
    return rc;
}

/* fork is followed through pthread_atfork (shim.c), which also sees the forks the C library
 * makes itself (daemon()), past any wrapper. */

/* Before the image is replaced: everything sampled so far goes to disk. The new image
 * inherits the mask and the SIGPROF ignore the target asked for (a vfork child's dispositions
 * are its own: it switches its own). 1 when SIGPROF was switched to SIG_IGN. */
static int before_exec(void)
{
    if (ps_active && getpid() == ps_pid) /* a vfork child shares our memory: leave the parent's state alone */
        shim_finish("exec");
    sigmask_before_exec(); /* the new image inherits the mask the target asked for */
    return sampler_ignore_for_child();
}

static void after_failed_exec(int saved_errno, int ignored)
{
    sampler_handler_back(ignored);
    sigmask_after_failed_exec();
    if (ps_active && getpid() == ps_pid)
        shim_resume_after_failed_exec();
    errno = saved_errno;
}

static int (*real_execve)(const char *, char *const[], char *const[]);
static int (*real_execv)(const char *, char *const[]);
static int (*real_execvp)(const char *, char *const[]);
static int (*real_execvpe)(const char *, char *const[], char *const[]);
static int (*real_fexecve)(int, char *const[], char *const[]);
static int (*real_posix_spawn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                               const posix_spawnattr_t *, char *const[], char *const[]);
static int (*real_posix_spawnp)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                                const posix_spawnattr_t *, char *const[], char *const[]);

/* The new image's environment goes through execenv_fix: the shim's relative LD_PRELOAD entry and
 * run folder variables made absolute, so the shim loads after a cd (execenv.h). */
PS_API int execve(const char *path, char *const argv[], char *const envp[])
{
    PS_RESOLVE(execve);
    int ignored = before_exec();
    struct execenv e;
    char *const *env = execenv_fix(envp, &e);
    int rc = real_execve(path, argv, env);
    execenv_release(&e);
    after_failed_exec(errno, ignored);
    return rc;
}

/* execv and execvp hand on environ: as execve and execvpe when it needs rewriting. */
PS_API int execv(const char *path, char *const argv[])
{
    PS_RESOLVE(execv);
    int ignored = before_exec();
    struct execenv e;
    char *const *env = execenv_fix(environ, &e);
    int rc;
    if (env != environ) { /* never in a vfork child: execenv_fix passes it through */
        PS_RESOLVE(execve);
        rc = real_execve(path, argv, env);
    } else {
        rc = real_execv(path, argv);
    }
    execenv_release(&e);
    after_failed_exec(errno, ignored);
    return rc;
}

PS_API int execvp(const char *file, char *const argv[])
{
    PS_RESOLVE(execvp);
    int ignored = before_exec();
    struct execenv e;
    char *const *env = execenv_fix(environ, &e);
    int rc;
    if (env != environ) {
        PS_RESOLVE(execvpe);
        rc = real_execvpe(file, argv, env);
    } else {
        rc = real_execvp(file, argv);
    }
    execenv_release(&e);
    after_failed_exec(errno, ignored);
    return rc;
}

PS_API int execvpe(const char *file, char *const argv[], char *const envp[])
{
    PS_RESOLVE(execvpe);
    int ignored = before_exec();
    struct execenv e;
    char *const *env = execenv_fix(envp, &e);
    int rc = real_execvpe(file, argv, env);
    execenv_release(&e);
    after_failed_exec(errno, ignored);
    return rc;
}

PS_API int fexecve(int fd, char *const argv[], char *const envp[])
{
    PS_RESOLVE(fexecve);
    int ignored = before_exec();
    struct execenv e;
    char *const *env = execenv_fix(envp, &e);
    int rc = real_fexecve(fd, argv, env);
    execenv_release(&e);
    after_failed_exec(errno, ignored);
    return rc;
}

/* posix_spawn's child execs inside the C library, past the wrappers above: its environment is
 * rewritten here, and it inherits the mask the target asked for (sigmask.c). (system() and
 * popen() hand on environ, made right at start; sigmask.c wraps them for the mask.) */
typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
                        char *const[], char *const[]);
static int spawn_through(spawn_fn real, pid_t *pid, const char *what, const posix_spawn_file_actions_t *actions,
                         const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    struct execenv e;
    char *const *env = execenv_fix(envp, &e);
    int held = sigmask_hold_for_child(attr);
    int ignored = sampler_ignore_for_child();
    int rc = real(pid, what, actions, attr, argv, env);
    sampler_handler_back(ignored);
    sigmask_release_after_child(held);
    execenv_release(&e);
    return rc;
}

PS_API int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
                       const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    PS_RESOLVE(posix_spawn);
    return spawn_through(real_posix_spawn, pid, path, actions, attr, argv, envp);
}

PS_API int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
                        const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    PS_RESOLVE(posix_spawnp);
    return spawn_through(real_posix_spawnp, pid, file, actions, attr, argv, envp);
}

/* The execl family builds an argv and goes through the wrappers above. */
#define COLLECT_ARGS(first, ap, argv, with_env, envp)                                   \
    do {                                                                                \
        size_t n = 1;                                                                   \
        va_list count;                                                                  \
        va_copy(count, ap);                                                             \
        while (va_arg(count, char *))                                                   \
            n++;                                                                        \
        va_end(count);                                                                  \
        argv = alloca((n + 1) * sizeof(char *));                                        \
        argv[0] = (char *)(first);                                                      \
        for (size_t i = 1; i <= n; i++)                                                 \
            argv[i] = i < n ? va_arg(ap, char *) : NULL;                                \
        if (with_env) {                                                                 \
            (void)va_arg(ap, char *);                                                   \
            envp = va_arg(ap, char **);                                                 \
        }                                                                               \
    } while (0)

PS_API int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    char **argv, **envp = NULL;
    va_start(ap, arg);
    COLLECT_ARGS(arg, ap, argv, 0, envp);
    va_end(ap);
    (void)envp;
    return execv(path, argv);
}

PS_API int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    char **argv, **envp = NULL;
    va_start(ap, arg);
    COLLECT_ARGS(arg, ap, argv, 0, envp);
    va_end(ap);
    (void)envp;
    return execvp(file, argv);
}

PS_API int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    char **argv, **envp = NULL;
    va_start(ap, arg);
    COLLECT_ARGS(arg, ap, argv, 1, envp);
    va_end(ap);
    return execve(path, argv, envp);
}

/* ---- the ways out ---- */

static int exit_code, exit_code_set;

int interpose_exit_code(int *code)
{
    *code = exit_code;
    return exit_code_set;
}

static void (*real_exit)(int);
static void (*real__exit)(int);
static void (*real__Exit)(int);

PS_API void exit(int code)
{
    PS_RESOLVE(exit);
    exit_code = code;
    exit_code_set = 1;
    real_exit(code);
    __builtin_unreachable();
}

/* _exit is async-signal-safe and may be called from a handler that interrupted malloc: only
 * the signal-safe way out, and the status built without stdio. */
static void finish_with_code(int code)
{
    char status[16] = "ok";
    int c = code & 0xff;
    if (c != 0) {
        char *p = status;
        memcpy(p, "exit ", 5);
        p += 5;
        if (c >= 100)
            *p++ = (char)('0' + c / 100);
        if (c >= 10)
            *p++ = (char)('0' + c / 10 % 10);
        *p++ = (char)('0' + c % 10);
        *p = 0;
    }
    shim_finish_signal_safe(status);
}

PS_API void _exit(int code)
{
    PS_RESOLVE(_exit);
    int saved = errno;
    finish_with_code(code);
    errno = saved;
    real__exit(code);
    __builtin_unreachable();
}

PS_API void _Exit(int code)
{
    PS_RESOLVE(_Exit);
    finish_with_code(code);
    real__Exit(code);
    __builtin_unreachable();
}

/* The main thread leaving through pthread_exit: glibc ends the process when the last thread
 * ends, and the shim's threads must not be counted among them (lifetime.c). */
static void (*real_pthread_exit)(void *);

PS_API void pthread_exit(void *ret)
{
    PS_RESOLVE(pthread_exit);
    if (ps_active && getpid() == ps_pid && ps_gettid() == ps_pid) {
        int saved = errno;
        lifetime_main_exiting();
        errno = saved;
    }
    real_pthread_exit(ret);
    __builtin_unreachable();
}

/* daemon() forks and ends its parent with an _exit(0) inside the C library: the parent's
 * fork handler (shim.c) finishes the parent's run while this is set. */
static __thread int in_daemon;
static int (*real_daemon)(int, int);

int interpose_in_daemon(void)
{
    return in_daemon;
}

PS_API int daemon(int nochdir, int noclose)
{
    PS_RESOLVE(daemon);
    int caller_errno = errno;
    in_daemon = 1;
    errno = 0; /* the parent's fork handler tells a fork that worked by it (shim.c) */
    int rc = real_daemon(nochdir, noclose);
    int saved = errno;
    in_daemon = 0;
    /* Where nothing inside daemon() set errno, the caller's: daemon() leaves it so. */
    errno = saved == 0 ? caller_errno : saved;
    return rc;
}

/* A return from main reaches exit() inside the C library, past any wrapper: so the status is
 * taken from an on_exit handler, which glibc calls with exit's status. It is registered just
 * before main starts, after __libc_start_main registered the loader's finalizer, so it runs
 * (exit handlers run last registered first) before the shim's own destructor reads the status.
 * The step before main is a tail call (a jump, not a call): the shim leaves no frame of its
 * own between __libc_start_call_main and main in any stack it samples. */
typedef int (*main_fn)(int, char **, char **);
static main_fn target_main;

static void on_exit_status(int status, void *arg)
{
    (void)arg;
    exit_code = status;
    exit_code_set = 1;
}

__attribute__((optimize("optimize-sibling-calls")))
static int main_entry(int argc, char **argv, char **envp)
{
    on_exit(on_exit_status, NULL);
    return target_main(argc, argv, envp); /* a jump: main's caller is libc's, not ours */
}

PS_API int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void), void (*fini)(void),
                             void (*rtld_fini)(void), void *stack_end)
{
    int (*real)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void), void *);
    *(void **)&real = dlsym(RTLD_NEXT, "__libc_start_main");
    target_main = main;
    return real(main_entry, argc, argv, init, fini, rtld_fini, stack_end);
}

/* ---- seccomp: strict mode and filters (shim.c decides what to do before they apply) ---- */

static int (*real_prctl)(int, unsigned long, unsigned long, unsigned long, unsigned long);
static long (*real_syscall)(long, long, long, long, long, long, long);

int ps_real_prctl(int option, unsigned long a2, unsigned long a3, unsigned long a4, unsigned long a5)
{
    PS_RESOLVE(prctl);
    return real_prctl(option, a2, a3, a4, a5);
}

/* The shim's own syscall() calls (in its signal handlers too) reach the wrapper below: its
 * real function is resolved before any handler of ours is installed, never in a handler. */
__attribute__((constructor(101))) static void resolve_seccomp_calls(void)
{
    PS_RESOLVE(syscall);
    PS_RESOLVE(prctl);
}

/* strict: seccomp strict mode; every_thread: a filter synchronised onto every thread. */
static int seccomp_before(int strict, int every_thread)
{
    return shim_before_seccomp(strict, every_thread);
}

static void seccomp_after(int rc, int before)
{
    if (rc != 0) {
        int saved = errno;
        shim_seccomp_refused(before);
        errno = saved;
    }
}

/* ---- credentials changed on one thread: the shim's threads follow (credsync.c) ---- */

static void creds_follow(long rc, long nr, long a0, long a1, long a2, long a3, long a4)
{
    long a[6] = { a0, a1, a2, a3, a4, 0 };
    if (rc == 0 && credsync_wanted(nr, a))
        credsync_after();
}

static int (*real_capset)(cap_user_header_t, const cap_user_data_t);

PS_API int capset(cap_user_header_t hdr, const cap_user_data_t data)
{
    PS_RESOLVE(capset);
    int rc = real_capset(hdr, data);
    creds_follow(rc, SYS_capset, (long)hdr, (long)data, 0, 0, 0);
    return rc;
}

PS_API int prctl(int option, ...)
{
    PS_RESOLVE(prctl);
    va_list ap;
    va_start(ap, option);
    unsigned long a2 = va_arg(ap, unsigned long), a3 = va_arg(ap, unsigned long);
    unsigned long a4 = va_arg(ap, unsigned long), a5 = va_arg(ap, unsigned long);
    va_end(ap);
    if (option == PR_SET_KEEPCAPS || option == PR_SET_SECUREBITS) {
        int rc = real_prctl(option, a2, a3, a4, a5);
        creds_follow(rc, SYS_prctl, option, (long)a2, (long)a3, (long)a4, (long)a5);
        return rc;
    }
    if (option != PR_SET_SECCOMP || (a2 != SECCOMP_MODE_STRICT && a2 != SECCOMP_MODE_FILTER))
        return real_prctl(option, a2, a3, a4, a5);
    int before = seccomp_before(a2 == SECCOMP_MODE_STRICT, 0);
    int rc = real_prctl(option, a2, a3, a4, a5);
    seccomp_after(rc, before);
    return rc;
}

/* ---- namespaces: calls refused to a process of several threads (shim.c) ---- */

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

static int (*real_unshare)(int);
static int (*real_setns)(int, int);

/* Whether a refusal may be the shim's threads' doing: the flags the kernel grants only to a
 * process of one thread (setns with no type may join any namespace). */
static int unshare_needs_alone(long flags)
{
    return (flags & (CLONE_NEWUSER | CLONE_THREAD | CLONE_SIGHAND | CLONE_VM)) != 0;
}

static int setns_needs_alone(long nstype)
{
    return nstype == 0 || (nstype & (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWTIME)) != 0;
}

/* After a call refused with err: 1 when the shim's threads were stopped for it to be made once
 * more (shim_threads_back must follow). Keeps errno. */
static int aside_for_retry(int needs_alone, int err)
{
    return needs_alone && (err == EINVAL || err == EUSERS) && shim_threads_aside();
}

PS_API int unshare(int flags)
{
    PS_RESOLVE(unshare);
    int rc = real_unshare(flags);
    if (rc != 0 && aside_for_retry(unshare_needs_alone(flags), errno)) {
        rc = real_unshare(flags);
        shim_threads_back();
    }
    return rc;
}

PS_API int setns(int fd, int nstype)
{
    PS_RESOLVE(setns);
    int rc = real_setns(fd, nstype);
    if (rc != 0 && aside_for_retry(setns_needs_alone(nstype), errno)) {
        rc = real_setns(fd, nstype);
        shim_threads_back();
    }
    return rc;
}

/* seccomp(2) has no C library function: libseccomp and others call it through syscall(). An
 * exit_group made through syscall() is seen here too, and ends like _exit (one made by the
 * program's own instruction, as Go's runtime does, is seen by nothing). */
PS_API long syscall(long nr, ...)
{
    PS_RESOLVE(syscall);
    va_list ap;
    va_start(ap, nr);
    long a[6];
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    if (nr == SYS_exit_group) {
        int saved = errno;
        finish_with_code((int)a[0]);
        errno = saved;
        return real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
    }
    if (nr == SYS_capset || (nr == SYS_prctl && (a[0] == PR_SET_KEEPCAPS || a[0] == PR_SET_SECUREBITS))) {
        long rc = real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
        creds_follow(rc, nr, a[0], a[1], a[2], a[3], a[4]);
        return rc;
    }
    if ((nr == SYS_unshare && unshare_needs_alone(a[0])) || (nr == SYS_setns && setns_needs_alone(a[1]))) {
        long rc = real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
        if (rc != 0 && aside_for_retry(1, errno)) {
            rc = real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
            shim_threads_back();
        }
        return rc;
    }
    int strict = -1, every = 0;
    if (nr == SYS_seccomp && a[0] == SECCOMP_SET_MODE_STRICT) {
        strict = 1;
    } else if (nr == SYS_seccomp && a[0] == SECCOMP_SET_MODE_FILTER) {
        strict = 0;
        every = (a[1] & SECCOMP_FILTER_FLAG_TSYNC) != 0;
    } else if (nr == SYS_prctl && a[0] == PR_SET_SECCOMP && (a[1] == SECCOMP_MODE_STRICT || a[1] == SECCOMP_MODE_FILTER)) {
        strict = a[1] == SECCOMP_MODE_STRICT;
    }
    if (strict < 0)
        return real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
    int before = seccomp_before(strict, every);
    long rc = real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
    /* TSYNC reports a thread it could not synchronise as a positive tid: refused too. */
    seccomp_after(rc != 0, before);
    return rc;
}

/* ---- late-loaded code ---- */

/* dlopen is not wrapped: glibc resolves a dlopen against its caller's RUNPATH ($ORIGIN) and
 * namespace, and a wrapper would make that caller the shim (a library found through the
 * caller's DT_RUNPATH was not found at all). Loads are seen by the writer instead, through
 * dl_iterate_phdr's load counter, and the handler knows the loader's own code by address. */
static int (*real_dlclose)(void *);

static void maps_changed(uint64_t from_ns)
{
    if (ps_active && getpid() == ps_pid && ps_cfg.hz > 0) {
        struct ps_xfsz x;
        ps_xfsz_hold(&x);
        writer_maps_snapshot(from_ns);
        ps_xfsz_release(&x);
    }
}

PS_API int dlclose(void *handle)
{
    PS_RESOLVE(dlclose);
    ps_guard_enter();
    /* A library loaded since the writer's last pass is still mapped: recorded before it goes. */
    if (ps_active && getpid() == ps_pid && ps_cfg.hz > 0) {
        struct ps_xfsz x;
        ps_xfsz_hold(&x);
        writer_maps_catch_up();
        ps_xfsz_release(&x);
    }
    dlbusy_enter(); /* glibc frees the library under the loader's lock */
    int rc = real_dlclose(handle);
    int saved = errno;
    dlbusy_leave();
    /* In force from after the call: the library's code ran until it returned. */
    if (rc == 0)
        maps_changed(ps_now_ns());
    ps_guard_leave();
    errno = saved;
    return rc;
}

static void busy_cancelled(void *unused)
{
    (void)unused;
    dlbusy_leave();
    ps_guard_leave();
}

/* A program's call is busy (dlbusy.h); libunwind's is not, whoever walks (the handler, the
 * writer's warm-up, the target's own use of libunwind, which holds libunwind's cache lock across
 * it). A cancellation inside the callback leaves busy as glibc leaves its lock. */
PS_API int dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
    int from_libunwind = unwlib_has_pc((uintptr_t)__builtin_return_address(0));
    if (ps_in_unwind > 0 && from_libunwind) {
        /* A lookup of the shim's own walk (the handler's, the warm-up's; or, told apart from
         * neither, a program's own libunwind in a handler of its own nested in our walk): none
         * in a handler's walk once a busy thread's wait has run out (dlbusy.h). The answer "no
         * object" ends that walk there. */
        int counted = dlbusy_lookup_enter();
        if (counted < 0)
            return 0;
        int rc = ps_real_dl_iterate_phdr(cb, data);
        if (counted)
            dlbusy_lookup_leave();
        return rc;
    }
    if (ps_in_unwind > 0 || from_libunwind)
        return ps_real_dl_iterate_phdr(cb, data);
    PS_RESOLVE(dl_iterate_phdr);
    ps_guard_enter();
    dlbusy_enter();
    int rc;
    pthread_cleanup_push(busy_cancelled, NULL);
    rc = real_dl_iterate_phdr(cb, data);
    pthread_cleanup_pop(0);
    dlbusy_leave();
    ps_guard_leave();
    return rc;
}

/* ---- signal dispositions ---- */

#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000
#endif

/* An action the shim keeps for the target instead of giving it to the kernel (SIGPROF's, the
 * default of a signal it stands in for), made what a query would read back had the kernel
 * taken it: no SIGKILL or SIGSTOP in the mask (the kernel drops them), and the C library's
 * signal-return trampoline with SA_RESTORER, which its sigaction adds to every action it sets
 * (taken from one the shim set through it). */
static void as_kernel_keeps(int sig, struct sigaction *sa)
{
    static void (*restorer)(void);
    sigdelset(&sa->sa_mask, SIGKILL);
    sigdelset(&sa->sa_mask, SIGSTOP);
    for (int from = sig; !restorer; from = SIGPROF) { /* this signal's, else the sampler's */
        struct sigaction q;
        if (real_sigaction(from, NULL, &q) == 0 && (q.sa_flags & SA_RESTORER))
            restorer = q.sa_restorer;
        if (from == SIGPROF)
            break;
    }
    if (restorer) {
        sa->sa_flags |= SA_RESTORER;
        sa->sa_restorer = restorer;
    }
}

PS_API int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    PS_RESOLVE(sigaction);
    /* A signal the shim stands in for nowhere passes straight through (no getpid: a shell's
     * fork child sets a dozen such dispositions before its exec). A vfork child shares our
     * memory: what it does must not become the parent's state. */
    if (!ps_active || (sig != SIGPROF && !fatal_signal_listed(sig)) || getpid() != ps_pid)
        return real_sigaction(sig, act, old);
    /* act and old may be the same struct, as the kernel allows: read before writing. */
    struct sigaction want;
    if (act) {
        want = *act;
        as_kernel_keeps(sig, &want);
    }
    if (sig == SIGPROF && sampler_installed()) {
        if (old)
            sampler_get_target_action(old);
        if (act)
            sampler_set_target_action(&want);
        return 0;
    }
    if (fatal_wants(sig, act ? &want : NULL))
        return fatal_sigaction(sig, act ? &want : NULL, old);
    int rc = real_sigaction(sig, act ? &want : NULL, old);
    if (rc == 0 && act && fatal_signal_listed(sig) && !(want.sa_flags & SA_SIGINFO) && want.sa_handler == SIG_DFL)
        fatal_install_keeping(sig, &want); /* back to the default: we stand in for it again */
    return rc;
}

/* Waiting for signals: our SIGPROF must never be handed to the target as one of its own (a
 * server that blocks everything and sigwait()s would get "Profiling timer expired"). While the
 * target has no SIGPROF disposition of its own, SIGPROF is taken out of the set it waits on. */
static const sigset_t *without_prof(const sigset_t *set, sigset_t *copy)
{
    if (!set || !ps_active || !sampler_installed() || !sampler_target_prof_default() || !sigismember(set, SIGPROF))
        return set;
    *copy = *set;
    sigdelset(copy, SIGPROF);
    return copy;
}

static int (*real_sigwait)(const sigset_t *, int *);
static int (*real_sigwaitinfo)(const sigset_t *, siginfo_t *);
static int (*real_sigtimedwait)(const sigset_t *, siginfo_t *, const struct timespec *);
static int (*real_signalfd)(int, const sigset_t *, int);

PS_API int sigwait(const sigset_t *set, int *sig)
{
    PS_RESOLVE(sigwait);
    sigset_t copy;
    return real_sigwait(without_prof(set, &copy), sig);
}

PS_API int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
    PS_RESOLVE(sigwaitinfo);
    sigset_t copy;
    return real_sigwaitinfo(without_prof(set, &copy), info);
}

PS_API int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout)
{
    PS_RESOLVE(sigtimedwait);
    sigset_t copy;
    return real_sigtimedwait(without_prof(set, &copy), info, timeout);
}

PS_API int signalfd(int fd, const sigset_t *mask, int flags)
{
    PS_RESOLVE(signalfd);
    sigset_t copy;
    return real_signalfd(fd, without_prof(mask, &copy), flags);
}

/* The C library's other ways to set a disposition call its internal sigaction, past the
 * wrapper above: for SIGPROF and the signals the shim stands in for, they would replace the
 * shim's handler (the target's handler then runs on the sampling clock's signals) or leave
 * the wrapper's record stale. So each is done here again, as glibc does it, through the
 * wrappers: signal (BSD semantics), bsd_signal, sysv_signal, sigset, sigignore, siginterrupt
 * (sighold and sigrelse: sigmask.c). siginterrupt's set is kept here, since glibc's is its own:
 * signal() leaves SA_RESTART out for a signal in it. */
static _Atomic uint64_t sigintr_bits[(NSIG + 63) / 64];

static int sig_valid(int sig, sighandler_t handler)
{
    if (handler == SIG_ERR || sig < 1 || sig >= NSIG) {
        errno = EINVAL;
        return 0;
    }
    return 1;
}

static int sigintr_has(int sig)
{
    return (atomic_load(&sigintr_bits[sig / 64]) >> (sig % 64)) & 1;
}

static sighandler_t set_handler(int sig, sighandler_t handler, int flags, int mask_self)
{
    if (!sig_valid(sig, handler))
        return SIG_ERR;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    if (mask_self)
        sigaddset(&sa.sa_mask, sig);
    if (sigaction(sig, &sa, &old) != 0)
        return SIG_ERR;
    return old.sa_handler;
}

PS_API sighandler_t signal(int sig, sighandler_t handler)
{
    return set_handler(sig, handler, sig >= 1 && sig < NSIG && sigintr_has(sig) ? 0 : SA_RESTART, 1);
}

PS_API sighandler_t bsd_signal(int sig, sighandler_t handler)
{
    return signal(sig, handler);
}

PS_API sighandler_t sysv_signal(int sig, sighandler_t handler)
{
    return set_handler(sig, handler, (int)(SA_RESETHAND | SA_NODEFER), 0);
}

PS_API int siginterrupt(int sig, int interrupt)
{
    struct sigaction sa;
    if (sigaction(sig, NULL, &sa) < 0)
        return -1;
    uint64_t bit = 1ull << (sig % 64);
    if (interrupt) {
        atomic_fetch_or(&sigintr_bits[sig / 64], bit);
        sa.sa_flags &= ~SA_RESTART;
    } else {
        atomic_fetch_and(&sigintr_bits[sig / 64], ~bit);
        sa.sa_flags |= SA_RESTART;
    }
    return sigaction(sig, &sa, NULL) < 0 ? -1 : 0;
}

PS_API int sigignore(int sig)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;
    sigemptyset(&sa.sa_mask);
    return sigaction(sig, &sa, NULL);
}

PS_API sighandler_t sigset(int sig, sighandler_t disp)
{
    if (!sig_valid(sig, disp))
        return SIG_ERR;
    sigset_t set, oset;
    sigemptyset(&set);
    sigaddset(&set, sig);
    struct sigaction sa, old;
    if (disp == SIG_HOLD) {
        if (sigprocmask(SIG_BLOCK, &set, &oset) < 0)
            return SIG_ERR;
        if (sigismember(&oset, sig))
            return SIG_HOLD;
        if (sigaction(sig, NULL, &old) < 0)
            return SIG_ERR;
        return old.sa_handler;
    }
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = disp;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, &old) < 0)
        return SIG_ERR;
    if (sigprocmask(SIG_UNBLOCK, &set, &oset) < 0)
        return SIG_ERR;
    return sigismember(&oset, sig) ? SIG_HOLD : old.sa_handler;
}

/* A wrapper looks its C library function up at its first call (dlsym), which takes the loader's
 * lock. A child of clone() without CLONE_VM has a copy of the memory and one thread: where
 * another thread of the parent held that lock at the clone (the watcher loading NVML, libunwind's
 * warm-up), the child's copy stays held for good, and the child's first _exit through the wrapper
 * waited for it forever (r_credcalls clone: its child hung in dlsym, 1 run in 10 under a test
 * suite). So before such a clone the wrappers a child calls on its way to exec or exit are
 * looked up in the parent, once. (A fork child is given the lock free by the C library's fork.) */
static void resolve_for_a_clone_child(void)
{
    static _Atomic int done;
    if (atomic_load(&done))
        return;
    int saved = errno;
    PS_RESOLVE(_exit);
    PS_RESOLVE(exit);
    PS_RESOLVE(execve);
    PS_RESOLVE(execv);
    PS_RESOLVE(execvp);
    PS_RESOLVE(execvpe);
    PS_RESOLVE(fexecve);
    PS_RESOLVE(sigaction);
    PS_RESOLVE(capset);
    PS_RESOLVE(unshare);
    PS_RESOLVE(setns);
    fds_resolve_wrappers();
    sigmask_resolve_wrappers();
    atomic_store(&done, 1);
    errno = saved;
}
