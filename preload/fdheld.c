/* fdheld.c: descriptors kept on files used again and again (fdheld.h). The identity is the
 * file's device and inode, checked with fstat before each use; nothing is allocated. */
#include "fdheld.h"

#include <stdatomic.h>
#include <sys/stat.h>
#include <time.h>

#include "clock.h"
#include "fds.h"

static int held_is_file_stat(const struct fds_held *h, int fd, struct stat *st)
{
    return fstat(fd, st) == 0 && (unsigned long long)st->st_dev == h->dev && (unsigned long long)st->st_ino == h->ino;
}

static int held_is_file(const struct fds_held *h, int fd)
{
    struct stat st;
    return held_is_file_stat(h, fd, &st);
}

int fds_hold(struct fds_held *h, int fd, const struct stat *before)
{
    if (!before || fd < clock_fd_base() || fds_is_ours(fd))
        return 0; /* low (no room above), or a descriptor fds.c keeps already */
    fds_mark(fd, 1);
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_dev != before->st_dev || st.st_ino != before->st_ino) {
        fds_mark(fd, 0);
        return -1;
    }
    h->dev = (unsigned long long)st.st_dev;
    h->ino = (unsigned long long)st.st_ino;
    atomic_store(&h->in_use, -1);
    atomic_store(&h->fd, fd);
    return 1;
}

int fds_held_fd_stat(struct fds_held *h, struct stat *st)
{
    int fd = atomic_load(&h->fd);
    if (fd < 0 || held_is_file_stat(h, fd, st))
        return fd;
    fds_held_forget(h);
    return -1;
}

int fds_held_fd(struct fds_held *h)
{
    struct stat st;
    return fds_held_fd_stat(h, &st);
}

int fds_held_begin(struct fds_held *h, int fd)
{
    atomic_store(&h->in_use, fd); /* then the check: a forget after this waits for the end */
    if (atomic_load(&h->fd) == fd)
        return 1;
    atomic_store(&h->in_use, -1);
    return 0;
}

void fds_held_end(struct fds_held *h)
{
    atomic_store(&h->in_use, -1);
}

void fds_held_close(struct fds_held *h)
{
    int fd = atomic_load(&h->fd);
    if (fd < 0)
        return;
    if (held_is_file(h, fd))
        ps_real_close(fd);
    fds_held_forget(h);
}

void fds_held_forget(struct fds_held *h)
{
    int fd = atomic_exchange(&h->fd, -1);
    if (fd >= 0)
        fds_mark(fd, 0);
}

void fds_held_forget_for_dup2(struct fds_held *h, int fd)
{
    int expected = fd;
    if (!atomic_compare_exchange_strong(&h->fd, &expected, -1))
        return;
    fds_mark(fd, 0);
    for (int i = 0; i < 25000 && atomic_load(&h->in_use) == fd; i++) {
        struct timespec ts = { 0, 200000 };
        nanosleep(&ts, NULL);
    }
}
