/* phases.c: phases.jsonl into phase intervals and an innermost-phase timeline (rules in
 * phases.h). It must never parse JSON by hand (cJSON via jsonl.c), never keep a line's counters
 * (memory would grow with every boundary's zones), and never fail on one bad line. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* qsort_r: the Makefile defines it, a bare cc line may not */
#endif
#include "phases.h"
#include "jsonl.h"
#include "textfile.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static int valid_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > PHASE_NAME_MAX)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == '.' || *s == '-'))
            return 0;
    return 1;
}

static long long tokens_of(const cJSON *obj)
{
    unsigned long long v;
    const cJSON *attrs = cJSON_GetObjectItemCaseSensitive(obj, "attrs");
    if (cJSON_IsObject(attrs) && json_u64(attrs, "tokens", &v) == 0 && v <= (unsigned long long)LLONG_MAX)
        return (long long)v;
    if (json_u64(obj, "tokens", &v) == 0 && v <= (unsigned long long)LLONG_MAX)
        return (long long)v;
    return -1;
}

/* The "attrs" object as "key=value\n" lines (rules in phases.h); NULL when it holds none. */
static char *attrs_of(const cJSON *obj, int *oom)
{
    const cJSON *attrs = cJSON_GetObjectItemCaseSensitive(obj, "attrs"), *a;
    if (!cJSON_IsObject(attrs))
        return NULL;
    char buf[PHASE_ATTRS_MAX * (PHASE_ATTR_BYTES + 2)];
    size_t n = 0, kept = 0;
    cJSON_ArrayForEach(a, attrs)
    {
        if (kept == PHASE_ATTRS_MAX || !a->string || !*a->string)
            break;
        char val[64];
        const char *v = cJSON_IsString(a) && a->valuestring ? a->valuestring : NULL;
        if (!v && cJSON_IsNumber(a)) {
            snprintf(val, sizeof val, "%.17g", a->valuedouble);
            v = val;
        }
        int ok = v != NULL;
        for (const char *c = a->string; ok && *c; c++)
            ok = *c != '=' && (unsigned char)*c >= 0x20 && *c != 0x7f;
        if (!ok)
            continue;
        int len = snprintf(buf + n, PHASE_ATTR_BYTES + 1, "%s=%s", a->string, v);
        size_t w = len < 0 ? 0 : (size_t)len > PHASE_ATTR_BYTES ? PHASE_ATTR_BYTES : (size_t)len;
        for (size_t i = n; i < n + w; i++)
            if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
                buf[i] = '?';
        n += w;
        buf[n++] = '\n';
        kept++;
    }
    if (!n)
        return NULL;
    char *s = malloc(n + 1);
    if (!s) {
        *oom = 1;
        return NULL;
    }
    memcpy(s, buf, n);
    s[n] = '\0';
    return s;
}

struct load_state {
    struct phases *p;
    size_t cap;
    int oom;
};

static int take_line(cJSON *obj, size_t lineno, void *arg)
{
    struct load_state *st = arg;
    struct phases *p = st->p;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(obj, "name");
    const cJSON *event = cJSON_GetObjectItemCaseSensitive(obj, "event");
    const cJSON *source = cJSON_GetObjectItemCaseSensitive(obj, "source");
    unsigned long long t;
    int begin = -1;
    if (cJSON_IsString(event) && event->valuestring)
        begin = strcmp(event->valuestring, "begin") == 0 ? 1
                : strcmp(event->valuestring, "end") == 0 ? 0 : -1;
    if (begin < 0 || !cJSON_IsString(name) || !name->valuestring ||
        !valid_name(name->valuestring) || json_u64(obj, "t_ns", &t) != 0) {
        p->bad_lines++;
        if (!p->first_bad_line)
            p->first_bad_line = lineno;
        return 0;
    }
    if (p->nb == st->cap) {
        size_t ncap = st->cap ? st->cap * 2 : 64;
        struct phase_boundary *b = realloc(p->b, ncap * sizeof *b);
        if (!b) {
            st->oom = 1;
            return 1;
        }
        p->b = b;
        st->cap = ncap;
    }
    struct phase_boundary *b = &p->b[p->nb++];
    memset(b, 0, sizeof *b);
    b->t_ns = t;
    strcpy(b->name, name->valuestring);
    b->begin = begin;
    b->matched = begin;
    if (cJSON_IsString(source) && source->valuestring &&
        (strcmp(source->valuestring, "file") == 0 || strcmp(source->valuestring, "api") == 0))
        strcpy(b->source, source->valuestring);
    b->tokens = tokens_of(obj);
    b->lineno = lineno;
    b->attrs = attrs_of(obj, &st->oom);
    return st->oom;
}

