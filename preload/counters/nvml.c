/* nvml.c: GPU counters through NVML, loaded with dlopen(ps_cfg.nvml_path) so the shim neither
 * links nor needs it: per device the energy counter (mJ), power (mW), device memory used and the
 * memory of the run's own processes (usedGpuMemory summed over the pids given). Every symbol is
 * looked up by dlsym and any may be missing. Must never abort, print, call NVML before a
 * successful nvmlInit, or report a value NVML did not give: such a field is left out and the
 * reason logged once. NVML is loaded and initialised once per process and never shut down:
 * counters_close may run late in exit, after NVML's own destructors. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "counters/parts.h"
#include "log.h"
#include "shimload.h"

/* NVML's own types and values (nvml.h), declared here so no header is needed. */
typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct {
    unsigned long long total, free, used;               /* bytes */
} nvmlMemory_t;
typedef struct {                                          /* nvmlProcessInfo_t (v2 and v3) */
    unsigned int pid;
    unsigned long long usedGpuMemory;                     /* bytes */
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlProcessInfo_t;

#define NVML_SUCCESS 0
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_VALUE_NOT_AVAILABLE (~0ULL)
#define NOT_AVAILABLE (-1)  /* ours, not NVML's: a pid of ours has no usedGpuMemory */

#define MAX_GPUS 64
#define MAX_PROCS 65536
#define MIB (1024.0 * 1024.0)

static struct {
    void *lib;
    nvmlReturn_t (*init)(void);
    nvmlReturn_t (*shutdown)(void);
    nvmlReturn_t (*count)(unsigned int *);
    nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t *);
    const char *(*errstr)(nvmlReturn_t);
    nvmlReturn_t (*energy)(nvmlDevice_t, unsigned long long *);
    nvmlReturn_t (*power)(nvmlDevice_t, unsigned int *);
    nvmlReturn_t (*meminfo)(nvmlDevice_t, nvmlMemory_t *);
    nvmlReturn_t (*procs)(nvmlDevice_t, unsigned int *, nvmlProcessInfo_t *);
} nv;

static nvmlDevice_t devs[MAX_GPUS];
static unsigned int devidx[MAX_GPUS];
static int ngpus;
static nvmlProcessInfo_t *procbuf;    /* grown only when NVML says it is too small */
static unsigned int proccap;

static void *sym2(const char *a, const char *b) {
    void *p = dlsym(nv.lib, a);
    if (!p && b) p = dlsym(nv.lib, b);
    return p;
}

static const char *why(nvmlReturn_t r) {
    const char *s = nv.errstr ? nv.errstr(r) : NULL;
    return s ? s : "NVML error";
}

static void missing(void *fn, const char *name, const char *what) {
    char key[96];
    snprintf(key, sizeof key, "nvml.sym.%.30s", what);
    if (!fn)
        ps_log_run_once(key, "counters: NVML library %s has no %s: GPU %s not reported",
                        ps_cfg.nvml_path, name, what);
}

static char loaded_path[PATH_MAX];

static void nvml_close(void);

