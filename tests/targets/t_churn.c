/* t_churn [BATCHES]: threads come and go. BATCHES times, starts 4 threads that each burn 3 ms of
 * CPU in burn_churn and exit, and joins them. Prints
 *   "fds_before N fds_after N timers_before N timers_after N threads N"
 * counting open descriptors (/proc/self/fd) and POSIX timers (/proc/self/timers) after a
 * settle at the start (20 ms of CPU, then 1.3 s asleep: past the shim's once-a-second checks,
 * whose files it keeps open from the first one on) and after the last join: each thread's perf
 * event or timer, and any file of a thread's the shim kept, must be closed when the thread
 * exits (counted again 1.1 s after the last join: the shim closes a thread's at its writer's
 * next pass). The main thread's own /proc files (/proc/<pid>/task/<pid>/...), which the shim keeps
 * from its first read of them (the main thread's name and mask, read once it has samples or
 * CPU time the samples miss: during the churn), are the main thread's, not the churned
 * threads', and are not counted. */
#define _GNU_SOURCE
#include "burn.h"
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_churn)

static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    if (!d)
        return -1;
    char mine[64];
    int mine_len = snprintf(mine, sizeof mine, "/proc/%d/task/%d/", (int)getpid(), (int)getpid());
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], link[256];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t len = readlink(path, link, sizeof link - 1);
        if (len > 0) {
            link[len] = 0;
            if (strncmp(link, mine, (size_t)mine_len) == 0)
                continue;
        }
        n++;
    }
    closedir(d);
    return n - 1; /* the directory's own descriptor */
}

static int count_timers(void)
{
    FILE *f = fopen("/proc/self/timers", "r");
    char line[256];
    int n = 0;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "ID:", 3) == 0)
            n++;
    fclose(f);
    return n;
}

static void *run(void *arg)
{
    (void)arg;
    burn_churn(0.003);
    return NULL;
}

int main(int argc, char **argv)
{
    int batches = argc > 1 ? atoi(argv[1]) : 60;
    /* Let the shim's own start settle: a first sample (libunwind is set up, its pipe made, by
     * the writer once one has come), then its threads' passes. */
    burn_churn(0.02);
    usleep(1300000);
    int fds0 = count_fds(), timers0 = count_timers();
    for (int b = 0; b < batches; b++) {
        pthread_t th[4];
        for (int i = 0; i < 4; i++)
            if (pthread_create(&th[i], NULL, run, NULL) != 0) {
                perror("pthread_create");
                return 1;
            }
        for (int i = 0; i < 4; i++)
            pthread_join(th[i], NULL);
    }
    /* The shim closes what it kept of a thread when it hands the thread's slot back, at its
     * writer's next pass after the exit (every 250 ms at most, a second when idle). */
    usleep(1100000);
    printf("fds_before %d fds_after %d timers_before %d timers_after %d threads %d\n", fds0, count_fds(),
           timers0, count_timers(), 4 * batches);
    return 0;
}
