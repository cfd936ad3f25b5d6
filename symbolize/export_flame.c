/* export_flame.c: OUT/flame.json, the call trees the flame graphs of report.html are drawn from
 * (docs/symbolize.md): per phase group, the distinct call paths as a flat list of nodes
 * [parent, frame, self samples] (a parent always listed before its children, -1 the root), over
 * one table of frames [name, module, "file:line", inline 0/1, truncated 0/1]. Frames are
 * functions, outermost first; a location's inline chain gives one frame per inlined function
 * (inline 1) inside the function it was inlined into (inline 0). A stack cut at its file's
 * max_frames has the "[truncated]" frame at its root (collect.c's stack rules, profile.h), the
 * one frame marked truncated 1: its outer frames are not known. The self samples add up to profile.json's samples per group. Flat, so a reader never
 * has to nest as deep as a stack. It must never write other than through outfile.c. */
#include "tables.h"
#include "runfolder.h"
#include "outfile.h"
#include "utf8.h"

#include <stdlib.h>
#include <string.h>

#define FLAME_MAX_DEPTH 4096 /* call tree nodes of one stack: at most 256 frames and the [truncated]
                             * mark, so the bound never cuts (group_tree's memo relies on it) */

struct fnode {
    uint32_t parent, frame;
    uint64_t self;
};

struct flame {
    uint32_t *frame_of;      /* func * 2 + inline -> frame id + 1 (0: none yet) */
    uint32_t *frame_func;    /* frame id -> func */
    unsigned char *frame_inl;
    size_t nframes, capframes;
    int oom;
};

static uint32_t frame_id(struct flame *fl, uint32_t func, int inl)
{
    uint32_t *slot = &fl->frame_of[(size_t)func * 2 + (inl != 0)];
    if (*slot)
        return *slot - 1;
    if (fl->nframes == fl->capframes) {
        size_t cap = fl->capframes ? fl->capframes * 2 : 256;
        uint32_t *f = realloc(fl->frame_func, cap * sizeof *f);
        if (f)
            fl->frame_func = f;
        unsigned char *i = realloc(fl->frame_inl, cap);
        if (i)
            fl->frame_inl = i;
        if (!f || !i) {
            fl->oom = 1;
            return 0;
        }
        fl->capframes = cap;
    }
    fl->frame_func[fl->nframes] = func;
    fl->frame_inl[fl->nframes] = (unsigned char)inl;
    *slot = (uint32_t)fl->nframes + 1;
    return (uint32_t)fl->nframes++;
}

/* A JSON string: valid UTF-8, quotes, backslashes and control bytes escaped, '<' as \u003c so
 * the text can never close an HTML script element it is embedded in. */
static void json_str(FILE *f, const char *s)
{
    char buf[8192];
    s = utf8_clean(s, buf, sizeof buf);
    fputc_unlocked('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20 || c == '<' || c == '>' || c == '&')
            fprintf(f, "\\u%04x", c);
        else
            fputc_unlocked(c, f);
    }
    fputc_unlocked('"', f);
}

struct gnodes {
    struct fnode *v;
    size_t n, cap;
    struct idmap idx; /* parent << 32 | frame -> node (the root, node 0, is nobody's child) */
};

static uint32_t gchild(struct gnodes *g, struct flame *fl, uint32_t parent, uint32_t frame)
{
    uint64_t key = (uint64_t)parent << 32 | frame;
    uint32_t node = idmap_find(&g->idx, key);
    if (node)
        return node;
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 1024;
        struct fnode *v = realloc(g->v, cap * sizeof *v);
        if (!v) {
            fl->oom = 1;
            return 0;
        }
        g->v = v;
        g->cap = cap;
    }
    if (g->n >= UINT32_MAX || idmap_put(&g->idx, key, (uint32_t)g->n) != 0) {
        fl->oom = 1;
        return 0;
    }
    g->v[g->n] = (struct fnode){parent, frame, 0};
    return (uint32_t)g->n++;
}

/* Adds the counts of group g: every (g, thread, stack) counter walked root first. Node 0 of
 * gn is the root (not written). memo (one slot per call tree node, zeroed here) remembers the
 * flame node a call tree node came to in this group: a node's flame node depends only on its path,
 * so a stack walks up only to its first ancestor already placed and down from there, making the
 * same nodes and frames in the same order as walking every stack from the root would. */
