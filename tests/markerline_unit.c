/* markerline_unit.c: the accept/refuse table of the marker line parser (preload/markerline.c),
 * linked from its source alone: it must need nothing of the shim. Each row is a line and what
 * ps_marker_parse must make of it, written out as one string: "skip", "bad <ERROR> '<bytes>'",
 * or "<name> begin|end[ t=<ns>][ key=value...]" (attributes in line order), with " cut" after
 * it when the line was cut. Then ps_marker_t_on_run_clock's boundaries. One "FAIL: ..." line
 * per failed check, the count at the end (tests/checks.py's convention); exit 1 when any failed.
 * Never part of the shim. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "markerline.h"

static int run, failed;

__attribute__((format(printf, 2, 3))) static void check(int ok, const char *fmt, ...)
{
    run++;
    if (ok)
        return;
    failed++;
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL: ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
}

static const char *error_name(enum ps_marker_error e)
{
    switch (e) {
    case PS_MARKER_OK: return "OK";
    case PS_MARKER_BAD_NAME: return "NAME";
    case PS_MARKER_BAD_EVENT: return "EVENT";
    case PS_MARKER_BAD_ATTR: return "ATTR";
    case PS_MARKER_BAD_T: return "T";
    case PS_MARKER_BAD_TOKENS: return "TOKENS";
    }
    return "?";
}

static struct ps_marker m; /* large: off the stack */

/* What the parser made of line[0..len), as a row's string. */
static void describe(const char *line, size_t len, char *out, size_t size)
{
    int rc = ps_marker_parse(line, len, &m);
    size_t n = 0;
#define PUT(...) (n += (size_t)snprintf(out + n, n < size ? size - n : 0, __VA_ARGS__))
    if (rc == 0)
        PUT("skip");
    else if (rc < 0)
        PUT("bad %s '%.*s'", error_name(m.error), (int)m.bad.len, m.bad.p);
    else {
        PUT("%.*s %s", (int)m.name.len, m.name.p, m.end ? "end" : "begin");
        if (m.has_t)
            PUT(" t=%llu", (unsigned long long)m.t);
        for (size_t i = 0; i < m.nattrs; i++)
            PUT(" %.*s=%.*s", (int)m.attrs[i].key.len, m.attrs[i].key.p, (int)m.attrs[i].value.len,
                m.attrs[i].value.p);
    }
    if (m.cut)
        PUT(" cut");
    if (rc < 0 && m.error == PS_MARKER_OK)
        PUT(" (bad without an error)");
    if (rc > 0 && m.error != PS_MARKER_OK)
        PUT(" (a boundary with an error)");
#undef PUT
}

struct row {
    const char *line;
    const char *want;
};

static const struct row rows[] = {
    /* the protocol's own examples (docs/formats.md) */
    {"load begin", "load begin"},
    {"load end", "load end"},
    {"prefill end tokens=512", "prefill end tokens=512"},
    {"decode begin t=1234567890123", "decode begin t=1234567890123"},
    {"decode end tokens=128 request=7", "decode end tokens=128 request=7"},
    /* blanks and comments */
    {"", "skip"},
    {"   \t ", "skip"},
    {"\r", "skip"},
    {"# decode begin", "skip"},
    {"  \t# x", "skip"},
    {"#", "skip"},
    /* separators: spaces and tabs, any number; '\r', spaces and tabs at the ends ignored */
    {"  load\t end  \r", "load end"},
    {"a\tbegin\tk=v\t\tt=5", "a begin t=5 k=v"},
    {"a begin k=v\r\r", "a begin k=v"},
    {"a begin\rk=v", "bad EVENT 'a'"},
    {"a\vbegin", "bad NAME 'a\vbegin'"},
    /* names */
    {"A-Z_a.z-09 begin", "A-Z_a.z-09 begin"},
    {"nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn begin",
     "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn begin"},
    {"nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn begin",
     "bad NAME 'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn'"},
    {"bad/name begin", "bad NAME 'bad/name'"},
    {"caf\xc3\xa9 begin", "bad NAME 'caf\xc3\xa9'"},
    {"=x begin", "bad NAME '=x'"},
    /* events */
    {"good", "bad EVENT 'good'"},
    {"good   ", "bad EVENT 'good'"},
    {"good sideways", "bad EVENT 'good'"},
    {"good BEGIN", "bad EVENT 'good'"},
    {"good beginning", "bad EVENT 'good'"},
    {"good begin end", "bad ATTR 'end'"},
    /* attributes */
    {"a begin k", "bad ATTR 'k'"},
    {"a begin k=", "bad ATTR 'k='"},
    {"a begin =v", "bad ATTR '=v'"},
    {"a begin k/x=1", "bad ATTR 'k/x=1'"},
    {"a begin k=v=w", "a begin k=v=w"},
    {"a begin k=\"x y\"", "bad ATTR 'y\"'"},
    {"a begin x=1 x=2", "a begin x=1 x=2"},
    {"a end via=api tokens=3", "a end via=api tokens=3"},
    {"a begin ok=1 bad", "bad ATTR 'bad'"},
    /* t= */
    {"a begin t=1 t=2", "a begin t=2"},
    {"a begin t=0", "a begin t=0"},
    {"a begin t=18446744073709551615", "a begin t=18446744073709551615"},
    {"a begin t=18446744073709551616", "bad T '18446744073709551616'"},
    {"a begin t=99999999999999999999999", "bad T '99999999999999999999999'"},
    {"a begin t=abc", "bad T 'abc'"},
    {"a begin t=-1", "bad T '-1'"},
    {"a begin t=+1", "bad T '+1'"},
    {"a begin t=1.5", "bad T '1.5'"},
    {"a begin t=0x10", "bad T '0x10'"},
    {"a begin t=", "bad ATTR 't='"},
    {"a begin T=5", "a begin T=5"},
    /* tokens= */
    {"a end tokens=12", "a end tokens=12"},
    {"a end tokens=1.5", "bad TOKENS '1.5'"},
    {"a end tokens=-3", "bad TOKENS '-3'"},
    {"a end tokens=ten", "bad TOKENS 'ten'"},
};

