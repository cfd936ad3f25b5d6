/* container.c: a container as a target (container.h, docs/containers.md): the client's command,
 * following the container from the host, stopping it, and what is done after it stops. Every
 * command it runs (the client's inspect, stop, kill, wait, cp, rm) goes through the one process
 * runner. It must never add a capability or a security option to the user's command, never
 * change the container's user, and never leave the container behind. */
#include "container.h"
#include "strv.h"
#include "outfile.h"
#include "runfolder.h"
#include "proc/runner.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define TOOL_ARGS_MAX 32
#define INSPECT_S 20.0

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static int in_list(const char *a, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(a, *list) == 0)
            return 1;
    return 0;
}

int container_run_index(char *const *argv)
{
    if (!argv || !argv[0])
        return -1;
    const char *tool = base_name(argv[0]);
    if (strcmp(tool, "docker") != 0 && strcmp(tool, "podman") != 0)
        return -1;
    /* The client's own options before the command; these take no value. */
    static const char *const flags[] = {"-D", "--debug", "--tls", "--tlsverify", "--remote", "-r",
                                        "--syslog", NULL};
    for (int i = 1; argv[i] && i < TOOL_ARGS_MAX; i++) {
        const char *a = argv[i];
        if (a[0] != '-')
            return strcmp(a, "run") == 0 ? i : -1;
        if (!strchr(a, '=') && !in_list(a, flags) && argv[i + 1])
            i++;
    }
    return -1;
}

/* `run`'s options that take no value (the rest do, unless written --opt=value). */
static int run_flag(const char *a)
{
    static const char *const longs[] = {"--detach", "--interactive", "--tty", "--init", "--privileged",
                                        "--publish-all", "--read-only", "--no-healthcheck",
                                        "--oom-kill-disable", "--quiet", "--disable-content-trust",
                                        "--sig-proxy", "--help", "--rm", "--replace", "--rmi",
                                        "--env-host", "--no-hosts", NULL};
    if (a[1] == '-')
        return in_list(a, longs);
    for (const char *p = a + 1; *p; p++)
        if (!strchr("ditPq", *p))
            return 0;
    return 1;
}

static int starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int is_var(const char *entry, const char *name)
{
    size_t l = strlen(name);
    return strncmp(entry, name, l) == 0 && entry[l] == '=';
}

/* A setting of the run (it goes into the container; the client does not get it). */
static int run_setting(const char *e)
{
    return is_var(e, "LD_PRELOAD") || starts(e, "PERFSCOPE_") || starts(e, "LLMPERFSCOPE_");
}

/* Settings that name host paths or the tools, never passed in (the ones that matter are set anew). */
static int host_only(const char *e)
{
    return is_var(e, "LD_PRELOAD") || is_var(e, "PERFSCOPE_OUT") || is_var(e, "PERFSCOPE_SHIM") ||
           is_var(e, "PERFSCOPE_TOOLS") || is_var(e, "PERFSCOPE_MARKERS") ||
           is_var(e, "LLMPERFSCOPE_MARKERS") || is_var(e, "LLMPERFSCOPE_CPUPROF_OUT");
}

