/* meta.c: meta.json, written by the process that started the run: at once when it starts (on
 * the target's thread, before anything else can end the process: every run folder has its
 * meta.json however briefly the run lived), completed by the watcher thread with the /proc scan
 * of the machine, and again when it ends: what ran, where, with which configuration and clock,
 * how busy the machine was before, and how it ended. A leader killed with SIGKILL leaves
 * "status": "running"; "end_unseen" says when the shim knows its end may pass unseen (a Go
 * program, a seccomp filter). The signal-safe way out rewrites the status and adds the exit
 * figures to a text rendered in advance: no allocation. Under a seccomp filter the file is
 * rewritten in place through a descriptor kept beforehand (fds.c), never renamed. */
#include "meta.h"
#include "procs.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
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
#include "counters/counters.h"
#include "fds.h"
#include "interpose.h"
#include "leader.h"
#include "machine.h"
#include "ring.h"
#include "runfolder.h"
#include "runid.h"
#include "safefmt.h"
#include "sampler.h"
#include "shim.h"
#include "unsampled.h"
#include "writer.h"

/* meta.json as last rendered, "sampling", "end_ns" (once known) and "status" last, for the
 * signal-safe way out. Two buffers: a render fills the one not in use, then flips `shown`. */
#define RENDERED_MAX 65536
static char rendered[2][RENDERED_MAX];
static size_t rendered_len[2];
static size_t status_key_at[2]; /* offset of `"status":"`; 0: the text cannot be rewritten */
static _Atomic int shown = -1;
static uint64_t t0_ns;
static cJSON *meta;
static int completed; /* the watcher's part (machine_before, cpu_model) is in */
static pthread_mutex_t doc_lock = PTHREAD_MUTEX_INITIALIZER; /* meta and the renders */
static char path[PATH_MAX], tmp[PATH_MAX]; /* meta.json and its temporary name */
/* The file itself: one writer at a time, the signal-safe path included (a bounded wait). */
static _Atomic int file_lock;
static _Atomic int in_place; /* rewritten in place (a seccomp filter): never renamed again */
static size_t file_len;      /* bytes in the file when written in place */
/* The status the run ended with, once an exit path said it: later writes keep it. */
static char final_status[48];
static _Atomic int final_set;

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

/* What the executable's notes say: its GNU build id, and whether Go built it (Go's own build
 * id note, name "Go", type 4: such a program ends with a raw exit_group). */
struct exe_notes {
    char build_id[160];
    int go;
};

static int note_build_id(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct exe_notes *notes = data;
    char *out = notes->build_id;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
            const char *name = p + sizeof *n;
            const unsigned char *desc = (const unsigned char *)name + ((n->n_namesz + 3) & ~3u);
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && memcmp(name, "GNU", 4) == 0 && n->n_descsz <= 64 &&
                !out[0]) {
                for (unsigned j = 0; j < n->n_descsz; j++)
                    sprintf(out + 2 * j, "%02x", desc[j]);
            }
            if (n->n_type == 4 && (n->n_namesz == 3 || n->n_namesz == 4) && memcmp(name, "Go", 3) == 0)
                notes->go = 1;
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
    struct exe_notes notes = { "", 0 };
    ps_real_dl_iterate_phdr(note_build_id, &notes);
    if (notes.build_id[0])
        cJSON_AddStringToObject(m, "build_id", notes.build_id);
    if (notes.go)
        cJSON_AddStringToObject(m, "end_unseen", "a Go program: it ends with a raw exit_group, which no wrapper sees");
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

static void add_config(cJSON *m)
{
    cJSON *c = cJSON_AddObjectToObject(m, "config");
    cJSON_AddStringToObject(c, "out", ps_cfg.out_dir);
    cJSON_AddNumberToObject(c, "hz", ps_cfg.hz);
    cJSON_AddStringToObject(c, "clock", ps_clock_names[ps_cfg.clock]);
    cJSON_AddStringToObject(c, "unwind", ps_unwind_names[ps_cfg.unwind]);
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
        cJSON_AddStringToObject(s, "unwind", sampler_unwind_name());
    if (ps_cfg.hz > 0 && ps_clock_in_use == PS_CLOCK_PERF) {
        cJSON_AddStringToObject(s, "perf_delivery", clock_delivery_name());
        cJSON_AddStringToObject(s, "counts", "user CPU time (exclude_kernel)");
    } else if (ps_cfg.hz > 0) {
        cJSON_AddStringToObject(s, "counts", "user and system CPU time, on the scheduler tick");
    }
}

