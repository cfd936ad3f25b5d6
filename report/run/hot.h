/* hot.h: the report's reader of OUT/profile.json, the symbolizer's per-group tables
 * (DESIGN 4): per group the top rows by self and by inclusive time, and the busiest thread.
 * Accepted: the reference harness's shape ({"samples","dropped","period_s","groups":{name:
 * {"samples","cpu_s","self":[{"name","share","cpu_s","threads","busiest_thread_s",
 * "pct_of_wall_on_busiest_thread", "hot_line" or "source" or "file"+"line"}], "inclusive":[...],
 * "busiest_threads":[{"tid","name","cpu_s"}]}}}); unknown members are ignored, a row without a
 * name is skipped. Refused (-1, one line): unreadable, empty, over 256 MiB, not a JSON object,
 * or no "groups" object. */
#ifndef PERFSCOPE_REPORT_HOT_H
#define PERFSCOPE_REPORT_HOT_H

#include <stddef.h>

#define PROFILE_TOP 8
#define PROFILE_MAX_BYTES (256u << 20)

struct prof_row {
    char name[160];
    char source[160];       /* "file:line" (hot_line, else source), "" unknown */
    double share;           /* of the group's samples, 0..1 */
    double cpu_s;           /* < 0 unknown */
    int threads;            /* < 0 unknown */
    double busiest_s;       /* < 0 unknown */
    double pct_wall;        /* pct_of_wall_on_busiest_thread, < 0 unknown */
};

struct prof_group {
    char name[72];
    double samples, cpu_s;
    struct prof_row self[PROFILE_TOP], incl[PROFILE_TOP];
    size_t nself, nincl;
    int have_busiest;
    long long busiest_tid;
    char busiest_name[40];
    double busiest_cpu_s;
};

struct profile {
    size_t ngroups;
    struct prof_group *g;
    double samples, dropped, period_s;  /* < 0 unknown */
};

int profile_load(const char *path, struct profile **out, char *err, size_t errlen);
void profile_free(struct profile *p);
const struct prof_group *profile_group(const struct profile *p, const char *name);

/* Makes sure dir/profile.json is newer than every input it is made from (newest_input_ns) by
 * running perfscope-symbolize (found beside this binary) when it is not. Returns 0 when a fresh
 * profile.json is there, -1 when not, with the reason in note ("perfscope-symbolize is not
 * built", its own error line, ...). */
int profile_ensure(const char *dir, long long newest_input_ns, char *note, size_t notelen);

#endif