int container_prepare(struct container *c, char *const *argv, const char *out_abs,
                      const char *shim_path, char *const *envp, char ***argv_out,
                      char ***env_out, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->lock, NULL);
    *argv_out = *env_out = NULL;
    int run = container_run_index(argv);
    if (run < 0) {
        snprintf(err, errlen, "not a docker or podman run command");
        return -1;
    }
    char dir[PATH_MAX], shim_dir[PATH_MAX], probe[PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%s", shim_path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    snprintf(probe, sizeof probe, "%s/container/libperfscope.so", slash ? dir : ".");
    if (access(probe, R_OK) != 0 || !realpath(probe, shim_dir)) {
        snprintf(err, errlen, "no container shim at %.200s (make builds it)", probe);
        return -1;
    }
    *strrchr(shim_dir, '/') = 0;
    if (strchr(shim_dir, ',') || strchr(out_abs, ',')) {
        snprintf(err, errlen, "a path with a comma cannot be mounted: %.200s",
                 strchr(out_abs, ',') ? out_abs : shim_dir);
        return -1;
    }
    snprintf(c->out, sizeof c->out, "%s", out_abs);
    c->stop_s = CONTAINER_STOP_S;
    snprintf(c->cidfile, sizeof c->cidfile, "%s/container.id", out_abs);
    unlink(c->cidfile); /* the client refuses an existing one */
    c->ntool = run;
    c->tool_argv = calloc((size_t)run + 1, sizeof *c->tool_argv);
    if (!c->tool_argv) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < run; i++)
        if (!(c->tool_argv[i] = strdup(argv[i]))) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    struct strv a = {0}, e = {0};
    for (int i = 0; i <= run; i++)
        strv_push(&a, argv[i]);
    strv_push(&a, "--cidfile");
    strv_push(&a, c->cidfile);
    strv_push(&a, "--mount");
    strv_pushf(&a, "type=bind,source=%s,target=" CONTAINER_SHIM_DIR ",readonly", shim_dir);
    strv_push(&a, "--mount");
    strv_pushf(&a, "type=bind,source=%s,target=%s", out_abs, out_abs);
    strv_push(&a, "-e");
    strv_push(&a, "LD_PRELOAD=" CONTAINER_SHIM_DIR "/libperfscope.so");
    strv_push(&a, "-e");
    strv_pushf(&a, "PERFSCOPE_OUT=%s", out_abs);
    strv_push(&a, "-e");
    strv_pushf(&a, "LLMPERFSCOPE_MARKERS=%s/markers", out_abs);
    for (char *const *p = envp; p && *p; p++) {
        if (!run_setting(*p)) {
            strv_push(&e, *p);
        } else if (!host_only(*p)) {
            strv_push(&a, "-e");
            strv_push(&a, *p);
        }
    }
    const char *own = getenv("LD_PRELOAD"); /* the client keeps the caller's own */
    if (own && *own)
        strv_pushf(&e, "LD_PRELOAD=%s", own);
    /* The user's options, without --rm: the container is kept until its files are copied out,
     * and removed here whatever the user asked. */
    int i = run + 1;
    for (; argv[i] && argv[i][0] == '-'; i++) {
        const char *o = argv[i];
        if (strcmp(o, "--") == 0)
            break;
        if (strcmp(o, "--rm") == 0 || starts(o, "--rm=")) {
            c->user_rm = 1;
            continue;
        }
        strv_push(&a, o);
        if (!strchr(o, '=') && !run_flag(o) && argv[i + 1])
            strv_push(&a, argv[++i]);
    }
    for (; argv[i]; i++)
        strv_push(&a, argv[i]);
    if (a.oom || e.oom || !e.v) {
        if (!e.v && !e.oom)
            strv_push(&e, "PATH=/usr/bin:/bin");
        if (a.oom || e.oom) {
            strv_free_v(a.v);
            strv_free_v(e.v);
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    /* The container's user may be anyone: the folder is open while it runs, and given back to
     * our user with 0755 when it has stopped (container_finish). */
    chmod(out_abs, 0777);
    *argv_out = a.v;
    *env_out = e.v;
    return 0;
}

static void nap_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The client with its global options, then args; stdout into buf. */
static int tool_runv(const struct container *c, char *buf, size_t size, double timeout_s,
                     volatile sig_atomic_t *stop, char *const *args)
{
    char *argv[TOOL_ARGS_MAX + 16];
    int n = 0;
    for (int i = 0; i < c->ntool && n < TOOL_ARGS_MAX; i++)
        argv[n++] = c->tool_argv[i];
    for (int i = 0; args[i] && n < TOOL_ARGS_MAX + 14; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    char tmp[] = "/tmp/perfscope-container.XXXXXX";
    int fd = buf ? mkstemp(tmp) : -1;
    if (buf && fd < 0)
        return -1;
    if (fd >= 0)
        close(fd);
    struct proc_cmd cmd = {
        .argv = argv,
        .envp = environ,
        .stdin_path = "/dev/null",
        .stdout_path = buf ? tmp : "/dev/null",
        .stderr_path = "/dev/null",
        .who = "perfscope",
    };
    struct proc_outcome r;
    proc_run(&cmd, timeout_s, stop, &r);
    if (buf) {
        buf[0] = 0;
        FILE *f = fopen(tmp, "re");
        if (f) {
            size_t k = fread(buf, 1, size - 1, f);
            buf[k] = 0;
            fclose(f);
        }
        unlink(tmp);
        size_t l = strlen(buf);
        while (l && isspace((unsigned char)buf[l - 1]))
            buf[--l] = 0;
    }
    return r.exited ? r.code : -1;
}

int container_tool(const struct container *c, char *buf, size_t size, double timeout_s, ...)
{
    char *args[16];
    int n = 0;
    va_list ap;
    va_start(ap, timeout_s);
    for (char *s; n < 15 && (s = va_arg(ap, char *));)
        args[n++] = s;
    va_end(ap);
    args[n] = NULL;
    return tool_runv(c, buf, size, timeout_s, NULL, args);
}

/* The id the client wrote (the file appears once the container is created). */
static void read_id(struct container *c)
{
    if (c->id[0])
        return;
    char buf[sizeof c->id] = "";
    FILE *f = fopen(c->cidfile, "re");
    if (!f)
        return;
    size_t k = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[k] = 0;
    size_t l = strspn(buf, "0123456789abcdef");
    if (l < 12)
        return;
    buf[l] = 0;
    pthread_mutex_lock(&c->lock);
    snprintf(c->id, sizeof c->id, "%s", buf);
    pthread_mutex_unlock(&c->lock);
}

/* Its first process's host pid and the image, once docker has them. */
static void inspect(struct container *c)
{
    char out[1024];
    if (container_tool(c, out, sizeof out, INSPECT_S, "inspect", "-f",
                       "{{.State.Pid}} {{.Config.Image}} {{.Image}}", c->id, NULL) != 0)
        return;
    char image[512] = "", image_id[160] = "";
    long pid = 0;
    if (sscanf(out, "%ld %511s %159s", &pid, image, image_id) != 3)
        return;
    pthread_mutex_lock(&c->lock);
    snprintf(c->image, sizeof c->image, "%s", image);
    snprintf(c->image_id, sizeof c->image_id, "%s", image_id);
    if (pid > 0 && !c->host_pid)
        c->host_pid = (int)pid;
    pthread_mutex_unlock(&c->lock);
}

struct proc_entry {
    int pid, ppid, inner;
};

/* One host process: its parent, and its pid in the innermost pid namespace (NSpid's last). */
static int read_status(int pid, struct proc_entry *p)
{
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    p->pid = pid;
    p->ppid = -1;
    p->inner = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "PPid:", 5) == 0)
            p->ppid = atoi(line + 5);
        else if (strncmp(line, "NSpid:", 6) == 0) {
            char *s = line + 6, *end;
            for (long v; (v = strtol(s, &end, 10)), end != s; s = end)
                p->inner = (int)v;
        }
    }
    fclose(f);
    return p->ppid >= 0 && p->inner > 0 ? 0 : -1;
}

