/* fuzz_maps: libFuzzer harness for the maps snapshot reader (format/maps.c): load, then look
 * up addresses and times taken from the input in every snapshot. */
#include "fuzz_input.h"
#include "maps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[512];
    int fd = fuzz_file(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    struct maps *m;
    if (maps_load(path, &m, err, sizeof err) == 0) {
        for (size_t i = 0; i < 16; i++) {
            uint64_t addr = fuzz_u64(data, size, i * 8), t = fuzz_u64(data, size, i * 8 + 4);
            const struct maps_entry *e = maps_lookup(m, addr, t);
            const struct maps_entry *n = maps_lookup_near(m, addr, t);
            if (e && (addr < e->start || addr >= e->end))
                __builtin_trap();
            if (n && (addr < n->start || addr >= n->end))
                __builtin_trap();
            maps_snapshot_at(m, t);
        }
        for (size_t s = 0; s < m->nsnap; s++)
            if (m->snaps[s].n)
                maps_lookup(m, m->snaps[s].entries[0].start, m->snaps[s].t_ns);
        maps_free(m);
    }
    close(fd);
    return 0;
}
