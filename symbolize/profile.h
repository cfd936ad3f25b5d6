/* profile.h: everything the symbolizer gathers from a run folder before it writes anything:
 * the sample files (images), their threads, the call tree of resolved stacks and the sample
 * counts per (phase group, thread, stack). Gathered by collect.c, read by tables.c and the
 * export_*.c writers. Memory grows with distinct stacks, threads and addresses, never with
 * samples: a sample only adds to a counter.
 *
 * Nothing here writes into the run folder; nothing here prints except through prof_warn. */
#ifndef PERFSCOPE_PROFILE_H
#define PERFSCOPE_PROFILE_H

#include <stdint.h>
#include <stdio.h>
#include <cjson/cJSON.h>

#include "hmap.h"
#include "phases.h"
#include "runmeta.h"
#include "samples.h"
#include "symtab.h"
#include "dwprefetch.h"
#include "spill.h"

struct maps;
struct perfmap;
struct resolver;

#define PROF_DEFAULT_PERIOD_S 0.005 /* a file whose header says hz 0: the reference's default */

/* One sample file: one process image (a pid, or a later image of it after exec). */
struct prof_image {
    char *bin_path;
    const char *file;          /* basename inside bin_path */
    long pid;
    unsigned gen;
    struct samples_header hdr;
    uint64_t samples;          /* records with at least one frame */
    uint64_t empty;            /* records without a frame (not counted, as the reference) */
    double period_s;           /* CPU seconds a sample stands for */
    struct maps *maps;         /* NULL: no usable maps file (every frame is [unknown]) */
    struct perfmap *perfmap;   /* JIT symbols, loaded on the first anonymous address */
    int perfmap_tried;
    char *exe;                 /* from procs.jsonl, or NULL */
    uint64_t first_ns, last_ns;
    int usable;                /* the file opened */
};

struct prof_thread {
    uint32_t image;
    uint32_t tid;
    char comm[17];             /* the latest non-empty name seen */
};

/* A call tree node: a location under its caller's node; node 0 is the root. */
struct prof_node {
    uint32_t parent;
    uint32_t loc;
};

struct prof_group {
    const char *name;          /* a phase group, or "(none)" */
    double wall_s;             /* summed over occurrences; (none): run time outside any phase */
    unsigned occurrences;
    long long tokens;          /* -1: none */
};

/* Raw stacks already resolved: (image, snapshot, frames) -> node, so a repeated stack costs one
 * hash and one compare; each entry also holds the pending count of its latest (group, thread),
 * added to counts when that changes and at the end (collect.c). Bounded: past
 * STACK_CACHE_WORDS it stops learning and frames are resolved one by one. */
struct sc_slot {
    uint64_t hash;
    uint32_t off;              /* offset into words + 1, 0 empty */
};

struct stack_cache {
    uint64_t *words;           /* entries: [image<<32|snapshot, nframes, node, key, count, frames...] */
    size_t used, cap;
    struct sc_slot *slot;
    size_t slots, n;
    int full;
};

/* The stack rules every output shares (collect.c applies them once, as stacks are built):
 *   - the shim's own frames (module SYM_SHIM_FILE) are left out: the profile never shows the
 *     profiler; a stack left with no frame at all is the one frame PROF_SHIM_ONLY;
 *   - a stack is cut when it holds as many frames as its file's max_frames (the record cannot
 *     say more: a stack exactly that deep is taken as cut too); a cut stack's outermost node is
 *     PROF_TRUNCATED, so every export shows the mark as its root frame. */
#define PROF_TRUNCATED "[truncated]"
#define PROF_SHIM_ONLY "[perfscope]"
#define PROF_LOC_LEFT_OUT UINT32_MAX /* frame_cache value of a frame left out */

