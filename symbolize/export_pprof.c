/* export_pprof.c: OUT/profile.pb.gz, a pprof profile (github.com/google/pprof, proto/
 * profile.proto) that `go tool pprof`, Pyroscope and Parca read. The protobuf wire format is
 * written here by hand (varints and length-delimited fields: no dependency), gzip by zlib.
 *
 * Shape: sample types [samples/count, cpu/nanoseconds], a comment saying which CPU time "cpu"
 * counts (user only with the perf clock, user+sys with the tick timer); one Sample per (phase group, thread,
 * stack) with location ids leaf first and labels phase, pid, tid, thread; one Location per
 * resolved address with its inline chain as Lines (innermost first); Function name demangled,
 * system_name as the file spells it; one Mapping per module. The processes of a run are merged,
 * so run-time addresses would collide: each module gets its own synthetic address range and a
 * Location's address is that range's start plus the file offset (Mapping file_offset 0, so
 * address - memory_start is the file offset pprof expects). Every mapping says has_functions, so
 * no tool tries to symbolize again. It must never write other than through outfile.c. */
#include "tables.h"
#include "replay.h"
#include "outfile.h"
#include "utf8.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* profile.proto field numbers */
enum {
    PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3, PROFILE_LOCATION = 4,
    PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6, PROFILE_TIME_NANOS = 9,
    PROFILE_DURATION_NANOS = 10, PROFILE_PERIOD_TYPE = 11, PROFILE_PERIOD = 12,
    PROFILE_COMMENT = 13, PROFILE_DEFAULT_SAMPLE_TYPE = 14,
    VALUETYPE_TYPE = 1, VALUETYPE_UNIT = 2,
    SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3,
    LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3,
    MAPPING_ID = 1, MAPPING_START = 2, MAPPING_LIMIT = 3, MAPPING_OFFSET = 4,
    MAPPING_FILENAME = 5, MAPPING_BUILD_ID = 6, MAPPING_HAS_FUNCTIONS = 7,
    MAPPING_HAS_FILENAMES = 8, MAPPING_HAS_LINE_NUMBERS = 9, MAPPING_HAS_INLINE_FRAMES = 10,
    LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4,
    LINE_FUNCTION_ID = 1, LINE_LINE = 2,
    FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3, FUNCTION_FILENAME = 4,
    FUNCTION_START_LINE = 5,
};

enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

struct pb {
    unsigned char *d;
    size_t n, cap;
    int oom;
};

static void pb_put(struct pb *b, const void *src, size_t len)
{
    if (b->oom)
        return;
    if (b->n + len > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + len)
            cap *= 2;
        unsigned char *d = realloc(b->d, cap);
        if (!d) {
            b->oom = 1;
            return;
        }
        b->d = d;
        b->cap = cap;
    }
    memcpy(b->d + b->n, src, len);
    b->n += len;
}

static void pb_varint(struct pb *b, uint64_t v)
{
    unsigned char buf[10];
    size_t n = 0;
    do {
        buf[n] = (unsigned char)(v & 0x7f);
        v >>= 7;
        if (v)
            buf[n] |= 0x80;
        n++;
    } while (v);
    pb_put(b, buf, n);
}

static void pb_key(struct pb *b, int field, int wire)
{
    pb_varint(b, (uint64_t)field << 3 | (uint64_t)wire);
}

/* A scalar field; zero is the default and is left out, as proto3 does. */
static void pb_uint(struct pb *b, int field, uint64_t v)
{
    if (!v)
        return;
    pb_key(b, field, WIRE_VARINT);
    pb_varint(b, v);
}

static void pb_int(struct pb *b, int field, int64_t v)
{
    pb_uint(b, field, (uint64_t)v); /* int64: two's complement as a varint */
}

static void pb_bytes(struct pb *b, int field, const void *d, size_t len)
{
    pb_key(b, field, WIRE_LEN);
    pb_varint(b, len);
    pb_put(b, d, len);
}

