/* summary_counters.c: the run summary's counters section (summary.h; printed by `dump run`):
 * how many counters.jsonl lines, the RAPL zones and GPUs its first line saw, the peak RssAnon.
 * It must never parse JSON by hand (cJSON through format/jsonl.c; each line read by
 * format/counterline.c) and never keep more than the first line. */
#include "report.h"
#include "runfolder.h"
#include "summary.h"
#include "counterline.h"
#include "files.h"
#include "jsonl.h"
#include "textfile.h"

#include <math.h>

static int take_counters(cJSON *obj, size_t lineno, void *arg)
{
    (void)lineno;
    struct counters_summary *c = arg;
    if (!c->first)
        c->first = cJSON_Duplicate(obj, 1);
    struct counter_line cl;
    counterline_read(obj, &cl);
    if (!isnan(cl.rss_anon_kib)) {
        if (!c->have_rss || cl.rss_anon_kib > c->peak_rss_anon_kib)
            c->peak_rss_anon_kib = cl.rss_anon_kib;
        c->have_rss = 1;
    }
    unsigned long long v;
    if (json_u64(obj, "t_ns", &v) == 0) {
        if (!c->have_t || v < c->first_t_ns)
            c->first_t_ns = v;
        if (!c->have_t || v > c->last_t_ns)
            c->last_t_ns = v;
        c->have_t = 1;
    }
    return 0;
}

int load_counters(struct run_summary *r, char *err, size_t errlen)
{
    char path[PATH_MAX];
    int there = runfolder_optional(path, sizeof path, r->dir, RUN_COUNTERS, err, errlen);
    if (there <= 0)
        return there;
    struct jsonl_stats js;
    if (jsonl_foreach(path, take_counters, &r->counters, &js, err, errlen) != 0)
        return -1;
    if (js.objects == 0 && js.bad > 0) {
        reader_error(err, errlen, path, "no JSON object in %zu lines (first bad line %zu)",
                     js.lines, js.first_bad_line);
        return -1;
    }
    r->counters.present = 1;
    r->counters.lines = js.lines;
    r->counters.objects = js.objects;
    r->counters.bad = js.bad;
    return 0;
}

/* How many items of a "rapl" (zones) or "gpus" array read as what they should be. */
static int count_read(const cJSON *arr, int zones)
{
    int n = 0;
    const cJSON *it;
    struct counter_zone z;
    struct counter_gpu g;
    cJSON_ArrayForEach(it, arr)
        n += (zones ? counterline_zone(it, &z) : counterline_gpu(it, &g)) == 0;
    return n;
}

static void print_zones(const cJSON *rapl)
{
    printf("  RAPL zones: %d\n", count_read(rapl, 1));
    const cJSON *it;
    cJSON_ArrayForEach(it, rapl)
    {
        struct counter_zone z;
        if (counterline_zone(it, &z) != 0)
            continue;
        printf("    ");
        put_clean(stdout, z.zone);
        printf(" ");
        put_clean(stdout, z.name ? z.name : "?");
        if (z.error) {
            printf("  unreadable: ");
            put_clean(stdout, z.error);
        }
        printf("\n");
    }
}

void print_counters(const struct run_summary *r)
{
    const struct counters_summary *c = &r->counters;
    if (!c->present) {
        printf("\ncounters: none (no counters.jsonl)\n");
        return;
    }
    printf("\ncounters: %zu lines", c->objects);
    if (c->bad)
        printf(" (%zu bad lines skipped)", c->bad);
    if (c->have_t)
        printf(", over %.3f s", (double)(c->last_t_ns - c->first_t_ns) / 1e9);
    printf("\n");
    if (!c->first)
        return;
    struct counter_line cl;
    counterline_read(c->first, &cl);
    if (cl.rapl)
        print_zones(cl.rapl);
    else
        printf("  RAPL zones: not recorded\n");
    if (cl.gpus)
        printf("  GPUs: %d\n", count_read(cl.gpus, 0));
    else
        printf("  GPUs: not recorded\n");
    if (c->have_rss)
        printf("  peak rss_anon: %.0f KiB (%.1f MiB)\n", c->peak_rss_anon_kib,
               c->peak_rss_anon_kib / 1024.0);
    else
        printf("  peak rss_anon: not recorded\n");
}
