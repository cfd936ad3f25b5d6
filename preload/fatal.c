/* fatal.c: the signal-safe way out (fatal.h). For the fatal signals whose disposition is the
 * default, our handler stands in for SIG_DFL: it flushes, writes the status, restores SIG_DFL
 * and re-raises, so the target ends as it would have. The target's own view of those
 * dispositions is kept here (its sigaction calls see SIG_DFL). A one-shot (SA_RESETHAND)
 * handler of the target's for one of them is installed behind a trampoline that does the reset
 * itself, to our stand-in, so a handler that raises the signal again is seen. Everything on the
 * way out is async-signal-safe: no allocation, no stdio, no lock waited on without a bound. */
#include "fatal.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "counterlog.h"
#include "fdgate.h"
#include "interpose.h"
#include "leader.h"
#include "meta.h"
#include "procs.h"
#include "sampler.h"
#include "shim.h"
#include "sigmask.h"
#include "writer.h"
#include "xfsz.h"

static const int fatal_signals[] = { SIGHUP, SIGINT, SIGQUIT, SIGILL, SIGABRT, SIGFPE, SIGSEGV, SIGBUS, SIGPIPE,
                                     SIGALRM, SIGTERM, SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ, SIGSYS };
static _Atomic int fatal_once;

const char *fatal_signal_name(int sig)
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
    case SIGTRAP: return "SIGTRAP";
    case SIGVTALRM: return "SIGVTALRM";
    case SIGSTKFLT: return "SIGSTKFLT";
    case SIGIO: return "SIGIO";
    case SIGPWR: return "SIGPWR";
    default: return "signal";
    }
}

int fatal_signal_listed(int sig)
{
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++)
        if (fatal_signals[i] == sig)
            return 1;
    return 0;
}

/* ---- the target's view of the dispositions we stand in for ---- */

static _Atomic uint64_t fatal_owned; /* signals whose SIG_DFL we stand in for */
static struct sigaction fatal_target[65];

static void own(int sig)
{
    memset(&fatal_target[sig], 0, sizeof fatal_target[sig]);
    fatal_target[sig].sa_handler = SIG_DFL;
    atomic_fetch_or(&fatal_owned, 1ull << sig);
}

static void forget(int sig)
{
    atomic_fetch_and(&fatal_owned, ~(1ull << sig));
}

void fatal_install_keeping(int sig, const struct sigaction *act)
{
    fatal_install(sig);
    if (fatal_owns(sig))
        fatal_target[sig] = *act; /* its flags and mask, as a query would read them back */
}

int fatal_owns(int sig)
{
    return sig > 0 && sig < 64 && ((atomic_load(&fatal_owned) >> sig) & 1);
}

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    int saved = errno;
    if (getpid() == ps_pid && !atomic_exchange(&fatal_once, 1)) {
        char status[32] = "signal ";
        strcat(status, fatal_signal_name(sig));
        shim_finish_signal_safe(status);
    }
    /* The target's own disposition for this signal is the default: restore it and let the
     * signal do what it would have done. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    ps_real_sigaction(sig, &dfl, NULL);
    forget(sig);
    /* Sent again to this thread with the siginfo it came with (a thread may queue any si_code
     * to itself), so a core dump and a tracer see the fault's own si_code and address, or the
     * sender's pid, not a tgkill's; delivered by SIG_DFL as the handler returns. A fault
     * (si_code > 0) would fault again on its own too; a signal sent from outside would not. Not
     * the cached tid: a vfork child shares it. */
    pid_t pid = getpid(), tid = (pid_t)syscall(SYS_gettid);
    if (!si || syscall(SYS_rt_tgsigqueueinfo, pid, tid, sig, si) != 0)
        syscall(SYS_tgkill, pid, tid, sig);
    errno = saved;
}

void fatal_install(int sig)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fatal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    if (ps_real_sigaction(sig, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL)
        if (ps_real_sigaction(sig, &sa, NULL) == 0)
            own(sig);
}

void fatal_install_all(void)
{
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++)
        fatal_install(fatal_signals[i]);
}

/* ---- a target's one-shot handler (SA_RESETHAND) for a fatal signal ---- */

/* The kernel resets a one-shot handler to SIG_DFL as it delivers the signal, past any wrapper;
 * a handler that then raises the signal again (Node on SIGTERM) ends the process by SIG_DFL,
 * which nothing of ours would see. So the target's one-shot handler is installed behind ours,
 * with its mask and flags but without SA_RESETHAND: ours does the reset itself, to our stand-in
 * for SIG_DFL, and calls the target's handler; the raise then finds the stand-in. The target
 * sees its own action in every sigaction query. */
static struct sigaction oneshot_target[65];
static _Atomic uint64_t oneshot_set;

static int is_oneshot(int sig)
{
    return sig > 0 && sig < 64 && ((atomic_load(&oneshot_set) >> sig) & 1);
}

static int is_function(const struct sigaction *a)
{
    return (a->sa_flags & SA_SIGINFO) ? a->sa_sigaction != NULL : a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN;
}

