/* config.h: the shim's configuration, read once from the environment at start (config_read, the
 * one place that reads it: README.md and docs/shim.md list the variables), and the paths in the
 * run folder it names. Read-only after start; nothing here may be called from the signal handler
 * (the handler only reads ps_cfg's fields). */
#ifndef PERFSCOPE_CONFIG_H
#define PERFSCOPE_CONFIG_H

#include <limits.h>
#include <stddef.h>

/* The most samples a CPU second a thread is asked for: each takes a signal, 25-45 us of the
 * thread's CPU on the VMs of bench/RESULTS.md, and a CPU-bound program ran 1.1 times as long at
 * 5000 Hz, 1.3 at 10000, 1.9 at 20000, 18 at 50000 and, at 100000, its thread did little but take
 * signals (2026-12-07, a newcomer's run: 22 CPU s for 0.14 s of work). perf caps its own rate
 * and the kernel throttles it; a higher PERFSCOPE_HZ is taken as this one, said in perfscope.log. */
#define PS_HZ_MAX 20000

enum ps_clock { PS_CLOCK_AUTO, PS_CLOCK_PERF, PS_CLOCK_TIMER };
/* kernel: no signal; the kernel writes each perf overflow's user call chain (frame pointers)
 * into a ring buffer per thread, which the writer drains (kchain.h). */
enum ps_unwind { PS_UNWIND_LIBUNWIND, PS_UNWIND_FP, PS_UNWIND_KERNEL };

struct ps_config {
    char out_dir[PATH_MAX];      /* PERFSCOPE_OUT, or the folder of LLMPERFSCOPE_CPUPROF_OUT */
    char file_prefix[PATH_MAX];  /* "<out>/cpuprof": sample files are <prefix>.<pid>[.<n>].bin */
    int hz;                      /* samples per CPU second (at most PS_HZ_MAX); 0: no stack sampling */
    enum ps_clock clock;         /* as asked */
    enum ps_unwind unwind;
    int unwind_fast;             /* PERFSCOPE_UNWIND_FAST: libunwind's caching tracer; 0: step by step */
    int max_frames;              /* 1..256 */
    int counter_ms;              /* 0: no periodic counter reads */
    char markers[PATH_MAX];      /* LLMPERFSCOPE_MARKERS, else PERFSCOPE_MARKERS; "" when neither */
    char powercap_root[PATH_MAX];
    char nvml_path[PATH_MAX];
};

extern struct ps_config ps_cfg;

/* The values PERFSCOPE_CLOCK and PERFSCOPE_UNWIND take, indexed by their enums (the first is
 * the default): what config_read accepts and what meta.json says. */
extern const char *const ps_clock_names[3];
extern const char *const ps_unwind_names[3];

/* Fills ps_cfg from the environment; bad values are logged and replaced by the default. */
void config_read(void);
/* The variable the markers file is named by: "LLMPERFSCOPE_MARKERS" when set, else
 * "PERFSCOPE_MARKERS" when set (the same variable; the first wins), else NULL. */
const char *config_markers_var(void);
/* Our own variables hold absolute paths from here on (only those given relative). */
void config_export_absolute(void);

/* "<out>/<name>" into buf. */
void ps_path(char *buf, size_t size, const char *name);

#endif
