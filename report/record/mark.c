/* mark.c: `perfscope mark NAME begin|end [key=value...] [--file F]`: one marker line (docs/formats.md)
 * with t= the caller's CLOCK_MONOTONIC in ns, appended to the markers file in one write. It must
 * never write a line the shim's parser would refuse, never write in more than one write, and
 * never print on stdout. */
#include "record.h"
#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MARK_LINE_MAX 4096 /* the shim cuts a longer line */

const char *record_markers_env(void)
{
    const char *v = getenv("LLMPERFSCOPE_MARKERS");
    if (!v || !*v)
        v = getenv("PERFSCOPE_MARKERS");
    return v && *v ? v : NULL;
}

/* The phase name rule of the marker protocol: [A-Za-z0-9_.-], 1 to 64 bytes. */
static int name_ok(const char *s, size_t len)
{
    if (len < 1 || len > 64)
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return 0;
    }
    return 1;
}

/* key=value: the key by the name rule, the value nonempty, printable and without spaces;
 * t= is ours, tokens= a count. */
static const char *attr_bad(const char *a)
{
    const char *eq = strchr(a, '=');
    if (!eq || !name_ok(a, (size_t)(eq - a)))
        return "not key=value with a key of [A-Za-z0-9_.-]";
    if (!eq[1])
        return "an empty value";
    for (const char *p = eq + 1; *p; p++)
        if ((unsigned char)*p <= ' ' || *p == 0x7f)
            return "a space or control byte in the value";
    if (eq - a == 1 && a[0] == 't')
        return "t= is perfscope mark's own (the caller's CLOCK_MONOTONIC)";
    if (eq - a == 6 && strncmp(a, "tokens", 6) == 0) {
        for (const char *p = eq + 1; *p; p++)
            if (*p < '0' || *p > '9')
                return "tokens= is not a count";
        if (strlen(eq + 1) > 19)
            return "tokens= is not a count";
    }
    return NULL;
}

static int bad(const char *fmt, const char *arg)
{
    char line[512];
    snprintf(line, sizeof line, fmt, arg);
    report_fail("mark: %s (usage: perfscope " MARK_USAGE ")", line);
    return REPORT_BAD_INPUT;
}

int cmd_mark(int argc, char **argv)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* the caller's moment: before any checking */
    const char *file = NULL;
    const char *words[3 + 256];
    int nw = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--file") == 0) {
            if (i + 1 >= argc)
                return bad("%s needs a file", "--file");
            file = argv[++i];
        } else if (strncmp(argv[i], "--file=", 7) == 0) {
            file = argv[i] + 7;
        } else if (nw < (int)(sizeof words / sizeof words[0])) {
            words[nw++] = argv[i];
        } else {
            return bad("%s", "too many key=value words");
        }
    }
    if (nw < 2)
        return bad("%s", "NAME and begin|end are needed");
    if (!name_ok(words[0], strlen(words[0])))
        return bad("bad phase name '%.80s': [A-Za-z0-9_.-], 1 to 64 bytes", words[0]);
    if (strcmp(words[1], "begin") != 0 && strcmp(words[1], "end") != 0)
        return bad("'%.80s' is not begin or end", words[1]);
    for (int i = 2; i < nw; i++) {
        const char *why = attr_bad(words[i]);
        if (why) {
            char line[256];
            snprintf(line, sizeof line, "'%.80s': %s", words[i], why);
            return bad("%s", line);
        }
    }
    if (!file)
        file = record_markers_env();
    if (!file)
        return bad("%s", "LLMPERFSCOPE_MARKERS (or PERFSCOPE_MARKERS) is not set and no --file was given");
    char line[MARK_LINE_MAX + 1];
    size_t len = 0;
    for (int i = 0; i < nw; i++) {
        int n = snprintf(line + len, sizeof line - len, "%s ", words[i]);
        if (n < 0 || (size_t)n >= sizeof line - len)
            return bad("the line is over %s bytes", "4096");
        len += (size_t)n;
    }
    int n = snprintf(line + len, sizeof line - len, "t=%lld\n",
                     (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
    if (n < 0 || (size_t)n >= sizeof line - len)
        return bad("the line is over %s bytes", "4096");
    len += (size_t)n;
    int fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        report_fail("mark: %s: %s", file, strerror(errno));
        return REPORT_BAD_INPUT;
    }
    ssize_t w = write(fd, line, len);
    int e = errno;
    close(fd);
    if (w != (ssize_t)len) {
        report_fail("mark: %s: %s", file, w < 0 ? strerror(e) : "short write");
        return REPORT_BAD_INPUT;
    }
    return 0;
}
