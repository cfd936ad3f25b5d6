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

int procline_read(const cJSON *o, struct proc_line *l)
{
    memset(l, 0, sizeof *l);
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
    return 0;
}
