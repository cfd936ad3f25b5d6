/* groups.c: phases indexed by group, and per-group wall, tokens and throughput (groups.h). It
 * must stay linear in the number of phases whatever the number of groups. */
#include "groups.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

int group_index_build(const struct phases *p, struct group_index *gi)
{
    memset(gi, 0, sizeof *gi);
    gi->idle = -1;
    size_t ng = p ? p->ngroups : 0, n = p ? p->n : 0;
    gi->ngroups = ng;
    gi->start = calloc(ng + 1, sizeof *gi->start);
    gi->occ = malloc((n ? n : 1) * sizeof *gi->occ);
    size_t *fill = calloc(ng + 1, sizeof *fill);
    if (!gi->start || !gi->occ || !fill) {
        free(fill);
        group_index_free(gi);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        gi->start[p->v[i].group + 1]++;
    for (size_t g = 0; g < ng; g++)
        gi->start[g + 1] += gi->start[g];
    for (size_t i = 0; i < n; i++) {
        int g = p->v[i].group;
        gi->occ[gi->start[g] + fill[g]++] = (int)i;
    }
    free(fill);
    if (p)
        gi->idle = phases_group_index(p, "idle");
    return 0;
}

void group_index_free(struct group_index *gi)
{
    free(gi->start);
    free(gi->occ);
    memset(gi, 0, sizeof *gi);
    gi->idle = -1;
}

void group_basic(const struct phases *p, const struct group_index *gi, int g,
                 struct group_basic *b)
{
    memset(b, 0, sizeof *b);
    b->tokens = -1;
    b->tokens_per_s = -1;
    for (size_t k = gi->start[g]; k < gi->start[g + 1]; k++) {
        const struct phase *ph = &p->v[gi->occ[k]];
        b->occurrences++;
        b->open += (size_t)ph->open;
        b->wall_s += (double)(ph->end_ns - ph->start_ns) / 1e9;
        if (ph->tokens >= 0) {
            long long have = b->tokens < 0 ? 0 : b->tokens;
            b->tokens = ph->tokens > LLONG_MAX - have ? LLONG_MAX : have + ph->tokens;
        }
    }
    if (b->tokens >= 0 && b->wall_s > 0)
        b->tokens_per_s = (double)b->tokens / b->wall_s;
}
