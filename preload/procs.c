/* procs.c: procs.jsonl (procs.h): this process's start, exec and exit lines, and the run's
 * live pids as the file lists them, read on from where the last read stopped. Lines are appended by
 * path, one write each; the fatal path's exit line is built without allocation or stdio. */
#include "procs.h"
#include "procline.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "config.h"
#include "fdheld.h"
#include "fds.h"
#include "leader.h"
#include "markers.h"
#include "meta.h"
#include "safefmt.h"
#include "shim.h"
#include "sigmask.h"
#include "writer.h"
#include "runfolder.h"

static pthread_mutex_t listed_lock = PTHREAD_MUTEX_INITIALIZER; /* ps_run_pids' cache */

/* Made at start: the fatal path may run on a small alternate signal stack. */
static char procs_path[PATH_MAX];

/* One line of procs.jsonl, built by hand without allocation (the fatal-signal path uses it
 * too, and a cJSON tree in a fork child writes to heap pages it shares with its parent: copies
 * of them). The fields in docs/formats.md's order; exe: the start line's executable, or NULL.
 * 0, or -1 when it did not fit. */
static int line_text(char *line, size_t size, size_t *len, const char *event, const char *status, const char *exe)
{
    struct safefmt f;
    safefmt_init(&f, line, size);
    safefmt_str(&f, "{\"pid\":");
    safefmt_i64(&f, (int64_t)ps_pid); /* every caller runs in ps_pid's own process (checked first) */
    safefmt_str(&f, ",\"ppid\":");
    safefmt_i64(&f, (int64_t)getppid());
    safefmt_str(&f, ",\"event\":");
    safefmt_json_str(&f, event);
    safefmt_str(&f, ",\"t_ns\":");
    safefmt_u64(&f, ps_now_ns());
    if (status) {
        safefmt_str(&f, ",\"status\":");
        safefmt_json_str(&f, status);
    }
    if (strcmp(event, "start") != 0 && ps_cfg.hz > 0) {
        /* The image's own sampling figures, for the run's sums (docs/formats.md). */
        struct meta_image_figures x;
        meta_image_figures(&x);
        safefmt_str(&f, ",\"sampling\":{\"samples\":");
        safefmt_u64(&f, x.samples);
        safefmt_str(&f, ",\"distinct_samples\":");
        safefmt_u64(&f, x.distinct_samples);
        safefmt_str(&f, ",\"samples_without_libunwind\":");
        safefmt_u64(&f, x.samples_without_libunwind);
        safefmt_str(&f, ",\"sampled_cpu_s\":");
        safefmt_fixed(&f, x.sampled_cpu_s, 6);
        safefmt_str(&f, ",\"shim_threads_cpu_s\":");
        safefmt_fixed(&f, x.shim_threads_cpu_s, 6);
        safefmt_str(&f, ",\"unsampled_cpu_s\":");
        safefmt_fixed(&f, x.unsampled_cpu_s, 6);
        safefmt_str(&f, "}");
    }
    if (exe) {
        safefmt_str(&f, ",\"exe\":");
        safefmt_json_str(&f, exe);
    }
    /* The name this image's sample file has if it takes samples (made at the first one). */
    if (strcmp(event, "start") == 0 && writer_files_ok()) {
        safefmt_str(&f, ",\"samples\":");
        safefmt_json_str(&f, strrchr(ps_bin_path, '/') + 1);
    }
    safefmt_str(&f, "}\n");
    *len = f.len;
    return f.overflow ? -1 : 0;
}

/* The image's executable, read once for its start line: a fork child runs the same file (only
 * an exec changes it, and an exec starts this image's statics anew), so its start line reuses
 * its parent's and reads no /proc link (docs/shim.md, "What a process pays"). */
static char image_exe[PATH_MAX];
static int image_exe_read; /* 1 read, -1 unreadable */

void procs_line(const char *event, const char *status)
{
    char line[PATH_MAX + 1024];
    const char *exe_p = NULL;
    if (strcmp(event, "start") == 0) {
        if (!image_exe_read) {
            ssize_t n = readlink("/proc/self/exe", image_exe, sizeof image_exe - 1);
            image_exe[n > 0 ? n : 0] = 0;
            image_exe_read = n > 0 ? 1 : -1;
        }
        if (image_exe_read > 0)
            exe_p = image_exe;
    }
    size_t len;
    if (line_text(line, sizeof line, &len, event, status, exe_p) == 0)
        markers_append_line(RUN_PROCS, line);
}

