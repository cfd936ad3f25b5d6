/* hostpids.c: the run's pids as NVML lists them. Inside a container the run's processes know
 * only their pids in the container's pid namespace, while NVML lists host pids; perfscope, on
 * the host, keeps RUN_HOSTPIDS in the run folder up to date from NSpid ("<pid> <host pid>" a
 * line, docs/formats.md). Read on every call (a small file, bounded), so a process that appears
 * later is matched from the next reading on. Without the file (a host run) a pid is itself. Must
 * never abort, print or keep the file open. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "counters/parts.h"
#include "runfolder.h"

#define HOSTPIDS_MAX_BYTES (64 * 1024)

int counters_host_pids(const pid_t *pids, int npids, pid_t *out, int max)
{
    static char buf[HOSTPIDS_MAX_BYTES]; /* under the counters' lock */
    int n = npids < max ? npids : max;
    for (int i = 0; i < n; i++)
        out[i] = pids[i];
    char path[PATH_MAX];
    const char *op;
    ps_path(path, sizeof path, RUN_HOSTPIDS);
    if (counters_read_small(path, buf, sizeof buf, &op) <= 0)
        return n;
    for (char *line = buf; line && *line;) {
        char *end;
        long inner = strtol(line, &end, 10), host = 0;
        if (end != line && *end == ' ')
            host = strtol(end + 1, &end, 10);
        if (inner > 0 && host > 0 && (*end == '\n' || !*end))
            for (int i = 0; i < n; i++)
                if (pids[i] == (pid_t)inner)
                    out[i] = (pid_t)host;
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
    return n;
}
