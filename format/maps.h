/* maps.h: the reader of the shim's address-space snapshots, cpuprof.<pid>[.<n>].maps
 * (docs/formats.md): the text of /proc/PID/maps, then for each change a line "# t=<ns>" and the new
 * full snapshot. Resolves (address, time) to the mapping in force at that time. It must never
 * crash or grow without bound on hostile input: lines are capped, paths are shared.
 *
 * Rules chosen here:
 *   - the lines before the first "# t=" form a snapshot with t = 0; snapshots are ordered by t
 *     (a tie goes to the later one in the file);
 *   - the snapshot in force at time T is the latest with t <= T; before the first snapshot's t
 *     the first snapshot applies (there is nothing earlier to use);
 *   - blank lines, other '#' comments are skipped; unparseable lines, lines over the cap and a
 *     last line cut without its '\n' are skipped and counted; a "# t=" line with a bad number
 *     still starts a snapshot, at the previous snapshot's time; snapshots with no mapping
 *     (a write cut right after "# t=") are dropped and counted;
 *   - refused (maps_load returns -1): missing, unreadable, not a regular file, empty, or no
 *     parseable mapping at all. */
#ifndef PERFSCOPE_MAPS_H
#define PERFSCOPE_MAPS_H

#include <stddef.h>
#include <stdint.h>

struct maps_entry {
    uint64_t start, end;   /* [start, end) */
    uint64_t offset;       /* file offset of start */
    uint64_t inode;
    char perms[5];         /* "r-xp" */
    const char *path;      /* "" for anonymous memory; "[vdso]", "[heap]" as the kernel writes */
};

struct maps_snapshot {
    uint64_t t_ns;              /* CLOCK_MONOTONIC time it took effect (0: from the start) */
    size_t n;
    struct maps_entry *entries; /* sorted by start */
};

struct maps {
    size_t nsnap;
    struct maps_snapshot *snaps; /* sorted by t_ns */
    size_t bad_lines;            /* unparseable or over-long lines skipped */
    size_t cut_lines;            /* a last line without '\n' (a cut write), skipped */
    size_t empty_snapshots;      /* "# t=" snapshots without any mapping, dropped */
    void *strings;               /* interned paths (private) */
};

/* Reads path into a new struct maps. Returns 0, or -1 with "<path>: <what>" in err. */
int maps_load(const char *path, struct maps **out, char *err, size_t errlen);

void maps_free(struct maps *m);

/* The snapshot in force at t_ns (never NULL for a loaded struct maps). */
const struct maps_snapshot *maps_snapshot_at(const struct maps *m, uint64_t t_ns);

/* The mapping holding addr in the snapshot in force at t_ns, or NULL. */
const struct maps_entry *maps_lookup(const struct maps *m, uint64_t addr, uint64_t t_ns);

/* As maps_lookup, but when the snapshot in force does not hold addr, tries the earlier
 * snapshots (newest first), then the later ones (oldest first): a library sampled while it was
 * being loaded or unloaded is named by the nearest snapshot that saw it. */
const struct maps_entry *maps_lookup_near(const struct maps *m, uint64_t addr, uint64_t t_ns);

#endif
