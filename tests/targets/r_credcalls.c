/* r_credcalls MODE: credential calls made where the shim's threads must follow them without
 * getting in the way, each ending with setpriv's steps to nobody (util-linux's setpriv by hand:
 * PR_SET_KEEPCAPS, setresuid, capset on this thread, setresgid), which the C library aborts on
 * when the threads' credentials differ. One line per step; exit status 0. Root only.
 *   burn      the steps alone, between bursts of CPU (0.3 s before, 0.6 s after: at 997 Hz more
 *             than a ring holds, so the samples after them need the shim's writer), then the
 *             ids the process ends with
 *   threads   4 threads make 100 prctl(PR_SET_KEEPCAPS) calls each at once, then the steps
 *   handler   a SIGALRM handler (every millisecond) makes prctl(PR_SET_KEEPCAPS) calls while the
 *             main thread mallocs and frees for 0.5 s, then the steps
 *   clone     glibc's clone() without CLONE_VM at the start of main: the child calls
 *             setresuid(0, 0, 0), prints, and _exits; the parent waits, then the steps
 *   seccomp   a seccomp filter on this thread that kills the process on open or openat, then
 *             prctl(PR_SET_KEEPCAPS) and 0.5 s of CPU (no steps: capset needs nothing opened,
 *             but the ids' change would)
 *   flip      for 0.1 s: capset without CAP_SETGID in the effective set, capset with it again,
 *             setgroups(0, NULL) (every thread); prints "flips ok" (while the shim starts
 *             libunwind's warm-up thread, which must hold the same sets), then the steps
 *   nested    500 rounds: a SIGALRM handler (every 300 us) drops CAP_SETGID from the effective
 *             set while the main thread raises it again with capset, then, SIGALRM blocked,
 *             setgroups(0, NULL) (every thread; EPERM where the handler came last): the count of
 *             rounds, then the steps */
#define _GNU_SOURCE
#include "burn.h"
#include <errno.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_filtered)
DEFINE_BURN(burn_before)
DEFINE_BURN(burn_after)

int capset(cap_user_header_t hdr, const cap_user_data_t data);

static void say(const char *what, long rc)
{
    printf("%s: %s\n", what, rc == 0 ? "ok" : strerrorname_np(errno));
    fflush(stdout);
}

static void to_nobody(void)
{
    say("keepcaps", prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0));
    say("setresuid", setresuid(65534, 65534, 65534));
    struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof data);
    long rc = syscall(SYS_capget, &hdr, data);
    if (rc == 0) {
        data[0].effective |= data[0].permitted & ((1u << CAP_SETGID) | (1u << CAP_SETUID));
        rc = capset(&hdr, data);
    }
    say("capset", rc);
    say("setresgid", setresgid(65534, 65534, 65534));
}

static void *keepcaps_loop(void *arg)
{
    long failed = 0;
    for (int i = 0; i < 100; i++)
        failed += prctl(PR_SET_KEEPCAPS, (i + (long)arg) & 1, 0, 0, 0) != 0;
    return (void *)failed;
}

static volatile sig_atomic_t handler_calls, handler_failed;

static void on_alarm(int sig)
{
    (void)sig;
    int saved = errno;
    handler_failed += prctl(PR_SET_KEEPCAPS, handler_calls & 1, 0, 0, 0) != 0;
    handler_calls++;
    errno = saved;
}

static struct __user_cap_header_struct nested_hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
static struct __user_cap_data_struct nested_drop[2];

static void on_alarm_drop(int sig)
{
    (void)sig;
    int saved = errno;
    capset(&nested_hdr, nested_drop);
    errno = saved;
}

static char child_stack[1 << 16];

static int clone_child(void *arg)
{
    (void)arg;
    say("child setresuid", setresuid(0, 0, 0));
    _exit(0);
}

