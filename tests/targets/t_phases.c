/* t_phases MARKERS REPORT: marks its own phases by appending lines to the markers file (one write
 * a line), and burns CPU in a distinct function in each:
 *   alpha (t= given)      burn_alpha 0.3 s      boundaries at the t= values
 *   beta  (no t=)         burn_beta  0.3 s      boundaries when the shim reads the lines
 *   req > gamma (nested)  burn_gamma 0.2 s inside gamma, burn_delta 0.15 s in req around it
 *   outside any phase     burn_none  0.05 s between phases
 * REPORT gets one JSON object: the t= values written, the CLOCK_MONOTONIC instants just before
 * and just after each write without t=, and each function's run-time address. */
#define _GNU_SOURCE
#include "burn.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_alpha)
DEFINE_BURN(burn_beta)
DEFINE_BURN(burn_gamma)
DEFINE_BURN(burn_delta)
DEFINE_BURN(burn_none)

static int fd;

static void line(const char *s)
{
    size_t n = strlen(s);
    if (write(fd, s, n) != (ssize_t)n) {
        perror("write markers");
        exit(1);
    }
}

/* Writes "<name> <event> t=<now><rest>\n" and returns the t= value. */
static uint64_t mark_t(const char *name, const char *event, const char *rest)
{
    char buf[256];
    uint64_t t = mono_ns();
    snprintf(buf, sizeof buf, "%s %s t=%llu%s\n", name, event, (unsigned long long)t, rest);
    line(buf);
    return t;
}

/* Writes "<name> <event><rest>\n" and notes the instants around the write. */
static void mark(const char *name, const char *event, const char *rest, uint64_t w[2])
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s %s%s\n", name, event, rest);
    w[0] = mono_ns();
    line(buf);
    w[1] = mono_ns();
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: t_phases MARKERS REPORT\n");
        return 2;
    }
    fd = open(argv[1], O_WRONLY | O_APPEND);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    uint64_t a0, a1, b0[2], b1[2], r0, g0, g1, r1;
    burn_none(0.05);
    a0 = mark_t("alpha", "begin", "");
    burn_alpha(0.3);
    a1 = mark_t("alpha", "end", " tokens=512");
    burn_none(0.05);
    mark("beta", "begin", "", b0);
    burn_beta(0.3);
    mark("beta", "end", " tokens=128 request=7", b1);
    burn_none(0.05);
    r0 = mark_t("req", "begin", "");
    burn_delta(0.075);
    g0 = mark_t("gamma", "begin", "");
    burn_gamma(0.2);
    g1 = mark_t("gamma", "end", " tokens=3");
    burn_delta(0.075);
    r1 = mark_t("req", "end", "");
    burn_none(0.05);
    usleep(200000); /* leave the watcher time to read the last lines */
    FILE *f = fopen(argv[2], "w");
    if (!f) {
        perror(argv[2]);
        return 1;
    }
    fprintf(f, "{\"alpha\":[%llu,%llu],\"beta_begin\":[%llu,%llu],\"beta_end\":[%llu,%llu],"
               "\"req\":[%llu,%llu],\"gamma\":[%llu,%llu],"
               "\"fn\":{\"burn_alpha\":%lu,\"burn_beta\":%lu,\"burn_gamma\":%lu,\"burn_delta\":%lu,"
               "\"burn_none\":%lu}}\n",
            (unsigned long long)a0, (unsigned long long)a1, (unsigned long long)b0[0],
            (unsigned long long)b0[1], (unsigned long long)b1[0], (unsigned long long)b1[1],
            (unsigned long long)r0, (unsigned long long)r1, (unsigned long long)g0,
            (unsigned long long)g1, (unsigned long)(uintptr_t)burn_alpha,
            (unsigned long)(uintptr_t)burn_beta, (unsigned long)(uintptr_t)burn_gamma,
            (unsigned long)(uintptr_t)burn_delta, (unsigned long)(uintptr_t)burn_none);
    fclose(f);
    return 0;
}
