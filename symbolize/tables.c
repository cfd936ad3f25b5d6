/* tables.c: the per-phase-group tables of profile.json (docs/symbolize.md; the reference harness's
 * summarize() and more). Everything is derived from the (group, thread, stack) counters of the
 * profile, so the work here grows with distinct stacks, not with samples.
 *
 * Definitions (docs/symbolize.md):
 *   share      samples / the group's samples (as the reference); cpu_s: samples x the period of
 *              each sample's file;
 *   self       the innermost frame of the leaf (an inlined function is a frame of its own);
 *   inclusive  every function anywhere in the stack, counted once per sample;
 *   threads    distinct (process, thread) pairs with samples in the row; busiest_thread_s: the
 *              most CPU any one of them spent there; pct_of_wall_on_busiest_thread: that over the
 *              group's wall time (absent when the group has none).
 * It must never write profile.json other than through outfile.c. */
#include "tables.h"
#include "runfolder.h"
#include "outfile.h"
#include "utf8.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MODULES_SHOWN 8
#define THREADS_SHOWN 6
#define BUSIEST_SHOWN 8

struct row {
    uint32_t group, func;
    uint64_t samples;
    double cpu_s, busiest_s;
    uint32_t threads;
    uint64_t hot_count;
    uint32_t hot_file;
    int hot_line;
};

struct rows {
    struct row *v;
    size_t n, cap;
    struct hmap idx; /* (group, func) -> row */
};

struct agg {
    struct rows self, incl;     /* (group, func) rows, filled per (group, thread) */
    struct hmap hot;            /* (group, func, file << 32 | line) -> samples */
    struct hmap mods;           /* (group, module) -> samples */
    struct gthr {
        uint32_t group, thread;
        uint64_t samples;
    } *gthr;                    /* per (group, thread), sorted by group */
    size_t ngthr;
    uint64_t *mod_total;        /* per module: samples with the leaf there */
    uint64_t *g_samples;
    double *g_cpu;
    int oom;
};

/* Every string from the run folder or a symbol table goes in through here: valid UTF-8 only. */
static void add_str(cJSON *o, const char *key, const char *v)
{
    char buf[8192];
    cJSON_AddStringToObject(o, key, utf8_clean(v, buf, sizeof buf));
}

static double r4(double x) { return round(x * 1e4) / 1e4; }
static double r3(double x) { return round(x * 1e3) / 1e3; }
static double r1(double x) { return round(x * 10) / 10; }

static void add(struct agg *a, struct hmap *m, uint64_t k0, uint64_t k1, uint64_t k2, uint64_t c)
{
    uint64_t key[3] = {k0, k1, k2};
    uint64_t *v = hmap_get(m, key, NULL);
    if (!v)
        a->oom = 1;
    else
        *v += c;
}

/* c samples of thread t in (group g, func f): the row's totals, threads and busiest thread. */
static void row_add(const struct profile *p, struct agg *a, struct rows *r, uint32_t g, uint32_t f,
                    uint32_t t, uint64_t c)
{
    uint64_t key[2] = {g, f};
    int is_new;
    uint64_t *slot = hmap_get(&r->idx, key, &is_new);
    if (!slot) {
        a->oom = 1;
        return;
    }
    if (is_new) {
        if (r->n == r->cap) {
            size_t cap = r->cap ? r->cap * 2 : 256;
            struct row *v = realloc(r->v, cap * sizeof *v);
            if (!v) {
                a->oom = 1;
                return;
            }
            r->v = v;
            r->cap = cap;
        }
        memset(&r->v[r->n], 0, sizeof r->v[r->n]);
        r->v[r->n].group = g;
        r->v[r->n].func = f;
        *slot = r->n++;
    }
    struct row *row = &r->v[*slot];
    double cpu = (double)c * prof_thread_period(p, t);
    row->samples += c;
    row->cpu_s += cpu;
    row->threads++;
    if (cpu > row->busiest_s)
        row->busiest_s = cpu;
}

struct key {
    uint32_t group, thread, node;
    uint64_t count;
};

static int by_group_thread(const void *x, const void *y)
{
    const struct key *a = x, *b = y;
    if (a->group != b->group)
        return a->group < b->group ? -1 : 1;
    if (a->thread != b->thread)
        return a->thread < b->thread ? -1 : 1;
    return a->node < b->node ? -1 : a->node > b->node;
}

