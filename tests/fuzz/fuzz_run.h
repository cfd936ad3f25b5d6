/* fuzz_run.h: for the harnesses whose input is one file of a run folder (meta.json,
 * counters.jsonl, procs.jsonl, perfscope.log, target.stdout): the folder (fuzz_input.h's
 * fuzz_dir) holds the input beside one small valid sample file, and both tools read it whole, as
 * they read a real run (stdout, where the tools print, goes to /dev/null):
 *   fuzz_report(): the report's run model (run_model_load without symbolizing: meta, phases,
 *                  samples, log, counter readings, energy, memory, llama-bench output), then
 *                  run.json's object and report.md's text, as `perfscope-report OUT` makes them;
 *   fuzz_dump():   `perfscope-report dump run OUT`, every section's loader and printer;
 *   fuzz_symbolize(): the symbolizer (symbolize_run: procs.jsonl, meta.json, counters.jsonl into
 *                  profile.json, stacks.folded, profile.pb.gz, trace.json), its outputs removed
 *                  after, so no input sees another's.
 * The sample file's frames have no maps snapshot: they resolve to [unknown] and no executable
 * named by the input is ever opened. Harness code only: never linked into the tools. */
#ifndef PERFSCOPE_FUZZ_RUN_H
#define PERFSCOPE_FUZZ_RUN_H

#include "fuzz_input.h"
#include "runfolder.h"
#include "samplefile.h"
#include "symbolize.h"
#include "run/runmodel.h"
#include "dump/dump.h"

#include <cjson/cJSON.h>

#define FUZZ_SAMPLES_FILE RUN_SAMPLES_PREFIX ".1000.bin"

static inline void fuzz_put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* The run folder with its sample file: three records of two threads, 1 ms apart from 1 s on the
 * clock, two frames each (samplefile.h's layout). */
static inline const char *fuzz_run_dir(void)
{
    static int made;
    if (made)
        return fuzz_dir();
    /* What the tools print goes nowhere (libFuzzer writes to stderr). */
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null < 0 || dup2(null, STDOUT_FILENO) < 0)
        abort();
    close(null);
    enum { FRAMES = 2, N = 3 };
    size_t rec = samplefile_record_bytes(FRAMES);
    uint8_t buf[SAMPLEFILE_HEADER_BYTES + N * (SAMPLEFILE_RECORD_FIXED_BYTES + 8 * FRAMES)];
    memset(buf, 0, sizeof buf);
    fuzz_put_u64(buf + SAMPLEFILE_OFF_MAGIC, SAMPLEFILE_MAGIC);
    fuzz_put_u64(buf + SAMPLEFILE_OFF_COUNT, N);
    fuzz_put_u64(buf + SAMPLEFILE_OFF_MAX_FRAMES, FRAMES);
    fuzz_put_u64(buf + SAMPLEFILE_OFF_HZ, 997);
    for (int i = 0; i < N; i++) {
        uint8_t *r = buf + SAMPLEFILE_HEADER_BYTES + (size_t)i * rec;
        fuzz_put_u64(r + SAMPLEFILE_REC_TIME, 1000000000ull + 1000000ull * (uint64_t)i);
        uint32_t tid = 1000 + (i & 1), nframes = FRAMES;
        memcpy(r + SAMPLEFILE_REC_TID, &tid, 4);
        memcpy(r + SAMPLEFILE_REC_NFRAMES, &nframes, 4);
        memcpy(r + SAMPLEFILE_REC_COMM, "fuzz", 4);
        fuzz_put_u64(r + SAMPLEFILE_REC_FRAMES, 0x401000 + 16 * (uint64_t)i);
        fuzz_put_u64(r + SAMPLEFILE_REC_FRAMES + 8, 0x402000);
    }
    if (fuzz_put(FUZZ_SAMPLES_FILE, buf, sizeof buf) != 0)
        abort();
    made = 1;
    return fuzz_dir();
}

static inline void fuzz_report(void)
{
    struct run_model m;
    char err[1024];
    if (run_model_load(fuzz_run_dir(), 0, &m, err, sizeof err) == 0) {
        cJSON *j = run_json(&m);
        char *text = j ? cJSON_PrintUnformatted(j) : NULL;
        free(text);
        cJSON_Delete(j);
        free(run_markdown(&m));
    }
    run_model_free(&m);
}

static inline void fuzz_dump(void)
{
    dump_run(fuzz_run_dir());
    fflush(stdout);
}

static inline void fuzz_symbolize(void)
{
    static FILE *devnull;
    if (!devnull && !(devnull = fopen("/dev/null", "we")))
        abort();
    struct symbolize_opts o = {.log = devnull};
    char err[1024];
    symbolize_run(fuzz_run_dir(), &o, NULL, err, sizeof err);
    fuzz_unlink(RUN_PROFILE);
    fuzz_unlink(RUN_FOLDED);
    fuzz_unlink(RUN_PPROF);
    fuzz_unlink(RUN_TRACE);
}

#endif