/* A nested message from its own buffer, which is then emptied for reuse. */
static void pb_sub(struct pb *b, int field, struct pb *sub)
{
    if (sub->oom)
        b->oom = 1;
    pb_bytes(b, field, sub->d, sub->n);
    sub->n = 0;
}

struct writer {
    const struct profile *p;
    struct strpool strs;
    struct pb top, m1, m2, packed;
    z_stream z;
    struct outfile of;
    int zerr;
};

static int64_t sidx(struct writer *w, const char *s)
{
    char buf[8192];
    uint32_t id = strpool_id(&w->strs, utf8_clean(s, buf, sizeof buf));
    if (id == UINT32_MAX) {
        w->top.oom = 1;
        return 0;
    }
    return id;
}

/* Compresses what top holds (all of it when finish) into the output file. */
static void drain(struct writer *w, int finish)
{
    unsigned char out[65536];
    w->z.next_in = w->top.d;
    w->z.avail_in = (uInt)w->top.n;
    int r;
    do {
        w->z.next_out = out;
        w->z.avail_out = sizeof out;
        r = deflate(&w->z, finish ? Z_FINISH : Z_NO_FLUSH);
        if (r == Z_STREAM_ERROR) {
            w->zerr = 1;
            return;
        }
        fwrite(out, 1, sizeof out - w->z.avail_out, w->of.f);
    } while (w->z.avail_out == 0 || (finish && r != Z_STREAM_END));
    w->top.n = 0;
}

static void maybe_drain(struct writer *w)
{
    if (w->top.n > (1u << 20) && !w->top.oom)
        drain(w, 0);
}

static void value_type(struct writer *w, int field, const char *type, const char *unit)
{
    pb_int(&w->m1, VALUETYPE_TYPE, sidx(w, type));
    pb_int(&w->m1, VALUETYPE_UNIT, sidx(w, unit));
    pb_sub(&w->top, field, &w->m1);
}

/* A label by its strings' table indexes (str < 0: a number label). */
static void label_ids(struct writer *w, int64_t key, int64_t str, int64_t num)
{
    pb_int(&w->m2, LABEL_KEY, key);
    if (str >= 0)
        pb_int(&w->m2, LABEL_STR, str);
    else
        pb_int(&w->m2, LABEL_NUM, num);
    pb_sub(&w->m1, SAMPLE_LABEL, &w->m2);
}

static void label(struct writer *w, const char *key, const char *str, int64_t num)
{
    int64_t k = sidx(w, key);
    label_ids(w, k, str ? sidx(w, str) : -1, num);
}

/* The table index of a string met again and again (a label key, a group's or a thread's name),
 * looked up once: *memo < 0 until then. The index is the one its first lookup gave, so the
 * table comes out as if every use looked it up. */
static int64_t sidx_memo(struct writer *w, int64_t *memo, const char *s)
{
    if (*memo < 0)
        *memo = sidx(w, s);
    return *memo;
}

/* The phases open around occurrence occ (those open when it began: its parents), outermost
 * first, as labels phase.0 (outermost) ... phase.N (occ itself, = the label phase); then the
 * attributes of their begin lines, each key once (the innermost phase's value wins), named as
 * the marker line names them, or attr.KEY where that is a label of ours. */
