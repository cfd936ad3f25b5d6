/* mem.c: host memory of the run's processes: RssAnon (anonymous resident memory, the part a
 * model's weights and KV cache live in when on the host) from /proc/<pid>/statm, per pid and
 * summed. Reads through the shim's kept descriptors (fdcache.h) into a stack buffer: no stdio,
 * no allocation. Must never abort or print; a pid that is gone is skipped silently (it holds
 * no memory), one that cannot be read is logged once. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "counters/parts.h"
#include "fdcache.h"
#include "log.h"

/* RssAnon of pid in KiB into *kib, from /proc/<pid>/statm: resident minus shared pages is
 * exactly the kernel's anonymous page count, the figure status prints as RssAnon (statm is
 * resident = file + shmem + anon, shared = file + shmem), at a fraction of the cost of
 * generating the whole status file (the leader reads it every counter period). 0, or -1 with
 * errno: ENOENT/ESRCH when the process is gone or has no memory of its own (a zombie, a kernel
 * thread: all zeros), ENODATA when the line cannot be parsed. */
static int rss_anon(pid_t pid, long long *kib) {
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/statm", (int)pid);
    ssize_t n = fdcache_read(path, buf, sizeof buf);   /* a kept descriptor: no low number taken */
    if (n <= 0) {
        if (n == 0) errno = ESRCH;
        return -1;
    }
    char *end;
    long long size = strtoll(buf, &end, 10);
    long long resident = strtoll(end, &end, 10);
    char *sh = end;
    long long shared = strtoll(sh, &end, 10);
    if (end == sh || resident < shared || shared < 0) {
        errno = ENODATA;
        return -1;
    }
    if (size == 0 && resident == 0) {
        errno = ESRCH;
        return -1;
    }
    long page_kib = sysconf(_SC_PAGESIZE) / 1024;
    *kib = (resident - shared) * (page_kib > 0 ? page_kib : 4);
    return 0;
}

void mem_add_json(cJSON *obj, const pid_t *pids, int npids) {
    cJSON *by = cJSON_CreateObject();
    long long sum = 0;
    int nread = 0;
    for (int i = 0; i < npids; i++) {
        if (pids[i] <= 0 || counters_pid_seen_before(pids, i)) continue;
        long long kib;
        if (rss_anon(pids[i], &kib) != 0) {
            if (errno == ENOENT || errno == ESRCH) continue;
            char why[160], what[48];
            snprintf(what, sizeof what, "/proc/%d/statm", (int)pids[i]);
            if (errno == ENODATA)
                snprintf(why, sizeof why, "%s: not the 7 page counts expected", what);
            else
                counters_errtext(why, sizeof why, what, errno);
            ps_log_once("mem.rss_anon", "counters: RssAnon not read: %s; that process's memory "
                        "is left out", why);
            continue;
        }
        sum += kib;
        nread++;
        if (by) {
            char key[16];
            snprintf(key, sizeof key, "%d", (int)pids[i]);
            cJSON_AddNumberToObject(by, key, (double)kib);
        }
    }
    /* An empty sum is 0 only when nothing was asked; pids given and none readable: no value. */
    if (nread > 0 || npids == 0) cJSON_AddNumberToObject(obj, "rss_anon_kib", (double)sum);
    if (by) cJSON_AddItemToObject(obj, "rss_anon_by_pid", by);
}