/* Everything the tables need, in one pass over the (group, thread, stack) counters sorted by
 * (group, thread): within a block, self and inclusive samples per function go into dense arrays
 * (a stack walk costs array increments, not hash lookups), flushed into rows at the block's end. */
static int aggregate(const struct profile *p, struct agg *a)
{
    const struct symtab *st = &p->st;
    hmap_init(&a->self.idx, 2);
    hmap_init(&a->incl.idx, 2);
    hmap_init(&a->hot, 3);
    hmap_init(&a->mods, 2);
    size_t nk = p->counts.n, nf = st->nfuncs ? st->nfuncs : 1;
    struct key *keys = malloc((nk ? nk : 1) * sizeof *keys);
    uint64_t *self = calloc(nf, sizeof *self), *incl = calloc(nf, sizeof *incl);
    uint32_t *stamp = calloc(nf, sizeof *stamp), *touched = malloc(nf * sizeof *touched);
    a->gthr = malloc((nk ? nk : 1) * sizeof *a->gthr);
    a->mod_total = calloc(st->nmods ? st->nmods : 1, sizeof *a->mod_total);
    a->g_samples = calloc(p->ngroups, sizeof *a->g_samples);
    a->g_cpu = calloc(p->ngroups, sizeof *a->g_cpu);
    int rc = -1;
    if (!keys || !self || !incl || !stamp || !touched || !a->gthr || !a->mod_total ||
        !a->g_samples || !a->g_cpu)
        goto out;
    size_t n = 0;
    for (size_t i = 0; i < p->counts.cap; i++) {
        if (!p->counts.used[i])
            continue;
        const uint64_t *k = hmap_key(&p->counts, i);
        keys[n++] = (struct key){(uint32_t)(k[0] & 0xffffffffu), (uint32_t)(k[0] >> 32),
                                 (uint32_t)k[1], p->counts.vals[i]};
    }
    if (n)
        qsort(keys, n, sizeof *keys, by_group_thread);
    uint32_t gen = 0; /* stamp[f] == gen: f already counted for the current stack */
    size_t ntouched = 0;
    for (size_t i = 0; i < n && !a->oom; i++) {
        const struct key *k = &keys[i];
        uint32_t g = k->group, t = k->thread;
        uint64_t c = k->count;
        if (!a->ngthr || a->gthr[a->ngthr - 1].group != g || a->gthr[a->ngthr - 1].thread != t)
            a->gthr[a->ngthr++] = (struct gthr){g, t, 0};
        a->gthr[a->ngthr - 1].samples += c;
        a->g_samples[g] += c;
        a->g_cpu[g] += (double)c * prof_thread_period(p, t);
        const struct sym_loc *leaf = &st->locs[p->nodes[k->node].loc];
        const struct sym_line *ll = &st->lines[leaf->first];
        add(a, &a->hot, g, ll->func, (uint64_t)ll->file << 32 | (uint32_t)ll->line, c);
        add(a, &a->mods, g, leaf->module, 0, c);
        a->mod_total[leaf->module] += c;
        if (!self[ll->func] && !incl[ll->func])
            touched[ntouched++] = ll->func;
        self[ll->func] += c;
        if (++gen == 0) {
            memset(stamp, 0, nf * sizeof *stamp);
            gen = 1;
        }
        for (uint32_t nd = k->node; nd != 0; nd = p->nodes[nd].parent) {
            const struct sym_loc *l = &st->locs[p->nodes[nd].loc];
            for (uint32_t j = 0; j < l->nlines; j++) {
                uint32_t f = st->lines[l->first + j].func;
                if (stamp[f] == gen)
                    continue;
                stamp[f] = gen;
                if (!self[f] && !incl[f])
                    touched[ntouched++] = f;
                incl[f] += c;
            }
        }
        if (i + 1 == n || keys[i + 1].group != g || keys[i + 1].thread != t) {
            for (size_t j = 0; j < ntouched; j++) {
                uint32_t f = touched[j];
                if (self[f])
                    row_add(p, a, &a->self, g, f, t, self[f]);
                if (incl[f])
                    row_add(p, a, &a->incl, g, f, t, incl[f]);
                self[f] = incl[f] = 0;
            }
            ntouched = 0;
        }
    }
    rc = a->oom ? -1 : 0;
out:
    free(keys);
    free(self);
    free(incl);
    free(stamp);
    free(touched);
    return rc;
}

static void rows_free(struct rows *r)
{
    free(r->v);
    hmap_free(&r->idx);
}

