/* fds.c: the shim's descriptors among the target's (fds.h). The few that must live (perf
 * events, the leader's lock, inotify watch and wake-up eventfd, libunwind's pipe) are marked
 * here, and to the target they do not exist: close on one is EBADF, close_range/closefrom close
 * around them, dup2/dup3 onto one first move ours away, and libunwind's pipe is moved high and
 * becomes ours. Never closes, reuses or writes a descriptor number the target holds; every
 * wrapper returns what the C library would have, with the same errno. The bitmap is read from
 * the signal handler: lock-free, no allocation. Also the run's files kept open once a seccomp
 * filter may forbid opening them (fds_run_open: the one way the shim opens a run file). */
#include "fds.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "counterlog.h"
#include "fdcache.h"
#include "fdgate.h"
#include "interpose.h"
#include "leader.h"
#include "procs.h"
#include "ring.h"
#include "sampler.h"
#include "shim.h"
#include "shimopen.h"
#include "writer.h"

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
    int rc = real_close(fd);
    shimopen_released(fd); /* errno left as the close set it */
    return rc;
}

/* ---- the run's files under a seccomp filter ---- */

#define KEPT_MAX 12
static struct {
    char path[PATH_MAX];
    _Atomic int fd;
} kept[KEPT_MAX];
static _Atomic int nkept;
static _Atomic int sealed; /* 0, 1 (the target's threads), 2 (every thread) */
/* Opens under way: a filter for every thread waits for them (the sealer sets the level first,
 * an opener counts itself first and then reads the level, so one of them always sees the
 * other). */
static _Atomic int opening;
static __thread int io_depth; /* a shim thread inside fds_io_enter */
__thread int ps_shim_thread;

int fds_sealed(void)
{
    return atomic_load(&sealed);
}

int fds_may_open(void)
{
    int s = atomic_load(&sealed);
    return s == 0 || (ps_shim_thread && (s == 1 || io_depth > 0));
}

int fds_io_enter(void)
{
    atomic_fetch_add(&opening, 1);
    if (atomic_load(&sealed) == 2) {
        atomic_fetch_sub(&opening, 1);
        return 0;
    }
    io_depth++;
    return 1;
}

void fds_io_leave(void)
{
    io_depth--;
    atomic_fetch_sub(&opening, 1);
}

void fds_io_after_fork_child(void)
{
    atomic_store(&opening, io_depth); /* the forking thread's own, if it forked inside one */
}

static int kept_fd(const char *path)
{
    int n = atomic_load(&nkept);
    for (int i = 0; i < n; i++)
        if (strcmp(kept[i].path, path) == 0)
            return atomic_load(&kept[i].fd);
    return -1;
}

int fds_open_high(const char *path, int flags, int mode)
{
    int fd = open(path, flags | O_CLOEXEC, mode);
    return fd >= 0 ? clock_move_fd_high(fd) : fd;
}

static int alone;

void fds_alone(int on)
{
    alone = on;
}

static unsigned share_bits; /* the run folder's group and other write bits */

void fds_run_share(unsigned folder_mode)
{
    share_bits = folder_mode & (S_IWGRP | S_IWOTH);
}

void fds_run_share_fd(int fd, int mode)
{
    if (!share_bits || fd < 0)
        return;
    int saved = errno;
    /* Only a plain file of this user's with one name: never what a link another user could
     * plant in a folder everyone may write leads to (the opens add O_NOFOLLOW there too). */
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && st.st_nlink <= 1 &&
        fchmod(fd, ((unsigned)mode & 07777) | share_bits) != 0) { /* then it stays as made */ }
    errno = saved;
}

int fds_run_shared_flags(void)
{
    return share_bits ? O_NOFOLLOW | O_NONBLOCK : 0;
}

int fds_run_plain_file(int fd)
{
    if (fd < 0 || !share_bits)
        return fd;
    struct stat st;
    int fl;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (fl = fcntl(fd, F_GETFL)) < 0 ||
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
        ps_real_close(fd);
        errno = EINVAL;
        return -1;
    }
    return fd;
}