static int by_pid(const void *a, const void *b)
{
    const struct proc_entry *x = a, *y = b;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Every process descending from the container's first one (itself included): NSpid maps its
 * pid inside to its host pid. From /proc/<pid>/status, readable by anyone. */
static int scan_pids(struct container *c)
{
    int changed = 0;
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    size_t n = 0, cap = 1024;
    struct proc_entry *v = malloc(cap * sizeof *v);
    for (struct dirent *de; v && (de = readdir(d));) {
        if (!isdigit((unsigned char)de->d_name[0]))
            continue;
        if (n == cap) {
            struct proc_entry *w = cap < (1u << 20) ? realloc(v, 2 * cap * sizeof *v) : NULL;
            if (!w)
                break;
            v = w;
            cap *= 2;
        }
        if (read_status(atoi(de->d_name), &v[n]) == 0)
            n++;
    }
    closedir(d);
    if (!v)
        return 0;
    qsort(v, n, sizeof *v, by_pid);
    for (size_t i = 0; i < n; i++) {
        int p = v[i].pid, depth = 0;
        while (p > 1 && p != c->host_pid && depth++ < 64) {
            struct proc_entry key = {.pid = p};
            struct proc_entry *up = bsearch(&key, v, n, sizeof *v, by_pid);
            p = up ? up->ppid : 0;
        }
        if (p != c->host_pid)
            continue;
        pthread_mutex_lock(&c->lock);
        int k = 0;
        while (k < c->npids && c->pids[k].pid != v[i].inner)
            k++;
        if (k < c->npids && c->pids[k].host_pid != v[i].pid) {
            c->pids[k].host_pid = v[i].pid; /* a pid used again inside: the latest */
            changed = 1;
        } else if (k == c->npids && c->npids < CONTAINER_MAX_PIDS) {
            c->pids[c->npids++] = (struct container_pid){v[i].inner, v[i].pid};
            changed = 1;
        }
        pthread_mutex_unlock(&c->lock);
    }
    free(v);
    return changed;
}

/* RUN_HOSTPIDS for the shim inside (NVML lists host pids): "<pid> <host pid>" a line. */
static void write_hostpids(struct container *c)
{
    static char text[CONTAINER_MAX_PIDS * 24];
    size_t len = 0;
    for (int i = 0; i < c->npids && len + 24 < sizeof text; i++)
        len += (size_t)snprintf(text + len, sizeof text - len, "%d %d\n", c->pids[i].pid,
                                c->pids[i].host_pid);
    char path[PATH_MAX + 32], err[256];
    snprintf(path, sizeof path, "%s/" RUN_HOSTPIDS, c->out);
    outfile_write_all(path, text, len, err, sizeof err);
    chmod(path, 0644);
}

static void *follow(void *arg)
{
    struct container *c = arg;
    while (!c->done) {
        read_id(c);
        if (c->id[0] && !c->host_pid)
            inspect(c);
        if (c->host_pid && scan_pids(c))
            write_hostpids(c);
        nap_ms(c->host_pid ? 100 : 50);
    }
    return NULL;
}

void container_follow(struct container *c)
{
    c->following = pthread_create(&c->follower, NULL, follow, c) == 0;
}

static int running(struct container *c)
{
    char out[64];
    return container_tool(c, out, sizeof out, INSPECT_S, "inspect", "-f", "{{.State.Running}}", c->id,
                          NULL) == 0 &&
           strcmp(out, "true") == 0;
}

void container_stop(void *arg)
{
    struct container *c = arg;
    read_id(c);
    if (!c->id[0])
        return;
    char t[16];
    snprintf(t, sizeof t, "%d", c->stop_s);
    c->stopped_by_us = 1;
    container_tool(c, NULL, 0, c->stop_s + 20.0, "stop", "-t", t, c->id, NULL);
    if (running(c)) {
        c->killed = 1;
        container_tool(c, NULL, 0, 20.0, "kill", c->id, NULL);
    }
}

static uid_t own_uid;
static gid_t own_gid;

static int give_back(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)flag, (void)ftw;
    if (st->st_uid != own_uid || st->st_gid != own_gid)
        if (lchown(path, own_uid, own_gid) != 0)
            return 0; /* what cannot be changed stays; the rest still is */
    if (!S_ISLNK(st->st_mode) && (st->st_mode & 0600) != 0600)
        chmod(path, (st->st_mode & 07777) | 0600 | (S_ISDIR(st->st_mode) ? 0100 : 0));
    return 0;
}

