/* hot.h: the report's reading of OUT/profile.json (struct hot_profile), the symbolizer's
 * per-group tables (docs/symbolize.md): per group the top rows by self and by inclusive time, and the
 * busiest thread. The symbolizer's own struct profile (symbolize/profile.h) is what it collects
 * from the samples; this is only what the report takes from its output.
 * Accepted: the reference harness's shape ({"samples","dropped","period_s","groups":{name:
 * {"samples","cpu_s","self":[{"name","share","cpu_s","threads","busiest_thread_s",
 * "pct_of_wall_on_busiest_thread", "hot_line" or "source" or "file"+"line"}], "inclusive":[...],
 * "busiest_threads":[{"tid","name","cpu_s"}]}}}); unknown members are ignored, a row without a
 * name is skipped. Refused (-1, one line): unreadable, empty, over 256 MiB, not a JSON object,
 * or no "groups" object, or out of memory. Names are kept whole, however long (the terminal
 * layout cuts them for display, never the model). It must never run the symbolizer (symbolize_call.h does). */
#ifndef PERFSCOPE_REPORT_HOT_H
#define PERFSCOPE_REPORT_HOT_H

#include <stddef.h>

#define HOT_TOP 8
#define HOT_MAX_BYTES (256u << 20)

struct hot_row {
    char *name;             /* whole, as profile.json has it (heap) */
    char *source;           /* "file:line" (hot_line, else source), "" unknown (heap) */
    double share;           /* of the group's samples, 0..1 */
    double cpu_s;           /* < 0 unknown */
    int threads;            /* < 0 unknown */
    double busiest_s;       /* < 0 unknown */
    double pct_wall;        /* pct_of_wall_on_busiest_thread, < 0 unknown */
};

struct hot_group {
    char *name;             /* heap */
    double samples, cpu_s;
    struct hot_row self[HOT_TOP], incl[HOT_TOP];
    size_t nself, nincl;
    int have_busiest;
    long long busiest_tid;
    char *busiest_name;     /* heap, "" unknown */
    double busiest_cpu_s;
};

struct hot_profile {
    size_t ngroups;
    struct hot_group *g;
    double samples, dropped, period_s;  /* < 0 unknown */
};

int hot_profile_load(const char *path, struct hot_profile **out, char *err, size_t errlen);
void hot_profile_free(struct hot_profile *p);
const struct hot_group *hot_profile_group(const struct hot_profile *p, const char *name);

#endif
