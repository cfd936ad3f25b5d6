/* noise.h: noise floors from a null comparison (the same build on both sides), as compare.py's
 * noise_from_null computes them, and their lookup per case and metric, as its run_matrix and
 * diff do with --noise. It must never make a floor compare.py would not, and never print
 * anything but the result (errors go into err, or one line on stderr from cmd_noise). */
#ifndef PERFSCOPE_NOISE_H
#define PERFSCOPE_NOISE_H

#include <stddef.h>
#include <cjson/cJSON.h>

#include "judge.h"

/* {label: {metric: round((max - min) / |mean|, 5)}} over a matrix.json object (its "cases";
 * a case without "metrics" is skipped, a metric whose mean is 0 gets no floor). NULL with
 * "<what>" in err when the matrix is not shaped so. */
cJSON *noise_from_null(const cJSON *matrix, char *err, size_t errlen);

/* The floors for one case, as run_matrix does: noise_doc[label] (absent, null or {}: none),
 * then floors[metric] (absent: 0). 0, or -1 with "<what>" in err (a floor that is not a
 * number, a case entry that is not an object). */
int noise_for_case(const cJSON *noise_doc, const char *label, double noise[JUDGE_NMETRICS],
                   char *err, size_t errlen);

/* For `diff --noise FILE [--case LABEL]`, where there is no case label of its own: the floors
 * of case LABEL; without one, of the file's only case; or the file itself when it is one
 * case's floors ({metric: number}). 0, or -1 with "<what>" in err. */
int noise_select(const cJSON *noise_doc, const char *label, double noise[JUDGE_NMETRICS],
                 char *err, size_t errlen);

/* The floors object noise_select took its floors from (NULL: none). */
const cJSON *noise_selected(const cJSON *noise_doc, const char *label);

/* perfscope-report noise NULL_MATRIX.json */
int cmd_noise(int argc, char **argv);

#endif
