/* cases.h: the matrix's cases file, in the format of the reference harness's compare.py
 * (load_cases): {"defaults": {...}, "cases": [{...}, ...]}; per case
 *   label   required string
 *   binary  the case's, else the defaults', else "llama-bench"; run as <--a/--b DIR>/<binary>
 *   prefix  the case's, else the defaults', else []   (a wrapper: ["numactl", "-N0"])
 *   args    the defaults' followed by the case's
 *   env     the defaults' updated by the case's
 *   model   the case's only (null: none); passed as "-m MODEL"; a missing file skips the case
 *   gpus    the case's only (null: none); becomes CUDA_VISIBLE_DEVICES
 * Beyond compare.py, numbers are taken where it wants strings (args, env values, gpus), printed
 * as Python's str() prints an int. Refused (one line naming the file): missing, empty, not
 * JSON, no "cases" array, a case that is not an object or has no string label, a member of the
 * wrong type, more than CASES_MAX cases or CASES_MAX_ARGS arguments. It must never run anything:
 * the matrix does. */
#ifndef PERFSCOPE_REPORT_CASES_H
#define PERFSCOPE_REPORT_CASES_H

#include <stddef.h>

#define CASES_MAX 4096
#define CASES_MAX_ARGS 1024
#define CASES_MAX_BYTES (4u << 20)

struct kv {
    char *key, *value;
};

struct mcase {
    char *label;
    char *binary;
    char **prefix;   /* NULL when empty, else NULL-terminated after nprefix items */
    size_t nprefix;
    char **args;     /* NULL when empty, else NULL-terminated after nargs items */
    size_t nargs;
    struct kv *env;
    size_t nenv;
    char *model;     /* NULL: none */
    char *gpus;      /* NULL: none */
};

struct cases {
    struct mcase *v;
    size_t n;
};

int cases_load(const char *path, struct cases *out, char *err, size_t errlen);
void cases_free(struct cases *c);

#endif