static void agg_free(struct agg *a)
{
    rows_free(&a->self);
    rows_free(&a->incl);
    hmap_free(&a->hot);
    hmap_free(&a->mods);
    free(a->gthr);
    free(a->mod_total);
    free(a->g_samples);
    free(a->g_cpu);
}

static const struct symtab *sort_st;

static int by_group_samples(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    if (x->samples != y->samples)
        return x->samples > y->samples ? -1 : 1;
    return strcmp(symtab_str(sort_st, sort_st->funcs[x->func].name),
                  symtab_str(sort_st, sort_st->funcs[y->func].name));
}

static void add_source(cJSON *o, const char *key, const struct symtab *st, uint32_t file, int line)
{
    if (!file)
        return;
    char buf[4200];
    if (line > 0)
        snprintf(buf, sizeof buf, "%s:%d", symtab_str(st, file), line);
    else
        snprintf(buf, sizeof buf, "%s", symtab_str(st, file));
    add_str(o, key, buf);
}

static cJSON *row_json(const struct profile *p, const struct row *r, uint64_t n, int self)
{
    const struct symtab *st = &p->st;
    const struct sym_function *f = &st->funcs[r->func];
    const struct prof_group *g = &p->groups[r->group];
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    add_str(o, "name", symtab_str(st, f->name));
    cJSON_AddNumberToObject(o, "share", r4((double)r->samples / (double)(n ? n : 1)));
    cJSON_AddNumberToObject(o, "cpu_s", r3(r->cpu_s));
    cJSON_AddNumberToObject(o, "samples", (double)r->samples);
    cJSON_AddNumberToObject(o, "threads", r->threads);
    cJSON_AddNumberToObject(o, "busiest_thread_s", r3(r->busiest_s));
    if (g->wall_s > 0)
        cJSON_AddNumberToObject(o, "pct_of_wall_on_busiest_thread",
                                r1(100.0 * r->busiest_s / g->wall_s));
    add_str(o, "module", symtab_str(st, st->mods[f->module].name));
    add_source(o, "source", st, f->file, f->line);
    if (self)
        add_source(o, "hot_line", st, r->hot_file, r->hot_line);
    if (f->system_name != f->name)
        add_str(o, "system_name", symtab_str(st, f->system_name));
    return o;
}

/* Rows of group g (sorted, starting at *pos) into an array, top of them. */
static cJSON *rows_json(const struct profile *p, const struct rows *r, size_t *pos, uint32_t g,
                        uint64_t n, int top, int self)
{
    cJSON *arr = cJSON_CreateArray();
    int k = 0;
    while (*pos < r->n && r->v[*pos].group < g)
        (*pos)++;
    for (; *pos < r->n && r->v[*pos].group == g; (*pos)++)
        if (arr && k++ < top)
            cJSON_AddItemToArray(arr, row_json(p, &r->v[*pos], n, self));
    return arr;
}

struct named_count {
    const char *name;
    uint64_t samples;
    double cpu_s;
    uint32_t thread;
};

static int by_count_desc(const void *a, const void *b)
{
    const struct named_count *x = a, *y = b;
    if (x->samples != y->samples)
        return x->samples > y->samples ? -1 : 1;
    return strcmp(x->name, y->name);
}

static void thread_label(const char *comm, char *out, size_t len)
{
    size_t i = 0;
    for (; comm[i] && i + 1 < len; i++)
        out[i] = comm[i] >= '0' && comm[i] <= '9' ? '#' : comm[i];
    out[i] = '\0';
}

