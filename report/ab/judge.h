/* judge.h: the A/B judgement of the reference harness's compare.py (judge, diff, render_diff),
 * reproduced rule for rule: the same metrics, directions and floors, the same verdict words,
 * the same JSON keys and the same markdown table, so scripts written for compare.py read ours.
 * It must never invent a verdict compare.py would not give, and never read files: callers hand
 * it parsed runs (cJSON objects shaped like run.json) already checked with judge_check_run. */
#ifndef PERFSCOPE_JUDGE_H
#define PERFSCOPE_JUDGE_H

#include <stddef.h>
#include <stdio.h>
#include <cjson/cJSON.h>

#define JUDGE_NMETRICS 8

struct judge_metric {
    const char *name;          /* "prefill_tps" ... as compare.py's METRICS */
    const char *path[4];       /* keys into run.json, NULL-terminated */
    int direction;             /* +1: bigger is better; -1: smaller is better */
    double rel_floor, abs_floor;
};

extern const struct judge_metric judge_metrics[JUDGE_NMETRICS];

enum judge_verdict { JUDGE_MISSING, JUDGE_SAME, JUDGE_BETTER, JUDGE_WORSE };

struct judge_result {
    enum judge_verdict verdict;
    double a, b;               /* the means, rounded to 4 places (compare.py's "a", "b") */
    double a_mean, b_mean;     /* the means as computed */
    int has_ratio;             /* 0: A's mean is 0, "ratio" is null */
    double ratio;              /* b_mean / a_mean rounded to 4 places */
    double *a_runs, *b_runs;   /* the values that counted, in run order (owned) */
    size_t na, nb;
};

/* compare.py's judge(): NaN in a or b stands for None (a run without the value). noise is the
 * measured relative floor (0 when none). Returns 0, or -1 when out of memory. */
int judge_metric(int metric, const double *a, size_t na, const double *b, size_t nb,
                 double noise, struct judge_result *out);

struct diff_result {
    struct judge_result metrics[JUDGE_NMETRICS]; /* JUDGE_MISSING ones are left out of output */
    size_t dropped_runs;       /* failed (status not "ok") or perturbed */
    size_t dirty_runs;         /* usable runs whose machine_before was not clean */
    size_t usable_a, usable_b;
    const char *verdict;       /* "tradeoff", "regression", "improvement", "neutral" */
};

/* Whether a run object would pass through compare.py's diff without a Python error: an object;
 * and, when the run is usable, machine_before absent, false-like or an object, and each metric's
 * value null or a number. 0, or -1 with "<what>" (no file name) in err. */
int judge_check_run(const cJSON *run, char *err, size_t errlen);

/* Whether compare.py's diff counts the run: status "ok" and not perturbed. */
int judge_usable(const cJSON *run);

/* The value of metric in run: NaN when compare.py's getter gives None. */
double judge_value(const cJSON *run, int metric);

/* compare.py's diff(): noise is NULL or JUDGE_NMETRICS relative floors (0 where none). Runs
 * must have passed judge_check_run. 0, or -1 when out of memory. Free with diff_free. */
int judge_diff(const cJSON *const *runs_a, size_t na, const cJSON *const *runs_b, size_t nb,
               const double *noise, struct diff_result *out);
void diff_free(struct diff_result *d);

/* The object compare.py's diff returns, key for key, in its order. NULL when out of memory. */
cJSON *diff_to_json(const struct diff_result *d);

/* compare.py's render_diff(result, a_label, b_label), byte for byte. */
void render_diff(FILE *f, const struct diff_result *d, const char *a_label, const char *b_label);

const char *judge_verdict_word(enum judge_verdict v);

#endif
