/* t_flame MARKERS: phases with known flame graphs, for t_tools_report_html (marks its own
 * phases by appending lines to the markers file):
 *   mix   burn_big 0.3 s then burn_small 0.1 s, both called from run_mix: 75% and 25% of it
 *   deep  burn_deep 0.15 s at the bottom of 40 calls of recurse (run under a small
 *         PERFSCOPE_MAX_FRAMES: every stack is cut, the graph marks them truncated)
 *   inl   spin_inl, always inlined into burn_inl, 0.15 s (an inline frame of its own) */
#define _GNU_SOURCE
#include "burn.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_big)
DEFINE_BURN(burn_small)
DEFINE_BURN(burn_deep)

static int fd;

/* "<phase> <event> t=<now>": the boundary at the instant written, not when the shim reads it. */
static void mark(const char *what)
{
    char s[128];
    snprintf(s, sizeof s, "%s t=%llu\n", what, (unsigned long long)mono_ns());
    size_t n = strlen(s);
    if (write(fd, s, n) != (ssize_t)n) {
        perror("write markers");
        exit(1);
    }
}

__attribute__((noinline)) static void run_mix(void)
{
    burn_big(0.3);
    burn_small(0.1);
}

/* Not a tail call: buf is used after the call returns. */
__attribute__((noinline)) static int recurse(int n)
{
    volatile char buf[16];
    buf[0] = (char)n;
    int r = n > 0 ? recurse(n - 1) : (int)burn_deep(0.15);
    __asm__ volatile("" ::"r"(buf) : "memory");
    return r + buf[0];
}

static inline __attribute__((always_inline)) uint64_t spin_inl(double seconds)
{
    uint64_t until = thread_cpu_ns() + (uint64_t)(seconds * 1e9);
    uint64_t x = (uint64_t)(uintptr_t)&burn_sink | 1, n = 0;
    for (;;) {
        for (int i = 0; i < 1000000; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            __asm__ volatile("" : "+r"(x));
        }
        n++;
        if (thread_cpu_ns() >= until)
            break;
    }
    burn_sink += x;
    return n;
}

__attribute__((noinline)) static uint64_t burn_inl(double seconds)
{
    return spin_inl(seconds) + 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: t_flame MARKERS\n");
        return 2;
    }
    fd = open(argv[1], O_WRONLY | O_APPEND);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    mark("mix begin");
    run_mix();
    mark("mix end");
    mark("deep begin");
    recurse(40);
    mark("deep end");
    mark("inl begin");
    burn_inl(0.15);
    mark("inl end");
    usleep(200000); /* leave the watcher time to read the last lines */
    return 0;
}
