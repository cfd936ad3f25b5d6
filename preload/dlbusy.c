/* dlbusy.c: the loader-lock handshake between the handler and busy threads (see dlbusy.h). It
 * must never make a handler wait, and never make a busy thread wait for anything but handlers
 * already walking the loader's list. */
#include "dlbusy.h"

#include <sched.h>
#include <stdatomic.h>

static _Atomic int busy;            /* threads inside dlclose or a plain dl_iterate_phdr */
static _Atomic int walking;         /* handlers inside the real dl_iterate_phdr */
static __thread int busy_here;      /* this thread's share of busy (nested calls) */

void dlbusy_enter(void)
{
    busy_here++;
    atomic_fetch_add(&busy, 1);
    /* A handler that read busy as 0 before it moved is walking now, or about to: its walk does
     * not wait for this thread, which has not taken the lock yet. */
    while (atomic_load(&walking) > 0)
        sched_yield();
}

void dlbusy_leave(void)
{
    atomic_fetch_sub(&busy, 1);
    busy_here--;
}

int dlbusy_now(void)
{
    return atomic_load(&busy) > 0;
}

int dlbusy_handler_enter(void)
{
    atomic_fetch_add(&walking, 1);
    if (atomic_load(&busy) > 0) {
        atomic_fetch_sub(&walking, 1);
        return 0;
    }
    return 1;
}

void dlbusy_handler_leave(void)
{
    atomic_fetch_sub(&walking, 1);
}

void dlbusy_after_fork_child(void)
{
    atomic_store(&busy, busy_here);
    atomic_store(&walking, 0);
}
