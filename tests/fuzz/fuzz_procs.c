/* fuzz_procs: libFuzzer harness for procs.jsonl, the process tree's lines. Its one reader is the
 * symbolizer (symbolize/collect.c's read_procs, over format/jsonl.c: each "start" line names a
 * sample file's executable, which profile.json and trace.json then show), so the harness runs
 * the symbolizer over a run folder holding it (fuzz_run.h; its sample file is
 * cpuprof.1000.bin: the corpus names it), and the lines through jsonl_foreach alone. */
#include "fuzz_run.h"
#include "jsonl.h"

static int take(cJSON *obj, size_t lineno, void *arg)
{
    (void)lineno;
    (void)arg;
    if (!cJSON_IsObject(obj))
        __builtin_trap(); /* jsonl.h: only objects reach the callback */
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (fuzz_put(RUN_PROCS, data, size) != 0)
        return 0;
    char path[4200], err[600];
    snprintf(path, sizeof path, "%s/%s", fuzz_run_dir(), RUN_PROCS);
    struct jsonl_stats st;
    jsonl_foreach(path, take, NULL, &st, err, sizeof err);
    fuzz_symbolize();
    return 0;
}
