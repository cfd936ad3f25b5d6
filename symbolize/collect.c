/* collect.c: a run folder into a struct profile (see profile.h): every cpuprof.*.bin streamed
 * once through samples.c, its frames resolved through the maps snapshot in force (maps.c), the
 * process's perf map (perfmap.c) and the files' symbols (symtab.c), each sample counted under
 * its phase group (phases.c), thread and stack.
 *
 * It must never hold more than one sample record, never resolve a raw stack it has already
 * resolved (the stack cache), and never stop on one bad file when others are usable. */
#include "profile.h"
#include "procline.h"
#include "phasegroups.h"
#include "runextent.h"
#include "runfolder.h"
#include "jsonl.h"
#include "maps.h"
#include "perfmap.h"
#include "textfile.h"
#include "utf8.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define STACK_CACHE_WORDS (8u << 20) /* 64 MiB of cached raw stacks at most */

void prof_warn(struct profile *p, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    utf8_sanitize(line);
    p->nwarnings++;
    if (p->warnings && cJSON_GetArraySize(p->warnings) < PROF_WARNINGS_KEPT)
        cJSON_AddItemToArray(p->warnings, cJSON_CreateString(line));
}

/* ---- meta.json and procs.jsonl (both optional) ---- */

static void read_meta(struct profile *p)
{
    char err[600];
    if (runmeta_load(p->dir, &p->meta, err, sizeof err) != 0)
        prof_warn(p, "%s, ignored", err);
    p->st.exe_path = p->meta.executable;
    p->st.exe_build_id = p->meta.build_id;
}

static int take_proc(cJSON *o, size_t lineno, void *arg)
{
    (void)lineno;
    struct profile *p = arg;
    struct proc_line pl;
    if (procline_read(o, &pl) != 0 || !pl.samples || !pl.exe)
        return 0;
    for (size_t i = 0; i < p->nimg; i++) {
        if (strcmp(p->img[i].file, pl.samples) != 0 || p->img[i].exe)
            continue;
        p->img[i].exe = strdup(pl.exe);
        if (!p->img[i].exe)
            p->oom = 1;
    }
    return 0;
}

static void read_procs(struct profile *p)
{
    char path[PATH_MAX], err[512];
    struct stat sb;
    if (runfolder_path(path, sizeof path, p->dir, RUN_PROCS, NULL, 0) != 0 || stat(path, &sb) != 0)
        return;
    struct jsonl_stats js;
    if (jsonl_foreach(path, take_proc, p, &js, err, sizeof err) != 0)
        prof_warn(p, "%s", err);
    else if (js.bad)
        prof_warn(p, "%s: %zu bad lines skipped (first: line %zu)", path, js.bad,
                  js.first_bad_line);
}

/* ---- phases ---- */

static int read_phases(struct profile *p)
{
    char path[PATH_MAX], err[512];
    struct stat sb;
    if (runfolder_path(path, sizeof path, p->dir, RUN_PHASES, NULL, 0) == 0 && stat(path, &sb) == 0) {
        if (phases_load(path, &p->phases, err, sizeof err) != 0) {
            prof_warn(p, "%s (every sample counted under (none))", err);
            p->phases = NULL;
        } else if (p->phases->bad_lines) {
            prof_warn(p, "%s: %zu bad lines skipped (first: line %zu)", path,
                      p->phases->bad_lines, p->phases->first_bad_line);
        }
    }
    size_t ng = p->phases ? p->phases->ngroups : 0;
    p->groups = calloc(ng + 1, sizeof *p->groups);
    if (!p->groups)
        return -1;
    p->ngroups = ng + 1;
    for (size_t g = 0; g < ng; g++) {
        p->groups[g].name = p->phases->groups[g];
        p->groups[g].tokens = -1;
    }
    p->groups[ng].name = PHASES_NONE;
    p->groups[ng].tokens = -1;
    return 0;
}

/* Occurrences, wall time and tokens per group (format/phasegroups.c), once the run's extent is
 * known (format/runextent.c: it also ends the phases that never ended). */
