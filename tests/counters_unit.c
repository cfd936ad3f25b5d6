/* counters_unit.c: test driver for preload/counters/ linked from its sources and the shim's
 * kept-descriptor reader (preload/fdcache.c, fdheld.c), with small stand-ins for the shim's ps_cfg, log
 * and descriptor marks (no target here to keep out of the way of). Runs the steps given as
 * arguments, in order:
 *   open | close | read | sleep:MS | pids:LIST (comma separated, "self" = this process)
 *   | write:PATH=TEXT (replace a fixture file's contents in place)
 *   | move:PATH=TEXT (a new file renamed over it) | alloc:MIB (touch that much heap)
 *   | nullobj (counters_add_json on NULL must do nothing)
 * Each read prints one line: {"t_ns":..., "self_pid":..., <what counters_add_json added>}.
 * Configuration as the shim reads it: PERFSCOPE_POWERCAP_ROOT, PERFSCOPE_NVML. Log lines go to
 * $COUNTERS_UNIT_LOG (default counters_unit.log), "[key] message" for ps_log_once and ps_log_run_once.
 * Never part of the shim. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"
#include "counters/counters.h"

struct ps_config ps_cfg;

uint64_t ps_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void log_line(const char *prefix, const char *fmt, va_list ap) {
    const char *p = getenv("COUNTERS_UNIT_LOG");
    FILE *f = fopen(p && *p ? p : "counters_unit.log", "a");
    if (!f) return;
    fputs(prefix, f);
    vfprintf(f, fmt, ap);
    fputc('\n', f);
    fclose(f);
}

void ps_log(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    log_line("", fmt, ap);
    va_end(ap);
}

static void log_once_v(const char *key, const char *fmt, va_list ap) {
    static char seen[256][128];
    static int nseen;
    for (int i = 0; i < nseen; i++)
        if (strcmp(seen[i], key) == 0) return;
    if (nseen < 256) snprintf(seen[nseen++], sizeof seen[0], "%s", key);
    char prefix[160];
    snprintf(prefix, sizeof prefix, "[%s] ", key);
    log_line(prefix, fmt, ap);
}

void ps_log_once(const char *key, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    log_once_v(key, fmt, ap);
    va_end(ap);
}

/* (One process here: once a run is once.) */
void ps_log_run_once(const char *key, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    log_once_v(key, fmt, ap);
    va_end(ap);
}

void ps_path(char *buf, size_t size, const char *name) {
    snprintf(buf, size, "./%s", name);
}

/* fdcache.c's and fdheld.c's view of the shim's descriptors: opened and moved high as the shim
 * does, no marks, no seccomp filter. */
void fds_mark(int fd, int ours) {
    (void)fd;
    (void)ours;
}

int fds_is_ours(int fd) {
    (void)fd;
    return 0;
}

int ps_real_close(int fd) {
    return close(fd);
}

int clock_fd_base(void) {
    return 512;
}

int fds_run_open(const char *path, int flags, int mode) {
    int fd = open(path, flags | O_CLOEXEC, mode);
    if (fd < 0) return fd;
    int high = fcntl(fd, F_DUPFD_CLOEXEC, clock_fd_base());
    if (high < 0) return fd;
    close(fd);
    return high;
}

void fds_run_close(int fd) {
    if (fd >= 0) close(fd);
}

int fds_io_enter(void) {
    return 1;
}

void fds_io_leave(void) {
}

int fds_may_open(void) {
    return 1;
}

int ps_run_pids(pid_t *pids, int max) {
    if (max < 1) return 0;
    pids[0] = getpid();
    return 1;
}

static void cfg_from_env(void) {
    const char *s = getenv("PERFSCOPE_POWERCAP_ROOT");
    snprintf(ps_cfg.powercap_root, sizeof ps_cfg.powercap_root, "%s",
             s ? s : "/sys/class/powercap");
    s = getenv("PERFSCOPE_NVML");
    snprintf(ps_cfg.nvml_path, sizeof ps_cfg.nvml_path, "%s", s ? s : "libnvidia-ml.so.1");
}

static int parse_pids(const char *s, pid_t *pids, int max) {
    int n = 0;
    while (*s && n < max) {
        char *end;
        if (strncmp(s, "self", 4) == 0) {
            pids[n++] = getpid();
            end = (char *)s + 4;
        } else {
            pids[n++] = (pid_t)strtol(s, &end, 10);
        }
        if (*end != ',') break;
        s = end + 1;
    }
    return n;
}

static void die(const char *what, const char *arg) {
    fprintf(stderr, "counters_unit: %s: %s\n", what, arg);
    exit(2);
}

int main(int argc, char **argv) {
    static pid_t pids[1024];
    int npids = 0;
    cfg_from_env();
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "open") == 0) {
            counters_open();
        } else if (strcmp(a, "close") == 0) {
            counters_close();
        } else if (strcmp(a, "nullobj") == 0) {
            counters_add_json(NULL, pids, npids);
        } else if (strcmp(a, "read") == 0) {
            cJSON *o = cJSON_CreateObject();
            if (!o) die("out of memory", a);
            cJSON_AddNumberToObject(o, "t_ns", (double)ps_now_ns());
            cJSON_AddNumberToObject(o, "self_pid", getpid());
            counters_add_json(o, pids, npids);
            char *s = cJSON_PrintUnformatted(o);
            if (!s) die("cannot print", a);
            puts(s);
            fflush(stdout);
            free(s);
            cJSON_Delete(o);
        } else if (strncmp(a, "sleep:", 6) == 0) {
            usleep((useconds_t)atoi(a + 6) * 1000);
        } else if (strncmp(a, "pids:", 5) == 0) {
            npids = parse_pids(a + 5, pids, 1024);
        } else if (strncmp(a, "write:", 6) == 0) {
            char path[4096];
            const char *eq = strchr(a + 6, '=');
            if (!eq || (size_t)(eq - a - 6) >= sizeof path) die("bad step", a);
            memcpy(path, a + 6, (size_t)(eq - a - 6));
            path[eq - a - 6] = '\0';
            FILE *f = fopen(path, "w");
            if (!f || fprintf(f, "%s\n", eq + 1) < 0 || fclose(f) != 0) die("cannot write", path);
        } else if (strncmp(a, "move:", 5) == 0) {
            char path[4096], tmp[4200];
            const char *eq = strchr(a + 5, '=');
            if (!eq || (size_t)(eq - a - 5) >= sizeof path) die("bad step", a);
            memcpy(path, a + 5, (size_t)(eq - a - 5));
            path[eq - a - 5] = '\0';
            snprintf(tmp, sizeof tmp, "%s.new", path);
            FILE *f = fopen(tmp, "w");
            if (!f || fprintf(f, "%s\n", eq + 1) < 0 || fclose(f) != 0 || rename(tmp, path) != 0) die("cannot move", path);
        } else if (strncmp(a, "alloc:", 6) == 0) {
            size_t n = (size_t)atol(a + 6) << 20;
            char *p = malloc(n);
            if (!p) die("out of memory", a);
            memset(p, 1, n);
            __asm__ volatile("" : : "r"(p) : "memory");  /* kept: it must stay resident */
        } else {
            die("unknown step", a);
        }
    }
    return 0;
}
