/* fuzz_runlog: libFuzzer harness for perfscope.log: format/runlog.c (runlog_load keeping as many
 * lines as the input's first byte says, 0 included, with runlog.h's rules checked), and the
 * report's whole reading of a run folder holding it (fuzz_run.h: the log lines of run.json and
 * report.md, `dump run`'s log section). */
#include "fuzz_run.h"
#include "runlog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (fuzz_put(RUN_LOG, data, size) != 0)
        return 0;
    struct run_log log;
    char err[600];
    size_t keep = fuzz_byte(data, size, 0) % 8;
    if (runlog_load(fuzz_run_dir(), keep, &log, err, sizeof err) == 0) {
        if (!log.present || log.n > keep)
            __builtin_trap();
        for (size_t i = 0; i < log.n; i++)
            if (strlen(log.line[i]) > RUNLOG_LINE_CAP)
                __builtin_trap();
    }
    runlog_free(&log);
    fuzz_report();
    fuzz_dump();
    return 0;
}
