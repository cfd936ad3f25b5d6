/* fuzz_counters: libFuzzer harness for counters.jsonl: every line through format/jsonl.c and
 * format/counterline.c (counterline_read, each zone and GPU, counter_step between consecutive
 * readings, as the report and trace.json step them), the run's extent (format/runextent.c reads
 * its last t_ns), and both tools' whole reading of a run folder holding it (fuzz_run.h: the
 * report's counter readings, energy and memory, run.json, report.md, `dump run`'s counters
 * section; the symbolizer's power and memory tracks in trace.json). */
#include "fuzz_run.h"
#include "counterline.h"
#include "jsonl.h"
#include "runextent.h"

#include <math.h>

struct prev {
    double energy, range;
    int have;
};

static void step(struct prev *p, double now, double range)
{
    if (isnan(now))
        return;
    if (p->have) {
        double s = NAN;
        enum counter_step_kind k = counter_step(p->energy, now, range, &s);
        /* counterline.h: no step is ever negative (corpus/counters/above_range.jsonl: an earlier
         * reading above its own range once gave a negative wrap). */
        if ((k != COUNTER_BACKSTEP && !(s >= 0)))
            __builtin_trap();
        if (k == COUNTER_BACKSTEP)
            return; /* prev stays the reference */
    }
    p->energy = now;
    p->range = range;
    p->have = 1;
}

static int take(cJSON *obj, size_t lineno, void *arg)
{
    (void)lineno;
    struct prev *prev = arg; /* [0] the first zone, [1] the first GPU */
    struct counter_line l;
    counterline_read(obj, &l);
    if (!isnan(l.rss_anon_kib) && !(l.rss_anon_kib >= 0))
        __builtin_trap();
    const cJSON *it;
    int first = 1;
    cJSON_ArrayForEach(it, l.rapl)
    {
        struct counter_zone z;
        if (counterline_zone(it, &z) == 0) {
            if (!z.zone || !*z.zone)
                __builtin_trap();
            if (first)
                step(&prev[0], z.energy_uj, z.max_range_uj);
            first = 0;
        }
    }
    first = 1;
    cJSON_ArrayForEach(it, l.gpus)
    {
        struct counter_gpu g;
        if (counterline_gpu(it, &g) == 0) {
            if (g.index < 0 || g.index > COUNTERLINE_MAX_GPU_INDEX)
                __builtin_trap();
            if (first)
                step(&prev[1], g.energy_mj, 0);
            first = 0;
        }
    }
    unsigned long long t;
    json_u64(obj, "t_ns", &t);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (fuzz_put(RUN_COUNTERS, data, size) != 0)
        return 0;
    const char *dir = fuzz_run_dir();
    char path[4200], err[600];
    snprintf(path, sizeof path, "%s/%s", dir, RUN_COUNTERS);
    struct prev prev[2] = {{0}, {0}};
    struct jsonl_stats st;
    if (jsonl_foreach(path, take, prev, &st, err, sizeof err) == 0 &&
        st.objects + st.bad > st.lines)
        __builtin_trap();
    struct run_meta none = {.t0_wall_s = -1, .hz = -1};
    struct run_extent ext;
    run_extent_find(dir, &none, 0, 0, NULL, &ext);
    fuzz_report();
    fuzz_dump();
    fuzz_symbolize();
    return 0;
}
