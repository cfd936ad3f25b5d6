/* r_loadwait_lib: a library whose constructor runs a while under the loader's lock, as a heavy
 * library's initialisation does: LOADWAIT_CTOR=exit computes 0.1 s of CPU (samples come) and
 * then exits the process with status 3 (a library refusing its environment); =sleep sleeps
 * LOADWAIT_MS (default 1500), then makes LOADWAIT_DUP2 dup2 calls and, with LOADWAIT_SECCOMP=1,
 * installs an allow-all seccomp filter. */
#define _GNU_SOURCE
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "burn.h"

DEFINE_BURN_SINK
DEFINE_BURN(loadwait_ctor_burn)

__attribute__((constructor)) static void loadwait_ctor(void)
{
    const char *what = getenv("LOADWAIT_CTOR");
    if (what && strcmp(what, "exit") == 0) {
        loadwait_ctor_burn(0.1);
        fprintf(stderr, "ctor: exit 3\n");
        exit(3);
    }
    const char *e = getenv("LOADWAIT_MS");
    long ms = e ? atol(e) : 1500;
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
    e = getenv("LOADWAIT_DUP2");
    for (int i = 0, n = e ? atoi(e) : 0; i < n; i++)
        dup2(2, 50 + i);
    e = getenv("LOADWAIT_SECCOMP");
    if (e && atoi(e)) {
        struct sock_filter f[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
        struct sock_fprog p = { 1, f };
        prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        int rc = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &p, 0, 0);
        fprintf(stderr, "ctor: seccomp filter rc %d\n", rc);
    }
    fprintf(stderr, "ctor: done\n");
}
