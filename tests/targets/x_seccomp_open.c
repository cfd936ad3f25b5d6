/* x_seccomp_open MODE [tsync]: installs a seccomp filter that kills the process on openat (and
 * open), as sandboxes do, then burns 0.3 s of CPU, prints one line and ends with status 3.
 * MODE: exit (exit(3)), ret (return 3 from main), _exit (_exit(3)), term (SIGTERM to itself),
 * die (opens a file: the filter kills the process with SIGSYS, no wrapper sees it), dup2
 * (opens x_seccomp_dup2.txt, empty, before the filter, then dup2s it onto the 64 numbers from
 * the shim's first, min(512, half the descriptor limit), where the shim keeps its files open for
 * a filter; then as exit: nothing may be written into that file).
 * tsync: the filter is installed with SECCOMP_FILTER_FLAG_TSYNC (every thread of the process,
 * the shim's too); otherwise through prctl, on the main thread only. Without the shim: the line,
 * then status 3 (or SIGTERM). */
#include "burn.h"
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_filtered)

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "exit";
    int tsync = argc > 2 && strcmp(argv[2], "tsync") == 0;
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 2, 0),
#ifdef SYS_open
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_open, 1, 0),
#else
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 1, 0),
#endif
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
    };
    struct sock_fprog prog = { sizeof f / sizeof f[0], f };
    int dup_fd = -1;
    if (strcmp(mode, "dup2") == 0) {
        dup_fd = open("x_seccomp_dup2.txt", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (dup_fd < 0)
            return 2;
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return 2;
    int rc = tsync ? (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog)
                   : prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
    if (rc != 0) {
        perror("seccomp");
        return 2;
    }
    if (dup_fd >= 0) {
        struct rlimit rl;
        long first = 512;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur / 2 < 512)
            first = (long)rl.rlim_cur / 2;
        for (long n = first; n < first + 64; n++)
            dup2(dup_fd, (int)n);
    }
    burn_filtered(0.3);
    printf("filtered ok\n");
    fflush(stdout);
    if (strcmp(mode, "_exit") == 0)
        _exit(3);
    if (strcmp(mode, "term") == 0)
        kill(getpid(), SIGTERM);
    if (strcmp(mode, "die") == 0)
        open("/dev/null", O_RDONLY);
    if (strcmp(mode, "ret") == 0)
        return 3;
    exit(3);
}
