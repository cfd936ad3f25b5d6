/* collect.c: a run folder into a struct profile (see profile.h): every cpuprof.*.bin streamed
 * once through samples.c, its frames resolved through the maps snapshot in force (maps.c), the
 * process's perf map (perfmap.c) and the files' symbols (symtab.c), each sample counted under
 * its phase group (phases.c), thread and stack.
 *
 * New stacks are resolved on a thread of its own (the resolver) while the samples are still being
 * read, one after another in the order they were first seen, so nodes, locations and functions
 * are numbered as if resolved on the spot; its warnings follow the reading's.
 *
 * It must never hold more than one block of sample records (samples.c), never resolve a raw stack
 * it has already resolved (the stack cache), never look a sample's count up again while the
 * samples of a stack keep to one thread and phase (the cache's pending count), never let the
 * resolver touch what the reading uses (the cache's slots, the counts) nor the reading what the
 * resolver uses (the symbol table, the call tree), and never stop on one bad file when others
 * are usable. */
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
#include "dwprefetch.h"
#include "progress.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define STACK_CACHE_WORDS (8u << 20) /* 64 MiB of cached raw stacks at most */

/* Set on the resolver's thread: its warnings go to p->rwarnings until it is done. */
static __thread int in_resolver;

void prof_warn(struct profile *p, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    utf8_sanitize(line);
    cJSON *to = in_resolver ? p->rwarnings : p->warnings;
    if (in_resolver)
        p->rnwarnings++;
    else
        p->nwarnings++;
    if (to && cJSON_GetArraySize(to) < PROF_WARNINGS_KEPT)
        cJSON_AddItemToArray(to, cJSON_CreateString(line));
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
    /* The last start line that names a file is its image's: a start line names the file its
     * image would write, and an image that took no sample left none, so a later image of the
     * same pid (after exec) names the same file again (runs from before files were made lazily
     * name each file once). */
    for (size_t i = 0; i < p->nimg; i++) {
        if (strcmp(p->img[i].file, pl.samples) != 0)
            continue;
        char *exe = strdup(pl.exe);
        if (!exe) {
            p->oom = 1;
            continue;
        }
        free(p->img[i].exe);
        p->img[i].exe = exe;
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


/* Whether a sample's thread name differs from the one kept: the kept name is a copy of a
 * sample's whole array, so the same bytes (a thread's every sample but after a rename) answer
 * with one fixed-size compare; strcmp only when they differ (bytes past the NUL may). A call to
 * strcmp for every sample was 2.5% of the symbolizer's CPU on the bench's file. */
static inline int comm_differs(const char kept[SAMPLEFILE_COMM_BYTES + 1],
                               const char comm[SAMPLEFILE_COMM_BYTES + 1])
{
    return memcmp(kept, comm, SAMPLEFILE_COMM_BYTES + 1) != 0 && strcmp(kept, comm) != 0;
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
        if (s->comm[0] && comm_differs(t->comm, s->comm))
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

/* The child of parent at loc, or 0 (read-only: the writers use it side by side). */
static uint32_t node_index_find(const struct idmap *ix, uint32_t parent, uint32_t loc)
{
    return idmap_find(ix, (uint64_t)parent << 32 | loc);
}

static uint32_t child_node(struct profile *p, uint32_t parent, uint32_t loc)
{
    uint64_t key = (uint64_t)parent << 32 | loc;
    uint32_t node = idmap_find(&p->node_idx, key);
    if (node)
        return node;
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
    if (p->nnodes >= UINT32_MAX || idmap_put(&p->node_idx, key, (uint32_t)p->nnodes) != 0) {
        p->oom = 1;
        return 0;
    }
    p->nodes[p->nnodes] = (struct prof_node){parent, loc};
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
        /* The module of a maps line, looked up by its text once per line. */
        uint64_t mk[1] = {(uint64_t)(uintptr_t)e};
        int is_new;
        uint64_t *ms = hmap_get(&p->mod_memo, mk, &is_new);
        uint32_t m;
        if (ms && !is_new) {
            m = (uint32_t)*ms;
        } else {
            m = symtab_file_module(&p->st, e->path, e->inode);
            if (ms && (ms = hmap_find(&p->mod_memo, mk)) != NULL)
                *ms = m;
        }
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

/* An entry's words: [image<<32|snapshot, nframes (| SC_CALLERS), node, pending key, pending
 * count, frames...]. */
#define SC_HEAD 5
/* Marks (in nframes) an entry of a stack's callers alone (frames 1..n-1, all return addresses):
 * the node of the leaf's parent, shared by every stack that differs only in its leaf (the
 * samples of one function at different instructions). */
#define SC_CALLERS 0x10000u
/* The node of an entry not resolved yet. */
#define SC_UNRESOLVED UINT64_MAX

/* The hash of a stack: four independent multiply-add lanes over the frames (a sample's 30
 * frames cost about 60 instructions, the lanes' multiplies overlapping), then one mix. The
 * cache compares whole stacks, so the hash only has to spread them. */
static uint64_t stack_hash(uint64_t head, const uint64_t *f, uint32_t n)
{
    const uint64_t m1 = 0x9e3779b97f4a7c15ULL, m2 = 0xff51afd7ed558ccdULL;
    uint64_t a = head, b = n, c = 0x243f6a8885a308d3ULL, d = 0x13198a2e03707344ULL;
    uint32_t len = n & ~SC_CALLERS, i = 0;
    for (; i + 4 <= len; i += 4) {
        a = (a + f[i]) * m1;
        b = (b + f[i + 1]) * m2;
        c = (c + f[i + 2]) * m1;
        d = (d + f[i + 3]) * m2;
        a ^= a >> 31;
        b ^= b >> 29;
        c ^= c >> 31;
        d ^= d >> 29;
    }
    for (; i < len; i++) {
        a = (a + f[i]) * m1;
        a ^= a >> 31;
    }
    uint64_t h = a ^ (b * m1 + (b >> 17)) ^ (c * m2 + (c >> 23)) ^ (d * 0xc4ceb9fe1a85ec53ULL);
    h ^= h >> 33;
    h *= m2;
    h ^= h >> 29;
    return h;
}

static int sc_grow(struct stack_cache *c)
{
    size_t slots = c->slots ? c->slots * 2 : 4096;
    struct sc_slot *v = calloc(slots, sizeof *v);
    if (!v)
        return -1;
    for (size_t i = 0; i < c->slots; i++) {
        if (!c->slot[i].off)
            continue;
        size_t j = c->slot[i].hash & (slots - 1);
        while (v[j].off)
            j = (j + 1) & (slots - 1);
        v[j] = c->slot[i];
    }
    free(c->slot);
    c->slot = v;
    c->slots = slots;
    return 0;
}

/* The cached entry of the stack (its offset into words + 1), or 0; *where receives the empty
 * slot to fill. */
static uint32_t sc_find(const struct stack_cache *c, uint64_t h, uint64_t head, const uint64_t *f,
                        uint32_t n, size_t *where)
{
    *where = SIZE_MAX;
    if (!c->slots)
        return 0;
    size_t j = h & (c->slots - 1);
    while (c->slot[j].off) {
        if (c->slot[j].hash == h) {
            const uint64_t *e = c->words + c->slot[j].off - 1;
            if (e[0] == head && e[1] == n &&
                memcmp(e + SC_HEAD, f, (n & ~SC_CALLERS) * sizeof *f) == 0)
                return c->slot[j].off;
        }
        j = (j + 1) & (c->slots - 1);
    }
    *where = j;
    return 0;
}

/* Adds the stack; its entry's offset + 1, or 0 when the cache is full. */
static uint32_t sc_add(struct stack_cache *c, uint64_t h, uint64_t head, const uint64_t *f,
                       uint32_t n, uint64_t node)
{
    if (c->full)
        return 0;
    size_t need = c->used + SC_HEAD + (n & ~SC_CALLERS);
    if (need > STACK_CACHE_WORDS || need >= UINT32_MAX) {
        c->full = 1;
        return 0;
    }
    if ((c->n + 1) * 2 > c->slots && sc_grow(c) != 0) {
        c->full = 1;
        return 0;
    }
    if (need > c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 65536;
        while (cap < need)
            cap *= 2;
        uint64_t *w = realloc(c->words, cap * sizeof *w);
        if (!w) {
            c->full = 1;
            return 0;
        }
        c->words = w;
        c->cap = cap;
    }
    size_t where;
    if (sc_find(c, h, head, f, n, &where) != 0 || where == SIZE_MAX)
        return 0;
    uint64_t *e = c->words + c->used;
    e[0] = head;
    e[1] = n;
    e[2] = node;
    e[3] = 0;
    e[4] = 0;
    memcpy(e + SC_HEAD, f, (n & ~SC_CALLERS) * sizeof *f);
    c->slot[where] = (struct sc_slot){h, (uint32_t)(c->used + 1)};
    c->used = need;
    c->n++;
    return (uint32_t)(e - c->words + 1);
}

static void sc_free(struct stack_cache *c)
{
    free(c->words);
    free(c->slot);
    memset(c, 0, sizeof *c);
}

static int add_count(struct profile *p, uint64_t key, uint64_t node, uint64_t n)
{
    uint64_t k[2] = {key, node};
    uint64_t *c = hmap_get(&p->counts, k, NULL);
    if (!c)
        return -1;
    *c += n;
    return 0;
}

/* One sample of a cached stack under key (group | thread << 32). The entry keeps a pending
 * count for the key of its latest samples, so a run of samples of one stack under one key (a
 * thread in one phase) costs no lookup; when the key changes, what was pending goes to
 * p->ecounts under (key, entry), and the entries' nodes replace them once resolved
 * (sc_settle). */
static int count_sample(struct profile *p, uint32_t entry, uint64_t key)
{
    uint64_t *e = p->sc.words + entry - 1;
    if (e[4] && e[3] != key) {
        uint64_t k[2] = {e[3], entry};
        uint64_t *c = hmap_get(&p->ecounts, k, NULL);
        if (!c)
            return -1;
        *c += e[4];
        e[4] = 0;
    }
    e[3] = key;
    e[4]++;
    return 0;
}

/* The node a pseudo location hangs under the root as (made on first use). */
static uint32_t pseudo_root(struct profile *p, uint32_t *node, const char *name)
{
    if (!*node)
        *node = child_node(p, 0, symtab_pseudo_loc(&p->st, symtab_pseudo_module(&p->st, name,
                                                                                SYM_PSEUDO)));
    return *node;
}

/* The call tree node of a stack's frames (frames[0] the leaf, resolved as an instruction; the
 * rest as return addresses), its callers found through the callers cache (a callers entry
 * stands for stacks of one depth, so for one answer to whether the stack was cut). The stack
 * rules (profile.h): the shim's frames are left out, a stack as deep as its file's max_frames
 * hangs under [truncated], one left with no frame is [perfscope]. f must not point into the
 * callers cache (an insertion may move it). */
static uint32_t resolve_stack(struct profile *p, uint32_t image, uint32_t snap, const uint64_t *f,
                              uint32_t n)
{
    uint64_t head = (uint64_t)image << 32 | snap;
    uint32_t top = prof_stack_cut(p, image, n) ? pseudo_root(p, &p->trunc_node, PROF_TRUNCATED) : 0;
    uint32_t parent = top;
    if (n > 1) {
        size_t where;
        uint64_t hc = stack_hash(head, f + 1, (n - 1) | SC_CALLERS);
        uint32_t c = sc_find(&p->callers, hc, head, f + 1, (n - 1) | SC_CALLERS, &where);
        if (c) {
            parent = (uint32_t)p->callers.words[c - 1 + 2];
        } else {
            for (uint32_t i = n; i-- > 1;) {
                uint32_t loc = resolve_frame(p, image, snap, f[i], 1);
                if (loc != PROF_LOC_LEFT_OUT)
                    parent = child_node(p, parent, loc);
            }
            sc_add(&p->callers, hc, head, f + 1, (n - 1) | SC_CALLERS, parent);
        }
    }
    uint32_t loc = resolve_frame(p, image, snap, f[0], 0);
    uint32_t node = loc != PROF_LOC_LEFT_OUT ? child_node(p, parent, loc) : parent;
    if (node == top) {
        uint32_t only = pseudo_root(p, &p->shim_node, PROF_SHIM_ONLY);
        node = top ? child_node(p, top, p->nodes[only].loc) : only;
    }
    return node;
}

/* Asks the prefetcher for the files a new stack's frames lie in (each maps line once). */
static void want_modules(struct profile *p, const struct prof_image *img, uint32_t snap,
                         const uint64_t *f, uint32_t n)
{
    if (!img->maps || !p->dwp.started)
        return;
    const struct maps_entry *last = NULL;
    for (uint32_t i = 0; i < n; i++) {
        if (last && f[i] >= last->start && f[i] < last->end)
            continue; /* the same mapping as the frame before (most are) */
        const struct maps_entry *e = maps_lookup_near(img->maps, f[i], img->maps->snaps[snap].t_ns);
        if (!e || e->path[0] != '/')
            continue;
        last = e;
        const char *base = strrchr(e->path, '/') + 1;
        if (strncmp(base, SYM_SHIM_FILE, sizeof SYM_SHIM_FILE - 1) == 0 &&
            (!base[sizeof SYM_SHIM_FILE - 1] || base[sizeof SYM_SHIM_FILE - 1] == ' '))
            continue; /* the shim's frames are left out, never resolved */
        uint64_t key[1] = {(uint64_t)(uintptr_t)e};
        int is_new;
        if (hmap_get(&p->want_memo, key, &is_new) && is_new)
            dwprefetch_want(&p->dwp, e->path, e->inode);
    }
}

/* ---- the resolver ---- */

/* The reading adds stacks to p->sc (unresolved) and publishes how far the entries go; the
 * resolver resolves each published entry in order and writes its node into the entry's node
 * word, which the reading never reads (it only compares frames and keeps counts). So the
 * entries must never move: the cache's words are allocated at their bound up front (untouched
 * pages cost no memory). */
#define RS_WAKE_BATCH 64 /* new stacks that wait before a resting resolver is woken (the rest
                          * wait for the end of the reading) */

struct resolver {
    struct profile *p;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t published;   /* words of p->sc up to which entries are complete (the reading's) */
    size_t published_n; /* entries up to there */
    size_t waiting;     /* entries published since the resolver was last seen awake */
    int resting, stop;
};

static void *resolver_run(void *arg)
{
    struct resolver *rs = arg;
    struct profile *p = rs->p;
    struct stack_cache *c = &p->sc;
    uint64_t f[SAMPLEFILE_MAX_FRAMES];
    in_resolver = 1;
    size_t at = 0;
    pthread_mutex_lock(&rs->mu);
    for (;;) {
        while (at == rs->published && !rs->stop) {
            rs->resting = 1;
            pthread_cond_wait(&rs->cv, &rs->mu);
            rs->resting = 0;
        }
        size_t end = rs->published;
        if (at == end)
            break;
        pthread_mutex_unlock(&rs->mu);
        while (at < end && !p->oom) {
            uint64_t *e = c->words + at;
            uint32_t n = (uint32_t)e[1];
            memcpy(f, e + SC_HEAD, n * sizeof *f);
            e[2] = resolve_stack(p, (uint32_t)(e[0] >> 32), (uint32_t)e[0], f, n);
            at += SC_HEAD + n;
        }
        pthread_mutex_lock(&rs->mu);
        if (p->oom)
            break;
    }
    pthread_mutex_unlock(&rs->mu);
    return NULL;
}

/* Starts the resolver: 0, or -1 (stacks are then resolved after the last sample, sc_settle). */
static int resolver_start(struct profile *p)
{
    struct resolver *rs = calloc(1, sizeof *rs);
    uint64_t *words = malloc((size_t)STACK_CACHE_WORDS * sizeof *words);
    p->rwarnings = cJSON_CreateArray();
    if (!rs || !words || !p->rwarnings || pthread_mutex_init(&rs->mu, NULL) != 0) {
        free(rs);
        free(words);
        return -1;
    }
    if (pthread_cond_init(&rs->cv, NULL) != 0) {
        pthread_mutex_destroy(&rs->mu);
        free(rs);
        free(words);
        return -1;
    }
    rs->p = p;
    p->sc.words = words;
    p->sc.cap = STACK_CACHE_WORDS;
    if (pthread_create(&rs->th, NULL, resolver_run, rs) != 0) {
        pthread_cond_destroy(&rs->cv);
        pthread_mutex_destroy(&rs->mu);
        free(rs);
        return -1; /* the words stay the cache's */
    }
    p->rs = rs;
    return 0;
}

/* The entries added since the last call are the resolver's to resolve (once a batch of
 * samples); a resting resolver is woken once RS_WAKE_BATCH of them wait. */
static void resolver_publish(struct profile *p)
{
    struct resolver *rs = p->rs;
    if (rs->published == p->sc.used)
        return;
    pthread_mutex_lock(&rs->mu);
    rs->waiting += p->sc.n - rs->published_n;
    rs->published = p->sc.used;
    rs->published_n = p->sc.n;
    if (!rs->resting)
        rs->waiting = 0; /* it will see them before it rests */
    else if (rs->waiting >= RS_WAKE_BATCH) {
        rs->waiting = 0;
        pthread_cond_signal(&rs->cv);
    }
    pthread_mutex_unlock(&rs->mu);
}

/* Waits for the resolver to resolve every published entry and ends it; its warnings then
 * follow the reading's. Idempotent. */
static void resolver_finish(struct profile *p)
{
    struct resolver *rs = p->rs;
    if (!rs)
        return;
    pthread_mutex_lock(&rs->mu);
    rs->published = p->sc.used;
    rs->stop = 1;
    pthread_cond_signal(&rs->cv);
    pthread_mutex_unlock(&rs->mu);
    pthread_join(rs->th, NULL);
    pthread_cond_destroy(&rs->cv);
    pthread_mutex_destroy(&rs->mu);
    free(rs);
    p->rs = NULL;
    cJSON *w;
    while (p->rwarnings && (w = cJSON_DetachItemFromArray(p->rwarnings, 0)) != NULL) {
        if (p->warnings && cJSON_GetArraySize(p->warnings) < PROF_WARNINGS_KEPT)
            cJSON_AddItemToArray(p->warnings, w);
        else
            cJSON_Delete(w);
    }
    p->nwarnings += p->rnwarnings;
    p->rnwarnings = 0;
}

/* After the last sample: every cached stack resolved, in the order the stacks were first seen
 * (so nodes, locations and functions are numbered as if resolved on the spot), then every
 * count, pending or set aside, into p->counts under its node. */
static int sc_settle(struct profile *p)
{
    struct stack_cache *c = &p->sc;
    uint64_t f[SAMPLEFILE_MAX_FRAMES];
    for (size_t at = 0; at < c->used && !p->oom; at += SC_HEAD + (c->words[at + 1] & ~SC_CALLERS)) {
        const uint64_t *e = c->words + at;
        if ((e[1] & SC_CALLERS) || e[2] != SC_UNRESOLVED)
            continue;
        uint32_t n = (uint32_t)e[1];
        memcpy(f, e + SC_HEAD, n * sizeof *f);
        uint32_t node = resolve_stack(p, (uint32_t)(e[0] >> 32), (uint32_t)e[0], f, n);
        c->words[at + 2] = node;
    }
    if (p->oom)
        return -1;
    for (size_t at = 0; at < c->used; at += SC_HEAD + (c->words[at + 1] & ~SC_CALLERS)) {
        uint64_t *e = c->words + at;
        if (e[4] && add_count(p, e[3], e[2], e[4]) != 0)
            return -1;
        e[4] = 0;
    }
    for (size_t i = 0; i < p->ecounts.cap; i++) {
        if (!p->ecounts.used[i])
            continue;
        const uint64_t *k = hmap_key(&p->ecounts, i);
        if (add_count(p, k[0], c->words[k[1] - 1 + 2], p->ecounts.vals[i]) != 0)
            return -1;
    }
    hmap_free(&p->ecounts);
    return 0;
}

uint32_t prof_stack_find(const struct profile *p, uint32_t image, uint64_t t_ns, const uint64_t *f,
                         uint32_t n)
{
    const struct prof_image *img = &p->img[image];
    uint32_t snap = img->maps ? (uint32_t)(maps_snapshot_at(img->maps, t_ns) - img->maps->snaps) : 0;
    uint64_t head = (uint64_t)image << 32 | snap;
    size_t where;
    uint32_t entry = sc_find(&p->sc, stack_hash(head, f, n), head, f, n, &where);
    if (entry)
        return (uint32_t)p->sc.words[entry - 1 + 2];
    uint32_t node;
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
        uint32_t child = node_index_find(&p->node_idx, node, (uint32_t)*loc);
        if (!child)
            return UINT32_MAX;
        node = child;
    }
    if (node == top) {
        if (!p->shim_node)
            return UINT32_MAX;
        if (!top)
            return p->shim_node;
        uint32_t child = node_index_find(&p->node_idx, top, p->nodes[p->shim_node].loc);
        return child ? child : UINT32_MAX;
    }
    return node;
}

void prof_stack_find_batch(const struct profile *p, uint32_t image, const struct sample *s, size_t n,
                           uint32_t *node)
{
    const struct prof_image *img = &p->img[image];
    const struct stack_cache *c = &p->sc;
    uint64_t hash[PROF_FIND_BATCH], head[PROF_FIND_BATCH];
    if (n > PROF_FIND_BATCH)
        n = PROF_FIND_BATCH;
    /* As read_image does: every stack's slot fetched, then every entry, then the lookups. */
    for (size_t k = 0; k < n; k++) {
        uint32_t snap = img->maps ? (uint32_t)(maps_snapshot_at(img->maps, s[k].time_ns) - img->maps->snaps) : 0;
        head[k] = (uint64_t)image << 32 | snap;
        hash[k] = stack_hash(head[k], s[k].frames, s[k].nframes);
        if (c->slots)
            __builtin_prefetch(&c->slot[hash[k] & (c->slots - 1)]);
    }
    for (size_t k = 0; k < n && c->slots; k++) {
        const struct sc_slot *sl = &c->slot[hash[k] & (c->slots - 1)];
        if (sl->off && sl->hash == hash[k]) {
            const uint64_t *e = c->words + sl->off - 1;
            __builtin_prefetch(e);
            __builtin_prefetch(e + 8);
            __builtin_prefetch(e + 16);
            __builtin_prefetch(e + 24);
            __builtin_prefetch(e + 32);
        }
    }
    for (size_t k = 0; k < n; k++) {
        size_t where;
        uint32_t entry = sc_find(c, hash[k], head[k], s[k].frames, s[k].nframes, &where);
        node[k] = entry ? (uint32_t)c->words[entry - 1 + 2]
                        : prof_stack_find(p, image, s[k].time_ns, s[k].frames, s[k].nframes);
    }
}

uint32_t prof_thread_find(const struct profile *p, uint32_t image, uint32_t tid)
{
    uint64_t key[1] = {(uint64_t)image << 32 | tid};
    const uint64_t *slot = hmap_find(&p->thr_idx, key);
    return slot ? (uint32_t)*slot : UINT32_MAX;
}

/* ---- sample files ---- */

/* Records are taken BATCH at a time (copied out of the reader's block), so that the stack
 * cache's memory for all of them is fetched before the first is looked up. */
#define BATCH 16

struct batched {
    struct sample s;
    uint32_t snap;
    uint64_t hash;
    uint64_t frames[SAMPLEFILE_MAX_FRAMES];
};

static int find_images(struct profile *p, char *err, size_t errlen)
{
    struct samples_name *names;
    size_t n;
    if (samples_list(p->dir, &names, &n, err, errlen) != 0)
        return -1;
    if (n == 0) {
        free(names);
        /* A sample file is made with a process's first sample: a run whose processes took none
         * (each shorter than a sample period) has none, and is a profile of no sample. */
        if (runfolder_holds_run(p->dir))
            return 0;
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
    size_t phase_hint = 0;
    struct batched *b = malloc(BATCH * sizeof *b);
    int rc = 1;
    if (!b)
        p->oom = 1;
    while (rc == 1 && !p->oom) {
        /* A batch of records out of one block (their frames read in place), each with its
         * stack's hash; then the cache's slots and entries of the batch are fetched ahead, so
         * their memory latencies overlap. */
        size_t nb = 0;
        /* Never past the block's last record while the batch holds any: the next record would
         * refill the block the batch's frames point into (an empty record too). */
        while (nb < BATCH && (nb == 0 || samples_in_block(&sf) > 0) &&
               (rc = samples_next(&sf, &b[nb].s, err, sizeof err)) == 1) {
            struct batched *x = &b[nb];
            if (x->s.nframes == 0) {
                img->empty++;
                continue;
            }
            if (x->s.frames == sf.frames) { /* a big-endian host's converted copy: one per file */
                memcpy(x->frames, x->s.frames, x->s.nframes * sizeof *x->frames);
                x->s.frames = x->frames;
            }
            x->snap = img->maps ? (uint32_t)(maps_snapshot_at(img->maps, x->s.time_ns) -
                                             img->maps->snaps)
                                : 0;
            x->hash = stack_hash((uint64_t)image << 32 | x->snap, x->s.frames, x->s.nframes);
            if (p->sc.slots)
                __builtin_prefetch(&p->sc.slot[x->hash & (p->sc.slots - 1)]);
            nb++;
        }
        for (size_t k = 0; k < nb && p->sc.slots; k++) {
            const struct sc_slot *sl = &p->sc.slot[b[k].hash & (p->sc.slots - 1)];
            if (sl->off && sl->hash == b[k].hash) {
                const uint64_t *e = p->sc.words + sl->off - 1;
                __builtin_prefetch(e);
                __builtin_prefetch(e + 8);
                __builtin_prefetch(e + 16);
                __builtin_prefetch(e + 24);
                __builtin_prefetch(e + 32);
            }
        }
        for (size_t k = 0; k < nb && !p->oom; k++) {
            const struct sample *sp = &b[k].s;
            int ph = p->phases ? phases_at_hint(p->phases, sp->time_ns, &phase_hint) : -1;
            uint32_t group = ph >= 0 ? (uint32_t)p->phases->v[ph].group : none;
            if (!have_thread || sp->tid != last_tid ||
                (sp->comm[0] && comm_differs(p->thr[thread].comm, sp->comm))) {
                thread = thread_of(p, image, sp);
                last_tid = sp->tid;
                have_thread = !p->oom;
            }
            /* A new stack is cached unresolved (resolved after the last sample, by which time
             * the prefetcher has opened its files); one the cache cannot hold is resolved now. */
            uint64_t key = group | (uint64_t)thread << 32, head = (uint64_t)image << 32 | b[k].snap;
            size_t where;
            uint32_t entry = sc_find(&p->sc, b[k].hash, head, sp->frames, sp->nframes, &where);
            if (!entry) {
                entry = sc_add(&p->sc, b[k].hash, head, sp->frames, sp->nframes, SC_UNRESOLVED);
                if (entry)
                    want_modules(p, img, b[k].snap, sp->frames, sp->nframes);
            }
            int rc2;
            if (entry) {
                rc2 = count_sample(p, entry, key);
                spill_add(&p->spill, sp->time_ns, thread, 0, entry);
            } else {
                resolver_finish(p); /* the stacks before this one first */
                dwprefetch_finish(&p->dwp);
                uint32_t node = resolve_stack(p, image, b[k].snap, sp->frames, sp->nframes);
                rc2 = add_count(p, key, node, 1);
                spill_add(&p->spill, sp->time_ns, thread, 1, node);
            }
            if (rc2 != 0) {
                p->oom = 1;
                break;
            }
            if (!img->samples || sp->time_ns < img->first_ns)
                img->first_ns = sp->time_ns;
            if (sp->time_ns > img->last_ns)
                img->last_ns = sp->time_ns;
            img->samples++;
        }
        if (p->rs)
            resolver_publish(p);
        progress_samples(p->samples + img->samples); /* once a batch */
    }
    free(b);
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
    hmap_init(&p->counts, 2);
    hmap_init(&p->frame_cache, 2);
    hmap_init(&p->mod_memo, 1);
    hmap_init(&p->want_memo, 1);
    hmap_init(&p->ecounts, 2);
    p->capnodes = 1024;
    p->nodes = malloc(p->capnodes * sizeof *p->nodes);
    if (!p->warnings || !p->nodes || symtab_init(&p->st) != 0) {
        snprintf(err, errlen, "out of memory");
        return 2;
    }
    p->st.trust_modified = p->trust_modified;
    p->st.symfs = p->symfs[0] ? p->symfs : NULL;
    /* The prefetcher opens the sampled files as the reading meets them; the resolver resolves
     * the stacks meanwhile, taking each file from the prefetcher (or opening one the prefetcher
     * has not started on itself), or, without the resolver, after the last sample. */
    if (dwprefetch_start(&p->dwp) == 0)
        p->st.prefetch = &p->dwp; /* else files are opened when first resolved */
    const char *knob = getenv(PROF_RESOLVER_ENV);
    if (!(knob && strcmp(knob, "0") == 0))
        resolver_start(p); /* else (or when it cannot start) resolved after the last sample */
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
    if (progress_active()) {
        /* The records to come, from each file's header and size (cheap: no record is read). */
        uint64_t total = 0;
        for (uint32_t i = 0; i < p->nimg; i++) {
            struct samples_file sf;
            char ignored[512];
            if (samples_open(&sf, p->img[i].bin_path, ignored, sizeof ignored) == 0) {
                total += sf.records;
                samples_close(&sf);
            }
        }
        progress_total(total);
    }
    knob = getenv(PROF_SPILL_ENV);
    if (!(knob && strcmp(knob, "0") == 0))
        spill_open(&p->spill, dir); /* none: replay.c reads the sample files again */
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
    resolver_finish(p);
    dwprefetch_finish(&p->dwp);
    spill_flush(&p->spill);
    if (!p->oom && sc_settle(p) != 0)
        p->oom = 1;
    if (p->oom || p->st.oom) {
        snprintf(err, errlen, "%s: out of memory", dir);
        return 2;
    }
    if (!p->nimg) {
        p->period_s = PROF_DEFAULT_PERIOD_S;
        prof_warn(p, "no process of the run took a sample (a sample file is made with a process's first "
                     "sample): the profile is empty");
    } else if (!usable) {
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
    idmap_free(&p->node_idx);
    hmap_free(&p->counts);
    hmap_free(&p->frame_cache);
    hmap_free(&p->mod_memo);
    hmap_free(&p->want_memo);
    hmap_free(&p->ecounts);
    resolver_finish(p);
    dwprefetch_free(&p->dwp);
    sc_free(&p->sc);
    sc_free(&p->callers);
    spill_close(&p->spill);
    cJSON_Delete(p->rwarnings);
    phases_free(p->phases);
    runmeta_free(&p->meta);
    cJSON_Delete(p->warnings);
    symtab_free(&p->st);
    memset(p, 0, sizeof *p);
}