static int filter_opens(void)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_open, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { sizeof f / sizeof f[0], f };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "burn") == 0) {
        burn_before(0.3);
        to_nobody();
        burn_after(0.6);
        printf("uid %d gid %d\n", (int)geteuid(), (int)getegid());
        return 0;
    } else if (strcmp(mode, "threads") == 0) {
        pthread_t t[4];
        long failed = 0;
        for (long i = 0; i < 4; i++)
            pthread_create(&t[i], NULL, keepcaps_loop, (void *)i);
        for (int i = 0; i < 4; i++) {
            void *r;
            pthread_join(t[i], &r);
            failed += (long)r;
        }
        printf("400 calls, %ld failed\n", failed);
    } else if (strcmp(mode, "handler") == 0) {
        signal(SIGALRM, on_alarm);
        struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
        setitimer(ITIMER_REAL, &it, NULL);
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do {
            void *p[16];
            for (int i = 0; i < 16; i++)
                p[i] = malloc(64 + 32 * (size_t)i);
            for (int i = 0; i < 16; i++)
                free(p[i]);
            clock_gettime(CLOCK_MONOTONIC, &t);
        } while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 500000000L);
        struct itimerval off = { { 0, 0 }, { 0, 0 } };
        setitimer(ITIMER_REAL, &off, NULL);
        printf("handler calls: %s, %d failed\n", handler_calls > 100 ? "more than 100" : "too few",
               (int)handler_failed);
    } else if (strcmp(mode, "clone") == 0) {
        pid_t pid = clone(clone_child, child_stack + sizeof child_stack, SIGCHLD, NULL);
        int status = -1;
        if (pid > 0)
            waitpid(pid, &status, 0);
        printf("child status %d\n", status);
    } else if (strcmp(mode, "flip") == 0) {
        struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
        struct __user_cap_data_struct all[2], drop[2];
        memset(all, 0, sizeof all);
        if (syscall(SYS_capget, &hdr, all) != 0)
            return 1;
        memcpy(drop, all, sizeof drop);
        drop[0].effective &= ~(1u << CAP_SETGID);
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do {
            if (capset(&hdr, drop) != 0 || capset(&hdr, all) != 0 || setgroups(0, NULL) != 0) {
                printf("flips failed: %s\n", strerrorname_np(errno));
                return 1;
            }
            clock_gettime(CLOCK_MONOTONIC, &t);
        } while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 100000000L);
        printf("flips ok\n");
    } else if (strcmp(mode, "nested") == 0) {
        struct __user_cap_data_struct all[2];
        memset(all, 0, sizeof all);
        if (syscall(SYS_capget, &nested_hdr, all) != 0)
            return 1;
        memcpy(nested_drop, all, sizeof nested_drop);
        nested_drop[0].effective &= ~(1u << CAP_SETGID);
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_alarm_drop;
        sa.sa_flags = SA_RESTART;
        sigaction(SIGALRM, &sa, NULL);
        sigset_t alarm_set;
        sigemptyset(&alarm_set);
        sigaddset(&alarm_set, SIGALRM);
        sigprocmask(SIG_BLOCK, &alarm_set, NULL);
        struct itimerval it = { { 0, 300 }, { 0, 300 } };
        setitimer(ITIMER_REAL, &it, NULL);
        for (int i = 0; i < 500; i++) {
            sigprocmask(SIG_UNBLOCK, &alarm_set, NULL);
            capset(&nested_hdr, all);
            sigprocmask(SIG_BLOCK, &alarm_set, NULL);
            setgroups(0, NULL); /* EPERM or not: the same on every thread */
        }
        struct itimerval off = { { 0, 0 }, { 0, 0 } };
        setitimer(ITIMER_REAL, &off, NULL);
        capset(&nested_hdr, all);
        printf("500 rounds\n");
    } else if (strcmp(mode, "seccomp") == 0) {
        say("filter", filter_opens());
        say("keepcaps", prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0));
        burn_filtered(0.5);
        printf("done\n");
        return 0;
    } else {
        return 2;
    }
    fflush(stdout);
    to_nobody();
    return 0;
}
