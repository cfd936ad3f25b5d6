/* readings.c: counters.jsonl and the boundaries' counters into one time-ordered table (rules in
 * readings.h; each set of readings read by format/counterline.c). It must never parse JSON by
 * hand (cJSON through jsonl.c), never keep a line's cJSON tree past its callback, and never let
 * a hostile line add unbounded series. */
#include "readings.h"
#include "runfolder.h"
#include "counterline.h"
#include "files.h"
#include "jsonl.h"
#include "textfile.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
    int series;
    double v;
};

struct raw {
    uint64_t t;
    int from_phases;
    size_t seq;
    size_t first, count;   /* entries */
};

struct loader {
    struct readings *r;
    struct raw *raws;
    size_t nraw, capraw;
    struct entry *ents;
    size_t nent, capent;
    size_t cap_series;
    int from_phases;
    int oom;
};

static int series_id(struct loader *L, enum series_kind kind, const char *key, const char *name)
{
    struct readings *r = L->r;
    for (size_t i = 0; i < r->ns; i++)
        if (r->s[i].kind == kind && strcmp(r->s[i].key, key) == 0)
            return (int)i;
    if (r->ns >= READINGS_MAX_SERIES) {
        r->ignored_series++;
        return -1;
    }
    if (r->ns == L->cap_series) {
        size_t ncap = L->cap_series ? L->cap_series * 2 : 16;
        struct series *s = realloc(r->s, ncap * sizeof *s);
        if (!s) {
            L->oom = 1;
            return -1;
        }
        r->s = s;
        L->cap_series = ncap;
    }
    struct series *s = &r->s[r->ns];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    snprintf(s->key, sizeof s->key, "%s", key);
    snprintf(s->name, sizeof s->name, "%s", name ? name : "");
    return (int)r->ns++;
}

static void add(struct loader *L, int id, double v)
{
    if (id < 0)
        return;
    if (L->nent == L->capent) {
        size_t ncap = L->capent ? L->capent * 2 : 256;
        struct entry *e = realloc(L->ents, ncap * sizeof *e);
        if (!e) {
            L->oom = 1;
            return;
        }
        L->ents = e;
        L->capent = ncap;
    }
    L->ents[L->nent++] = (struct entry){.series = id, .v = v};
}

static void note_error(struct loader *L, int id, const char *why)
{
    if (id < 0)
        return;
    struct series *s = &L->r->s[id];
    if (!s->error[0])
        snprintf(s->error, sizeof s->error, "%s", why);
}

static void take_rapl(struct loader *L, const cJSON *arr)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, arr)
    {
        struct counter_zone z;
        if (counterline_zone(it, &z) != 0 || strlen(z.zone) >= sizeof L->r->s[0].key)
            continue;
        int id = series_id(L, SK_RAPL, z.zone, z.name);
        if (id < 0)
            continue;
        struct series *s = &L->r->s[id];
        if (!s->name[0] && z.name)
            snprintf(s->name, sizeof s->name, "%s", z.name);
        if (z.max_range_uj > 0)
            s->max_range = z.max_range_uj;
        if (!isnan(z.energy_uj))
            add(L, id, z.energy_uj);
        else {
            note_error(L, id, z.error ? z.error : "no energy_uj in the reading");
            add(L, id, NAN);
        }
    }
}

static void take_gpus(struct loader *L, const cJSON *arr)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, arr)
    {
        struct counter_gpu g;
        if (counterline_gpu(it, &g) != 0)
            continue;
        char key[32];
        snprintf(key, sizeof key, "%d", g.index);
        int e = series_id(L, SK_GPU_ENERGY, key, NULL);
        if (isnan(g.energy_mj))
            note_error(L, e, "NVML gave no energy counter (see perfscope.log)");
        add(L, e, g.energy_mj);
        add(L, series_id(L, SK_GPU_RUN_MEM, key, NULL), g.run_mem_mib);
        add(L, series_id(L, SK_GPU_USED_MEM, key, NULL), g.mem_used_mib);
        add(L, series_id(L, SK_GPU_LISTED, key, NULL),
            g.procs_listed < 0 ? NAN : (double)g.procs_listed);
    }
}