static int group_walls(struct profile *p)
{
    struct run_extent ext;
    run_extent_find(p->dir, &p->meta, p->first_ns, p->last_ns, p->phases, &ext);
    uint64_t start = ext.start_ns, end = ext.end_ns;
    struct phases *ph = p->phases;
    if (ph) {
        struct group_index gi;
        if (group_index_build(ph, &gi) != 0)
            return -1;
        for (size_t g = 0; g < ph->ngroups; g++) {
            struct group_basic b;
            group_basic(ph, &gi, (int)g, &b);
            p->groups[g].wall_s = b.wall_s;
            p->groups[g].occurrences = (unsigned)b.occurrences;
            p->groups[g].tokens = b.tokens;
        }
        group_index_free(&gi);
    }
    /* (none): the run's time when no phase is open. */
    double none = 0;
    if (end > start) {
        uint64_t t = start;
        int cur = -1;
        size_t ns = ph ? ph->nspans : 0;
        for (size_t i = 0; i <= ns; i++) {
            uint64_t next = i < ns ? ph->spans[i].start_ns : end;
            if (next > end)
                next = end;
            if (next > t) {
                if (cur < 0)
                    none += (double)(next - t) * 1e-9;
                t = next;
            }
            if (i < ns)
                cur = ph->spans[i].phase;
        }
    }
    p->groups[prof_none_group(p)].wall_s = none;
    return 0;
}

/* ---- threads, call tree ---- */

static uint32_t thread_of(struct profile *p, uint32_t image, const struct sample *s)
{
    uint64_t key[1] = {(uint64_t)image << 32 | s->tid};
    int is_new;
    uint64_t *slot = hmap_get(&p->thr_idx, key, &is_new);
    if (!slot) {
        p->oom = 1;
        return 0;
    }
    if (!is_new) {
        struct prof_thread *t = &p->thr[*slot];
        if (s->comm[0] && strcmp(t->comm, s->comm) != 0)
            memcpy(t->comm, s->comm, sizeof t->comm);
        return (uint32_t)*slot;
    }
    if (p->nthr == p->capthr) {
        size_t cap = p->capthr ? p->capthr * 2 : 64;
        struct prof_thread *v = realloc(p->thr, cap * sizeof *v);
        if (!v) {
            p->oom = 1;
            return 0;
        }
        p->thr = v;
        p->capthr = cap;
    }
    struct prof_thread *t = &p->thr[p->nthr];
    t->image = image;
    t->tid = s->tid;
    memcpy(t->comm, s->comm, sizeof t->comm);
    *slot = p->nthr;
    return (uint32_t)p->nthr++;
}

static uint32_t child_node(struct profile *p, uint32_t parent, uint32_t loc)
{
    uint64_t key[2] = {parent, loc};
    int is_new;
    uint64_t *slot = hmap_get(&p->node_idx, key, &is_new);
    if (!slot) {
        p->oom = 1;
        return 0;
    }
    if (!is_new)
        return (uint32_t)*slot;
    if (p->nnodes == p->capnodes) {
        size_t cap = p->capnodes * 2;
        struct prof_node *v = realloc(p->nodes, cap * sizeof *v);
        if (!v) {
            p->oom = 1;
            return 0;
        }
        p->nodes = v;
        p->capnodes = cap;
    }
    p->nodes[p->nnodes] = (struct prof_node){parent, loc};
    *slot = p->nnodes;
    return (uint32_t)p->nnodes++;
}

/* ---- frame resolution ---- */

static int is_anonymous(const char *path)
{
    return !path || !*path || strncmp(path, "[anon", 5) == 0 || strncmp(path, "//anon", 6) == 0;
}

static void load_perfmap(struct profile *p, struct prof_image *img)
{
    img->perfmap_tried = 1;
    char name[64], path[PATH_MAX], err[512];
    snprintf(name, sizeof name, "perf-%ld.map", img->pid);
    /* A copy in the run folder first (the /tmp one may be gone), then /tmp. */
    if (runfolder_path(path, sizeof path, p->dir, name, NULL, 0) != 0)
        return;
    struct stat sb;
    if (stat(path, &sb) != 0) {
        snprintf(path, sizeof path, "/tmp/%s", name);
        if (stat(path, &sb) != 0)
            return;
        /* A /tmp map older than the run belongs to an earlier process with this pid. */
        double mt = (double)sb.st_mtim.tv_sec + (double)sb.st_mtim.tv_nsec * 1e-9;
        if (p->meta.t0_wall_s > 0 && mt < p->meta.t0_wall_s) {
            prof_warn(p, "%s: older than the run (an earlier process with pid %ld?), ignored",
                      path, img->pid);
            return;
        }
    }
    if (perfmap_load(path, &img->perfmap, err, sizeof err) != 0) {
        prof_warn(p, "%s", err);
        img->perfmap = NULL;
    } else if (img->perfmap->bad_lines) {
        prof_warn(p, "%s: %zu bad lines skipped", path, img->perfmap->bad_lines);
    }
}

