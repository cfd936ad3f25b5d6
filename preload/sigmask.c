/* sigmask.c: the signal-mask calls the target makes (sigmask.h). While the target has no
 * SIGPROF disposition of its own, SIGPROF is taken out of what it asks to block (pthread_sigmask,
 * sigprocmask, sigblock, sigsetmask, sighold, a new thread's inherited mask, the mask found at
 * start) and the thread remembers it in ps_prof_hidden; every query answers with SIGPROF added
 * back, so the target sees the mask it asked for. A new image inherits the kernel's mask: exec,
 * posix_spawn, system and popen get SIGPROF blocked again for the child where it was hidden.
 * The masks that only last for one call (sigsuspend, pselect, ppoll, epoll_pwait, sigwait and a
 * handler's sa_mask) go to the kernel as given: the thread spends no CPU in them, or the handler
 * is short, and a sample arriving then waits for the call to return. swapcontext/setcontext
 * (raw system calls inside the C library) and a raw rt_sigprocmask are not seen: those threads
 * are counted as unsampled (unsampled.c). Every wrapper returns, towards the target, exactly
 * what the function it wraps would have: same results, same errno. A vfork child shares the
 * parent's memory: it never changes ps_prof_hidden; its first mask call makes its own kernel mask
 * the one it inherited, as asked, and from then on passes every call through. */
#include "sigmask.h"
#include "unwlib.h"

#include <errno.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "interpose.h"
#include "sampler.h"
#include "shim.h"

__thread int ps_prof_hidden;
/* The thread's exit hook ran: SIGPROF is blocked for good, and what runs after (other
 * thread-specific-data destructors: libunwind's saves and restores the mask) gets the kernel's
 * mask as asked, so nothing opens SIGPROF again once the thread's clock is gone. */
static __thread int thread_ended;

/* The vfork child whose kernel mask is exact (it made a mask call of its own). Written only by
 * such a child, read only where getpid() is not ps_pid. */
static pid_t vfork_exact;

static int (*real_pthread_sigmask)(int, const sigset_t *, sigset_t *);
static int (*real_sigprocmask)(int, const sigset_t *, sigset_t *);

int ps_real_pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
    PS_RESOLVE(pthread_sigmask);
    return real_pthread_sigmask(how, set, old);
}

void sigmask_block_all(sigset_t *old)
{
    sigset_t all;
    sigfillset(&all);
    ps_real_pthread_sigmask(SIG_BLOCK, &all, old);
}

void sigmask_restore(const sigset_t *old)
{
    ps_real_pthread_sigmask(SIG_SETMASK, old, NULL);
}

static int real_procmask(int how, const sigset_t *set, sigset_t *old)
{
    PS_RESOLVE(sigprocmask);
    return real_sigprocmask(how, set, old);
}

static void prof_set(sigset_t *s)
{
    sigemptyset(s);
    sigaddset(s, SIGPROF);
}

/* SIGPROF blocked in this thread's kernel mask, for the shim's own reasons (a new image, a
 * child); 1 when it was done. */
static int block_prof(void)
{
    sigset_t prof;
    prof_set(&prof);
    return ps_real_pthread_sigmask(SIG_BLOCK, &prof, NULL) == 0;
}

static void unblock_prof(void)
{
    sigset_t prof;
    prof_set(&prof);
    ps_real_pthread_sigmask(SIG_UNBLOCK, &prof, NULL);
}

/* Whether this thread's kernel mask is not the one its target view says: SIGPROF hidden, and
 * not a vfork child that already set its own. */
static int mask_differs(void)
{
    if (!ps_prof_hidden || !sampler_installed())
        return 0;
    return getpid() == ps_pid || vfork_exact != getpid();
}

