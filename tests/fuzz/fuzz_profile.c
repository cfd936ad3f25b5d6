/* fuzz_profile: libFuzzer harness for profile.json as the report reads it (report/run/hot.c:
 * hot_profile_load, then every group looked up by its name, as the run model does). */
#include "fuzz_input.h"
#include "run/hot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[1024];
    int fd = fuzz_file(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    struct hot_profile *p;
    if (hot_profile_load(path, &p, err, sizeof err) == 0) {
        for (size_t g = 0; g < p->ngroups; g++) {
            const struct hot_group *h = &p->g[g];
            if (h->nself > HOT_TOP || h->nincl > HOT_TOP || !hot_profile_group(p, h->name))
                __builtin_trap();
        }
        hot_profile_group(p, "(none)");
        hot_profile_free(p);
    }
    close(fd);
    return 0;
}
