/* machine.c: is the machine quiet enough to measure on (machine.h)? Shared by the shim (meta.json's
 * machine_before) and the matrix runner (before each arm), so both apply one rule. It must never
 * count this process, its ancestors (the runner, the front door, a shell) or the kernel's own
 * threads (kthreadd's children, PF_KTHREAD: rcu_preempt and kworkers are often in state R) as
 * busy, and never fail: what cannot be read counts as quiet. */
#include "machine.h"
#include "textfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The kernel marks its own threads so in /proc/<pid>/stat's flags (include/linux/sched.h). */
#define MACHINE_PF_KTHREAD 0x00200000u
#define MACHINE_MAX_ANCESTORS 64

struct pstat {
    char state;
    long ppid;
    unsigned long flags;
    char comm[24];
};

/* /proc/<pid>/stat's state, parent, flags and name; 0, or -1 when it cannot be read. */
static int read_stat(const char *root, long pid, struct pstat *ps)
{
    char path[320], buf[512];
    snprintf(path, sizeof path, "%s/%ld/stat", root, pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    /* In the shim close() is its wrapper, which on the shim's threads is the shim's own close and
     * ends the descriptor's announcement (preload/shimopen.h); elsewhere the C library's. */
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    char *lp = strchr(buf, '('), *rp = strrchr(buf, ')');
    if (!lp || !rp || rp < lp || rp[1] != ' ')
        return -1;
    /* after the name: state ppid pgrp session tty_nr tpgid flags */
    if (sscanf(rp + 2, "%c %ld %*d %*d %*d %*d %lu", &ps->state, &ps->ppid, &ps->flags) != 3)
        return -1;
    *rp = '\0';
    snprintf(ps->comm, sizeof ps->comm, "%s", lp + 1);
    return 0;
}

/* Whether pid is the kernel's: kthreadd (pid 2), a child of it, or marked PF_KTHREAD. */
static int kernel_thread(long pid, const struct pstat *ps)
{
    return pid == 2 || ps->ppid == 2 || (ps->flags & MACHINE_PF_KTHREAD) != 0;
}

/* This process and its ancestors (whoever runs the measurement: the matrix, the front door, a
 * shell), up to MACHINE_MAX_ANCESTORS; their count. */
static int own_processes(const char *root, long *v)
{
    int n = 0;
    long pid = (long)getpid();
    while (pid > 1 && n < MACHINE_MAX_ANCESTORS) {
        v[n++] = pid;
        struct pstat ps;
        if (read_stat(root, pid, &ps) != 0)
            break;
        pid = ps.ppid;
    }
    return n;
}

/* On the real /proc, the kernel's threads without a system call each: they are kthreadd's
 * children, and /proc/2/task/2/children lists them in one read (CONFIG_PROC_CHILDREN) where
 * telling each apart costs a system call at least (most of a VM's processes are the kernel's:
 * 58 of 109 here; a many-core host has thousands). Only when pid 2 has no executable, as
 * kthreadd has none: in a container's pid namespace pid 2 is a user process (and no kernel
 * thread is listed at all), whose children would be skipped only in the instant of its exit
 * when its memory is gone and its children not yet handed on. The list is sorted for
 * kthread_listed(); NULL when it cannot be had (then no_executable() tells them apart). */
static int no_executable(const char *root, long pid);

struct kthreads {
    long *pid;
    size_t n;
};

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return x < y ? -1 : x > y;
}

static void kthreads_read(const char *root, struct kthreads *k)
{
    k->pid = NULL;
    k->n = 0;
    if (!no_executable(root, 2))
        return; /* a user process's pid 2 (a container's namespace) */
    char path[320], err[16];
    snprintf(path, sizeof path, "%s/2/task/2/children", root);
    char *buf;
    size_t len;
    if (textfile_slurp(path, 1u << 24, 1, &buf, &len, err, sizeof err) != 0)
        return; /* missing, empty (no kernel thread), unreadable: told apart one by one */
    /* "pid pid ... " : at most one pid every two bytes */
    k->pid = malloc((len / 2 + 1) * sizeof *k->pid);
    for (char *p = buf; k->pid && *p;) {
        char *end;
        long pid = strtol(p, &end, 10);
        if (end == p)
            break;
        if (pid > 0)
            k->pid[k->n++] = pid;
        p = end;
    }
    free(buf);
    if (k->pid)
        qsort(k->pid, k->n, sizeof *k->pid, cmp_long);
}

static int kthread_listed(const struct kthreads *k, long pid)
{
    return k->pid && (pid == 2 || bsearch(&pid, k->pid, k->n, sizeof pid, cmp_long) != NULL);
}

/* On the real /proc without that list, whether pid has no executable: its exe link reads
 * ENOENT. So does every kernel thread (no memory of its own), a zombie and a process past the
 * release of its memory on its way out: none of them is a busy process. One system call where
 * reading the stat file takes three (open, read, close). A link that cannot be read for another
 * reason (EACCES: another user's process) says nothing: the stat file decides. */
