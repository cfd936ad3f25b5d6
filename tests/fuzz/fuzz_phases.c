/* fuzz_phases: libFuzzer harness for the phases.jsonl reader (format/phases.c): load, then
 * the innermost phase at times taken from the input and at every boundary (also from the last
 * answer's span: phases_at_hint), and the groups. */
#include "fuzz_input.h"
#include "phases.h"

#include <string.h>

/* The innermost phase at t by walking every span, the answer phases_at_hint must give. */
static int scan(const struct phases *p, uint64_t t)
{
    size_t k = 0;
    while (k < p->nspans && p->spans[k].start_ns <= t)
        k++;
    return k ? p->spans[k - 1].phase : -1;
}

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
        size_t hint = 0; /* the hinted lookup answers as a plain scan of the spans, any order */
        for (size_t i = 0; i < p->nb; i++)
            if (phases_at_hint(p, p->b[i].t_ns, &hint) != scan(p, p->b[i].t_ns) ||
                phases_at_hint(p, fuzz_u64(data, size, i), &hint) != scan(p, fuzz_u64(data, size, i)))
                __builtin_trap();
        phases_free(p);
    }
    close(fd);
    return 0;
}
