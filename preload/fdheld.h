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

struct fds_held {
    _Atomic int fd; /* -1: none */
    unsigned long long dev, ino;
};
#define FDS_HELD_NONE { -1, 0, 0 }

/* Takes fd, just opened on path, over when it is above the target's numbers and not one fds.c
 * keeps (1); else leaves it to the caller (0). -1: the number is no longer the file at path (a
 * target's dup2 landed on it between the open and now): the caller must neither use nor close
 * it. It is marked as ours before the check, so a dup2 through the wrapper after the check goes
 * around it. */
int fds_hold(struct fds_held *h, int fd, const char *path);
/* The kept descriptor while it is still its file; -1 (and forgotten) otherwise. */
int fds_held_fd(struct fds_held *h);
/* Closes the kept descriptor while it is still its file, and forgets it. */
void fds_held_close(struct fds_held *h);
/* Forgets it without closing (the target's dup2 onto the number is about to close it). */
void fds_held_forget(struct fds_held *h);

#endif
