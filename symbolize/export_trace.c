/* export_trace.c: OUT/trace.json, Chrome trace events (the Perfetto UI and chrome://tracing
 * load it): process names (the image that ran, after exec) and thread names; each thread's
 * samples as complete ("X") slices on its own track, one per run of consecutive samples with
 * the same leaf function (named by it; "sf": its stack's innermost frame in the top-level
 * "stackFrames" dictionary, which holds each call tree node the slices reach once; args:
 * samples, truncated); the phases as complete ("X") spans on the leader
 * process, on "phases" tracks laid out so that spans on one track always nest; power (W, from
 * RAPL energy deltas and NVML) and memory (MiB: the run's RssAnon, per process, GPU memory) as
 * counter ("C") tracks from counters.jsonl. Timestamps are microseconds since the run's t0.
 *
 * Events are printed one at a time (cJSON, or fprintf with names cJSON escaped once for the
 * sample slices, of which there can be one a sample), so memory stays flat however long the run:
 * what it keeps grows with call tree nodes and functions, never with samples. It must never
 * write other than through outfile.c, and never let a bad counters line stop it. */
#include "tables.h"
#include "replay.h"
#include "runfolder.h"
#include "counterline.h"
#include "jsonl.h"
#include "outfile.h"
#include "utf8.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PHASE_TID_BASE 0x7f000000L /* above any pid_max: phase tracks never meet a real thread */
#define MAX_LANES 64
#define LANE_DEPTH 64
#define MAX_ZONES 64

struct trace {
    const struct profile *p;
    struct outfile of;
    uint64_t base_ns;
    long pid;               /* where run-wide tracks go: the leader */
    size_t events;
    int oom;
    /* previous energy readings, for power */
    struct zone {
        char key[96];
        double uj;
        unsigned long long t_ns;
        int have;
    } zones[MAX_ZONES];
    size_t nzones;
    /* phase lanes: the ends of the spans open on each */
    uint64_t stack_end[MAX_LANES][LANE_DEPTH];
    size_t depth[MAX_LANES];
    int lane_named[MAX_LANES];
    /* per thread: the run of samples with one leaf function being gathered */
    struct run {
        uint64_t count, first_ns, last_ns;
        uint64_t gap_ns;    /* the thread's RUN_GAP_PERIODS periods, once (not a sample) */
        uint32_t leaf, node;
    } *runs;
    int samples_complete;
    uint32_t *frame0;       /* per call tree node: the id of its innermost stack frame */
    uint32_t *leaf;         /* per node: its innermost function (one load a sample, not three) */
    unsigned char *used;    /* per node: a slice's stack holds it (written to stackFrames) */
    char **fname;           /* per function: its name as a JSON string, once printed */
    size_t *fname_len;
    char *slice;            /* SLICE_MAX bytes: one sample slice's text */
};

static double us_of(const struct trace *t, uint64_t ns)
{
    return ((double)ns - (double)t->base_ns) / 1000.0;
}

static void emit(struct trace *t, cJSON *ev)
{
    if (!ev) {
        t->oom = 1;
        return;
    }
    char *s = cJSON_PrintUnformatted(ev);
    cJSON_Delete(ev);
    if (!s) {
        t->oom = 1;
        return;
    }
    fputs(t->events++ ? ",\n" : "\n", t->of.f);
    fputs(s, t->of.f);
    free(s);
}

static cJSON *event(const char *name, const char *ph, long pid, long tid)
{
    cJSON *e = cJSON_CreateObject();
    if (!e)
        return NULL;
    char buf[8192];
    cJSON_AddStringToObject(e, "name", utf8_clean(name, buf, sizeof buf));
    cJSON_AddStringToObject(e, "ph", ph);
    cJSON_AddNumberToObject(e, "pid", (double)pid);
    cJSON_AddNumberToObject(e, "tid", (double)tid);
    return e;
}

static void name_meta(struct trace *t, const char *what, long pid, long tid, const char *name)
{
    cJSON *e = event(what, "M", pid, tid);
    if (e)
    {
        char buf[8192];
        cJSON_AddStringToObject(cJSON_AddObjectToObject(e, "args"), "name", utf8_clean(name, buf, sizeof buf));
    }
    emit(t, e);
}

