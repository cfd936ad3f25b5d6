/* energy.h: energy domains of a run (docs/report.md): each RAPL zone and each GPU's NVML counter as a
 * cumulative energy in joules over time, with its kind, whether it is added to the total, and
 * why not when it cannot be used.
 *
 * Rules chosen here (docs/report.md says them for users):
 *   - kinds from the zone name: package-N (added), dram (added), core, uncore, psys and any other
 *     name (shown, never added); every GPU's energy counter (added). Zones are told apart by their
 *     zone id, so none is ever added twice;
 *   - wraparound: a RAPL value smaller than the previous one by more than half of
 *     max_energy_range_uj wrapped (that range is added); a smaller step is two readings taken
 *     out of order (a boundary's marker time is earlier than its counters' read): it adds
 *     nothing and the larger value stays the reference, so the total never goes back;
 *   - a domain with no readable value is `unavailable` with the first error the shim recorded;
 *     one whose value never moved over at least ENERGY_DEAD_SPAN_S is `dead`; neither is ever
 *     shown as 0 J nor added;
 *   - energy between two times is the difference of the cumulative energy, read exactly at a
 *     reading's time and linearly interpolated between two readings; outside the readings it
 *     cannot be known. */
#ifndef PERFSCOPE_REPORT_ENERGY_H
#define PERFSCOPE_REPORT_ENERGY_H

#include <stddef.h>
#include <stdint.h>

#include "readings.h"

#define ENERGY_DEAD_SPAN_S 1.0
#define ENERGY_RAPL_RESOLUTION_S 0.001 /* RAPL's counters move about every millisecond */
#define ENERGY_NVML_RESOLUTION_S 0.1   /* NVML's energy counter moves about every 100 ms */
#define ENERGY_TRUST_PERIODS 10        /* a phase under 10 counter periods is flagged */

enum dom_kind { DK_PACKAGE, DK_DRAM, DK_CORE, DK_UNCORE, DK_PSYS, DK_OTHER, DK_GPU };
enum dom_state { DS_OK, DS_UNAVAILABLE, DS_DEAD };

/* Cumulative energy (J) at reading times; periodic marks counters.jsonl readings. */
struct cumseries {
    size_t n;
    uint64_t *t;
    double *cum;
    unsigned char *periodic;
};

struct edomain {
    int series;             /* index in readings, -1 for none */
    enum dom_kind kind;
    int addable;            /* its kind is added to the total */
    int added;              /* addable and usable: part of the total */
    char name[96];          /* "package-0", "dram", "GPU 0" */
    char label[192];        /* "package-0 (intel-rapl:0)" */
    enum dom_state state;
    char why[320];          /* unavailable/dead: why; ok: a note ("" none) */
    double resolution_s;
    size_t wraps, backsteps;
    struct cumseries c;
};

struct energy {
    struct edomain *d;
    size_t nd;
    struct cumseries total; /* the sum of the added domains; n 0 when none */
    char total_over[512];   /* "package-0, dram, GPU 0" */
};

/* Builds the domains from the readings. 0, or -1 (out of memory) with err. */
int energy_build(const struct readings *r, struct energy *e, char *err, size_t errlen);
void energy_free(struct energy *e);

const char *dom_kind_name(enum dom_kind k);

/* Cumulative energy at t_ns: 0 with *j, -1 when t_ns is outside the readings. */
int cum_at(const struct cumseries *c, uint64_t t_ns, double *j);

/* Energy over [t0, t1]: 0 with *j, -1 when either end is outside the readings. */
int cum_between(const struct cumseries *c, uint64_t t0, uint64_t t1, double *j);

/* Mean and sample standard deviation of the power over the periodic reading intervals that lie
 * inside [t0, t1] (the method of the energy-window script). 0, or -1 with fewer than 2. */
struct wstats {
    size_t intervals;
    double mean_w, sd_w;
};
int cum_window_stats(const struct cumseries *c, uint64_t t0, uint64_t t1, struct wstats *w);

#endif
