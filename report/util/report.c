/* report.c: the one way every part of perfscope-report says what went wrong (report.h): one
 * line on stderr, and names from files printed without their control bytes. It must never
 * print more than one line per call, and never let a byte from a file move the terminal. */
#include "report.h"

#include <stdarg.h>

const char *report_prog = "perfscope-report";

void report_fail(const char *fmt, ...)
{
    char line[REPORT_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    for (char *p = line; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    fprintf(stderr, "%s: %s\n", report_prog, line);
}

void put_clean(FILE *f, const char *s)
{
    for (; *s; s++)
        fputc(((unsigned char)*s < 0x20 || *s == 0x7f) ? '?' : *s, f);
}
