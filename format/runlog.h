/* runlog.h: THE reader of a run's perfscope.log, the shim's one-line notes of what went wrong or
 * was skipped. The report (report.md, run.json's `log`) and dump run show the lines read here.
 * Rules chosen here: blank lines are skipped; a line longer than RUNLOG_LINE_CAP bytes is cut
 * and marked; the first `keep` lines are kept and the rest only counted, so memory never grows
 * with the file. It must never print. */
#ifndef PERFSCOPE_RUNLOG_H
#define PERFSCOPE_RUNLOG_H

#include <stddef.h>

#define RUNLOG_LINE_CAP 4096

struct run_log {
    int present;          /* perfscope.log exists */
    char **line;          /* [n] the lines kept, NUL terminated */
    unsigned char *cut;   /* [n] 1: the line was longer than RUNLOG_LINE_CAP and is cut */
    size_t n, more;       /* lines kept; lines past `keep`, counted only */
};

/* Reads dir/perfscope.log, keeping its first keep lines: 0, also when there is none (present
 * 0); -1 with "<path>: <why>" in err when it is there and cannot be read. */
int runlog_load(const char *dir, size_t keep, struct run_log *log, char *err, size_t errlen);

void runlog_free(struct run_log *log);

#endif