/* ---- the figures at exit: one definition for both ways out ---- */

/* The writer's and watcher's CPU time is the shim's (about 3 ms per second of wall time,
 * docs/shim.md): no sampler samples it, so the rates are per second of the target's. */
static _Atomic uint64_t own_user_ns[META_OWN_THREADS], own_sys_ns[META_OWN_THREADS];
/* Of the threads of that kind that have ended (a writer stopped and started again: an exec that
 * failed, a call refused to a process of several threads). */
static _Atomic uint64_t ended_user_ns[META_OWN_THREADS], ended_sys_ns[META_OWN_THREADS];

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

void meta_own_thread_ended(int which)
{
    meta_own_thread_cpu(which);
    if (which < 0 || which >= META_OWN_THREADS)
        return;
    atomic_fetch_add(&ended_user_ns[which], atomic_exchange(&own_user_ns[which], 0));
    atomic_fetch_add(&ended_sys_ns[which], atomic_exchange(&own_sys_ns[which], 0));
}

void meta_own_thread_cpu_due(int which)
{
    static _Atomic uint64_t last_ns[META_OWN_THREADS];
    if (which < 0 || which >= META_OWN_THREADS)
        return;
    uint64_t now = ps_now_ns();
    if (now - atomic_load(&last_ns[which]) < 250000000ull)
        return;
    atomic_store(&last_ns[which], now);
    meta_own_thread_cpu(which);
}

struct exit_figures {
    uint64_t taken, signals, no_libunwind, records, chained, end_ns;
    double cpu_s;              /* sampled CPU time, the shim's own threads' left out */
    double shim_threads_cpu_s; /* the writer's and watcher's user + system time */
    uint64_t shim_wakeups;     /* the writer's and watcher's passes (each one wakeup) */
    double unsampled_cpu_s;    /* CPU time no sample stands for (unsampled.c) */
    int unsampled_threads;
    int rates; /* enough CPU time for the rates to mean something */
    double hz_delivered, hz_weighted;
};

/* The CPU time the clock in use samples: the perf clock counts user time only where the
 * kernel refuses more; the tick timer both. Async-signal-safe (getrusage is a system call). */
static double image_user_s0, image_sys_s0; /* meta_image_start's: the CPU before this image */

