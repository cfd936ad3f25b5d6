/* unsampledfile.c: unsampled.jsonl read once, line by line, and shared out over threads and phase
 * groups (unsampledfile.h). It must never print, never keep more than one line, and never trust a
 * number it did not check. */
#include "unsampledfile.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hmap.h"
#include "jsonl.h"
#include "runfolder.h"

struct load_ctx {
    struct unsampled *u;
    const struct phases *ph;
    struct hmap index;       /* (pid << 32 | tid) -> 1 + index in u->thread */
    size_t cap;              /* of u->thread */
    int oom;
};

static size_t group_of(const struct phases *ph, int phase)
{
    return phase < 0 ? ph->ngroups : (size_t)ph->v[phase].group;
}

/* The stretch's CPU time over the innermost-phase spans it overlaps, at an even rate. */
static void share_out(struct load_ctx *c, uint64_t t0, uint64_t t1, double cpu_s)
{
    const struct phases *ph = c->ph;
    double *g = c->u->group_cpu_s;
    if (!ph) {
        g[0] += cpu_s;
        return;
    }
    if (t1 == t0 || !ph->nspans) {
        g[group_of(ph, phases_at(ph, t0))] += cpu_s;
        return;
    }
    /* The span in force at t0: the last one starting at or before it (none: outside phases). */
    size_t lo = 0, hi = ph->nspans;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ph->spans[mid].start_ns <= t0)
            lo = mid + 1;
        else
            hi = mid;
    }
    double len = (double)(t1 - t0);
    uint64_t from = t0;
    int phase = lo ? ph->spans[lo - 1].phase : -1;
    for (size_t i = lo; from < t1; i++) {
        uint64_t to = i < ph->nspans && ph->spans[i].start_ns < t1 ? ph->spans[i].start_ns : t1;
        g[group_of(ph, phase)] += cpu_s * (double)(to - from) / len;
        from = to;
        if (i < ph->nspans)
            phase = ph->spans[i].phase;
    }
}

static struct unsampled_thread *thread_of(struct load_ctx *c, long pid, long tid)
{
    struct unsampled *u = c->u;
    uint64_t key = (uint64_t)pid << 32 | (uint64_t)tid;
    uint64_t *slot = hmap_find(&c->index, &key);
    if (slot)
        return &u->thread[*slot - 1];
    if (u->nthreads == UNSAMPLED_MAX_THREADS)
        return NULL;
    if (u->nthreads == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 16;
        struct unsampled_thread *more = realloc(u->thread, cap * sizeof *more);
        if (!more) {
            c->oom = 1;
            return NULL;
        }
        u->thread = more;
        c->cap = cap;
    }
    if (!(slot = hmap_get(&c->index, &key, NULL))) {
        c->oom = 1;
        return NULL;
    }
    struct unsampled_thread *t = &u->thread[u->nthreads++];
    *slot = u->nthreads;
    memset(t, 0, sizeof *t);
    t->pid = pid;
    t->tid = tid;
    return t;
}

static int one_line(cJSON *o, size_t lineno, void *arg)
{
    struct load_ctx *c = arg;
    struct unsampled *u = c->u;
    unsigned long long pid, tid, t0, t1, cpu;
    const cJSON *comm = cJSON_GetObjectItemCaseSensitive(o, "comm");
    if (json_u64(o, "pid", &pid) != 0 || json_u64(o, "tid", &tid) != 0 || json_u64(o, "t0_ns", &t0) != 0 ||
        json_u64(o, "t1_ns", &t1) != 0 || json_u64(o, "cpu_ns", &cpu) != 0 || t1 < t0 || pid > INT_MAX ||
        tid > INT_MAX || (comm && !cJSON_IsString(comm))) {
        u->bad++;
        if (!u->first_bad_line)
            u->first_bad_line = lineno;
        return 0;
    }
    double cpu_s = (double)cpu / 1e9;
    u->cpu_s += cpu_s;
    struct unsampled_thread *t = thread_of(c, (long)pid, (long)tid);
    if (t) {
        t->cpu_s += cpu_s;
        if (comm && comm->valuestring && comm->valuestring[0]) {
            strncpy(t->comm, comm->valuestring, sizeof t->comm - 1);
            t->comm[sizeof t->comm - 1] = 0;
        }
    } else {
        u->other_lines++;
        u->other_cpu_s += cpu_s;
    }
    share_out(c, (uint64_t)t0, (uint64_t)t1, cpu_s);
    return 0;
}

static int start(const struct phases *ph, struct unsampled *u, const char *what, char *err, size_t errlen)
{
    memset(u, 0, sizeof *u);
    u->ngroups = ph ? ph->ngroups : 0;
    u->group_cpu_s = calloc(u->ngroups + 1, sizeof *u->group_cpu_s);
    if (!u->group_cpu_s) {
        unsampled_free(u);
        if (err && errlen)
            snprintf(err, errlen, "%s: out of memory", what);
        return -1;
    }
    return 0;
}

int unsampled_load(const char *dir, const struct phases *ph, struct unsampled *u, char *err, size_t errlen)
{
    char path[PATH_MAX];
    int there = runfolder_optional(path, sizeof path, dir, RUN_UNSAMPLED, err, errlen);
    if (there < 0) {
        memset(u, 0, sizeof *u);
        return -1;
    }
    if (there == 0)
        return start(ph, u, dir, err, errlen);
    return unsampled_read(path, ph, u, err, errlen);
}

int unsampled_read(const char *path, const struct phases *ph, struct unsampled *u, char *err, size_t errlen)
{
    if (start(ph, u, path, err, errlen) != 0)
        return -1;
    u->present = 1;
    struct load_ctx c = { .u = u, .ph = ph };
    hmap_init(&c.index, 1);
    struct jsonl_stats st;
    int rc = jsonl_foreach(path, one_line, &c, &st, err, errlen);
    hmap_free(&c.index);
    if (rc == 0 && c.oom) {
        if (err && errlen)
            snprintf(err, errlen, "%s: out of memory", path);
        rc = -1;
    }
    if (rc != 0) {
        unsampled_free(u);
        return -1;
    }
    u->lines = st.lines;
    u->bad += st.bad;
    if (st.first_bad_line && (!u->first_bad_line || st.first_bad_line < u->first_bad_line))
        u->first_bad_line = st.first_bad_line;
    return 0;
}

void unsampled_free(struct unsampled *u)
{
    free(u->thread);
    free(u->group_cpu_s);
    memset(u, 0, sizeof *u);
}
