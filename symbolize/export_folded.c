/* export_folded.c: OUT/stacks.folded, the folded-stack text FlameGraph, speedscope and inferno
 * read: one "phase;root;...;leaf count" line per distinct (phase group, stack of function
 * names): threads, processes and the addresses inside a function merge; inline frames as
 * frames of their own (outermost first), a cut stack's root frame "[truncated]"; counts in
 * samples; the counts add up to profile.json's samples. A name's ';' becomes ':' and control bytes '?', so a name can never
 * split a frame or a line. It must never write other than through outfile.c. */
#include "tables.h"
#include "runfolder.h"
#include "outfile.h"

#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 16384 /* 256 physical frames of up to 32 inline levels, the [truncated] root */

struct fold {
    uint32_t group, node;
    uint64_t count;
};

static int by_group_node(const void *a, const void *b)
{
    const struct fold *x = a, *y = b;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

/* A function's name as a frame: ';' cannot split it, a control byte cannot end the line.
 * Made once per function. */
static char *frame_name(const char *s)
{
    char *d = strdup(s);
    if (!d)
        return NULL;
    for (char *c = d; *c; c++)
        if (*c == ';')
            *c = ':';
        else if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    return d;
}

/* Folded stacks are function paths: two call tree nodes (different addresses, so different
 * locations) with the same functions outermost to innermost are one line. fpath numbers those
 * paths: (parent path, function) -> path, 0 the empty path. */
struct fpaths {
    struct hmap idx;
    uint32_t *parent, *func;
    size_t n, cap;
};

static uint32_t fpath_child(struct fpaths *fp, uint32_t parent, uint32_t func)
{
    uint64_t key[2] = {parent, func};
    int is_new;
    uint64_t *slot = hmap_get(&fp->idx, key, &is_new);
    if (!slot)
        return UINT32_MAX;
    if (!is_new)
        return (uint32_t)*slot;
    if (fp->n == fp->cap) {
        size_t cap = fp->cap ? fp->cap * 2 : 1024;
        uint32_t *a = realloc(fp->parent, cap * sizeof *a);
        if (a)
            fp->parent = a;
        uint32_t *b = a ? realloc(fp->func, cap * sizeof *b) : NULL;
        if (!b)
            return UINT32_MAX;
        fp->func = b;
        fp->cap = cap;
    }
    fp->parent[fp->n] = parent;
    fp->func[fp->n] = func;
    *slot = fp->n;
    return (uint32_t)fp->n++;
}

/* The function path of call tree node nd, memoized per node in memo (UINT32_MAX: not yet). */
static uint32_t fpath_of(const struct profile *p, struct fpaths *fp, uint32_t *memo, uint32_t *path,
                         uint32_t nd)
{
    const struct symtab *st = &p->st;
    size_t depth = 0;
    while (nd != 0 && memo[nd] == UINT32_MAX && depth < MAX_DEPTH) {
        path[depth++] = nd;
        nd = p->nodes[nd].parent;
    }
    uint32_t cur = nd ? memo[nd] : 0;
    while (depth-- > 0) {
        const struct sym_loc *l = &st->locs[p->nodes[path[depth]].loc];
        for (uint32_t j = l->nlines; j-- > 0 && cur != UINT32_MAX;)
            cur = fpath_child(fp, cur, st->lines[l->first + j].func);
        if (cur == UINT32_MAX)
            return UINT32_MAX;
        memo[path[depth]] = cur;
    }
    return cur;
}

int export_folded(const struct profile *p, char *err, size_t errlen)
{
    const struct symtab *st = &p->st;
    struct hmap by = {0};
    hmap_init(&by, 2);
    struct fpaths fp = {0};
    hmap_init(&fp.idx, 2);
    struct fold *v = NULL;
    uint32_t *path = malloc(MAX_DEPTH * sizeof *path);
    uint32_t *memo = malloc((p->nnodes ? p->nnodes : 1) * sizeof *memo);
    char **names = calloc(st->nfuncs ? st->nfuncs : 1, sizeof *names);
    size_t *lens = malloc((st->nfuncs ? st->nfuncs : 1) * sizeof *lens);
    int rc = -1;
    if (!path || !memo || !names || !lens || fpath_child(&fp, 0, UINT32_MAX) != 0)
        goto oom;
    memset(memo, 0xff, (p->nnodes ? p->nnodes : 1) * sizeof *memo);
    for (size_t f = 0; f < st->nfuncs; f++) {
        if (!(names[f] = frame_name(symtab_str(st, st->funcs[f].name))))
            goto oom;
        lens[f] = strlen(names[f]);
    }
    /* Threads, processes and addresses merge: one count per (group, function path). */
    for (size_t i = 0; i < p->counts.cap; i++) {
        if (!p->counts.used[i])
            continue;
        const uint64_t *k = hmap_key(&p->counts, i);
        uint32_t fpn = fpath_of(p, &fp, memo, path, (uint32_t)k[1]);
        if (fpn == UINT32_MAX)
            goto oom;
        uint64_t key[2] = {k[0] & 0xffffffffu, fpn};
        uint64_t *c = hmap_get(&by, key, NULL);
        if (!c)
            goto oom;
        *c += p->counts.vals[i];
    }
    v = malloc((by.n ? by.n : 1) * sizeof *v);
    if (!v)
        goto oom;
    size_t n = 0;
    for (size_t i = 0; i < by.cap; i++)
        if (by.used[i]) {
            const uint64_t *k = hmap_key(&by, i);
            v[n++] = (struct fold){(uint32_t)k[0], (uint32_t)k[1], by.vals[i]};
        }
    if (n)
        qsort(v, n, sizeof *v, by_group_node);
    struct outfile of;
    if (outfile_open(&of, p->dir, RUN_FOLDED, err, errlen) != 0)
        goto out;
    for (size_t i = 0; i < n; i++) {
        fputs_unlocked(p->groups[v[i].group].name, of.f); /* [A-Za-z0-9_.-] or "(none)" */
        size_t depth = 0;
        for (uint32_t q = v[i].node; q != 0 && depth < MAX_DEPTH; q = fp.parent[q])
            path[depth++] = fp.func[q];
        while (depth-- > 0) {
            uint32_t fn = path[depth];
            fputc_unlocked(';', of.f);
            fwrite_unlocked(names[fn], 1, lens[fn], of.f);
        }
        fprintf(of.f, " %llu\n", (unsigned long long)v[i].count);
    }
    rc = outfile_commit(&of, err, errlen);
    goto out;
oom:
    snprintf(err, errlen, "%s/stacks.folded: out of memory", p->dir);
out:
    for (size_t f = 0; names && f < st->nfuncs; f++)
        free(names[f]);
    free(names);
    free(lens);
    free(path);
    free(memo);
    free(v);
    free(fp.parent);
    free(fp.func);
    hmap_free(&fp.idx);
    hmap_free(&by);
    return rc;
}