static double sampled_cpu_s(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    double user = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 - image_user_s0;
    double sys = (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6 - image_sys_s0;
    user = user > 0 ? user : 0;
    sys = sys > 0 ? sys : 0;
    return ps_clock_in_use == PS_CLOCK_PERF && !ps_perf_counts_kernel ? user : user + sys;
}

/* Async-signal-safe: atomics (the per-thread sample counters summed), writer_records,
 * getrusage and unsampled_totals' plain reads. */
static void exit_figures(struct exit_figures *f)
{
    threads_sample_totals(&f->taken, &f->signals, &f->no_libunwind);
    f->records = writer_records();
    f->chained = atomic_load(&ps_signals_chained);
    uint64_t own_user = 0, own_all = 0;
    for (int i = 0; i < META_OWN_THREADS; i++) {
        uint64_t user = atomic_load(&own_user_ns[i]) + atomic_load(&ended_user_ns[i]);
        own_user += user;
        own_all += user + atomic_load(&own_sys_ns[i]) + atomic_load(&ended_sys_ns[i]);
    }
    double own_sampled = (double)(ps_clock_in_use == PS_CLOCK_PERF && !ps_perf_counts_kernel ? own_user : own_all) / 1e9;
    double cpu = sampled_cpu_s();
    f->cpu_s = cpu > own_sampled ? cpu - own_sampled : 0;
    f->shim_threads_cpu_s = (double)own_all / 1e9;
    f->shim_wakeups = writer_pass_count() + leader_pass_count();
    unsampled_totals(&f->unsampled_cpu_s, &f->unsampled_threads);
    /* Delivered: signals the clock gave per CPU second (the tick timer: at most the tick
     * rate). Weighted: records written per CPU second, overruns included. */
    f->rates = f->cpu_s > 0.05;
    f->hz_delivered = f->rates ? (double)f->signals / f->cpu_s : 0;
    f->hz_weighted = f->rates ? (double)f->taken / f->cpu_s : 0;
    f->end_ns = ps_now_ns();
}

/* ---- the file ---- */

static int file_lock_for(int ms)
{
    uint64_t deadline = ps_now_ns() + (uint64_t)ms * 1000000ull;
    for (;;) {
        int expected = 0;
        if (atomic_compare_exchange_weak(&file_lock, &expected, 1))
            return 1;
        if (ms >= 0 && ps_now_ns() > deadline)
            return 0;
        struct timespec ts = { 0, 200000 };
        nanosleep(&ts, NULL);
    }
}

/* Writes the text as meta.json: under a temporary name, then renamed; in place (padded with
 * spaces to the length before, which JSON allows) once a seccomp filter may forbid the opens.
 * Async-signal-safe; from_signal: the wait for another writer is bounded. */
/* final: the file with the run's end in it (the exit path's, the signal-safe way out's). Once
 * one is written, no other render replaces it: the watcher's render (machine_before) may have
 * checked for the final status just before the way out set it, without the lock the way out
 * cannot take, and would put an end-less file over the last one ("exit 3" without end_ns or
 * the exit figures, t_shim_exits' quick case under load). Under the file lock. */
static int final_written;

static void write_file(const char *text, size_t n, int from_signal, int final)
{
    if (!n || !file_lock_for(from_signal ? 300 : -1))
        return;
    if (final_written && !final) {
        atomic_store(&file_lock, 0);
        return;
    }
    if (final)
        final_written = 1;
    if (atomic_load(&in_place)) {
        int fd = fds_run_open(path, O_WRONLY | O_CLOEXEC, 0);
        if (fd >= 0) {
            int ok = pwrite(fd, text, n - 1, 0) == (ssize_t)(n - 1);
            static const char spaces[64] = { [0 ... 63] = ' ' };
            size_t at = n - 1;
            while (ok && at + 1 < file_len) {
                size_t k = file_len - 1 - at < sizeof spaces ? file_len - 1 - at : sizeof spaces;
                ok = pwrite(fd, spaces, k, (off_t)at) == (ssize_t)k;
                at += k;
            }
            if (ok && pwrite(fd, "\n", 1, (off_t)at) == 1 && at + 1 > file_len)
                file_len = at + 1;
            fds_run_close(fd);
        }
    } else {
        /* Paths made once, in meta_write_start: this may run on a small alternate stack. */
        int fd = fds_run_open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd >= 0) {
            ssize_t w = write(fd, text, n);
            fds_run_close(fd);
            if (w == (ssize_t)n && rename(tmp, path) == 0)
                file_len = n;
        }
    }
    atomic_store(&file_lock, 0);
}

/* ---- renders ---- */

/* The last occurrence of a key in the text (the keys this file places last). */
static size_t last_key(const char *text, size_t len, const char *key)
{
    size_t k = strlen(key);
    for (size_t i = len >= k ? len - k + 1 : 0; i-- > 0;)
        if (memcmp(text + i, key, k) == 0)
            return i;
    return 0;
}

/* Renders meta (caller holds doc_lock) with "sampling", "end_ns" and "status" last, the status
 * the final one once known, and writes it. */
static void render_and_write(int final)
{
    cJSON *st = cJSON_DetachItemFromObjectCaseSensitive(meta, "status");
    cJSON *sampling = cJSON_DetachItemFromObjectCaseSensitive(meta, "sampling");
    cJSON *end = cJSON_DetachItemFromObjectCaseSensitive(meta, "end_ns");
    if (sampling)
        cJSON_AddItemToObject(meta, "sampling", sampling);
    if (end)
        cJSON_AddItemToObject(meta, "end_ns", end);
    cJSON_Delete(st);
    cJSON_AddStringToObject(meta, "status", atomic_load(&final_set) ? final_status : "running");
    char *text = cJSON_PrintUnformatted(meta);
    if (!text)
        return;
    size_t len = strlen(text);
    int next = atomic_load(&shown) == 0 ? 1 : 0;
    if (len + 2 < RENDERED_MAX) {
        memcpy(rendered[next], text, len);
        rendered[next][len++] = '\n';
        rendered_len[next] = len;
        size_t at = last_key(rendered[next], len, "\"status\":\"");
        /* The signal-safe way out splices into the sampling object just before: */
        status_key_at[next] = at > 2 && rendered[next][at - 1] == ',' && rendered[next][at - 2] == '}' &&
                                      sampling && !end ? at : 0;
        atomic_store(&shown, next);
        write_file(rendered[next], len, 0, final);
    }
    cJSON_free(text);
}

