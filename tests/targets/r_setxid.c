/* r_setxid: setpriv's way to another user (util-linux), by hand, between bursts of CPU (0.3 s
 * before, 0.6 s after: at 997 Hz more than a ring holds). PR_SET_KEEPCAPS, then setresuid to
 * nobody (the C library makes it on every thread), capset on this thread alone (CAP_SETGID and
 * CAP_SETUID effective again), then setresgid (every thread again: the C library aborts the
 * process when it fails on some thread and not on another). One line per step, then the ids.
 * Root only. */
#define _GNU_SOURCE
#include "burn.h"
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_before)
DEFINE_BURN(burn_after)

int capset(cap_user_header_t hdr, const cap_user_data_t data);

static void say(const char *what, long rc)
{
    printf("%s: %s\n", what, rc == 0 ? "ok" : strerrorname_np(errno));
    fflush(stdout);
}

int main(void)
{
    burn_before(0.3);
    say("keepcaps", prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0));
    say("setresuid", setresuid(65534, 65534, 65534));
    struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof data);
    long rc = syscall(SYS_capget, &hdr, data);
    if (rc == 0) {
        unsigned mask = (1u << CAP_SETGID) | (1u << CAP_SETUID);
        data[0].effective |= data[0].permitted & mask;
        rc = capset(&hdr, data);
    }
    say("capset", rc);
    say("setresgid", setresgid(65534, 65534, 65534));
    burn_after(0.6);
    printf("uid %d gid %d\n", (int)geteuid(), (int)getegid());
    return 0;
}