static int take(cJSON *obj, size_t lineno, void *arg)
{
    (void)lineno;
    struct loader *L = arg;
    unsigned long long t;
    const cJSON *c = obj;
    if (L->from_phases) {
        c = cJSON_GetObjectItemCaseSensitive(obj, "counters");
        if (!cJSON_IsObject(c))
            return 0; /* a boundary without counters: no reading, not an error */
    }
    if (json_u64(obj, "t_ns", &t) != 0) {
        if (!L->from_phases)
            L->r->bad_lines++;
        return 0;
    }
    if (L->nraw == L->capraw) {
        size_t ncap = L->capraw ? L->capraw * 2 : 256;
        struct raw *p = realloc(L->raws, ncap * sizeof *p);
        if (!p) {
            L->oom = 1;
            return 1;
        }
        L->raws = p;
        L->capraw = ncap;
    }
    struct raw *rw = &L->raws[L->nraw++];
    rw->t = t;
    rw->from_phases = L->from_phases;
    rw->seq = L->nraw;
    rw->first = L->nent;
    struct counter_line cl;
    counterline_read(c, &cl);
    take_rapl(L, cl.rapl);
    take_gpus(L, cl.gpus);
    if (!isnan(cl.rss_anon_kib))
        add(L, series_id(L, SK_RSS, "", NULL), cl.rss_anon_kib);
    rw->count = L->nent - rw->first;
    if (L->from_phases)
        L->r->boundary_lines++;
    else
        L->r->counters_lines++;
    return L->oom;
}

static int by_time(const void *a, const void *b)
{
    const struct raw *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->from_phases != y->from_phases)
        return x->from_phases - y->from_phases;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

static int read_one(struct loader *L, const char *dir, const char *name, int from_phases,
                    char *err, size_t errlen)
{
    char path[PATH_MAX];
    int there = runfolder_optional(path, sizeof path, dir, name, err, errlen);
    if (there <= 0)
        return there;
    if (!from_phases)
        L->r->counters_present = 1;
    L->from_phases = from_phases;
    struct jsonl_stats js;
    size_t before = L->nraw;
    if (jsonl_foreach(path, take, L, &js, err, errlen) != 0)
        return -1;
    if (L->oom) {
        reader_error(err, errlen, path, "out of memory");
        return -1;
    }
    if (!from_phases) {
        if (js.lines == 0) {
            reader_error(err, errlen, path, "empty file (the shim writes a reading when it starts)");
            return -1;
        }
        L->r->bad_lines += js.bad;
        if (L->nraw == before && (js.bad > 0 || L->r->bad_lines > 0)) {
            reader_error(err, errlen, path, "no counter reading in %zu lines (first bad line %zu)",
                         js.lines, js.first_bad_line);
            return -1;
        }
    }
    return 0;
}

int readings_load(const char *dir, struct readings **out, char *err, size_t errlen)
{
    *out = NULL;
    struct loader L = {0};
    L.r = calloc(1, sizeof *L.r);
    if (!L.r) {
        reader_error(err, errlen, dir, "out of memory");
        return -1;
    }
    int rc = -1;
    if (read_one(&L, dir, "counters.jsonl", 0, err, errlen) != 0 ||
        read_one(&L, dir, "phases.jsonl", 1, err, errlen) != 0)
        goto out;
    struct readings *r = L.r;
    if (L.nraw)
        qsort(L.raws, L.nraw, sizeof *L.raws, by_time);
    r->n = L.nraw;
    r->t = malloc((r->n ? r->n : 1) * sizeof *r->t);
    r->periodic = malloc(r->n ? r->n : 1);
    if (!r->t || !r->periodic)
        goto oom;
    for (size_t i = 0; i < r->ns; i++) {
        r->s[i].v = malloc((r->n ? r->n : 1) * sizeof(double));
        if (!r->s[i].v)
            goto oom;
        for (size_t k = 0; k < r->n; k++)
            r->s[i].v[k] = NAN;
    }
    for (size_t k = 0; k < r->n; k++) {
        r->t[k] = L.raws[k].t;
        r->periodic[k] = (unsigned char)!L.raws[k].from_phases;
        for (size_t e = 0; e < L.raws[k].count; e++) {
            const struct entry *en = &L.ents[L.raws[k].first + e];
            r->s[en->series].v[k] = en->v;
        }
    }
    for (size_t i = 0; i < r->ns; i++)
        for (size_t k = 0; k < r->n; k++) {
            if (isnan(r->s[i].v[k]))
                r->s[i].nerrors++;
            else
                r->s[i].nvalid++;
        }
    rc = 0;
    goto out;
oom:
    reader_error(err, errlen, dir, "out of memory");
out:
    free(L.raws);
    free(L.ents);
    if (rc == 0)
        *out = L.r;
    else
        readings_free(L.r);
    return rc;
}

void readings_free(struct readings *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->ns; i++)
        free(r->s[i].v);
    free(r->s);
    free(r->t);
    free(r->periodic);
    free(r);
}

int readings_find(const struct readings *r, enum series_kind kind, const char *key)
{
    for (size_t i = 0; i < r->ns; i++)
        if (r->s[i].kind == kind && strcmp(r->s[i].key, key) == 0)
            return (int)i;
    return -1;
}

size_t readings_lower(const struct readings *r, uint64_t t_ns)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->t[mid] < t_ns)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}
