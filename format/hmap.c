/* hmap.c: open-addressing hash map with fixed-size keys, and a string pool (see hmap.h). It
 * must never lose an entry on a failed grow: the old table stays in place until the new one
 * is complete. */
#include "hmap.h"

#include <stdlib.h>
#include <string.h>

uint64_t hmap_hash(const uint64_t *w, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
    for (size_t i = 0; i < n; i++) {
        h ^= w[i] + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
        h *= 0xff51afd7ed558ccdULL;
        h ^= h >> 33;
    }
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 29;
    return h;
}

void hmap_init(struct hmap *m, unsigned key_words)
{
    memset(m, 0, sizeof *m);
    m->kw = key_words ? (key_words > HMAP_MAX_WORDS ? HMAP_MAX_WORDS : key_words) : 1;
}

void hmap_free(struct hmap *m)
{
    free(m->keys);
    free(m->vals);
    free(m->used);
    unsigned kw = m->kw;
    memset(m, 0, sizeof *m);
    m->kw = kw;
}

static inline __attribute__((always_inline)) int same(const uint64_t *a, const uint64_t *b, unsigned kw)
{
    for (unsigned i = 0; i < kw; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

/* The slot of key (1), or the empty slot where it would go (0); the table must have room. */
static inline __attribute__((always_inline)) int probe(const struct hmap *m, const uint64_t *key,
                                                       size_t *slot)
{
    size_t mask = m->cap - 1, j = hmap_hash(key, m->kw) & mask;
    while (m->used[j]) {
        if (same(m->keys + j * m->kw, key, m->kw)) {
            *slot = j;
            return 1;
        }
        j = (j + 1) & mask;
    }
    *slot = j;
    return 0;
}

uint64_t *hmap_find(const struct hmap *m, const uint64_t *key)
{
    size_t j;
    return m->cap && probe(m, key, &j) ? &m->vals[j] : NULL;
}

static int grow(struct hmap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    uint64_t *keys = malloc(cap * m->kw * sizeof *keys);
    uint64_t *vals = malloc(cap * sizeof *vals);
    unsigned char *used = calloc(cap, 1);
    if (!keys || !vals || !used) {
        free(keys);
        free(vals);
        free(used);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->used[i])
            continue;
        const uint64_t *k = m->keys + i * m->kw;
        size_t j = hmap_hash(k, m->kw) & (cap - 1);
        while (used[j])
            j = (j + 1) & (cap - 1);
        used[j] = 1;
        memcpy(keys + j * m->kw, k, m->kw * sizeof *k);
        vals[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    free(m->used);
    m->keys = keys;
    m->vals = vals;
    m->used = used;
    m->cap = cap;
    return 0;
}

uint64_t *hmap_get(struct hmap *m, const uint64_t *key, int *is_new)
{
    if (is_new)
        *is_new = 0;
    if ((m->n + 1) * 2 > m->cap && grow(m) != 0) /* at most half full: short probes */
        return NULL;
    size_t j;
    if (probe(m, key, &j))
        return &m->vals[j];
    m->used[j] = 1;
    memcpy(m->keys + j * m->kw, key, m->kw * sizeof *key);
    m->vals[j] = 0;
    m->n++;
    if (is_new)
        *is_new = 1;
    return &m->vals[j];
}

/* ---- id map ---- */

static size_t idmap_home(uint64_t key, size_t slots)
{
    key *= 0x9e3779b97f4a7c15ULL;
    return (size_t)(key ^ key >> 29) & (slots - 1);
}

uint32_t idmap_find(const struct idmap *m, uint64_t key)
{
    if (!m->slots)
        return 0;
    for (size_t j = idmap_home(key, m->slots); m->slot[j].id; j = (j + 1) & (m->slots - 1))
        if (m->slot[j].key == key)
            return m->slot[j].id;
    return 0;
}

static int idmap_grow(struct idmap *m)
{
    size_t slots = m->slots ? m->slots * 2 : 4096;
    struct idmap_slot *v = calloc(slots, sizeof *v);
    if (!v)
        return -1;
    for (size_t i = 0; i < m->slots; i++) {
        if (!m->slot[i].id)
            continue;
        size_t j = idmap_home(m->slot[i].key, slots);
        while (v[j].id)
            j = (j + 1) & (slots - 1);
        v[j] = m->slot[i];
    }
    free(m->slot);
    m->slot = v;
    m->slots = slots;
    return 0;
}

int idmap_put(struct idmap *m, uint64_t key, uint32_t id)
{
    if (!id || ((m->n + 1) * 2 > m->slots && idmap_grow(m) != 0)) /* at most half full */
        return -1;
    size_t j = idmap_home(key, m->slots);
    while (m->slot[j].id)
        j = (j + 1) & (m->slots - 1);
    m->slot[j] = (struct idmap_slot){key, id, 0};
    m->n++;
    return 0;
}

void idmap_free(struct idmap *m)
{
    free(m->slot);
    memset(m, 0, sizeof *m);
}

/* ---- string pool ---- */

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h ^ (h >> 29);
}

int strpool_init(struct strpool *p)
{
    memset(p, 0, sizeof *p);
    return strpool_id(p, "") == 0 ? 0 : -1;
}

void strpool_free(struct strpool *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->s[i]);
    free(p->s);
    free(p->slot);
    memset(p, 0, sizeof *p);
}

static int strpool_grow_index(struct strpool *p)
{
    size_t slots = p->slots ? p->slots * 2 : 256;
    uint32_t *slot = calloc(slots, sizeof *slot);
    if (!slot)
        return -1;
    for (size_t id = 0; id < p->n; id++) {
        size_t j = hash_str(p->s[id]) & (slots - 1);
        while (slot[j])
            j = (j + 1) & (slots - 1);
        slot[j] = (uint32_t)id + 1;
    }
    free(p->slot);
    p->slot = slot;
    p->slots = slots;
    return 0;
}

uint32_t strpool_id(struct strpool *p, const char *s)
{
    if (!s)
        s = "";
    if ((p->n + 1) * 2 > p->slots && strpool_grow_index(p) != 0)
        return UINT32_MAX;
    size_t j = hash_str(s) & (p->slots - 1);
    while (p->slot[j]) {
        uint32_t id = p->slot[j] - 1;
        if (strcmp(p->s[id], s) == 0)
            return id;
        j = (j + 1) & (p->slots - 1);
    }
    if (p->n >= UINT32_MAX - 1)
        return UINT32_MAX;
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 256;
        char **v = realloc(p->s, cap * sizeof *v);
        if (!v)
            return UINT32_MAX;
        p->s = v;
        p->cap = cap;
    }
    char *copy = strdup(s);
    if (!copy)
        return UINT32_MAX;
    p->s[p->n] = copy;
    p->slot[j] = (uint32_t)p->n + 1;
    return (uint32_t)p->n++;
}