/* modules, threads and busiest_threads of group g. */
static void group_lists(const struct profile *p, const struct agg *a, uint32_t g, cJSON *o,
                        struct named_count *tmp)
{
    const struct symtab *st = &p->st;
    uint64_t n = a->g_samples[g] ? a->g_samples[g] : 1;
    size_t k = 0;
    for (size_t i = 0; i < a->mods.cap; i++) {
        const uint64_t *key = hmap_key(&a->mods, i);
        if (a->mods.used[i] && key[0] == g)
            tmp[k++] = (struct named_count){symtab_str(st, st->mods[key[1]].name),
                                            a->mods.vals[i], 0, 0};
    }
    /* The same basename from two paths is one row, as the reference's module column. */
    qsort(tmp, k, sizeof *tmp, by_count_desc);
    cJSON *mods = cJSON_AddArrayToObject(o, "modules");
    for (size_t i = 0, shown = 0; i < k && shown < MODULES_SHOWN; i++, shown++) {
        cJSON *m = cJSON_CreateObject();
        add_str(m, "name", tmp[i].name);
        cJSON_AddNumberToObject(m, "share", r4((double)tmp[i].samples / (double)n));
        cJSON_AddItemToArray(mods, m);
    }
    /* threads by label (digits as '#'), then busiest threads by CPU. */
    k = 0;
    size_t nb = 0;
    struct named_count *busy = tmp + p->nthr;
    char (*labels)[17] = calloc(p->nthr ? p->nthr : 1, sizeof *labels);
    if (!labels)
        return;
    for (size_t i = 0; i < a->ngthr; i++) {
        if (a->gthr[i].group != g)
            continue;
        uint32_t t = a->gthr[i].thread;
        uint64_t c = a->gthr[i].samples;
        busy[nb++] = (struct named_count){p->thr[t].comm, c, (double)c * prof_thread_period(p, t), t};
        char lab[17];
        thread_label(p->thr[t].comm, lab, sizeof lab);
        size_t j = 0;
        while (j < k && strcmp(labels[j], lab) != 0)
            j++;
        if (j == k) {
            memcpy(labels[k], lab, sizeof lab);
            tmp[k++] = (struct named_count){labels[j], 0, 0, 0};
        }
        tmp[j].samples += c;
    }
    qsort(tmp, k, sizeof *tmp, by_count_desc);
    cJSON *th = cJSON_AddArrayToObject(o, "threads");
    for (size_t i = 0; i < k && i < THREADS_SHOWN; i++) {
        cJSON *m = cJSON_CreateObject();
        add_str(m, "name", tmp[i].name);
        cJSON_AddNumberToObject(m, "share", r4((double)tmp[i].samples / (double)n));
        cJSON_AddItemToArray(th, m);
    }
    qsort(busy, nb, sizeof *busy, by_count_desc);
    cJSON *bt = cJSON_AddArrayToObject(o, "busiest_threads");
    double wall = p->groups[g].wall_s;
    for (size_t i = 0; i < nb && i < BUSIEST_SHOWN; i++) {
        const struct prof_thread *t = &p->thr[busy[i].thread];
        cJSON *m = cJSON_CreateObject();
        cJSON_AddNumberToObject(m, "tid", t->tid);
        cJSON_AddNumberToObject(m, "pid", (double)p->img[t->image].pid);
        add_str(m, "name", t->comm);
        cJSON_AddNumberToObject(m, "cpu_s", r3(busy[i].cpu_s));
        if (wall > 0)
            cJSON_AddNumberToObject(m, "pct_of_wall", r1(100.0 * busy[i].cpu_s / wall));
        cJSON_AddItemToArray(bt, m);
    }
    free(labels);
}

static void add_hot_lines(const struct agg *a, struct rows *self)
{
    for (size_t i = 0; i < a->hot.cap; i++) {
        if (!a->hot.used[i])
            continue;
        const uint64_t *k = hmap_key(&a->hot, i);
        uint64_t key[2] = {k[0], k[1]};
        uint64_t *slot = hmap_find(&self->idx, key);
        if (!slot)
            continue;
        struct row *r = &self->v[*slot];
        uint32_t file = (uint32_t)(k[2] >> 32);
        if (file && a->hot.vals[i] > r->hot_count) {
            r->hot_count = a->hot.vals[i];
            r->hot_file = file;
            r->hot_line = (int)(uint32_t)k[2];
        }
    }
}

