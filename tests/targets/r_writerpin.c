/* r_writerpin MODE SECONDS: what the shim's own threads' CPU masks are (t_shim_writer_pin). The
 * shim's threads are the ones with SIGPROF blocked (every signal, from their first instruction).
 * Prints "start" and, after burning SECONDS of CPU on the main thread (samples, so the writer
 * passes), "end": each shim thread as tid:cpulist:state:voluntary switches (S and 1: asleep,
 * and never woken since it first slept), then "proc:" the main thread's cpulist. MODE
 * "move": right after "start", moves every shim thread to one CPU of the process's other than
 * the one it is on (printed as "moved CPU"), as a user's taskset -a would. */
#define _GNU_SOURCE
#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void cpulist(const cpu_set_t *s, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE && used + 8 < len; c++)
        if (CPU_ISSET(c, s))
            used += (size_t)snprintf(buf + used, len - used, "%s%d", used ? "," : "", c);
}

static int shim_threads(int *tids, int max)
{
    int n = 0;
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL && n < max) {
        int tid = atoi(e->d_name);
        if (tid <= 0 || tid == getpid())
            continue;
        char path[64], line[256];
        snprintf(path, sizeof path, "/proc/self/task/%d/status", tid);
        FILE *f = fopen(path, "r");
        unsigned long long blocked = 0;
        while (f && fgets(line, sizeof line, f))
            if (strncmp(line, "SigBlk:", 7) == 0)
                blocked = strtoull(line + 7, NULL, 16);
        if (f)
            fclose(f);
        if (blocked & (1ull << (SIGPROF - 1)))
            tids[n++] = tid;
    }
    if (d)
        closedir(d);
    return n;
}

static void show(const char *tag)
{
    int tids[16], n = shim_threads(tids, 16);
    char buf[512];
    printf("%s", tag);
    for (int i = 0; i < n; i++) {
        cpu_set_t s;
        if (sched_getaffinity(tids[i], sizeof s, &s) != 0)
            continue;
        /* state and voluntary switches: sleeping after one switch, the thread has not woken
         * since it first went to sleep */
        char path[64], line[256], state = '?';
        long vcs = -1;
        snprintf(path, sizeof path, "/proc/self/task/%d/status", tids[i]);
        FILE *f = fopen(path, "r");
        while (f && fgets(line, sizeof line, f)) {
            if (strncmp(line, "State:", 6) == 0)
                sscanf(line + 6, " %c", &state);
            else if (strncmp(line, "voluntary_ctxt_switches:", 24) == 0)
                vcs = atol(line + 24);
        }
        if (f)
            fclose(f);
        cpulist(&s, buf, sizeof buf);
        printf(" %d:%s:%c:%ld", tids[i], buf, state, vcs);
    }
    cpu_set_t s;
    sched_getaffinity(0, sizeof s, &s);
    cpulist(&s, buf, sizeof buf);
    printf(" proc:%s\n", buf);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    show("start");
    if (strcmp(argv[1], "move") == 0) {
        int tids[16], n = shim_threads(tids, 16);
        cpu_set_t proc;
        sched_getaffinity(0, sizeof proc, &proc);
        for (int i = 0; i < n; i++) {
            cpu_set_t now, one;
            sched_getaffinity(tids[i], sizeof now, &now);
            for (int c = 0; c < CPU_SETSIZE; c++)
                if (CPU_ISSET(c, &proc) && !(CPU_COUNT(&now) == 1 && CPU_ISSET(c, &now))) {
                    CPU_ZERO(&one);
                    CPU_SET(c, &one);
                    if (sched_setaffinity(tids[i], sizeof one, &one) == 0)
                        printf("moved %d\n", c);
                    break;
                }
        }
    }
    double secs = atof(argv[2]);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
    show("end");
    return 0;
}