int main(void)
{
    char got[8192];
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        describe(rows[i].line, strlen(rows[i].line), got, sizeof got);
        check(strcmp(got, rows[i].want) == 0, "row %zu \"%s\": got \"%s\", want \"%s\"", i, rows[i].line, got,
              rows[i].want);
    }

    /* A NUL byte ends the line. */
    static const char nul[] = "a begin\0 junk";
    describe(nul, sizeof nul - 1, got, sizeof got);
    check(strcmp(got, "a begin") == 0, "a NUL byte ends the line: got \"%s\"", got);
    describe(nul, 0, got, sizeof got);
    check(strcmp(got, "skip") == 0, "an empty line: got \"%s\"", got);

    /* Only len bytes are read: the same bytes with a shorter len. */
    describe("a begin k=v", 7, got, sizeof got);
    check(strcmp(got, "a begin") == 0, "len 7 of \"a begin k=v\": got \"%s\"", got);

    /* Over PS_MARKER_LINE_MAX: the first PS_MARKER_LINE_MAX bytes parsed, the cut said. */
    static char longl[PS_MARKER_LINE_MAX + 500];
    size_t n = (size_t)snprintf(longl, sizeof longl, "long begin note=");
    memset(longl + n, 'x', sizeof longl - n);
    describe(longl, sizeof longl, got, sizeof got);
    int ok = m.cut && m.nattrs == 1 && m.attrs[0].value.len == PS_MARKER_LINE_MAX - n;
    check(ok, "a line of %zu bytes: cut %d, %zu attributes, want cut and one of the rest", sizeof longl, m.cut,
          m.nattrs);
    describe(longl, PS_MARKER_LINE_MAX, got, sizeof got);
    check(!m.cut, "a line of exactly PS_MARKER_LINE_MAX bytes is not cut");

    /* As many attributes as a line can hold. */
    n = (size_t)snprintf(longl, sizeof longl, "a begin");
    size_t want = 0;
    while (n + 4 <= PS_MARKER_LINE_MAX) {
        memcpy(longl + n, " k=v", 4);
        n += 4;
        want++;
    }
    int rc = ps_marker_parse(longl, n, &m);
    check(rc == 1 && m.nattrs == want, "a line full of k=v: rc %d, %zu attributes of %zu", rc, m.nattrs, want);

    /* ps_marker_t_on_run_clock: a minute before the run's start, a minute after the read. */
    const uint64_t S = PS_MARKER_CLOCK_SLACK_NS, start = 5000 * 1000000000ull, read = start + 7 * 1000000000ull;
    struct {
        uint64_t t, start, read;
        int want;
        const char *what;
    } tc[] = {
        {start, start, read, 1, "the run's start"},
        {read, start, read, 1, "the read time"},
        {start - S, start, read, 1, "a minute before the start"},
        {start - S - 1, start, read, 0, "a minute and 1 ns before the start"},
        {read + S, start, read, 1, "a minute after the read"},
        {read + S + 1, start, read, 0, "a minute and 1 ns after the read"},
        {1733000000000000000ull, start, read, 0, "a wall clock in ns (date +%s%N)"},
        {1733000000ull, start, read, 0, "a wall clock in s (date +%s)"},
        {0, 10, 20, 1, "t=0 in a run that started in the first minute of the boot"},
        {UINT64_MAX, start, UINT64_MAX - 5, 1, "no overflow near the top"},
        {0, start, read, 0, "t=0"},
    };
    for (size_t i = 0; i < sizeof tc / sizeof tc[0]; i++)
        check(ps_marker_t_on_run_clock(tc[i].t, tc[i].start, tc[i].read) == tc[i].want,
              "ps_marker_t_on_run_clock: %s: want %s", tc[i].what, tc[i].want ? "on the clock" : "off it");

    /* Names outside the parser (perfscope_begin's). */
    check(ps_marker_valid_name("decode", 6) && !ps_marker_valid_name("", 0) && !ps_marker_valid_name("a b", 3),
          "ps_marker_valid_name");

    if (failed) {
        printf("%d of %d checks failed\n", failed, run);
        return 1;
    }
    printf("all %d checks passed\n", run);
    return 0;
}
