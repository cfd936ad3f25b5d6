/* r_unwpipe DIR: after 0.5 s of CPU (libunwind loaded, its memory-validation pipe made, above
 * half the descriptor limit: 512 and up where the limit is 1024 or more), dup2s files of its own
 * (DIR/<n>, empty) onto every number from 505 to 539, burns 1.6 s on threads (stack walks),
 * then checks each number: no byte in the file but its own, its own write goes through, close
 * returns 0. Prints "bad=0" without the shim. A libunwind that kept its pipe's numbers would
 * read, write and close the target's files there. */
#include "burn.h"
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_unwpipe)

static void *worker(void *arg)
{
    burn_unwpipe(0.3);
    return arg;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    burn_unwpipe(0.5);
    char path[4200];
    for (int n = 505; n < 540; n++) {
        snprintf(path, sizeof path, "%s/%d", argv[1], n);
        int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || dup2(fd, n) != n)
            printf("fd %d: not set up\n", n);
        if (fd >= 0)
            close(fd);
    }
    for (int k = 0; k < 4; k++) {
        pthread_t t;
        pthread_create(&t, NULL, worker, NULL);
        burn_unwpipe(0.1);
        pthread_join(t, NULL);
    }
    int bad = 0;
    for (int n = 505; n < 540; n++) {
        struct stat st;
        char line[32];
        int len = snprintf(line, sizeof line, "fd %d\n", n);
        if (fstat(n, &st) != 0 || st.st_size != 0 || lseek(n, 0, SEEK_CUR) != 0) {
            printf("fd %d: not the empty file it was given\n", n);
            bad++;
        } else if (write(n, line, (size_t)len) != len) {
            printf("fd %d: the write failed\n", n);
            bad++;
        } else if (close(n) != 0) {
            printf("fd %d: close failed\n", n);
            bad++;
        }
    }
    printf("bad=%d\n", bad);
    return 0;
}