struct profile {
    const char *dir;
    FILE *log;                 /* warnings, one line each */
    const char *prog;          /* prefix of warning lines */
    int trust_modified;        /* option: symbolize files modified since the run started */
    char symfs[4096];          /* option: the symfs folder ("" none) */
    struct symtab st;
    struct prof_image *img;
    size_t nimg;
    struct prof_thread *thr;
    size_t nthr, capthr;
    struct hmap thr_idx;       /* (image, tid) -> thread */
    struct prof_node *nodes;
    size_t nnodes, capnodes;
    struct idmap node_idx;     /* parent << 32 | loc -> child node (node 0, the root, is
                                * nobody's child): one cache line a lookup (a new 30-frame
                                * stack makes 30 of them) */
    struct hmap counts;        /* (group | thread << 32, node) -> samples */
    struct hmap frame_cache;   /* (image << 32 | snapshot << 1 | ret, address) -> location */
    struct stack_cache sc;     /* the sampled stacks (read by the writers) */
    struct stack_cache callers; /* stacks' callers alone (collect.c resolve_stack's own) */
    struct resolver *rs;       /* the thread resolving new stacks while samples are read, or
                                * NULL (collect.c) */
    cJSON *rwarnings;          /* that thread's warnings, added after the reading's */
    size_t rnwarnings;
    struct hmap mod_memo;      /* maps line (its address in the image's maps) -> module */
    struct hmap want_memo;     /* maps lines whose file the prefetcher was asked for */
    struct hmap ecounts;       /* (group | thread << 32, stack cache entry) -> samples, until
                                * the entries are resolved (collect.c sc_settle) */
    struct dwprefetch dwp;     /* opens sampled files while the samples are read */
    struct spill spill;        /* the counted samples in order, for replay.c (ok 0: none) */
    uint32_t trunc_node;       /* the PROF_TRUNCATED node under the root, 0: no stack was cut */
    uint32_t shim_node;        /* the PROF_SHIM_ONLY node under the root, 0: none */
    struct phases *phases;     /* NULL: no phases.jsonl */
    struct prof_group *groups; /* ngroups: the phases' groups, then "(none)" */
    size_t ngroups;
    struct run_meta meta;      /* meta.json (run start and end, leader); doc NULL: none usable */
    uint64_t samples, empty, dropped;
    uint64_t first_ns, last_ns;
    double period_s;           /* of the file with the most samples */
    int mixed_hz;
    cJSON *warnings;           /* array of strings, also in profile.json */
    size_t nwarnings;          /* all of them, kept or not */
    int oom;
};

/* One warning line, kept (the first PROF_WARNINGS_KEPT) for profile.json and for the log, which
 * gets them only once the run folder proved usable: a folder with nothing usable gets one line. */
#define PROF_WARNINGS_KEPT 200
void prof_warn(struct profile *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Set to 0 in the environment: no resolver thread (stacks resolved after the last sample, what
 * is done when the thread cannot start); no spill (replay.c reads the sample files again, what
 * is done when the run folder takes no temporary file). The outputs are the same either way
 * (t_tools_symbolize_resolver compares). */
#define PROF_RESOLVER_ENV "PERFSCOPE_SYMBOLIZE_RESOLVER"
#define PROF_SPILL_ENV "PERFSCOPE_SYMBOLIZE_SPILL"

/* collect.c: reads the run folder into p. Returns 0, or 2 with the one-line reason in err when
 * nothing usable is left (no folder, no sample file, no readable sample file). */
int prof_collect(struct profile *p, const char *dir, char *err, size_t errlen);
void prof_free(struct profile *p);

/* Whether a raw stack of n frames from image was cut at its file's max_frames. */
static inline int prof_stack_cut(const struct profile *p, uint32_t image, uint32_t n)
{
    return n >= p->img[image].hdr.max_frames;
}

/* Whether the stack ending at node was cut (its outermost node is PROF_TRUNCATED): what a
 * flame graph or a table marks as truncated. */
static inline int prof_node_truncated(const struct profile *p, uint32_t node)
{
    if (!p->trunc_node)
        return 0;
    while (node && p->nodes[node].parent)
        node = p->nodes[node].parent;
    return node == p->trunc_node;
}

/* Read-only, once collected (the writers run side by side): the node of a raw stack that
 * collecting saw (image's sample at t_ns), or UINT32_MAX; the thread of (image, tid), or
 * UINT32_MAX. For writers that go through the samples again in time order (trace.json). */
uint32_t prof_stack_find(const struct profile *p, uint32_t image, uint64_t t_ns, const uint64_t *f,
                         uint32_t n);
uint32_t prof_thread_find(const struct profile *p, uint32_t image, uint32_t tid);

/* prof_stack_find for up to PROF_FIND_BATCH samples of image at once (node[k] for s[k]): the
 * stack cache's memory for all of them is fetched before the first lookup, so their latencies
 * overlap. The same answers, read-only as well. */
#define PROF_FIND_BATCH 16
void prof_stack_find_batch(const struct profile *p, uint32_t image, const struct sample *s, size_t n,
                           uint32_t *node);

/* Group index of "(none)". */
static inline uint32_t prof_none_group(const struct profile *p)
{
    return (uint32_t)(p->ngroups - 1);
}

static inline double prof_thread_period(const struct profile *p, uint32_t thread)
{
    return p->img[p->thr[thread].image].period_s;
}

#endif
