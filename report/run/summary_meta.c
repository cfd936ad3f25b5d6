/* summary_meta.c: the summary's meta.json section (status, clock fields; read by format/runmeta.c)
 * and the shim's own perfscope.log. It must never parse JSON by hand and never print a log line
 * longer than the cap. */
#include "report.h"
#include "runfolder.h"
#include "files.h"
#include "summary.h"
#include "textfile.h"

#include <stdlib.h>
#include <string.h>


int load_meta(struct run_summary *r, char *err, size_t errlen)
{
    if (runmeta_load(r->dir, &r->meta, err, errlen) != 0)
        return -1;
    /* procs.jsonl only refines the status (run_status): unreadable, it is as if absent. */
    char perr[512];
    if (run_procs_load(r->dir, &r->procs, perr, sizeof perr) != 0)
        memset(&r->procs, 0, sizeof r->procs);
    return 0;
}

static void print_value(const char *label, const cJSON *v)
{
    printf("  %s: ", label);
    if (cJSON_IsString(v))
        put_clean(stdout, v->valuestring);
    else if (cJSON_IsNumber(v))
        printf("%.15g", v->valuedouble);
    else if (cJSON_IsBool(v))
        printf("%s", cJSON_IsTrue(v) ? "true" : "false");
    else
        printf("null");
    printf("\n");
}

static int is_clock_key(const char *k)
{
    return strstr(k, "clock") || strstr(k, "hz") || strstr(k, "t0") || strstr(k, "sampl") ||
           strcmp(k, "end_ns") == 0;
}

/* Scalars whose key (or an enclosing object's key) names a clock, a rate, the sampling or the
 * baseline, two levels deep (meta.c writes "sampling":{"clock", "hz_delivered", ...},
 * "config":{"hz", "clock"}, "t0_ns"): the schema may still move, the question stays the same. */
static void print_clock_fields(const cJSON *obj, const char *prefix, int depth, int matched)
{
    const cJSON *m;
    cJSON_ArrayForEach(m, obj)
    {
        if (!m->string)
            continue;
        char label[256];
        snprintf(label, sizeof label, "%s%s%s", prefix, prefix[0] ? "." : "", m->string);
        int match = matched || is_clock_key(m->string);
        if (cJSON_IsObject(m)) {
            if (depth < 2)
                print_clock_fields(m, label, depth + 1, match);
        } else if (match && !cJSON_IsArray(m)) {
            print_value(label, m);
        }
    }
}

void print_meta(const struct run_summary *r)
{
    const cJSON *meta = r->meta.doc;
    if (!meta) {
        printf("\nmeta: none (no meta.json)\n");
        return;
    }
    printf("\nmeta:\n");
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(meta, "schema");
    if (schema)
        print_value("schema", schema);
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(meta, "status");
    char st[64];
    run_status(&r->meta, &r->procs, st, sizeof st);
    if (strcmp(st, "killed") == 0)
        printf("  status: killed (meta.json still says running: the leader never finished)\n");
    else if (strcmp(st, "ended unseen") == 0)
        printf("  status: ended unseen (meta.json still says running; end_unseen says why)\n");
    else if (status && r->meta.status && strcmp(r->meta.status, "running") == 0)
        printf("  status: %s (meta.json still says running: the leader went on in an image the shim did not "
               "load in)\n", st);
    else if (status)
        print_value("status", status);
    else
        printf("  status: not recorded\n");
    print_clock_fields(meta, "", 0, 0);
}

int load_log(struct run_summary *r, size_t keep, char *err, size_t errlen)
{
    return runlog_load(r->dir, keep, &r->log, err, errlen);
}

void print_log(const struct run_summary *r)
{
    if (!r->log.present) {
        printf("\nlog: none (no perfscope.log)\n");
        return;
    }
    printf("\nlog (perfscope.log):\n");
    for (size_t i = 0; i < r->log.n; i++) {
        printf("  ");
        put_clean(stdout, r->log.line[i]);
        printf("%s\n", r->log.cut[i] ? " [cut]" : "");
    }
    if (!r->log.n)
        printf("  (empty)\n");
    if (r->log.more)
        printf("  ... %zu more lines\n", r->log.more);
}
