/* stats.h: what the A/B judgement adds beyond the reference: an exact two-sided permutation
 * p-value of the difference of means, a bootstrap 95% interval of the ratio mean(B)/mean(A),
 * and the smallest p-value the run counts allow at all. Everything is deterministic (fixed
 * seeds), so the same runs always give the same numbers. It must never change a verdict: the
 * verdicts are compare.py's alone (judge.c). */
#ifndef PERFSCOPE_STATS_H
#define PERFSCOPE_STATS_H

#include <stddef.h>
#include <stdint.h>

/* Splits are all enumerated up to this many; past it, STATS_MC_SPLITS random ones are drawn. */
#define STATS_EXACT_MAX 200000ull
#define STATS_MC_SPLITS 100000u
#define STATS_BOOT_RESAMPLES 10000u
#define STATS_SEED 0x7065726673ull /* "perfs": fits a JSON number exactly */

/* C(n, k), saturating at UINT64_MAX. */
uint64_t stats_choose(size_t n, size_t k);

struct perm_result {
    double p;                /* two-sided: 2 * min(P(T <= t), P(T >= t)), at most 1 */
    int exact;               /* 1: every split enumerated; 0: Monte Carlo */
    uint64_t splits;         /* splits enumerated, or drawn */
};

/* Permutation test of mean(b) - mean(a) over every way to split the pooled values into groups
 * of na and nb (or STATS_MC_SPLITS random ones, seeded). Sums within a relative 1e-9 count as
 * ties. 0, or -1 when a side is empty or out of memory. */
int stats_permutation(const double *a, size_t na, const double *b, size_t nb,
                      struct perm_result *out);

/* The smallest two-sided p-value any data can give with na and nb runs: 2 / C(na+nb, na). */
double stats_min_p(size_t na, size_t nb);

struct boot_result {
    double lo, hi;           /* 2.5% and 97.5% percentiles of the resampled ratios */
    unsigned resamples;      /* ratios that were defined (A's resampled mean not 0) */
};

/* Bootstrap of mean(b)/mean(a): each side resampled with replacement, STATS_BOOT_RESAMPLES
 * times, from a generator seeded with seed. 0, or -1 when undefined (a side empty, A's mean
 * 0, no defined resample) or out of memory. */
int stats_bootstrap_ratio(const double *a, size_t na, const double *b, size_t nb, uint64_t seed,
                          struct boot_result *out);

#endif
