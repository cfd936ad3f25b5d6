/* matrix.h: `perfscope-report matrix CASES.json --a NAME=DIR --b NAME=DIR [--order ABBA]
 * [--timeout S] [--precheck wait|skip|off] [--only REGEX] [--noise FILE] [--out DIR]`: every
 * case of a cases file (cases.h) run as fresh processes of both builds in alternating order,
 * each under the shim with stack sampling off, each in a run folder of its own, judged as
 * compare.py's run_matrix does (judge.h), with matrix.json and table.md rewritten after every
 * case. The parts: matrix.c (options, the case loop, the files), matrix_arm.c (one arm),
 * matrix_table.c (table.md); the process itself is proc/runner.c's. It must never judge an arm
 * that was interrupted: it is dropped, not counted. */
#ifndef PERFSCOPE_REPORT_MATRIX_H
#define PERFSCOPE_REPORT_MATRIX_H

#include <signal.h>
#include <stddef.h>
#include <cjson/cJSON.h>

#include "cases.h"

#define MATRIX_DEFAULT_TIMEOUT_S 1800.0
#define MATRIX_WAIT_MAX_S 300.0   /* --precheck wait: at most this long, then run anyway */
#define MATRIX_MAX_ORDER 64

enum precheck { PRECHECK_WAIT, PRECHECK_SKIP, PRECHECK_OFF };

struct matrix_opts {
    const char *cases_path;
    const char *name[2], *dir[2];   /* A, B */
    const char *order;
    double timeout_s;
    enum precheck precheck;
    const char *only, *noise_path, *out;
    char shim[4096];                /* the shim preloaded into every arm */
    char out_abs[4096];             /* --out, absolute */
};

/* One arm's result: run is the run object for the judgement (run.json as written, or a stand-in
 * {"status": ...} when the arm left no usable output), record what matrix.json says of the arm.
 * Returns 0, 1 when the arm was refused (--precheck skip on a busy machine: record only), or
 * -1 when interrupted (nothing kept). */
int matrix_arm(const struct matrix_opts *o, const struct mcase *c, const char *case_dir, int index,
               int side, volatile sig_atomic_t *stop, cJSON **run, cJSON **record);

/* table.md of a matrix.json object, as compare.py's write_table; NULL when out of memory. */
char *matrix_table(const cJSON *table);

int cmd_matrix(int argc, char **argv);

#endif
