/* m_ldhalf.c: the dynamic loader's write lock half taken by the very thread a sample lands in
 * (tests/t_shim_dllock.sh). glibc's recursive mutex sets its lock word before its owner when
 * taken and clears the owner before the word when let go; a thread interrupted in between (as
 * dlopen's thread is, adding each object to the list under that lock) looks to the mutex like
 * another thread's hold, and a handler that walks into dl_iterate_phdr there waits for itself
 * for good. This target makes that moment last: it finds the lock (the one recursive mutex in
 * ld.so's _rtld_global it owns inside a dl_iterate_phdr callback and not outside it), takes it,
 * clears the owner, and burns CPU in a function no stack has passed through yet (so libunwind
 * must look its tables up), then puts the owner back and lets go. It burns before (libunwind's
 * load) and after (stacks walked by libunwind again). Prints the CLOCK_MONOTONIC times (ns) at
 * which the half-taken burn began, ended, and the one after ended, and exits 0; exits 3 with a
 * line on stderr when the lock is not found. */
#define _GNU_SOURCE
#include "burn.h"
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_before)
DEFINE_BURN(burn_half_taken)
DEFINE_BURN(burn_after)

struct search {
    unsigned char *base;
    size_t size;
    pid_t tid;
    int calls;
    int n;
    pthread_mutex_t *held[8];
};

static int owned_by(const pthread_mutex_t *m, pid_t tid)
{
    return m->__data.__owner == tid && m->__data.__lock != 0 && (m->__data.__kind & 3) == PTHREAD_MUTEX_RECURSIVE_NP;
}

static int scan(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)info;
    (void)size;
    struct search *s = data;
    if (s->calls++)
        return 1;
    for (size_t off = 0; off + sizeof(pthread_mutex_t) <= s->size; off += 8) {
        pthread_mutex_t *m = (pthread_mutex_t *)(void *)(s->base + off);
        if (owned_by(m, s->tid) && s->n < 8)
            s->held[s->n++] = m;
    }
    return 1;
}

int main(void)
{
    void *g = dlsym(RTLD_DEFAULT, "_rtld_global");
    Dl_info di;
    const ElfW(Sym) *sym = NULL;
    if (!g || !dladdr1(g, &di, (void **)&sym, RTLD_DL_SYMENT) || !sym) {
        fprintf(stderr, "m_ldhalf: no _rtld_global\n");
        return 3;
    }
    struct search s = {.base = g, .size = sym->st_size, .tid = (pid_t)syscall(SYS_gettid)};
    dl_iterate_phdr(scan, &s);
    pthread_mutex_t *lock = NULL;
    int found = 0;
    for (int i = 0; i < s.n; i++)
        if (!owned_by(s.held[i], s.tid)) {
            lock = s.held[i];
            found++;
        }
    if (found != 1) {
        fprintf(stderr, "m_ldhalf: %d candidates for the loader's write lock\n", found);
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
