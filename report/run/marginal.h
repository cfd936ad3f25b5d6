/* marginal.h: the energy of one phase group in one domain (or the total of the added domains),
 * and its marginal energy over the `idle` phases that bracket it (the method of the energy-window
 * script, docs/report.md): per occurrence, idle power = the mean of the mean powers of the idle phase
 * just before and the one just after it (one side when only one exists), marginal = energy -
 * idle power x wall; for the group, the marginal power (summed marginal energy over the summed
 * wall of the bracketed occurrences) divided by the largest idle standard deviation used gives
 * the ratio and its verdict: clean >= 10, relative-only >= 3, noisy >= 1, unusable below. An
 * idle phase's power and spread come from the periodic readings inside it (2 intervals or more).
 * An idle phase nested inside the occurrence, or overlapping it, is no bracket. It must never
 * give a verdict where the idle spread is unknown or zero. */
#ifndef PERFSCOPE_REPORT_MARGINAL_H
#define PERFSCOPE_REPORT_MARGINAL_H

#include <stddef.h>

#include "energy.h"
#include "phasegroups.h"
#include "phases.h"

struct genergy {
    int available;          /* every occurrence's energy could be read */
    char why[256];          /* not available: why */
    double j, wall_s;
    size_t occurrences;
    size_t short_occ;       /* shorter than ENERGY_TRUST_PERIODS counter periods */
    size_t still_occ;       /* the counter did not advance */
    char flag[320];         /* "" or why the number is not trusted */
    int have_marginal;
    char marginal_why[256]; /* no marginal: why; with one: a note ("" none) */
    double marginal_j, marginal_w, idle_w, idle_sd_w, ratio;
    int have_ratio;
    const char *verdict;    /* NULL without a ratio */
    size_t bracketed, one_sided;
};

/* domain: index into e->d, or -1 for the total of the added domains. */
void group_energy(const struct energy *e, int domain, const struct phases *p,
                  const struct group_index *gi, int group, struct genergy *out);

/* clean / relative-only / noisy / unusable. */
const char *energy_verdict(double ratio);

#endif
