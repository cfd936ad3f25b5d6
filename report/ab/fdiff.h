/* fdiff.h: which functions changed, per phase group, between profiled runs of A and of B (the
 * function-level diff of `perfscope diff --profiles` and `perfscope matrix --profile N`). Per
 * run and group: each function's self and inclusive CPU (samples in stacks.folded times the
 * profile's period) over the group's tokens, or over its wall seconds where a run has no
 * tokens there (tokens and wall: the run model's, run.h); then per function the means of A and
 * B, the change in percentage points of A's total for the group ("pp"), its share of the
 * group's total change, and the permutation p-value over runs (stats.c). Per group also every
 * distinct stack's mean for A and for B: a tree with per-node B-against-A values, for a
 * differential flame graph. A function is significant when its self change is shown (past the
 * floor) and its p-value stays below 0.05 after Holm's correction over every function tested in
 * the group, so that an A-against-A comparison names one at most 1 time in 20. It must never
 * judge a run that has no profile (said, exit 2), and never hide how many were tested. */
#ifndef PERFSCOPE_REPORT_FDIFF_H
#define PERFSCOPE_REPORT_FDIFF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cjson/cJSON.h>

#include "hmap.h"

#define FDIFF_MEASURABLE 0.005 /* tested: pooled self or inclusive CPU >= 0.5% of the group's */
#define FDIFF_FLOOR_PP 0.5     /* shown: a self or inclusive change of at least 0.5 pp */
#define FDIFF_P 0.05
#define FDIFF_INCL_SHOWN 8     /* the largest inclusive changes named under a group's table */

struct fd_run;  /* one profiled run, loaded (fdiff.c) */

struct fd_set {
    struct strpool pool;       /* group names, function names, stacks ("f1;f2;...") */
    struct fd_run **runs[2];    /* per side, in argument order */
    size_t n[2];
    double floor_pp;
};

struct fd_value {
    double a, b;               /* means over the side's runs, per token (or per wall second) */
    double pp;                 /* (b - a) / A's group total * 100 */
    double p;                  /* permutation p-value, -1 when it could not be computed */
    double p_holm;             /* self: p after Holm's correction over the group's tested
                                * functions; -1 when not tested */
};

struct fd_func {
    uint32_t name;             /* in pool */
    struct fd_value self, incl;
    double share;              /* self change over the group's total change (0 when that is 0) */
    int tested;                /* its pooled self CPU is measurable: its self p counts in Holm */
    int shown;                 /* |self.pp| >= floor */
    int significant;           /* shown, and self.p_holm < FDIFF_P */
};

struct fd_stack {
    uint32_t stack;            /* in pool: frames outermost first, joined by ';' */
    double a, b;               /* means per unit */
};

struct fd_group {
    uint32_t name;
    int per_token;             /* 1: per token; 0: per wall second */
    struct fd_value total;     /* the group's CPU per unit; pp is the change in percent */
    struct fd_func *f;         /* sorted by share, then by |self.pp| */
    size_t nf, measurable, tested, shown, significant;
    size_t raw_below_p;        /* tested functions whose uncorrected self p < FDIFF_P */
    struct fd_stack *st;
    size_t nst;
};

struct fd_result {
    struct fd_group *g;
    size_t ng;
    char skipped[1024];        /* groups left out and why, "" none */
};

/* Adds the profiled run in dir to side (0 A, 1 B). 0, or -1 with one line in err. */
int fd_add_run(struct fd_set *s, int side, const char *dir, char *err, size_t errlen);
int fd_compute(struct fd_set *s, struct fd_result *r, char *err, size_t errlen);
void fd_result_free(struct fd_result *r);
void fd_set_free(struct fd_set *s);

/* The text: per group a headline ("decode +8.1%: f +6.2 pp of it (p 0.008)") and a table. */
void fd_render(FILE *f, const struct fd_set *s, const struct fd_result *r);
/* The same as a page (fdiff_html.c): per group a differential flame graph and the table. The
 * text (caller frees), NULL when out of memory. */
char *fd_html(const struct fd_set *s, const struct fd_result *r);
/* The table's words and numbers, shared by the text and the page: "CPU per token" or "CPU per
 * second of wall"; a value per unit ("0.512 ms" per token, "0.98 s/s"); a p-value ("-": none). */
const char *fd_unit_word(const struct fd_group *g);
void fd_fmt_value(const struct fd_group *g, double v, char *buf, size_t size);
void fd_fmt_p(double p, char *buf, size_t size);
/* The same as JSON (docs/diff.md), stacks included. NULL when out of memory. */
cJSON *fd_json(const struct fd_set *s, const struct fd_result *r);

/* `perfscope-report diff --profiles [--json] [--min-pp X] A... -- B...` */
int cmd_fdiff(int argc, char **argv);

#endif
