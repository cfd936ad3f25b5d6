/* shimopen.h: the shim's own descriptor allocations, announced to the target's number calls
 * (fdgate.h) from before the number is taken until the shim lets go of it.
 *
 * The calls the shim's code makes by name (open, fopen, opendir, eventfd, inotify_init1, and
 * sysconf, which reads /sys for the CPU count) are routed here by the linker (--wrap, Makefile:
 * the shim's objects only, never the target's calls), as are fclose and closedir; ps_real_close
 * (fds.c) and the move of a descriptor above the target's numbers let go of the low number.
 * What takes a number by other means (a perf event through syscall(), libunwind's pipe, zlib's
 * gzopen) brackets itself with shimopen_begin and shimopen_opened or shimopen_end. So a target's
 * close, dup2 or dup3 never meets a number the shim holds low: it waits for the shim to let go
 * (microseconds; never past FDGATE_HOLD_NS), and the shim takes no number while one is under way.
 *
 * Not held on a thread that is inside a target's number call (a handler interrupting it, or the
 * call's own bookkeeping), which would wait for itself. A vfork child's (an exec line written on
 * its way to exec) land in its parent's memory while the parent is suspended: at most a wait of
 * the parent's other threads' calls. */
#ifndef PERFSCOPE_SHIMOPEN_H
#define PERFSCOPE_SHIMOPEN_H

/* Announces one allocation about to be made on this thread; 1 when announced, else 0. */
int shimopen_begin(void);
/* The allocation made: fd (or -1) is the number it took, held until shimopen_released(fd);
 * -1 ends the announcement. Returns fd. A second descriptor of the same call (a pipe):
 * shimopen_also(fd). None of these, nor shimopen_end and shimopen_released, changes errno. */
int shimopen_opened(int begun, int fd);
void shimopen_also(int begun, int fd);
/* The allocation left nothing open (or what it opened is let go of by other means). */
void shimopen_end(int begun);
/* The shim closed fd (or moved it away): the announcement for it ends. */
void shimopen_released(int fd);
/* Whether this thread holds an announcement: its closes are the shim's own. */
int shimopen_holding(void);
/* On a shim thread about to sleep: nothing may stay announced across the sleep; any number still
 * held (a path that closed it unseen) is let go of and logged once. */
void shimopen_settle(void);

#endif
