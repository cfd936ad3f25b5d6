/* fuzz_meta: libFuzzer harness for meta.json: format/runmeta.c (runmeta_load, with the rules of
 * runmeta.h checked on what it gives back, runmeta_status), the run's extent from it
 * (format/runextent.c), and both tools' whole reading of a run folder holding it (fuzz_run.h:
 * the report's run model, run.json, report.md and `dump run`; the symbolizer). */
#include "fuzz_run.h"
#include "runextent.h"
#include "runmeta.h"

#include <limits.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (fuzz_put(RUN_META, data, size) != 0)
        return 0;
    const char *dir = fuzz_run_dir();
    struct run_meta m;
    char err[600], status[256];
    int rc = runmeta_load(dir, &m, err, sizeof err);
    /* runmeta.h: refused, every fact is unknown; read, each fact in its range. */
    if (rc != 0 && (m.doc || m.t0_ns || m.end_ns || m.pid || m.status || m.hz != -1))
        __builtin_trap();
    if (m.pid < 0 || m.pid > INT_MAX || m.hz < -1 || m.hz >= 1000000 ||
        (m.t0_wall_s >= 0 && (m.t0_wall_s <= 0 || m.t0_wall_s >= RUNMETA_MAX_WALL_S || !m.t0_ns)) ||
        (!m.executable != !m.build_id))
        __builtin_trap();
    runmeta_status(&m, status, sizeof status);
    runmeta_status(&m, status, 4); /* cut */
    struct phases *none = NULL;
    struct run_extent ext;
    run_extent_find(dir, &m, fuzz_u64(data, size, 0), fuzz_u64(data, size, 8), none, &ext);
    runmeta_free(&m);
    fuzz_report();
    fuzz_dump();
    fuzz_symbolize();
    return 0;
}
