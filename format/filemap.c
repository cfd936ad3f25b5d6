/* filemap.c: see filemap.h. The SIGBUS handler must do nothing but async-signal-safe system
 * calls and atomic loads, keep errno, and never take a fault that is not in a live mapping of
 * this file's for its own: that one goes to the handler before it, or ends the process as it
 * would have. A mapping is in the registry only while it is mapped (added after mmap, removed
 * before munmap). */
#include "filemap.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14; older kernels refuse it, and the reader faults */
#endif

#define REGISTRY 16 /* mappings live at once (a reader thread and a replaying one use one each) */

#define CLAIMED ((uintptr_t)1) /* an entry being filled in, which the handler passes over */

static struct entry {
    _Atomic uintptr_t base; /* 0: free; CLAIMED: being filled in */
    size_t len;
    _Atomic int *shrank;
} registry[REGISTRY];

static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static struct sigaction before; /* the disposition filemap's handler replaced */
static int installed;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    uintptr_t a = (uintptr_t)si->si_addr;
    for (int i = 0; i < REGISTRY; i++) {
        uintptr_t b = atomic_load_explicit(&registry[i].base, memory_order_acquire);
        if (b <= CLAIMED || a < b || a - b >= registry[i].len)
            continue;
        uintptr_t page = a & ~((uintptr_t)sysconf(_SC_PAGESIZE) - 1); /* sysconf: a read, safe */
        size_t rest = registry[i].len - (size_t)(page - b);
        if (mmap((void *)page, rest, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
            MAP_FAILED) {
            atomic_store_explicit(registry[i].shrank, 1, memory_order_release);
            errno = saved;
            return; /* the faulting access reads zeros */
        }
        break;
    }
    /* Not ours (or no zeros could be mapped): as without filemap. */
    if (before.sa_flags & SA_SIGINFO) {
        before.sa_sigaction(sig, si, uc);
    } else if (before.sa_handler != SIG_DFL && before.sa_handler != SIG_IGN) {
        before.sa_handler(sig);
    } else {
        signal(SIGBUS, SIG_DFL);
        if (si->si_code <= 0)
            raise(SIGBUS); /* sent (kill): again, to the default action */
        /* a fault: the access is made again on return and ends the process */
    }
    errno = saved;
}

static void install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigfillset(&sa.sa_mask);
    installed = sigaction(SIGBUS, &sa, &before) == 0;
}

static int registry_add(struct filemap *m)
{
    for (int i = 0; i < REGISTRY; i++) {
        uintptr_t expect = 0;
        if (atomic_load(&registry[i].base) ||
            !atomic_compare_exchange_strong(&registry[i].base, &expect, CLAIMED))
            continue;
        registry[i].len = m->len;
        registry[i].shrank = &m->shrank;
        atomic_store_explicit(&registry[i].base, (uintptr_t)m->base, memory_order_release);
        return i;
    }
    return -1;
}

static void *ahead_main(void *arg)
{
    struct filemap *m = arg;
    pthread_mutex_lock(&m->mu);
    while (!m->stop && m->populated < m->len) {
        if (m->populated >= m->consumed + FILEMAP_STEP) {
            m->waiting = 1;
            pthread_cond_wait(&m->cv, &m->mu);
            m->waiting = 0;
            continue;
        }
        size_t at = m->populated, n = m->len - at < FILEMAP_STEP ? m->len - at : FILEMAP_STEP;
        pthread_mutex_unlock(&m->mu);
        /* A file cut meanwhile fails this (EFAULT), never raises SIGBUS here. */
        int rc = madvise((void *)(m->base + at), n, MADV_POPULATE_READ);
        pthread_mutex_lock(&m->mu);
        if (rc != 0)
            break; /* the reader faults its pages in itself */
        m->populated = at + n;
    }
    pthread_mutex_unlock(&m->mu);
    return NULL;
}

int filemap_open(struct filemap *m, int fd, size_t len)
{
    memset(m, 0, sizeof *m);
    m->slot = -1;
    if (len == 0)
        return -1;
    pthread_once(&install_once, install);
    if (!installed)
        return -1;
    void *p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED)
        return -1;
    m->base = p;
    m->len = len;
    m->slot = registry_add(m);
    if (m->slot < 0) {
        munmap(p, len);
        return -1;
    }
    madvise(p, len, MADV_SEQUENTIAL);
    if (pthread_mutex_init(&m->mu, NULL) == 0) {
        if (pthread_cond_init(&m->cv, NULL) == 0) {
            sigset_t all, old;
            sigfillset(&all);
            pthread_sigmask(SIG_BLOCK, &all, &old); /* no signal of anyone's on this thread */
            m->ahead_started = pthread_create(&m->ahead, NULL, ahead_main, m) == 0;
            pthread_sigmask(SIG_SETMASK, &old, NULL);
            if (!m->ahead_started)
                pthread_cond_destroy(&m->cv);
        }
        if (!m->ahead_started)
            pthread_mutex_destroy(&m->mu);
    }
    return 0; /* without the thread the reader faults its pages in itself */
}

void filemap_consumed(struct filemap *m, size_t upto)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t done = upto / page * page;
    if (done > m->released + FILEMAP_STEP / 2) {
        madvise((void *)(m->base + m->released), done - m->released, MADV_DONTNEED);
        m->released = done;
    }
    if (!m->ahead_started)
        return;
    pthread_mutex_lock(&m->mu);
    m->consumed = upto;
    if (m->waiting)
        pthread_cond_signal(&m->cv);
    pthread_mutex_unlock(&m->mu);
}

void filemap_close(struct filemap *m)
{
    if (!m->base)
        return;
    if (m->ahead_started) {
        pthread_mutex_lock(&m->mu);
        m->stop = 1;
        pthread_cond_signal(&m->cv);
        pthread_mutex_unlock(&m->mu);
        pthread_join(m->ahead, NULL);
        pthread_cond_destroy(&m->cv);
        pthread_mutex_destroy(&m->mu);
        m->ahead_started = 0;
    }
    atomic_store_explicit(&registry[m->slot].base, 0, memory_order_release);
    munmap((void *)m->base, m->len);
    m->base = NULL;
}
