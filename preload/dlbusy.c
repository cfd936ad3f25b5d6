/* dlbusy.c: the loader-lock handshake between the handler and busy threads (see dlbusy.h). It
 * must never make a handler wait, never make a busy thread wait for anything but walks under
 * way (which wait for nothing it holds), never wait past DLBUSY_WAIT_NS in all, and leave errno
 * as it was. */
#include "dlbusy.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
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

/* The loader's write lock, found at start (dlbusy_find_loader_lock); NULL when it was not. */
static pthread_mutex_t *loader_write_lock;

#define LOADER_LOCK_CANDIDATES 4
struct lock_search {
    const unsigned char *base;
    size_t size;
    pid_t tid;
    int searched;
    int n;
    pthread_mutex_t *found[LOADER_LOCK_CANDIDATES];
};

/* A recursive mutex (glibc's layout, which is public: bits/struct_mutex.h) that tid holds. Read
 * while other threads may write: only this thread's own holding is stable to the reading. */
static int held_recursive_by(const pthread_mutex_t *m, pid_t tid)
{
    return __atomic_load_n(&m->__data.__owner, __ATOMIC_RELAXED) == tid &&
           __atomic_load_n(&m->__data.__lock, __ATOMIC_RELAXED) != 0 &&
           __atomic_load_n(&m->__data.__count, __ATOMIC_RELAXED) >= 1 &&
           (__atomic_load_n(&m->__data.__kind, __ATOMIC_RELAXED) & 3) == PTHREAD_MUTEX_RECURSIVE_NP;
}

/* Inside dl_iterate_phdr, which takes the loader's write lock alone (glibc 2.36: the load lock,
 * the TLS lock and the unique-symbol locks, recursive too, are not taken by it). Scanned once,
 * at the first object. */
static int search_held_locks(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)info;
    (void)size;
    struct lock_search *s = data;
    if (s->searched++)
        return 1;
    for (size_t off = 0; off + sizeof(pthread_mutex_t) <= s->size; off += _Alignof(pthread_mutex_t)) {
        pthread_mutex_t *m = (pthread_mutex_t *)(uintptr_t)(s->base + off);
        if (held_recursive_by(m, s->tid) && s->n < LOADER_LOCK_CANDIDATES)
            s->found[s->n++] = m;
    }
    return 1;
}

int dlbusy_find_loader_lock(int (*iterate)(int (*cb)(struct dl_phdr_info *, size_t, void *), void *),
                            char *why, size_t why_size)
{
    int saved = errno;
    void *rtld_global = dlsym(RTLD_DEFAULT, "_rtld_global");
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    if (!rtld_global || !dladdr1(rtld_global, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym || sym->st_size == 0) {
        dlerror(); /* the program's next dlerror() must not see the shim's failed lookup */
        snprintf(why, why_size, "the dynamic loader exports no _rtld_global with a size");
        errno = saved;
        return -1;
    }
    struct lock_search s = {.base = rtld_global, .size = sym->st_size, .tid = (pid_t)syscall(SYS_gettid)};
    iterate(search_held_locks, &s);
    /* Held in the callback, not outside it: the load lock, held when this image is being
     * dlopen'd, is held in both; called from inside a callback, none is kept (not found). */
    int kept = 0;
    for (int i = 0; i < s.n; i++)
        if (!held_recursive_by(s.found[i], s.tid))
            s.found[kept++] = s.found[i];
    errno = saved;
    if (kept != 1) {
        snprintf(why, why_size, "%d recursive mutexes of _rtld_global (%zu bytes) are held inside dl_iterate_phdr "
                 "and not outside it, where glibc has one", kept, (size_t)sym->st_size);
        return -1;
    }
    loader_write_lock = s.found[0];
    return 0;
}

/* Taken by anyone, or taken half-way: the lock word is set first and cleared last. */
static int loader_lock_taken(void)
{
    return __atomic_load_n(&loader_write_lock->__data.__lock, __ATOMIC_ACQUIRE) != 0;
}

/* The loader is adding or removing an object (r_debug's state): a dlclose no wrapper saw (a
 * failed dlopen's clean-up, the C library's own) is then in progress. Not a guard of the write
 * lock on its own: dlopen adds its first object to the list before it moves the state (glibc
 * 2.36 here), which loader_lock_taken covers. Base namespace only. */
static int loader_changing(void)
{
    return _r_debug.r_version != 0 && _r_debug.r_state != RT_CONSISTENT;
}

int dlbusy_handler_enter(void)
{
    if (atomic_load(&given_up) || !loader_write_lock)
        return 0;
    walking_here++;
    atomic_fetch_add(&walking, 1);
    if (atomic_load(&busy) > 0 || loader_changing() || loader_lock_taken()) {
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
