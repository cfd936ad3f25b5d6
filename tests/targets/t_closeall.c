/* t_closeall MODE DIR: burns 0.15 s in burn_before; closes every descriptor >= 3 (MODE
 * "range": close_range(3, ~0U, 0); "loop": close() 3..1023; "closefrom": closefrom(3)); then
 * opens DIR/own-1.txt, DIR/own-2.txt and a pipe, and for 0.3 s of CPU burns in burn_after in
 * steps of 10 ms, after each step writing one line to each file and a ping through the pipe that
 * it reads back. Prints "t_close=<CLOCK_MONOTONIC ns> lines=<N> pipe=ok|BAD"; exit 0 when the
 * pipe always gave back what was written. */
#define _GNU_SOURCE
#include "burn.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_before)
DEFINE_BURN(burn_after)

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: t_closeall range|loop|closefrom DIR\n");
        return 2;
    }
    burn_before(0.15);
    uint64_t t_close = mono_ns();
    if (strcmp(argv[1], "range") == 0) {
        if (close_range(3, ~0U, 0) != 0) {
            perror("close_range");
            return 1;
        }
    } else if (strcmp(argv[1], "loop") == 0) {
        for (int fd = 3; fd < 1024; fd++)
            close(fd);
    } else {
        closefrom(3);
    }
    char p1[4096], p2[4096];
    snprintf(p1, sizeof p1, "%s/own-1.txt", argv[2]);
    snprintf(p2, sizeof p2, "%s/own-2.txt", argv[2]);
    int f1 = open(p1, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int f2 = open(p2, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int pp[2];
    if (f1 < 0 || f2 < 0 || pipe(pp) != 0) {
        perror("open");
        return 1;
    }
    int lines = 0, pipe_ok = 1;
    uint64_t until = thread_cpu_ns() + 300000000ull;
    while (thread_cpu_ns() < until) {
        burn_after(0.01);
        char buf[128], back[128];
        int n = snprintf(buf, sizeof buf, "own-1 line %d\n", lines);
        if (write(f1, buf, n) != n)
            pipe_ok = 0;
        n = snprintf(buf, sizeof buf, "own-2 line %d\n", lines);
        if (write(f2, buf, n) != n)
            pipe_ok = 0;
        n = snprintf(buf, sizeof buf, "ping %d", lines);
        if (write(pp[1], buf, n) != n || read(pp[0], back, sizeof back) != n || memcmp(buf, back, n) != 0)
            pipe_ok = 0;
        lines++;
    }
    close(f1);
    close(f2);
    close(pp[0]);
    close(pp[1]);
    printf("t_close=%llu lines=%d pipe=%s\n", (unsigned long long)t_close, lines, pipe_ok ? "ok" : "BAD");
    return pipe_ok ? 0 : 1;
}
