/* gpu_engine.c: a GPU "engine" for t_gpu_nvml, on a machine with an NVIDIA GPU only. It drives
 * the GPU through the CUDA driver API (libcuda.so.1, loaded with dlopen and declared here with
 * the driver's real signatures: no CUDA headers or compiler needed) and writes what the tools
 * outside the shim see at each phase boundary, so the test can hold the shim's NVML readings
 * against them. It must never read anything through the shim or perfscope.
 *
 *   gpu_engine hold MIB   allocates MIB on GPU 0, prints "ready PID", holds it until stdin ends
 *   gpu_engine run MIB CHILD_MIB WORK_S
 *        idle (no CUDA yet) / load (MIB here, CHILD_MIB in a child "hold") / work (device
 *        memsets for WORK_S seconds, tokens= their count) / idle (everything freed)
 *
 * run appends the markers to $LLMPERFSCOPE_MARKERS with t= (CLOCK_MONOTONIC) and prints, for
 * each boundary, one JSON line on stdout: the marker, its t_ns, the engine's and the child's
 * pids, GPU 0's energy counter (mJ) read through NVML just before the marker, and what
 * `nvidia-smi --query-compute-apps=pid,used_memory` and `--query-gpu=memory.used` printed then.
 * After each boundary the state is held HOLD_MS unchanged, so a reading taken when the line is
 * read sees the same memory. Any failure: a line on stderr, exit 1. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HOLD_MS 400
#define MIB (1024ull * 1024ull)

typedef int CUresult;                 /* CUDA_SUCCESS = 0 */
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef unsigned long long CUdeviceptr;

static struct {
    CUresult (*init)(unsigned int);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*ctx_retain)(CUcontext *, CUdevice);
    CUresult (*ctx_release)(CUdevice);
    CUresult (*ctx_set)(CUcontext);
    CUresult (*alloc)(CUdeviceptr *, size_t);
    CUresult (*memfree)(CUdeviceptr);
    CUresult (*memset32)(CUdeviceptr, unsigned int, size_t);
    CUresult (*sync)(void);
    CUresult (*errstr)(CUresult, const char **);
} cu;

static void die(const char *what) {
    fprintf(stderr, "gpu_engine: %s\n", what);
    exit(1);
}

static void *need(void *lib, const char *name) {
    void *p = dlsym(lib, name);
    if (!p) {
        fprintf(stderr, "gpu_engine: libcuda.so.1 has no %s\n", name);
        exit(1);
    }
    return p;
}

static void ck(CUresult r, const char *what) {
    if (r == 0) return;
    const char *s = NULL;
    if (cu.errstr) cu.errstr(r, &s);
    fprintf(stderr, "gpu_engine: %s: CUDA error %d (%s)\n", what, r, s ? s : "?");
    exit(1);
}

static CUdevice dev;

static void cuda_up(void) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) die(dlerror());
    cu.init = need(lib, "cuInit");
    cu.device_get = need(lib, "cuDeviceGet");
    cu.ctx_retain = need(lib, "cuDevicePrimaryCtxRetain");
    cu.ctx_release = need(lib, "cuDevicePrimaryCtxRelease_v2");
    cu.ctx_set = need(lib, "cuCtxSetCurrent");
    cu.alloc = need(lib, "cuMemAlloc_v2");
    cu.memfree = need(lib, "cuMemFree_v2");
    cu.memset32 = need(lib, "cuMemsetD32_v2");
    cu.sync = need(lib, "cuCtxSynchronize");
    cu.errstr = dlsym(lib, "cuGetErrorString");
    ck(cu.init(0), "cuInit");
    ck(cu.device_get(&dev, 0), "cuDeviceGet");
    CUcontext ctx;
    ck(cu.ctx_retain(&ctx, dev), "cuDevicePrimaryCtxRetain");
    ck(cu.ctx_set(ctx), "cuCtxSetCurrent");
}

static CUdeviceptr gpu_alloc(unsigned long long mib) {
    CUdeviceptr p;
    ck(cu.alloc(&p, mib * MIB), "cuMemAlloc");
    ck(cu.memset32(p, 0x5a5a5a5a, mib * MIB / 4), "cuMemsetD32");   /* really backed */
    ck(cu.sync(), "cuCtxSynchronize");
    return p;
}

static unsigned long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {}
}

static int hold(unsigned long long mib) {
    cuda_up();
    CUdeviceptr p = gpu_alloc(mib);
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    char buf[64];
    while (fread(buf, 1, sizeof buf, stdin) > 0) {}
    ck(cu.memfree(p), "cuMemFree");
    ck(cu.ctx_release(dev), "cuDevicePrimaryCtxRelease");
    return 0;
}

/* NVML, read by the engine itself: GPU 0's energy counter, the reference for the shim's. */
static struct {
    int (*energy)(void *, unsigned long long *);
    void *dev;
} nv;

