/* fuzz_noise: libFuzzer harness for the noise files of report/ab/noise.c: the input read as a
 * noise file (noise_for_case for a label of its own and for one taken from the input, as the
 * matrix looks floors up; noise_select with and without a label, as diff --noise does), as the
 * null matrix `perfscope-report noise` reads (noise_from_null, and cmd_noise whole), and through
 * `diff --noise FILE` against a fixed run (report/ab/diff.c). */
#include "fuzz_input.h"
#include "ab/diff.h"
#include "ab/noise.h"
#include "jsonl.h"

#include <fcntl.h>
#include <math.h>

static const char run_json[] =
    "{\"status\":\"ok\",\"throughput\":{\"prefill\":{\"tokens_per_s\":100.0},"
    "\"decode\":{\"tokens_per_s\":20.0}}}\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char run_path[4200];
    if (!run_path[0]) {
        int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (null < 0 || dup2(null, STDOUT_FILENO) < 0)
            abort();
        close(null);
        if (fuzz_put("run.json", (const uint8_t *)run_json, sizeof run_json - 1) != 0)
            abort();
        snprintf(run_path, sizeof run_path, "%s/run.json", fuzz_dir());
    }
    char path[64], err[1024];
    int fd = fuzz_file(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    cJSON *doc;
    if (json_file_load(path, JSON_FILE_MAX_BYTES, 0, &doc, err, sizeof err) == 0) {
        double noise[JUDGE_NMETRICS];
        /* A label from the input: the first member's name, and that member's first member's. */
        const char *label = doc->child && doc->child->string ? doc->child->string : "x";
        noise_for_case(doc, label, noise, err, sizeof err);
        noise_for_case(doc, "no such case", noise, err, sizeof err);
        if (noise_select(doc, NULL, noise, err, sizeof err) == 0)
            for (int m = 0; m < JUDGE_NMETRICS; m++)
                if (isnan(noise[m]))
                    __builtin_trap();
        noise_select(doc, label, noise, err, sizeof err);
        cJSON_Delete(noise_from_null(doc, err, sizeof err));
        cJSON_Delete(doc);
    }
    char *one[] = {path, NULL};
    cmd_noise(1, one);
    char *argv[] = {"--noise", path, run_path, "--", run_path, NULL};
    cmd_diff(5, argv);
    fflush(stdout);
    close(fd);
    return 0;
}