#define CHAIN_MAX 64
static void phase_labels(struct writer *w, int occ)
{
    const struct phases *ph = w->p->phases;
    int chain[CHAIN_MAX], n = 0;
    for (int k = occ; k >= 0 && n < CHAIN_MAX && (size_t)k < ph->n; k = ph->v[k].parent)
        chain[n++] = k;
    for (int i = n - 1, depth = 0; i >= 0; i--, depth++) {
        char key[32];
        snprintf(key, sizeof key, "phase.%d", depth);
        label(w, key, ph->v[chain[i]].name, 0);
    }
    char seen[PHASE_ATTRS_MAX * 4][PHASE_ATTR_BYTES + 1];
    size_t nseen = 0;
    for (int i = 0; i < n; i++) { /* innermost first: the first value of a key wins */
        const char *a = ph->v[chain[i]].attrs;
        while (a && *a) {
            const char *eq = strchr(a, '='), *nl = strchr(a, '\n');
            if (!nl)
                break;
            if (eq && eq < nl) {
                char kbuf[PHASE_ATTR_BYTES + 8], vbuf[PHASE_ATTR_BYTES + 1];
                int kl = (int)(eq - a);
                snprintf(vbuf, sizeof vbuf, "%.*s", (int)(nl - eq - 1), eq + 1);
                int ours = (kl == 5 && strncmp(a, "phase", 5) == 0) || strncmp(a, "phase.", 6) == 0 ||
                           (kl == 3 && (strncmp(a, "pid", 3) == 0 || strncmp(a, "tid", 3) == 0)) ||
                           (kl == 6 && strncmp(a, "thread", 6) == 0);
                snprintf(kbuf, sizeof kbuf, "%s%.*s", ours ? "attr." : "", kl, a);
                size_t j = 0;
                while (j < nseen && strcmp(seen[j], kbuf) != 0)
                    j++;
                if (j == nseen && nseen < sizeof seen / sizeof seen[0]) {
                    snprintf(seen[nseen++], sizeof seen[0], "%s", kbuf);
                    label(w, kbuf, vbuf, 0);
                }
            }
            a = nl + 1;
        }
    }
}

/* Replayed samples counted per (phase occurrence + 1 | thread << 32, node). */
struct occ_counts {
    struct writer *w;
    struct hmap counts;
    int oom;
};

static int count_occ(void *arg, const struct replay_sample *s)
{
    struct occ_counts *oc = arg;
    uint64_t key[2] = {(uint64_t)(uint32_t)(s->phase + 1) | (uint64_t)s->thread << 32, s->node};
    uint64_t *c = hmap_get(&oc->counts, key, NULL);
    if (!c) {
        oc->oom = 1;
        return 1;
    }
    (*c)++;
    return 0;
}

/* The same counts without reading the samples again, when every phase group is one
 * occurrence (a run that marks each phase once): a sample's innermost occurrence is then its
 * group's, so collecting's (group, thread, stack) counters are the occurrences' counts. 0 when
 * oc holds them, -1 when a group is more than one occurrence (oc left empty: replay). */
