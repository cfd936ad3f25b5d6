/* r_heldswap VICTIM_PREFIX: a target that replaces the shim's kept descriptors behind its
 * wrappers. It burns 0.5 s of CPU, then finds its descriptors that name a sample file
 * (cpuprof.*.bin) or counters.jsonl, and for each makes a file of its own, VICTIM_PREFIX<n>, and
 * puts it on that number with a raw dup3 system call (no wrapper sees it); burns 1.5 s more and
 * prints "swapped N at <CLOCK_MONOTONIC ns>" and, for each victim, "victim <n> <its size>".
 * r_heldswap vfork: burns 0.5 s, then a vfork child dup2s /dev/null (through the C library's
 * dup2) onto the descriptor that names the sample file, then dup2s that number onto 60 and
 * closes it, and exits 0 when all three worked; the parent burns 1.0 s more and prints "vfork
 * <descriptors naming a sample file, before> <after> <the child's exit status>": the child's
 * table is its own, so the parent's are as before and the number is the child's to use. The shim must never
 * write into those files (size 0), and must go on writing its own. Exit 0. */
#define _GNU_SOURCE
#include "burn.h"
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_swap)

/* The next descriptor from *fd on that names a sample file (counters: or counters.jsonl too),
 * or -1; *fd moves past it. */
static int next_shim_fd(int *fd, int counters)
{
    for (; *fd < 4096; ++*fd) {
        char path[64], link[512];
        snprintf(path, sizeof path, "/proc/self/fd/%d", *fd);
        ssize_t len = readlink(path, link, sizeof link - 1);
        if (len <= 0)
            continue;
        link[len] = 0;
        if ((strstr(link, "/cpuprof.") && strstr(link, ".bin")) || (counters && strstr(link, "/counters.jsonl")))
            return (*fd)++;
    }
    return -1;
}

static int bin_fds(int *first)
{
    int n = 0, from = 3;
    *first = -1;
    for (int fd; (fd = next_shim_fd(&from, 0)) >= 0; n++)
        if (*first < 0)
            *first = fd;
    return n;
}

static int vfork_case(void)
{
    burn_swap(0.5);
    int fd, before = bin_fds(&fd);
    if (fd < 0)
        return 5;
    pid_t pid = vfork();
    if (pid == 0) {
        int null = open("/dev/null", O_RDONLY);
        int ok = dup2(null, fd) == fd && dup2(fd, 60) == 60 && close(fd) == 0;
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return 6;
    burn_swap(1.0);
    int ignored, after = bin_fds(&ignored);
    printf("vfork %d %d %d\n", before, after, WIFEXITED(status) ? WEXITSTATUS(status) : 128);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    if (strcmp(argv[1], "vfork") == 0)
        return vfork_case();
    burn_swap(0.5);
    int swapped = 0, victims[16];
    uint64_t at = mono_ns();
    int from = 3;
    for (int fd; swapped < 16 && (fd = next_shim_fd(&from, 1)) >= 0;) {
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
