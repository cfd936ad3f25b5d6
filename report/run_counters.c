/* run_counters.c: the summary's counters section: how many counters.jsonl lines, the RAPL zones
 * and GPUs its first line saw, the peak RssAnon. It must never parse JSON by hand (cJSON through
 * symbolize/jsonl.c) and never keep more than the first line. */
#include "report.h"
#include "summary.h"
#include "jsonl.h"
#include "textfile.h"

#include <errno.h>
#include <sys/stat.h>

static int take_counters(cJSON *obj, size_t lineno, void *arg)
{
    (void)lineno;
    struct counters_summary *c = arg;
    if (!c->first)
        c->first = cJSON_Duplicate(obj, 1);
    unsigned long long v;
    if (json_u64(obj, "rss_anon_kib", &v) == 0) {
        if (!c->have_rss || v > c->peak_rss_anon_kib)
            c->peak_rss_anon_kib = v;
        c->have_rss = 1;
    }
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
    struct stat st;
    if (run_path(path, sizeof path, r->dir, "counters.jsonl", err, errlen) != 0)
        return -1;
    if (stat(path, &st) != 0 && errno == ENOENT)
        return 0;
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

static void print_zones(const cJSON *rapl)
{
    int n = cJSON_GetArraySize(rapl);
    printf("  RAPL zones: %d\n", n);
    const cJSON *z;
    cJSON_ArrayForEach(z, rapl)
    {
        const cJSON *zone = cJSON_GetObjectItemCaseSensitive(z, "zone");
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(z, "name");
        const cJSON *error = cJSON_GetObjectItemCaseSensitive(z, "error");
        printf("    ");
        put_clean(stdout, cJSON_IsString(zone) ? zone->valuestring : "?");
        printf(" ");
        put_clean(stdout, cJSON_IsString(name) ? name->valuestring : "?");
        if (cJSON_IsString(error)) {
            printf("  unreadable: ");
            put_clean(stdout, error->valuestring);
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
    const cJSON *rapl = cJSON_GetObjectItemCaseSensitive(c->first, "rapl");
    if (cJSON_IsArray(rapl))
        print_zones(rapl);
    else
        printf("  RAPL zones: not recorded\n");
    const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(c->first, "gpus");
    if (cJSON_IsArray(gpus))
        printf("  GPUs: %d\n", cJSON_GetArraySize(gpus));
    else
        printf("  GPUs: not recorded\n");
    if (c->have_rss)
        printf("  peak rss_anon: %llu KiB (%.1f MiB)\n", c->peak_rss_anon_kib,
               (double)c->peak_rss_anon_kib / 1024.0);
    else
        printf("  peak rss_anon: not recorded\n");
}
