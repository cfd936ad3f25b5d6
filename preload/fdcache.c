/* fdcache.c: small files read through kept descriptors (fdcache.h). A few slots, each a path,
 * the descriptor opened on it (moved above the target's numbers at once, marked as the shim's so
 * the target's close, close_range and dup2 go around it: fds.c) and the file's identity. Before
 * each read the number must still be that file (fstat: a descriptor closed or replaced past the
 * wrappers is never read, nor closed: the number may be the target's), and outside /proc the
 * path must still name it (stat: a file replaced by rename). A /proc file needs no such stat:
 * its descriptor stays bound to the process or thread it was opened for, a read through it once
 * that one is gone fails (ESRCH), and /proc has no rename; such a failed read is tried once more
 * by path, so a reused pid reads its new process, as a stat would have found. Reads are pread
 * from offset 0, which /proc and sysfs answer afresh; every file read here is one record (a
 * /proc file of one line or one block, a sysfs attribute, a small regular file), so a read
 * shorter than asked is its end: no second read to meet the end of file. When every slot is taken the oldest goes; where the descriptor
 * cannot be moved high (a low limit) the file is read and closed at once, as before; one not
 * read for FDCACHE_IDLE_NS (a process of the run that ended) is closed. Never from
 * a signal handler (a mutex); never writes through a kept descriptor. */
#include "fdcache.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"
#include "fdheld.h"
#include "fds.h"

#define FDCACHE_SLOTS 32
#define FDCACHE_PATH 160
#define FDCACHE_IDLE_NS 3000000000ull /* the slowest reader reads once a second */

static struct fdcache_slot {
    char path[FDCACHE_PATH];
    struct fds_held held; /* fd -1: a free slot */
    uint64_t used_ns;     /* its last read */
} slots[FDCACHE_SLOTS];
static int slots_ready, next_victim;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void init_locked(void)
{
    if (slots_ready)
        return;
    for (int i = 0; i < FDCACHE_SLOTS; i++)
        atomic_store(&slots[i].held.fd, -1);
    slots_ready = 1;
}

static void drop(struct fdcache_slot *s)
{
    fds_held_close(&s->held);
    s->path[0] = 0;
}

