/* ldlock.h: the tests' own finder of glibc's loader write lock (m_ldhalf.c, dlbusy_unit.c),
 * written apart from the shim's (preload/dlbusy.c) so that a test can hold the lock half-taken
 * as the shim must see it: the one recursive mutex in ld.so's _rtld_global that this thread owns
 * inside a dl_iterate_phdr callback and not outside it. NULL when there is not exactly one. The
 * search calls the C library's own dl_iterate_phdr, past any wrapper (the shim's, or
 * m_phdrdefer.so's, which runs the callbacks after the lock is let go). */
#ifndef PERFSCOPE_TEST_LDLOCK_H
#define PERFSCOPE_TEST_LDLOCK_H

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

struct ldlock_search {
    unsigned char *base;
    size_t size;
    pid_t tid;
    int calls;
    int n;
    pthread_mutex_t *held[8];
};

static int ldlock_owned_by(const pthread_mutex_t *m, pid_t tid)
{
    return m->__data.__owner == tid && m->__data.__lock != 0 && (m->__data.__kind & 3) == PTHREAD_MUTEX_RECURSIVE_NP;
}

static int ldlock_scan(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)info;
    (void)size;
    struct ldlock_search *s = data;
    if (s->calls++)
        return 1;
    for (size_t off = 0; off + sizeof(pthread_mutex_t) <= s->size; off += 8) {
        pthread_mutex_t *m = (pthread_mutex_t *)(void *)(s->base + off);
        if (ldlock_owned_by(m, s->tid) && s->n < 8)
            s->held[s->n++] = m;
    }
    return 1;
}

static pthread_mutex_t *ldlock_find(void)
{
    void *g = dlsym(RTLD_DEFAULT, "_rtld_global");
    Dl_info di;
    const ElfW(Sym) *sym = NULL;
    if (!g || !dladdr1(g, &di, (void **)&sym, RTLD_DL_SYMENT) || !sym)
        return NULL;
    void *libc = dlopen("libc.so.6", RTLD_NOLOAD | RTLD_LAZY);
    int (*iterate)(int (*)(struct dl_phdr_info *, size_t, void *), void *) = NULL;
    if (libc)
        *(void **)&iterate = dlsym(libc, "dl_iterate_phdr");
    if (!iterate)
        return NULL;
    struct ldlock_search s = {.base = g, .size = sym->st_size, .tid = (pid_t)syscall(SYS_gettid)};
    iterate(ldlock_scan, &s);
    pthread_mutex_t *lock = NULL;
    int found = 0;
    for (int i = 0; i < s.n; i++)
        if (!ldlock_owned_by(s.held[i], s.tid)) {
            lock = s.held[i];
            found++;
        }
    return found == 1 ? lock : NULL;
}

#endif
