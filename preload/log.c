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

static void log_v(const char *fmt, va_list ap)
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

void ps_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_v(fmt, ap);
    va_end(ap);
}

static pthread_mutex_t log_once_lock = PTHREAD_MUTEX_INITIALIZER;

void ps_log_once(const char *key, const char *fmt, ...)
{
    static char seen[256][48];
    static int nseen;
    pthread_mutex_lock(&log_once_lock);
    for (int i = 0; i < nseen; i++)
        if (strncmp(seen[i], key, sizeof seen[i] - 1) == 0) {
            pthread_mutex_unlock(&log_once_lock);
            return;
        }
    if (nseen == 256) { /* full: saying nothing beats saying it every time */
        pthread_mutex_unlock(&log_once_lock);
        return;
    }
    snprintf(seen[nseen++], sizeof seen[0], "%s", key);
    pthread_mutex_unlock(&log_once_lock);
    va_list ap;
    va_start(ap, fmt);
    log_v(fmt, ap);
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
