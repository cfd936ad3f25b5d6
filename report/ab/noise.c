/* noise.c: compare.py's noise_from_null and the --noise lookups (see noise.h), and the `noise`
 * subcommand. Python's dict semantics are kept where a hostile file could tell them apart:
 * the last of duplicate keys wins, in the place of the first. It must never print a partial
 * result: the whole output is built before anything is written. */
#include "noise.h"
#include "jsondoc.h"
#include "jsonl.h"
#include "outfile.h"
#include "pyfmt.h"
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Duplicate keys and labels are looked for pairwise: these caps keep that from growing with a
 * hostile file (real matrices hold tens of cases and eight metrics). */
#define NOISE_MAX_MEMBERS 4096 /* metrics of a case, cases of a noise file */
#define NOISE_MAX_CASES 10000  /* cases of a matrix */

static int count_members(const cJSON *obj)
{
    int n = 0;
    for (const cJSON *c = obj->child; c; c = c->next)
        n++;
    return n;
}

/* The floors of one case: 0, or -1 with the message in err. */
static int case_floors(const cJSON *metrics, cJSON *floors, const char *label, char *err,
                       size_t errlen)
{
    if (!cJSON_IsObject(metrics)) {
        snprintf(err, errlen, "case \"%.200s\": metrics is not an object", label);
        return -1;
    }
    if (count_members(metrics) > NOISE_MAX_MEMBERS) {
        snprintf(err, errlen, "case \"%.200s\": more than %d metrics", label, NOISE_MAX_MEMBERS);
        return -1;
    }
    for (const cJSON *m = metrics->child; m; m = m->next) {
        if (!json_first_of_name(m))
            continue;
        const cJSON *value = json_get(metrics, m->string); /* the last of that name */
        const cJSON *runs[2] = {json_get(value, "a_runs"), json_get(value, "b_runs")};
        double sum = 0, lo = 0, hi = 0;
        size_t n = 0;
        for (int s = 0; s < 2; s++) {
            if (!cJSON_IsArray(runs[s])) {
                snprintf(err, errlen, "case \"%.200s\", metric \"%.100s\": no %s list", label,
                         m->string, s ? "b_runs" : "a_runs");
                return -1;
            }
            for (const cJSON *x = runs[s]->child; x; x = x->next) {
                if (!cJSON_IsNumber(x)) {
                    snprintf(err, errlen, "case \"%.200s\", metric \"%.100s\": a run value is not a number",
                             label, m->string);
                    return -1;
                }
                double v = x->valuedouble;
                sum += v;
                lo = n == 0 || v < lo ? v : lo;
                hi = n == 0 || v > hi ? v : hi;
                n++;
            }
        }
        if (n == 0) {
            snprintf(err, errlen, "case \"%.200s\", metric \"%.100s\": no run values", label,
                     m->string);
            return -1;
        }
        double mean = sum / (double)n;
        if (mean == 0)
            continue;
        cJSON *f = json_number(py_round((hi - lo) / fabs(mean), 5));
        if (!f || !cJSON_AddItemToObject(floors, m->string, f)) {
            cJSON_Delete(f);
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    return 0;
}

cJSON *noise_from_null(const cJSON *matrix, char *err, size_t errlen)
{
    const cJSON *cases = json_get(matrix, "cases");
    if (!cJSON_IsObject(matrix) || !cJSON_IsArray(cases)) {
        snprintf(err, errlen, "not a matrix (want an object with a \"cases\" list)");
        return NULL;
    }
    if (cJSON_GetArraySize(cases) > NOISE_MAX_CASES) {
        snprintf(err, errlen, "more than %d cases", NOISE_MAX_CASES);
        return NULL;
    }
    cJSON *out = cJSON_CreateObject();
    if (!out) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    size_t i = 0;
    for (const cJSON *c = cases->child; c; c = c->next, i++) {
        if (!cJSON_IsObject(c)) {
            snprintf(err, errlen, "cases[%zu] is not an object", i);
            goto fail;
        }
        const cJSON *metrics = json_get(c, "metrics");
        if (!metrics)
            continue; /* a skipped case */
        const cJSON *label = json_get(c, "label");
        if (!cJSON_IsString(label)) {
            snprintf(err, errlen, "cases[%zu] has no label string", i);
            goto fail;
        }
        cJSON *floors = cJSON_CreateObject();
        if (!floors) {
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
        if (case_floors(metrics, floors, label->valuestring, err, errlen) != 0) {
            cJSON_Delete(floors);
            goto fail;
        }
        /* out[label] = floors: a repeated label keeps its first place, takes the new floors. */
        cJSON_bool ok = json_get(out, label->valuestring)
                            ? cJSON_ReplaceItemInObjectCaseSensitive(out, label->valuestring, floors)
                            : cJSON_AddItemToObject(out, label->valuestring, floors);
        if (!ok) {
            cJSON_Delete(floors);
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
    }
    return out;
fail:
    cJSON_Delete(out);
    return NULL;
}

/* floors (an object) into noise[]: floors.get(metric, 0.0). */
static int floors_to_array(const cJSON *floors, const char *what, double noise[JUDGE_NMETRICS],
                           char *err, size_t errlen)
{
    for (int m = 0; m < JUDGE_NMETRICS; m++) {
        const cJSON *v = json_get(floors, judge_metrics[m].name);
        if (!v) {
            noise[m] = 0;
        } else if (cJSON_IsNumber(v)) {
            noise[m] = v->valuedouble;
        } else {
            snprintf(err, errlen, "%s: the floor of %s is not a number", what, judge_metrics[m].name);
            return -1;
        }
    }
    return 0;
}

int noise_for_case(const cJSON *noise_doc, const char *label, double noise[JUDGE_NMETRICS],
                   char *err, size_t errlen)
{
    for (int m = 0; m < JUDGE_NMETRICS; m++)
        noise[m] = 0;
    if (!json_truthy(noise_doc))
        return 0;
    if (!cJSON_IsObject(noise_doc)) {
        snprintf(err, errlen, "not an object of cases");
        return -1;
    }
    const cJSON *floors = json_get(noise_doc, label);
    if (!json_truthy(floors))
        return 0;
    if (!cJSON_IsObject(floors)) {
        snprintf(err, errlen, "case \"%.200s\": floors are not an object", label);
        return -1;
    }
    char what[256];
    snprintf(what, sizeof what, "case \"%.200s\"", label);
    return floors_to_array(floors, what, noise, err, errlen);
}

/* Without --case: whether the file is one case's floors given directly (every member a number
 * or null), how many cases it holds, and the last of them. */
static const cJSON *choose(const cJSON *noise_doc, int *flat, int *cases)
{
    const cJSON *only = NULL;
    *flat = 1;
    *cases = 0;
    for (const cJSON *c = noise_doc->child; c; c = c->next) {
        if (cJSON_IsObject(c) || cJSON_IsArray(c) || cJSON_IsString(c))
            *flat = 0;
        if (json_first_of_name(c)) {
            (*cases)++;
            only = c;
        }
    }
    return only;
}

const cJSON *noise_selected(const cJSON *noise_doc, const char *label)
{
    if (!cJSON_IsObject(noise_doc))
        return NULL;
    if (label)
        return json_get(noise_doc, label);
    int flat, cases;
    const cJSON *only = choose(noise_doc, &flat, &cases);
    return flat ? noise_doc : cases == 1 ? only : NULL;
}

int noise_select(const cJSON *noise_doc, const char *label, double noise[JUDGE_NMETRICS],
                 char *err, size_t errlen)
{
    for (int m = 0; m < JUDGE_NMETRICS; m++)
        noise[m] = 0;
    if (!cJSON_IsObject(noise_doc)) {
        snprintf(err, errlen, "not a noise file (want an object: {case: {metric: floor}})");
        return -1;
    }
    if (label) {
        if (!json_get(noise_doc, label)) {
            snprintf(err, errlen, "no case \"%.200s\" here", label);
            return -1;
        }
        return noise_for_case(noise_doc, label, noise, err, errlen);
    }
    if (count_members(noise_doc) > NOISE_MAX_MEMBERS) {
        snprintf(err, errlen, "more than %d entries", NOISE_MAX_MEMBERS);
        return -1;
    }
    int flat, cases;
    const cJSON *only = choose(noise_doc, &flat, &cases);
    if (flat)
        return floors_to_array(noise_doc, "floors", noise, err, errlen);
    if (cases > 1) {
        snprintf(err, errlen, "holds the floors of %d cases: choose one with --case LABEL", cases);
        return -1;
    }
    return noise_for_case(noise_doc, only->string, noise, err, errlen);
}

int cmd_noise(int argc, char **argv)
{
    if (argc != 1 || argv[0][0] == '-') {
        report_fail("usage: perfscope-report noise NULL_MATRIX.json");
        return REPORT_BAD_INPUT;
    }
    char err[REPORT_ERR_MAX] = "", what[REPORT_ERR_MAX];
    cJSON *matrix;
    if (json_file_load(argv[0], JSON_FILE_MAX_BYTES, 0, &matrix, err, sizeof err) != 0) {
        report_fail("%s", err);
        return REPORT_BAD_INPUT;
    }
    cJSON *out = noise_from_null(matrix, what, sizeof what);
    cJSON_Delete(matrix);
    if (!out) {
        report_fail("%s: %s", argv[0], what);
        return REPORT_BAD_INPUT;
    }
    char *text = outfile_json_text(out);
    cJSON_Delete(out);
    if (!text) {
        report_fail("%s: out of memory", argv[0]);
        return REPORT_BAD_INPUT;
    }
    printf("%s\n", text);
    free(text);
    return 0;
}
