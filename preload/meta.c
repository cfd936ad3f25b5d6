/* meta.c: meta.json, written by the process that started the run when it starts and again
 * when it ends: what ran, where, with which configuration and clock, how busy the machine was
 * before, and how it ended. A leader killed with SIGKILL leaves "status": "running". The
 * fatal-signal path rewrites only the status, from a text rendered in advance: no allocation. */
#include "meta.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "clock.h"
#include "config.h"
#include "fds.h"
#include "interpose.h"
#include "machine.h"
#include "runid.h"
#include "sampler.h"
#include "shim.h"
#include "unsampled.h"
#include "writer.h"
#include "runfolder.h"

static char rendered[65536];   /* meta.json as last written, status last */
static size_t rendered_len;
static size_t status_at;       /* offset of the status value's opening quote */
static uint64_t t0_ns;
static cJSON *meta;
static char path[PATH_MAX], tmp[PATH_MAX]; /* meta.json and its temporary name */
static _Atomic uint64_t own_user_ns[META_OWN_THREADS], own_sys_ns[META_OWN_THREADS];

static uint64_t tv_ns(struct timeval tv)
{
    return (uint64_t)tv.tv_sec * 1000000000ull + (uint64_t)tv.tv_usec * 1000ull;
}

void meta_own_thread_cpu(int which)
{
    struct rusage ru;
    if (which < 0 || which >= META_OWN_THREADS || getrusage(RUSAGE_THREAD, &ru) != 0)
        return;
    atomic_store(&own_user_ns[which], tv_ns(ru.ru_utime));
    atomic_store(&own_sys_ns[which], tv_ns(ru.ru_stime));
}

static void add_file_line(cJSON *o, const char *key, const char *path, const char *prefix)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (prefix && strncmp(line, prefix, strlen(prefix)) != 0)
            continue;
        char *v = prefix ? strchr(line, ':') : line;
        if (!v)
            continue;
        if (prefix)
            v++;
        while (*v == ' ' || *v == '\t')
            v++;
        v[strcspn(v, "\n")] = 0;
        cJSON_AddStringToObject(o, key, v);
        break;
    }
    fclose(f);
}

static int note_build_id(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    char *out = data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
            const char *name = p + sizeof *n;
            const unsigned char *desc = (const unsigned char *)name + ((n->n_namesz + 3) & ~3u);
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && memcmp(name, "GNU", 4) == 0 && n->n_descsz <= 64) {
                for (unsigned j = 0; j < n->n_descsz; j++)
                    sprintf(out + 2 * j, "%02x", desc[j]);
                return 1;
            }
            p = (const char *)desc + ((n->n_descsz + 3) & ~3u);
        }
    }
    return 1; /* the first object is the executable: stop after it */
}

static void add_command(cJSON *m)
{
    cJSON *argv = cJSON_AddArrayToObject(m, "command");
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        char buf[8192];
        ssize_t n = read(fd, buf, sizeof buf - 1);
        ps_real_close(fd);
        for (ssize_t i = 0; n > 0 && i < n; i += (ssize_t)strlen(buf + i) + 1) {
            buf[n] = 0;
            cJSON_AddItemToArray(argv, cJSON_CreateString(buf + i));
        }
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        cJSON_AddStringToObject(m, "executable", exe);
    }
    char build_id[160] = "";
    ps_real_dl_iterate_phdr(note_build_id, build_id);
    if (build_id[0])
        cJSON_AddStringToObject(m, "build_id", build_id);
}

static void add_host(cJSON *m)
{
    cJSON *h = cJSON_AddObjectToObject(m, "host");
    struct utsname u;
    if (uname(&u) == 0) {
        cJSON_AddStringToObject(h, "name", u.nodename);
        cJSON_AddStringToObject(h, "kernel", u.release);
        cJSON_AddStringToObject(h, "machine", u.machine);
    }
    add_file_line(h, "cpu_model", "/proc/cpuinfo", "model name");
    cJSON_AddNumberToObject(h, "cores", (double)sysconf(_SC_NPROCESSORS_ONLN));
    cJSON_AddNumberToObject(h, "kernel_hz", ps_kernel_hz);
    cJSON_AddStringToObject(h, "kernel_hz_from", ps_kernel_hz_source);
}