void nvml_open(const char *path) {
    if (!path) path = "";
    if (nv.lib && strcmp(path, loaded_path) == 0) return;   /* up already: reused as it is */
    nvml_close();
    if (!*path) return;                                 /* dlopen("") would be the program */
    snprintf(loaded_path, sizeof loaded_path, "%s", path);
    dlerror();
    nv.lib = shimload_open(path, RTLD_NOW | RTLD_LOCAL); /* apart from the target's dup2s (shimload.h) */
    if (!nv.lib) {
        const char *e = dlerror();
        ps_log_run_once("nvml.open", "counters: NVML not loaded (%s): %s; no GPU counters", path,
                    e ? e : "unknown error");
        return;
    }
    nv.init = sym2("nvmlInit_v2", "nvmlInit");
    nv.shutdown = sym2("nvmlShutdown", NULL);
    nv.count = sym2("nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
    nv.handle = sym2("nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
    nv.errstr = sym2("nvmlErrorString", NULL);
    if (!nv.init || !nv.count || !nv.handle) {
        ps_log_run_once("nvml.syms", "counters: %s lacks nvmlInit/nvmlDeviceGetCount/"
                    "nvmlDeviceGetHandleByIndex; no GPU counters", path);
        nvml_close();
        return;
    }
    nvmlReturn_t r = nv.init();
    if (r != NVML_SUCCESS) {
        ps_log_run_once("nvml.init", "counters: nvmlInit failed: %s (%d); no GPU counters", why(r),
                    r);
        nv.shutdown = NULL;   /* not initialised: nothing to shut down */
        nvml_close();
        return;
    }
    nv.energy = sym2("nvmlDeviceGetTotalEnergyConsumption", NULL);
    nv.power = sym2("nvmlDeviceGetPowerUsage", NULL);
    nv.meminfo = sym2("nvmlDeviceGetMemoryInfo", NULL);
    nv.procs = sym2("nvmlDeviceGetComputeRunningProcesses_v3",
                    "nvmlDeviceGetComputeRunningProcesses_v2");
    missing((void *)nv.energy, "nvmlDeviceGetTotalEnergyConsumption", "energy");
    missing((void *)nv.power, "nvmlDeviceGetPowerUsage", "power");
    missing((void *)nv.meminfo, "nvmlDeviceGetMemoryInfo", "memory used");
    missing((void *)nv.procs, "nvmlDeviceGetComputeRunningProcesses_v3", "per-process memory");

    unsigned int n = 0;
    r = nv.count(&n);
    if (r != NVML_SUCCESS) {
        ps_log_run_once("nvml.count", "counters: nvmlDeviceGetCount failed: %s (%d); no GPU counters",
                    why(r), r);
        n = 0;
    }
    if (n > MAX_GPUS) {
        ps_log_run_once("nvml.many", "counters: NVML lists %u GPUs; only the first %d are read", n,
                    MAX_GPUS);
        n = MAX_GPUS;
    }
    for (unsigned int i = 0; i < n; i++) {
        r = nv.handle(i, &devs[ngpus]);
        if (r != NVML_SUCCESS) {
            char key[32];
            snprintf(key, sizeof key, "nvml.handle.%u", i);
            counters_log_once(key, "counters: NVML GPU %u: no handle: %s (%d); left out", i,
                              why(r), r);
            continue;
        }
        devidx[ngpus++] = i;
    }
    if (nv.procs) {
        procbuf = calloc(64, sizeof *procbuf);
        proccap = procbuf ? 64 : 0;
    }
}

/* Only when the library asked for changes (counters_open with another path): a library that
 * is up stays up until the process ends, because counters_close runs late in exit, after NVML's
 * own destructors may have run, where calling nvmlShutdown or dlclose is not safe. */
static void nvml_close(void) {
    if (nv.lib) {
        if (nv.shutdown) nv.shutdown();
        counters_sys_dlclose(nv.lib);
    }
    memset(&nv, 0, sizeof nv);
    ngpus = 0;
    loaded_path[0] = '\0';
    free(procbuf);
    procbuf = NULL;
    proccap = 0;
}

static void log_fail(const char *key, const char *what, unsigned int gpu, nvmlReturn_t r) {
    char k[48];
    snprintf(k, sizeof k, "nvml.%s.%u", key, gpu);
    counters_log_once(k, "counters: NVML GPU %u: %s not read: %s (%d)", gpu, what, why(r), r);
}

static int wanted(unsigned int pid, const pid_t *pids, int npids) {
    for (int i = 0; i < npids; i++)
        if ((unsigned int)pids[i] == pid) return 1;
    return 0;
}

/* Memory of the given pids on one device, in bytes; NVML's return code. A pid of ours whose
 * usedGpuMemory NVML cannot give makes the whole sum untrustworthy: NOT_AVAILABLE then. */
static nvmlReturn_t run_mem(nvmlDevice_t d, unsigned int gpu, const pid_t *pids, int npids,
                            unsigned long long *bytes) {
    nvmlReturn_t r = NVML_ERROR_INSUFFICIENT_SIZE;
    unsigned int n = 0;
    for (int tries = 0; tries < 4 && r == NVML_ERROR_INSUFFICIENT_SIZE; tries++) {
        n = proccap;
        r = nv.procs(d, &n, procbuf);
        if (r == NVML_ERROR_INSUFFICIENT_SIZE) {
            unsigned int want = n + 16;
            if (n <= proccap) want = proccap * 2;
            if (want < 64) want = 64;
            if (want > MAX_PROCS) break;
            nvmlProcessInfo_t *p = realloc(procbuf, want * sizeof *p);
            if (!p) break;
            procbuf = p;
            proccap = want;
        }
    }
    if (r != NVML_SUCCESS) return r;
    if (n > proccap) n = proccap;
    unsigned long long sum = 0;
    for (unsigned int i = 0; i < n; i++) {
        if (!wanted(procbuf[i].pid, pids, npids)) continue;
        if (procbuf[i].usedGpuMemory == NVML_VALUE_NOT_AVAILABLE) {
            char key[48];
            snprintf(key, sizeof key, "nvml.procmem.%u", gpu);
            counters_log_once(key, "counters: NVML GPU %u: usedGpuMemory of pid %u not "
                              "available; device memory stands in", gpu, procbuf[i].pid);
            return NOT_AVAILABLE;
        }
        sum += procbuf[i].usedGpuMemory;
    }
    *bytes = sum;
    return NVML_SUCCESS;
}

void nvml_add_json(cJSON *obj, const pid_t *run_pids, int npids) {
    cJSON *arr = cJSON_AddArrayToObject(obj, "gpus");
    if (!arr) return;
    /* NVML lists host pids: inside a container the run's own are mapped (hostpids.c). */
    static pid_t host[4096];
    const pid_t *pids = run_pids;
    if (ngpus > 0 && npids <= (int)(sizeof host / sizeof host[0])) {
        npids = counters_host_pids(run_pids, npids, host, (int)(sizeof host / sizeof host[0]));
        pids = host;
    }
    for (int g = 0; g < ngpus; g++) {
        nvmlDevice_t d = devs[g];
        unsigned int i = devidx[g];
        nvmlReturn_t r;
        cJSON *o = cJSON_CreateObject();
        if (!o) return;
        cJSON_AddItemToArray(arr, o);
        cJSON_AddNumberToObject(o, "index", i);
        if (nv.energy) {
            unsigned long long mj = 0;
            if ((r = nv.energy(d, &mj)) == NVML_SUCCESS)
                cJSON_AddNumberToObject(o, "energy_mj", (double)mj);
            else
                log_fail("energy", "energy", i, r);
        }
        if (nv.power) {
            unsigned int mw = 0;
            if ((r = nv.power(d, &mw)) == NVML_SUCCESS)
                cJSON_AddNumberToObject(o, "power_mw", mw);
            else
                log_fail("power", "power", i, r);
        }
        if (nv.meminfo) {
            nvmlMemory_t m;
            if ((r = nv.meminfo(d, &m)) == NVML_SUCCESS)
                cJSON_AddNumberToObject(o, "mem_used_mib", (double)m.used / MIB);
            else
                log_fail("memory", "memory used", i, r);
        }
        int listed = 0;
        if (nv.procs) {
            unsigned long long bytes = 0;
            if ((r = run_mem(d, i, pids, npids, &bytes)) == NVML_SUCCESS) {
                cJSON_AddNumberToObject(o, "run_mem_mib", (double)bytes / MIB);
                listed = 1;
            } else if (r != NOT_AVAILABLE) {
                log_fail("procs", "process list (device memory stands in)", i, r);
            }
        }
        cJSON_AddBoolToObject(o, "procs_listed", listed);
    }
}
