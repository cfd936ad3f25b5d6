/* matrix_table.c: table.md of a matrix, line for line as compare.py's write_table: per case the
 * B/A ratio of six metrics (marked better or **worse**), the verdict, failed arms and what a
 * regression costs; then, beyond it, the warnings (the matrix's and each case's), one line each
 * under the table. Above the table, one line per case that has no verdict (a side with no usable
 * run), so that its "neutral (N arms failed)" is not read as one (DESIGN 11). It must only read
 * the matrix object and never print a ratio that is null. */
#include "matrix.h"
#include "sbuf.h"
#include "warn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *metric, *title;
} columns[] = {
    {"prefill_tps", "pp"},         {"decode_tps", "tg"},    {"gpu_peak_mib", "GPU mem"},
    {"host_anon_peak_mib", "host anon"}, {"load_s", "load"}, {"decode_j_per_token", "tg J/tok"},
};
#define NCOL (sizeof columns / sizeof columns[0])

static const char *text(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) && v->valuestring ? v->valuestring : "";
}

/* A number, as cJSON parses it or as judge.c writes it (a raw item holding its shortest text). */
static int number(const cJSON *v, double *out)
{
    if (cJSON_IsNumber(v)) {
        *out = v->valuedouble;
        return isfinite(*out) ? 0 : -1;
    }
    if (cJSON_IsRaw(v) && v->valuestring) {
        char *end;
        *out = strtod(v->valuestring, &end);
        return end != v->valuestring && !*end && isfinite(*out) ? 0 : -1;
    }
    return -1;
}

static void cell(struct sbuf *b, const cJSON *metrics, const char *metric)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(metrics, metric);
    if (!cJSON_IsObject(v) || !v->child) {
        sbuf_printf(b, " - |");
        return;
    }
    const cJSON *ratio = cJSON_GetObjectItemCaseSensitive(v, "ratio");
    const char *verdict = text(v, "verdict");
    char c[64] = "-";
    double r;
    if (number(ratio, &r) == 0)
        snprintf(c, sizeof c, "%.3f", r);
    if (strcmp(verdict, "worse") == 0)
        sbuf_printf(b, " **%s** worse |", c);
    else if (strcmp(verdict, "better") == 0)
        sbuf_printf(b, " %s better |", c);
    else
        sbuf_printf(b, " %s |", c);
}

static void case_line(struct sbuf *b, const cJSON *c)
{
    sbuf_printf(b, "| ");
    sbuf_clean(b, text(c, "label"), 1);
    sbuf_printf(b, " |");
    if (cJSON_GetObjectItemCaseSensitive(c, "skipped")) {
        sbuf_printf(b, " ");
        sbuf_clean(b, text(c, "skipped"), 1);
        sbuf_printf(b, " |\n");
        return;
    }
    const cJSON *metrics = cJSON_GetObjectItemCaseSensitive(c, "metrics");
    for (size_t i = 0; i < NCOL; i++)
        cell(b, metrics, columns[i].metric);
    sbuf_printf(b, " %s", text(c, "verdict"));
    double dropped;
    if (number(cJSON_GetObjectItemCaseSensitive(c, "dropped_runs"), &dropped) == 0 && dropped != 0)
        sbuf_printf(b, " (%.0f arms failed)", dropped);
    const cJSON *worse = cJSON_GetObjectItemCaseSensitive(c, "worse");
    if (cJSON_IsArray(worse) && cJSON_GetArraySize(worse) > 0) {
        sbuf_printf(b, ": costs ");
        const cJSON *w;
        int n = 0;
        cJSON_ArrayForEach(w, worse)
        {
            sbuf_printf(b, "%s", n++ ? ", " : "");
            if (cJSON_IsString(w))
                sbuf_clean(b, w->valuestring, 1);
        }
    }
    sbuf_printf(b, " |\n");
}

/* The case's "no verdict: ..." warning (warn_no_verdict's), or NULL when it was judged. */
static const char *no_verdict(const cJSON *c)
{
    const cJSON *w;
    cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(c, "warnings"))
        if (cJSON_IsString(w) && strncmp(w->valuestring, WARN_NO_VERDICT, strlen(WARN_NO_VERDICT)) == 0)
            return w->valuestring;
    return NULL;
}

int matrix_judged_none(const cJSON *table)
{
    int ran = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(table, "cases"))
    {
        if (cJSON_GetObjectItemCaseSensitive(c, "skipped"))
            continue;
        if (!no_verdict(c))
            return 0;
        ran = 1;
    }
    return ran;
}

char *matrix_table(const cJSON *table)
{
    struct sbuf b = {0};
    const char *a = text(table, "a"), *bn = text(table, "b");
    /* As diff's first line: the word in the case's line below is compare.py's, not a verdict. */
    const cJSON *c;
    int said = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(table, "cases"))
    {
        const char *why = no_verdict(c);
        if (!why)
            continue;
        sbuf_printf(&b, "**No verdict** for ");
        sbuf_clean(&b, text(c, "label"), 0);
        sbuf_printf(&b, ": ");
        sbuf_clean(&b, why + strlen(WARN_NO_VERDICT), 0);
        sbuf_printf(&b, ". Its verdict in the table is compare.py's word, which stays.\n");
        said = 1;
    }
    if (said)
        sbuf_printf(&b, "\n");
    sbuf_printf(&b, "| case |");
    for (size_t i = 0; i < NCOL; i++) {
        sbuf_printf(&b, " %s ", columns[i].title);
        sbuf_clean(&b, bn, 1);
        sbuf_printf(&b, "/");
        sbuf_clean(&b, a, 1);
        sbuf_printf(&b, " |");
    }
    sbuf_printf(&b, " verdict |\n|---|");
    for (size_t i = 0; i < NCOL; i++)
        sbuf_printf(&b, "---:|");
    sbuf_printf(&b, "---|\n");
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(table, "cases");
    cJSON_ArrayForEach(c, cases)
        case_line(&b, c);
    /* Beyond write_table: the warnings, the matrix's own, then each case's, under the table. */
    int first = 1;
    const cJSON *w;
    cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(table, "warnings"))
    {
        if (!cJSON_IsString(w))
            continue;
        sbuf_printf(&b, "%sWarning: ", first ? "\n" : "");
        sbuf_clean(&b, w->valuestring, 0);
        sbuf_printf(&b, ".\n");
        first = 0;
    }
    cJSON_ArrayForEach(c, cases)
    {
        cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(c, "warnings"))
        {
            if (!cJSON_IsString(w))
                continue;
            sbuf_printf(&b, "%sWarning: ", first ? "\n" : "");
            sbuf_clean(&b, text(c, "label"), 0);
            sbuf_printf(&b, ": ");
            sbuf_clean(&b, w->valuestring, 0);
            sbuf_printf(&b, ".\n");
            first = 0;
        }
    }
    return sbuf_take(&b);
}
