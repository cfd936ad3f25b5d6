/* fuzz_unsampled: libFuzzer harness for the unsampled.jsonl reader (format/unsampledfile.c):
 * every input read against a fixed set of phases (nested, open, back to back) and against none;
 * the CPU time shared out over the groups must add up to what was read. */
#include "fuzz_input.h"
#include "phases.h"
#include "unsampledfile.h"

#include <math.h>
#include <string.h>

static const char phases_text[] =
    "{\"t_ns\":1000,\"name\":\"load\",\"event\":\"begin\"}\n"
    "{\"t_ns\":5000,\"name\":\"load\",\"event\":\"end\"}\n"
    "{\"t_ns\":5000,\"name\":\"decode\",\"event\":\"begin\"}\n"
    "{\"t_ns\":6000,\"name\":\"inner\",\"event\":\"begin\"}\n"
    "{\"t_ns\":7000,\"name\":\"inner\",\"event\":\"end\"}\n"
    "{\"t_ns\":9000,\"name\":\"decode\",\"event\":\"end\"}\n"
    "{\"t_ns\":20000,\"name\":\"open\",\"event\":\"begin\"}\n";

static struct phases *fixed_phases(void)
{
    static struct phases *p;
    static int tried;
    if (!tried) {
        tried = 1;
        char path[64], err[512];
        int fd = fuzz_file((const uint8_t *)phases_text, sizeof phases_text - 1, path, sizeof path);
        if (fd >= 0) {
            if (phases_load(path, &p, err, sizeof err) != 0)
                p = NULL;
            else
                phases_close_open(p, 30000);
            close(fd);
        }
    }
    return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[512];
    int fd = fuzz_file(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    for (int with = 0; with < 2; with++) {
        struct phases *p = with ? fixed_phases() : NULL;
        struct unsampled u;
        if (unsampled_read(path, p, &u, err, sizeof err) != 0)
            continue;
        double sum = 0, threads = u.other_cpu_s;
        for (size_t g = 0; g <= u.ngroups; g++)
            sum += u.group_cpu_s[g];
        for (size_t i = 0; i < u.nthreads; i++)
            threads += u.thread[i].cpu_s;
        if (u.nthreads > UNSAMPLED_MAX_THREADS || fabs(sum - u.cpu_s) > 1e-6 * (1 + u.cpu_s) ||
            fabs(threads - u.cpu_s) > 1e-6 * (1 + u.cpu_s))
            __builtin_trap();
        unsampled_free(&u);
    }
    close(fd);
    return 0;
}
