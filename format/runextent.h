/* runextent.h: THE extent of a run on its clock (CLOCK_MONOTONIC), the one rule every tool uses
 * for where a run starts and ends, and so where a phase that was begun and never ended stops:
 *   start: meta.json's t0_ns, or the first sample when that is earlier or t0_ns is unknown;
 *   end:   the latest of meta.json's end_ns (the leader's exit), the last sample, the last
 *          counter reading of counters.jsonl and the last marker boundary. A killed run has no
 *          end_ns: its last sign of life stands in.
 * An open phase ends at the run's end (phases_close_open). It must never fail on a bad
 * counters.jsonl: a line it cannot read gives no time, the file's reader says what is wrong. */
#ifndef PERFSCOPE_RUNEXTENT_H
#define PERFSCOPE_RUNEXTENT_H

#include <stdint.h>

#include "phases.h"
#include "runmeta.h"

struct run_extent {
    uint64_t start_ns, end_ns; /* 0: unknown */
};

/* The extent of the run in dir, from its meta (may have no doc), its samples' first and last
 * times (0: no samples) and its phases (may be NULL). Then every open phase of ph ends at
 * end_ns. */
void run_extent_find(const char *dir, const struct run_meta *meta, uint64_t first_sample_ns,
                     uint64_t last_sample_ns, struct phases *ph, struct run_extent *out);

#endif
