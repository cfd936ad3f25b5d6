/* fds.c: the shim's descriptors among the target's (fds.h). The few that must live (perf
 * events, the leader's lock, inotify watch and wake-up eventfd, libunwind's pipe) are marked
 * here, and to the target they do not exist: close on one is EBADF, close_range/closefrom close
 * around them, dup2/dup3 onto one first move ours away, and libunwind's pipe is moved high and
 * becomes ours. Never closes, reuses or writes a descriptor number the target holds; every
 * wrapper returns what the C library would have, with the same errno. The bitmap is read from
 * the signal handler: lock-free, no allocation. */
#include "fds.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>

#include "clock.h"
#include "interpose.h"
#include "leader.h"
#include "ring.h"
#include "sampler.h"
#include "shim.h"

/* ---- which descriptors are ours ---- */

#define PS_FD_BITS 65536
static _Atomic uint64_t perf_fd_bits[PS_FD_BITS / 64];

void fds_mark(int fd, int ours)
{
    if (fd < 0 || fd >= PS_FD_BITS)
        return;
    uint64_t bit = 1ull << (fd % 64);
    if (ours)
        atomic_fetch_or(&perf_fd_bits[fd / 64], bit);
    else
        atomic_fetch_and(&perf_fd_bits[fd / 64], ~bit);
}

int fds_is_ours(int fd)
{
    return fd >= 0 && fd < PS_FD_BITS &&
           (atomic_load_explicit(&perf_fd_bits[fd / 64], memory_order_relaxed) >> (fd % 64)) & 1;
}

/* ---- the C library's close, for the shim's own descriptors ---- */

static int (*real_close)(int);

int ps_real_close(int fd)
{
    PS_RESOLVE(close);
    return real_close(fd);
}

/* ---- the descriptor calls, as the target makes them ---- */

/* Our descriptors are not the target's: to it they do not exist, as without the shim. */
static int is_ours(int fd)
{
    return ps_active && fd >= 0 && fds_is_ours(fd);
}

PS_API int close(int fd)
{
    PS_RESOLVE(close);
    if (ps_in_unwind && is_ours(fd)) {
        fds_mark(fd, 0); /* libunwind replacing its own pipe */
        return real_close(fd);
    }
    if (is_ours(fd)) {
        errno = EBADF;
        return -1;
    }
    return real_close(fd);
}

/* libunwind makes a pipe for itself (to validate memory) at the lowest free numbers: that
 * would shift every descriptor number the target gets, and once the target closes and reuses
 * those numbers libunwind would read and write the target's files. Its pipe is moved high and
 * becomes ours. */
static int (*real_pipe2)(int[2], int);
static int (*real_pipe)(int[2]);

static void adopt_pipe(int fds[2])
{
    for (int i = 0; i < 2; i++) {
        fds[i] = clock_move_fd_high(fds[i]);
        fds_mark(fds[i], 1);
    }
}

PS_API int pipe2(int fds[2], int flags)
{
    PS_RESOLVE(pipe2);
    int rc = real_pipe2(fds, flags);
    if (rc == 0 && ps_in_unwind)
        adopt_pipe(fds);
    return rc;
}

PS_API int pipe(int fds[2])
{
    PS_RESOLVE(pipe);
    int rc = real_pipe(fds);
    if (rc == 0 && ps_in_unwind)
        adopt_pipe(fds);
    return rc;
}

static int (*real_close_range)(unsigned, unsigned, int);

PS_API int close_range(unsigned first, unsigned last, int flags)
{
    PS_RESOLVE(close_range);
    if (!ps_active || !real_close_range || first > last)
        return real_close_range ? real_close_range(first, last, flags) : (errno = ENOSYS, -1);
    /* Close the gaps between our descriptors. */
    unsigned lo = first;
    int rc = 0;
    for (unsigned fd = first; fd <= last && fd < PS_FD_BITS; fd++) {
        if (!is_ours((int)fd))
            continue;
        if (fd > lo && real_close_range(lo, fd - 1, flags) != 0)
            rc = -1;
        lo = fd + 1;
    }
    if (lo <= last && lo >= first && real_close_range(lo, last, flags) != 0)
        rc = -1;
    return rc;
}

PS_API void closefrom(int lowfd)
{
    if (lowfd < 0)
        lowfd = 0;
    close_range((unsigned)lowfd, ~0u, 0);
}

/* The target wants a number we hold: give ours another one first. */
static void make_room(int fd)
{
    if (!is_ours(fd))
        return;
    int used = atomic_load(&ps_threads_used);
    for (int i = 0; i < used; i++) {
        struct ps_thread *t = &ps_threads[i];
        if (atomic_load(&t->state) == PS_T_LIVE && t->perf_fd == fd) {
            int old = clock_relocate_fd(t);
            if (old >= 0)
                return; /* dup2 itself closes the old number */
        }
    }
    leader_relocate_fd(fd);
}

static int (*real_dup2)(int, int);
static int (*real_dup3)(int, int, int);

PS_API int dup2(int oldfd, int newfd)
{
    PS_RESOLVE(dup2);
    if (is_ours(oldfd)) {
        errno = EBADF;
        return -1;
    }
    make_room(newfd);
    return real_dup2(oldfd, newfd);
}

PS_API int dup3(int oldfd, int newfd, int flags)
{
    PS_RESOLVE(dup3);
    if (is_ours(oldfd)) {
        errno = EBADF;
        return -1;
    }
    make_room(newfd);
    return real_dup3(oldfd, newfd, flags);
}
