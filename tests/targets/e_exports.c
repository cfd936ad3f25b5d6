/* e_exports MARKERS: the target of t_tools_exports. It marks nested phases with an attribute
 * through the markers file (one write a line) and burns CPU in a distinct function in each,
 * on two threads:
 *   req (request=7)               burn_outer 0.1 s
 *     step (nested in req)        burn_inner 0.25 s on the main thread, burn_worker 0.25 s on
 *                                 a second thread ("worker")
 * Built from a relative source path by the test, so its DWARF names the file relative to the
 * compilation directory. */
#define _GNU_SOURCE
#include "burn.h"
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_outer)
DEFINE_BURN(burn_inner)
DEFINE_BURN(burn_worker)

static int fd;

static void mark(const char *name, const char *event, const char *rest)
{
    char buf[256];
    int n = snprintf(buf, sizeof buf, "%s %s t=%llu%s\n", name, event,
                     (unsigned long long)mono_ns(), rest);
    if (write(fd, buf, (size_t)n) != n)
        perror("write markers");
}

static void *worker(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "worker");
    burn_worker(0.25);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: e_exports MARKERS\n");
        return 2;
    }
    fd = open(argv[1], O_WRONLY | O_APPEND);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    mark("req", "begin", " request=7");
    burn_outer(0.1);
    mark("step", "begin", "");
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0)
        return 1;
    burn_inner(0.25);
    pthread_join(t, NULL);
    mark("step", "end", "");
    mark("req", "end", "");
    return 0;
}