int meta_written(void)
{
    return meta != NULL;
}

/* At start, on the target's thread: everything but the /proc scan of the machine, written now. */
void meta_write_start(void)
{
    ps_path(path, sizeof path, RUN_META);
    ps_path(tmp, sizeof tmp, ".meta.json.tmp");
    /* The run's clock baseline is when this process started, not when this thread got here. */
    uint64_t now = ps_now_ns();
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    t0_ns = ps_start_ns ? ps_start_ns : now;
    double wall_s = (double)wall.tv_sec + wall.tv_nsec / 1e9 - (double)(now - t0_ns) / 1e9;
    pthread_mutex_lock(&doc_lock);
    cJSON_Delete(meta);
    completed = 0;
    meta = cJSON_CreateObject();
    if (meta) {
        cJSON_AddStringToObject(meta, "schema", "perfscope-meta/1");
        cJSON_AddNumberToObject(meta, "pid", (double)getpid());
        cJSON_AddStringToObject(meta, "run_id", runid_get());
        add_command(meta);
        add_host(meta);
        cJSON_AddNumberToObject(meta, "t0_ns", (double)t0_ns);
        cJSON_AddNumberToObject(meta, "t0_wall_s", wall_s);
        add_config(meta);
        render_and_write(0);
    }
    pthread_mutex_unlock(&doc_lock);
}

/* On the watcher thread, once: the machine as it was before the run (reads all of /proc). */
void meta_complete(void)
{
    pthread_mutex_lock(&doc_lock);
    int todo = meta && !completed;
    if (todo)
        completed = 1;
    pthread_mutex_unlock(&doc_lock);
    if (!todo)
        return;
    struct machine_state st;
    machine_check(&st); /* outside the lock: the exit path must not wait for the scan */
    cJSON *mb = machine_json(&st);
    pthread_mutex_lock(&doc_lock);
    /* Not once the way out has set the final status: the signal-safe way out (_exit, a fatal
     * signal) writes its own last file, with the exit figures, and a render here would replace
     * it without them (the scan takes well under a millisecond on a quiet machine: a process
     * that _exits at once meets it). */
    if (mb && meta && !atomic_load(&final_set) && !cJSON_GetObjectItemCaseSensitive(meta, "machine_before")) {
        cJSON_AddItemToObject(meta, "machine_before", mb);
        mb = NULL;
        render_and_write(0);
    }
    pthread_mutex_unlock(&doc_lock);
    cJSON_Delete(mb);
}

static void set_final(const char *status)
{
    if (atomic_load(&final_set))
        return;
    size_t n = strlen(status);
    if (n >= sizeof final_status)
        n = sizeof final_status - 1;
    memcpy(final_status, status, n);
    final_status[n] = 0;
    atomic_store(&final_set, 1);
}

/* "run": every process image's figures as procs.jsonl has them when the first process ends (its
 * own exit line is written just before), the same rule for the rate. */
static void add_run_sampling(cJSON *s)
{
    struct procs_sampling r;
    if (procs_run_sampling(&r) != 0 || !r.images)
        return;
    cJSON *o = cJSON_AddObjectToObject(s, "run");
    if (!o)
        return;
    cJSON_AddNumberToObject(o, "images", r.images);
    cJSON_AddNumberToObject(o, "samples", r.samples);
    cJSON_AddNumberToObject(o, "distinct_samples", r.distinct_samples);
    cJSON_AddNumberToObject(o, "sampled_cpu_s", r.sampled_cpu_s);
    if (r.sampled_cpu_s > 0.05) {
        cJSON_AddNumberToObject(o, "hz_delivered", r.distinct_samples / r.sampled_cpu_s);
        cJSON_AddNumberToObject(o, "hz_weighted", r.samples / r.sampled_cpu_s);
    }
}

