/* fdcache.h: the small files the shim's threads read again and again (a run process's
 * /proc/<pid>/statm every counter period, a RAPL zone's energy_uj, /proc/self/stat), read
 * and a thread's comm and status, read through descriptors kept open above the target's numbers
 * (fdcache.c).
 * Opening a file takes the lowest free descriptor for a moment, and a target thread that opens a
 * file in that moment gets another number than it would without the shim (t_shim_review_fds'
 * fdnum: 4% of runs, where the first counter read 100 ms in met the target's open); a kept
 * descriptor is opened once. Never from a signal handler; never writes. */
#ifndef PERFSCOPE_FDCACHE_H
#define PERFSCOPE_FDCACHE_H

#include <sys/types.h>

/* The file at path from its start, at most size - 1 bytes, into buf (NUL-terminated): the
 * length, or -1 with errno (ENOENT, ESRCH: gone). A kept descriptor is used while the number is
 * still its file and, outside /proc, the path still names it (a /proc file is bound to its
 * process or thread: a failed read is tried once by path); else the file is opened again (and
 * kept while there is room). Only for files of one record (a read shorter than asked is the
 * end): /proc's one-line or one-block files, sysfs attributes, small regular files. A
 * descriptor not read for FDCACHE_IDLE_NS is closed at the next read of any (a process of the
 * run that is gone). */
ssize_t fdcache_read(const char *path, char *buf, size_t size);
/* Thread tid is gone (its registry slot handed back): its /proc/self/task/<tid>/ files go. */
void fdcache_forget_thread(pid_t tid);
/* The target is about to dup2 onto fd (fds.c): a kept descriptor with that number is forgotten
 * (the dup2 closes it). */
void fdcache_forget_fd(int fd);
/* In a fork child: the parent's descriptors (its /proc/self is not ours) are closed. */
void fdcache_forget_after_fork(void);

#endif