static ssize_t read_from_start(int fd, char *buf, size_t size)
{
    size_t len = 0;
    while (len + 1 < size) {
        ssize_t n = pread(fd, buf + len, size - 1 - len, (off_t)len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        len += (size_t)n;
        if ((size_t)n < size - 1 - (len - (size_t)n))
            break; /* shorter than asked: the end of a one-record file (above) */
    }
    buf[len] = 0;
    return (ssize_t)len;
}

/* A file of /proc: bound to its process or thread, never renamed (above). */
static int in_proc(const char *path)
{
    return strncmp(path, "/proc/", 6) == 0;
}

/* The kept slot for path, still valid: outside /proc the path still names its file (stat), and
 * the number is still that file (fds_held_fd). NULL when there is none (a stale one is
 * dropped). */
static struct fdcache_slot *find_locked(const char *path)
{
    for (int i = 0; i < FDCACHE_SLOTS; i++) {
        struct fdcache_slot *s = &slots[i];
        if (atomic_load(&s->held.fd) < 0 || strcmp(s->path, path) != 0)
            continue;
        struct stat st;
        if ((in_proc(path) || (stat(path, &st) == 0 && (unsigned long long)st.st_dev == s->held.dev &&
                               (unsigned long long)st.st_ino == s->held.ino)) &&
            fds_held_fd(&s->held) >= 0)
            return s;
        drop(s);
        return NULL;
    }
    return NULL;
}

/* Opens path (counted among the opens a seccomp filter waits for: fds_run_open) and keeps it
 * in a slot when it can be kept; the descriptor, or -1. *kept says whether it stays open. */
static int open_locked(const char *path, int *kept)
{
    *kept = 0;
    struct stat before;
    int keep = strlen(path) < FDCACHE_PATH && stat(path, &before) == 0; /* the file it must be */
    int fd = fds_run_open(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0 || !keep)
        return fd;
    struct fdcache_slot *s = NULL;
    for (int i = 0; i < FDCACHE_SLOTS && !s; i++)
        if (atomic_load(&slots[i].held.fd) < 0)
            s = &slots[i];
    if (!s) {
        s = &slots[next_victim];
        next_victim = (next_victim + 1) % FDCACHE_SLOTS;
        drop(s);
    }
    int held = fds_hold(&s->held, fd, &before);
    if (held < 0) {
        ps_real_close(fd); /* our copy of a file that is not the one the path named */
        errno = EBADF;
        return -1;
    }
    if (!held)
        return fd; /* low, or fds.c's own: read and closed at once */
    strcpy(s->path, path);
    s->used_ns = ps_now_ns();
    *kept = 1;
    return fd;
}

ssize_t fdcache_read(const char *path, char *buf, size_t size)
{
    if (size == 0) {
        errno = EINVAL;
        return -1;
    }
    /* Counted among the shim's opens a seccomp filter for every thread waits for, and not at
     * all once one may forbid them (fds.c): the stat, the open and the read all inside. */
    if (!fds_io_enter()) {
        errno = EPERM;
        return -1;
    }
    if (!fds_may_open()) {
        fds_io_leave();
        errno = EPERM;
        return -1;
    }
    pthread_mutex_lock(&lock);
    init_locked();
    uint64_t now = ps_now_ns();
    for (int i = 0; i < FDCACHE_SLOTS; i++)
        if (atomic_load(&slots[i].held.fd) >= 0 && now - slots[i].used_ns > FDCACHE_IDLE_NS)
            drop(&slots[i]);
    struct fdcache_slot *s = find_locked(path);
    int kept = s != NULL;
    int fd = s ? atomic_load(&s->held.fd) : open_locked(path, &kept);
    if (s)
        s->used_ns = now;
    ssize_t n = fd < 0 ? -1 : read_from_start(fd, buf, size);
    if (n < 0 && s && in_proc(path)) {
        /* Its process or thread is gone (no stat looked first): by path once more, as a stat
         * that found the path gone or another file there would have sent it. */
        drop(s);
        fd = open_locked(path, &kept);
        n = fd < 0 ? -1 : read_from_start(fd, buf, size);
    }
    int err = errno;
    if (n < 0 && kept) {
        /* The process is gone (ESRCH) or the file cannot be read: not kept for the next time. */
        for (int i = 0; i < FDCACHE_SLOTS; i++)
            if (atomic_load(&slots[i].held.fd) == fd)
                drop(&slots[i]);
    } else if (fd >= 0 && !kept) {
        fds_run_close(fd);
    }
    pthread_mutex_unlock(&lock);
    fds_io_leave();
    errno = err;
    return n;
}

void fdcache_forget_thread(pid_t tid)
{
    char prefix[48];
    int n = snprintf(prefix, sizeof prefix, "/proc/self/task/%d/", (int)tid);
    pthread_mutex_lock(&lock);
    init_locked();
    for (int i = 0; i < FDCACHE_SLOTS; i++)
        if (atomic_load(&slots[i].held.fd) >= 0 && strncmp(slots[i].path, prefix, (size_t)n) == 0)
            drop(&slots[i]);
    pthread_mutex_unlock(&lock);
}

void fdcache_forget_fd(int fd)
{
    if (fd < 0)
        return;
    /* From the target's dup2, maybe in a handler that interrupted this thread's own read: a
     * bounded wait; if the slot stays, its identity check catches the dup2 at the next read. */
    int locked = 0;
    for (int i = 0; i < 10000 && !(locked = pthread_mutex_trylock(&lock) == 0); i++) {
        struct timespec ts = { 0, 200000 };
        nanosleep(&ts, NULL);
    }
    if (!locked) {
        /* Forgotten all the same (readers only pread through it, and close nothing forgotten):
         * else the target's file on that number would stay marked as ours. */
        for (int i = 0; i < FDCACHE_SLOTS; i++)
            fds_held_forget_for_dup2(&slots[i].held, fd);
        return;
    }
    init_locked();
    for (int i = 0; i < FDCACHE_SLOTS; i++) {
        if (atomic_load(&slots[i].held.fd) == fd) {
            fds_held_forget_for_dup2(&slots[i].held, fd); /* the target's dup2 closes it */
            slots[i].path[0] = 0;
        }
    }
    pthread_mutex_unlock(&lock);
}

void fdcache_forget_after_fork(void)
{
    /* The child's only thread: the lock may have been held by a thread that is not here. */
    pthread_mutex_init(&lock, NULL);
    init_locked();
    for (int i = 0; i < FDCACHE_SLOTS; i++)
        drop(&slots[i]);
    next_victim = 0;
}