/* What this process's counter reads cost (the leader's: it alone reads them), when it read any. */
static void counter_reads(cJSON *doc)
{
    struct counters_cost c;
    counters_cost(&c);
    cJSON_DeleteItemFromObjectCaseSensitive(doc, "counter_reads");
    if (c.reads == 0)
        return;
    cJSON *o = cJSON_AddObjectToObject(doc, "counter_reads");
    if (!o)
        return;
    cJSON_AddNumberToObject(o, "reads", (double)c.reads);
    cJSON_AddNumberToObject(o, "cpu_s", c.rapl_cpu_s + c.nvml_cpu_s + c.memory_cpu_s);
    cJSON_AddNumberToObject(o, "rapl_cpu_s", c.rapl_cpu_s);
    cJSON_AddNumberToObject(o, "nvml_cpu_s", c.nvml_cpu_s);
    cJSON_AddNumberToObject(o, "memory_cpu_s", c.memory_cpu_s);
}

void meta_write_exit(const char *status)
{
    pthread_mutex_lock(&doc_lock);
    if (!meta) {
        pthread_mutex_unlock(&doc_lock);
        return;
    }
    struct exit_figures f;
    exit_figures(&f);
    cJSON *s = cJSON_GetObjectItemCaseSensitive(meta, "sampling");
    if (s && ps_cfg.hz > 0) {
        cJSON_AddNumberToObject(s, "samples", (double)f.taken);
        cJSON_AddNumberToObject(s, "distinct_samples", (double)f.signals);
        cJSON_AddNumberToObject(s, "samples_without_libunwind", (double)f.no_libunwind);
        cJSON_AddNumberToObject(s, "records_written", (double)f.records);
        cJSON_AddNumberToObject(s, "sampled_cpu_s", f.cpu_s);
        cJSON_AddNumberToObject(s, "shim_threads_cpu_s", f.shim_threads_cpu_s);
        cJSON_AddNumberToObject(s, "shim_threads_wakeups", (double)f.shim_wakeups);
        if (f.rates) {
            cJSON_AddNumberToObject(s, "hz_delivered", f.hz_delivered);
            cJSON_AddNumberToObject(s, "hz_weighted", f.hz_weighted);
        }
        cJSON_AddNumberToObject(s, "signals_chained", (double)f.chained);
        cJSON_AddNumberToObject(s, "unsampled_cpu_s", f.unsampled_cpu_s);
        cJSON_AddNumberToObject(s, "unsampled_threads", f.unsampled_threads);
        add_run_sampling(s);
    }
    counter_reads(meta);
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "end_ns");
    cJSON_AddNumberToObject(meta, "end_ns", (double)f.end_ns);
    set_final(status);
    render_and_write(1);
    pthread_mutex_unlock(&doc_lock);
}

/* The signal-safe way out: the last render with the exit figures spliced into "sampling", then
 * "end_ns" and the status; no allocation, no stdio, no lock waited on without a bound. */