static void group_tree(const struct profile *p, struct flame *fl, uint32_t g, struct gnodes *gn,
                       uint32_t *path, uint32_t *memo)
{
    const struct symtab *st = &p->st;
    idmap_free(&gn->idx);
    memset(memo, 0, p->nnodes * sizeof *memo);
    gn->v[0] = (struct fnode){UINT32_MAX, UINT32_MAX, 0}; /* the root */
    gn->n = 1;
    for (size_t i = 0; i < p->counts.cap && !fl->oom; i++) {
        if (!p->counts.used[i])
            continue;
        const uint64_t *k = hmap_key(&p->counts, i);
        if ((uint32_t)(k[0] & 0xffffffffu) != g)
            continue;
        size_t depth = 0;
        uint32_t nd = (uint32_t)k[1];
        for (; nd != 0 && !memo[nd] && depth < FLAME_MAX_DEPTH; nd = p->nodes[nd].parent)
            path[depth++] = nd;
        uint32_t cur = nd != 0 && depth < FLAME_MAX_DEPTH ? memo[nd] : 0;
        while (depth-- > 0 && !fl->oom) {
            const struct sym_loc *l = &st->locs[p->nodes[path[depth]].loc];
            for (uint32_t j = l->nlines; j-- > 0;)
                cur = gchild(gn, fl, cur, frame_id(fl, st->lines[l->first + j].func, j + 1 < l->nlines));
            memo[path[depth]] = cur;
        }
        if (!fl->oom)
            gn->v[cur].self += p->counts.vals[i];
    }
}

static void write_frames(const struct profile *p, const struct flame *fl, FILE *f)
{
    const struct symtab *st = &p->st;
    fputs("\"frames\":[", f);
    for (size_t i = 0; i < fl->nframes; i++) {
        fputs(i ? ",\n[" : "\n[", f);
        uint32_t fn = fl->frame_func[i];
        const struct sym_function *sf = &st->funcs[fn];
        const char *name = symtab_str(st, sf->name);
        json_str(f, name);
        fputc(',', f);
        json_str(f, symtab_str(st, st->mods[sf->module].name));
        fputc(',', f);
        char src[4200] = "";
        if (sf->file && sf->line > 0)
            snprintf(src, sizeof src, "%s:%d", symtab_str(st, sf->file), sf->line);
        else if (sf->file)
            snprintf(src, sizeof src, "%s", symtab_str(st, sf->file));
        json_str(f, src);
        fprintf(f, ",%d,%d]", fl->frame_inl[i], strcmp(name, PROF_TRUNCATED) == 0);
    }
    fputs("]", f);
}

int export_flame(const struct profile *p, char *err, size_t errlen)
{
    struct flame fl = {0};
    fl.frame_of = calloc(p->st.nfuncs ? 2 * p->st.nfuncs : 1, sizeof *fl.frame_of);
    struct gnodes gn = {0};
    gn.cap = 1024;
    gn.v = malloc(gn.cap * sizeof *gn.v);
    uint32_t *path = malloc(FLAME_MAX_DEPTH * sizeof *path);
    uint32_t *memo = malloc((p->nnodes ? p->nnodes : 1) * sizeof *memo);
    char *groups_text = NULL;
    size_t groups_len = 0;
    FILE *gf = open_memstream(&groups_text, &groups_len);
    int rc = -1;
    if (!path || !memo || !gf || !fl.frame_of || !gn.v)
        goto oom;
    /* The groups first (they name the frames), into memory; then the file, frames before them. */
    for (uint32_t g = 0; g < p->ngroups && !fl.oom; g++) {
        group_tree(p, &fl, g, &gn, path, memo);
        uint64_t total = 0;
        for (size_t i = 1; i < gn.n; i++)
            total += gn.v[i].self;
        if (!total)
            continue;
        fputs(ftell(gf) ? ",\n{\"name\":" : "\n{\"name\":", gf);
        json_str(gf, p->groups[g].name);
        fprintf(gf, ",\"samples\":%llu,\"nodes\":[", (unsigned long long)total);
        for (size_t i = 1; i < gn.n; i++) {
            /* node i is written as i - 1; the root's children have parent -1 */
            long parent = gn.v[i].parent == 0 ? -1 : (long)gn.v[i].parent - 1;
            fprintf(gf, "%s%ld,%u,%llu", i > 1 ? "," : "", parent, gn.v[i].frame,
                    (unsigned long long)gn.v[i].self);
        }
        fputs("]}", gf);
    }
    if (fl.oom || fflush(gf) != 0)
        goto oom;
    fclose(gf);
    gf = NULL;
    struct outfile of;
    if (outfile_open(&of, p->dir, RUN_FLAME, err, errlen) != 0)
        goto out;
    fputs("{\"schema\":\"perfscope-flame/1\",\n", of.f);
    write_frames(p, &fl, of.f);
    fputs(",\n\"groups\":[", of.f);
    fwrite(groups_text, 1, groups_len, of.f);
    fputs("]}\n", of.f);
    rc = outfile_commit(&of, err, errlen);
    goto out;
oom:
    snprintf(err, errlen, "%s/%s: out of memory", p->dir, RUN_FLAME);
out:
    if (gf)
        fclose(gf);
    free(groups_text);
    free(path);
    free(memo);
    free(gn.v);
    idmap_free(&gn.idx);
    free(fl.frame_of);
    free(fl.frame_func);
    free(fl.frame_inl);
    return rc;
}
