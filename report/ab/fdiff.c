/* fdiff.c: the function-level diff (fdiff.h): profiled runs loaded (the run model's per-group
 * figures through run_groups_load, the symbolizer's stacks.folded through format/folded.c),
 * per group and function the values per unit, their means, changes and permutation p-values.
 * It must never work out a group's wall or tokens itself, never test a function on values it
 * selected by their change (what is tested depends only on the pooled runs of both sides, so a
 * p-value keeps its meaning), and never print before every run is read. */
#include "fdiff.h"
#include "folded.h"
#include "jsondoc.h"
#include "pyfmt.h"
#include "report.h"
#include "run/run.h"
#include "runfolder.h"
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { K_SELF, K_INCL, K_STACK, K_TOTAL };

struct fd_run {
    char *dir;
    struct run_groups rg;
    struct hmap counts;        /* [kind, group id, id] -> samples; K_TOTAL: [kind, group, 0] */
    uint32_t *gid;             /* rg.g[i]'s name in the pool */
};

struct load_ctx {
    struct fd_set *s;
    struct fd_run *r;
    uint32_t *ids;             /* FOLDED_MAX_FRAMES */
    char *join;                /* FOLDED_MAX_LINE */
    int oom;
};

static int add_count(struct hmap *m, uint64_t kind, uint64_t g, uint64_t id, uint64_t c)
{
    uint64_t key[3] = {kind, g, id};
    uint64_t *v = hmap_get(m, key, NULL);
    if (!v)
        return -1;
    *v += c;
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int on_line(void *vctx, const char *group, char *const *frames, size_t n, uint64_t count)
{
    struct load_ctx *c = vctx;
    uint32_t g = strpool_id(&c->s->pool, group);
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = strlen(frames[i]); /* the frames came from one line: they fit in join */
        if (i)
            c->join[len++] = ';';
        memcpy(c->join + len, frames[i], k);
        len += k;
        c->ids[i] = strpool_id(&c->s->pool, frames[i]);
        if (c->ids[i] == UINT32_MAX)
            g = UINT32_MAX;
    }
    c->join[len] = '\0';
    uint32_t st = strpool_id(&c->s->pool, c->join);
    if (g == UINT32_MAX || st == UINT32_MAX ||
        add_count(&c->r->counts, K_STACK, g, st, count) != 0 ||
        add_count(&c->r->counts, K_SELF, g, c->ids[n - 1], count) != 0 ||
        add_count(&c->r->counts, K_TOTAL, g, 0, count) != 0) {
        c->oom = 1;
        return -1;
    }
    /* inclusive: each function of the stack once (recursion counted once) */
    qsort(c->ids, n, sizeof *c->ids, cmp_u32);
    for (size_t i = 0; i < n; i++)
        if ((i == 0 || c->ids[i] != c->ids[i - 1]) &&
            add_count(&c->r->counts, K_INCL, g, c->ids[i], count) != 0) {
            c->oom = 1;
            return -1;
        }
    return 0;
}

static void run_free(struct fd_run *r)
{
    if (!r)
        return;
    free(r->dir);
    free(r->gid);
    run_groups_free(&r->rg);
    hmap_free(&r->counts);
    free(r);
}

