/* runextent.c: where a run starts and ends (runextent.h). It must never fail or print: a
 * counters.jsonl it cannot read only gives no end time. */
#include "runextent.h"

#include <limits.h>

#include "jsonl.h"
#include "runfolder.h"

static int later_reading(cJSON *obj, size_t lineno, void *arg)
{
    (void)lineno;
    unsigned long long t;
    uint64_t *last = arg;
    if (json_u64(obj, "t_ns", &t) == 0 && t > *last)
        *last = t;
    return 0;
}

void run_extent_find(const char *dir, const struct run_meta *meta, uint64_t first_sample_ns,
                     uint64_t last_sample_ns, struct phases *ph, struct run_extent *out)
{
    uint64_t start = meta->t0_ns ? meta->t0_ns : first_sample_ns;
    if (first_sample_ns && first_sample_ns < start)
        start = first_sample_ns;
    uint64_t end = meta->end_ns > last_sample_ns ? meta->end_ns : last_sample_ns;
    char path[PATH_MAX], err[256];
    if (runfolder_path(path, sizeof path, dir, RUN_COUNTERS, NULL, 0) == 0)
        jsonl_foreach(path, later_reading, &end, NULL, err, sizeof err);
    if (ph && ph->nb && ph->b[ph->nb - 1].t_ns > end)
        end = ph->b[ph->nb - 1].t_ns;
    if (ph && end)
        phases_close_open(ph, end);
    out->start_ns = start;
    out->end_ns = end;
}
