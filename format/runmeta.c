/* runmeta.c: meta.json into a struct run_meta (rules in runmeta.h). It must never parse JSON by
 * hand (json_file_load and cJSON do) and never trust a fact's type. */
#include "runmeta.h"
#include "runfolder.h"
#include "jsonl.h"
#include "textfile.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

static const char *string_of(const cJSON *obj, const char *key)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(it) && it->valuestring ? it->valuestring : NULL;
}

static void unknown(struct run_meta *m)
{
    memset(m, 0, sizeof *m);
    m->t0_wall_s = -1;
    m->hz = -1;
}

int runmeta_load(const char *dir, struct run_meta *m, char *err, size_t errlen)
{
    unknown(m);
    char path[PATH_MAX];
    if (runfolder_path(path, sizeof path, dir, RUN_META, NULL, 0) != 0) {
        reader_error(err, errlen, dir, "path too long");
        return -1;
    }
    if (json_file_load(path, RUNMETA_MAX_BYTES, 1, &m->doc, err, errlen) < 0)
        return -1;
    if (!m->doc)
        return 0;
    unsigned long long v;
    if (json_u64(m->doc, "t0_ns", &v) == 0)
        m->t0_ns = v;
    if (json_u64(m->doc, "end_ns", &v) == 0)
        m->end_ns = v;
    if (json_u64(m->doc, "pid", &v) == 0 && v <= INT_MAX)
        m->pid = (long)v;
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(m->doc, "t0_wall_s");
    if (cJSON_IsNumber(w) && w->valuedouble > 0 && w->valuedouble < RUNMETA_MAX_WALL_S && m->t0_ns)
        m->t0_wall_s = w->valuedouble;
    const char *exe = string_of(m->doc, "executable"), *bid = string_of(m->doc, "build_id");
    if (exe && bid) {
        m->executable = exe;
        m->build_id = bid;
    }
    m->status = string_of(m->doc, "status");
    m->end_unseen = string_of(m->doc, "end_unseen");
    const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(m->doc, "config");
    const cJSON *hz = cfg ? cJSON_GetObjectItemCaseSensitive(cfg, "hz") : NULL;
    if (cJSON_IsNumber(hz) && hz->valuedouble >= 0 && hz->valuedouble < 1e6)
        m->hz = (int)hz->valuedouble;
    return 0;
}

void runmeta_free(struct run_meta *m)
{
    cJSON_Delete(m->doc);
    unknown(m);
}

const char *runmeta_status(const struct run_meta *m, char *buf, size_t size)
{
    const char *st = m->status;
    int running = st && strcmp(st, "running") == 0;
    snprintf(buf, size, "%s", !st ? "unknown" : running && m->end_unseen ? "ended unseen"
                              : running                                   ? "killed"
                              : strcmp(st, "exit 0") == 0                 ? "ok"
                                                                           : st);
    return buf;
}
