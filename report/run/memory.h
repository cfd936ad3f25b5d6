/* memory.h: GPU and host memory peaks of a run (docs/report.md) from the counter readings.
 *   - GPU, per device: the run's processes' memory (NVML usedGpuMemory summed by the shim,
 *     run_mem_mib); where NVML could not list processes on a device in any reading
 *     (procs_listed false), the device's memory used (mem_used_mib) stands in, for every reading
 *     of that device, and the report says so. Baseline: the device's first value (normally 0).
 *     total = peak over time of the sum over devices (readings where every device has a value)
 *     minus that sum's first value; max_device = the largest per-device peak minus its baseline.
 *   - host: the peak over time of rss_anon_kib, the run's processes' RssAnon summed.
 * It must never mix the two GPU measures within one device. */
#ifndef PERFSCOPE_REPORT_MEMORY_H
#define PERFSCOPE_REPORT_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "readings.h"

struct gpu_dev_mem {
    char key[72];        /* NVML index */
    int series;          /* readings series used, -1 none */
    int fallback;        /* device memory used stands in for the run's processes */
    int have;
    double base, peak;   /* MiB */
};

struct memory {
    size_t ndev;
    struct gpu_dev_mem *dev;
    int any_fallback;
    int have_gpu_total;
    double total_base, total_peak;   /* MiB */
    double max_device_above;         /* MiB, over devices with values */
    int rss_series;                  /* -1 none */
    int have_host;
    double host_peak_kib;
};

/* 0, or -1 (out of memory). */
int memory_build(const struct readings *r, struct memory *m);
void memory_free(struct memory *m);

/* Peaks inside [t0, t1]: the GPU sum minus the run's baseline (MiB) and the host RssAnon (KiB);
 * *have_gpu / *have_host count the readings that gave one (0: none), *periodic_host those of the
 * host's that were periodic (counters.jsonl's, not a boundary's). Updates the maxima and the
 * counts given (call once per occurrence of a group with the same outputs). */
void memory_window(const struct memory *m, const struct readings *r, uint64_t t0, uint64_t t1,
                   double *gpu_above, int *have_gpu, double *host_kib, int *have_host, int *periodic_host);

#endif
