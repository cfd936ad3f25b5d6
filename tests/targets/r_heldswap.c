/* r_heldswap VICTIM_PREFIX: a target that replaces the shim's kept descriptors behind its
 * wrappers. It burns 0.5 s of CPU, then finds its descriptors that name a sample file
 * (cpuprof.*.bin) or counters.jsonl, and for each makes a file of its own, VICTIM_PREFIX<n>, and
 * puts it on that number with a raw dup3 system call (no wrapper sees it); burns 1.5 s more and
 * prints "swapped N at <CLOCK_MONOTONIC ns>" and, for each victim, "victim <n> <its size>". The shim must never
 * write into those files (size 0), and must go on writing its own. Exit 0. */
#define _GNU_SOURCE
#include "burn.h"
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_swap)

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    burn_swap(0.5);
    int swapped = 0, victims[16];
    uint64_t at = mono_ns();
    for (int fd = 3; fd < 4096 && swapped < 16; fd++) {
        char path[64], link[512];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(path, link, sizeof link - 1);
        if (n <= 0)
            continue;
        link[n] = 0;
        if (!(strstr(link, "/cpuprof.") && strstr(link, ".bin")) && !strstr(link, "/counters.jsonl"))
            continue;
        char name[600];
        snprintf(name, sizeof name, "%s%d", argv[1], swapped);
        int v = open(name, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (v < 0)
            return 2;
        if (syscall(SYS_dup3, v, fd, O_CLOEXEC) != fd)
            return 3;
        close(v);
        victims[swapped++] = fd;
    }
    burn_swap(1.5);
    printf("swapped %d at %llu\n", swapped, (unsigned long long)at);
    for (int i = 0; i < swapped; i++) {
        struct stat st;
        if (fstat(victims[i], &st) != 0)
            return 4;
        printf("victim %d %lld\n", i, (long long)st.st_size);
    }
    return 0;
}
