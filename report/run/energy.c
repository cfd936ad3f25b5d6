/* energy.c: energy domains from the counter readings (rules in energy.h). It must never report
 * an unreadable or dead counter as energy, never add a core, uncore or psys zone to a total, and
 * never let a counter's total go backwards. */
#include "energy.h"
#include "counterline.h"
#include "textfile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *dom_kind_name(enum dom_kind k)
{
    switch (k) {
    case DK_PACKAGE: return "package";
    case DK_DRAM: return "dram";
    case DK_CORE: return "core";
    case DK_UNCORE: return "uncore";
    case DK_PSYS: return "psys";
    case DK_GPU: return "gpu";
    default: return "other";
    }
}

static enum dom_kind zone_kind(const char *name)
{
    if (strncmp(name, "package", 7) == 0)
        return DK_PACKAGE;
    if (strcmp(name, "dram") == 0)
        return DK_DRAM;
    if (strcmp(name, "core") == 0)
        return DK_CORE;
    if (strcmp(name, "uncore") == 0)
        return DK_UNCORE;
    if (strcmp(name, "psys") == 0)
        return DK_PSYS;
    return DK_OTHER;
}

static int cum_alloc(struct cumseries *c, size_t n)
{
    size_t k = n ? n : 1;
    c->t = malloc(k * sizeof *c->t);
    c->cum = malloc(k * sizeof *c->cum);
    c->periodic = malloc(k);
    c->n = 0;
    return c->t && c->cum && c->periodic ? 0 : -1;
}

static void cum_free(struct cumseries *c)
{
    free(c->t);
    free(c->cum);
    free(c->periodic);
    memset(c, 0, sizeof *c);
}

/* The valid values of one series into cumulative joules, unwrapped. */
static void accumulate(struct edomain *d, const struct readings *r, const struct series *s,
                       double unit_j)
{
    double prev = NAN, cum = 0;
    for (size_t k = 0; k < r->n; k++) {
        double v = s->v[k];
        if (isnan(v))
            continue;
        if (!isnan(prev)) {
            double step;
            enum counter_step_kind k = counter_step(prev, v, s->max_range, &step);
            if (k == COUNTER_BACKSTEP) {
                d->backsteps++; /* out of order: the larger value stays the reference */
            } else {
                cum += step * unit_j;
                prev = v;
                d->wraps += k == COUNTER_WRAPPED;
            }
        } else {
            prev = v;
        }
        d->c.t[d->c.n] = r->t[k];
        d->c.cum[d->c.n] = cum;
        d->c.periodic[d->c.n] = r->periodic[k];
        d->c.n++;
    }
}

static void judge_state(struct edomain *d, const struct series *s)
{
    if (d->c.n == 0) {
        d->state = DS_UNAVAILABLE;
        snprintf(d->why, sizeof d->why, "unavailable: %s",
                 s->error[0] ? s->error : "never read");
        return;
    }
    double span = (double)(d->c.t[d->c.n - 1] - d->c.t[0]) / 1e9;
    if (d->c.cum[d->c.n - 1] <= 0) {
        if (d->c.n >= 2 && span >= ENERGY_DEAD_SPAN_S) {
            d->state = DS_DEAD;
            snprintf(d->why, sizeof d->why, "dead: the counter never advanced over %.1f s", span);
        } else {
            d->state = DS_UNAVAILABLE;
            snprintf(d->why, sizeof d->why,
                     "unavailable: the counter did not advance in %.3f s (too few readings to "
                     "tell)", span);
        }
        return;
    }
    d->state = DS_OK;
    if (s->nerrors)
        snprintf(d->why, sizeof d->why, "unreadable in %zu of %zu readings%s%s", s->nerrors,
                 s->nerrors + s->nvalid, s->error[0] ? ": " : "", s->error);
}

static int add_total(struct energy *e, const struct readings *r)
{
    if (cum_alloc(&e->total, r->n) != 0)
        return -1;
    size_t nadded = 0;
    for (size_t i = 0; i < e->nd; i++)
        nadded += (size_t)e->d[i].added;
    if (!nadded)
        return 0;
    for (size_t k = 0; k < r->n; k++) {
        double sum = 0;
        int ok = 1;
        for (size_t i = 0; i < e->nd && ok; i++) {
            double j;
            if (!e->d[i].added)
                continue;
            if (cum_at(&e->d[i].c, r->t[k], &j) != 0)
                ok = 0;
            else
                sum += j;
        }
        if (!ok)
            continue;
        size_t n = e->total.n;
        if (n && e->total.t[n - 1] == r->t[k]) {
            e->total.periodic[n - 1] |= r->periodic[k];
            continue; /* the same instant twice: keep one */
        }
        e->total.t[n] = r->t[k];
        e->total.cum[n] = sum;
        e->total.periodic[n] = r->periodic[k];
        e->total.n++;
    }
    return 0;
}

