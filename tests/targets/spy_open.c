/* spy_open.so: preloaded before the shim, it sees the shim's calls to open, open64, openat,
 * openat64, fopen and fopen64 (the shim calls them through the C library, as any library does)
 * and, for every call made on a thread other than the main one, appends "<CLOCK_MONOTONIC ns>
 * <path>" to the file $SPY_OPEN_OUT. A test tool: it never changes what the call does, only
 * writes through a descriptor of its own (moved to 1000, above the shim's and the target's). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int out_fd = -1;

__attribute__((constructor)) static void spy_start(void)
{
    const char *path = getenv("SPY_OPEN_OUT");
    if (!path)
        return;
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    out_fd = fcntl(fd, F_DUPFD_CLOEXEC, 1000);
    syscall(SYS_close, fd);
}

static void note(const char *path)
{
    if (out_fd < 0 || syscall(SYS_gettid) == getpid())
        return;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    char line[600];
    int n = snprintf(line, sizeof line, "%llu %s\n", (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec,
                     path ? path : "(null)");
    if (n > (int)sizeof line - 1)
        n = (int)sizeof line - 1;
    if (syscall(SYS_write, out_fd, line, (size_t)n) < 0) { /* a test tool: nothing to do */ }
}

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);
typedef FILE *(*fopen_fn)(const char *, const char *);
#define NEXT(name, type) static type real_##name; if (!real_##name) real_##name = (type)dlsym(RTLD_NEXT, #name)

int open(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    int mode = va_arg(ap, int);
    va_end(ap);
    NEXT(open, open_fn);
    note(path);
    return real_open(path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    int mode = va_arg(ap, int);
    va_end(ap);
    NEXT(open64, open_fn);
    note(path);
    return real_open64(path, flags, mode);
}

int openat(int dir, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    int mode = va_arg(ap, int);
    va_end(ap);
    NEXT(openat, openat_fn);
    note(path);
    return real_openat(dir, path, flags, mode);
}

int openat64(int dir, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    int mode = va_arg(ap, int);
    va_end(ap);
    NEXT(openat64, openat_fn);
    note(path);
    return real_openat64(dir, path, flags, mode);
}

FILE *fopen(const char *path, const char *mode)
{
    NEXT(fopen, fopen_fn);
    note(path);
    return real_fopen(path, mode);
}

FILE *fopen64(const char *path, const char *mode)
{
    NEXT(fopen64, fopen_fn);
    note(path);
    return real_fopen64(path, mode);
}
