/* matrix.h: `perfscope-report matrix CASES.json --a NAME=DIR --b NAME=DIR [--order ABBA]
 * [--timeout S] [--precheck wait|skip|off] [--only REGEX] [--noise FILE] [--out DIR]
 * [--a-env K=V]... [--b-env K=V]... [--a-args "..."] [--b-args "..."] [--profile N]`: every
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
#define MATRIX_ORDER_UNIT "ABBA"  /* the default order: this unit, repeated until ... */
#define MATRIX_MIN_RUNS 5         /* ... each side has this many runs (ABBAABBAABBA) */
#define MATRIX_MAX_SIDE_ENV 256   /* --a-env/--b-env settings, and --a-args/--b-args words */
#define MATRIX_MAX_PROFILE 32     /* --profile N: at most this many sampled runs a side */
#define MATRIX_PROFILE_HZ "997"   /* their sampling rate, unless PERFSCOPE_HZ says another */

enum precheck { PRECHECK_WAIT, PRECHECK_SKIP, PRECHECK_OFF };

struct matrix_opts {
    const char *cases_path;
    const char *name[2], *dir[2];   /* A, B */
    const char *order;
    int order_given;                /* --order: run as given; else the default, repeated */
    char order_buf[MATRIX_MAX_ORDER + 1];
    struct kv side_env[2][MATRIX_MAX_SIDE_ENV]; /* --a-env, --b-env K=V: after the case's env */
    size_t nside_env[2];
    char *side_args[2][MATRIX_MAX_SIDE_ENV];    /* --a-args, --b-args: after the case's args */
    size_t nside_args[2];
    int profile;                    /* --profile N: sampled runs a side, never judged */
    double timeout_s;
    enum precheck precheck;
    const char *only, *noise_path, *out;
    char shim[4096];                /* the shim preloaded into every arm */
    char out_abs[4096];             /* --out, absolute */
};

/* One arm's result: run is the run object for the judgement (run.json as written, or a stand-in
 * {"status": ...} when the arm left no usable output), record what matrix.json says of the arm.
 * profiled: stacks sampled (--profile), in a "profile_..." folder; such a run is never judged.
 * Returns 0, 1 when the arm was refused (--precheck skip on a busy machine: record only), or
 * -1 when interrupted (nothing kept). */
int matrix_arm(const struct matrix_opts *o, const struct mcase *c, const char *case_dir, int index,
               int side, int profiled, volatile sig_atomic_t *stop, cJSON **run, cJSON **record);

/* table.md of a matrix.json object, as compare.py's write_table; NULL when out of memory. */
char *matrix_table(const cJSON *table);

/* 1 when cases ran and none of them has a verdict (each has a side with no usable run): the
 * matrix then exits 2, as diff does with no verdict; 0 otherwise. */
int matrix_judged_none(const cJSON *table);

int cmd_matrix(int argc, char **argv);

#endif
