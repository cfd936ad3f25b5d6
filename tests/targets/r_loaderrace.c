/* r_loaderrace: a target whose thread dup2()s a small file of its own onto the low descriptor
 * numbers 3 to 5 and closes them again, over and over (a shell's redirections, a server
 * re-pointing its standard streams), while the main thread computes. A profiler that loads a
 * library of its own meanwhile (the shim loads libunwind at the first sample) has the loader
 * open it at the lowest free number: a dup2 onto that number between the loader's open and its
 * mmap would have the loader map this small file instead. Must never depend on a profiler
 * being there. Prints "rounds N" and exits 0. Argument: CPU seconds of the main thread (0.4). */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "burn.h"

DEFINE_BURN_SINK
DEFINE_BURN(loaderrace_burn)

static _Atomic int stop;
static int file_fd;
static long rounds;

static void *redirect_low(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        for (int k = 3; k <= 5; k++) {
            if (k == file_fd)
                continue;
            if (dup2(file_fd, k) == k)
                close(k);
        }
        rounds++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 0.4;
    const char *path = "r_loaderrace.dat";
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, "not an ELF file\n", 16) != 16)
        return 2;
    file_fd = fcntl(fd, F_DUPFD_CLOEXEC, 200); /* its own number, out of the way */
    close(fd);
    if (file_fd < 0)
        return 2;
    pthread_t t;
    if (pthread_create(&t, NULL, redirect_low, NULL) != 0)
        return 2;
    /* A first sample's worth of CPU, then a core left to the thread while the profiler's writer
     * would be loading, then the rest. */
    loaderrace_burn(0.005);
    usleep(100000);
    loaderrace_burn(seconds);
    atomic_store(&stop, 1);
    pthread_join(t, NULL);
    unlink(path);
    printf("rounds %ld\n", rounds);
    return 0;
}
