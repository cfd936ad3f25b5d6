/* procs.c: procs.jsonl (procs.h): this process's start, exec and exit lines, and the run's
 * live pids as the file lists them, parsed again only when it changed. Lines are appended by
 * path, one write each; the fatal path's exit line is built without allocation or stdio. */
#include "procs.h"
#include "procline.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "config.h"
#include "fds.h"
#include "markers.h"
#include "meta.h"
#include "safefmt.h"
#include "shim.h"
#include "writer.h"
#include "runfolder.h"

static pthread_mutex_t listed_lock = PTHREAD_MUTEX_INITIALIZER; /* ps_run_pids' cache */

void procs_line(const char *event, const char *status)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return;
    cJSON_AddNumberToObject(o, "pid", (double)getpid());
    cJSON_AddNumberToObject(o, "ppid", (double)getppid());
    cJSON_AddStringToObject(o, "event", event);
    cJSON_AddNumberToObject(o, "t_ns", (double)ps_now_ns());
    if (status)
        cJSON_AddStringToObject(o, "status", status);
    if (strcmp(event, "start") != 0 && ps_cfg.hz > 0) {
        /* The image's own sampling figures, for the run's sums (docs/formats.md). */
        struct meta_image_figures f;
        meta_image_figures(&f);
        cJSON *s = cJSON_AddObjectToObject(o, "sampling");
        if (s) {
            cJSON_AddNumberToObject(s, "samples", (double)f.samples);
            cJSON_AddNumberToObject(s, "distinct_samples", (double)f.distinct_samples);
            cJSON_AddNumberToObject(s, "sampled_cpu_s", f.sampled_cpu_s);
            cJSON_AddNumberToObject(s, "shim_threads_cpu_s", f.shim_threads_cpu_s);
            cJSON_AddNumberToObject(s, "unsampled_cpu_s", f.unsampled_cpu_s);
        }
    }
    if (strcmp(event, "start") == 0) {
        char exe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n > 0) {
            exe[n] = 0;
            cJSON_AddStringToObject(o, "exe", exe);
        }
        if (writer_files_ok())
            cJSON_AddStringToObject(o, "samples", strrchr(ps_bin_path, '/') + 1);
    }
    markers_append_jsonl(RUN_PROCS, o);
    cJSON_Delete(o);
}

/* Made at start: the fatal path may run on a small alternate signal stack. */
static char procs_path[PATH_MAX];

/* The fatal-signal path's exit line: procs_line's fields in its order (the image's sampling
 * figures included), built by hand, no allocation. */
void procs_exit_line_signal_safe(const char *status)
{
    char line[512];
    struct safefmt f;
    safefmt_init(&f, line, sizeof line);
    safefmt_str(&f, "{\"pid\":");
    safefmt_i64(&f, (int64_t)getpid());
    safefmt_str(&f, ",\"ppid\":");
    safefmt_i64(&f, (int64_t)getppid());
    safefmt_str(&f, ",\"event\":\"exit\",\"t_ns\":");
    safefmt_u64(&f, ps_now_ns());
    safefmt_str(&f, ",\"status\":\"");
    safefmt_str(&f, status);
    safefmt_str(&f, "\"");
    if (ps_cfg.hz > 0) {
        struct meta_image_figures x;
        meta_image_figures(&x);
        safefmt_str(&f, ",\"sampling\":{\"samples\":");
        safefmt_u64(&f, x.samples);
        safefmt_str(&f, ",\"distinct_samples\":");
        safefmt_u64(&f, x.distinct_samples);
        safefmt_str(&f, ",\"sampled_cpu_s\":");
        safefmt_fixed(&f, x.sampled_cpu_s, 6);
        safefmt_str(&f, ",\"shim_threads_cpu_s\":");
        safefmt_fixed(&f, x.shim_threads_cpu_s, 6);
        safefmt_str(&f, ",\"unsampled_cpu_s\":");
        safefmt_fixed(&f, x.unsampled_cpu_s, 6);
        safefmt_str(&f, "}");
    }
    safefmt_str(&f, "}\n");
    if (f.overflow)
        return;
    int fd = fds_run_open(procs_path, O_WRONLY | O_APPEND | O_CLOEXEC, 0);
    if (fd >= 0) {
        if (write(fd, line, f.len) < 0) { /* nothing to do */ }
        fds_run_close(fd);
    }
}

const char *procs_path_of_run(void)
{
    return procs_path;
}

/* The run's processes as procs.jsonl lists them (started, not exited), parsed again only when
 * the file changed: the leader asks at every counter read. */
static pid_t listed[256];
static int nlisted;
static struct stat listed_st;

static void parse_procs(const char *path)
{
    nlisted = 0;
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    char line[8192];
    while (fgets(line, sizeof line, f)) {
        cJSON *o = cJSON_Parse(line);
        if (!o)
            continue;
        struct proc_line pl;
        if (procline_read(o, &pl) == 0) {
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
    fclose(f);
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
    char path[PATH_MAX];
    ps_path(path, sizeof path, RUN_PROCS);
    struct stat st;
    if (!fds_may_open() || stat(path, &st) != 0)
        return 0; /* under a seccomp filter: not known */
    pthread_mutex_lock(&listed_lock);
    if (st.st_size != listed_st.st_size || st.st_ino != listed_st.st_ino ||
        st.st_mtim.tv_sec != listed_st.st_mtim.tv_sec || st.st_mtim.tv_nsec != listed_st.st_mtim.tv_nsec) {
        parse_procs(path);
        listed_st = st;
    }
    int alive = 0;
    pid_t self = ps_pid; /* alive, no need to ask (the leader asks every counter period) */
    for (int i = 0; i < nlisted && alive < max; i++)
        if (listed[i] == self || kill(listed[i], 0) == 0 || errno == EPERM)
            pids[alive++] = listed[i];
    pthread_mutex_unlock(&listed_lock);
    return alive;
}

void procs_start(void)
{
    ps_path(procs_path, sizeof procs_path, RUN_PROCS);
}

/* A fork child has only the forking thread: the cache's lock another thread held is reset. */
void procs_after_fork(void)
{
    pthread_mutex_init(&listed_lock, NULL);
}
