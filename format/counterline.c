/* counterline.c: one set of counter readings (rules in counterline.h). It must never parse JSON
 * by hand and never trust a member's type. */
#include "counterline.h"

#include <math.h>
#include <stddef.h>

static double value(const cJSON *obj, const char *key)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsNumber(it) && isfinite(it->valuedouble) && it->valuedouble >= 0 ? it->valuedouble
                                                                                   : NAN;
}

static const char *string(const cJSON *obj, const char *key)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(it) && it->valuestring ? it->valuestring : NULL;
}

static const cJSON *array(const cJSON *obj, const char *key)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsArray(it) ? it : NULL;
}

void counterline_read(const cJSON *counters, struct counter_line *l)
{
    l->rapl = array(counters, "rapl");
    l->gpus = array(counters, "gpus");
    l->rss_anon_kib = value(counters, "rss_anon_kib");
}

int counterline_zone(const cJSON *item, struct counter_zone *z)
{
    z->zone = string(item, "zone");
    z->name = string(item, "name");
    z->error = string(item, "error");
    z->energy_uj = value(item, "energy_uj");
    double range = value(item, "max_energy_range_uj");
    z->max_range_uj = range > 0 ? range : 0;
    return z->zone && *z->zone ? 0 : -1;
}

int counterline_gpu(const cJSON *item, struct counter_gpu *g)
{
    double idx = value(item, "index");
    if (isnan(idx) || idx != floor(idx) || idx > COUNTERLINE_MAX_GPU_INDEX)
        return -1;
    g->index = (int)idx;
    g->energy_mj = value(item, "energy_mj");
    g->power_mw = value(item, "power_mw");
    g->run_mem_mib = value(item, "run_mem_mib");
    g->mem_used_mib = value(item, "mem_used_mib");
    const cJSON *listed = cJSON_GetObjectItemCaseSensitive(item, "procs_listed");
    g->procs_listed = cJSON_IsBool(listed) ? cJSON_IsTrue(listed) : -1;
    return 0;
}

enum counter_step_kind counter_step(double prev, double now, double range, double *step)
{
    double d = now - prev;
    if (d >= 0) {
        *step = d;
        return COUNTER_FORWARD;
    }
    if (range > 0 && prev <= range && -d > range / 2) {
        *step = d + range;
        return COUNTER_WRAPPED;
    }
    *step = 0;
    return COUNTER_BACKSTEP;
}
