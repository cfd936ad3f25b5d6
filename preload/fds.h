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

/* open(path, flags | O_CLOEXEC, mode), the descriptor moved at once above the target's numbers
 * (clock_move_fd_high): while a file of the shim's own threads is open, a descriptor the target
 * opens on another thread gets the number it would get without the shim. */
int fds_open_high(const char *path, int flags, int mode);

/* The run's files are opened by path for each write and closed again. Once a seccomp filter
 * may forbid opening files (the prctl/seccomp wrappers say so before it is installed), the ones
 * the shim still needs are opened once beforehand and kept (fds_keep, marked as ours); from then
 * on fds_run_open hands out the kept descriptor on the threads the filter covers, and -1
 * (EPERM) for a file that was not kept, so the shim never opens a file there again.
 * fds_run_open and fds_run_close are async-signal-safe. */
int fds_run_open(const char *path, int flags, int mode);
/* While on: the calling thread is the process's only one (a fork child's handler), so a file
 * fds_run_open opens and closes again before the target runs takes no number from anyone: it is
 * opened plainly, not moved above the target's numbers (four system calls fewer). */
void fds_alone(int on);
void fds_run_close(int fd);
/* The run folder's group and other write bits (perfscope makes a container's run folder 0777,
 * its users being any uid): a file the shim creates there gets them too, past the umask, so a
 * process of the run that became another user (an image's entrypoint dropping root with setpriv
 * or su-exec) still appends its lines to the files root made. Set once at start from the
 * folder's mode; fds_run_open applies it to what it creates, fds_run_share_fd to a file made
 * otherwise. Nothing when the folder grants neither. Async-signal-safe. */
void fds_run_share(unsigned folder_mode);
void fds_run_share_fd(int fd, int mode);
/* Where the run folder may be written by others, what opens its files must add (O_NOFOLLOW: a
 * link planted there must not lead the shim's writes elsewhere; O_NONBLOCK: a FIFO planted there
 * must not hold the target up), else 0; then fds_run_plain_file(fd): fd (blocking again) when it
 * is a plain file, else closed and -1 (EINVAL). fds_run_open and fds_keep do both for their
 * run-folder paths. */
int fds_run_shared_flags(void);
int fds_run_plain_file(int fd);
/* The C library's functions behind the descriptor wrappers, looked up now (interpose.c, before
 * a clone() whose child must not take the loader's lock). */
void fds_resolve_wrappers(void);
/* Whether the calling thread may open a file now (no filter covers it). */
int fds_may_open(void);
/* Opens path with flags (O_CLOEXEC added) and keeps it as the shim's; 0 or -1. */
int fds_keep(const char *path, int flags, int mode);
/* Closes and forgets the kept descriptor of path (a fork child's copy of its parent's file). */
void fds_unkeep(const char *path);
/* From now on no thread of the target opens a file; every_thread: nor the shim's own threads
 * (a filter synchronised onto every thread, or a fork child of a filtered thread), and the
 * opens they have begun are waited for (at most 2 s; -1 when one is still under way). */
int fds_seal(int every_thread);
/* On a shim thread, around work that opens files by other means than fds_run_open (the /proc
 * scan, counters, markers): 1 when it may run (fds_io_leave after it), 0 when a filter for every
 * thread is coming or in force and it must not. */
int fds_io_enter(void);
void fds_io_leave(void);
/* In a fork child: no shim thread is inside fds_io_enter (they were not copied; a count left
 * would hold a later seal for its whole wait). */
void fds_io_after_fork_child(void);
/* 0: no filter known; 1: on the target's threads; 2: on every thread. */
int fds_sealed(void);
/* The filter was refused after all: back to the level before (the kept files stay kept). */
void fds_unseal(int level);
/* Set on the shim's own threads (writer, watcher): a filter on the target's threads only does
 * not cover them. */
extern __thread int ps_shim_thread;

#endif
