/* warn.h: the warnings the A/B judgement gives beside compare.py's verdict, for diff (diff.c)
 * and the matrix (matrix.c): runs too few for any metric to reach p < 0.05 (naming the metrics
 * and the runs needed), a side with no usable run (why each was dropped), usable runs with no
 * throughput, --noise entries that match no case or no metric. Each is one line of text,
 * without a final full stop. It must never change a verdict, a word or a key of compare.py's
 * output, and never print: callers put the lines in their table, their JSON and on stderr. */
#ifndef PERFSCOPE_REPORT_WARN_H
#define PERFSCOPE_REPORT_WARN_H

#include <stddef.h>
#include <cjson/cJSON.h>

#include "judge.h"

#define WARN_MAX 24
#define WARN_LEN 640
#define WARN_P 0.05 /* the significance every warning speaks of */

struct warnings {
    size_t n;
    char line[WARN_MAX][WARN_LEN];
};

void warn_add(struct warnings *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The fewest runs a side with which the permutation test can reach p < WARN_P (4: 2/C(8,4)). */
size_t warn_runs_needed(void);

/* Per distinct (A runs, B runs) of the judged metrics whose smallest reachable p is >= WARN_P:
 * "too few runs: 2 A against 2 B cannot reach p < 0.05 (the smallest possible p is 0.3333):
 * prefill_tps, decode_tps; at least 4 runs a side are needed". */
void warn_few_runs(struct warnings *w, const struct diff_result *d);

/* When a side has no usable run (every one failed or was sampled): WARN_NO_VERDICT "..." with
 * the reasons counted, and 1; 0 when both sides have one. Readers find the line by its start. */
#define WARN_NO_VERDICT "no verdict: "
int warn_no_verdict(struct warnings *w, const struct diff_result *d,
                    const cJSON *const *runs_a, size_t na, const cJSON *const *runs_b, size_t nb);

/* Usable runs with neither prefill nor decode throughput: what a run needs to have one.
 * name(i, side) names run i of a side for the line (NULL: not named). */
void warn_no_throughput(struct warnings *w, const cJSON *const *runs, size_t n, const char *side,
                        const char *const *names);

/* --noise FILE for a matrix: every label of the file that matches no case of labels. */
void warn_noise_labels(struct warnings *w, const char *file, const cJSON *noise_doc,
                       const char *const *labels, size_t nlabels);

/* A case's floors (or a one-case file) whose keys name no metric of the judgement. floors may
 * be NULL or not an object (nothing to say). */
void warn_noise_metrics(struct warnings *w, const char *file, const char *label,
                        const cJSON *floors);

#endif