static uint32_t resolve_frame(struct profile *p, uint32_t image, uint32_t snap, uint64_t addr,
                              int ret)
{
    uint64_t key[2] = {(uint64_t)image << 32 | (uint64_t)snap << 1 | (uint64_t)(ret != 0), addr};
    uint64_t *slot = hmap_find(&p->frame_cache, key);
    if (slot)
        return (uint32_t)*slot;
    struct prof_image *img = &p->img[image];
    const struct maps_entry *e = NULL;
    if (img->maps)
        e = maps_lookup_near(img->maps, addr, img->maps->snaps[snap].t_ns);
    uint32_t loc;
    if (e && e->path[0] == '/') {
        uint32_t m = symtab_file_module(&p->st, e->path, e->inode);
        loc = p->st.mods[m].shim ? PROF_LOC_LEFT_OUT
                                 : symtab_file_loc(&p->st, m, addr - e->start + e->offset, ret);
    } else {
        const struct perfmap_entry *pe = NULL;
        if (!e || is_anonymous(e->path) || e->path[0] == '[') {
            if (!img->perfmap_tried)
                load_perfmap(p, img);
            pe = perfmap_lookup(img->perfmap, addr);
        }
        if (pe) {
            char name[64];
            snprintf(name, sizeof name, "perf-%ld.map", img->pid);
            uint32_t m = symtab_pseudo_module(&p->st, name, SYM_JIT);
            loc = symtab_jit_loc(&p->st, m, pe->name, pe->start);
        } else {
            const char *name = !e ? "[unknown]" : is_anonymous(e->path) ? "[anon]" : e->path;
            loc = symtab_pseudo_loc(&p->st, symtab_pseudo_module(&p->st, name, SYM_PSEUDO));
        }
    }
    slot = hmap_get(&p->frame_cache, key, NULL);
    if (!slot)
        p->oom = 1;
    else
        *slot = loc;
    return loc;
}

/* ---- stack cache ---- */

static uint64_t stack_hash(uint64_t head, const uint64_t *f, uint32_t n)
{
    uint64_t w[2] = {head, n};
    uint64_t h = hmap_hash(w, 2);
    return h ^ hmap_hash(f, n);
}

static int sc_grow(struct stack_cache *c)
{
    size_t slots = c->slots ? c->slots * 2 : 4096;
    uint64_t *hs = malloc(slots * sizeof *hs);
    uint32_t *off = calloc(slots, sizeof *off), *node = malloc(slots * sizeof *node);
    if (!hs || !off || !node) {
        free(hs);
        free(off);
        free(node);
        return -1;
    }
    for (size_t i = 0; i < c->slots; i++) {
        if (!c->slot_off[i])
            continue;
        size_t j = c->slot_hash[i] & (slots - 1);
        while (off[j])
            j = (j + 1) & (slots - 1);
        hs[j] = c->slot_hash[i];
        off[j] = c->slot_off[i];
        node[j] = c->slot_node[i];
    }
    free(c->slot_hash);
    free(c->slot_off);
    free(c->slot_node);
    c->slot_hash = hs;
    c->slot_off = off;
    c->slot_node = node;
    c->slots = slots;
    return 0;
}

/* The cached node of the stack, or UINT32_MAX; *where receives the empty slot to fill. */
static uint32_t sc_find(const struct stack_cache *c, uint64_t h, uint64_t head, const uint64_t *f,
                        uint32_t n, size_t *where)
{
    *where = SIZE_MAX;
    if (!c->slots)
        return UINT32_MAX;
    size_t j = h & (c->slots - 1);
    while (c->slot_off[j]) {
        if (c->slot_hash[j] == h) {
            const uint64_t *e = c->words + c->slot_off[j] - 1;
            if (e[0] == head && e[1] == n && memcmp(e + 2, f, n * sizeof *f) == 0)
                return c->slot_node[j];
        }
        j = (j + 1) & (c->slots - 1);
    }
    *where = j;
    return UINT32_MAX;
}

