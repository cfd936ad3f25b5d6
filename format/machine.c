/* machine.c: is the machine quiet enough to measure on (machine.h)? Shared by the shim (meta.json's
 * machine_before) and the matrix runner (before each arm), so both apply one rule. It must never
 * count this process as busy and never fail: what cannot be read counts as quiet. */
#include "machine.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void busy_processes(struct machine_state *st)
{
    DIR *d = opendir("/proc");
    if (!d)
        return;
    struct dirent *e;
    long self = (long)getpid();
    while ((e = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0 || pid == self)
            continue;
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        /* The close system call itself: in the shim, close() is the target's wrapper. */
        syscall(SYS_close, fd);
        if (n <= 0)
            continue;
        buf[n] = '\0';
        char *lp = strchr(buf, '('), *rp = strrchr(buf, ')');
        if (!lp || !rp || rp < lp || rp[1] != ' ' || rp[2] != 'R')
            continue;
        if (st->nbusy < MACHINE_BUSY_KEPT) {
            st->busy[st->nbusy].pid = pid;
            *rp = '\0';
            snprintf(st->busy[st->nbusy].comm, sizeof st->busy[0].comm, "%s", lp + 1);
        }
        st->nbusy++;
    }
    closedir(d);
}

void machine_check(struct machine_state *st)
{
    memset(st, 0, sizeof *st);
    FILE *f = fopen("/proc/loadavg", "re");
    if (f) {
        if (fscanf(f, "%lf %lf %lf", &st->load[0], &st->load[1], &st->load[2]) != 3)
            st->load[0] = st->load[1] = st->load[2] = 0;
        fclose(f);
    }
    st->cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (st->cores < 1)
        st->cores = 1;
    busy_processes(st);
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
