/* filemap.c: see filemap.h. The SIGBUS handler must do nothing but async-signal-safe system
 * calls and atomic loads and stores, keep errno, act only on a consistent view of a registry
 * entry (its sequence even and the same before and after), and never take a fault that is not
 * in a live mapping of this file's for its own: that one goes to the disposition before it, as
 * it would have without filemap. A mapping is in the registry only while it is mapped (added
 * after mmap, removed before munmap), and only its reader's thread touches it (the populating
 * thread's madvise fails rather than faults), which is also the one that closes it: the mapping
 * a fault lands in cannot be unmapped, nor its range reused, while the handler maps zeros there. */
#include "filemap.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14; older kernels refuse it, and the reader faults */
#endif

#define REGISTRY 16 /* mappings live at once (a reader thread and a replaying one use one each) */

/* An entry is written under its sequence (odd while being written), and read by the handler as
 * a seqlock: base, len and the flag are only believed when the sequence was even and unchanged
 * around them, so an entry being taken or given back by another thread is never half read. */
static struct entry {
    _Atomic unsigned seq;
    _Atomic uintptr_t base; /* 0: free */
    _Atomic size_t len;
    _Atomic int shrank;
} registry[REGISTRY];

static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static struct sigaction before; /* the disposition filemap's handler replaced */
static int installed;
static uintptr_t page_size;

/* A fault the kernel raised for an access (made again when the handler returns), rather than a
 * SIGBUS sent, or an asynchronous machine-check report. */
static int from_access(const siginfo_t *si)
{
    return si->si_code == BUS_ADRALN || si->si_code == BUS_ADRERR || si->si_code == BUS_OBJERR ||
           si->si_code == BUS_MCEERR_AR;
}

static int zero_rest(uintptr_t a)
{
    for (int i = 0; i < REGISTRY; i++) {
        unsigned s0 = atomic_load(&registry[i].seq);
        if (s0 & 1)
            continue;
        uintptr_t b = atomic_load(&registry[i].base);
        size_t len = atomic_load(&registry[i].len);
        if (atomic_load(&registry[i].seq) != s0 || !b || a < b || a - b >= len)
            continue;
        uintptr_t page = a & ~(page_size - 1);
        if (mmap((void *)page, len - (size_t)(page - b), PROT_READ,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
            return 0;
        atomic_store(&registry[i].shrank, 1);
        return 1;
    }
    return 0;
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    if (from_access(si) && zero_rest((uintptr_t)si->si_addr)) {
        errno = saved;
        return; /* the access that faulted reads zeros */
    }
    /* Not ours: as the disposition before would have it. */
    if (before.sa_flags & SA_SIGINFO) {
        before.sa_sigaction(sig, si, uc);
    } else if (before.sa_handler != SIG_DFL && before.sa_handler != SIG_IGN) {
        before.sa_handler(sig);
    } else if (from_access(si)) {
        signal(SIGBUS, SIG_DFL); /* the access is made again on return: the kernel's action */
    } else if (before.sa_handler == SIG_DFL) {
        signal(SIGBUS, SIG_DFL);
        raise(SIGBUS); /* sent, or reported: the default action, once this handler returns */
    } /* else sent while ignored: ignored */
    errno = saved;
}

static void install(void)
{
    page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
    if (sigaction(SIGBUS, NULL, &before) != 0)
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    /* The previous handler's restart and stack, which it is called under. */
    sa.sa_flags = SA_SIGINFO | (before.sa_flags & (SA_RESTART | SA_ONSTACK));
    sa.sa_mask = before.sa_mask;
    sigaddset(&sa.sa_mask, SIGBUS);
    installed = sigaction(SIGBUS, &sa, NULL) == 0;
}

static int registry_add(struct filemap *m)
{
    for (int i = 0; i < REGISTRY; i++) {
        unsigned s = atomic_load(&registry[i].seq);
        /* an even sequence with no base: free; taking it makes the sequence odd */
        if ((s & 1) || atomic_load(&registry[i].base) ||
            !atomic_compare_exchange_strong(&registry[i].seq, &s, s + 1))
            continue;
        atomic_store(&registry[i].len, m->len);
        atomic_store(&registry[i].shrank, 0);
        atomic_store(&registry[i].base, (uintptr_t)m->base);
        atomic_store(&registry[i].seq, s + 2);
        return i;
    }
    return -1;
}

static void registry_remove(int i)
{
    unsigned s = atomic_load(&registry[i].seq);
    atomic_store(&registry[i].seq, s + 1);
    atomic_store(&registry[i].base, 0);
    atomic_store(&registry[i].seq, s + 2);
}

int filemap_shrank(const struct filemap *m)
{
    return m->slot >= 0 && atomic_load(&registry[m->slot].shrank);
}

static void *ahead_main(void *arg)
{
    struct filemap *m = arg;
    pthread_mutex_lock(&m->mu);
    while (!m->stop && m->populated < m->len) {
        /* What the reader has left behind, given back here, off its thread: the unmapping was
         * 1-1.4 ms of its 25 on the bench's 54 MB file. */
        size_t done = m->consumed / page_size * page_size;
        if (done > m->released + FILEMAP_STEP / 2) {
            size_t from = m->released;
            m->released = done;
            pthread_mutex_unlock(&m->mu);
            madvise((void *)(m->base + from), done - from, MADV_DONTNEED);
            pthread_mutex_lock(&m->mu);
            continue;
        }
        /* Behind the reader (this thread was kept off a CPU): from the reader on, never the
         * pages it has given back. */
        if (m->populated < m->consumed)
            m->populated = m->consumed / page_size * page_size;
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
        if (m->populated == at)
            m->populated = at + n;
    }
    m->ahead_done = 1; /* from here on the reader gives its pages back itself */
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
        m->base = NULL;
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
    size_t done = upto / page_size * page_size, from = 0, to = 0;
    if (!m->ahead_started) {
        if (done > m->released + FILEMAP_STEP / 2) {
            from = m->released;
            to = m->released = done;
        }
    } else {
        /* The thread gives the pages back. The reader does it itself once the thread has ended
         * (the whole file populated, or populating refused: a kernel before 5.14), or when the
         * thread has fallen two steps behind (kept off a CPU): the resident part stays bounded
         * however the two are scheduled. A range is claimed under the lock, so never twice. */
        pthread_mutex_lock(&m->mu);
        m->consumed = upto;
        if (m->waiting)
            pthread_cond_signal(&m->cv);
        if (done > m->released + (m->ahead_done ? FILEMAP_STEP / 2 : 2 * FILEMAP_STEP)) {
            from = m->released;
            to = m->released = done;
        }
        pthread_mutex_unlock(&m->mu);
    }
    if (to > from)
        madvise((void *)(m->base + from), to - from, MADV_DONTNEED);
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
    registry_remove(m->slot);
    munmap((void *)m->base, m->len);
    m->base = NULL;
    m->slot = -1;
}