static void sc_add(struct stack_cache *c, uint64_t h, uint64_t head, const uint64_t *f,
                   uint32_t n, uint32_t node)
{
    if (c->full)
        return;
    size_t need = c->used + 2 + n;
    if (need > STACK_CACHE_WORDS || need >= UINT32_MAX) {
        c->full = 1;
        return;
    }
    if ((c->n + 1) * 2 > c->slots && sc_grow(c) != 0) {
        c->full = 1;
        return;
    }
    if (need > c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 65536;
        while (cap < need)
            cap *= 2;
        uint64_t *w = realloc(c->words, cap * sizeof *w);
        if (!w) {
            c->full = 1;
            return;
        }
        c->words = w;
        c->cap = cap;
    }
    size_t where;
    if (sc_find(c, h, head, f, n, &where) != UINT32_MAX || where == SIZE_MAX)
        return;
    uint64_t *e = c->words + c->used;
    e[0] = head;
    e[1] = n;
    memcpy(e + 2, f, n * sizeof *f);
    c->slot_hash[where] = h;
    c->slot_off[where] = (uint32_t)(c->used + 1);
    c->slot_node[where] = node;
    c->used = need;
    c->n++;
}

static void sc_free(struct stack_cache *c)
{
    free(c->words);
    free(c->slot_hash);
    free(c->slot_off);
    free(c->slot_node);
    memset(c, 0, sizeof *c);
}

/* The node a pseudo location hangs under the root as (made on first use). */
static uint32_t pseudo_root(struct profile *p, uint32_t *node, const char *name)
{
    if (!*node)
        *node = child_node(p, 0, symtab_pseudo_loc(&p->st, symtab_pseudo_module(&p->st, name,
                                                                                SYM_PSEUDO)));
    return *node;
}

/* The call tree node of a raw stack (frames[0] the leaf). The stack rules (profile.h): the
 * shim's frames are left out, a stack as deep as its file's max_frames hangs under
 * [truncated], one left with no frame is [perfscope]. */
static uint32_t stack_node(struct profile *p, uint32_t image, uint32_t snap, const uint64_t *f,
                           uint32_t n)
{
    uint64_t head = (uint64_t)image << 32 | snap;
    uint64_t h = stack_hash(head, f, n);
    size_t where;
    uint32_t node = sc_find(&p->sc, h, head, f, n, &where);
    if (node != UINT32_MAX)
        return node;
    uint32_t top = prof_stack_cut(p, image, n) ? pseudo_root(p, &p->trunc_node, PROF_TRUNCATED) : 0;
    node = top;
    for (uint32_t i = n; i-- > 0;) {
        uint32_t loc = resolve_frame(p, image, snap, f[i], i > 0);
        if (loc != PROF_LOC_LEFT_OUT)
            node = child_node(p, node, loc);
    }
    if (node == top) {
        uint32_t only = pseudo_root(p, &p->shim_node, PROF_SHIM_ONLY);
        node = top ? child_node(p, top, p->nodes[only].loc) : only;
    }
    sc_add(&p->sc, h, head, f, n, node);
    return node;
}

uint32_t prof_stack_find(const struct profile *p, uint32_t image, uint64_t t_ns, const uint64_t *f,
                         uint32_t n)
{
    const struct prof_image *img = &p->img[image];
    uint32_t snap = img->maps ? (uint32_t)(maps_snapshot_at(img->maps, t_ns) - img->maps->snaps) : 0;
    uint64_t head = (uint64_t)image << 32 | snap;
    size_t where;
    uint32_t node = sc_find(&p->sc, stack_hash(head, f, n), head, f, n, &where);
    if (node != UINT32_MAX)
        return node;
    /* Past the cache's bound: the same walk, through what collecting left in the indexes. */
    uint32_t top = prof_stack_cut(p, image, n) ? p->trunc_node : 0;
    node = top;
    for (uint32_t i = n; i-- > 0;) {
        uint64_t key[2] = {(uint64_t)image << 32 | (uint64_t)snap << 1 | (uint64_t)(i > 0), f[i]};
        const uint64_t *loc = hmap_find(&p->frame_cache, key);
        if (!loc)
            return UINT32_MAX;
        if ((uint32_t)*loc == PROF_LOC_LEFT_OUT)
            continue;
        uint64_t nk[2] = {node, *loc};
        const uint64_t *child = hmap_find(&p->node_idx, nk);
        if (!child)
            return UINT32_MAX;
        node = (uint32_t)*child;
    }
    if (node == top) {
        if (!p->shim_node)
            return UINT32_MAX;
        if (!top)
            return p->shim_node;
        uint64_t nk[2] = {top, p->nodes[p->shim_node].loc};
        const uint64_t *child = hmap_find(&p->node_idx, nk);
        return child ? (uint32_t)*child : UINT32_MAX;
    }
    return node;
}