static int occ_from_counts(const struct profile *p, struct occ_counts *oc)
{
    size_t ng = prof_none_group(p);
    int *occ_of = malloc((ng ? ng : 1) * sizeof *occ_of);
    if (!occ_of)
        return -1;
    for (size_t g = 0; g < ng; g++)
        occ_of[g] = -1;
    int rc = 0;
    for (size_t i = 0; i < p->phases->n && rc == 0; i++) {
        size_t g = (size_t)p->phases->v[i].group;
        if (g >= ng || occ_of[g] >= 0)
            rc = -1;
        else
            occ_of[g] = (int)i;
    }
    for (size_t i = 0; i < p->counts.cap && rc == 0; i++) {
        uint32_t g = (uint32_t)(hmap_key(&p->counts, i)[0] & 0xffffffffu);
        if (p->counts.used[i] && g != ng && (g > ng || occ_of[g] < 0))
            rc = -1;
    }
    for (size_t i = 0; i < p->counts.cap && rc == 0; i++) {
        if (!p->counts.used[i])
            continue;
        const uint64_t *k = hmap_key(&p->counts, i);
        uint32_t g = (uint32_t)(k[0] & 0xffffffffu);
        uint64_t key[2] = {(uint64_t)(uint32_t)((g == ng ? -1 : occ_of[g]) + 1) | (k[0] >> 32) << 32, k[1]};
        uint64_t *c = hmap_get(&oc->counts, key, NULL);
        if (!c) {
            oc->oom = 1;
            break;
        }
        *c += p->counts.vals[i];
    }
    free(occ_of);
    return rc;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

static int write_all(struct writer *w, uint64_t *base)
{
    const struct profile *p = w->p;
    const struct symtab *st = &p->st;
    uint64_t period_ns = (uint64_t)(p->period_s * 1e9 + 0.5);

    value_type(w, PROFILE_SAMPLE_TYPE, "samples", "count");
    value_type(w, PROFILE_SAMPLE_TYPE, "cpu", "nanoseconds");
    value_type(w, PROFILE_PERIOD_TYPE, "cpu", "nanoseconds");
    pb_int(&w->top, PROFILE_PERIOD, (int64_t)period_ns);
    pb_int(&w->top, PROFILE_DEFAULT_SAMPLE_TYPE, sidx(w, "cpu"));
    if (p->meta.t0_wall_s > 0)
        pb_int(&w->top, PROFILE_TIME_NANOS, (int64_t)(p->meta.t0_wall_s * 1e9));
    uint64_t start = p->meta.t0_ns ? p->meta.t0_ns : p->first_ns, end = p->meta.end_ns > p->last_ns ? p->meta.end_ns : p->last_ns;
    if (end > start)
        pb_int(&w->top, PROFILE_DURATION_NANOS, (int64_t)(end - start));
    pb_int(&w->top, PROFILE_COMMENT, sidx(w, "perfscope-symbolize: phases, pids and threads are sample labels"));
    /* Which CPU time "cpu" counts (runmeta_cpu_counts): the type keeps the name every pprof
     * tool knows; the comment (go tool pprof -comments) says what it stands for. */
    const char *counts = runmeta_cpu_counts(&p->meta);
    if (counts)
        pb_int(&w->top, PROFILE_COMMENT,
               sidx(w, strcmp(counts, "user") == 0
                           ? "cpu: user CPU time only (perf task-clock, exclude_kernel): system time is not sampled"
                           : "cpu: user and system CPU time (the thread's CPU-time timer, on the scheduler tick)"));

    /* Samples: per (phase occurrence, thread, stack) from a replay of the samples (or the
     * counters, when each group is one occurrence), so each carries its occurrence's open
     * phases and attributes; the (group, thread, stack)
     * counters (innermost phase only) when the files changed since collecting. */
    struct occ_counts oc = {.w = w};
    hmap_init(&oc.counts, 2);
    int replayed = -1;
    if (p->phases && p->phases->n && (replayed = occ_from_counts(p, &oc)) != 0)
        replayed = prof_replay(p, 1, count_occ, &oc);
    const struct hmap *src = replayed == 0 ? &oc.counts : &p->counts;
    /* The labels' strings, looked up once each: keys, group names, thread names. */
    int64_t key_phase = -1, key_pid = -1, key_tid = -1, key_thread = -1;
    int64_t *group_id = malloc((p->ngroups ? p->ngroups : 1) * sizeof *group_id);
    int64_t *thread_id = malloc((p->nthr ? p->nthr : 1) * sizeof *thread_id);
    if (!group_id || !thread_id)
        w->top.oom = 1;
    for (size_t g = 0; group_id && g < p->ngroups; g++)
        group_id[g] = -1;
    for (size_t t = 0; thread_id && t < p->nthr; t++)
        thread_id[t] = -1;
    for (size_t i = 0; i < src->cap && !w->top.oom && !oc.oom; i++) {
        if (!src->used[i])
            continue;
        const uint64_t *k = hmap_key(src, i);
        uint64_t c = src->vals[i];
        uint32_t t = (uint32_t)(k[0] >> 32), lo = (uint32_t)(k[0] & 0xffffffffu);
        int occ = replayed == 0 ? (int)lo - 1 : -1;
        uint32_t g = replayed == 0 ? (occ >= 0 ? (uint32_t)p->phases->v[occ].group : prof_none_group(p)) : lo;
        const struct prof_thread *th = &p->thr[t];
        for (uint32_t n = (uint32_t)k[1]; n != 0; n = p->nodes[n].parent)
            pb_varint(&w->packed, (uint64_t)p->nodes[n].loc + 1);
        pb_sub(&w->m1, SAMPLE_LOCATION_ID, &w->packed);
        pb_varint(&w->packed, c);
        pb_varint(&w->packed, (uint64_t)((double)c * prof_thread_period(p, t) * 1e9 + 0.5));
        pb_sub(&w->m1, SAMPLE_VALUE, &w->packed);
        int64_t lk = sidx_memo(w, &key_phase, "phase");
        label_ids(w, lk, sidx_memo(w, &group_id[g], p->groups[g].name), 0);
        if (occ >= 0)
            phase_labels(w, occ);
        label_ids(w, sidx_memo(w, &key_pid, "pid"), -1, p->img[th->image].pid);
        label_ids(w, sidx_memo(w, &key_tid, "tid"), -1, th->tid);
        lk = sidx_memo(w, &key_thread, "thread");
        label_ids(w, lk, sidx_memo(w, &thread_id[t], th->comm[0] ? th->comm : "?"), 0);
        pb_sub(&w->top, PROFILE_SAMPLE, &w->m1);
        maybe_drain(w);
    }
    free(group_id);
    free(thread_id);
    hmap_free(&oc.counts);
    if (oc.oom)
        w->top.oom = 1;

    /* Mappings: a synthetic, non-overlapping range per module. pprof takes the first mapping
     * for the main binary: the run's executable goes first. */
    size_t exe = SIZE_MAX;
    for (size_t m = 0; m < st->nmods; m++)
        if (st->mods[m].kind == SYM_FILE && st->exe_path &&
            strcmp(symtab_str(st, st->mods[m].path), st->exe_path) == 0) {
            exe = m;
            break;
        }
    uint64_t next = 1ull << 32;
    if (exe == SIZE_MAX && st->exe_path) {
        /* The executable had no sample of its own: its mapping still comes first (pprof's
         * "File:"), holding no location (id past every module's). */
        pb_uint(&w->m1, MAPPING_ID, st->nmods + 1);
        pb_uint(&w->m1, MAPPING_START, next);
        pb_uint(&w->m1, MAPPING_LIMIT, next + 1);
        pb_int(&w->m1, MAPPING_FILENAME, sidx(w, st->exe_path));
        if (st->exe_build_id && *st->exe_build_id)
            pb_int(&w->m1, MAPPING_BUILD_ID, sidx(w, st->exe_build_id));
        pb_uint(&w->m1, MAPPING_HAS_FUNCTIONS, 1);
        pb_sub(&w->top, PROFILE_MAPPING, &w->m1);
        next += 1ull << 24;
    }
    if (exe == SIZE_MAX)
        exe = 0;
    for (size_t k = 0; k < st->nmods && !w->top.oom; k++) {
        size_t m = k == 0 ? exe : k <= exe ? k - 1 : k;
        const struct sym_module *mod = &st->mods[m];
        if (mod->shim)
            continue; /* no location is the shim's: its frames are left out */
        uint64_t size = mod->max_off ? mod->max_off : 1;
        base[m] = next;
        next = add_sat(add_sat(next, size), (1ull << 24)) & ~((1ull << 24) - 1);
        if (next <= base[m])
            next = base[m]; /* saturated: hostile offsets; ranges may touch, ids still right */
        int symbolized = mod->kind != SYM_FILE || mod->status == SYM_OK;
        pb_uint(&w->m1, MAPPING_ID, m + 1);
        pb_uint(&w->m1, MAPPING_START, base[m]);
        pb_uint(&w->m1, MAPPING_LIMIT, add_sat(base[m], size));
        pb_int(&w->m1, MAPPING_FILENAME, sidx(w, symtab_str(st, mod->path)));
        if (*mod->build_id)
            pb_int(&w->m1, MAPPING_BUILD_ID, sidx(w, mod->build_id));
        pb_uint(&w->m1, MAPPING_HAS_FUNCTIONS, 1);
        pb_uint(&w->m1, MAPPING_HAS_FILENAMES, (uint64_t)symbolized);
        pb_uint(&w->m1, MAPPING_HAS_LINE_NUMBERS, (uint64_t)symbolized);
        pb_uint(&w->m1, MAPPING_HAS_INLINE_FRAMES, (uint64_t)symbolized);
        pb_sub(&w->top, PROFILE_MAPPING, &w->m1);
    }

    /* Locations, inline chains innermost first. */
    for (size_t i = 0; i < st->nlocs && !w->top.oom; i++) {
        const struct sym_loc *l = &st->locs[i];
        pb_uint(&w->m1, LOCATION_ID, i + 1);
        pb_uint(&w->m1, LOCATION_MAPPING_ID, (uint64_t)l->module + 1);
        pb_uint(&w->m1, LOCATION_ADDRESS, add_sat(base[l->module], l->addr));
        for (uint32_t j = 0; j < l->nlines; j++) {
            const struct sym_line *ln = &st->lines[l->first + j];
            pb_uint(&w->m2, LINE_FUNCTION_ID, (uint64_t)ln->func + 1);
            pb_int(&w->m2, LINE_LINE, ln->line);
            pb_sub(&w->m1, LOCATION_LINE, &w->m2);
        }
        pb_sub(&w->top, PROFILE_LOCATION, &w->m1);
        maybe_drain(w);
    }

    /* Functions. */
    for (size_t i = 0; i < st->nfuncs && !w->top.oom; i++) {
        const struct sym_function *f = &st->funcs[i];
        pb_uint(&w->m1, FUNCTION_ID, i + 1);
        pb_int(&w->m1, FUNCTION_NAME, sidx(w, symtab_str(st, f->name)));
        pb_int(&w->m1, FUNCTION_SYSTEM_NAME, sidx(w, symtab_str(st, f->system_name)));
        pb_int(&w->m1, FUNCTION_FILENAME, sidx(w, symtab_str(st, f->path))); /* absolute */
        pb_int(&w->m1, FUNCTION_START_LINE, f->line);
        pb_sub(&w->top, PROFILE_FUNCTION, &w->m1);
        maybe_drain(w);
    }

    /* The string table last: every index above is final now. Index 0 is "". */
    for (size_t i = 0; i < w->strs.n && !w->top.oom; i++) {
        const char *s = strpool_str(&w->strs, (uint32_t)i);
        pb_bytes(&w->top, PROFILE_STRING_TABLE, s, strlen(s));
        maybe_drain(w);
    }
    return w->top.oom || w->m1.oom || w->m2.oom || w->packed.oom ? -1 : 0;
}

int export_pprof(const struct profile *p, char *err, size_t errlen)
{
    struct writer w;
    memset(&w, 0, sizeof w);
    w.p = p;
    int rc = -1;
    uint64_t *base = calloc(p->st.nmods ? p->st.nmods : 1, sizeof *base);
    if (!base || strpool_init(&w.strs) != 0) {
        free(base);
        strpool_free(&w.strs);
        snprintf(err, errlen, "%s/profile.pb.gz: out of memory", p->dir);
        return -1;
    }
    if (deflateInit2(&w.z, 1 /* fastest: speed over size */, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        snprintf(err, errlen, "%s/profile.pb.gz: zlib: cannot start gzip", p->dir);
        goto out_nozlib;
    }
    if (outfile_open(&w.of, p->dir, "profile.pb.gz", err, errlen) != 0)
        goto out;
    if (write_all(&w, base) != 0) {
        snprintf(err, errlen, "%s/profile.pb.gz: out of memory", p->dir);
        outfile_abort(&w.of);
        goto out;
    }
    drain(&w, 1);
    if (w.zerr) {
        snprintf(err, errlen, "%s/profile.pb.gz: zlib: compression failed", p->dir);
        outfile_abort(&w.of);
        goto out;
    }
    rc = outfile_commit(&w.of, err, errlen);
out:
    deflateEnd(&w.z);
out_nozlib:
    free(base);
    free(w.top.d);
    free(w.m1.d);
    free(w.m2.d);
    free(w.packed.d);
    strpool_free(&w.strs);
    return rc;
}
