/* fuzz_runjson: libFuzzer harness for run.json as the A/B judgement reads it: report/ab/judge.c
 * (judge_check_run, then judge_value of every metric and judge_diff only on a run it accepted,
 * as judge.h asks) and `perfscope-report diff` whole (report/ab/diff.c's loader, the judgement,
 * the statistics and the table or, when the input's first byte is odd, the JSON; the input twice
 * on side A against once on B). */
#include "fuzz_input.h"
#include "ab/diff.h"
#include "ab/judge.h"
#include "jsonl.h"

#include <fcntl.h>
#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int quiet;
    if (!quiet) { /* the table goes nowhere */
        int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (null < 0 || dup2(null, STDOUT_FILENO) < 0)
            abort();
        close(null);
        quiet = 1;
    }
    char path[64], err[1024];
    int fd = fuzz_file(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    cJSON *run;
    if (json_file_load(path, JSON_FILE_MAX_BYTES, 0, &run, err, sizeof err) == 0) {
        if (judge_check_run(run, err, sizeof err) == 0) {
            for (int m = 0; m < JUDGE_NMETRICS; m++)
                judge_value(run, m);
            const cJSON *runs[2] = {run, run};
            struct diff_result d;
            if (judge_diff(runs, 2, runs, 1, NULL, &d) == 0) {
                cJSON_Delete(diff_to_json(&d));
                diff_free(&d);
            }
        }
        cJSON_Delete(run);
    }
    char *argv[] = {"--json", path, path, "--", path, NULL};
    int table = !(fuzz_byte(data, size, 0) & 1);
    cmd_diff(5 - table, argv + table);
    fflush(stdout);
    close(fd);
    return 0;
}