uint32_t prof_thread_find(const struct profile *p, uint32_t image, uint32_t tid)
{
    uint64_t key[1] = {(uint64_t)image << 32 | tid};
    const uint64_t *slot = hmap_find(&p->thr_idx, key);
    return slot ? (uint32_t)*slot : UINT32_MAX;
}

/* ---- sample files ---- */

static int find_images(struct profile *p, char *err, size_t errlen)
{
    struct samples_name *names;
    size_t n;
    if (samples_list(p->dir, &names, &n, err, errlen) != 0)
        return -1;
    if (n == 0) {
        free(names);
        snprintf(err, errlen, "%s: no sample files (cpuprof.<pid>.bin): not a perfscope run folder, "
                 "or the run was killed before it wrote any", p->dir);
        return -1;
    }
    p->img = calloc(n, sizeof *p->img);
    if (!p->img) {
        samples_list_free(names, n);
        snprintf(err, errlen, "%s: out of memory listing the folder", p->dir);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        p->img[i].bin_path = names[i].path; /* the image owns it now */
        p->img[i].file = names[i].file;
        p->img[i].pid = names[i].pid;
        p->img[i].gen = names[i].gen;
    }
    p->nimg = n;
    free(names);
    return 0;
}

static void load_maps_of(struct profile *p, struct prof_image *img)
{
    char path[PATH_MAX], err[512];
    if (samples_maps_path(img->bin_path, path, sizeof path) != 0)
        return;
    if (maps_load(path, &img->maps, err, sizeof err) != 0) {
        img->maps = NULL;
        prof_warn(p, "%s (every frame of %s is [unknown])", err, img->file);
        return;
    }
    if (img->maps->bad_lines || img->maps->cut_lines)
        prof_warn(p, "%s: %zu unparseable lines skipped%s", path,
                  img->maps->bad_lines + img->maps->cut_lines,
                  img->maps->cut_lines ? " (a cut last line)" : "");
}

static void read_image(struct profile *p, uint32_t image, char *first_err, size_t errlen)
{
    struct prof_image *img = &p->img[image];
    struct samples_file sf;
    char err[512];
    if (samples_open(&sf, img->bin_path, err, sizeof err) != 0) {
        prof_warn(p, "%s (file skipped)", err);
        if (!*first_err)
            snprintf(first_err, errlen, "%s", err);
        return;
    }
    img->usable = 1;
    img->hdr = sf.hdr;
    img->period_s = sf.hdr.hz ? 1.0 / (double)sf.hdr.hz : PROF_DEFAULT_PERIOD_S;
    p->dropped += sf.hdr.dropped;
    load_maps_of(p, img);
    uint32_t none = prof_none_group(p);
    uint32_t last_tid = 0, thread = 0;
    int have_thread = 0;
    struct sample s;
    int rc;
    while ((rc = samples_next(&sf, &s, err, sizeof err)) == 1 && !p->oom) {
        if (s.nframes == 0) {
            img->empty++;
            continue;
        }
        int ph = p->phases ? phases_at(p->phases, s.time_ns) : -1;
        uint32_t group = ph >= 0 ? (uint32_t)p->phases->v[ph].group : none;
        if (!have_thread || s.tid != last_tid ||
            (s.comm[0] && strcmp(p->thr[thread].comm, s.comm) != 0)) {
            thread = thread_of(p, image, &s);
            last_tid = s.tid;
            have_thread = !p->oom;
        }
        uint32_t snap = 0;
        if (img->maps)
            snap = (uint32_t)(maps_snapshot_at(img->maps, s.time_ns) - img->maps->snaps);
        uint32_t node = stack_node(p, image, snap, s.frames, s.nframes);
        uint64_t key[2] = {group | (uint64_t)thread << 32, node};
        uint64_t *c = hmap_get(&p->counts, key, NULL);
        if (!c) {
            p->oom = 1;
            break;
        }
        (*c)++;
        if (!img->samples || s.time_ns < img->first_ns)
            img->first_ns = s.time_ns;
        if (s.time_ns > img->last_ns)
            img->last_ns = s.time_ns;
        img->samples++;
    }
    if (rc < 0)
        prof_warn(p, "%s (the %llu records before it are used)", err,
                  (unsigned long long)img->samples + img->empty);
    char note[512];
    samples_note(&sf, note, sizeof note);
    if (*note)
        prof_warn(p, "%s: %s", img->bin_path, note);
    samples_close(&sf);
    p->samples += img->samples;
    p->empty += img->empty;
    if (img->samples) {
        if (!p->first_ns || img->first_ns < p->first_ns)
            p->first_ns = img->first_ns;
        if (img->last_ns > p->last_ns)
            p->last_ns = img->last_ns;
    }
}