static void write_json(struct container *c, int exit_code, const char *who)
{
    cJSON *j = cJSON_CreateObject();
    if (!j)
        return;
    cJSON_AddStringToObject(j, "tool", base_name(c->tool_argv[0]));
    cJSON_AddStringToObject(j, "id", c->id);
    cJSON_AddStringToObject(j, "container_image", c->image);
    cJSON_AddStringToObject(j, "container_image_id", c->image_id);
    cJSON_AddNumberToObject(j, "host_pid", c->host_pid);
    if (exit_code >= 0)
        cJSON_AddNumberToObject(j, "exit_code", exit_code);
    cJSON_AddBoolToObject(j, "stopped_by_perfscope", c->stopped_by_us);
    cJSON_AddBoolToObject(j, "killed", c->killed);
    cJSON_AddBoolToObject(j, "user_rm", c->user_rm);
    cJSON *pids = cJSON_AddArrayToObject(j, "pids");
    for (int i = 0; pids && i < c->npids; i++) {
        cJSON *p = cJSON_CreateObject();
        if (!p)
            break;
        cJSON_AddNumberToObject(p, "pid", c->pids[i].pid);
        cJSON_AddNumberToObject(p, "host_pid", c->pids[i].host_pid);
        cJSON_AddItemToArray(pids, p);
    }
    cJSON *s = cJSON_AddObjectToObject(j, "symfs");
    if (s) {
        cJSON_AddNumberToObject(s, "files", c->copied);
        cJSON_AddNumberToObject(s, "failed", c->copy_failed);
        cJSON_AddNumberToObject(s, "copy_s", c->copy_s);
    }
    char path[PATH_MAX + 32], err[512];
    snprintf(path, sizeof path, "%s/" RUN_CONTAINER, c->out);
    if (outfile_write_json(path, j, err, sizeof err) != 0)
        fprintf(stderr, "%s: %s\n", who, err);
    cJSON_Delete(j);
}