int fd_add_run(struct fd_set *s, int side, const char *dir, char *err, size_t errlen)
{
    if (!s->pool.s && strpool_init(&s->pool) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    struct fd_run *r = calloc(1, sizeof *r);
    struct fd_run **v = realloc(s->runs[side], (s->n[side] + 1) * sizeof *v);
    if (!r || !v) {
        free(r);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    s->runs[side] = v;
    hmap_init(&r->counts, 3);
    if (!(r->dir = strdup(dir))) {
        run_free(r);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (run_groups_load(dir, &r->rg, err, errlen) != 0) {
        run_free(r);
        return -1;
    }
    if (r->rg.samples == 0 || r->rg.period_s <= 0) {
        snprintf(err, errlen, "%s: not a profiled run (%s): run it with stack sampling on "
                 "(perfscope record, or the matrix's --profile N)", dir,
                 r->rg.note[0] ? r->rg.note : "no stack samples");
        run_free(r);
        return -1;
    }
    r->gid = malloc((r->rg.n ? r->rg.n : 1) * sizeof *r->gid);
    for (size_t i = 0; r->gid && i < r->rg.n; i++)
        r->gid[i] = strpool_id(&s->pool, r->rg.g[i].name);
    char path[4096];
    struct load_ctx c = {.s = s, .r = r, .ids = malloc(FOLDED_MAX_FRAMES * sizeof(uint32_t)),
                         .join = malloc(FOLDED_MAX_LINE)};
    int rc = -1;
    if (!r->gid || !c.ids || !c.join)
        snprintf(err, errlen, "out of memory");
    else if (runfolder_path(path, sizeof path, dir, RUN_FOLDED, err, errlen) == 0) {
        rc = folded_read(path, on_line, &c, err, errlen);
        if (rc == 1)
            snprintf(err, errlen, "%s: no stacks.folded (the symbolizer writes it: "
                     "perfscope symbolize %s)", dir, dir);
        if (c.oom)
            snprintf(err, errlen, "out of memory");
        rc = rc == 0 ? 0 : -1;
    }
    free(c.ids);
    free(c.join);
    if (rc != 0) {
        run_free(r);
        return -1;
    }
    s->runs[side][s->n[side]++] = r;
    return 0;
}

void fd_set_free(struct fd_set *s)
{
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < s->n[k]; i++)
            run_free(s->runs[k][i]);
        free(s->runs[k]);
    }
    strpool_free(&s->pool);
    memset(s, 0, sizeof *s);
}

void fd_result_free(struct fd_result *r)
{
    for (size_t i = 0; i < r->ng; i++) {
        free(r->g[i].f);
        free(r->g[i].st);
    }
    free(r->g);
    memset(r, 0, sizeof *r);
}

/* ---- computing ---- */

static const struct run_group_fig *group_of(const struct fd_run *r, uint32_t g)
{
    for (size_t i = 0; i < r->rg.n; i++)
        if (r->gid[i] == g)
            return &r->rg.g[i];
    return NULL;
}

static uint64_t count_of(const struct fd_run *r, int kind, uint32_t g, uint32_t id)
{
    uint64_t key[3] = {(uint64_t)kind, g, id};
    const uint64_t *v = hmap_find(&r->counts, key);
    return v ? *v : 0;
}

/* Per run of both sides (A first), the value of (kind, g, id) per unit. */
static void values(const struct fd_set *s, int kind, uint32_t g, uint32_t id, const double *scale,
                   double *out)
{
    size_t k = 0;
    for (int side = 0; side < 2; side++)
        for (size_t i = 0; i < s->n[side]; i++, k++)
            out[k] = (double)count_of(s->runs[side][i], kind, g, id) * scale[k];
}

static double mean(const double *v, size_t n)
{
    double t = 0;
    for (size_t i = 0; i < n; i++)
        t += v[i];
    return n ? t / (double)n : 0;
}

static void value_of(const struct fd_set *s, const double *v, double a_total, int test,
                     struct fd_value *out)
{
    size_t na = s->n[0], nb = s->n[1];
    out->a = mean(v, na);
    out->b = mean(v + na, nb);
    out->pp = a_total > 0 ? (out->b - out->a) / a_total * 100.0 : 0;
    out->p = out->p_holm = -1;
    struct perm_result pr;
    if (test && stats_permutation(v, na, v + na, nb, &pr) == 0)
        out->p = pr.p;
}

static const struct fd_func *holm_base;

static int by_self_p(const void *x, const void *y)
{
    double a = holm_base[*(const size_t *)x].self.p, b = holm_base[*(const size_t *)y].self.p;
    return a < b ? -1 : a > b;
}

/* Holm's step-down over the tested functions: the i-th smallest of m p-values times (m - i),
 * made monotone, at most 1. */
static void holm(struct fd_group *g)
{
    size_t *order = malloc((g->nf ? g->nf : 1) * sizeof *order), m = 0;
    if (!order)
        return; /* nothing is called significant */
    for (size_t i = 0; i < g->nf; i++)
        if (g->f[i].tested)
            order[m++] = i;
    holm_base = g->f;
    qsort(order, m, sizeof *order, by_self_p);
    double run = 0;
    for (size_t i = 0; i < m; i++) {
        struct fd_func *fn = &g->f[order[i]];
        double adj = fn->self.p * (double)(m - i);
        run = adj > run ? adj : run;
        fn->self.p_holm = run < 1 ? run : 1;
        fn->significant = fn->shown && fn->self.p_holm < FDIFF_P;
        g->significant += (size_t)fn->significant;
    }
    free(order);
}

static int by_share(const void *x, const void *y)
{
    const struct fd_func *a = x, *b = y;
    if (a->share != b->share)
        return a->share > b->share ? -1 : 1;
    double pa = fabs(a->self.pp), pb = fabs(b->self.pp);
    if (pa != pb)
        return pa > pb ? -1 : 1;
    return a->name < b->name ? -1 : a->name > b->name;
}

static int by_change(const void *x, const void *y)
{
    const struct fd_stack *a = x, *b = y;
    double da = fabs(a->b - a->a), db = fabs(b->b - b->a);
    if (da != db)
        return da > db ? -1 : 1;
    return a->stack < b->stack ? -1 : a->stack > b->stack;
}

/* The ids of one kind in group g over every run, each once, into *ids. */
static int ids_in(const struct fd_set *s, int kind, uint32_t g, uint32_t **ids, size_t *n)
{
    struct hmap seen = {0};
    hmap_init(&seen, 1);
    *ids = NULL;
    *n = 0;
    size_t cap = 0;
    for (int side = 0; side < 2; side++)
        for (size_t i = 0; i < s->n[side]; i++) {
            const struct hmap *m = &s->runs[side][i]->counts;
            for (size_t j = 0; j < m->cap; j++) {
                if (!m->used[j])
                    continue;
                const uint64_t *k = hmap_key(m, j);
                if (k[0] != (uint64_t)kind || k[1] != g)
                    continue;
                int is_new;
                uint64_t key = k[2];
                if (!hmap_get(&seen, &key, &is_new))
                    goto oom;
                if (!is_new)
                    continue;
                if (*n == cap) {
                    cap = cap ? cap * 2 : 64;
                    uint32_t *v = realloc(*ids, cap * sizeof *v);
                    if (!v)
                        goto oom;
                    *ids = v;
                }
                (*ids)[(*n)++] = (uint32_t)k[2];
            }
        }
    hmap_free(&seen);
    return 0;
oom:
    hmap_free(&seen);
    free(*ids);
    *ids = NULL;
    return -1;
}

static void note_skip(struct fd_result *r, const char *group, const char *why)
{
    size_t len = strlen(r->skipped);
    snprintf(r->skipped + len, sizeof r->skipped - len, "%s%s (%s)", len ? "; " : "", group, why);
}

static int one_group(const struct fd_set *s, uint32_t g, struct fd_result *r, struct fd_group *out)
{
    size_t na = s->n[0], nb = s->n[1], n = na + nb;
    const char *name = strpool_str(&s->pool, g);
    double *scale = malloc(n * sizeof *scale), *v = malloc(n * sizeof *v);
    double *w = malloc(n * sizeof *w);
    int per_token = 1, rc = -1;
    memset(out, 0, sizeof *out);
    if (!scale || !v || !w)
        goto done;
    for (int side = 0, k = 0; side < 2; side++)
        for (size_t i = 0; i < s->n[side]; i++, k++) {
            const struct run_group_fig *f = group_of(s->runs[side][i], g);
            if (!f || !(f->wall_s > 0)) {
                note_skip(r, name, "not in every run");
                rc = 1;
                goto done;
            }
            per_token &= f->tokens > 0;
        }
    for (int side = 0, k = 0; side < 2; side++)
        for (size_t i = 0; i < s->n[side]; i++, k++) {
            const struct fd_run *run = s->runs[side][i];
            const struct run_group_fig *f = group_of(run, g);
            scale[k] = run->rg.period_s / (per_token ? (double)f->tokens : f->wall_s);
        }
    out->name = g;
    out->per_token = per_token;
    values(s, K_TOTAL, g, 0, scale, v);
    value_of(s, v, mean(v, na), 1, &out->total);
    double pooled = mean(v, n), a_total = out->total.a, change = out->total.b - out->total.a;
    uint32_t *ids;
    size_t nids;
    if (ids_in(s, K_INCL, g, &ids, &nids) != 0)
        goto done;
    out->f = malloc((nids ? nids : 1) * sizeof *out->f);
    if (!out->f) {
        free(ids);
        goto done;
    }
    for (size_t j = 0; j < nids; j++) {
        values(s, K_SELF, g, ids[j], scale, v);
        values(s, K_INCL, g, ids[j], scale, w);
        /* tested or not by the pooled runs alone: the same for every split of them */
        double ps = mean(v, n), pi = mean(w, n);
        if (!(pooled > 0) || (ps < FDIFF_MEASURABLE * pooled && pi < FDIFF_MEASURABLE * pooled))
            continue;
        struct fd_func *fn = &out->f[out->nf++];
        memset(fn, 0, sizeof *fn);
        fn->name = ids[j];
        value_of(s, v, a_total, 1, &fn->self);
        value_of(s, w, a_total, 1, &fn->incl);
        fn->share = change != 0 ? (fn->self.b - fn->self.a) / change : 0;
        fn->tested = ps >= FDIFF_MEASURABLE * pooled && fn->self.p >= 0;
        fn->shown = fabs(fn->self.pp) >= s->floor_pp;
        out->shown += (size_t)fn->shown;
        out->tested += (size_t)fn->tested;
        out->raw_below_p += (size_t)(fn->tested && fn->self.p < FDIFF_P);
    }
    out->measurable = out->nf;
    free(ids);
    holm(out);
    if (out->nf)
        qsort(out->f, out->nf, sizeof *out->f, by_share);
    if (ids_in(s, K_STACK, g, &ids, &nids) != 0)
        goto done;
    out->st = malloc((nids ? nids : 1) * sizeof *out->st);
    if (!out->st) {
        free(ids);
        goto done;
    }
    for (size_t j = 0; j < nids; j++) {
        values(s, K_STACK, g, ids[j], scale, v);
        out->st[out->nst++] = (struct fd_stack){ids[j], mean(v, na), mean(v + na, nb)};
    }
    free(ids);
    if (out->nst)
        qsort(out->st, out->nst, sizeof *out->st, by_change);
    rc = 0;
done:
    free(scale);
    free(v);
    free(w);
    if (rc != 0) {
        free(out->f);
        free(out->st);
        memset(out, 0, sizeof *out);
    }
    return rc;
}

int fd_compute(struct fd_set *s, struct fd_result *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    if (!s->n[0] || !s->n[1]) {
        snprintf(err, errlen, "want profiled runs on both sides");
        return -1;
    }
    /* groups in the order of A's first run, then any the others add */
    size_t cap = 0, nvisited = 0, vcap = 0;
    uint32_t *visited = NULL;
    for (int side = 0; side < 2; side++)
        for (size_t i = 0; i < s->n[side]; i++) {
            const struct fd_run *run = s->runs[side][i];
            for (size_t k = 0; k < run->rg.n; k++) {
                uint32_t g = run->gid[k];
                int seen = 0;
                for (size_t j = 0; j < nvisited && !seen; j++)
                    seen = visited[j] == g;
                if (seen)
                    continue;
                if (nvisited == vcap) {
                    vcap = vcap ? vcap * 2 : 16;
                    uint32_t *v = realloc(visited, vcap * sizeof *v);
                    if (!v)
                        goto oom;
                    visited = v;
                }
                visited[nvisited++] = g;
                if (r->ng == cap) {
                    cap = cap ? cap * 2 : 8;
                    struct fd_group *v = realloc(r->g, cap * sizeof *v);
                    if (!v)
                        goto oom;
                    r->g = v;
                }
                int rc = one_group(s, g, r, &r->g[r->ng]);
                if (rc < 0)
                    goto oom;
                if (rc == 0)
                    r->ng++;
            }
        }
    free(visited);
    if (r->ng == 0 && !r->skipped[0])
        note_skip(r, "every phase group", "these runs marked no phases, and the diff compares functions per "
                  "phase group: mark phases (perfscope mark), or compare the whole profiles with "
                  "go tool pprof -diff_base A/profile.pb.gz B/profile.pb.gz");
    return 0;
oom:
    free(visited);
    fd_result_free(r);
    snprintf(err, errlen, "out of memory");
    return -1;
}

/* ---- output ---- */

const char *fd_unit_word(const struct fd_group *g)
{
    return g->per_token ? "CPU per token" : "CPU per second of wall";
}

/* A value per unit: ms per token, or CPU seconds per wall second. */
void fd_fmt_value(const struct fd_group *g, double v, char *buf, size_t size)
{
    if (g->per_token)
        snprintf(buf, size, "%.4g ms", v * 1000.0);
    else
        snprintf(buf, size, "%.4g s/s", v);
}

void fd_fmt_p(double p, char *buf, size_t size)
{
    if (p < 0)
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, "%.2g", p);
}