int prof_collect(struct profile *p, const char *dir, char *err, size_t errlen)
{
    p->dir = dir;
    p->warnings = cJSON_CreateArray();
    hmap_init(&p->thr_idx, 1);
    hmap_init(&p->node_idx, 2);
    hmap_init(&p->counts, 2);
    hmap_init(&p->frame_cache, 2);
    p->capnodes = 1024;
    p->nodes = malloc(p->capnodes * sizeof *p->nodes);
    if (!p->warnings || !p->nodes || symtab_init(&p->st) != 0) {
        snprintf(err, errlen, "out of memory");
        return 2;
    }
    p->st.trust_modified = p->trust_modified;
    p->nodes[0] = (struct prof_node){0, 0};
    p->nnodes = 1;
    struct stat sb;
    if (stat(dir, &sb) != 0) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        return 2;
    }
    if (!S_ISDIR(sb.st_mode)) {
        snprintf(err, errlen, "%s: not a folder (give the run folder, PERFSCOPE_OUT)", dir);
        return 2;
    }
    if (find_images(p, err, errlen) != 0)
        return 2;
    read_meta(p);
    p->st.run_start_wall = p->meta.t0_wall_s;
    read_procs(p);
    if (read_phases(p) != 0) {
        snprintf(err, errlen, "out of memory");
        return 2;
    }
    char first_err[512] = "";
    size_t usable = 0;
    uint64_t most = 0;
    for (uint32_t i = 0; i < p->nimg && !p->oom; i++) {
        read_image(p, i, first_err, sizeof first_err);
        if (!p->img[i].usable)
            continue;
        if (usable && p->img[i].period_s != p->period_s && p->img[i].samples)
            p->mixed_hz = 1;
        if (!usable || p->img[i].samples > most) {
            p->period_s = p->img[i].period_s;
            most = p->img[i].samples;
        }
        usable++;
    }
    if (p->oom || p->st.oom) {
        snprintf(err, errlen, "%s: out of memory", dir);
        return 2;
    }
    if (!usable) {
        if (p->nimg > 1)
            snprintf(err, errlen, "%s (and the %zu other sample files are unusable too)", first_err,
                     p->nimg - 1);
        else
            snprintf(err, errlen, "%s", first_err);
        return 2;
    }
    if (p->mixed_hz)
        prof_warn(p, "sample files at different rates: each sample weighs its own file's period");
    if (p->sc.full)
        prof_warn(p, "more distinct stacks than the stack cache holds: later ones resolved frame by frame");
    if (group_walls(p) != 0) {
        snprintf(err, errlen, "%s: out of memory", dir);
        return 2;
    }
    return 0;
}

void prof_free(struct profile *p)
{
    for (size_t i = 0; i < p->nimg; i++) {
        free(p->img[i].bin_path);
        free(p->img[i].exe);
        maps_free(p->img[i].maps);
        perfmap_free(p->img[i].perfmap);
    }
    free(p->img);
    free(p->thr);
    free(p->nodes);
    free(p->groups);
    hmap_free(&p->thr_idx);
    hmap_free(&p->node_idx);
    hmap_free(&p->counts);
    hmap_free(&p->frame_cache);
    sc_free(&p->sc);
    phases_free(p->phases);
    runmeta_free(&p->meta);
    cJSON_Delete(p->warnings);
    symtab_free(&p->st);
    memset(p, 0, sizeof *p);
}
