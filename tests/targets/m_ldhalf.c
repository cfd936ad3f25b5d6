/* m_ldhalf.c: the dynamic loader's write lock half taken by the very thread a sample lands in
 * (tests/t_shim_dllock.sh). glibc's recursive mutex sets its lock word before its owner when
 * taken and clears the owner before the word when let go; a thread interrupted in between (as
 * dlopen's thread is, adding its first object to the list under that lock) looks to the mutex
 * like another thread's hold, and a handler that walks into dl_iterate_phdr there waits for
 * itself for good. This target makes that moment last: it finds the lock (ldlock.h), takes it,
 * clears the owner, and burns CPU in a function no stack has passed through yet (so libunwind
 * must look its tables up), then puts the owner back and lets go. It burns before (libunwind's
 * load) and after (stacks walked by libunwind again). Prints the CLOCK_MONOTONIC times (ns) at
 * which the half-taken burn began, ended, and the one after ended, and exits 0; exits 3 with a
 * line on stderr when the lock is not found. */
#define _GNU_SOURCE
#include "burn.h"
#include "ldlock.h"
#include <stdio.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_before)
DEFINE_BURN(burn_half_taken)
DEFINE_BURN(burn_after)

int main(void)
{
    pthread_mutex_t *lock = ldlock_find();
    if (!lock) {
        fprintf(stderr, "m_ldhalf: the loader's write lock was not found\n");
        return 3;
    }
    burn_before(0.15);
    uint64_t t0 = mono_ns();
    pthread_mutex_lock(lock);
    int owner = lock->__data.__owner;
    lock->__data.__owner = 0; /* as between the lock word and the owner */
    burn_half_taken(0.1);
    lock->__data.__owner = owner;
    pthread_mutex_unlock(lock);
    uint64_t t1 = mono_ns();
    burn_after(0.1);
    printf("%llu %llu %llu\n", (unsigned long long)t0, (unsigned long long)t1, (unsigned long long)mono_ns());
    return 0;
}