/* The fatal-signal path's exit line: the same text, written by one append (the file exists:
 * this process's start line is in it). */
void procs_exit_line_signal_safe(const char *status)
{
    char line[512];
    size_t len;
    if (line_text(line, sizeof line, &len, "exit", status, NULL) != 0)
        return;
    int fd = fds_run_open(procs_path, O_WRONLY | O_APPEND | O_CLOEXEC, 0);
    if (fd >= 0) {
        if (write(fd, line, len) < 0) { /* nothing to do */ }
        fds_run_close(fd);
    }
}

const char *procs_path_of_run(void)
{
    return procs_path;
}

/* The run's processes as procs.jsonl lists them (started, not exited). The leader asks at every
 * counter read, ten times a second, and a build or a shell loop appends four lines a process: the
 * file is read on from where the last call stopped (whole lines only), never again from the
 * start, through a kept descriptor whose fstat both checks it is still the file and says whether
 * it grew. Read again from the start only when it was truncated or replaced (a link count of 0:
 * removed or renamed over). */
static pid_t listed[256];
static int nlisted;
static struct fds_held listed_held = FDS_HELD_NONE;
static off_t listed_off;     /* the bytes of whole lines read */
static int listed_skipping;  /* inside a line longer than the buffer: up to its newline */
static unsigned long long listed_dev, listed_ino; /* the file listed_off is an offset in */

static void listed_reset(void)
{
    nlisted = 0;
    listed_off = 0;
    listed_skipping = 0;
}

static void listed_take(const char *line)
{
    cJSON *o = cJSON_Parse(line);
    struct proc_line pl;
    if (o && procline_read(o, &pl) == 0) {
        pid_t p = (pid_t)pl.pid;
        int at = -1;
        for (int i = 0; i < nlisted; i++)
            if (listed[i] == p)
                at = i;
        if (pl.event == PROC_EXIT) {
            if (at >= 0)
                listed[at] = listed[--nlisted];
        } else if (at < 0 && nlisted < (int)(sizeof listed / sizeof listed[0])) {
            listed[nlisted++] = p;
        }
    }
    cJSON_Delete(o);
}

/* The whole lines of fd (size bytes when looked at) past listed_off, in buffers of 16 KiB: a
 * line cut by a buffer's end is read again whole by the next; only a line still being written
 * at the end of the file waits for the next call. A line longer than the buffer (never one of
 * ours: a start line is at most PATH_MAX and a kilobyte) is skipped whole. held: fd is the kept
 * descriptor, each read bracketed (a target's dup2 onto it waits, fdheld.h). */
static void listed_read_on(int fd, off_t size, int held)
{
    static char buf[16384];
    while (listed_off < size) {
        if (held && !fds_held_begin(&listed_held, fd))
            return; /* forgotten for a target's dup2 meanwhile: the next call opens it again */
        ssize_t n = pread(fd, buf, sizeof buf - 1, listed_off);
        int err = errno;
        if (held)
            fds_held_end(&listed_held);
        if (n < 0 && err == EINTR)
            continue;
        if (n <= 0)
            return;
        buf[n] = 0;
        char *line = buf, *nl;
        while ((nl = memchr(line, '\n', (size_t)(buf + n - line))) != NULL) {
            *nl = 0;
            if (!listed_skipping)
                listed_take(line);
            listed_skipping = 0;
            line = nl + 1;
        }
        if (line == buf) {
            if (n < (ssize_t)sizeof buf - 1)
                return; /* the end of the file inside a line: still being written */
            listed_skipping = 1; /* no end in a full buffer: past it, up to the next newline */
            listed_off += n;
            continue;
        }
        listed_off += line - buf;
        if (line < buf + n && listed_off + (buf + n - line) >= size)
            return; /* a line still being written at the end of the file */
    }
}

/* procs.jsonl's descriptor with its fstat in *st; -1. *kept: whether it is the kept one (the
 * leader's, which asks ten times a second) or opened for this call only (another process's one
 * question: its run's id at start), to be closed after. */
