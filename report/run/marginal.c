/* marginal.c: a phase group's energy and its marginal energy over the idle phases (see
 * marginal.h). It must never turn a missing reading into 0 J, never judge a ratio when the idle
 * spread is unknown or zero, and never walk all phases once per occurrence. */
#include "marginal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *energy_verdict(double ratio)
{
    return ratio >= 10 ? "clean" : ratio >= 3 ? "relative-only" : ratio >= 1 ? "noisy" : "unusable";
}

struct idle_set {
    size_t m;
    const struct phase **by_start;  /* sorted by start (begin order) */
    const struct phase **by_end;    /* sorted by end */
};

static int by_end(const void *a, const void *b)
{
    const struct phase *x = *(const struct phase *const *)a, *y = *(const struct phase *const *)b;
    return (x->end_ns > y->end_ns) - (x->end_ns < y->end_ns);
}

static int idle_set_build(const struct phases *p, const struct group_index *gi, struct idle_set *s)
{
    memset(s, 0, sizeof *s);
    if (gi->idle < 0)
        return 0;
    s->m = gi->start[gi->idle + 1] - gi->start[gi->idle];
    s->by_start = malloc((s->m ? s->m : 1) * sizeof *s->by_start);
    s->by_end = malloc((s->m ? s->m : 1) * sizeof *s->by_end);
    if (!s->by_start || !s->by_end)
        return -1;
    for (size_t k = 0; k < s->m; k++)
        s->by_start[k] = s->by_end[k] = &p->v[gi->occ[gi->start[gi->idle] + k]];
    if (s->m)
        qsort(s->by_end, s->m, sizeof *s->by_end, by_end);
    return 0;
}

static void idle_set_free(struct idle_set *s)
{
    free(s->by_start);
    free(s->by_end);
}

/* The idle phase that ends last at or before t, or NULL. */
static const struct phase *idle_before(const struct idle_set *s, uint64_t t)
{
    size_t lo = 0, hi = s->m;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->by_end[mid]->end_ns <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? s->by_end[lo - 1] : NULL;
}

/* The idle phase that begins first at or after t, or NULL. */
static const struct phase *idle_after(const struct idle_set *s, uint64_t t)
{
    size_t lo = 0, hi = s->m;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->by_start[mid]->start_ns < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->m ? s->by_start[lo] : NULL;
}

static void flags(struct genergy *g, double resolution_s)
{
    char *f = g->flag;
    size_t n = sizeof g->flag;
    if (g->short_occ) {
        int k = snprintf(f, n, "%zu of %zu occurrence%s shorter than %.1f s, which a counter that "
                         "moves every %.0f ms cannot resolve: not trusted",
                         g->short_occ, g->occurrences, g->occurrences == 1 ? "" : "s",
                         ENERGY_TRUST_PERIODS * resolution_s, resolution_s * 1000);
        if (k > 0 && (size_t)k < n) {
            f += k;
            n -= (size_t)k;
        }
    }
    if (g->still_occ)
        snprintf(f, n, "%sthe counter did not advance in %zu occurrence%s", g->flag[0] ? "; " : "",
                 g->still_occ, g->still_occ == 1 ? "" : "s");
}

static void conclude(struct genergy *g, int idle, int group, double bracketed_wall, double sd)
{
    if (idle < 0) {
        snprintf(g->marginal_why, sizeof g->marginal_why, "no idle phase in the run");
        return;
    }
    if (group == idle) {
        snprintf(g->marginal_why, sizeof g->marginal_why, "the idle phase itself");
        return;
    }
    if (!g->bracketed) {
        snprintf(g->marginal_why, sizeof g->marginal_why,
                 "no idle phase with 3 or more counter readings before or after it");
        return;
    }
    g->have_marginal = 1;
    g->idle_w /= bracketed_wall > 0 ? bracketed_wall : 1;
    g->idle_sd_w = sd;
    g->marginal_w = bracketed_wall > 0 ? g->marginal_j / bracketed_wall : 0;
    if (g->bracketed < g->occurrences)
        snprintf(g->marginal_why, sizeof g->marginal_why, "over %zu of %zu occurrences",
                 g->bracketed, g->occurrences);
    else if (g->one_sided)
        snprintf(g->marginal_why, sizeof g->marginal_why, "%zu occurrence%s had idle on one side only",
                 g->one_sided, g->one_sided == 1 ? "" : "s");
    if (sd > 0) {
        g->have_ratio = 1;
        g->ratio = g->marginal_w / sd;
        g->verdict = energy_verdict(g->ratio);
    }
}

void group_energy(const struct energy *e, int domain, const struct phases *p,
                  const struct group_index *gi, int group, struct genergy *g)
{
    memset(g, 0, sizeof *g);
    const struct cumseries *c = domain < 0 ? &e->total : &e->d[domain].c;
    double resolution = 0;
    for (size_t i = 0; i < e->nd; i++)
        if ((domain < 0 && e->d[i].added) || (int)i == domain)
            resolution = fmax(resolution, e->d[i].resolution_s);
    struct idle_set idle;
    if (idle_set_build(p, gi, &idle) != 0) {
        idle_set_free(&idle);
        snprintf(g->why, sizeof g->why, "unavailable: out of memory");
        return;
    }
    g->available = 1;
    double bracketed_wall = 0, worst_sd = 0;
    for (size_t k = gi->start[group]; k < gi->start[group + 1]; k++) {
        const struct phase *o = &p->v[gi->occ[k]];
        double wall = (double)(o->end_ns - o->start_ns) / 1e9, j;
        g->occurrences++;
        g->wall_s += wall;
        if (cum_between(c, o->start_ns, o->end_ns, &j) != 0) {
            if (g->available)
                snprintf(g->why, sizeof g->why,
                         "unavailable: no counter reading around occurrence %zu (%s)",
                         g->occurrences, o->open ? "it never ended" : "outside the readings");
            g->available = 0;
            continue;
        }
        g->j += j;
        if (resolution > ENERGY_RAPL_RESOLUTION_S && wall < ENERGY_TRUST_PERIODS * resolution)
            g->short_occ++;
        else if (j <= 0 && wall > 0)
            g->still_occ++;
        if (gi->idle < 0 || group == gi->idle)
            continue;
        const struct phase *q[2] = {idle_before(&idle, o->start_ns), idle_after(&idle, o->end_ns)};
        struct wstats side[2];
        int have[2] = {0, 0};
        for (int s = 0; s < 2; s++)
            have[s] = q[s] && q[s] != o &&
                      cum_window_stats(c, q[s]->start_ns, q[s]->end_ns, &side[s]) == 0;
        if (!have[0] && !have[1])
            continue;
        double idle_w = have[0] && have[1] ? (side[0].mean_w + side[1].mean_w) / 2
                        : have[0]          ? side[0].mean_w
                                           : side[1].mean_w;
        double sd = fmax(have[0] ? side[0].sd_w : 0, have[1] ? side[1].sd_w : 0);
        g->marginal_j += j - idle_w * wall;
        g->idle_w += idle_w * wall; /* wall-weighted mean, divided in conclude() */
        worst_sd = fmax(worst_sd, sd);
        bracketed_wall += wall;
        g->bracketed++;
        g->one_sided += (size_t)(have[0] != have[1]);
    }
    idle_set_free(&idle);
    flags(g, resolution);
    if (!g->available) {
        g->j = 0;
        return;
    }
    conclude(g, gi->idle, group, bracketed_wall, worst_sd);
}