int energy_build(const struct readings *r, struct energy *e, char *err, size_t errlen)
{
    memset(e, 0, sizeof *e);
    e->d = calloc(r->ns ? r->ns : 1, sizeof *e->d);
    if (!e->d)
        goto oom;
    for (size_t i = 0; i < r->ns; i++) {
        const struct series *s = &r->s[i];
        if (s->kind != SK_RAPL && s->kind != SK_GPU_ENERGY)
            continue;
        struct edomain *d = &e->d[e->nd++];
        d->series = (int)i;
        if (s->kind == SK_RAPL) {
            d->kind = zone_kind(s->name);
            d->resolution_s = ENERGY_RAPL_RESOLUTION_S;
            snprintf(d->name, sizeof d->name, "%s", s->name[0] ? s->name : s->key);
            snprintf(d->label, sizeof d->label, "%s (%s)", d->name, s->key);
        } else {
            d->kind = DK_GPU;
            d->resolution_s = ENERGY_NVML_RESOLUTION_S;
            snprintf(d->name, sizeof d->name, "GPU %s", s->key);
            snprintf(d->label, sizeof d->label, "GPU %s (NVML)", s->key);
        }
        d->addable = d->kind == DK_PACKAGE || d->kind == DK_DRAM || d->kind == DK_GPU;
        if (cum_alloc(&d->c, s->nvalid) != 0)
            goto oom;
        accumulate(d, r, s, s->kind == SK_RAPL ? 1e-6 : 1e-3);
        judge_state(d, s);
        d->added = d->addable && d->state == DS_OK;
        if (d->added) {
            size_t len = strlen(e->total_over);
            snprintf(e->total_over + len, sizeof e->total_over - len, "%s%s", len ? ", " : "",
                     d->name);
        }
    }
    if (add_total(e, r) != 0)
        goto oom;
    return 0;
oom:
    reader_error(err, errlen, "energy", "out of memory");
    energy_free(e);
    return -1;
}

void energy_free(struct energy *e)
{
    for (size_t i = 0; i < e->nd; i++)
        cum_free(&e->d[i].c);
    free(e->d);
    cum_free(&e->total);
    memset(e, 0, sizeof *e);
}

int cum_at(const struct cumseries *c, uint64_t t_ns, double *j)
{
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->t[mid] < t_ns)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == c->n)
        return -1;
    if (c->t[lo] == t_ns) {
        *j = c->cum[lo];
        return 0;
    }
    if (lo == 0)
        return -1;
    double f = (double)(t_ns - c->t[lo - 1]) / (double)(c->t[lo] - c->t[lo - 1]);
    *j = c->cum[lo - 1] + f * (c->cum[lo] - c->cum[lo - 1]);
    return 0;
}

int cum_between(const struct cumseries *c, uint64_t t0, uint64_t t1, double *j)
{
    double a, b;
    if (cum_at(c, t0, &a) != 0 || cum_at(c, t1, &b) != 0)
        return -1;
    *j = b - a;
    return 0;
}

/* The periodic interval powers inside [t0, t1], visited in order; returns how many. */
static size_t window_pass(const struct cumseries *c, uint64_t t0, uint64_t t1, double mean,
                          double *sum, double *sum2)
{
    size_t lo = 0, hi = c->n, np = 0, prev = (size_t)-1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->t[mid] < t0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t k = lo; k < c->n && c->t[k] <= t1; k++) {
        if (!c->periodic[k])
            continue;
        if (prev != (size_t)-1 && c->t[k] > c->t[prev]) {
            double watts = (c->cum[k] - c->cum[prev]) / ((double)(c->t[k] - c->t[prev]) / 1e9);
            *sum += watts;
            *sum2 += (watts - mean) * (watts - mean);
            np++;
        }
        prev = k;
    }
    return np;
}

int cum_window_stats(const struct cumseries *c, uint64_t t0, uint64_t t1, struct wstats *w)
{
    memset(w, 0, sizeof *w);
    double sum = 0, sum2 = 0, ignored = 0;
    size_t np = window_pass(c, t0, t1, 0, &sum, &ignored);
    w->intervals = np;
    if (np < 2)
        return -1;
    double mean = sum / (double)np;
    sum = 0;
    window_pass(c, t0, t1, mean, &sum, &sum2);
    w->mean_w = mean;
    w->sd_w = sqrt(sum2 / (double)(np - 1));
    return 0;
}
