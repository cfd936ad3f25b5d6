/* maps.c: reads cpuprof.*.maps snapshots (rules in maps.h). It must never trust a line's shape,
 * never keep a line longer than MAPS_LINE_CAP, and never store the same path twice. */
#include "maps.h"
#include "hmap.h"
#include "textfile.h"

#include <stdlib.h>
#include <string.h>

#define MAPS_LINE_CAP 8192 /* a path is at most PATH_MAX (4096) plus ~100 bytes of fields */

/* ---- interned paths: one copy of each, however many snapshots repeat it ---- */

static const char *intern(struct strpool *pool, const char *s)
{
    uint32_t id = strpool_id(pool, s);
    return id == UINT32_MAX ? NULL : strpool_str(pool, id);
}

/* ---- line parsing ---- */

/* "start-end perms offset dev inode [path]" -> e (path left in *path, trailing blanks cut). */
static int parse_line(char *line, struct maps_entry *e, char **path)
{
    const char *p = line;
    if (text_hex(&p, &e->start) || *p++ != '-' || text_hex(&p, &e->end) || text_blanks(&p))
        return -1;
    size_t np = strcspn(p, " \t");
    if (np == 0 || np > 4)
        return -1;
    memset(e->perms, 0, sizeof e->perms);
    memcpy(e->perms, p, np);
    p += np;
    if (text_blanks(&p) || text_hex(&p, &e->offset) || text_blanks(&p))
        return -1;
    size_t nd = strcspn(p, " \t"); /* device "fd:01": not used */
    if (nd == 0 || !strchr(p, ':') || (size_t)(strchr(p, ':') - p) >= nd)
        return -1;
    p += nd;
    if (text_blanks(&p) || text_dec(&p, &e->inode))
        return -1;
    if (*p != '\0' && text_blanks(&p))
        return -1;
    if (e->end <= e->start)
        return -1;
    char *q = (char *)p;
    text_rstrip(q);
    *path = q;
    return 0;
}

/* "# t=<ns>": 1 with *t set, 0 if a "# t=" line with a bad number, -1 if not such a line. */
static int parse_time_line(const char *line, uint64_t *t)
{
    if (strncmp(line, "# t=", 4) != 0)
        return -1;
    const char *p = line + 4;
    if (text_dec(&p, t) != 0)
        return 0;
    while (*p == ' ' || *p == '\t' || *p == '\r')
        p++;
    return *p == '\0' ? 1 : 0;
}

/* ---- building ---- */