static int run_open(const char *path, int flags, int mode)
{
    if (alone && fds_may_open())
        return open(path, flags | O_CLOEXEC, mode);
    atomic_fetch_add(&opening, 1);
    if (fds_may_open()) {
        /* Moved at once above the target's numbers: while a file of ours is open, a descriptor
         * the target opens on another thread must get the number it would get without us
         * (t_shim_review_fds' fdnum; the writer passes every 10 ms while a process is young). */
        int fd = fds_open_high(path, flags, mode);
        atomic_fetch_sub(&opening, 1);
        return fd;
    }
    atomic_fetch_sub(&opening, 1);
    int fd = kept_fd(path);
    if (fd < 0)
        errno = EPERM;
    return fd;
}

/* Whether path is in the run folder (not the markers file, which is the user's). */
static int in_run_folder(const char *path)
{
    size_t n = strlen(ps_cfg.out_dir);
    return n && strncmp(path, ps_cfg.out_dir, n) == 0 && path[n] == '/';
}

int fds_run_open(const char *path, int flags, int mode)
{
    if (!share_bits || !in_run_folder(path))
        return run_open(path, flags, mode);
    int fd = run_open(path, flags | fds_run_shared_flags(), mode);
    if (fd >= 0 && kept_fd(path) != fd)
        fd = fds_run_plain_file(fd);
    if (flags & O_CREAT)
        fds_run_share_fd(fd, mode);
    return fd;
}

void fds_run_close(int fd)
{
    if (fd < 0)
        return;
    int n = atomic_load(&nkept);
    for (int i = 0; i < n; i++)
        if (atomic_load(&kept[i].fd) == fd)
            return;
    ps_real_close(fd);
}

int fds_keep(const char *path, int flags, int mode)
{
    if (kept_fd(path) >= 0)
        return 0;
    int n = atomic_load(&nkept);
    if (n >= KEPT_MAX || strlen(path) >= sizeof kept[0].path)
        return -1;
    int shared = share_bits && in_run_folder(path);
    int fd = open(path, flags | O_CLOEXEC | (shared ? fds_run_shared_flags() : 0), mode);
    if (shared)
        fd = fds_run_plain_file(fd);
    if (fd < 0)
        return -1;
    fd = clock_move_fd_high(fd);
    if (fd < 0)
        return -1; /* a target's dup2 took the number before the move: ours is gone */
    fds_mark(fd, 1);
    strcpy(kept[n].path, path);
    atomic_store(&kept[n].fd, fd);
    atomic_store(&nkept, n + 1);
    return 0;
}

void fds_unkeep(const char *path)
{
    int n = atomic_load(&nkept);
    for (int i = 0; i < n; i++) {
        int fd = atomic_load(&kept[i].fd);
        if (fd < 0 || strcmp(kept[i].path, path) != 0)
            continue;
        atomic_store(&kept[i].fd, -1);
        fds_mark(fd, 0);
        ps_real_close(fd);
    }
}

int fds_seal(int every_thread)
{
    int want = every_thread ? 2 : 1, s = atomic_load(&sealed);
    while (s < want && !atomic_compare_exchange_weak(&sealed, &s, want))
        ;
    if (!every_thread)
        return 0;
    /* The filter will cover the shim's threads too: the opens they have begun end first. */
    for (int i = 0; i < 10000 && atomic_load(&opening) > 0; i++) {
        struct timespec ts = { 0, 200000 };
        nanosleep(&ts, NULL);
    }
    return atomic_load(&opening) > 0 ? -1 : 0;
}

void fds_unseal(int level)
{
    atomic_store(&sealed, level);
}

/* ---- the descriptor calls, as the target makes them ---- */

/* Around a target's call that frees or names a number (fdgate.h); 0 where the caller is the
 * shim's own code (its threads, or a thread holding a number of the shim's: a library the shim
 * uses closing its file), which the gate is not for. */
static int number_call_begin(void)
{
    if (ps_shim_thread || shimopen_holding())
        return 0;
    fdgate_target_begin();
    return 1;
}

static void number_call_end(int gated)
{
    if (gated)
        fdgate_target_end();
}