/* A process is named after the last image that ran in it (what exec started), else after its
 * file; the viewers add "(pid N)" themselves. */
static void names(struct trace *t)
{
    const struct profile *p = t->p;
    for (size_t i = 0; i < p->nimg; i++) {
        if (i + 1 < p->nimg && p->img[i + 1].pid == p->img[i].pid)
            continue; /* a later image of this pid follows: it names the process */
        const char *exe = NULL;
        for (size_t j = i + 1; j-- > 0 && p->img[j].pid == p->img[i].pid;)
            if (p->img[j].exe) {
                exe = p->img[j].exe;
                break;
            }
        const char *base = exe ? strrchr(exe, '/') : NULL;
        base = base ? base + 1 : exe;
        name_meta(t, "process_name", p->img[i].pid, 0, base && *base ? base : p->img[i].file);
    }
    for (size_t i = 0; i < p->nthr; i++)
        name_meta(t, "thread_name", p->img[p->thr[i].image].pid, p->thr[i].tid,
                  p->thr[i].comm[0] ? p->thr[i].comm : "?");
}

/* ---- samples: one slice per run of a thread's samples with one leaf function ---- */

#define RUN_GAP_PERIODS 10 /* a pause longer than this many periods ends a run */

/* A function's name as a JSON string (quotes included), printed by cJSON once per function and
 * kept: a slice costs one lookup, not one escape, however many slices name it. */
static const char *func_json(struct trace *t, uint32_t func, size_t *len)
{
    if (!t->fname[func]) {
        const struct symtab *st = &t->p->st;
        char buf[8192];
        cJSON *s = cJSON_CreateString(utf8_clean(symtab_str(st, st->funcs[func].name), buf, sizeof buf));
        t->fname[func] = s ? cJSON_PrintUnformatted(s) : NULL;
        cJSON_Delete(s);
        if (!t->fname[func]) {
            t->oom = 1;
            *len = 3;
            return "\"?\"";
        }
        t->fname_len[func] = strlen(t->fname[func]);
    }
    *len = t->fname_len[func];
    return t->fname[func];
}

/* A slice's text is put together in a buffer and written with one fwrite: the appenders below
 * never write past SLICE_MAX (the name is at most 6 x 8192 bytes escaped, the rest < 300). */
#define SLICE_MAX (6 * 8192 + 512)

static char *put_str(char *o, const char *s, size_t n)
{
    memcpy(o, s, n);
    return o + n;
}

#define PUT_LIT(o, lit) put_str(o, lit, sizeof lit - 1)

