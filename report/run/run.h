/* run.h: a run folder into its summary (cmd_run.c), for the report's subcommands and for other
 * tools: all the A/B judgement (ab/) takes from run/. run_summarize must never print.
 *   run_summarize: writes DIR/run.json (docs/report.md keys; temporary name, then rename) from what
 *   the run folder holds, without symbolizing and without printing. 0, or -1 with one line in
 *   err naming the file and what is wrong.
 *   cmd_run: `perfscope-report [--markdown] OUT`: symbolizes when needed, prints the report (on a
 *   terminal in the terminal layout unless markdown, report/util/termfmt.h; else the markdown),
 *   writes OUT/run.json, OUT/report.md (always the markdown) and OUT/report.html; returns the exit status (0, or 2
 *   after one line on stderr).
 *   run_record_summary: the same for `perfscope record`, on the stream it is given (the terminal
 *   layout when that stream is a terminal). */
#ifndef PERFSCOPE_REPORT_RUN_H
#define PERFSCOPE_REPORT_RUN_H

#include <stddef.h>
#include <stdio.h>

int run_summarize(const char *dir, char *err, size_t errlen);
int cmd_run(const char *dir, int markdown);

/* For `perfscope record` when its command has ended: loads dir (symbolizing when report),
 * writes run.json (and report.md and report.html when report), and puts on f one line (samples, processes,
 * phases, the folder) and, when report, the report's short summary. 0, or -1 with one line in
 * err. */
int run_record_summary(const char *dir, int report, FILE *f, char *err, size_t errlen);

/* The per-group figures of a profiled run for the function-level diff (run_groups.c): the run
 * model's wall and tokens per group (the one definition every tool uses), its samples, and the
 * profile's period, after symbolizing when profile.json is missing or stale. */
struct run_group_fig {
    char name[72];
    double wall_s;
    long long tokens;        /* -1: none */
    unsigned long long samples;
};

struct run_groups {
    struct run_group_fig *g;
    size_t n;
    double period_s;         /* CPU seconds a sample weighs (profile.json), <= 0 unknown */
    unsigned long long samples;
    char note[600];          /* why there is no profile, "" when there is */
};

/* 0, or -1 with one line in err. */
int run_groups_load(const char *dir, struct run_groups *out, char *err, size_t errlen);
void run_groups_free(struct run_groups *g);

#endif
