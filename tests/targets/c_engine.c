/* c_engine [fork] [hang]: the container tests' engine (tests/t_tools_container*.sh), installed
 * in the test image at /opt/psengine/bin/engine, a path the host does not have, so its names
 * can come only from the image. It marks its own phases through $LLMPERFSCOPE_MARKERS (one
 * write a line) and burns CPU in a distinct function in each:
 *   load    burn_load    0.3 s
 *   decode  burn_decode  0.5 s
 * With "fork", a child burns burn_child 0.6 s in a phase "child" while the parent decodes, and
 * the parent waits for it (two processes inside the container). With "hang", it sleeps forever
 * after load (the timeout tests). It exits 7, so a test sees the status passed through. */
#define _GNU_SOURCE
#include "burn.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_load)
DEFINE_BURN(burn_decode)
DEFINE_BURN(burn_child)

static int fd = -1;

static void mark(const char *name, const char *event)
{
    char buf[128];
    int n = snprintf(buf, sizeof buf, "%s %s\n", name, event);
    if (fd >= 0 && write(fd, buf, (size_t)n) != n)
        perror("write markers");
}

int main(int argc, char **argv)
{
    int forks = argc > 1 && strcmp(argv[1], "fork") == 0;
    int hang = argc > 1 && strcmp(argv[1], "hang") == 0;
    const char *path = getenv("LLMPERFSCOPE_MARKERS");
    if (path)
        fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    mark("load", "begin");
    burn_load(0.3);
    mark("load", "end");
    if (hang)
        for (;;)
            pause();
    pid_t child = -1;
    if (forks) {
        child = fork();
        if (child == 0) {
            mark("child", "begin");
            burn_child(0.6);
            mark("child", "end");
            _exit(0);
        }
    }
    mark("decode", "begin");
    burn_decode(0.5);
    mark("decode", "end");
    if (child > 0)
        waitpid(child, NULL, 0);
    printf("engine done\n");
    return 7;
}
