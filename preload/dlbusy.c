/* dlbusy.c: the loader-lock handshake between the handler and busy threads (see dlbusy.h). It
 * must never make a handler wait, and never make a busy thread wait for anything but handlers
 * already walking a stack (who wait for nothing it holds). errno is left as it was. */
#include "dlbusy.h"

#include <errno.h>
#include <link.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static _Atomic int busy;            /* threads inside dlclose or a plain dl_iterate_phdr */
static _Atomic int walking;         /* handlers walking a stack with libunwind */
static __thread int busy_here;      /* this thread's share of busy (nested calls) */
static _Atomic pid_t counts_pid;    /* the process the counts are of */

void dlbusy_enter(void)
{
    int saved = errno;
    busy_here++;
    atomic_fetch_add(&busy, 1);
    /* A handler that read busy as 0 before it moved is walking now: its walk waits for nothing
     * this thread holds (it has not taken the lock yet). Sleep, not spin: a real-time thread
     * spinning would keep the walking thread off its core. */
    int w;
    while ((w = atomic_load(&walking)) > 0) {
        struct timespec backstop = {0, 10000000};
        syscall(SYS_futex, &walking, FUTEX_WAIT_PRIVATE, w, &backstop, NULL, 0);
        /* A child made by _Fork or a raw clone runs no fork handler and keeps its parent's
         * count of walking handlers, none of which is here. */
        pid_t me = getpid();
        if (atomic_load(&counts_pid) != me) {
            atomic_store(&walking, 0);
            atomic_store(&busy, busy_here);
            atomic_store(&counts_pid, me);
        }
    }
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
    atomic_fetch_add(&walking, 1);
    if (atomic_load(&busy) > 0 || loader_changing()) {
        dlbusy_handler_leave();
        return 0;
    }
    return 1;
}

void dlbusy_handler_leave(void)
{
    if (atomic_fetch_sub(&walking, 1) == 1 && atomic_load(&busy) > 0)
        syscall(SYS_futex, &walking, FUTEX_WAKE_PRIVATE, 1 << 30, NULL, NULL, 0);
}

void dlbusy_init(void)
{
    atomic_store(&counts_pid, getpid());
}

void dlbusy_after_fork_child(void)
{
    atomic_store(&busy, busy_here);
    atomic_store(&walking, 0);
    atomic_store(&counts_pid, getpid());
}