int fatal_wants(int sig, const struct sigaction *act)
{
    if (sig <= 0 || sig >= 64 || !fatal_signal_listed(sig))
        return 0;
    return fatal_owns(sig) || is_oneshot(sig) || (act && is_function(act) && (act->sa_flags & SA_RESETHAND));
}

static void on_oneshot(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    struct sigaction a = oneshot_target[sig];
    /* What the kernel did to the target's one-shot action: SIG_DFL, which we stand in for. */
    atomic_fetch_and(&oneshot_set, ~(1ull << sig));
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fatal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    if (ps_real_sigaction(sig, &sa, NULL) == 0) {
        own(sig);
        /* The kernel resets the handler alone: a query then sees the flags and mask as before. */
        fatal_target[sig] = a;
        fatal_target[sig].sa_handler = SIG_DFL;
    }
    errno = saved;
    if (a.sa_flags & SA_SIGINFO)
        a.sa_sigaction(sig, si, uc);
    else
        a.sa_handler(sig);
}

/* The sigaction wrapper, for a signal fatal_wants. act is the caller's copy (act and old may be
 * one struct, as the kernel allows). */
int fatal_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (old) {
        if (is_oneshot(sig))
            *old = oneshot_target[sig];
        else if (fatal_owns(sig))
            *old = fatal_target[sig];
        else if (ps_real_sigaction(sig, NULL, old) != 0)
            return -1;
    }
    if (!act)
        return 0;
    if (!(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_DFL) {
        atomic_fetch_and(&oneshot_set, ~(1ull << sig));
        if (fatal_owns(sig)) {
            fatal_target[sig] = *act;
            return 0;
        }
        int rc = ps_real_sigaction(sig, act, NULL);
        if (rc == 0)
            fatal_install_keeping(sig, act);
        return rc;
    }
    if (is_function(act) && (act->sa_flags & SA_RESETHAND)) {
        struct sigaction behind = *act;
        behind.sa_sigaction = on_oneshot;
        behind.sa_flags = (act->sa_flags & ~SA_RESETHAND) | SA_SIGINFO;
        oneshot_target[sig] = *act;
        atomic_fetch_or(&oneshot_set, 1ull << sig);
        int rc = ps_real_sigaction(sig, &behind, NULL);
        if (rc == 0) {
            forget(sig);
            /* What a query would return without us: the flags the C library adds (x86's
             * SA_RESTORER) and its restorer, beside the target's own. */
            struct sigaction got;
            if (ps_real_sigaction(sig, NULL, &got) == 0) {
                oneshot_target[sig].sa_flags |= got.sa_flags & ~behind.sa_flags;
                oneshot_target[sig].sa_restorer = got.sa_restorer;
            }
        } else {
            atomic_fetch_and(&oneshot_set, ~(1ull << sig));
        }
        return rc;
    }
    /* The target takes the signal over: it is its own business from now on. */
    int rc = ps_real_sigaction(sig, act, NULL);
    if (rc == 0) {
        atomic_fetch_and(&oneshot_set, ~(1ull << sig));
        forget(sig);
    }
    return rc;
}

/* Seccomp strict mode: everything our handlers do would kill the thread. The target's own
 * dispositions are put back as it asked for them. */
void fatal_step_aside(void)
{
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++) {
        int sig = fatal_signals[i];
        if (is_oneshot(sig)) {
            if (ps_real_sigaction(sig, &oneshot_target[sig], NULL) == 0)
                atomic_fetch_and(&oneshot_set, ~(1ull << sig));
        } else if (fatal_owns(sig)) {
            if (ps_real_sigaction(sig, &fatal_target[sig], NULL) == 0)
                forget(sig);
        }
    }
    atomic_store(&fatal_once, 1);
}

/* The way out when the caller may be a signal handler (_exit, _Exit, fatal signals): only
 * async-signal-safe work, every wait bounded. No thread is joined, nothing is allocated. */
void fatal_finish(const char *status)
{
    ps_guard_enter();
    fdgate_forget_freed(); /* nothing of the target's fills a freed number from here */
    /* No sample of this thread's may land after the last flush, or the exit line would count
     * one the file does not hold (t_shim_lazy: 3 runs in 30 of a one-thread target). The process
     * ends right after (_exit), or this is a handler and its mask is put back on return. */
    sigset_t prof;
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    ps_real_pthread_sigmask(SIG_BLOCK, &prof, NULL);
    sampler_close(); /* and none of another thread's */
    struct ps_xfsz x;
    ps_xfsz_hold(&x);
    writer_flush_last(1);
    counterlog_flush_signal_safe(); /* the leader's counters lines not yet written */
    if (leader_owns_meta())
        meta_rewrite_status(status);
    procs_exit_line_signal_safe(status);
    ps_xfsz_release(&x);
    ps_guard_leave();
}

/* In a fork child: its own first fatal signal is its own way out. */
void fatal_after_fork(void)
{
    atomic_store(&fatal_once, 0);
}