void container_finish(struct container *c, int stop_asked, volatile sig_atomic_t *stop,
                      double wait_s, const char *who)
{
    read_id(c);
    if (c->id[0] && running(c)) {
        if (!stop_asked && !(stop && *stop)) {
            /* The client ended first (-d, or it was killed): the container is the target. */
            char *args[] = {"wait", c->id, NULL};
            tool_runv(c, NULL, 0, wait_s > 0 ? wait_s : 0, stop, args);
        }
        if (running(c))
            container_stop(c);
    }
    c->done = 1;
    if (c->following)
        pthread_join(c->follower, NULL);
    c->following = 0;
    int code = -1;
    if (c->id[0]) {
        if (!c->image[0])
            inspect(c);
        char out[32];
        if (container_tool(c, out, sizeof out, INSPECT_S, "inspect", "-f", "{{.State.ExitCode}}", c->id,
                           NULL) == 0)
            code = atoi(out);
        double t0 = now_s();
        c->copied = container_copy_symbols(c, &c->copy_failed, who);
        c->copy_s = now_s() - t0;
        if (c->copy_failed)
            fprintf(stderr, "%s: %d mapped files could not be copied out of the container: their "
                            "frames stay unnamed\n", who, c->copy_failed);
        if (container_tool(c, NULL, 0, 60.0, "rm", "-f", c->id, NULL) != 0)
            fprintf(stderr, "%s: could not remove container %.12s\n", who, c->id);
    } else {
        fprintf(stderr, "%s: the container's id never appeared in %s: nothing to follow\n", who,
                c->cidfile);
    }
    write_json(c, code, who);
    own_uid = getuid();
    own_gid = getgid();
    nftw(c->out, give_back, 16, FTW_PHYS);
    chmod(c->out, 0755);
    for (int i = 0; i < c->ntool; i++)
        free(c->tool_argv[i]);
    free(c->tool_argv);
    c->tool_argv = NULL;
    pthread_mutex_destroy(&c->lock);
}
