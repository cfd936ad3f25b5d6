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

#define LAUNCHER_MAX_BYTES (1u << 20)

/* launcher.json's status when it is "exit N" (0..255) or "signal SIG<LETTERS/DIGITS>". */
static int launcher_load(const char *dir, struct run_meta *m, char *err, size_t errlen)
{
    char path[PATH_MAX];
    cJSON *doc = NULL;
    if (runfolder_path(path, sizeof path, dir, RUN_LAUNCHER, NULL, 0) != 0) {
        reader_error(err, errlen, dir, "path too long");
        return -1;
    }
    if (json_file_load(path, LAUNCHER_MAX_BYTES, 1, &doc, err, errlen) < 0)
        return -1;
    const char *st = doc ? string_of(doc, "status") : NULL;
    int ok = 0;
    if (st && strncmp(st, "exit ", 5) == 0) {
        const char *p = st + 5;
        int n = 0, digits = 0;
        for (; *p >= '0' && *p <= '9' && digits < 4; p++, digits++)
            n = n * 10 + (*p - '0');
        ok = digits && !*p && n <= 255;
    } else if (st && strncmp(st, "signal SIG", 10) == 0 && strlen(st) < sizeof m->launcher_status) {
        const char *p = st + 10;
        ok = *p != 0;
        for (; *p && ok; p++)
            ok = (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '+';
    }
    if (ok)
        snprintf(m->launcher_status, sizeof m->launcher_status, "%s", st);
    cJSON_Delete(doc);
    return 0;
}

/* container.json's image name and id, when a container ran (docs/formats.md). */
static int container_load(const char *dir, struct run_meta *m, char *err, size_t errlen)
{
    char path[PATH_MAX];
    cJSON *doc = NULL;
    if (runfolder_path(path, sizeof path, dir, RUN_CONTAINER, NULL, 0) != 0) {
        reader_error(err, errlen, dir, "path too long");
        return -1;
    }
    if (json_file_load(path, LAUNCHER_MAX_BYTES, 1, &doc, err, errlen) < 0)
        return -1;
    const char *image = doc ? string_of(doc, "container_image") : NULL;
    const char *id = doc ? string_of(doc, "container_image_id") : NULL;
    if (image && strlen(image) < sizeof m->container_image)
        snprintf(m->container_image, sizeof m->container_image, "%s", image);
    if (id && strlen(id) < sizeof m->container_image_id)
        snprintf(m->container_image_id, sizeof m->container_image_id, "%s", id);
    cJSON_Delete(doc);
    return 0;
}

int runmeta_load(const char *dir, struct run_meta *m, char *err, size_t errlen)
{
    unknown(m);
    if (launcher_load(dir, m, err, errlen) != 0 || container_load(dir, m, err, errlen) != 0)
        return -1;
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

const char *runmeta_cpu_counts(const struct run_meta *m)
{
    const cJSON *s = m->doc ? cJSON_GetObjectItemCaseSensitive(m->doc, "sampling") : NULL;
    const cJSON *c = s ? cJSON_GetObjectItemCaseSensitive(s, "clock") : NULL;
    if (!cJSON_IsString(c) || !c->valuestring)
        return NULL;
    if (strcmp(c->valuestring, "perf") == 0)
        return "user";
    if (strcmp(c->valuestring, "timer") == 0)
        return "user+sys";
    return NULL;
}

int runmeta_status_from_launcher(const struct run_meta *m)
{
    return m->launcher_status[0] && (!m->status || strcmp(m->status, "running") == 0);
}

const char *runmeta_status(const struct run_meta *m, char *buf, size_t size)
{
    /* Where the shim could not know the end and launcher.json has it, the parent's word. */
    const char *st = runmeta_status_from_launcher(m) ? m->launcher_status : m->status;
    int running = st && strcmp(st, "running") == 0;
    snprintf(buf, size, "%s", !st ? "unknown" : running && m->end_unseen ? "ended unseen"
                              : running                                   ? "killed"
                              : strcmp(st, "exit 0") == 0                 ? "ok"
                                                                           : st);
    return buf;
}
