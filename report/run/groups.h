/* groups.h: the phases of a run indexed by group (each group's occurrences in begin order), and
 * the per-group figures that need no counters: occurrences, wall time, tokens and throughput.
 * Built once, so that no per-group computation ever walks every phase of the run again. */
#ifndef PERFSCOPE_REPORT_GROUPS_H
#define PERFSCOPE_REPORT_GROUPS_H

#include <stddef.h>

#include "phases.h"

#define GROUPS_SHOWN 64 /* groups reported, in order of first begin; the rest are counted */

struct group_index {
    size_t ngroups;
    size_t *start;  /* [ngroups + 1]: occurrences of g are occ[start[g] .. start[g+1]) */
    int *occ;       /* phase indexes */
    int idle;       /* the group named "idle", -1 none */
};

struct group_basic {
    size_t occurrences;
    size_t open;            /* never ended */
    double wall_s;          /* summed over occurrences */
    long long tokens;       /* summed tokens=, -1 when no occurrence had any */
    double tokens_per_s;    /* tokens / wall_s; < 0 when unknown */
};

/* 0, or -1 (out of memory). An empty index when p is NULL. */
int group_index_build(const struct phases *p, struct group_index *gi);
void group_index_free(struct group_index *gi);

void group_basic(const struct phases *p, const struct group_index *gi, int g,
                 struct group_basic *out);

#endif
