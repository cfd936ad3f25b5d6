/* fds.h: which descriptors are the shim's, and the descriptor calls that keep them out of the
 * target's way (fds.c). A descriptor the shim keeps open (perf events, the leader's lock, inotify
 * and wake-up descriptors, libunwind's pipe) is marked here and moved above the target's
 * numbers; to the target it does not exist. Nothing here may ever close or write into a
 * descriptor number that belongs to the target. fds_is_ours is async-signal-safe. */
#ifndef PERFSCOPE_FDS_H
#define PERFSCOPE_FDS_H

/* Marks (ours = 1) or unmarks a descriptor of the shim's. */
void fds_mark(int fd, int ours);
/* Whether fd is marked as the shim's (the handler asks it of a perf signal's si_fd). */
int fds_is_ours(int fd);
/* The C library's close, past the shim's wrapper: for the shim's own descriptors. */
int ps_real_close(int fd);

#endif
