/* dlbusy.c: the loader-lock handshake between the handler and busy threads (see dlbusy.h). It
 * must never make a handler wait, never make a busy thread wait for anything but walks under
 * way (which wait for nothing it holds), never wait past DLBUSY_WAIT_NS in all, and leave errno
 * as it was. */
#include "dlbusy.h"

#include <errno.h>
#include <link.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The longest a busy thread waits for walks: past it (a walk abandoned by a program's handler
 * that longjmp'd out of ours, or anything unforeseen) libunwind is off in the handler for good
 * and nothing waits again: a one-off delay and frame-pointer stacks, never a hang. */
#define DLBUSY_WAIT_NS 100000000LL

static _Atomic int busy;            /* threads inside dlclose or a program's dl_iterate_phdr */
static _Atomic int walking;         /* handlers walking a stack with libunwind */
static _Atomic int waiters;         /* busy threads asleep until walking is 0 */
static _Atomic int given_up;        /* a wait ran out: libunwind off in the handler */
static __thread int busy_here;      /* this thread's share of busy (nested calls) */
static __thread int walking_here;   /* this thread's handler is walking (a program's handler
                                     * nested in ours must not wait for it) */
static __thread int never_waits;    /* seccomp strict mode: futex would kill the process */

static long long mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Sleeps until no walk is under way (a futex, never a spin: a real-time thread spinning would
 * keep the walking thread off its core). */
static void wait_for_walks(void)
{
    long long until = 0;
    atomic_fetch_add(&waiters, 1);
    int w;
    while ((w = atomic_load(&walking)) > 0 && !atomic_load(&given_up)) {
        long long now = mono_ns();
        if (!until)
            until = now + DLBUSY_WAIT_NS;
        if (now >= until) {
            atomic_store(&given_up, 1);
            break;
        }
        long long left = until - now < 10000000LL ? until - now : 10000000LL;
        struct timespec t = {0, (long)left};
        if (syscall(SYS_futex, &walking, FUTEX_WAIT_PRIVATE, w, &t, NULL, 0) < 0 && errno != EAGAIN &&
            errno != ETIMEDOUT && errno != EINTR) {
            atomic_store(&given_up, 1); /* no futex here (a filter): never spin */
            break;
        }
    }
    atomic_fetch_sub(&waiters, 1);
}

void dlbusy_enter(void)
{
    int saved = errno;
    busy_here++;
    atomic_fetch_add(&busy, 1);
    /* A handler that read busy as 0 before it moved is walking now: it waits for nothing this
     * thread holds (it has not taken the lock yet). */
    if (!walking_here && !never_waits && atomic_load(&walking) > 0)
        wait_for_walks();
    errno = saved;
}

void dlbusy_leave(void)
{
    atomic_fetch_sub(&busy, 1);
    busy_here--;
}

/* The loader is adding or removing an object (r_debug's state, which glibc moves before it
 * takes the lock for that and after it lets go): a dlclose no wrapper saw (a failed dlopen's
 * clean-up, the C library's own) is then in progress. Base namespace only. */
static int loader_changing(void)
{
    return _r_debug.r_version != 0 && _r_debug.r_state != RT_CONSISTENT;
}

int dlbusy_handler_enter(void)
{
    if (atomic_load(&given_up))
        return 0;
    walking_here++;
    atomic_fetch_add(&walking, 1);
    if (atomic_load(&busy) > 0 || loader_changing()) {
        dlbusy_handler_leave();
        return 0;
    }
    return 1;
}

void dlbusy_handler_leave(void)
{
    if (atomic_fetch_sub(&walking, 1) == 1 && atomic_load(&waiters) > 0)
        syscall(SYS_futex, &walking, FUTEX_WAKE_PRIVATE, 1 << 30, NULL, NULL, 0);
    walking_here--;
}

int dlbusy_given_up(void)
{
    return atomic_load(&given_up);
}

void dlbusy_thread_strict(void)
{
    never_waits = 1;
}

void dlbusy_fork_prepare(void)
{
    dlbusy_enter();
}

void dlbusy_fork_done(void)
{
    dlbusy_leave();
}

void dlbusy_after_fork_child(void)
{
    atomic_store(&busy, busy_here);
    atomic_store(&walking, 0);
    atomic_store(&waiters, 0);
    walking_here = 0;
}
