/* perfmap.h: the reader of JIT symbol maps, /tmp/perf-<pid>.map (the format perf reads: one
 * "START SIZE name" a line, START and SIZE in hex with or without 0x, name to the end of the
 * line). JIT runtimes (V8, the JVM with perf-map-agent, PyTorch's inductor, LuaJIT) write them so
 * that code in anonymous memory can be named.
 *
 * Rules: bad lines (not two hex numbers and a name, size 0, start + size overflowing, over
 * PERFMAP_LINE_CAP) are skipped and counted; when entries overlap, the one written later wins
 * (a JIT reusing memory appends the new code's line). Refused (-1): missing, not a regular file,
 * or no valid line. Never grows beyond one copy of each valid line. */
#ifndef PERFSCOPE_PERFMAP_H
#define PERFSCOPE_PERFMAP_H

#include <stddef.h>
#include <stdint.h>

#define PERFMAP_LINE_CAP 4096

struct perfmap_entry {
    uint64_t start, end;  /* [start, end) */
    size_t order;         /* line order: later wins */
    char *name;
};

struct perfmap {
    struct perfmap_entry *v; /* sorted by start */
    size_t n;
    size_t bad_lines;
    uint64_t max_len;        /* longest entry, bounds the backward scan of a lookup */
};

int perfmap_load(const char *path, struct perfmap **out, char *err, size_t errlen);
void perfmap_free(struct perfmap *pm);

/* The entry holding addr (the latest written when several do), or NULL. */
const struct perfmap_entry *perfmap_lookup(const struct perfmap *pm, uint64_t addr);

#endif