static void nvml_up(void) {
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) die(dlerror());
    int (*init)(void) = need(lib, "nvmlInit_v2");
    int (*handle)(unsigned int, void **) = need(lib, "nvmlDeviceGetHandleByIndex_v2");
    nv.energy = need(lib, "nvmlDeviceGetTotalEnergyConsumption");
    if (init() != 0) die("nvmlInit_v2 failed");
    if (handle(0, &nv.dev) != 0) die("nvmlDeviceGetHandleByIndex_v2(0) failed");
}

/* The output of CMD as one JSON string (quotes, backslashes and line ends escaped). */
static void print_cmd_json(const char *cmd) {
    FILE *f = popen(cmd, "r");
    if (!f) die("popen nvidia-smi");
    putchar('"');
    int c;
    while ((c = fgetc(f)) != EOF) {
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c == '\n') fputs("\\n", stdout);
        else if (c >= 0x20 && c < 0x7f) putchar(c);
    }
    putchar('"');
    if (pclose(f) != 0) die("nvidia-smi failed");
}

static int markers_fd = -1;
static int child_pid;

static void boundary(const char *name, const char *event, long long tokens) {
    printf("{\"name\": \"%s\", \"event\": \"%s\", \"pid\": %d, \"child_pid\": %d, \"apps\": ",
           name, event, (int)getpid(), child_pid);
    print_cmd_json("nvidia-smi --query-compute-apps=pid,used_memory "
                   "--format=csv,noheader,nounits");
    printf(", \"mem_used\": ");
    print_cmd_json("nvidia-smi --query-gpu=memory.used,memory.total --format=csv,noheader,"
                   "nounits -i 0");
    unsigned long long mj = 0;
    if (nv.energy(nv.dev, &mj) != 0) die("nvmlDeviceGetTotalEnergyConsumption failed");
    unsigned long long t = now_ns();
    char line[160];
    int n = tokens >= 0 ? snprintf(line, sizeof line, "%s %s tokens=%lld t=%llu\n", name, event,
                                   tokens, t)
                        : snprintf(line, sizeof line, "%s %s t=%llu\n", name, event, t);
    if (write(markers_fd, line, (size_t)n) != n) die("cannot write the markers file");
    printf(", \"t_ns\": %llu, \"energy_mj\": %llu}\n", t, mj);
    fflush(stdout);
    sleep_ms(HOLD_MS);
}

static int run(const char *self, unsigned long long mib, unsigned long long child_mib,
               double work_s) {
    const char *path = getenv("LLMPERFSCOPE_MARKERS");
    if (!path) die("LLMPERFSCOPE_MARKERS is not set");
    markers_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (markers_fd < 0) die("cannot open the markers file");
    nvml_up();

    boundary("idle", "begin", -1);
    sleep_ms(1500);
    boundary("idle", "end", -1);

    boundary("load", "begin", -1);
    cuda_up();
    CUdeviceptr buf = gpu_alloc(mib);
    int to_child[2], from_child[2];
    if (pipe(to_child) || pipe(from_child)) die("pipe");
    pid_t pid = fork();
    if (pid < 0) die("fork");
    if (pid == 0) {
        dup2(to_child[0], 0);
        dup2(from_child[1], 1);
        close(to_child[1]);
        close(from_child[0]);
        char arg[32];
        snprintf(arg, sizeof arg, "%llu", child_mib);
        execl(self, self, "hold", arg, (char *)NULL);
        _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    char ready[64] = "";
    FILE *cf = fdopen(from_child[0], "r");
    if (!cf || !fgets(ready, sizeof ready, cf) || strncmp(ready, "ready ", 6) != 0)
        die("the child did not get its memory");
    child_pid = pid;
    boundary("load", "end", -1);

    boundary("work", "begin", -1);
    long long sets = 0;
    unsigned long long t0 = now_ns();
    while ((double)(now_ns() - t0) < work_s * 1e9) {
        for (int i = 0; i < 50; i++, sets++)
            ck(cu.memset32(buf, (unsigned int)sets, mib * MIB / 4), "cuMemsetD32");
        ck(cu.sync(), "cuCtxSynchronize");
    }
    boundary("work", "end", sets);

    close(to_child[1]);                          /* the child frees its memory and ends */
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        die("the child failed");
    child_pid = 0;
    ck(cu.memfree(buf), "cuMemFree");
    ck(cu.ctx_release(dev), "cuDevicePrimaryCtxRelease");

    boundary("idle", "begin", -1);
    sleep_ms(2000);
    boundary("idle", "end", -1);
    return 0;
}

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_DFL);
    if (argc == 3 && strcmp(argv[1], "hold") == 0) return hold(strtoull(argv[2], NULL, 10));
    if (argc == 5 && strcmp(argv[1], "run") == 0)
        return run(argv[0], strtoull(argv[2], NULL, 10), strtoull(argv[3], NULL, 10),
                   atof(argv[4]));
    fprintf(stderr, "usage: gpu_engine hold MIB | run MIB CHILD_MIB WORK_S\n");
    return 2;
}