static cJSON *processes_json(const struct profile *p)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; arr && i < p->nimg; i++) {
        const struct prof_image *img = &p->img[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "pid", (double)img->pid);
        cJSON_AddNumberToObject(o, "image", img->gen);
        add_str(o, "file", img->file);
        if (img->exe)
            add_str(o, "exe", img->exe);
        cJSON_AddBoolToObject(o, "usable", img->usable);
        cJSON_AddNumberToObject(o, "samples", (double)img->samples);
        cJSON_AddNumberToObject(o, "dropped", (double)img->hdr.dropped);
        cJSON_AddNumberToObject(o, "hz", (double)img->hdr.hz);
        cJSON_AddBoolToObject(o, "maps", img->maps != NULL);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

static cJSON *modules_json(const struct profile *p, const struct agg *a)
{
    const struct symtab *st = &p->st;
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; arr && i < st->nmods; i++) {
        const struct sym_module *m = &st->mods[i];
        uint64_t c = a->mod_total[i];
        if ((i == 0 && !c) || m->shim)
            continue; /* the built-in [unknown], never seen; the shim's frames are left out */
        cJSON *o = cJSON_CreateObject();
        add_str(o, "name", symtab_str(st, m->name));
        if (m->kind == SYM_FILE) {
            add_str(o, "path", symtab_str(st, m->path));
            if (*m->build_id)
                add_str(o, "build_id", m->build_id);
        }
        add_str(o, "kind", m->kind == SYM_FILE ? "file"
                                           : m->kind == SYM_JIT ? "jit" : "pseudo");
        add_str(o, "status", symtab_status_name(m->status));
        if (*m->why)
            add_str(o, "why", m->why);
        if (m->kind == SYM_FILE && m->status == SYM_OK)
            add_str(o, "checked", m->checked_mtime ? "inode, mtime, build id of the executable"
                                                                   : "inode (no run start time: mtime not compared)");
        cJSON_AddNumberToObject(o, "self_samples", (double)c);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

int tables_write(const struct profile *p, int top, char *err, size_t errlen)
{
    struct agg a;
    memset(&a, 0, sizeof a);
    struct named_count *tmp = NULL;
    cJSON *root = NULL;
    char *text = NULL;
    int rc = -1;
    if (top <= 0)
        top = 50;
    size_t ntmp = p->st.nmods + 2 * p->nthr + 1;
    tmp = malloc(ntmp * sizeof *tmp);
    if (!tmp || aggregate(p, &a) != 0) {
        snprintf(err, errlen, "%s: out of memory building the tables", p->dir);
        goto out;
    }
    struct rows *self = &a.self, *incl = &a.incl;
    add_hot_lines(&a, self);
    sort_st = &p->st;
    if (self->n)
        qsort(self->v, self->n, sizeof *self->v, by_group_samples);
    if (incl->n)
        qsort(incl->v, incl->n, sizeof *incl->v, by_group_samples);

    root = cJSON_CreateObject();
    add_str(root, "schema", "perfscope-profile/1");
    cJSON_AddNumberToObject(root, "samples", (double)p->samples);
    cJSON_AddNumberToObject(root, "dropped", (double)p->dropped);
    cJSON_AddNumberToObject(root, "empty_stacks", (double)p->empty);
    cJSON_AddNumberToObject(root, "period_s", p->period_s);
    cJSON_AddBoolToObject(root, "mixed_rates", p->mixed_hz);
    cJSON_AddNumberToObject(root, "cpu_s", 0);
    cJSON *groups = cJSON_AddObjectToObject(root, "groups");
    double total_cpu = 0;
    size_t ps = 0, pi = 0;
    for (uint32_t g = 0; g < p->ngroups; g++) {
        const struct prof_group *pg = &p->groups[g];
        uint64_t n = a.g_samples[g];
        if (g == prof_none_group(p) && n == 0)
            continue;
        total_cpu += a.g_cpu[g];
        cJSON *o = cJSON_AddObjectToObject(groups, pg->name);
        cJSON_AddNumberToObject(o, "samples", (double)n);
        cJSON_AddNumberToObject(o, "cpu_s", r3(a.g_cpu[g]));
        cJSON_AddNumberToObject(o, "wall_s", r3(pg->wall_s));
        cJSON_AddNumberToObject(o, "occurrences", pg->occurrences);
        if (pg->tokens >= 0)
            cJSON_AddNumberToObject(o, "tokens", (double)pg->tokens);
        group_lists(p, &a, g, o, tmp);
        cJSON_AddItemToObject(o, "self", rows_json(p, self, &ps, g, n, top, 1));
        cJSON_AddItemToObject(o, "inclusive", rows_json(p, incl, &pi, g, n, top, 0));
    }
    cJSON_ReplaceItemInObject(root, "cpu_s", cJSON_CreateNumber(r3(total_cpu)));
    cJSON_AddItemToObject(root, "processes", processes_json(p));
    cJSON_AddItemToObject(root, "modules", modules_json(p, &a));
    cJSON_AddItemToObject(root, "warnings", cJSON_Duplicate(p->warnings, 1));
    text = outfile_json_text(root);
    if (!text) {
        snprintf(err, errlen, "%s: out of memory printing profile.json", p->dir);
        goto out;
    }
    struct outfile of;
    if (outfile_open(&of, p->dir, RUN_PROFILE, err, errlen) != 0)
        goto out;
    fputs(text, of.f);
    fputc('\n', of.f);
    rc = outfile_commit(&of, err, errlen);
out:
    free(text);
    cJSON_Delete(root);
    free(tmp);
    agg_free(&a);
    return rc;
}
