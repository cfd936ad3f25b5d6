/* hot.c: profile.json into per-group hot-function rows (hot.h). It must never parse JSON
 * by hand, never trust a member's type, and never keep more than HOT_TOP rows a table. */
#include "hot.h"
#include "jsonl.h"
#include "textfile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double num(const cJSON *o, const char *key, double dflt)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(it) && isfinite(it->valuedouble) ? it->valuedouble : dflt;
}

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(it) && it->valuestring ? it->valuestring : NULL;
}

/* A heap copy; NULL when out of memory. */
static char *dup_or_null(const char *s, int *oom)
{
    char *d = strdup(s ? s : "");
    if (!d)
        *oom = 1;
    return d;
}

/* A heap "file:line". */
static char *file_line(const char *file, int line, int *oom)
{
    char *d = NULL;
    if (asprintf(&d, "%s:%d", file, line) < 0) {
        *oom = 1;
        return NULL;
    }
    return d;
}

static size_t take_rows(const cJSON *arr, struct hot_row *rows, int *oom)
{
    size_t n = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, arr)
    {
        if (n == HOT_TOP)
            break;
        const char *name = str(r, "name");
        double share = num(r, "share", 0);
        /* A share is of the group's samples: outside 0..1 the row is not the symbolizer's (a
         * reader fuzz's -9.2e18 was shown as "-922337203685477580800.0%"), and is left out. */
        if (!cJSON_IsObject(r) || !name || share < 0 || share > 1)
            continue;
        struct hot_row *row = &rows[n++];
        memset(row, 0, sizeof *row);
        row->name = dup_or_null(name, oom);
        row->share = share;
        row->cpu_s = num(r, "cpu_s", -1);
        double th = num(r, "threads", -1);
        row->threads = th >= 0 && th < 1e9 ? (int)th : -1;
        row->busiest_s = num(r, "busiest_thread_s", -1);
        row->pct_wall = num(r, "pct_of_wall_on_busiest_thread", -1);
        /* self rows: the line with most samples where the symbolizer gives it, else the
         * function's own file:line */
        const char *src = str(r, "hot_line") ? str(r, "hot_line") : str(r, "source");
        const char *file = str(r, "file");
        double line = num(r, "line", -1);
        if (src)
            row->source = dup_or_null(src, oom);
        else if (file && line >= 0 && line < 1e9)
            row->source = file_line(file, (int)line, oom);
        else
            row->source = dup_or_null(file, oom);
    }
    return n;
}

static void take_group(struct hot_group *g, const cJSON *o, int *oom)
{
    g->samples = num(o, "samples", -1);
    g->cpu_s = num(o, "cpu_s", -1);
    g->nself = take_rows(cJSON_GetObjectItemCaseSensitive(o, "self"), g->self, oom);
    g->nincl = take_rows(cJSON_GetObjectItemCaseSensitive(o, "inclusive"), g->incl, oom);
    const cJSON *bt = cJSON_GetObjectItemCaseSensitive(o, "busiest_threads");
    const cJSON *first = cJSON_IsArray(bt) ? cJSON_GetArrayItem(bt, 0) : NULL;
    if (cJSON_IsObject(first) && num(first, "cpu_s", -1) >= 0) {
        g->have_busiest = 1;
        g->busiest_cpu_s = num(first, "cpu_s", 0);
        double tid = num(first, "tid", -1);
        g->busiest_tid = tid >= 0 && tid < 1e15 ? (long long)tid : -1;
        const char *name = str(first, "name");
        g->busiest_name = dup_or_null(name, oom);
    }
    if (!g->busiest_name)
        g->busiest_name = dup_or_null("", oom);
}

int hot_profile_load(const char *path, struct hot_profile **out, char *err, size_t errlen)
{
    *out = NULL;
    cJSON *root;
    if (json_file_load(path, HOT_MAX_BYTES, 0, &root, err, errlen) != 0)
        return -1;
    const cJSON *groups = cJSON_GetObjectItemCaseSensitive(root, "groups");
    if (!cJSON_IsObject(groups)) {
        reader_error(err, errlen, path, "no \"groups\" object (not a perfscope profile)");
        cJSON_Delete(root);
        return -1;
    }
    struct hot_profile *p = calloc(1, sizeof *p);
    int n = cJSON_GetArraySize(groups);
    if (p)
        p->g = calloc(n > 0 ? (size_t)n : 1, sizeof *p->g);
    if (!p || !p->g) {
        reader_error(err, errlen, path, "out of memory");
        hot_profile_free(p);
        cJSON_Delete(root);
        return -1;
    }
    p->samples = num(root, "samples", -1);
    p->dropped = num(root, "dropped", -1);
    p->period_s = num(root, "period_s", -1);
    const cJSON *g;
    int oom = 0;
    cJSON_ArrayForEach(g, groups)
    {
        if (!cJSON_IsObject(g) || !g->string)
            continue;
        struct hot_group *pg = &p->g[p->ngroups++];
        pg->name = dup_or_null(g->string, &oom);
        take_group(pg, g, &oom);
    }
    cJSON_Delete(root);
    if (oom) {
        reader_error(err, errlen, path, "out of memory");
        hot_profile_free(p);
        return -1;
    }
    *out = p;
    return 0;
}

void hot_profile_free(struct hot_profile *p)
{
    if (!p)
        return;
    for (size_t i = 0; p->g && i < p->ngroups; i++) {
        struct hot_group *g = &p->g[i];
        for (size_t r = 0; r < g->nself; r++) {
            free(g->self[r].name);
            free(g->self[r].source);
        }
        for (size_t r = 0; r < g->nincl; r++) {
            free(g->incl[r].name);
            free(g->incl[r].source);
        }
        free(g->name);
        free(g->busiest_name);
    }
    free(p->g);
    free(p);
}

const struct hot_group *hot_profile_group(const struct hot_profile *p, const char *name)
{
    for (size_t i = 0; p && i < p->ngroups; i++)
        if (p->g[i].name && strcmp(p->g[i].name, name) == 0)
            return &p->g[i];
    return NULL;
}
