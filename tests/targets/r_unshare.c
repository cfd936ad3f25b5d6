/* r_unshare: the namespace calls the kernel grants only to a process of one thread, made by a
 * process that is one thread as far as the target knows: setns into its own mount namespace
 * (C library), unshare of a user namespace (C library; then, its ids mapped as `unshare -r`
 * does, a nested one through syscall()), between two bursts
 * of CPU (0.3 s before, 0.6 s after: at 997 Hz more than a ring holds, so the samples after the
 * calls need the shim's writer back). Then, with a thread of its own started, unshare once more:
 * refused (EINVAL) with or without the shim. One line per call: its result. Exit status 0. */
#define _GNU_SOURCE
#include "burn.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_before)
DEFINE_BURN(burn_after)

static void say(const char *what, long rc)
{
    printf("%s: %s\n", what, rc == 0 ? "ok" : strerrorname_np(errno));
    fflush(stdout);
}

/* Root in the new namespace, as the creator's ids: a nested one needs them mapped. */
static int map_ids(uid_t uid, gid_t gid)
{
    char line[64];
    const char *files[] = { "/proc/self/setgroups", "/proc/self/gid_map", "/proc/self/uid_map" };
    for (int i = 0; i < 3; i++) {
        if (i == 0)
            snprintf(line, sizeof line, "deny");
        else
            snprintf(line, sizeof line, "0 %d 1", i == 1 ? (int)gid : (int)uid);
        int fd = open(files[i], O_WRONLY | O_CLOEXEC);
        if (fd < 0)
            return -1;
        ssize_t n = write(fd, line, strlen(line));
        close(fd);
        if (n != (ssize_t)strlen(line))
            return -1;
    }
    return 0;
}

static void *sleeper(void *arg)
{
    (void)arg;
    pause();
    return NULL;
}

int main(void)
{
    burn_before(0.3);
    int fd = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
    say("setns mnt", fd < 0 ? -1 : setns(fd, CLONE_NEWNS));
    if (fd >= 0)
        close(fd);
    uid_t uid = geteuid();
    gid_t gid = getegid();
    say("unshare user", unshare(CLONE_NEWUSER));
    say("map ids", map_ids(uid, gid));
    say("syscall unshare user", syscall(SYS_unshare, CLONE_NEWUSER));
    burn_after(0.6);
    pthread_t t;
    if (pthread_create(&t, NULL, sleeper, NULL) != 0)
        return 1;
    say("unshare user, two threads", unshare(CLONE_NEWUSER));
    return 0;
}
