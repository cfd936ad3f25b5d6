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
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The longest a busy thread waits for walks: past it (a walk abandoned by a program's handler
 * that longjmp'd out of ours, or anything unforeseen) libunwind is off in the handler for good
 * and nothing waits again: a one-off delay and frame-pointer stacks, never a hang. A walk that
 * was only slow (its thread preempted, throttled by a CPU quota, stopped) may go on after the
 * wait ran out: its next lookup is refused (dlbusy_lookup_enter), and the lookups already
 * inside the C library are waited for, so the busy thread never takes the loader's lock while
 * such a walk can still ask for it. */
#define DLBUSY_WAIT_NS 100000000LL

static _Atomic int busy;            /* threads inside dlclose or a program's dl_iterate_phdr */
static _Atomic int walking;         /* handlers walking a stack with libunwind */
static _Atomic int waiters;         /* busy threads asleep until walking is 0 */
static _Atomic int given_up;        /* a wait ran out: libunwind off in the handler */
static _Atomic int lookups;         /* the handlers' libunwind inside the C library's dl_iterate_phdr */
static _Atomic int lookup_waiters;  /* busy threads after a give-up, asleep until lookups is 0 */
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

/* After a wait ran out: sleeps until the handlers' lookups already inside the C library are
 * done. No deadline: such a lookup waits for the loader's lock at most, which this thread has
 * not taken (an outermost busy call, before its dlclose or dl_iterate_phdr), and a lookup that
 * comes later sees given_up and is refused (seq_cst on both sides: one sees the other). */
static void wait_for_lookups(void)
{
    atomic_fetch_add(&lookup_waiters, 1);
    int n;
    while ((n = atomic_load(&lookups)) > 0) {
        struct timespec t = {0, 10000000L}; /* a wake missed is seen at the next turn */
        if (syscall(SYS_futex, &lookups, FUTEX_WAIT_PRIVATE, n, &t, NULL, 0) < 0 && errno != EAGAIN &&
            errno != ETIMEDOUT && errno != EINTR)
            break; /* no futex here (a filter): never spin */
    }
    atomic_fetch_sub(&lookup_waiters, 1);
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
     * thread holds (it has not taken the lock yet). Not again in a nested call (a callback's
     * dlclose, a fork in a callback): the outer one waited, no walk has begun since, and this
     * thread may hold the loader's lock now. */
    if (busy_here == 1 && !walking_here && !never_waits) {
        if (atomic_load(&walking) > 0)
            wait_for_walks();
        /* Once a wait has run out, this one or another thread's, a walk that was slow rather
         * than abandoned may still have a lookup inside the C library. */
        if (atomic_load(&given_up))
            wait_for_lookups();
    }
    errno = saved;
}

void dlbusy_leave(void)
{
    atomic_fetch_sub(&busy, 1);
    busy_here--;
}

/* The loader's write lock, found at start (dlbusy_find_loader_lock); NULL when it was not. */
static pthread_mutex_t *loader_write_lock;

/* The loader's r_debug, the one it updates: the main program's DT_DEBUG points to it (as
 * debuggers find it). Not the exported _r_debug as the shim's code would see it: a program that
 * uses _r_debug itself holds a copy of it (a copy relocation), made while the loader was still
 * adding objects and never updated (glibc 2.36: its r_state stays RT_ADD), and the handler
 * would then never walk with libunwind. */
static const struct r_debug *loader_r_debug = &_r_debug;

#define LOADER_LOCK_CANDIDATES 4
struct lock_search {
    const unsigned char *base;
    size_t size;
    pid_t tid;
    int searched;
    int n;
    pthread_mutex_t *found[LOADER_LOCK_CANDIDATES];
    const struct r_debug *r_debug; /* the main program's DT_DEBUG, NULL without one */
};

/* The first object listed is the main program. */
static const struct r_debug *dt_debug_of(const struct dl_phdr_info *info, size_t size)
{
    if (size < offsetof(struct dl_phdr_info, dlpi_phnum) + sizeof info->dlpi_phnum || !info->dlpi_phdr)
        return NULL;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type != PT_DYNAMIC)
            continue;
        for (const ElfW(Dyn) *d = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
             d->d_tag != DT_NULL; d++)
            if (d->d_tag == DT_DEBUG)
                return (const struct r_debug *)d->d_un.d_ptr;
    }
    return NULL;
}

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
 * at the first object, the main program, whose DT_DEBUG is read then too. */
static int search_held_locks(struct dl_phdr_info *info, size_t size, void *data)
{
    struct lock_search *s = data;
    if (s->searched++)
        return 1;
    s->r_debug = dt_debug_of(info, size);
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
    if (s.r_debug)
        loader_r_debug = s.r_debug;
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
    return __atomic_load_n(&loader_r_debug->r_version, __ATOMIC_RELAXED) != 0 &&
           __atomic_load_n(&loader_r_debug->r_state, __ATOMIC_RELAXED) != RT_CONSISTENT;
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

int dlbusy_thread_exit(void)
{
    int left = walking_here;
    while (walking_here > 0)
        dlbusy_handler_leave();
    return left;
}

int dlbusy_given_up(void)
{
    return atomic_load(&given_up);
}

int dlbusy_lookup_enter(void)
{
    if (!walking_here)
        return 0; /* the warm-up's walk: it interrupted nobody, and may wait as any thread does */
    atomic_fetch_add(&lookups, 1);
    if (atomic_load(&given_up)) {
        dlbusy_lookup_leave();
        return -1;
    }
    return 1;
}

void dlbusy_lookup_leave(void)
{
    if (atomic_fetch_sub(&lookups, 1) == 1 && atomic_load(&lookup_waiters) > 0)
        syscall(SYS_futex, &lookups, FUTEX_WAKE_PRIVATE, 1 << 30, NULL, NULL, 0);
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
    /* A program's handler nested in ours may fork: the walk it interrupted goes on in the
     * child and leaves (dlbusy_handler_leave) there, so it stays counted. (Its lookups do not:
     * libunwind blocks signals around its dl_iterate_phdr.) */
    atomic_store(&walking, walking_here);
    atomic_store(&waiters, 0);
    atomic_store(&lookups, 0);
    atomic_store(&lookup_waiters, 0);
}
