/* flametree.h: the call trees of a run's flame graphs: OUT/flame.json (written by the
 * symbolizer, docs/symbolize.md: per phase group a flat list of nodes [parent, frame, self
 * samples] over one table of frames [name, module, "file:line", inline, truncated]) read and
 * checked (flame_load), and one group's tree built as the page's node schema (flame_tree):
 *   {"n":name,"m":module,"f":"file:line","v":samples (self + children),"i":0/1,"t":0/1,
 *    "c":[children]}, the root {"n":group,"v":the group's samples,"c":[...],"hidden","min"}.
 * A differential graph (perfscope diff --html) adds "d" to each node of such a tree.
 * Refused (-1, one line "<path>: <what>"): unreadable, over FLAME_MAX_BYTES, not the schema, a
 * frame or node of the wrong shape, a parent not listed before its child, a frame index out of
 * range. It must never print and never trust a count or an index it has not checked. */
#ifndef PERFSCOPE_REPORT_HTML_FLAMETREE_H
#define PERFSCOPE_REPORT_HTML_FLAMETREE_H

#include <stddef.h>
#include <cjson/cJSON.h>

#define FLAME_MAX_BYTES (256u << 20)
#define FLAME_SCHEMA "perfscope-flame/1"

struct flame_set {
    cJSON *doc;
    const cJSON *frames;   /* checked array of [name, module, source, inline, truncated] */
    int nframes;
    const cJSON *groups;   /* checked array of {name, samples, nodes} */
};

/* 0 with *out; 1 when path does not exist (*out NULL); -1 with one line in err. */
int flame_load(const char *path, struct flame_set **out, char *err, size_t errlen);
void flame_free(struct flame_set *f);

/* The tree of group `name` (NULL: it has no samples, or out of memory: *oom says which). The
 * caller deletes it. budget (0: no limit): at most that many nodes, the ones of the most
 * samples; the root then says how many were left out ("hidden") and the samples a node needed
 * to be kept ("min"). Their samples stay in their parents' totals (drawn as a gap). */
cJSON *flame_tree(const struct flame_set *f, const char *name, size_t budget, int *oom);

/* A differential tree (B's shape) from n per-stack pairs: stacks[i] its frames outermost first
 * joined by ';', a[i] and b[i] its values on sides A and B. Each node, the root {"n":name} too:
 * "v" B's value (self + children, what the width is), "a" A's, "d" (v - a) * dscale. A stack of
 * B value 0 still counts in its nodes' "a" and "d" (its frames are drawn at width 0). NULL when
 * out of memory. */
cJSON *flame_tree_pairs(const char *name, const char *const *stacks, const double *a, const double *b,
                        size_t n, double dscale);

#endif
