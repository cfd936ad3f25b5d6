/* procline.c: one procs.jsonl object read (procline.h). It must never allocate or do I/O: the
 * shim's leader calls it. */
#include "procline.h"

#include <limits.h>
#include <math.h>
#include <string.h>

static const char *string_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) && v->valuestring ? v->valuestring : NULL;
}

static long whole_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 1 ||
        v->valuedouble > INT_MAX || v->valuedouble != floor(v->valuedouble))
        return 0;
    return (long)v->valuedouble;
}

/* A figure: a finite number in [0, 1e15], else -1. */
static double figure(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble >= 0 && v->valuedouble <= 1e15
               ? v->valuedouble
               : -1;
}

static void read_figures(const cJSON *o, struct proc_line *l)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, "sampling");
    if (!cJSON_IsObject(s))
        return;
    l->n_samples = figure(s, "samples");
    l->distinct_samples = figure(s, "distinct_samples");
    l->sampled_cpu_s = figure(s, "sampled_cpu_s");
    l->shim_threads_cpu_s = figure(s, "shim_threads_cpu_s");
    l->unsampled_cpu_s = figure(s, "unsampled_cpu_s");
    l->samples_without_libunwind = figure(s, "samples_without_libunwind");
    l->have_figures = l->n_samples >= 0 && l->distinct_samples >= 0 && l->sampled_cpu_s >= 0 &&
                      l->shim_threads_cpu_s >= 0 && l->unsampled_cpu_s >= 0;
    if (!l->have_figures)
        l->n_samples = l->distinct_samples = l->sampled_cpu_s = l->shim_threads_cpu_s = l->unsampled_cpu_s = 0;
    if (!l->have_figures || l->samples_without_libunwind > l->n_samples)
        l->samples_without_libunwind = -1;
}

int procline_read(const cJSON *o, struct proc_line *l)
{
    memset(l, 0, sizeof *l);
    l->samples_without_libunwind = -1;
    const char *ev = string_of(o, "event");
    l->pid = whole_of(o, "pid");
    if (!ev || !l->pid)
        return -1;
    l->event = strcmp(ev, "start") == 0  ? PROC_START
               : strcmp(ev, "exit") == 0 ? PROC_EXIT
               : strcmp(ev, "exec") == 0 ? PROC_EXEC
                                         : PROC_OTHER;
    l->ppid = whole_of(o, "ppid");
    l->exe = string_of(o, "exe");
    l->samples = string_of(o, "samples");
    l->status = string_of(o, "status");
    if (l->event == PROC_EXIT || l->event == PROC_EXEC)
        read_figures(o, l);
    return 0;
}
