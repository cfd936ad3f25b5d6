/* r_dup2all FILE: dup2s FILE (created empty) onto every number above it up to its descriptor
 * limit, the limit included in none (legal: dup2 onto a number in use closes that one first),
 * then runs 0.4 s of CPU on a second thread (samples, the shim's threads' passes, the leader's
 * watcher) and waits 0.3 s, then closes every number. Prints how many dup2s and closes failed
 * and the file's size: "dup2 failed 0, close failed 0, bytes 0" without the shim. A shim that
 * kept one of its descriptors on a number the target took (no number above free to move it to)
 * refused the target's close (EBADF) and wrote into its file (the wake-up eventfd's 8 bytes, the
 * leader's state). */
#include "burn.h"
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_dup2all)

static void *worker(void *arg)
{
    burn_dup2all(0.4);
    return arg;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    struct rlimit r;
    if (getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur > 65536)
        return 2;
    int lim = (int)r.rlim_cur;
    int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return 2;
    int dup_failed = 0, close_failed = 0;
    for (int n = fd + 1; n < lim; n++)
        if (dup2(fd, n) != n)
            dup_failed++;
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    usleep(300000);
    for (int n = fd + 1; n < lim; n++)
        if (close(n) != 0)
            close_failed++;
    struct stat st;
    if (fstat(fd, &st) != 0)
        return 2;
    printf("dup2 failed %d, close failed %d, bytes %lld\n", dup_failed, close_failed, (long long)st.st_size);
    return 0;
}