/* One mask change or query, as pthread_sigmask (call returns 0 or nonzero; errno is call's). */
static int mask_call(int (*call)(int, const sigset_t *, sigset_t *), int how, const sigset_t *set, sigset_t *old)
{
    /* Inside the shim (its own threads, the handler, libunwind, which blocks every signal
     * around its locks and restores the mask it found) the mask is the kernel's, as asked:
     * libunwind restoring a mask saved inside our handler, SIGPROF blocked there, must not
     * open SIGPROF in the handler or mark the thread. */
    if (!sampler_installed() || ps_guard_depth > 0 || thread_ended)
        return call(how, set, old);
    /* SIGPROF neither hidden in this thread nor named by the call: the kernel's mask is the
     * target's view before and after, in this process or a vfork child alike (no getpid). */
    if (!ps_prof_hidden && !(set && sigismember(set, SIGPROF) == 1))
        return call(how, set, old);
    if (getpid() != ps_pid) {
        /* A vfork child (or a child the C library's atfork handlers never saw). */
        if (ps_prof_hidden && vfork_exact != getpid()) {
            int saved = errno;
            block_prof();
            errno = saved;
        }
        vfork_exact = getpid();
        return call(how, set, old);
    }
    int hidden = ps_prof_hidden;
    int asks_prof = set && sigismember(set, SIGPROF) == 1;
    int strip = asks_prof && (how == SIG_BLOCK || how == SIG_SETMASK) && sampler_target_prof_default();
    sigset_t copy;
    const sigset_t *pass = set;
    if (strip) {
        copy = *set;
        sigdelset(&copy, SIGPROF);
        pass = &copy;
    }
    int rc = call(how, pass, old);
    if (rc != 0)
        return rc;
    if (old && hidden)
        sigaddset(old, SIGPROF);
    if (set) {
        if (how == SIG_SETMASK)
            ps_prof_hidden = strip;
        else if (how == SIG_BLOCK && asks_prof)
            ps_prof_hidden = strip;
        else if (how == SIG_UNBLOCK && asks_prof)
            ps_prof_hidden = 0;
    }
    return rc;
}

/* libunwind, used by the target itself, blocks every signal around its cache lock, which the
 * handler's walk takes too: SIGPROF taken out of that mask would let a sample into the thread
 * holding the lock, and the handler would wait for it for good. libunwind's calls go to the
 * kernel as asked (a sample then waits until it unblocks), as the shim's own libunwind's do. */
PS_API int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
    PS_RESOLVE(pthread_sigmask);
    if (unwlib_has_pc((uintptr_t)__builtin_return_address(0)))
        return real_pthread_sigmask(how, set, old);
    return mask_call(real_pthread_sigmask, how, set, old);
}

PS_API int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
    PS_RESOLVE(sigprocmask);
    if (unwlib_has_pc((uintptr_t)__builtin_return_address(0)))
        return real_sigprocmask(how, set, old);
    return mask_call(real_sigprocmask, how, set, old);
}

/* The BSD and System V forms: the C library implements them with its internal sigprocmask,
 * past the wrapper above. A BSD mask holds signal s in bit s-1. */
static void bsd_to_set(int mask, sigset_t *s)
{
    sigemptyset(s);
    for (int sig = 1; sig <= 32; sig++)
        if ((unsigned)mask & (1u << (sig - 1)))
            sigaddset(s, sig);
}

static int set_to_bsd(const sigset_t *s)
{
    unsigned mask = 0;
    for (int sig = 1; sig <= 32; sig++)
        if (sigismember(s, sig) == 1)
            mask |= 1u << (sig - 1);
    return (int)mask;
}

static int bsd_call(int how, int mask)
{
    sigset_t set, old;
    bsd_to_set(mask, &set);
    if (mask_call(real_procmask, how, &set, &old) != 0)
        return -1;
    return set_to_bsd(&old);
}

PS_API int sigblock(int mask)
{
    return bsd_call(SIG_BLOCK, mask);
}

PS_API int sigsetmask(int mask)
{
    return bsd_call(SIG_SETMASK, mask);
}

PS_API int siggetmask(void)
{
    sigset_t old;
    if (mask_call(real_procmask, SIG_BLOCK, NULL, &old) != 0)
        return -1;
    return set_to_bsd(&old);
}

