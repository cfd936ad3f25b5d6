/* counterline.h: THE reading of one set of counter readings, as the shim's leader writes them
 * (shape in preload/counters/counters.h): a counters.jsonl line, or the "counters" object of a
 * phases.jsonl boundary. The symbolizer's trace.json (power and memory tracks) and the report
 * (energy, memory, the summary's counters section) read RAPL zones, GPUs and RssAnon here, so a
 * reading means the same to both.
 *
 * Rules chosen here:
 *   - "rapl" and "gpus" count only as arrays; anything else reads as no zone, no GPU;
 *   - a value (energy, power, memory) is a finite JSON number >= 0, else unknown (NAN);
 *   - a zone needs a non-empty "zone" string; a GPU a whole "index" from 0 to 1e6; other items
 *     are skipped (counterline_zone, counterline_gpu return -1). */
#ifndef PERFSCOPE_COUNTERLINE_H
#define PERFSCOPE_COUNTERLINE_H

#include <cjson/cJSON.h>

#define COUNTERLINE_MAX_GPU_INDEX 1000000

/* One counters object. Pointers are into it. */
struct counter_line {
    const cJSON *rapl;       /* the zones' array, NULL when absent */
    const cJSON *gpus;       /* the GPUs' array, NULL when absent */
    double rss_anon_kib;     /* the run's processes' RssAnon, summed; NAN unknown */
};

/* One item of the "rapl" array. */
struct counter_zone {
    const char *zone;        /* "intel-rapl:0:1"; NULL when not a string */
    const char *name;        /* "package-0", "dram", "" (name unreadable); NULL when not given */
    const char *error;       /* why energy_uj could not be read; NULL when none */
    double energy_uj;        /* raw (it wraps at max_range_uj); NAN unknown */
    double max_range_uj;     /* max_energy_range_uj; 0 unknown */
};

/* One item of the "gpus" array. */
struct counter_gpu {
    int index;               /* NVML's */
    double energy_mj;        /* NVML's energy counter; NAN unknown */
    double power_mw;         /* NAN unknown */
    double run_mem_mib;      /* memory of the run's processes on it; NAN unknown */
    double mem_used_mib;     /* memory used on the whole device; NAN unknown */
    int procs_listed;        /* NVML listed the processes: 1, 0; -1 unknown */
};

void counterline_read(const cJSON *counters, struct counter_line *l);

/* THE rule for the step of a cumulative energy counter (a RAPL zone's energy_uj, a GPU's NVML
 * energy) from one reading to the next, in the counter's own unit:
 *   COUNTER_FORWARD  now >= prev: *step = now - prev;
 *   COUNTER_WRAPPED  the counter fell by more than half its range (range > 0, RAPL's
 *                    max_energy_range_uj) from a reading within it: it wrapped,
 *                    *step = now + range - prev (never negative);
 *   COUNTER_BACKSTEP any other fall (readings out of order, a reset): no step is known, and
 *                    the caller keeps prev as its reference.
 * Energy per phase (the report) and power over time (trace.json) both step counters here. */
enum counter_step_kind { COUNTER_FORWARD, COUNTER_WRAPPED, COUNTER_BACKSTEP };
enum counter_step_kind counter_step(double prev, double now, double range, double *step);

/* 0, or -1 when the item is not a zone (z is filled all the same, for showing what it holds). */
int counterline_zone(const cJSON *item, struct counter_zone *z);

/* 0, or -1 when the item is not a GPU. */
int counterline_gpu(const cJSON *item, struct counter_gpu *g);

#endif
