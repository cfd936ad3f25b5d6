/* fuzz_flame: libFuzzer harness for flame.json as the report reads it (report/html/flametree.c:
 * flame_load, then every group's tree built and printed, as report.html does). */
#include "fuzz_input.h"
#include "html/flametree.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[1024];
    int fd = fuzz_file(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    struct flame_set *f;
    if (flame_load(path, &f, err, sizeof err) == 0) {
        const cJSON *g;
        cJSON_ArrayForEach(g, f->groups)
        {
            int oom;
            cJSON *t = flame_tree(f, cJSON_GetObjectItemCaseSensitive(g, "name")->valuestring, 7, &oom);
            if (!t && !oom)
                __builtin_trap(); /* a checked group always has a tree */
            char *s = t ? cJSON_PrintUnformatted(t) : NULL;
            free(s);
            cJSON_Delete(t);
        }
        flame_free(f);
    }
    close(fd);
    return 0;
}
