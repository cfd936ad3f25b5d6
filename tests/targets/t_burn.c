/* t_burn SECONDS REPORT TAG: burns SECONDS of CPU in burn_main, then appends one JSON line to
 * REPORT (one write): {"tag":TAG,"pid":N,"ppid":N,"fn":"burn_main","addr":N,"cpu_ns":N}. */
#define _GNU_SOURCE
#include "burn.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_main)

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: t_burn SECONDS REPORT TAG\n");
        return 2;
    }
    burn_main(atof(argv[1]));
    char buf[512];
    int n = snprintf(buf, sizeof buf,
                     "{\"tag\":\"%s\",\"pid\":%d,\"ppid\":%d,\"fn\":\"burn_main\",\"addr\":%lu,\"cpu_ns\":%llu}\n",
                     argv[3], (int)getpid(), (int)getppid(), (unsigned long)(uintptr_t)burn_main,
                     (unsigned long long)thread_cpu_ns());
    int fd = open(argv[2], O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd < 0 || write(fd, buf, n) != n) {
        perror(argv[2]);
        return 1;
    }
    close(fd);
    return 0;
}