static const struct fd_func *incl_base;

static int by_incl_pp(const void *x, const void *y)
{
    const struct fd_func *a = &incl_base[*(const size_t *)x], *b = &incl_base[*(const size_t *)y];
    double pa = fabs(a->incl.pp), pb = fabs(b->incl.pp);
    if (pa != pb)
        return pa > pb ? -1 : 1;
    return a->name < b->name ? -1 : a->name > b->name;
}

static void table_cell(FILE *f, const char *s)
{
    for (; *s; s++)
        fputs(*s == '|' ? "\\|" : (char[]){*s, 0}, f);
}

void fd_render(FILE *f, const struct fd_set *s, const struct fd_result *r)
{
    fprintf(f, "Functions, B against A: %zu A against %zu B profiled runs\n", s->n[0], s->n[1]);
    for (size_t i = 0; i < r->ng; i++) {
        const struct fd_group *g = &r->g[i];
        const char *name = strpool_str(&s->pool, g->name);
        char p[32], a[48], b[48];
        const struct fd_func *top = NULL;
        for (size_t j = 0; j < g->nf && !top; j++)
            if (g->f[j].shown)
                top = &g->f[j];
        fprintf(f, "\n%s %+.1f%%", name, g->total.pp);
        if (top) {
            fd_fmt_p(top->self.p, p, sizeof p);
            fprintf(f, ": %s %+.1f pp of it (p %s)\n", strpool_str(&s->pool, top->name),
                    top->self.pp, p);
        } else {
            fprintf(f, ": no function changed by %.1f pp or more\n", s->floor_pp);
        }
        fd_fmt_p(g->total.p, p, sizeof p);
        fd_fmt_value(g, g->total.a, a, sizeof a);
        fd_fmt_value(g, g->total.b, b, sizeof b);
        fprintf(f, "%s: A %s, B %s (p %s)\n", fd_unit_word(g), a, b, p);
        if (g->shown) {
            fprintf(f, "\n| function | self A | self B | self | share of the change | p | "
                       "p (Holm) | inclusive A | inclusive B | inclusive | p |\n"
                       "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
            for (size_t j = 0; j < g->nf; j++) {
                const struct fd_func *fn = &g->f[j];
                if (!fn->shown)
                    continue;
                char sa[48], sb[48], ia[48], ib[48], sp[32], ip[32], hp[40];
                fd_fmt_value(g, fn->self.a, sa, sizeof sa);
                fd_fmt_value(g, fn->self.b, sb, sizeof sb);
                fd_fmt_value(g, fn->incl.a, ia, sizeof ia);
                fd_fmt_value(g, fn->incl.b, ib, sizeof ib);
                fd_fmt_p(fn->self.p, sp, sizeof sp);
                fd_fmt_p(fn->incl.p, ip, sizeof ip);
                fd_fmt_p(fn->self.p_holm, hp, sizeof hp);
                if (fn->significant)
                    strcat(hp, " **significant**");
                fprintf(f, "| ");
                table_cell(f, strpool_str(&s->pool, fn->name));
                fprintf(f, " | %s | %s | %+.1f pp | ", sa, sb, fn->self.pp);
                if (g->total.b != g->total.a)
                    fprintf(f, "%.0f%%", fn->share * 100.0);
                else
                    fprintf(f, "-");
                fprintf(f, " | %s | %s | %s | %s | %+.1f pp | %s |\n", sp, hp, ia, ib, fn->incl.pp,
                        ip);
            }
        }
        /* where the change went, callers included: the largest inclusive changes */
        size_t *top_incl = malloc((g->nf ? g->nf : 1) * sizeof *top_incl), ni = 0;
        for (size_t j = 0; top_incl && j < g->nf; j++)
            if (fabs(g->f[j].incl.pp) >= s->floor_pp)
                top_incl[ni++] = j;
        if (ni) {
            incl_base = g->f;
            qsort(top_incl, ni, sizeof *top_incl, by_incl_pp);
            fprintf(f, "\nInclusive (with callees):");
            for (size_t j = 0; j < ni && j < FDIFF_INCL_SHOWN; j++) {
                fd_fmt_p(g->f[top_incl[j]].incl.p, p, sizeof p);
                fprintf(f, "%s %s %+.1f pp (p %s)", j ? "," : "",
                        strpool_str(&s->pool, g->f[top_incl[j]].name), g->f[top_incl[j]].incl.pp, p);
            }
            fprintf(f, "%s\n", ni > FDIFF_INCL_SHOWN ? ", ..." : "");
        }
        free(top_incl);
        fprintf(f, "\n%zu function%s measurable (%.1f%% or more of the group's CPU), %zu tested "
                   "by their self CPU, %zu shown (a self change of %.1f pp or more), %zu significant "
                   "(p < %.2g after Holm's correction for the %zu tested; uncorrected, %zu below "
                   "%.2g, where chance alone gives about 1 in 20).\n",
                g->measurable, g->measurable == 1 ? "" : "s", FDIFF_MEASURABLE * 100, g->tested,
                g->shown, s->floor_pp, g->significant, FDIFF_P, g->tested, g->raw_below_p,
                FDIFF_P);
    }
    if (r->skipped[0])
        fprintf(f, "\nLeft out: %s.\n", r->skipped);
}

static int add_num(cJSON *o, const char *key, double v)
{
    cJSON *x = isfinite(v) ? json_number(v) : cJSON_CreateNull();
    if (x && cJSON_AddItemToObject(o, key, x))
        return 0;
    cJSON_Delete(x);
    return -1;
}

static int add_value(cJSON *o, const char *key, const struct fd_value *v)
{
    cJSON *x = cJSON_AddObjectToObject(o, key);
    if (!x || add_num(x, "a", v->a) || add_num(x, "b", v->b) || add_num(x, "pp", v->pp))
        return -1;
    if (v->p < 0 ? !cJSON_AddNullToObject(x, "p") : add_num(x, "p", v->p) != 0)
        return -1;
    if (v->p_holm >= 0)
        return add_num(x, "p_holm", v->p_holm);
    return 0;
}

/* A stack's frames as an array (outermost first). */
static cJSON *frames_json(const char *stack)
{
    cJSON *arr = cJSON_CreateArray();
    const char *p = stack;
    while (arr && *p) {
        const char *e = strchr(p, ';');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        char *name = strndup(p, n);
        cJSON *it = name ? cJSON_CreateString(name) : NULL;
        free(name);
        if (!it || !cJSON_AddItemToArray(arr, it)) {
            cJSON_Delete(it);
            cJSON_Delete(arr);
            return NULL;
        }
        p = e ? e + 1 : p + n;
    }
    return arr;
}

cJSON *fd_json(const struct fd_set *s, const struct fd_result *r)
{
    cJSON *out = cJSON_CreateObject();
    int bad = !out;
    for (int side = 0; !bad && side < 2; side++) {
        cJSON *runs = cJSON_AddArrayToObject(out, side ? "b_runs" : "a_runs");
        bad |= !runs;
        for (size_t i = 0; !bad && i < s->n[side]; i++)
            bad |= !cJSON_AddItemToArray(runs, cJSON_CreateString(s->runs[side][i]->dir));
    }
    bad = bad || add_num(out, "floor_pp", s->floor_pp) || add_num(out, "measurable_share", FDIFF_MEASURABLE);
    cJSON *groups = bad ? NULL : cJSON_AddArrayToObject(out, "groups");
    bad |= !groups;
    for (size_t i = 0; !bad && i < r->ng; i++) {
        const struct fd_group *g = &r->g[i];
        cJSON *o = cJSON_CreateObject();
        bad |= !o || !cJSON_AddItemToArray(groups, o);
        if (bad)
            break;
        bad |= !cJSON_AddStringToObject(o, "group", strpool_str(&s->pool, g->name));
        bad |= !cJSON_AddStringToObject(o, "unit", g->per_token ? "token" : "wall_s");
        bad |= add_value(o, "total", &g->total) != 0;
        bad |= add_num(o, "measurable", (double)g->measurable) || add_num(o, "tested", (double)g->tested) ||
               add_num(o, "shown", (double)g->shown) || add_num(o, "significant", (double)g->significant) ||
               add_num(o, "uncorrected_below_p", (double)g->raw_below_p);
        cJSON *fs = cJSON_AddArrayToObject(o, "functions");
        bad |= !fs;
        for (size_t j = 0; !bad && j < g->nf; j++) {
            const struct fd_func *fn = &g->f[j];
            cJSON *x = cJSON_CreateObject();
            bad |= !x || !cJSON_AddItemToArray(fs, x);
            if (bad)
                break;
            bad |= !cJSON_AddStringToObject(x, "name", strpool_str(&s->pool, fn->name));
            bad |= add_value(x, "self", &fn->self) || add_value(x, "inclusive", &fn->incl) ||
                   add_num(x, "share", fn->share);
            bad |= !cJSON_AddBoolToObject(x, "tested", fn->tested) ||
                   !cJSON_AddBoolToObject(x, "shown", fn->shown) ||
                   !cJSON_AddBoolToObject(x, "significant", fn->significant);
        }
        cJSON *st = bad ? NULL : cJSON_AddArrayToObject(o, "stacks");
        bad |= !st;
        for (size_t j = 0; !bad && j < g->nst; j++) {
            cJSON *x = cJSON_CreateObject();
            cJSON *fr = frames_json(strpool_str(&s->pool, g->st[j].stack));
            bad |= !x || !cJSON_AddItemToArray(st, x) || !fr || !cJSON_AddItemToObject(x, "frames", fr);
            if (!bad)
                bad |= add_num(x, "a", g->st[j].a) || add_num(x, "b", g->st[j].b);
            else if (fr && !x)
                cJSON_Delete(fr);
        }
    }
    if (!bad && r->skipped[0])
        bad |= !cJSON_AddStringToObject(out, "left_out", r->skipped);
    if (bad) {
        cJSON_Delete(out);
        return NULL;
    }
    return out;
}