static char *put_u64(char *o, uint64_t v)
{
    char d[20];
    size_t n = 0;
    do
        d[n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    while (n)
        *o++ = d[--n];
    return o;
}

/* Nanoseconds as JSON microseconds, exactly (three decimals at most, trailing zeros cut). */
static char *put_us(char *o, int64_t ns)
{
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    unsigned frac = (unsigned)(a % 1000);
    if (ns < 0)
        *o++ = '-';
    o = put_u64(o, a / 1000);
    if (frac) {
        *o++ = '.';
        for (unsigned div = 100; frac; div /= 10) {
            *o++ = (char)('0' + frac / div);
            frac %= div;
        }
    }
    return o;
}

/* The stack frame ids: node nd's inline chain (innermost first) is frames frame0[nd] ..
 * frame0[nd] + nlines - 1, so a slice's "sf" (its innermost frame) is known before the
 * dictionary is written, and the dictionary holds each call tree node once. */
static int frame_ids(struct trace *t)
{
    const struct profile *p = t->p;
    t->frame0 = calloc(p->nnodes ? p->nnodes : 1, sizeof *t->frame0);
    t->leaf = calloc(p->nnodes ? p->nnodes : 1, sizeof *t->leaf);
    t->used = calloc(p->nnodes ? p->nnodes : 1, 1);
    t->fname = calloc(p->st.nfuncs ? p->st.nfuncs : 1, sizeof *t->fname);
    t->fname_len = calloc(p->st.nfuncs ? p->st.nfuncs : 1, sizeof *t->fname_len);
    t->slice = malloc(SLICE_MAX);
    if (!t->frame0 || !t->leaf || !t->used || !t->fname || !t->fname_len || !t->slice)
        return -1;
    uint64_t next = 1;
    for (size_t nd = 1; nd < p->nnodes; nd++) {
        if (next > UINT32_MAX)
            return -1;
        t->frame0[nd] = (uint32_t)next;
        t->leaf[nd] = symtab_leaf_func(&p->st, p->nodes[nd].loc);
        next += p->st.locs[p->nodes[nd].loc].nlines;
    }
    return 0;
}

/* Marks node and its callers for the dictionary (NODE_USED) and returns whether its stack was
 * cut (NODE_CUT: its outermost node is PROF_TRUNCATED, as prof_node_truncated says), learnt once
 * per node: a stack met again costs one load, not a walk to the root through scattered nodes. */
#define NODE_USED 1
#define NODE_CUT 2
static int mark_stack(struct trace *t, uint32_t node)
{
    const struct profile *p = t->p;
    uint32_t nd = node, top = 0;
    while (nd && !t->used[nd]) {
        top = nd;
        nd = p->nodes[nd].parent;
    }
    unsigned char bits = NODE_USED;
    if (nd ? t->used[nd] & NODE_CUT : top && top == p->trunc_node)
        bits |= NODE_CUT;
    for (uint32_t m = node; m != nd; m = p->nodes[m].parent)
        t->used[m] = bits;
    return node && (t->used[node] & NODE_CUT);
}

/* The run r of thread th as an "X" slice on the thread's track: from its first sample to one
 * period after its last, cut short where the thread's next run starts (next_ns, 0: none), so
 * the slices of a track never overlap. Its stack is "sf", the innermost frame of its first
 * sample's node in "stackFrames"; that node and its callers are marked for the dictionary. */
static void emit_run(struct trace *t, uint32_t th, const struct run *r, uint64_t next_ns)
{
    const struct profile *p = t->p;
    uint64_t period = (uint64_t)(prof_thread_period(p, th) * 1e9 + 0.5);
    uint64_t end = r->last_ns + period;
    if (next_ns && next_ns <= end) /* 1 ns short of it: microseconds in a double never overlap */
        end = next_ns > r->first_ns + 1 ? next_ns - 1 : r->first_ns;
    int cut = mark_stack(t, r->node);
    char *o = t->slice;
    if (t->events++)
        *o++ = ',';
    o = PUT_LIT(o, "\n{\"name\":");
    size_t nlen;
    const char *name = func_json(t, r->leaf, &nlen);
    o = put_str(o, name, nlen);
    o = PUT_LIT(o, ",\"ph\":\"X\",\"pid\":");
    long pid = p->img[p->thr[th].image].pid;
    if (pid < 0)
        *o++ = '-';
    o = put_u64(o, pid < 0 ? (uint64_t)0 - (uint64_t)pid : (uint64_t)pid);
    o = PUT_LIT(o, ",\"tid\":");
    o = put_u64(o, p->thr[th].tid);
    o = PUT_LIT(o, ",\"cat\":\"sample\",\"ts\":");
    o = put_us(o, (int64_t)(r->first_ns - t->base_ns));
    o = PUT_LIT(o, ",\"dur\":");
    o = put_us(o, (int64_t)(end - r->first_ns));
    o = PUT_LIT(o, ",\"sf\":");
    o = put_u64(o, t->frame0[r->node]);
    o = PUT_LIT(o, ",\"args\":{\"samples\":");
    o = put_u64(o, r->count);
    if (cut)
        o = PUT_LIT(o, ",\"truncated\":true");
    o = PUT_LIT(o, "}}");
    fwrite_unlocked(t->slice, 1, (size_t)(o - t->slice), t->of.f); /* the stream is this thread's */
}

static int sample_slice(void *arg, const struct replay_sample *s)
{
    struct trace *t = arg;
    const struct profile *p = t->p;
    struct run *r = &t->runs[s->thread];
    uint32_t leaf = s->node ? t->leaf[s->node] : symtab_leaf_func(&p->st, p->nodes[0].loc);
    if (r->count &&
        (leaf != r->leaf || s->time_ns < r->last_ns || s->time_ns - r->last_ns > r->gap_ns)) {
        emit_run(t, s->thread, r, s->time_ns >= r->last_ns ? s->time_ns : 0);
        r->count = 0;
    }
    if (!r->count) {
        r->leaf = leaf;
        r->node = s->node;
        r->first_ns = s->time_ns;
    }
    r->last_ns = s->time_ns;
    r->count++;
    return t->oom;
}

static void samples(struct trace *t)
{
    const struct profile *p = t->p;
    t->runs = calloc(p->nthr ? p->nthr : 1, sizeof *t->runs);
    if (!t->runs || frame_ids(t) != 0) {
        t->oom = 1;
        return;
    }
    for (uint32_t th = 0; th < p->nthr; th++)
        t->runs[th].gap_ns = (uint64_t)(prof_thread_period(p, th) * 1e9 * RUN_GAP_PERIODS);
    t->samples_complete = prof_replay(p, 0, sample_slice, t) == 0;
    for (uint32_t th = 0; th < p->nthr && !t->oom; th++)
        if (t->runs[th].count)
            emit_run(t, th, &t->runs[th], 0);
    free(t->runs);
    t->runs = NULL;
}

/* "stackFrames": every frame of the nodes the slices reached, id -> {name, category (the
 * module), parent (the next frame out; none at the outermost)}. */
static void stack_frames(struct trace *t)
{
    const struct profile *p = t->p;
    const struct symtab *st = &p->st;
    FILE *f = t->of.f;
    char **mname = calloc(st->nmods ? st->nmods : 1, sizeof *mname);
    if (!mname) {
        t->oom = 1;
        return;
    }
    fputs(",\"stackFrames\":{", f);
    int first = 1;
    for (size_t nd = 1; nd < p->nnodes && t->used && !t->oom; nd++) {
        if (!t->used[nd])
            continue;
        const struct sym_loc *l = &st->locs[p->nodes[nd].loc];
        if (!mname[l->module]) {
            char buf[8192];
            cJSON *s = cJSON_CreateString(utf8_clean(symtab_str(st, st->mods[l->module].name), buf, sizeof buf));
            mname[l->module] = s ? cJSON_PrintUnformatted(s) : NULL;
            cJSON_Delete(s);
            if (!mname[l->module]) {
                t->oom = 1;
                break;
            }
        }
        for (uint32_t j = 0; j < l->nlines; j++) {
            unsigned long long id = t->frame0[nd] + j, parent = 0;
            if (j + 1 < l->nlines)
                parent = id + 1;
            else if (p->nodes[nd].parent)
                parent = t->frame0[p->nodes[nd].parent];
            size_t nlen;
            const char *name = func_json(t, st->lines[l->first + j].func, &nlen);
            fprintf(f, "%s\n\"%llu\":{\"name\":%s,\"category\":%s", first ? "" : ",", id, name,
                    mname[l->module]);
            if (parent)
                fprintf(f, ",\"parent\":\"%llu\"", parent);
            fputc('}', f);
            first = 0;
        }
    }
    fputs("\n}", f);
    for (size_t i = 0; i < st->nmods; i++)
        free(mname[i]);
    free(mname);
}

/* Phases in begin order onto lanes: a lane takes a phase when, once the spans that ended
 * before it are popped, the innermost open span holds it entirely. */
static void phases(struct trace *t)
{
    const struct phases *ph = t->p->phases;
    if (!ph || !ph->n)
        return;
    for (size_t i = 0; i < ph->n && !t->oom; i++) {
        const struct phase *v = &ph->v[i];
        size_t lane = 0;
        for (; lane < MAX_LANES; lane++) {
            size_t *d = &t->depth[lane];
            while (*d && t->stack_end[lane][*d - 1] <= v->start_ns)
                (*d)--;
            if (*d < LANE_DEPTH && (!*d || t->stack_end[lane][*d - 1] >= v->end_ns))
                break;
        }
        if (lane == MAX_LANES)
            continue; /* more overlapping phases than lanes: left out of the trace */
        if (!t->lane_named[lane]) {
            char buf[32];
            snprintf(buf, sizeof buf, lane ? "phases %zu" : "phases", lane + 1);
            name_meta(t, "thread_name", t->pid, PHASE_TID_BASE + (long)lane, buf);
            t->lane_named[lane] = 1;
        }
        t->stack_end[lane][t->depth[lane]++] = v->end_ns;
        cJSON *e = event(v->name, "X", t->pid, PHASE_TID_BASE + (long)lane);
        if (!e) {
            t->oom = 1;
            break;
        }
        cJSON_AddStringToObject(e, "cat", "phase");
        cJSON_AddNumberToObject(e, "ts", us_of(t, v->start_ns));
        cJSON_AddNumberToObject(e, "dur", (double)(v->end_ns - v->start_ns) / 1000.0);
        cJSON *args = cJSON_AddObjectToObject(e, "args");
        if (v->tokens >= 0)
            cJSON_AddNumberToObject(args, "tokens", (double)v->tokens);
        if (v->open)
            cJSON_AddBoolToObject(args, "never_ended", 1);
        emit(t, e);
    }
}

/* A counter ("C") event: the series in args (taken; nothing is written when it holds none) at ts
 * on process pid's counter track called name. */
static void emit_counter(struct trace *t, const char *name, long pid, double ts, cJSON *args)
{
    if (cJSON_GetArraySize(args) == 0) {
        cJSON_Delete(args);
        return;
    }
    cJSON *e = event(name, "C", pid, 0);
    if (e) {
        cJSON_AddNumberToObject(e, "ts", ts);
        cJSON_AddItemToObject(e, "args", args);
    } else {
        cJSON_Delete(args);
    }
    emit(t, e);
}

/* Watts from the energy counter `key` (microjoules, stepped by counter_step) read at t_ns; < 0
 * when not yet known. */
static double power_from(struct trace *t, const char *key, double uj, double range,
                         unsigned long long t_ns)
{
    size_t i = 0;
    while (i < t->nzones && strcmp(t->zones[i].key, key) != 0)
        i++;
    if (i == t->nzones) {
        if (t->nzones == MAX_ZONES)
            return -1;
        snprintf(t->zones[t->nzones++].key, sizeof t->zones[0].key, "%s", key);
    }
    struct zone *z = &t->zones[i];
    double w = -1;
    if (z->have) {
        double d;
        if (counter_step(z->uj, uj, range, &d) == COUNTER_BACKSTEP)
            return -1; /* out of order: the larger value stays the reference */
        if (t_ns > z->t_ns)
            w = d / ((double)(t_ns - z->t_ns) * 1e-3);
    }
    z->uj = uj;
    z->t_ns = t_ns;
    z->have = 1;
    return w;
}

static int counters_line(cJSON *o, size_t lineno, void *arg)
{
    (void)lineno;
    struct trace *t = arg;
    unsigned long long t_ns;
    if (json_u64(o, "t_ns", &t_ns) != 0)
        return 0;
    struct counter_line cl;
    counterline_read(o, &cl);
    cJSON *power = cJSON_CreateObject(), *mem = cJSON_CreateObject();
    if (!power || !mem) {
        cJSON_Delete(power);
        cJSON_Delete(mem);
        t->oom = 1;
        return 1;
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, cl.rapl)
    {
        struct counter_zone z;
        if (counterline_zone(it, &z) != 0 || isnan(z.energy_uj))
            continue;
        char key[96];
        if (z.name && *z.name)
            snprintf(key, sizeof key, "%s (%s)", z.name, z.zone);
        else
            snprintf(key, sizeof key, "%s", z.zone);
        double w = power_from(t, key, z.energy_uj, z.max_range_uj, t_ns);
        if (w >= 0) {
            utf8_sanitize(key);
            cJSON_AddNumberToObject(power, key, w);
        }
    }
    cJSON_ArrayForEach(it, cl.gpus)
    {
        struct counter_gpu g;
        if (counterline_gpu(it, &g) != 0)
            continue;
        char key[64];
        snprintf(key, sizeof key, "gpu%d", g.index);
        if (!isnan(g.power_mw))
            cJSON_AddNumberToObject(power, key, g.power_mw / 1000.0);
        else if (!isnan(g.energy_mj)) {
            double w = power_from(t, key, g.energy_mj * 1000.0, 0, t_ns);
            if (w >= 0)
                cJSON_AddNumberToObject(power, key, w);
        }
        double mib = !isnan(g.run_mem_mib) ? g.run_mem_mib : g.mem_used_mib;
        if (!isnan(mib))
            cJSON_AddNumberToObject(mem, key, mib);
    }
    if (!isnan(cl.rss_anon_kib))
        cJSON_AddNumberToObject(mem, "host anon (run)", cl.rss_anon_kib / 1024.0);
    double ts = us_of(t, t_ns);
    emit_counter(t, "power (W)", t->pid, ts, power);
    emit_counter(t, "memory (MiB)", t->pid, ts, mem);
    /* Each process's own RssAnon on its own track. */
    const cJSON *bp;
    cJSON_ArrayForEach(bp, cJSON_GetObjectItemCaseSensitive(o, "rss_anon_by_pid"))
    {
        char *end;
        long pid = bp->string ? strtol(bp->string, &end, 10) : 0;
        if (!bp->string || *end || pid <= 0 || !cJSON_IsNumber(bp) || bp->valuedouble < 0)
            continue;
        cJSON *args = cJSON_CreateObject();
        if (!cJSON_AddNumberToObject(args, "MiB", bp->valuedouble / 1024.0)) {
            cJSON_Delete(args);
            t->oom = 1;
            break;
        }
        emit_counter(t, "rss anon (MiB)", pid, ts, args);
    }
    return t->oom;
}

static void counters(struct trace *t)
{
    char path[4200], err[512];
    runfolder_path(path, sizeof path, t->p->dir, RUN_COUNTERS, NULL, 0);
    struct jsonl_stats js;
    /* A missing or unreadable counters file only means no counter tracks. */
    jsonl_foreach(path, counters_line, t, &js, err, sizeof err);
}

int export_trace(const struct profile *p, char *err, size_t errlen)
{
    struct trace *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, errlen, "%s/trace.json: out of memory", p->dir);
        return -1;
    }
    t->p = p;
    t->pid = p->meta.pid ? p->meta.pid : p->nimg ? p->img[0].pid : 0;
    t->base_ns = p->meta.t0_ns ? p->meta.t0_ns : p->first_ns;
    if (p->phases && p->phases->nb && (!t->base_ns || p->phases->b[0].t_ns < t->base_ns))
        t->base_ns = p->phases->b[0].t_ns;
    if (outfile_open(&t->of, p->dir, "trace.json", err, errlen) != 0) {
        free(t);
        return -1;
    }
    fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[", t->of.f);
    names(t);
    phases(t);
    counters(t);
    samples(t);
    fputs("\n]", t->of.f);
    stack_frames(t);
    fprintf(t->of.f, ",\"otherData\":{\"generator\":\"perfscope-symbolize\",\"t0_ns\":%llu,"
            "\"samples_complete\":%s}}\n",
            (unsigned long long)t->base_ns, t->samples_complete ? "true" : "false");
    int rc;
    if (t->oom) {
        snprintf(err, errlen, "%s/trace.json: out of memory", p->dir);
        outfile_abort(&t->of);
        rc = -1;
    } else {
        rc = outfile_commit(&t->of, err, errlen);
    }
    for (size_t i = 0; t->fname && i < p->st.nfuncs; i++)
        free(t->fname[i]);
    free(t->fname);
    free(t->fname_len);
    free(t->slice);
    free(t->frame0);
    free(t->leaf);
    free(t->used);
    free(t);
    return rc;
}