static int one_signal(int how, int sig)
{
    sigset_t set;
    sigemptyset(&set);
    if (sigaddset(&set, sig) != 0)
        return -1; /* EINVAL, as the C library says */
    return mask_call(real_procmask, how, &set, NULL) == 0 ? 0 : -1;
}

PS_API int sighold(int sig)
{
    return one_signal(SIG_BLOCK, sig);
}

PS_API int sigrelse(int sig)
{
    return one_signal(SIG_UNBLOCK, sig);
}

/* ---- threads ---- */

/* The new thread starts with its creator's kernel mask, and a SIGPROF sent to it before its
 * first instruction of ours (pthread_kill right after pthread_create) would find SIGPROF open:
 * so where it is hidden, the creator blocks it around the call, the new thread starts with it
 * blocked, as the target asked, and takes it out itself (sigmask_thread_start). A thread created
 * with a mask of its own (pthread_attr_setsigmask_np) starts with exactly that mask. */
int sigmask_before_create(const pthread_attr_t *attr, int *held)
{
    sigset_t own;
    *held = 0;
    if (attr && pthread_attr_getsigmask_np(attr, &own) == 0)
        return 0;
    if (mask_differs()) {
        int saved = errno;
        *held = block_prof();
        errno = saved;
    }
    return ps_prof_hidden;
}

void sigmask_after_create(int held)
{
    int saved = errno;
    if (held)
        unblock_prof();
    errno = saved;
}

void sigmask_inherit(int hidden)
{
    ps_prof_hidden = hidden;
}

void sigmask_thread_start(void)
{
    if (!sampler_installed() || !sampler_target_prof_default())
        return;
    sigset_t now;
    if (ps_real_pthread_sigmask(SIG_BLOCK, NULL, &now) != 0 || sigismember(&now, SIGPROF) != 1)
        return;
    ps_prof_hidden = 1;
    unblock_prof();
}

void sigmask_thread_end(void)
{
    thread_ended = 1;
    block_prof();
}

/* ---- new images ---- */

void sigmask_before_exec(void)
{
    int saved = errno;
    if (mask_differs())
        block_prof();
    errno = saved;
}

void sigmask_after_failed_exec(void)
{
    int saved = errno;
    if (mask_differs())
        unblock_prof();
    errno = saved;
}

/* A child started without exec through the wrappers (posix_spawn, and system and popen, which
 * spawn inside the C library) inherits this thread's kernel mask, unless posix_spawn is given
 * one: SIGPROF is blocked on this thread for the call where it is hidden. */
int sigmask_hold_for_child(const posix_spawnattr_t *attr)
{
    short flags = 0;
    if (attr && posix_spawnattr_getflags(attr, &flags) == 0 && (flags & POSIX_SPAWN_SETSIGMASK))
        return 0;
    int saved = errno;
    int held = mask_differs() && block_prof();
    errno = saved;
    return held;
}

void sigmask_release_after_child(int held)
{
    int saved = errno;
    if (held)
        unblock_prof();
    errno = saved;
}

static int (*real_system)(const char *);
static FILE *(*real_popen)(const char *, const char *);

PS_API int system(const char *command)
{
    PS_RESOLVE(system);
    int held = sigmask_hold_for_child(NULL);
    int ignored = sampler_ignore_for_child(); /* its child inherits the target's SIG_IGN */
    int rc = real_system(command);
    sampler_handler_back(ignored);
    sigmask_release_after_child(held);
    return rc;
}

PS_API FILE *popen(const char *command, const char *type)
{
    PS_RESOLVE(popen);
    int held = sigmask_hold_for_child(NULL);
    int ignored = sampler_ignore_for_child();
    FILE *f = real_popen(command, type);
    sampler_handler_back(ignored);
    sigmask_release_after_child(held);
    return f;
}

void sigmask_resolve_wrappers(void)
{
    PS_RESOLVE(pthread_sigmask);
    PS_RESOLVE(sigprocmask);
}
