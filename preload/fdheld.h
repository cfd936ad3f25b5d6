/* fdheld.h: a descriptor the shim keeps open on a file it reads or writes again and again (the
 * sample file: writer.c; the /proc and sysfs files read every period: fdcache.c), so that it
 * does not take the lowest free number for a moment at each use, which a target thread opening
 * a file then would not get. Kept only above the target's numbers (clock_move_fd_high), marked
 * as ours (the target's close, close_range and dup2 go around it: fds.c), with the identity of
 * its file: one the target closed or replaced past the wrappers (a raw system call) is never
 * used again, nor closed (the number may be the target's then). Its owner serialises the calls
 * on one fds_held. Async-signal-safe (fstat, close). */
#ifndef PERFSCOPE_FDHELD_H
#define PERFSCOPE_FDHELD_H

#include <sys/stat.h>

struct fds_held {
    _Atomic int fd; /* -1: none */
    unsigned long long dev, ino;
    _Atomic int in_use; /* the number a write or read is under way on (fds_held_begin), or -1 */
};
#define FDS_HELD_NONE { -1, 0, 0, -1 }

/* Takes fd over when it is above the target's numbers, not one fds.c keeps, and the file that
 * before (a stat of its path taken before the open) names: 1; 0 when low or fds.c's own, fd
 * left to the caller to use and close as usual; -1 when fd is not that file (a target's dup2,
 * close and open between the open and the move left our copy a file of the target's, or the
 * path was replaced): the caller closes its copy and uses nothing. (Before the open, not
 * after: a /proc file of a thread or process reaped since has no path any more.) It is marked
 * as ours before the check. */
int fds_hold(struct fds_held *h, int fd, const struct stat *before);
/* The kept descriptor while it is still its file; -1 (and forgotten) otherwise. */
int fds_held_fd(struct fds_held *h);
/* The same with the file's fstat in *st (its size, its link count). */
int fds_held_fd_stat(struct fds_held *h, struct stat *st);
/* Around one system call on fd, got from fds_held_fd: 0 when it was forgotten meanwhile (do
 * not use it); fds_held_end after the call. */
int fds_held_begin(struct fds_held *h, int fd);
void fds_held_end(struct fds_held *h);
/* Closes the kept descriptor while it is still its file, and forgets it. */
void fds_held_close(struct fds_held *h);
/* Forgets it without closing. */
void fds_held_forget(struct fds_held *h);
/* The same before the target's dup2 onto fd: forgotten first, then a call under way on it
 * (begun before) is waited for, at most 5 s, so the dup2 never replaces it under the call. */
void fds_held_forget_for_dup2(struct fds_held *h, int fd);

#endif
