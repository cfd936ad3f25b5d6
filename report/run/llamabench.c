/* llamabench.c: llama-bench JSON or JSONL output into throughput (llamabench.h). It must never
 * parse JSON by hand (cJSON does, from each '[' or '{' that starts a line), never read more than
 * LLAMABENCH_MAX_BYTES, and never fail the report. */
#include "llamabench.h"
#include "textfile.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int whole(const cJSON *o, const char *key, long long *v)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(it) || !(it->valuedouble >= 0) || it->valuedouble > 1e15 ||
        it->valuedouble != floor(it->valuedouble))
        return -1;
    *v = (long long)it->valuedouble;
    return 0;
}

static void take_test(struct llamabench *lb, const cJSON *o)
{
    long long np, ng;
    const cJSON *avg = cJSON_GetObjectItemCaseSensitive(o, "avg_ts");
    if (!cJSON_IsObject(o) || whole(o, "n_prompt", &np) || whole(o, "n_gen", &ng) ||
        !cJSON_IsNumber(avg) || !isfinite(avg->valuedouble) || avg->valuedouble <= 0 ||
        lb->n == LLAMABENCH_MAX_TESTS)
        return;
    struct lb_test *t = &lb->t[lb->n];
    t->n_prompt = np;
    t->n_gen = ng;
    t->avg_ts = avg->valuedouble;
    const cJSON *sd = cJSON_GetObjectItemCaseSensitive(o, "stddev_ts");
    t->stddev_ts = cJSON_IsNumber(sd) && isfinite(sd->valuedouble) ? sd->valuedouble : 0;
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, "samples_ts");
    t->nsamples = cJSON_IsArray(s) ? (size_t)cJSON_GetArraySize(s) : 0;
    if (np > 0 && ng == 0 && lb->pp < 0)
        lb->pp = (int)lb->n;
    if (ng > 0 && np == 0 && lb->tg < 0)
        lb->tg = (int)lb->n;
    lb->n++;
}

/* A JSON value parsed at p (an array of tests or one test); returns where it ended, or NULL. */
static const char *take_value(struct llamabench *lb, const char *p, const char *end)
{
    const char *stop = NULL;
    cJSON *v = cJSON_ParseWithLengthOpts(p, (size_t)(end - p), &stop, 0);
    if (!v)
        return NULL;
    if (cJSON_IsArray(v)) {
        const cJSON *o;
        cJSON_ArrayForEach(o, v)
            take_test(lb, o);
    } else {
        take_test(lb, v);
    }
    cJSON_Delete(v);
    return stop;
}

int llamabench_parse(const char *path, struct llamabench *lb)
{
    memset(lb, 0, sizeof *lb);
    lb->pp = lb->tg = -1;
    char *buf, err[256];
    size_t len;
    if (textfile_slurp(path, LLAMABENCH_MAX_BYTES, 1, &buf, &len, err, sizeof err) != 0)
        return 0;
    const char *p = buf, *end = buf + len;
    int failed = 0; /* a failed parse may have read to the end of the file: bounded */
    while (p < end && failed < 32) {
        const char *line_end = memchr(p, '\n', (size_t)(end - p));
        const char *q = p;
        while (q < end && (*q == ' ' || *q == '\t'))
            q++;
        const char *next = line_end ? line_end + 1 : end;
        if (q < end && (*q == '[' || *q == '{')) {
            const char *stop = take_value(lb, q, end);
            failed += !stop;
            if (stop && stop > next)
                next = stop; /* a multi-line array: go on after it */
        }
        p = next;
    }
    free(buf);
    return lb->n > 0;
}