static int no_executable(const char *root, long pid)
{
    char path[320], link[8];
    snprintf(path, sizeof path, "%s/%ld/exe", root, pid);
    return readlink(path, link, sizeof link) < 0 && errno == ENOENT;
}

/* real: root is the kernel's /proc (a test's fake tree has no exe links: every pid is read). */
static void busy_processes(const char *root, struct machine_state *st, int real)
{
    long own[MACHINE_MAX_ANCESTORS];
    int nown = own_processes(root, own);
    DIR *d = opendir(root);
    if (!d)
        return;
    struct kthreads k = {NULL, 0};
    if (real)
        kthreads_read(root, &k);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0)
            continue;
        int mine = 0;
        for (int i = 0; i < nown && !mine; i++)
            mine = own[i] == pid;
        if (mine || kthread_listed(&k, pid))
            continue;
        struct pstat ps;
        if ((real && !k.pid && no_executable(root, pid)) || read_stat(root, pid, &ps) != 0 || ps.state != 'R')
            continue;
        if (kernel_thread(pid, &ps)) {
            st->nkernel++;
            continue;
        }
        if (st->nbusy < MACHINE_BUSY_KEPT) {
            st->busy[st->nbusy].pid = pid;
            snprintf(st->busy[st->nbusy].comm, sizeof st->busy[0].comm, "%s", ps.comm);
        }
        st->nbusy++;
    }
    closedir(d);
    free(k.pid);
}

/* Threads of this process in state R now, from <root>/self/task; -1 when unknown or too many to
 * look at cheaply. */
#define MACHINE_OWN_THREADS_MAX 32
static int own_running(const char *root)
{
    char dir[320];
    snprintf(dir, sizeof dir, "%s/self/task", root);
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int running = 0, threads = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end, path[400], buf[512];
        long tid = strtol(e->d_name, &end, 10);
        if (*end || tid <= 0)
            continue;
        if (++threads > MACHINE_OWN_THREADS_MAX) {
            running = -1;
            break;
        }
        snprintf(path, sizeof path, "%s/%ld/stat", dir, tid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue; /* gone: not running */
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd); /* as in read_stat */
        buf[n > 0 ? n : 0] = '\0';
        char *rp = strrchr(buf, ')');
        if (rp && rp[1] == ' ' && rp[2] == 'R')
            running++;
    }
    closedir(d);
    return running;
}

void machine_check(struct machine_state *st)
{
    machine_check_in("/proc", st);
}

void machine_check_in(const char *proc_root, struct machine_state *st)
{
    memset(st, 0, sizeof *st);
    /* The kernel counts the tasks runnable now (loadavg's fourth field, "R/T"). When they are
     * all this process's own threads (counted before and after), no other process can be
     * running and the scan of every process is skipped: on the real /proc only (a test's root
     * has no kernel count behind it). A thread of ours that starts running in between makes the
     * count differ and the scan runs. */
    int real = strcmp(proc_root, "/proc") == 0;
    int own_before = real ? own_running(proc_root) : -1, runnable = -1;
    FILE *f = fopen("/proc/loadavg", "re");
    if (f) {
        int got = fscanf(f, "%lf %lf %lf %d/", &st->load[0], &st->load[1], &st->load[2], &runnable);
        if (got < 3)
            st->load[0] = st->load[1] = st->load[2] = 0;
        if (got < 4)
            runnable = -1;
        fclose(f);
    }
    st->cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (st->cores < 1)
        st->cores = 1;
    int own_after = own_before >= 0 && runnable >= 0 ? own_running(proc_root) : -1;
    int own = own_before < own_after ? own_before : own_after;
    if (own < 0 || runnable > own)
        busy_processes(proc_root, st, real);
    if (st->load[0] > 0.25 * (double)st->cores)
        snprintf(st->why, sizeof st->why, "load average %.2f on %ld cores", st->load[0], st->cores);
    else if (st->nbusy > 0)
        snprintf(st->why, sizeof st->why, "%d other process%s running", st->nbusy,
                 st->nbusy > 1 ? "es" : "");
    st->clean = st->why[0] == '\0';
}

cJSON *machine_json(const struct machine_state *st)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON *la = cJSON_AddArrayToObject(o, "loadavg");
    for (int i = 0; la && i < 3; i++)
        cJSON_AddItemToArray(la, cJSON_CreateNumber(st->load[i]));
    cJSON *busy = cJSON_AddArrayToObject(o, "busy_processes");
    for (int i = 0; busy && i < st->nbusy && i < MACHINE_BUSY_KEPT; i++) {
        cJSON *p = cJSON_CreateObject();
        if (!p)
            break;
        cJSON_AddNumberToObject(p, "pid", (double)st->busy[i].pid);
        cJSON_AddStringToObject(p, "comm", st->busy[i].comm);
        cJSON_AddItemToArray(busy, p);
    }
    cJSON_AddBoolToObject(o, "clean", st->clean);
    if (!st->clean)
        cJSON_AddStringToObject(o, "why_not", st->why);
    return o;
}