static int listed_fd(struct stat *st, int *kept)
{
    int fd = fds_held_fd_stat(&listed_held, st); /* forgotten when not ours any more */
    *kept = 1;
    if (fd >= 0 && st->st_nlink > 0)
        return fd;
    if (fd >= 0) {
        fds_held_close(&listed_held); /* removed or renamed over: by path again, from the start */
        listed_reset();
    }
    *kept = 0;
    char path[PATH_MAX]; /* not procs_path: the run's id is decided before procs_start */
    ps_path(path, sizeof path, RUN_PROCS);
    struct stat before;
    if (stat(path, &before) != 0)
        return -1;
    fd = fds_run_open(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct fds_held probe = FDS_HELD_NONE;
    int held = leader_is_us() ? fds_hold(&probe, fd, &before) : 0;
    if (held < 0 || fstat(fd, st) != 0) {
        if (held > 0)
            fds_held_forget(&probe);
        ps_real_close(fd); /* not the file the path named */
        return -1;
    }
    if (held > 0) {
        listed_held = probe;
        *kept = 1;
    }
    return fd;
}

int procs_run_sampling(struct procs_sampling *out)
{
    memset(out, 0, sizeof *out);
    /* The run's own open (fds_run_open: never past a seccomp filter, never racing one), read
     * whole with read(): a kept descriptor handed back is never closed here. */
    int fd = fds_run_open(procs_path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct stat st;
    char *text = NULL;
    size_t n = 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && st.st_size < (64 << 20))
        text = malloc((size_t)st.st_size + 1);
    while (text && n < (size_t)st.st_size) {
        ssize_t k = read(fd, text + n, (size_t)st.st_size - n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        n += (size_t)k;
    }
    fds_run_close(fd);
    if (!text)
        return -1;
    text[n] = '\0';
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        cJSON *o = cJSON_Parse(line);
        struct proc_line pl;
        if (o && procline_read(o, &pl) == 0 && pl.have_figures) {
            out->images++;
            out->samples += pl.n_samples;
            out->distinct_samples += pl.distinct_samples;
            out->sampled_cpu_s += pl.sampled_cpu_s;
        }
        cJSON_Delete(o);
        line = nl ? nl + 1 : NULL;
    }
    free(text);
    return 0;
}

int ps_run_pids(pid_t *pids, int max)
{
    if (!fds_may_open())
        return 0; /* under a seccomp filter: not known */
    /* On a target's thread (a phase boundary through the markers API) no handler of the
     * target's may run mid-read: a dup2 from one onto the kept descriptor would wait for this
     * very read (fds_held_forget_for_dup2), as for the writer's drain. */
    sigset_t old;
    int masked = !ps_shim_thread;
    if (masked)
        sigmask_block_all(&old);
    pthread_mutex_lock(&listed_lock);
    struct stat st;
    int kept, alive = 0;
    int fd = listed_fd(&st, &kept);
    if (fd >= 0) {
        if ((unsigned long long)st.st_dev != listed_dev || (unsigned long long)st.st_ino != listed_ino) {
            listed_reset(); /* another file than the one read so far */
            listed_dev = (unsigned long long)st.st_dev;
            listed_ino = (unsigned long long)st.st_ino;
        }
        if (st.st_size < listed_off)
            listed_reset(); /* truncated */
        listed_read_on(fd, st.st_size, kept);
        if (!kept)
            fds_run_close(fd);
        pid_t self = ps_pid; /* alive, no need to ask (the leader asks every counter period) */
        for (int i = 0; i < nlisted && alive < max; i++)
            if (listed[i] == self || kill(listed[i], 0) == 0 || errno == EPERM)
                pids[alive++] = listed[i];
    }
    pthread_mutex_unlock(&listed_lock);
    if (masked)
        sigmask_restore(&old);
    return alive;
}

/* A target's dup2 onto the kept descriptor's number (fds.c): forgotten first, after a read
 * under way on it. */
void procs_forget_fd(int fd)
{
    if (fd >= 0 && fd == atomic_load(&listed_held.fd))
        fds_held_forget_for_dup2(&listed_held, fd);
}

void procs_start(void)
{
    ps_path(procs_path, sizeof procs_path, RUN_PROCS);
}

/* A fork child has only the forking thread: the cache's lock another thread held is reset. */
void procs_after_fork(void)
{
    pthread_mutex_init(&listed_lock, NULL);
    fds_held_close(&listed_held); /* the parent's copy: a child that leads one day reads anew */
    listed_reset();
}
