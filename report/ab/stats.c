/* stats.c: permutation test, bootstrap interval, smallest reachable p (see stats.h). It must
 * never use a clock or global state for randomness (the generator is seeded and local), and
 * never run unbounded: exact enumeration stops at STATS_EXACT_MAX splits. */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

uint64_t stats_choose(size_t n, size_t k)
{
    if (k > n)
        return 0;
    if (k > n - k)
        k = n - k;
    unsigned __int128 c = 1;
    for (size_t i = 1; i <= k; i++) {
        c = c * (n - k + i) / i; /* exact: c * (n-k+i) is divisible by i at each step */
        if (c > UINT64_MAX)
            return UINT64_MAX;
    }
    return (uint64_t)c;
}

double stats_min_p(size_t na, size_t nb)
{
    uint64_t c = stats_choose(na + nb, na);
    if (c == 0)
        return 1;
    double p = 2.0 / (double)c;
    return p > 1 ? 1 : p;
}

/* xoshiro256**, seeded through splitmix64. */
struct rng {
    uint64_t s[4];
};

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void rng_seed(struct rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(struct rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* Uniform in [0, n), n > 0, without modulo bias. */
static size_t rng_below(struct rng *r, size_t n)
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
        x = rng_next(r);
    while (x >= limit);
    return (size_t)(x % n);
}

struct perm_count {
    const double *v;
    size_t n, k;
    double target, tol;
    uint64_t ge, le, total;
};

/* Every k-subset of v[start..n) added to sum, with `need` members still to choose. */
static void enumerate(struct perm_count *pc, size_t start, size_t need, double sum)
{
    if (need == 0) {
        pc->total++;
        pc->ge += sum >= pc->target - pc->tol;
        pc->le += sum <= pc->target + pc->tol;
        return;
    }
    for (size_t i = start; i + need <= pc->n; i++)
        enumerate(pc, i + 1, need - 1, sum + pc->v[i]);
}

int stats_permutation(const double *a, size_t na, const double *b, size_t nb,
                      struct perm_result *out)
{
    memset(out, 0, sizeof *out);
    if (na == 0 || nb == 0)
        return -1;
    size_t n = na + nb;
    double *v = malloc(n * sizeof *v);
    if (!v)
        return -1;
    memcpy(v, a, na * sizeof *v);
    memcpy(v + na, b, nb * sizeof *v);
    /* mean(B) - mean(A) rises with the sum of the smaller group's complement, so the sum of
     * the smaller group is the statistic (T up or down with it, which a two-sided p ignores). */
    size_t k = na <= nb ? na : nb;
    const double *grp = na <= nb ? a : b;
    double target = 0, scale = 0;
    for (size_t i = 0; i < k; i++)
        target += grp[i];
    for (size_t i = 0; i < n; i++)
        scale += fabs(v[i]);
    struct perm_count pc = {.v = v, .n = n, .k = k, .target = target, .tol = 1e-9 * scale};
    uint64_t splits = stats_choose(n, k);
    if (splits <= STATS_EXACT_MAX) {
        enumerate(&pc, 0, k, 0.0);
        out->exact = 1;
        out->splits = pc.total;
        double tail = (double)(pc.ge < pc.le ? pc.ge : pc.le);
        out->p = 2.0 * tail / (double)pc.total;
    } else {
        struct rng r;
        rng_seed(&r, STATS_SEED);
        for (unsigned it = 0; it < STATS_MC_SPLITS; it++) {
            double sum = 0;
            for (size_t i = 0; i < k; i++) { /* a partial Fisher-Yates shuffle picks k */
                size_t j = i + rng_below(&r, n - i);
                double t = v[i];
                v[i] = v[j];
                v[j] = t;
                sum += v[i];
            }
            pc.ge += sum >= target - pc.tol;
            pc.le += sum <= target + pc.tol;
        }
        out->exact = 0;
        out->splits = STATS_MC_SPLITS;
        /* The observed split counts as one of the draws: p never 0. */
        double tail = (double)(pc.ge < pc.le ? pc.ge : pc.le) + 1;
        out->p = 2.0 * tail / ((double)STATS_MC_SPLITS + 1);
    }
    if (out->p > 1)
        out->p = 1;
    free(v);
    return 0;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Linear interpolation between order statistics (R's type 7, numpy's default). */
static double quantile(const double *sorted, size_t n, double q)
{
    double h = (double)(n - 1) * q;
    size_t i = (size_t)floor(h);
    if (i + 1 >= n)
        return sorted[n - 1];
    return sorted[i] + (h - (double)i) * (sorted[i + 1] - sorted[i]);
}

int stats_bootstrap_ratio(const double *a, size_t na, const double *b, size_t nb, uint64_t seed,
                          struct boot_result *out)
{
    memset(out, 0, sizeof *out);
    if (na == 0 || nb == 0)
        return -1;
    double sa = 0;
    for (size_t i = 0; i < na; i++)
        sa += a[i];
    if (sa == 0)
        return -1;
    double *ratios = malloc(STATS_BOOT_RESAMPLES * sizeof *ratios);
    if (!ratios)
        return -1;
    struct rng r;
    rng_seed(&r, seed);
    unsigned used = 0;
    for (unsigned it = 0; it < STATS_BOOT_RESAMPLES; it++) {
        double ra = 0, rb = 0;
        for (size_t i = 0; i < na; i++)
            ra += a[rng_below(&r, na)];
        for (size_t i = 0; i < nb; i++)
            rb += b[rng_below(&r, nb)];
        if (ra == 0)
            continue;
        double ratio = (rb / (double)nb) / (ra / (double)na);
        if (isfinite(ratio))
            ratios[used++] = ratio;
    }
    int rc = -1;
    if (used > 0) {
        qsort(ratios, used, sizeof *ratios, cmp_double);
        out->lo = quantile(ratios, used, 0.025);
        out->hi = quantile(ratios, used, 0.975);
        out->resamples = used;
        rc = 0;
    }
    free(ratios);
    return rc;
}