/* Our descriptors are not the target's: to it they do not exist, as without the shim. */
static int is_ours(int fd)
{
    /* Not in a vfork child: it shares our memory, marks included, but its descriptor table is
     * its own, and the numbers in it are its to use (getpid only once the mark says ours). */
    return ps_active && fd >= 0 && fds_is_ours(fd) && getpid() == ps_pid;
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
    if (!ps_active)
        return real_close(fd);
    /* The number freed may be about to be filled again (fdgate.h): no allocation of the
     * shim's meanwhile, and none takes it soon after. */
    int gated = number_call_begin();
    if (!gated)
        return ps_real_close(fd); /* the shim's own: its number let go of */
    /* (A cancellation point: a thread cancelled inside has its call uncounted as it ends,
     * fdgate_thread_exit.) */
    int rc = real_close(fd);
    if (rc == 0 || errno == EINTR) /* EINTR: Linux has freed the number all the same */
        fdgate_freed((unsigned)fd, (unsigned)fd);
    number_call_end(gated);
    return rc;
}

/* libunwind makes a pipe for itself (to validate memory) at the lowest free numbers: that
 * would shift every descriptor number the target gets, and once the target closes and reuses
 * those numbers libunwind would read and write the target's files. Its pipe is moved high and
 * becomes ours. */
static int (*real_pipe2)(int[2], int);
static int (*real_pipe)(int[2]);
static _Atomic int unw_pipe[2] = { -1, -1 }; /* its numbers, once moved */

/* 0, or -1 (EMFILE) when a target's dup2 took one end before it moved: the pipe is broken (a
 * write to it would raise SIGPIPE), so what is left of it is closed and libunwind told no. */
static int adopt_pipe(int fds[2], int cloexec)
{
    int moved[2];
    for (int i = 0; i < 2; i++) {
        moved[i] = cloexec ? clock_move_fd_high(fds[i]) : clock_move_fd_high_any(fds[i]);
        if (moved[i] >= 0)
            fds_mark(moved[i], 1);
    }
    /* Still one pipe: both ends a FIFO of the same inode (a target's dup2, close and open all
     * between the pipe and the move leave a copy of the target's file that compares as ours;
     * a write to a pipe whose reading end went raises SIGPIPE: r_fdrace). */
    struct stat s0, s1;
    if (moved[0] >= 0 && moved[1] >= 0 && fstat(moved[0], &s0) == 0 && fstat(moved[1], &s1) == 0 &&
        S_ISFIFO(s0.st_mode) && S_ISFIFO(s1.st_mode) && s0.st_ino == s1.st_ino && s0.st_dev == s1.st_dev) {
        fds[0] = moved[0];
        fds[1] = moved[1];
        atomic_store(&unw_pipe[0], moved[0]);
        atomic_store(&unw_pipe[1], moved[1]);
        return 0;
    }
    for (int i = 0; i < 2; i++) {
        if (moved[i] >= 0) {
            fds_mark(moved[i], 0);
            ps_real_close(moved[i]);
        }
        fds[i] = -1; /* the low numbers are the target's now: libunwind must not keep them */
    }
    errno = EMFILE;
    return -1;
}

/* libunwind's pipe: two numbers of the shim's, announced until moved (shimopen.h). */
static int unwind_pipe(int fds[2], int flags, int plain)
{
    /* One announcement over the whole adoption, the high numbers' marking and registering
     * included: a target's dup2 onto a high number between the move and unw_pipe's store found
     * it marked ours with no holder to move, replaced our pipe end and left the mark, and its
     * close of that number then failed with EBADF (r_dup2all, about 1 run in 30). */
    int whole = shimopen_begin();
    int begun = shimopen_begin();
    int rc = plain ? real_pipe(fds) : real_pipe2(fds, flags);
    shimopen_opened(begun, rc == 0 ? fds[0] : -1);
    if (rc == 0) {
        shimopen_also(begun, fds[1]);
        rc = adopt_pipe(fds, (flags & O_CLOEXEC) != 0); /* each low number let go of once moved */
    }
    shimopen_end(whole);
    return rc;
}

PS_API int pipe2(int fds[2], int flags)
{
    PS_RESOLVE(pipe2);
    if (ps_in_unwind)
        return unwind_pipe(fds, flags, 0);
    return real_pipe2(fds, flags);
}

PS_API int pipe(int fds[2])
{
    PS_RESOLVE(pipe);
    if (ps_in_unwind)
        return unwind_pipe(fds, 0, 1);
    return real_pipe(fds);
}

