/* perfmap.c: /tmp/perf-<pid>.map reader (rules in perfmap.h). It must never trust a line's
 * shape and never scan more than a bounded number of entries per lookup. */
#include "perfmap.h"
#include "textfile.h"

#include <stdlib.h>
#include <string.h>

#define LOOKUP_SCAN 256 /* overlapping entries examined per lookup, at most */

/* A hex number, with or without 0x. */
static int take_hex(const char **p, uint64_t *v)
{
    const char *s = *p;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        s += 2;
    if (text_hex(&s, v) != 0)
        return -1;
    *p = s;
    return 0;
}

static int parse(char *line, uint64_t *start, uint64_t *size, char **name)
{
    const char *p = line;
    if (take_hex(&p, start) != 0 || text_blanks(&p) != 0 || take_hex(&p, size) != 0 ||
        text_blanks(&p) != 0)
        return -1;
    char *n = (char *)p;
    if (!text_rstrip(n) || *size == 0 || *start + *size < *start)
        return -1;
    for (char *c = n; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    *name = n;
    return 0;
}

static int by_start(const void *a, const void *b)
{
    const struct perfmap_entry *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

int perfmap_load(const char *path, struct perfmap **out, char *err, size_t errlen)
{
    *out = NULL;
    struct textfile tf;
    if (textfile_open(&tf, path, PERFMAP_LINE_CAP, err, errlen) != 0)
        return -1;
    struct perfmap *pm = calloc(1, sizeof *pm);
    size_t cap = 0;
    int oom = !pm;
    char *line;
    while (!oom && (line = textfile_next(&tf, NULL)) != NULL) {
        uint64_t start, size;
        char *name;
        if (line[strspn(line, " \t\r")] == '\0')
            continue;
        if (tf.too_long || tf.has_nul || tf.no_newline || parse(line, &start, &size, &name)) {
            pm->bad_lines++;
            continue;
        }
        if (pm->n == cap) {
            size_t ncap = cap ? cap * 2 : 256;
            struct perfmap_entry *v = realloc(pm->v, ncap * sizeof *v);
            if (!v) {
                oom = 1;
                break;
            }
            pm->v = v;
            cap = ncap;
        }
        char *copy = strdup(name);
        if (!copy) {
            oom = 1;
            break;
        }
        pm->v[pm->n] = (struct perfmap_entry){start, start + size, pm->n, copy};
        pm->n++;
        if (size > pm->max_len)
            pm->max_len = size;
    }
    int failed = textfile_finish(&tf, path, oom, err, errlen) != 0;
    if (failed || !pm->n) {
        if (!failed)
            reader_error(err, errlen, path, "no \"START SIZE name\" line (%zu bad lines)",
                         pm->bad_lines);
        perfmap_free(pm);
        return -1;
    }
    qsort(pm->v, pm->n, sizeof *pm->v, by_start);
    *out = pm;
    return 0;
}

void perfmap_free(struct perfmap *pm)
{
    if (!pm)
        return;
    for (size_t i = 0; i < pm->n; i++)
        free(pm->v[i].name);
    free(pm->v);
    free(pm);
}

const struct perfmap_entry *perfmap_lookup(const struct perfmap *pm, uint64_t addr)
{
    if (!pm || !pm->n)
        return NULL;
    size_t lo = 0, hi = pm->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (pm->v[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    const struct perfmap_entry *best = NULL;
    for (size_t i = lo, k = 0; i-- > 0 && k < LOOKUP_SCAN; k++) {
        const struct perfmap_entry *e = &pm->v[i];
        if (addr - e->start >= pm->max_len)
            break; /* every earlier entry starts too far below to hold addr */
        if (addr < e->end && (!best || e->order > best->order))
            best = e;
    }
    return best;
}