static int by_start(const void *a, const void *b)
{
    const struct maps_entry *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int add_snapshot(struct maps *m, size_t *cap, uint64_t t)
{
    if (m->nsnap == *cap) {
        size_t ncap = *cap ? *cap * 2 : 4;
        struct maps_snapshot *s = realloc(m->snaps, ncap * sizeof *s);
        if (!s)
            return -1;
        m->snaps = s;
        *cap = ncap;
    }
    m->snaps[m->nsnap++] = (struct maps_snapshot){.t_ns = t};
    return 0;
}

static int add_entry(struct maps_snapshot *s, size_t *cap, const struct maps_entry *e)
{
    if (s->n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 64;
        struct maps_entry *v = realloc(s->entries, ncap * sizeof *v);
        if (!v)
            return -1;
        s->entries = v;
        *cap = ncap;
    }
    s->entries[s->n++] = *e;
    return 0;
}

/* Drops the last snapshot if it holds nothing. */
static void drop_if_empty(struct maps *m)
{
    if (m->nsnap && m->snaps[m->nsnap - 1].n == 0) {
        free(m->snaps[m->nsnap - 1].entries);
        m->nsnap--;
        m->empty_snapshots++;
    }
}

/* Stable ordering by time: insertion sort keeps file order on ties (snapshots are few and
 * nearly always already in order). */
static void sort_snapshots(struct maps *m)
{
    for (size_t i = 1; i < m->nsnap; i++) {
        struct maps_snapshot s = m->snaps[i];
        size_t j = i;
        while (j > 0 && m->snaps[j - 1].t_ns > s.t_ns) {
            m->snaps[j] = m->snaps[j - 1];
            j--;
        }
        m->snaps[j] = s;
    }
}

int maps_load(const char *path, struct maps **out, char *err, size_t errlen)
{
    *out = NULL;
    struct textfile tf;
    if (textfile_open(&tf, path, MAPS_LINE_CAP, err, errlen) != 0)
        return -1;
    struct maps *m = calloc(1, sizeof *m);
    struct strpool *strings = calloc(1, sizeof *strings);
    if (!m || !strings || strpool_init(strings) != 0) {
        if (strings)
            strpool_free(strings);
        free(m);
        free(strings);
        textfile_close(&tf);
        reader_error(err, errlen, path, "out of memory");
        return -1;
    }
    m->strings = strings;
    size_t snap_cap = 0, entry_cap = 0, lines = 0;
    int oom = 0, open_snapshot = 0;
    char *line;
    while (!oom && (line = textfile_next(&tf, NULL)) != NULL) {
        lines++;
        if (tf.too_long || tf.has_nul) {
            m->bad_lines++;
            continue;
        }
        uint64_t t;
        int tl = parse_time_line(line, &t);
        if (tl >= 0) {
            if (tl == 0) {
                m->bad_lines++;
                t = m->nsnap ? m->snaps[m->nsnap - 1].t_ns : 0;
            }
            drop_if_empty(m);
            oom = add_snapshot(m, &snap_cap, t) != 0;
            entry_cap = 0;
            open_snapshot = 1;
            continue;
        }
        if (line[strspn(line, " \t\r")] == '\0' || line[0] == '#')
            continue;
        struct maps_entry e;
        char *p;
        if (parse_line(line, &e, &p) != 0) {
            m->bad_lines++;
            continue;
        }
        if (tf.no_newline) { /* a cut write may have cut the path too */
            m->cut_lines++;
            continue;
        }
        if (!open_snapshot) {
            oom = add_snapshot(m, &snap_cap, 0) != 0;
            entry_cap = 0;
            open_snapshot = 1;
            if (oom)
                break;
        }
        e.path = intern(strings, p);
        oom = !e.path || add_entry(&m->snaps[m->nsnap - 1], &entry_cap, &e) != 0;
    }
    int failed = textfile_finish(&tf, path, oom, err, errlen) != 0;
    drop_if_empty(m);
    if (failed || m->nsnap == 0) {
        if (!failed && lines == 0)
            reader_error(err, errlen, path, "empty file (no mappings)");
        else if (!failed)
            reader_error(err, errlen, path, "no mapping line in %zu lines (not a maps file?)",
                         lines);
        maps_free(m);
        return -1;
    }
    for (size_t i = 0; i < m->nsnap; i++)
        qsort(m->snaps[i].entries, m->snaps[i].n, sizeof(struct maps_entry), by_start);
    sort_snapshots(m);
    *out = m;
    return 0;
}

void maps_free(struct maps *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->nsnap; i++)
        free(m->snaps[i].entries);
    free(m->snaps);
    if (m->strings)
        strpool_free(m->strings);
    free(m->strings);
    free(m);
}

static size_t snapshot_index(const struct maps *m, uint64_t t_ns)
{
    /* The last snapshot with t <= t_ns; the first one if none. */
    size_t lo = 0, hi = m->nsnap;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->snaps[mid].t_ns <= t_ns)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? lo - 1 : 0;
}

const struct maps_snapshot *maps_snapshot_at(const struct maps *m, uint64_t t_ns)
{
    return m->nsnap ? &m->snaps[snapshot_index(m, t_ns)] : NULL;
}

static const struct maps_entry *find_in(const struct maps_snapshot *s, uint64_t addr)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->entries[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const struct maps_entry *e = &s->entries[lo - 1];
    return addr < e->end ? e : NULL;
}

const struct maps_entry *maps_lookup(const struct maps *m, uint64_t addr, uint64_t t_ns)
{
    if (!m || m->nsnap == 0)
        return NULL;
    return find_in(&m->snaps[snapshot_index(m, t_ns)], addr);
}

const struct maps_entry *maps_lookup_near(const struct maps *m, uint64_t addr, uint64_t t_ns)
{
    if (!m || m->nsnap == 0)
        return NULL;
    size_t k = snapshot_index(m, t_ns);
    const struct maps_entry *e = find_in(&m->snaps[k], addr);
    for (size_t i = k; !e && i-- > 0;)
        e = find_in(&m->snaps[i], addr);
    for (size_t i = k + 1; !e && i < m->nsnap; i++)
        e = find_in(&m->snaps[i], addr);
    return e;
}
