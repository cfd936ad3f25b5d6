/* fuzz_perfmap: libFuzzer harness for the JIT perf map reader (format/perfmap.c): load, then
 * look up addresses taken from the input and every entry's start. */
#include "fuzz_input.h"
#include "perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[512];
    int fd = fuzz_file(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    struct perfmap *pm;
    if (perfmap_load(path, &pm, err, sizeof err) == 0) {
        for (size_t i = 0; i < 8; i++) {
            uint64_t a = fuzz_u64(data, size, i * 8);
            const struct perfmap_entry *e = perfmap_lookup(pm, a);
            if (e && (a < e->start || a >= e->end))
                __builtin_trap();
        }
        for (size_t i = 0; i < pm->n; i++)
            if (!perfmap_lookup(pm, pm->v[i].start))
                __builtin_trap();
        perfmap_free(pm);
    }
    close(fd);
    return 0;
}
