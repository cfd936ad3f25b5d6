/* report.h: what the parts of perfscope-report share (util/report.c). Every subcommand returns
 * its exit status: 0, or REPORT_BAD_INPUT after one line on stderr naming the file and what is
 * wrong. Nothing here may write into the run folder except through a temporary name and a
 * rename, and nothing here may know a subcommand. */
#ifndef PERFSCOPE_REPORT_H
#define PERFSCOPE_REPORT_H

#include <stdio.h>

#define REPORT_BAD_INPUT 2
#define REPORT_ERR_MAX 1024

/* The name report_fail's lines start with: "perfscope-report", or "perfscope" in the front door. */
extern const char *report_prog;

/* "<report_prog>: <message>" on stderr, one line. */
void report_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Writes s to f with control bytes shown as '?': names read from files may hold anything. */
void put_clean(FILE *f, const char *s);

#endif
