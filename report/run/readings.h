/* readings.h: every counter reading of a run in time order: the lines of counters.jsonl and the
 * "counters" object of each phases.jsonl boundary (shape in preload/counters/counters.h), as
 * one dense table of series (a RAPL zone's energy, a GPU's energy and memory, RssAnon).
 * Energy, memory and idle statistics all read this table; nothing else reads those objects.
 *
 * Rules chosen here:
 *   - a reading is a counters.jsonl line with a whole t_ns, or a phases.jsonl line with a whole
 *     t_ns and a "counters" object; lines without them are counted bad and skipped;
 *   - readings are sorted by t_ns (ties: counters.jsonl first, then file order); a boundary's
 *     time is the marker's own t= when it had one, its counters were read just after;
 *   - a value is NAN where the reading lacks it or its "error" says it could not be read
 *     (the first error text of each series is kept);
 *   - at most READINGS_MAX_SERIES series (zones, GPUs): more are ignored and counted;
 *   - refused: an unreadable file, an empty counters.jsonl (the shim writes one reading as it
 *     starts), or one without a single reading (garbage, or cut inside its first line). */
#ifndef PERFSCOPE_REPORT_READINGS_H
#define PERFSCOPE_REPORT_READINGS_H

#include <stddef.h>
#include <stdint.h>

#define READINGS_MAX_SERIES 256

enum series_kind {
    SK_RAPL,          /* energy_uj of a powercap zone; key "intel-rapl:0", name "package-0" */
    SK_GPU_ENERGY,    /* energy_mj of GPU <key> */
    SK_GPU_RUN_MEM,   /* run_mem_mib (the run's processes on it) */
    SK_GPU_USED_MEM,  /* mem_used_mib (the whole device) */
    SK_GPU_LISTED,    /* procs_listed: 1 or 0 */
    SK_RSS,           /* rss_anon_kib of the run's processes, summed */
};

struct series {
    enum series_kind kind;
    char key[72];        /* zone ("intel-rapl:0:1") or GPU index ("0"); "" for SK_RSS */
    char name[72];       /* zone name ("dram"); "" when not given */
    double max_range;    /* RAPL max_energy_range_uj; 0 unknown */
    char error[256];     /* first "error" seen, "" none */
    size_t nvalid, nerrors;
    double *v;           /* [n] */
};

struct readings {
    size_t n;
    uint64_t *t;         /* [n], sorted */
    unsigned char *periodic; /* [n]: 1 for a counters.jsonl line, 0 for a boundary's counters */
    struct series *s;
    size_t ns;
    size_t counters_lines;    /* readings from counters.jsonl */
    size_t boundary_lines;    /* readings from phases.jsonl */
    size_t bad_lines;         /* counters.jsonl lines that were not a reading */
    size_t ignored_series;    /* past READINGS_MAX_SERIES */
    int counters_present;     /* counters.jsonl exists */
};

/* Reads dir/counters.jsonl and dir/phases.jsonl (both optional). 0, or -1 with one line in err
 * ("<path>: <what>") when a present file cannot be read or holds no reading at all. */
int readings_load(const char *dir, struct readings **out, char *err, size_t errlen);

void readings_free(struct readings *r);

/* Index of the series of that kind and key, or -1. */
int readings_find(const struct readings *r, enum series_kind kind, const char *key);

/* First reading index with t >= t_ns (r->n if none). */
size_t readings_lower(const struct readings *r, uint64_t t_ns);

#endif
