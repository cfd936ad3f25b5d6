/* progress.c: the symbolizer's progress line (progress.h). It must never write to a descriptor
 * that is not a terminal, never allocate, and never slow the sample loop by more than a counter
 * test between clock reads. */
#include "progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int fd = -1;
static uint64_t total, start_ms, last_ms, after_ms = PROGRESS_AFTER_MS;
static size_t shown; /* columns of the line on screen, 0 none */

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* 1234 as "1234", 412345 as "412k", 1234567 as "1.2M". */
static void count(char *buf, size_t n, uint64_t v)
{
    if (v >= 1000000)
        snprintf(buf, n, "%.1fM", (double)v / 1e6);
    else if (v >= 10000)
        snprintf(buf, n, "%lluk", (unsigned long long)(v / 1000));
    else
        snprintf(buf, n, "%llu", (unsigned long long)v);
}

static void put(const char *line)
{
    char buf[160];
    size_t len = strlen(line);
    /* '\r', the line, blanks over what is left of a longer one, '\r' back to the line's end. */
    int n = snprintf(buf, sizeof buf, "\r%s%*s", line, shown > len ? (int)(shown - len) : 0, "");
    if (n > 0 && write(fd, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1) < 0)
        fd = -1;
    shown = len;
}

/* Whether it is time for a rewrite: past the start delay, and 200 ms since the last. */
static int due(void)
{
    uint64_t t = now_ms();
    if (t - start_ms < after_ms || (shown && t - last_ms < 200))
        return 0;
    last_ms = t;
    return 1;
}

void progress_begin(int f, uint64_t n)
{
    fd = f > 0 && isatty(f) ? f : -1;
    total = n;
    shown = 0;
    start_ms = last_ms = now_ms();
    const char *e = getenv("PERFSCOPE_PROGRESS_AFTER_MS");
    if (e && *e) {
        char *end;
        unsigned long long v = strtoull(e, &end, 10);
        if (!*end && v < 86400000ull)
            after_ms = v;
    }
}

int progress_active(void)
{
    return fd >= 0;
}

void progress_total(uint64_t n)
{
    total = n;
}

void progress_samples(uint64_t done)
{
    if (fd < 0 || (done & 1023) != 0 || !due())
        return;
    char d[24], t[24], line[80];
    count(d, sizeof d, done);
    if (total) {
        count(t, sizeof t, total);
        snprintf(line, sizeof line, "symbolizing: %s/%s samples", d, t);
    } else {
        snprintf(line, sizeof line, "symbolizing: %s samples", d);
    }
    put(line);
}

void progress_stage(const char *what)
{
    if (fd < 0 || !due())
        return;
    char line[120];
    snprintf(line, sizeof line, "symbolizing: %.90s", what);
    put(line);
}

void progress_end(void)
{
    if (fd >= 0 && shown) {
        char buf[160];
        int n = snprintf(buf, sizeof buf, "\r%*s\r", (int)shown, "");
        if (n > 0 && write(fd, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1) < 0)
            fd = -1;
    }
    shown = 0;
    fd = -1;
}
