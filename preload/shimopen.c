/* shimopen.c: the shim's descriptor allocations announced while it holds the numbers
 * (shimopen.h), and the linker's --wrap targets that route its calls here. Each wrapper returns
 * exactly what the C library's call returned, errno included: nothing here after the call
 * touches errno (TLS and atomics only). Never allocates; the lists are the thread's own. */
#include "shimopen.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "clock.h"
#include "fdgate.h"
#include "fds.h"
#include "log.h"
#include "shim.h"

#define HELD_MAX 16
static __thread int held[HELD_MAX]; /* the low numbers this thread holds announced */
static __thread int nheld;
static __thread int units;          /* announcements of this thread's: in flight and held */

int shimopen_begin(void)
{
    /* Not where this thread is inside a target's number call, which would wait for its own
     * announcement. (A vfork child's announcements land in its parent's memory, held while the
     * parent is suspended: at most a wait of the parent's other threads' calls; no getpid here,
     * which every process would pay at each open.) */
    if (!ps_active || fdgate_in_target_call())
        return 0;
    fdgate_alloc_begin();
    units++;
    return 1;
}

void shimopen_end(int begun)
{
    if (!begun)
        return;
    units--;
    fdgate_alloc_end();
}

int shimopen_opened(int begun, int fd)
{
    if (!begun)
        return fd;
    if (fd < 0 || nheld == HELD_MAX)
        shimopen_end(1); /* nothing taken, or too many to follow: announced no longer */
    else
        held[nheld++] = fd;
    return fd;
}

void shimopen_also(int begun, int fd)
{
    if (!begun || fd < 0 || nheld == HELD_MAX)
        return;
    fdgate_alloc_begin(); /* one more unit, released with this number */
    units++;
    held[nheld++] = fd;
}

void shimopen_released(int fd)
{
    for (int i = nheld - 1; i >= 0; i--) {
        if (held[i] != fd)
            continue;
        held[i] = held[--nheld];
        shimopen_end(1);
        return;
    }
}

int shimopen_holding(void)
{
    return units > 0;
}

void shimopen_settle(void)
{
    if (nheld == 0)
        return;
    ps_log_once("shimopen", "a descriptor of the shim's (%d) was let go of unseen; announcement ended", held[0]);
    while (nheld > 0) {
        nheld--;
        shimopen_end(1);
    }
}

/* The C library's own, as the linker names them for a --wrap. */
int __real_open(const char *path, int flags, ...);
FILE *__real_fopen(const char *path, const char *mode);
int __real_eventfd(unsigned int initval, int flags);
int __real_inotify_init1(int flags);
long __real_sysconf(int name);
int __real_fclose(FILE *f);
int __real_closedir(DIR *d);

int __wrap_open(const char *path, int flags, ...);
FILE *__wrap_fopen(const char *path, const char *mode);
DIR *__wrap_opendir(const char *path);
int __wrap_eventfd(unsigned int initval, int flags);
int __wrap_inotify_init1(int flags);
long __wrap_sysconf(int name);
int __wrap_fclose(FILE *f);
int __wrap_closedir(DIR *d);

int __wrap_open(const char *path, int flags, ...)
{
    int mode = 0;
    if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) {
        va_list ap;
        va_start(ap, flags);
        mode = va_arg(ap, int);
        va_end(ap);
    }
    int begun = shimopen_begin();
    return shimopen_opened(begun, __real_open(path, flags, mode));
}

FILE *__wrap_fopen(const char *path, const char *mode)
{
    int begun = shimopen_begin();
    FILE *f = __real_fopen(path, mode);
    shimopen_opened(begun, f ? fileno(f) : -1);
    return f;
}

/* A directory is held open for as long as it is read (the leader's scan of /proc for busy
 * processes: a file read at each entry): its number is moved above the target's at once, so the
 * announcement lasts an open, not a scan. */
DIR *__wrap_opendir(const char *path)
{
    int begun = shimopen_begin();
    int fd = shimopen_opened(begun, __real_open(path, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC));
    if (fd < 0)
        return NULL;
    int high = clock_move_fd_high(fd); /* lets go of the low number */
    if (high < 0)
        return NULL; /* errno as the move left it */
    DIR *d = fdopendir(high);
    if (!d) {
        int saved = errno;
        ps_real_close(high);
        errno = saved;
    }
    return d;
}

int __wrap_eventfd(unsigned int initval, int flags)
{
    int begun = shimopen_begin();
    return shimopen_opened(begun, __real_eventfd(initval, flags));
}

int __wrap_inotify_init1(int flags)
{
    int begun = shimopen_begin();
    return shimopen_opened(begun, __real_inotify_init1(flags));
}

long __wrap_sysconf(int name)
{
    /* Only the CPU counts read a file (/sys/devices/system/cpu/online); the page size does not. */
    int reads = name == _SC_NPROCESSORS_ONLN || name == _SC_NPROCESSORS_CONF;
    int begun = reads ? shimopen_begin() : 0;
    long v = __real_sysconf(name);
    shimopen_end(begun);
    return v;
}

int __wrap_fclose(FILE *f)
{
    int fd = fileno(f);
    int rc = __real_fclose(f);
    shimopen_released(fd);
    return rc;
}

int __wrap_closedir(DIR *d)
{
    int fd = dirfd(d);
    int rc = __real_closedir(d);
    shimopen_released(fd);
    return rc;
}
