/* mem.c: host memory of the run's processes: RssAnon (anonymous resident memory, the part a
 * model's weights and KV cache live in when on the host) from /proc/<pid>/status, per pid and
 * summed. Reads with plain open/read/close (counters_sys_close) into a stack buffer: no stdio,
 * no allocation, no descriptor kept. Must never abort or print; a pid that is gone is skipped silently (it holds
 * no memory), one that cannot be read is logged once. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "counters/parts.h"
#include "log.h"

/* RssAnon of pid in KiB into *kib: 0, or -1 with errno: ENOENT/ESRCH when the process is gone
 * or has no memory of its own (a zombie, a kernel thread: no VmRSS line either), ENODATA when it
 * has memory but no RssAnon line (kernels before 4.5). */
static int rss_anon(pid_t pid, long long *kib) {
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    size_t len = 0;
    int skipping = 0;   /* inside a line longer than buf (a huge Groups: list) */
    int has_mm = 0;     /* saw VmRSS: */
    ssize_t n;
    for (;;) {
        n = read(fd, buf + len, sizeof buf - len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        len += (size_t)n;
        size_t start = 0;
        char *nl;
        while ((nl = memchr(buf + start, '\n', len - start)) != NULL) {
            char *line = buf + start;
            size_t ll = (size_t)(nl - line);
            if (!skipping && ll > 8 && memcmp(line, "RssAnon:", 8) == 0) {
                char num[48];
                size_t k = ll - 8 < sizeof num - 1 ? ll - 8 : sizeof num - 1;
                memcpy(num, line + 8, k);
                num[k] = '\0';
                char *end;
                long long v = strtoll(num, &end, 10);
                counters_sys_close(fd);
                if (end == num || v < 0) {
                    errno = ENODATA;
                    return -1;
                }
                *kib = v;
                return 0;
            }
            if (!skipping && ll > 6 && memcmp(line, "VmRSS:", 6) == 0) has_mm = 1;
            skipping = 0;
            start = (size_t)(nl - buf) + 1;
        }
        memmove(buf, buf + start, len - start);
        len -= start;
        if (len == sizeof buf) {
            skipping = 1;
            len = 0;
        }
    }
    int err = n < 0 ? errno : has_mm ? ENODATA : ESRCH;
    if (err != EBADF) counters_sys_close(fd);   /* EBADF: the target closed it; the number is not ours */
    errno = err;
    return -1;
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
            snprintf(what, sizeof what, "/proc/%d/status", (int)pids[i]);
            if (errno == ENODATA)
                snprintf(why, sizeof why, "%s: no RssAnon line (kernel before 4.5?)", what);
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
