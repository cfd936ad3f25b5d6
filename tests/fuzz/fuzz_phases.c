/* fuzz_phases: libFuzzer harness for the phases.jsonl reader (format/phases.c): load, then
 * the innermost phase at times taken from the input and at every boundary (also from the last
 * answer's span: phases_at_hint), and the groups. */
#include "fuzz_input.h"
#include "phases.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[512];
    int fd = fuzz_file(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    struct phases *p;
    if (phases_load(path, &p, err, sizeof err) == 0) {
        phases_close_open(p, fuzz_u64(data, size, 0));
        for (size_t i = 0; i < 8; i++) {
            int k = phases_at(p, fuzz_u64(data, size, i * 8));
            if (k >= (int)p->n)
                __builtin_trap();
            const char *g = phases_group_at(p, fuzz_u64(data, size, i * 8 + 3));
            if (strcmp(g, PHASES_NONE) != 0 && phases_group_index(p, g) < 0)
                __builtin_trap();
        }
        size_t hint = 0; /* the hinted lookup answers as the fresh one, times in any order */
        for (size_t i = 0; i < p->nb; i++)
            if (phases_at_hint(p, p->b[i].t_ns, &hint) != phases_at(p, p->b[i].t_ns) ||
                phases_at_hint(p, fuzz_u64(data, size, i), &hint) != phases_at(p, fuzz_u64(data, size, i)))
                __builtin_trap();
        phases_free(p);
    }
    close(fd);
    return 0;
}
