/* counters.c: the counters module's entry points. Opens and closes the three sources (RAPL zones,
 * NVML GPUs, RssAnon) and adds their JSON under one lock, so the leader's periodic thread and its
 * phase-boundary reads never interleave. Must never abort or print; files are read through the
 * shim's kept descriptors (fdcache.h), never opened at a low number each period; anything
 * unreadable is logged once by the part that met it and left out. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "counters/counters.h"
#include "counters/parts.h"
#include "fdcache.h"
#include "log.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static _Atomic int active;   /* between counters_open and counters_close */

/* What the reads cost this process: the reading thread's CPU per source (counters_cost). An
 * NVML energy read can take milliseconds of CPU (docs/shim.md, "Counters on a GPU machine"). */
static _Atomic uint64_t cost_reads, cost_ns[3];
enum { COST_RAPL, COST_NVML, COST_MEMORY };

static uint64_t thread_cpu_ns(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Adds the CPU since *since to source k and moves *since on. */
static void charge(int k, uint64_t *since) {
    uint64_t now = thread_cpu_ns();
    if (now > *since) atomic_fetch_add(&cost_ns[k], now - *since);
    *since = now;
}

/* A fork taken while another thread held a lock must not leave the child's copy locked; the
 * child's reads are its own. */
static void child_after_fork(void) {
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    lock = fresh;
    log_lock = fresh;
    atomic_store(&cost_reads, 0);
    for (int k = 0; k < 3; k++) atomic_store(&cost_ns[k], 0);
}

static void register_atfork(void) {
    pthread_atfork(NULL, NULL, child_after_fork);
}

void counters_open(void) {
    pthread_once(&atfork_once, register_atfork);
    pthread_mutex_lock(&lock);
    rapl_close();
    rapl_open(ps_cfg.powercap_root);
    nvml_open(ps_cfg.nvml_path);
    active = 1;
    pthread_mutex_unlock(&lock);
}

void counters_add_json(cJSON *obj, const pid_t *pids, int npids) {
    if (!obj) return;
    if (!pids || npids < 0) npids = 0;
    pthread_mutex_lock(&lock);
    uint64_t t = thread_cpu_ns();
    if (active) {
        rapl_add_json(obj);
        charge(COST_RAPL, &t);
        nvml_add_json(obj, pids, npids);
        charge(COST_NVML, &t);
    } else {
        cJSON_AddArrayToObject(obj, "rapl");
        cJSON_AddArrayToObject(obj, "gpus");
    }
    mem_add_json(obj, pids, npids);
    charge(COST_MEMORY, &t);
    atomic_fetch_add(&cost_reads, 1);
    pthread_mutex_unlock(&lock);
}

void counters_cost(struct counters_cost *out) {
    out->reads = atomic_load(&cost_reads);
    out->rapl_cpu_s = (double)atomic_load(&cost_ns[COST_RAPL]) / 1e9;
    out->nvml_cpu_s = (double)atomic_load(&cost_ns[COST_NVML]) / 1e9;
    out->memory_cpu_s = (double)atomic_load(&cost_ns[COST_MEMORY]) / 1e9;
}

/* Called on the way out, possibly late in exit (after other libraries' destructors) or after a
 * fatal signal on the thread that holds the lock: so it never waits for the lock and never calls
 * into NVML. NVML stays initialised for the life of the process (nvml.c says why). */
void counters_close(void) {
    active = 0;
    if (pthread_mutex_trylock(&lock) != 0) return;
    rapl_close();
    pthread_mutex_unlock(&lock);
}

int counters_pid_seen_before(const pid_t *pids, int i) {
    for (int j = 0; j < i; j++)
        if (pids[j] == pids[i]) return 1;
    return 0;
}

ssize_t counters_read_small(const char *path, char *buf, size_t size, const char **op) {
    *op = "read";
    ssize_t n = fdcache_read(path, buf, size);   /* a kept descriptor: no low number taken */
    if (n < 0) return -1;
    size_t len = (size_t)n;
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' ')) len--;
    buf[len] = '\0';
    return (ssize_t)len;
}

int counters_sys_close(int fd) {
    return (int)syscall(SYS_close, fd);
}

/* Called under the counters' lock (nvml_open and its failures, from counters_open). */
int counters_sys_dlclose(void *handle) {
    static int (*real_dlclose)(void *);
    if (!real_dlclose) *(void **)&real_dlclose = dlsym(RTLD_NEXT, "dlclose");
    return real_dlclose ? real_dlclose(handle) : -1;
}

void counters_errtext(char *buf, size_t size, const char *what, int err) {
    char tmp[128];
    snprintf(buf, size, "%s: %s", what, strerror_r(err, tmp, sizeof tmp));
}

void counters_log_once(const char *key, const char *fmt, ...) {
    static char seen[128][64];
    static int nseen;
    int fresh = 1;
    pthread_mutex_lock(&log_lock);
    for (int i = 0; i < nseen && fresh; i++)
        if (strncmp(seen[i], key, sizeof seen[i]) == 0) fresh = 0;
    if (fresh && nseen < (int)(sizeof seen / sizeof seen[0]))
        snprintf(seen[nseen++], sizeof seen[0], "%s", key);
    else
        fresh = 0;
    pthread_mutex_unlock(&log_lock);
    if (!fresh) return;
    char line[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    ps_log("%s", line);
}
