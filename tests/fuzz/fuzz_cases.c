/* fuzz_cases: libFuzzer harness for the matrix's cases file (report/ab/cases.c): cases_load, with
 * cases.h's rules checked on every case it accepts, then cases_free. */
#include "fuzz_input.h"
#include "ab/cases.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[1024];
    int fd = fuzz_file(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    struct cases c;
    if (cases_load(path, &c, err, sizeof err) == 0) {
        if (c.n > CASES_MAX)
            __builtin_trap();
        for (size_t i = 0; i < c.n; i++) {
            const struct mcase *k = &c.v[i];
            /* A list is NULL when empty, else NULL-terminated after its n items. */
            if (!k->label || !k->binary || (k->prefix ? k->prefix[k->nprefix] != NULL : k->nprefix) ||
                (k->args ? k->args[k->nargs] != NULL : k->nargs) || k->nargs > CASES_MAX_ARGS)
                __builtin_trap();
            for (size_t a = 0; a < k->nargs; a++)
                if (!k->args[a])
                    __builtin_trap();
            for (size_t e = 0; e < k->nenv; e++)
                if (!k->env[e].key || !k->env[e].value)
                    __builtin_trap();
        }
        cases_free(&c);
    }
    close(fd);
    return 0;
}