static void add_machine_before(cJSON *m)
{
    struct machine_state st;
    machine_check(&st);
    cJSON *mb = machine_json(&st);
    if (mb)
        cJSON_AddItemToObject(m, "machine_before", mb);
}

static void add_config(cJSON *m)
{
    cJSON *c = cJSON_AddObjectToObject(m, "config");
    cJSON_AddStringToObject(c, "out", ps_cfg.out_dir);
    cJSON_AddNumberToObject(c, "hz", ps_cfg.hz);
    cJSON_AddStringToObject(c, "clock", ps_cfg.clock == PS_CLOCK_PERF ? "perf" : ps_cfg.clock == PS_CLOCK_TIMER ? "timer" : "auto");
    cJSON_AddStringToObject(c, "unwind", ps_cfg.unwind == PS_UNWIND_FP ? "fp" : "libunwind");
    cJSON_AddNumberToObject(c, "max_frames", ps_cfg.max_frames);
    cJSON_AddNumberToObject(c, "counter_ms", ps_cfg.counter_ms);
    cJSON_AddStringToObject(c, "markers", ps_cfg.markers);
    cJSON_AddStringToObject(c, "powercap_root", ps_cfg.powercap_root);
    cJSON_AddStringToObject(c, "nvml", ps_cfg.nvml_path);
    cJSON *s = cJSON_AddObjectToObject(m, "sampling");
    cJSON_AddStringToObject(s, "clock", ps_cfg.hz <= 0 ? "off" : ps_clock_in_use == PS_CLOCK_PERF ? "perf" : "timer");
    cJSON_AddStringToObject(s, "why", ps_cfg.hz <= 0 ? "PERFSCOPE_HZ=0" : ps_clock_reason);
    cJSON_AddNumberToObject(s, "hz_asked", ps_cfg.hz);
    if (ps_cfg.hz > 0 && sampler_installed())
        cJSON_AddStringToObject(s, "unwind", sampler_unwind_is_fp() ? "fp" : "libunwind");
    if (ps_cfg.hz > 0 && ps_clock_in_use == PS_CLOCK_PERF) {
        cJSON_AddStringToObject(s, "perf_delivery", clock_delivery_name());
        cJSON_AddStringToObject(s, "counts", "user CPU time (exclude_kernel)");
    } else if (ps_cfg.hz > 0) {
        cJSON_AddStringToObject(s, "counts", "user and system CPU time, on the scheduler tick");
    }
}

/* Renders meta with status last and writes it (temporary name, then rename). */
static void render_and_write(void)
{
    ps_path(path, sizeof path, RUN_META);
    ps_path(tmp, sizeof tmp, ".meta.json.tmp");
    char *text = cJSON_PrintUnformatted(meta);
    if (!text)
        return;
    size_t len = strlen(text);
    if (len + 2 < sizeof rendered) {
        memcpy(rendered, text, len);
        rendered[len++] = '\n';
        rendered_len = len;
        char *st = strstr(rendered, "\"status\":\"");
        status_at = st ? (size_t)(st - rendered) + 9 : 0;
    }
    cJSON_free(text);
    meta_rewrite_status(NULL);
}

int meta_written(void)
{
    return meta != NULL;
}

void meta_write_start(void)
{
    /* The run's clock baseline is when this process started, not when this thread got here. */
    uint64_t now = ps_now_ns();
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    t0_ns = ps_start_ns ? ps_start_ns : now;
    double wall_s = (double)wall.tv_sec + wall.tv_nsec / 1e9 - (double)(now - t0_ns) / 1e9;
    cJSON_Delete(meta);
    meta = cJSON_CreateObject();
    if (!meta)
        return;
    cJSON_AddStringToObject(meta, "schema", "perfscope-meta/1");
    cJSON_AddNumberToObject(meta, "pid", (double)getpid());
    cJSON_AddStringToObject(meta, "run_id", runid_get());
    add_command(meta);
    add_host(meta);
    cJSON_AddNumberToObject(meta, "t0_ns", (double)t0_ns);
    cJSON_AddNumberToObject(meta, "t0_wall_s", wall_s);
    add_config(meta);
    add_machine_before(meta);
    cJSON_AddStringToObject(meta, "status", "running");
    render_and_write();
}

