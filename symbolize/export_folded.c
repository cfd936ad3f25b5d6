/* export_folded.c: OUT/stacks.folded, the folded-stack text FlameGraph, speedscope and inferno
 * read: one "phase;root;...;leaf count" line per distinct (phase group, stack), inline frames
 * as frames of their own (outermost first), counts in samples; the counts add up to
 * profile.json's samples. A name's ';' becomes ':' and control bytes '?', so a name can never
 * split a frame or a line. It must never write other than through outfile.c. */
#include "tables.h"
#include "runfolder.h"
#include "outfile.h"

#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 4096 /* physical frames are at most 256; a call tree path cannot be deeper */

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

int export_folded(const struct profile *p, char *err, size_t errlen)
{
    const struct symtab *st = &p->st;
    struct hmap by = {0};
    hmap_init(&by, 2);
    struct fold *v = NULL;
    uint32_t *path = malloc(MAX_DEPTH * sizeof *path);
    char **names = calloc(st->nfuncs ? st->nfuncs : 1, sizeof *names);
    size_t *lens = malloc((st->nfuncs ? st->nfuncs : 1) * sizeof *lens);
    int rc = -1;
    if (!path || !names || !lens)
        goto oom;
    for (size_t f = 0; f < st->nfuncs; f++) {
        if (!(names[f] = frame_name(symtab_str(st, st->funcs[f].name))))
            goto oom;
        lens[f] = strlen(names[f]);
    }
    for (size_t i = 0; i < p->counts.cap; i++) {
        if (!p->counts.used[i])
            continue;
        const uint64_t *k = hmap_key(&p->counts, i);
        uint64_t key[2] = {k[0] & 0xffffffffu, k[1]};
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
        for (uint32_t nd = v[i].node; nd != 0 && depth < MAX_DEPTH; nd = p->nodes[nd].parent)
            path[depth++] = p->nodes[nd].loc;
        while (depth-- > 0) {
            const struct sym_loc *l = &st->locs[path[depth]];
            for (uint32_t j = l->nlines; j-- > 0;) {
                uint32_t fn = st->lines[l->first + j].func;
                fputc_unlocked(';', of.f);
                fwrite_unlocked(names[fn], 1, lens[fn], of.f);
            }
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
    free(v);
    hmap_free(&by);
    return rc;
}
