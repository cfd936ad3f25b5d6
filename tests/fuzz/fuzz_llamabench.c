/* fuzz_llamabench: libFuzzer harness for llama-bench's output (report/run/llamabench.c: `-o json`,
 * `-o jsonl`, logs around them), read directly and as a run's target.stdout by the report's run
 * model (fuzz_run.h: the prefill and decode throughput in run.json and report.md). */
#include "fuzz_run.h"
#include "run/llamabench.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (fuzz_put(RUN_TARGET_STDOUT, data, size) != 0)
        return 0;
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", fuzz_run_dir(), RUN_TARGET_STDOUT);
    struct llamabench lb;
    int any = llamabench_parse(path, &lb);
    /* llamabench.h: the first test of each kind, among the n kept. */
    if (lb.n > LLAMABENCH_MAX_TESTS || (any && lb.n == 0) || lb.pp >= (int)lb.n ||
        lb.tg >= (int)lb.n || lb.pp < -1 || lb.tg < -1)
        __builtin_trap();
    fuzz_report();
    return 0;
}
