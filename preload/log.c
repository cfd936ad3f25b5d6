/* log.c: perfscope.log (log.h). Lines logged before the run folder is decided wait in memory;
 * afterwards each line is one append to <out>/perfscope.log, opened by path and closed again
 * (never a descriptor the target could close or reuse). Never writes to the target's stderr
 * except the one line saying the folder is unusable; never changes errno. */
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "fds.h"
#include "shim.h"
#include "runfolder.h"

static int out_ok;

/* Lines logged before the run folder is known wait here: the target's stderr gets at most
 * the one line saying the folder is unusable. */
static char early[8][256];
static int nearly, deciding = 1;

/* Whether perfscope.log already has a line whose text after its "perfscope[pid]: " prefix is
 * body (len bytes, ending in its newline): its first LOG_SCAN_MAX bytes are read. */
#define LOG_SCAN_MAX (1u << 20)

static int log_has(const char *body, size_t len)
{
    char path[PATH_MAX];
    ps_path(path, sizeof path, RUN_LOG);
    int fd = fds_run_open(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    char buf[8192]; /* lines are at most 1024 bytes (log_v_run) */
    size_t have = 0, scanned = 0;
    int found = 0;
    for (;;) {
        ssize_t r = read(fd, buf + have, sizeof buf - have);
        if (r <= 0)
            break;
        have += (size_t)r;
        /* Whole lines only: what follows the last newline waits for the next read. */
        char *end = memrchr(buf, '\n', have);
        size_t whole = end ? (size_t)(end - buf) + 1 : 0;
        for (char *ln = buf; ln < buf + whole && !found;) {
            char *nl = memchr(ln, '\n', (size_t)(buf + whole - ln));
            char *text = memmem(ln, (size_t)(nl - ln), "]: ", 3);
            found = text && (size_t)(nl + 1 - (text + 3)) == len && memcmp(text + 3, body, len) == 0;
            ln = nl + 1;
        }
        scanned += whole;
        if (found || scanned >= LOG_SCAN_MAX || (whole == 0 && have == sizeof buf))
            break; /* (a line longer than the buffer: not one of ours) */
        memmove(buf, buf + whole, have - whole);
        have -= whole;
    }
    fds_run_close(fd);
    return found;
}

static void log_v_run(int once_a_run, const char *fmt, va_list ap)
{
    char line[1024];
    int n = snprintf(line, sizeof line, "perfscope[%d]: ", (int)getpid());
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    if (m < 0)
        return;
    n += m;
    if (n > (int)sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    int saved = errno;
    if (deciding) {
        if (nearly < 8)
            snprintf(early[nearly++], sizeof early[0], "%.*s", n - 1, line);
        errno = saved;
        return;
    }
    if (out_ok) {
        int prefix = (int)strcspn(line, ":") + 2;
        if (once_a_run && log_has(line + prefix, (size_t)(n - prefix))) {
            errno = saved;
            return;
        }
        char path[PATH_MAX];
        ps_path(path, sizeof path, RUN_LOG);
        int fd = fds_run_open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd >= 0) {
            if (write(fd, line, (size_t)n) < 0) { /* nothing more to say */ }
            fds_run_close(fd);
        }
    } else {
        if (write(2, line, (size_t)n) < 0) { /* stderr gone: stay quiet */ }
    }
    errno = saved;
}

static void log_v(const char *fmt, va_list ap)
{
    log_v_run(0, fmt, ap);
}

void ps_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_v(fmt, ap);
    va_end(ap);
}

static pthread_mutex_t log_once_lock = PTHREAD_MUTEX_INITIALIZER;

/* Whether key is new to this process (and from now on seen). */
static int first_time(const char *key)
{
    static char seen[256][48];
    static int nseen;
    int first = 1;
    pthread_mutex_lock(&log_once_lock);
    for (int i = 0; i < nseen && first; i++)
        if (strncmp(seen[i], key, sizeof seen[i] - 1) == 0)
            first = 0;
    if (first && nseen == 256)
        first = 0; /* full: saying nothing beats saying it every time */
    else if (first)
        snprintf(seen[nseen++], sizeof seen[0], "%s", key);
    pthread_mutex_unlock(&log_once_lock);
    return first;
}

void ps_log_once(const char *key, const char *fmt, ...)
{
    if (!first_time(key))
        return;
    va_list ap;
    va_start(ap, fmt);
    log_v(fmt, ap);
    va_end(ap);
}

void ps_log_run_once(const char *key, const char *fmt, ...)
{
    if (!first_time(key))
        return;
    va_list ap;
    va_start(ap, fmt);
    log_v_run(1, fmt, ap);
    va_end(ap);
}


void log_start(int folder_ok)
{
    deciding = 0;
    if (!folder_ok)
        return;
    out_ok = 1;
    for (int i = 0; i < nearly; i++)
        ps_log("%s", early[i] + strcspn(early[i], ":") + 2);
}

/* A fork child has only the forking thread: a lock another thread held at the fork is reset,
 * or the child's first log line would wait forever. */
void log_after_fork(void)
{
    pthread_mutex_init(&log_once_lock, NULL);
}
