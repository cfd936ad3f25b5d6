/* e_wallclock: marks phases with t= on the wrong clocks (issue 8, defect 11), as a shell script
 * writing `t=$(date +%s%N)` does. Appends to the markers file named by argv[1], each line with
 * one write, burning 50 ms of CPU inside each phase:
 *   1-2  wall    t= CLOCK_REALTIME in ns (57 years after CLOCK_MONOTONIC's zero, here)
 *   3-4  mono    t= CLOCK_MONOTONIC in ns: the right clock
 *   5-6  secs    t= CLOCK_MONOTONIC in seconds
 *   7-8  future  t= CLOCK_MONOTONIC + 2 minutes
 * then prints "done" and exits 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include "burn.h"

DEFINE_BURN_SINK
DEFINE_BURN(burn_cpu)

static unsigned long long ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static void mark(int fd, const char *name, const char *event, unsigned long long t)
{
    char line[128];
    int n = snprintf(line, sizeof line, "%s %s t=%llu\n", name, event, t);
    if (write(fd, line, (size_t)n) != n)
        exit(3);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    int fd = open(argv[1], O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd < 0)
        return 2;
    mark(fd, "wall", "begin", ns(CLOCK_REALTIME));
    burn_cpu(0.05);
    mark(fd, "wall", "end", ns(CLOCK_REALTIME));
    mark(fd, "mono", "begin", ns(CLOCK_MONOTONIC));
    burn_cpu(0.05);
    mark(fd, "mono", "end", ns(CLOCK_MONOTONIC));
    mark(fd, "secs", "begin", ns(CLOCK_MONOTONIC) / 1000000000ull);
    burn_cpu(0.05);
    mark(fd, "secs", "end", ns(CLOCK_MONOTONIC) / 1000000000ull);
    mark(fd, "future", "begin", ns(CLOCK_MONOTONIC) + 120000000000ull);
    burn_cpu(0.05);
    mark(fd, "future", "end", ns(CLOCK_MONOTONIC) + 120000000000ull);
    close(fd);
    printf("done\n");
    return 0;
}
