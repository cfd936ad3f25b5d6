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
#ifndef PERFSCOPE_COUNTERS_H
#define PERFSCOPE_COUNTERS_H

#include <sys/types.h>
#include <cjson/cJSON.h>

/* Finds the zones under ps_cfg.powercap_root and dlopens ps_cfg.nvml_path. */
void counters_open(void);
void counters_add_json(cJSON *obj, const pid_t *pids, int npids);
void counters_close(void);

#endif
