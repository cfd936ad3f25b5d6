/* fdheld.c: descriptors kept on files used again and again (fdheld.h). The identity is the
 * file's device and inode, checked with fstat before each use; nothing is allocated. */
#include "fdheld.h"

#include <stdatomic.h>
#include <sys/stat.h>

#include "clock.h"
#include "fds.h"

static int held_is_file(const struct fds_held *h, int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 && (unsigned long long)st.st_dev == h->dev && (unsigned long long)st.st_ino == h->ino;
}

int fds_hold(struct fds_held *h, int fd, const char *path)
{
    if (fd < clock_fd_base() || fds_is_ours(fd))
        return 0; /* low (no room above), or a descriptor fds.c keeps already */
    fds_mark(fd, 1);
    /* An open file pins its name's entry, so the path names the same inode while fd is ours
     * (/proc's included). */
    struct stat st, sp;
    if (fstat(fd, &st) != 0 || stat(path, &sp) != 0 || st.st_dev != sp.st_dev || st.st_ino != sp.st_ino) {
        fds_mark(fd, 0);
        return -1;
    }
    h->dev = (unsigned long long)st.st_dev;
    h->ino = (unsigned long long)st.st_ino;
    atomic_store(&h->fd, fd);
    return 1;
}

int fds_held_fd(struct fds_held *h)
{
    int fd = atomic_load(&h->fd);
    if (fd < 0 || held_is_file(h, fd))
        return fd;
    fds_held_forget(h);
    return -1;
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
