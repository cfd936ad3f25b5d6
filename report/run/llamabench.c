/* llamabench.c: llama-bench JSON or JSONL output, else its default markdown table, into
 * throughput (llamabench.h). It must never
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

/* One cell of a markdown row: [p, e) trimmed; the cell after it starts at the returned '|'. */
static const char *cell(const char *p, const char *end, const char **cb, const char **ce)
{
    const char *bar = memchr(p, '|', (size_t)(end - p));
    const char *stop = bar ? bar : end;
    while (p < stop && (*p == ' ' || *p == '\t'))
        p++;
    const char *e = stop;
    while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
        e--;
    *cb = p;
    *ce = e;
    return bar;
}

static int cell_is(const char *b, const char *e, const char *word)
{
    return (size_t)(e - b) == strlen(word) && memcmp(b, word, (size_t)(e - b)) == 0;
}

/* "pp512", "tg128", "pp512+tg128" (llama-bench's test column) into n_prompt and n_gen. */
static int test_name(const char *b, const char *e, long long *np, long long *ng)
{
    *np = *ng = 0;
    while (b < e) {
        if (e - b < 3 || (memcmp(b, "pp", 2) != 0 && memcmp(b, "tg", 2) != 0))
            return -1;
        long long *dst = b[0] == 'p' ? np : ng;
        b += 2;
        long long v = 0;
        int digits = 0;
        while (b < e && *b >= '0' && *b <= '9' && digits < 12) {
            v = v * 10 + (*b++ - '0');
            digits++;
        }
        if (!digits || (b < e && *b != '+' && *b != '@' && *b != ' '))
            return -1;
        *dst = v;
        if (b < e && *b != '+')
            break; /* "tg128 @ d512": the depth is not the test's size */
        if (b < e)
            b++;
    }
    return 0;
}

/* llama-bench's default output, a markdown table: a header row naming "test" and "t/s", a
 * separator row, then one row a test whose t/s cell is "AVG ± STDDEV". */
static void take_markdown(struct llamabench *lb, const char *buf, const char *end)
{
    int test_col = -1, ts_col = -1;
    for (const char *p = buf; p < end;) {
        const char *line_end = memchr(p, '\n', (size_t)(end - p));
        const char *le = line_end ? line_end : end;
        const char *q = p;
        while (q < le && (*q == ' ' || *q == '\t'))
            q++;
        if (q == le || *q != '|') {
            test_col = ts_col = -1; /* a table ends at its first other line */
        } else {
            const char *cols[2][2] = {{NULL, NULL}, {NULL, NULL}};
            int col = 0, header_test = -1, header_ts = -1;
            for (const char *c = q + 1; c && c < le; col++) {
                const char *cb, *ce;
                const char *next = cell(c, le, &cb, &ce);
                if (cell_is(cb, ce, "test"))
                    header_test = col;
                if (cell_is(cb, ce, "t/s"))
                    header_ts = col;
                if (col == test_col) {
                    cols[0][0] = cb;
                    cols[0][1] = ce;
                }
                if (col == ts_col) {
                    cols[1][0] = cb;
                    cols[1][1] = ce;
                }
                c = next ? next + 1 : NULL;
            }
            long long np, ng;
            if (header_test >= 0 && header_ts >= 0) {
                test_col = header_test;
                ts_col = header_ts;
            } else if (cols[0][0] && cols[1][0] &&
                       test_name(cols[0][0], cols[0][1], &np, &ng) == 0 &&
                       lb->n < LLAMABENCH_MAX_TESTS) {
                char num[64];
                size_t n = (size_t)(cols[1][1] - cols[1][0]);
                snprintf(num, sizeof num, "%.*s", (int)(n < sizeof num ? n : sizeof num - 1),
                         cols[1][0]);
                char *e1;
                double avg = strtod(num, &e1), sd = 0;
                if (e1 != num && isfinite(avg) && avg > 0) {
                    const char *pm = strstr(e1, "\xc2\xb1"); /* U+00B1 PLUS-MINUS SIGN */
                    if (pm) {
                        sd = strtod(pm + 2, NULL);
                        if (!isfinite(sd) || sd < 0)
                            sd = 0;
                    }
                    struct lb_test *t = &lb->t[lb->n];
                    *t = (struct lb_test){.n_prompt = np, .n_gen = ng, .avg_ts = avg,
                                          .stddev_ts = sd};
                    if (np > 0 && ng == 0 && lb->pp < 0)
                        lb->pp = (int)lb->n;
                    if (ng > 0 && np == 0 && lb->tg < 0)
                        lb->tg = (int)lb->n;
                    lb->n++;
                }
            }
        }
        p = line_end ? line_end + 1 : end;
    }
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
    if (lb->n == 0)
        take_markdown(lb, buf, end);
    free(buf);
    return lb->n > 0;
}