static int by_time(const void *a, const void *b)
{
    const struct phase_boundary *x = a, *y = b;
    if (x->t_ns != y->t_ns)
        return x->t_ns < y->t_ns ? -1 : 1;
    return x->lineno < y->lineno ? -1 : x->lineno > y->lineno;
}

/* Groups in order of first begin, in O(n log n): a hostile file may hold a million names. */
static int by_name_then_index(const void *a, const void *b, void *phases)
{
    const struct phase *v = phases;
    int x = *(const int *)a, y = *(const int *)b;
    int c = strcmp(v[x].name, v[y].name);
    return c ? c : (x > y) - (x < y);
}

static int by_value(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static int assign_groups(struct phases *p)
{
    if (p->n == 0)
        return 0;
    int *idx = malloc(p->n * sizeof *idx), *firsts = malloc(p->n * sizeof *firsts);
    if (!idx || !firsts) {
        free(idx);
        free(firsts);
        return -1;
    }
    for (size_t i = 0; i < p->n; i++)
        idx[i] = (int)i;
    qsort_r(idx, p->n, sizeof *idx, by_name_then_index, p->v);
    size_t nf = 0;
    for (size_t i = 0; i < p->n; i++)
        if (i == 0 || strcmp(p->v[idx[i]].name, p->v[idx[i - 1]].name) != 0)
            firsts[nf++] = idx[i];
    qsort(firsts, nf, sizeof *firsts, by_value);
    for (size_t g = 0; g < nf; g++) {
        strcpy(p->groups[g], p->v[firsts[g]].name);
        p->v[firsts[g]].group = (int)g;
    }
    p->ngroups = nf;
    /* Group indexes by name, for phases_group_index's binary search. */
    p->group_sorted = malloc(nf * sizeof *p->group_sorted);
    if (!p->group_sorted) {
        free(idx);
        free(firsts);
        return -1;
    }
    for (size_t i = 0, g = 0; i < p->n; i++)
        if (i == 0 || strcmp(p->v[idx[i]].name, p->v[idx[i - 1]].name) != 0)
            p->group_sorted[g++] = p->v[idx[i]].group;
    /* Every other phase takes the group of the first phase of its name (the run head). */
    for (size_t i = 1; i < p->n; i++)
        if (strcmp(p->v[idx[i]].name, p->v[idx[i - 1]].name) == 0)
            p->v[idx[i]].group = p->v[idx[i - 1]].group;
    free(idx);
    free(firsts);
    return 0;
}

/* Records that `owner` is innermost from t on; a later change at the same t replaces it. */
static void set_owner(struct phases *p, uint64_t t, int owner)
{
    if (p->nspans && p->spans[p->nspans - 1].start_ns == t) {
        p->nspans--;
    }
    if (p->nspans && p->spans[p->nspans - 1].phase == owner)
        return;
    p->spans[p->nspans++] = (struct phase_span){.start_ns = t, .phase = owner};
}

/* Matches begins and ends in time order, building phases and the innermost-phase spans.
 * Linear in the boundaries whatever their order: each group keeps a chain of its open phases
 * (an end closes the chain's head), and the stack of all open phases drops closed entries only
 * when they reach its top. */
static int build(struct phases *p)
{
    size_t begins = 0;
    for (size_t i = 0; i < p->nb; i++)
        begins += (size_t)p->b[i].begin;
    size_t nv = begins ? begins : 1;
    p->v = calloc(nv, sizeof *p->v);
    p->groups = calloc(nv, sizeof *p->groups);
    p->spans = calloc(p->nb ? p->nb : 1, sizeof *p->spans);
    int *stack = calloc(nv, sizeof *stack);     /* open phases, closed ones dropped lazily */
    int *prev_same = calloc(nv, sizeof *prev_same); /* next older open phase of the group */
    int *head = calloc(nv, sizeof *head);       /* per group: newest open phase, -1 none */
    int rc = -1;
    if (!p->v || !p->groups || !p->spans || !stack || !prev_same || !head)
        goto out;
    for (size_t i = 0; i < p->nb; i++) {
        if (!p->b[i].begin)
            continue;
        struct phase *ph = &p->v[p->n++];
        strcpy(ph->name, p->b[i].name);
        ph->start_ns = ph->end_ns = p->b[i].t_ns;
        ph->tokens = p->b[i].tokens;
        ph->attrs = p->b[i].attrs;
        ph->open = 1;
    }
    if (assign_groups(p) != 0)
        goto out;
    for (size_t g = 0; g < nv; g++)
        head[g] = -1;
    size_t depth = 0, top = 0, next = 0;
    for (size_t i = 0; i < p->nb; i++) {
        struct phase_boundary *b = &p->b[i];
        if (b->begin) {
            int k = (int)next++;
            struct phase *ph = &p->v[k];
            ph->parent = top ? stack[top - 1] : -1;
            ph->depth = (int)depth++;
            prev_same[k] = head[ph->group];
            head[ph->group] = k;
            stack[top++] = k;
        } else {
            int g = phases_group_index(p, b->name);
            int k = g < 0 ? -1 : head[g];
            if (k < 0) {
                p->unmatched_ends++;
                continue;
            }
            struct phase *ph = &p->v[k];
            ph->end_ns = b->t_ns;
            ph->open = 0;
            if (b->tokens >= 0)
                ph->tokens = b->tokens;
            b->matched = 1;
            head[g] = prev_same[k];
            depth--;
            while (top && !p->v[stack[top - 1]].open)
                top--;
        }
        set_owner(p, b->t_ns, top ? stack[top - 1] : -1);
    }
    /* Phases never ended run to the run's end: the last boundary until told otherwise. */
    uint64_t last = p->nb ? p->b[p->nb - 1].t_ns : 0;
    for (size_t k = 0; k < p->n; k++)
        if (p->v[k].open)
            p->v[k].end_ns = last;
    p->unclosed = depth;
    rc = 0;
out:
    free(stack);
    free(prev_same);
    free(head);
    return rc;
}

int phases_load(const char *path, struct phases **out, char *err, size_t errlen)
{
    *out = NULL;
    struct phases *p = calloc(1, sizeof *p);
    if (!p) {
        reader_error(err, errlen, path, "out of memory");
        return -1;
    }
    struct load_state st = {.p = p};
    struct jsonl_stats js;
    if (jsonl_foreach(path, take_line, &st, &js, err, errlen) != 0) {
        phases_free(p);
        return -1;
    }
    p->lines = js.lines;
    p->bad_lines += js.bad;
    if (js.first_bad_line && (!p->first_bad_line || js.first_bad_line < p->first_bad_line))
        p->first_bad_line = js.first_bad_line;
    if (st.oom) {
        reader_error(err, errlen, path, "out of memory");
        phases_free(p);
        return -1;
    }
    if (p->nb > INT_MAX) {
        reader_error(err, errlen, path, "too many boundaries (%zu)", p->nb);
        phases_free(p);
        return -1;
    }
    if (p->nb == 0 && p->bad_lines > 0) {
        reader_error(err, errlen, path, "no phase boundary in %zu lines (first bad line %zu)",
                     p->lines, p->first_bad_line);
        phases_free(p);
        return -1;
    }
    if (p->nb) /* qsort's base must not be NULL, even for no element */
        qsort(p->b, p->nb, sizeof *p->b, by_time);
    if (build(p) != 0) {
        reader_error(err, errlen, path, "out of memory");
        phases_free(p);
        return -1;
    }
    *out = p;
    return 0;
}

void phases_free(struct phases *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nb; i++)
        free(p->b[i].attrs);
    free(p->b);
    free(p->v);
    free(p->spans);
    free(p->groups);
    free(p->group_sorted);
    free(p);
}

