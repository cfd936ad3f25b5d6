/* counters.h: whole-device and per-process counters read by the run's leader at every phase
 * boundary and every PERFSCOPE_COUNTER_MS: RAPL zones (powercap), NVML GPUs, RssAnon.
 *
 * JSON added to the object given (every key always present once counters_open ran):
 *   "rapl": [ {"zone":"intel-rapl:0", "name":"package-0", "energy_uj":N, "max_energy_range_uj":N}
 *             | {"zone":..., "name":..., "error":"<why unreadable>"} ... ]   (sub-zones too,
 *             zone "intel-rapl:0:1"; empty array when there is no powercap tree)
 *   "gpus": [ {"index":0, "energy_mj":N, "power_mw":N, "mem_used_mib":F, "run_mem_mib":F,
 *              "procs_listed":true|false} ... ]  (a field that NVML could not give is absent)
 *   "rss_anon_kib": N (sum over the pids given), "rss_anon_by_pid": {"<pid>": N, ...}
 *
 * Never called from a signal handler. Must never abort or change the target: anything that
 * cannot be read is logged once (ps_log_once) and left out. */
/* Details of the shape above, as the sources in preload/counters/ give it:
 * - "rapl": zones sorted by name (intel-rapl:0, intel-rapl:0:0, ..., intel-rapl:1); found at the
 *   top of powercap_root and as subdirectories of their parent zone, each once; intel-rapl-mmio:*
 *   is never listed (it doubles the package). energy_uj is raw: a wrap shows as a smaller value.
 *   "error" is "<open|read> energy_uj: <strerror>" or "energy_uj: not a number"; no energy_uj
 *   then. "name" is "" when the name file is unreadable; max_energy_range_uj absent likewise.
 * - "gpus": NVML index order. "procs_listed" is always there; when false (listing refused, e.g.
 *   NVML_ERROR_NO_PERMISSION, or a pid of ours without usedGpuMemory) "run_mem_mib" is absent and
 *   the report falls back on mem_used_mib minus its first value. MiB are 2^20 bytes.
 * - "rss_anon_by_pid" has the pids that could be read (a gone pid or a zombie is skipped without
 *   a log line; each pid counted once); "rss_anon_kib" is absent when pids were given and none
 *   could be read, 0 when none were given.
 * - counters_add_json before counters_open (or after counters_close) gives empty "rapl"/"gpus".
 * Calls are serialised by one internal lock; counters_open may be called again (it reopens). */
#ifndef PERFSCOPE_COUNTERS_H
#define PERFSCOPE_COUNTERS_H

#include <sys/types.h>
#include <cjson/cJSON.h>

/* Finds the zones under ps_cfg.powercap_root and dlopens ps_cfg.nvml_path. */
void counters_open(void);
void counters_add_json(cJSON *obj, const pid_t *pids, int npids);
void counters_close(void);

/* What counters_add_json has cost this process so far (since its start, or its fork): the number
 * of reads and the CPU time of the thread that read, per source (CLOCK_THREAD_CPUTIME_ID around
 * each; JSON building included). Lock-free: callable at exit. */
struct counters_cost {
    unsigned long long reads;
    double rapl_cpu_s, nvml_cpu_s, memory_cpu_s;
};
void counters_cost(struct counters_cost *out);

#endif
