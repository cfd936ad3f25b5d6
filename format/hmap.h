/* hmap.h: the symbolizer's containers: a hash map from fixed-size keys (1..4 u64 words)
 * to a u64 value, an id map (a compact index from a u64 key to a u32 id), and a string pool
 * that gives each distinct string one small id. Everything
 * the symbolizer counts or caches goes through these, so memory grows with distinct keys
 * (addresses, stacks, functions), never with samples. They must never abort: an allocation
 * failure is returned to the caller, which reports it as "out of memory". */
#ifndef PERFSCOPE_HMAP_H
#define PERFSCOPE_HMAP_H

#include <stddef.h>
#include <stdint.h>

#define HMAP_MAX_WORDS 4

struct hmap {
    unsigned kw;       /* words per key */
    size_t cap, n;     /* capacity (power of two), entries */
    uint64_t *keys;    /* cap * kw words */
    uint64_t *vals;    /* cap values */
    unsigned char *used;
};

void hmap_init(struct hmap *m, unsigned key_words);
void hmap_free(struct hmap *m);

/* The value slot of key, or NULL if absent. */
uint64_t *hmap_find(const struct hmap *m, const uint64_t *key);

/* The value slot of key, inserted as 0 when absent (*is_new says so; may be NULL).
 * NULL only when out of memory. The pointer is valid until the next insertion. */
uint64_t *hmap_get(struct hmap *m, const uint64_t *key, int *is_new);

/* Iteration: for (size_t i = 0; i < m->cap; i++) if (m->used[i]) ... hmap_key(m, i) */
static inline const uint64_t *hmap_key(const struct hmap *m, size_t slot)
{
    return m->keys + slot * m->kw;
}

uint64_t hmap_hash(const uint64_t *words, size_t n);

/* ---- id map: a u64 key to a nonzero u32 id, one 16-byte slot per entry, so a lookup in a
 * big map touches one cache line (a hmap's keys, values and used flags are three). For indexes
 * that are looked up, never iterated (their slot order is not kept across growth). ---- */

struct idmap_slot {
    uint64_t key;
    uint32_t id;       /* 0: empty */
    uint32_t spare;
};

struct idmap {
    struct idmap_slot *slot;
    size_t slots, n;
};

/* The id of key, 0 when absent. Read-only: maps may be read side by side. */
uint32_t idmap_find(const struct idmap *m, uint64_t key);

/* Adds key (not present yet) with id (nonzero): 0, or -1 when out of memory (the map is
 * unchanged then). */
int idmap_put(struct idmap *m, uint64_t key, uint32_t id);

void idmap_free(struct idmap *m);

/* ---- string pool: id 0 is always "" ---- */

struct strpool {
    char **s;          /* by id */
    size_t n, cap;
    uint32_t *slot;    /* hash index: id + 1, 0 empty */
    size_t slots;
};

int strpool_init(struct strpool *p);
void strpool_free(struct strpool *p);

/* The id of s (added if new), or UINT32_MAX when out of memory. */
uint32_t strpool_id(struct strpool *p, const char *s);

static inline const char *strpool_str(const struct strpool *p, uint32_t id)
{
    return id < p->n ? p->s[id] : "";
}

#endif