void phases_close_open(struct phases *p, uint64_t end_ns)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->v[i].open && p->v[i].end_ns < end_ns)
            p->v[i].end_ns = end_ns;
}

/* How many spans start at or before t_ns: lo when t_ns is in span lo - 1 (or before all). */
static int spans_before(const struct phases *p, uint64_t t_ns, size_t lo)
{
    return (lo == 0 || p->spans[lo - 1].start_ns <= t_ns) &&
           (lo == p->nspans || t_ns < p->spans[lo].start_ns);
}

int phases_at_hint(const struct phases *p, uint64_t t_ns, size_t *hint)
{
    size_t lo = *hint <= p->nspans ? *hint : 0;
    if (!spans_before(p, t_ns, lo)) {
        if (lo < p->nspans && spans_before(p, t_ns, lo + 1)) {
            lo++;
        } else {
            size_t hi = p->nspans;
            lo = 0;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (p->spans[mid].start_ns <= t_ns)
                    lo = mid + 1;
                else
                    hi = mid;
            }
        }
        *hint = lo;
    }
    return lo ? p->spans[lo - 1].phase : -1;
}

int phases_at(const struct phases *p, uint64_t t_ns)
{
    size_t hint = 0;
    return phases_at_hint(p, t_ns, &hint);
}

const char *phases_group_at(const struct phases *p, uint64_t t_ns)
{
    int i = phases_at(p, t_ns);
    return i < 0 ? PHASES_NONE : p->groups[p->v[i].group];
}

int phases_group_index(const struct phases *p, const char *name)
{
    size_t lo = 0, hi = p->ngroups;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int g = p->group_sorted[mid];
        int c = strcmp(p->groups[g], name);
        if (c == 0)
            return g;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}
