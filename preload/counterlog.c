/* counterlog.c: counters.jsonl's lines on their way to the file. The leader's watcher reads the
 * counters every PERFSCOPE_COUNTER_MS and each line keeps the time and values of its own read;
 * the lines are appended together, in one write, every COUNTERLOG_WRITE_MS. Opening the file and
 * appending to it cost more than the read itself, at every period: in batches that is paid four
 * times a second instead of ten. The first line is written at once (the file exists from the
 * first read on), and a run killed by SIGKILL keeps all but its last quarter second of lines, as
 * of its samples (writer.c). The watcher writes what is left when it stops, and the way out of
 * _exit and fatal signals does too. After the first line the file's descriptor is kept
 * (fdheld.h: a batch does not take the lowest free number for a moment, four times a second);
 * the batch and that descriptor are guarded by a flag, never a lock, and the way out never
 * waits for it. */
#include "counterlog.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "fdheld.h"
#include "fds.h"
#include "log.h"
#include "markers.h"
#include "runfolder.h"

#define COUNTERLOG_WRITE_MS 250
#define COUNTERLOG_BYTES (32 * 1024)

static char batch[COUNTERLOG_BYTES + 1];
static size_t batch_len;
static uint64_t batch_first_ns; /* the read time of the oldest line kept */
static int written_once;        /* the file has its first line */
static _Atomic int busy;        /* the batch is being touched (the watcher or the way out) */
static char path[PATH_MAX];     /* made on the watcher: the way out may be on a small stack */
static struct fds_held out_held = FDS_HELD_NONE; /* counters.jsonl, once it has its first line */

/* Appends the batch to the file that has its first line; busy held. Async-signal-safe. One
 * write per batch of whole lines: a reader never sees half a line. */
static void append_batch(void)
{
    int fd = fds_held_fd(&out_held);
    if (fd >= 0) {
        if (fds_held_begin(&out_held, fd)) {
            if (write(fd, batch, batch_len) != (ssize_t)batch_len)
                ps_log_once(RUN_COUNTERS, "short write to %s: %s", path, strerror(errno));
            fds_held_end(&out_held);
            return;
        }
    }
    struct stat before;
    int keep = fds_may_open() && stat(path, &before) == 0; /* the file it must be */
    fd = fds_run_open(path, O_WRONLY | O_APPEND | O_CLOEXEC, 0);
    if (fd < 0) {
        ps_log_once(RUN_COUNTERS, "cannot append to %s: %s", path, strerror(errno));
        return;
    }
    int held = keep ? fds_hold(&out_held, fd, &before) : 0;
    if (held < 0) {
        ps_real_close(fd); /* our copy of a file that is not counters.jsonl */
        return;
    }
    if (write(fd, batch, batch_len) != (ssize_t)batch_len)
        ps_log_once(RUN_COUNTERS, "short write to %s: %s", path, strerror(errno));
    if (!held)
        fds_run_close(fd);
}

static void write_batch(void)
{
    if (!batch_len)
        return;
    batch[batch_len] = 0;
    if (written_once)
        append_batch();
    else
        markers_append_line(RUN_COUNTERS, batch); /* made whole with its first line (markers.c) */
    batch_len = 0;
    written_once = 1;
}

void counterlog_add(const char *line, uint64_t read_ns)
{
    size_t n = strlen(line);
    if (atomic_exchange(&busy, 1))
        return; /* the way out is writing the batch: the process is ending */
    if (!path[0])
        ps_path(path, sizeof path, RUN_COUNTERS);
    if (batch_len + n + 1 > COUNTERLOG_BYTES)
        write_batch();
    if (n + 1 > COUNTERLOG_BYTES) {
        /* A line bigger than the whole batch (hundreds of GPUs or pids): on its own. */
        char *one = NULL;
        if ((one = (char *)malloc(n + 2)) != NULL) {
            memcpy(one, line, n);
            one[n] = '\n';
            one[n + 1] = 0;
            markers_append_line(RUN_COUNTERS, one);
            free(one);
            written_once = 1;
        }
        atomic_store(&busy, 0);
        return;
    }
    if (!batch_len)
        batch_first_ns = read_ns;
    memcpy(batch + batch_len, line, n);
    batch[batch_len + n] = '\n';
    batch_len += n + 1;
    if (!written_once || read_ns - batch_first_ns >= (uint64_t)COUNTERLOG_WRITE_MS * 1000000ull)
        write_batch();
    atomic_store(&busy, 0);
}

void counterlog_flush(void)
{
    if (atomic_exchange(&busy, 1))
        return;
    write_batch();
    atomic_store(&busy, 0);
}

void counterlog_flush_signal_safe(void)
{
    if (!path[0] || atomic_exchange(&busy, 1))
        return; /* no line yet, or the watcher is inside the batch */
    if (batch_len) {
        int saved = errno;
        /* The file has its first line by now (written at once): a plain append. */
        int fd = fds_held_fd(&out_held);
        if (fd >= 0 && fds_held_begin(&out_held, fd)) {
            if (write(fd, batch, batch_len) < 0) { /* nothing to do on the way out */ }
            fds_held_end(&out_held);
        } else if ((fd = fds_run_open(path, O_WRONLY | O_APPEND | O_CLOEXEC, 0)) >= 0) {
            if (write(fd, batch, batch_len) < 0) { /* nothing to do on the way out */ }
            fds_run_close(fd);
        }
        batch_len = 0;
        errno = saved;
    }
    atomic_store(&busy, 0);
}

void counterlog_forget_fd(int fd)
{
    if (fd < 0 || fd != atomic_load(&out_held.fd))
        return;
    /* Not while a batch is written through it: the target's dup2 comes after (bounded wait:
     * 5 s, a write that hangs on a slow disk). */
    int got = 0;
    for (int i = 0; i < 25000 && !(got = !atomic_exchange(&busy, 1)); i++) {
        struct timespec ts = { 0, 200000 };
        nanosleep(&ts, NULL);
    }
    fds_held_forget_for_dup2(&out_held, fd);
    if (got)
        atomic_store(&busy, 0);
}

void counterlog_after_fork(void)
{
    fds_held_close(&out_held); /* our copy of the leader's file */
    batch_len = 0;
    written_once = 0;
    atomic_store(&busy, 0);
}