void meta_rewrite_status(const char *status)
{
    int k = atomic_load(&shown);
    if (k < 0)
        return;
    set_final(status);
    static char out[RENDERED_MAX + 1024];
    const char *r = rendered[k];
    size_t len = rendered_len[k], at = status_key_at[k];
    struct safefmt f;
    safefmt_init(&f, out, sizeof out);
    if (!at) {
        /* Not spliceable (an exit render is already in): the status alone. */
        size_t q = last_key(r, len, "\"status\":\"");
        const char *close = q ? memchr(r + q + 10, '"', len - q - 10) : NULL;
        if (!close)
            return;
        safefmt_mem(&f, r, q + 10);
        safefmt_str(&f, status);
        safefmt_mem(&f, close, len - (size_t)(close - r));
    } else {
        struct exit_figures x;
        exit_figures(&x);
        safefmt_mem(&f, r, at - 2); /* up to the sampling object's closing brace */
        if (ps_cfg.hz > 0) {
            safefmt_str(&f, ",\"samples\":");
            safefmt_u64(&f, x.taken);
            safefmt_str(&f, ",\"distinct_samples\":");
            safefmt_u64(&f, x.signals);
            safefmt_str(&f, ",\"samples_without_libunwind\":");
            safefmt_u64(&f, x.no_libunwind);
            safefmt_str(&f, ",\"records_written\":");
            safefmt_u64(&f, x.records);
            safefmt_str(&f, ",\"sampled_cpu_s\":");
            safefmt_fixed(&f, x.cpu_s, 6);
            safefmt_str(&f, ",\"shim_threads_cpu_s\":");
            safefmt_fixed(&f, x.shim_threads_cpu_s, 6);
            safefmt_str(&f, ",\"shim_threads_wakeups\":");
            safefmt_u64(&f, x.shim_wakeups);
            if (x.rates) {
                safefmt_str(&f, ",\"hz_delivered\":");
                safefmt_fixed(&f, x.hz_delivered, 3);
                safefmt_str(&f, ",\"hz_weighted\":");
                safefmt_fixed(&f, x.hz_weighted, 3);
            }
            safefmt_str(&f, ",\"signals_chained\":");
            safefmt_u64(&f, x.chained);
            safefmt_str(&f, ",\"unsampled_cpu_s\":");
            safefmt_fixed(&f, x.unsampled_cpu_s, 6);
            safefmt_str(&f, ",\"unsampled_threads\":");
            safefmt_u64(&f, (uint64_t)x.unsampled_threads);
        }
        safefmt_str(&f, "},\"end_ns\":");
        safefmt_u64(&f, x.end_ns);
        safefmt_str(&f, ",\"status\":\"");
        safefmt_str(&f, status);
        safefmt_str(&f, "\"}\n");
    }
    if (!f.overflow)
        write_file(out, f.len, 1, 1);
}

/* The end of this run may pass unseen (a seccomp filter or strict mode on one of its threads):
 * said in meta.json, so the report does not call a leader that never finished "killed". */
void meta_note_unwind(void)
{
    pthread_mutex_lock(&doc_lock);
    cJSON *s = meta ? cJSON_GetObjectItemCaseSensitive(meta, "sampling") : NULL;
    cJSON *u = s ? cJSON_GetObjectItemCaseSensitive(s, "unwind") : NULL;
    if (cJSON_IsString(u) && strcmp(u->valuestring, sampler_unwind_name()) != 0) {
        cJSON_ReplaceItemInObjectCaseSensitive(s, "unwind", cJSON_CreateString(sampler_unwind_name()));
        render_and_write(0);
    }
    pthread_mutex_unlock(&doc_lock);
}

void meta_note_end_unseen(const char *why)
{
    pthread_mutex_lock(&doc_lock);
    if (meta && !cJSON_GetObjectItemCaseSensitive(meta, "end_unseen")) {
        cJSON_AddStringToObject(meta, "end_unseen", why);
        render_and_write(0);
    }
    pthread_mutex_unlock(&doc_lock);
}

/* Before a seccomp filter that may forbid opening files: meta.json kept open, and from now on
 * rewritten in place. */
void meta_keep_for_filter(void)
{
    if (!meta || atomic_load(&in_place))
        return;
    if (!file_lock_for(-1))
        return;
    if (fds_keep(path, O_WRONLY, 0) == 0)
        atomic_store(&in_place, 1);
    atomic_store(&file_lock, 0);
}

/* In a fork child: the parent's meta.json is not the child's to write; a lock another thread
 * held is free again. */
void meta_after_fork(void)
{
    /* A fork child's CPU time starts at zero, and its shim threads are new. */
    image_user_s0 = image_sys_s0 = 0;
    for (int i = 0; i < META_OWN_THREADS; i++) {
        atomic_store(&own_user_ns[i], 0);
        atomic_store(&own_sys_ns[i], 0);
        atomic_store(&ended_user_ns[i], 0);
        atomic_store(&ended_sys_ns[i], 0);
    }
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    doc_lock = fresh;
    atomic_store(&file_lock, 0);
    final_written = 0;
}

/* ---- every image's figures (procs.jsonl) ---- */

void meta_image_start(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return;
    image_user_s0 = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
    image_sys_s0 = (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

void meta_image_figures(struct meta_image_figures *out)
{
    struct exit_figures f;
    exit_figures(&f);
    out->samples = f.taken;
    out->distinct_samples = f.signals;
    out->samples_without_libunwind = f.no_libunwind;
    out->sampled_cpu_s = f.cpu_s;
    out->shim_threads_cpu_s = f.shim_threads_cpu_s;
    out->unsampled_cpu_s = f.unsampled_cpu_s;
}