static int (*real_close_range)(unsigned, unsigned, int);

PS_API int close_range(unsigned first, unsigned last, int flags)
{
    PS_RESOLVE(close_range);
    if (!ps_active || !real_close_range || first > last)
        return real_close_range ? real_close_range(first, last, flags) : (errno = ENOSYS, -1);
    int gated = number_call_begin();
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
    if (gated && rc == 0 && !(flags & CLOSE_RANGE_CLOEXEC))
        fdgate_freed(first, last);
    number_call_end(gated);
    return rc;
}

PS_API void closefrom(int lowfd)
{
    if (lowfd < 0)
        lowfd = 0;
    close_range((unsigned)lowfd, ~0u, 0);
}

/* A file kept for a seccomp filter (fds_keep) on the number a target's dup2 takes: moved to
 * another number first (a dup needs no open, which the filter may forbid), else the run's
 * files would be written into the target's file that the dup2 puts there. */
static void kept_relocate_fd(int fd)
{
    int n = atomic_load(&nkept);
    for (int i = 0; i < n; i++) {
        if (atomic_load(&kept[i].fd) != fd)
            continue;
        int moved = fcntl(fd, F_DUPFD_CLOEXEC, fd + 1);
        fds_mark(fd, 0);
        if (moved >= 0)
            fds_mark(moved, 1);
        atomic_store(&kept[i].fd, moved); /* -1: that file is no longer written (EPERM) */
    }
}

/* The target wants a number we hold: give ours another one first. */
static void make_room(int fd, int oldfd)
{
    /* A number the shim is moving high right now (it took the lowest free one a moment ago):
     * the dup2 waits for the move (microseconds), then lands on a free number, not on ours. */
    for (int i = 0; i < 5000 && ps_active && clock_fd_in_transit(fd); i++) {
        struct timespec ts = { 0, 20000 };
        nanosleep(&ts, NULL);
    }
    if (!is_ours(fd))
        return;
    /* A dup2 that will fail (oldfd not open) closes nothing of ours. (A vfork child never
     * gets here: is_ours is false there.) */
    if (fcntl(oldfd, F_GETFD) < 0)
        return;
    /* libunwind's pipe: its numbers live inside libunwind, which cannot be told of a move. It
     * may not run again (else it reads, writes and closes the target's file there); the number
     * is the target's, the other end stays ours, unused. */
    for (int i = 0; i < 2; i++) {
        int expected = fd;
        if (atomic_compare_exchange_strong(&unw_pipe[i], &expected, -1)) {
            sampler_libunwind_off("the target's dup2 takes the number of libunwind's pipe");
            fds_mark(fd, 0);
            return;
        }
    }
    int used = atomic_load(&ps_threads_used);
    for (int i = 0; i < used; i++) {
        struct ps_thread *t = &ps_threads[i];
        if (atomic_load(&t->state) == PS_T_LIVE && t->perf_fd == fd) {
            int old = clock_relocate_fd(t);
            if (old >= 0)
                return; /* dup2 itself closes the old number */
        }
    }
    kept_relocate_fd(fd);
    leader_relocate_fd(fd);
    writer_forget_fd(fd);
    fdcache_forget_fd(fd);
    counterlog_forget_fd(fd);
    procs_forget_fd(fd);
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
    int gated = number_call_begin();
    make_room(newfd, oldfd);
    int rc = real_dup2(oldfd, newfd);
    number_call_end(gated);
    return rc;
}

PS_API int dup3(int oldfd, int newfd, int flags)
{
    PS_RESOLVE(dup3);
    if (is_ours(oldfd)) {
        errno = EBADF;
        return -1;
    }
    int gated = number_call_begin();
    if ((flags & ~O_CLOEXEC) == 0 && oldfd != newfd)
        make_room(newfd, oldfd); /* else dup3 fails: EINVAL */
    int rc = real_dup3(oldfd, newfd, flags);
    number_call_end(gated);
    return rc;
}

void fds_resolve_wrappers(void)
{
    PS_RESOLVE(close);
    PS_RESOLVE(close_range);
    PS_RESOLVE(dup2);
    PS_RESOLVE(dup3);
    PS_RESOLVE(pipe);
    PS_RESOLVE(pipe2);
}