void meta_write_exit(const char *status, double sampled_cpu_s)
{
    if (!meta)
        return;
    cJSON *s = cJSON_GetObjectItemCaseSensitive(meta, "sampling");
    /* The writer's and watcher's CPU time is the shim's (about 3 ms per second of wall time,
     * docs/shim.md): no sampler samples it, so the rates below are per second of the target's. */
    uint64_t own_user = 0, own_all = 0;
    for (int i = 0; i < META_OWN_THREADS; i++) {
        own_user += atomic_load(&own_user_ns[i]);
        own_all += atomic_load(&own_user_ns[i]) + atomic_load(&own_sys_ns[i]);
    }
    double own_sampled = (double)(ps_clock_in_use == PS_CLOCK_PERF && !ps_perf_counts_kernel ? own_user : own_all) / 1e9;
    sampled_cpu_s = sampled_cpu_s > own_sampled ? sampled_cpu_s - own_sampled : 0;
    if (s && ps_cfg.hz > 0) {
        uint64_t taken = atomic_load(&ps_samples_taken);
        uint64_t signals = atomic_load(&ps_signals_taken);
        cJSON_AddNumberToObject(s, "samples", (double)taken);
        cJSON_AddNumberToObject(s, "distinct_samples", (double)signals);
        cJSON_AddNumberToObject(s, "samples_without_libunwind", (double)atomic_load(&ps_samples_no_libunwind));
        cJSON_AddNumberToObject(s, "records_written", (double)writer_records());
        cJSON_AddNumberToObject(s, "sampled_cpu_s", sampled_cpu_s);
        cJSON_AddNumberToObject(s, "shim_threads_cpu_s", (double)own_all / 1e9);
        /* Delivered: signals the clock gave per CPU second (the tick timer: at most the tick
         * rate). Weighted: records written per CPU second, overruns included. */
        if (sampled_cpu_s > 0.05) {
            cJSON_AddNumberToObject(s, "hz_delivered", (double)signals / sampled_cpu_s);
            cJSON_AddNumberToObject(s, "hz_weighted", (double)taken / sampled_cpu_s);
        }
        cJSON_AddNumberToObject(s, "signals_chained", (double)atomic_load(&ps_signals_chained));
        double unsampled_s;
        int unsampled_threads;
        unsampled_totals(&unsampled_s, &unsampled_threads);
        cJSON_AddNumberToObject(s, "unsampled_cpu_s", unsampled_s);
        cJSON_AddNumberToObject(s, "unsampled_threads", unsampled_threads);
    }
    cJSON_AddNumberToObject(meta, "end_ns", (double)ps_now_ns());
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "status");
    cJSON_AddStringToObject(meta, "status", status);
    render_and_write();
}

/* Rewrites meta.json with a new status from the rendered text; async-signal-safe. NULL: as
 * rendered. */
void meta_rewrite_status(const char *status)
{
    if (!rendered_len)
        return;
    static char out[sizeof rendered + 128];
    size_t n = 0;
    if (status && status_at) {
        const char *close = memchr(rendered + status_at + 1, '"', rendered_len - status_at - 1);
        size_t slen = strlen(status);
        if (!close || status_at + 1 + slen + (rendered_len - (size_t)(close - rendered)) >= sizeof out)
            return;
        memcpy(out, rendered, status_at + 1);
        n = status_at + 1;
        memcpy(out + n, status, slen);
        n += slen;
        size_t rest = rendered_len - (size_t)(close - rendered);
        memcpy(out + n, close, rest);
        n += rest;
    } else {
        memcpy(out, rendered, rendered_len);
        n = rendered_len;
    }
    /* Paths made once, in render_and_write: this may run on a small alternate signal stack. */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    ssize_t w = write(fd, out, n);
    ps_real_close(fd);
    if (w == (ssize_t)n)
        rename(tmp, path);
}
