/* runmeta.h: THE reader of a run's meta.json (docs/formats.md), written by the shim's leader when the
 * run starts and again when it ends. The symbolizer (run start, leader, executable) and the
 * report (status, sampling rate, and the rest shown as is) both read it here.
 *
 * Rules chosen here:
 *   - the file is optional: a run without one loads as doc == NULL, every fact unknown;
 *   - present, it must be one JSON object of at most RUNMETA_MAX_BYTES (json_file_load's rules):
 *     anything else is refused with one line naming the file (the symbolizer warns and goes on,
 *     the report stops);
 *   - a fact of the wrong type or out of range is unknown, never an error: t0_ns and end_ns are
 *     whole non-negative numbers (or decimal strings); pid at most INT_MAX; t0_wall_s a positive
 *     number below RUNMETA_MAX_WALL_S (so its nanoseconds fit an int64, as pprof's time_nanos
 *     needs), known only with t0_ns; executable and build_id strings, both or neither; status a
 *     string; end_unseen a string; config.hz a number in [0, 1e6). */
#ifndef PERFSCOPE_RUNMETA_H
#define PERFSCOPE_RUNMETA_H

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>

#define RUNMETA_MAX_BYTES (16u << 20)
#define RUNMETA_MAX_WALL_S 9.2e9 /* seconds since 1970: the year 2261; INT64_MAX ns is 9.22e9 s */

struct run_meta {
    cJSON *doc;              /* the whole object; NULL: no meta.json */
    uint64_t t0_ns, end_ns;  /* CLOCK_MONOTONIC start and end of the run, 0 unknown */
    double t0_wall_s;        /* wall clock at t0_ns, < 0 unknown */
    long pid;                /* the leader's pid, 0 unknown */
    const char *executable;  /* the leader's executable and its build id (into doc), or NULL */
    const char *build_id;
    const char *status;      /* "running", "exit 0", "signal SIGSEGV", ... (into doc), or NULL */
    const char *end_unseen;  /* why the shim knew the end could pass unseen (into doc), or NULL */
    int hz;                  /* config.hz: the asked sampling rate, -1 unknown */
    char container_image[256];    /* container.json's image name and id ("" without one) */
    char container_image_id[160];
    char launcher_status[48]; /* launcher.json's status as wait4 saw it ("exit 5", "signal
                              * SIGINT"), "" without launcher.json or a status of that form */
};

/* Reads dir/meta.json into *m (facts unknown where it lacks them), and launcher.json's status
 * (perfscope record's, docs/formats.md) when there is one. 0, also when the files do not exist;
 * -1 with one line "<path>: <what is wrong>" in err, *m then as for no file. */
int runmeta_load(const char *dir, struct run_meta *m, char *err, size_t errlen);

void runmeta_free(struct run_meta *m);

/* THE run's status, as every tool states it (run.json's `status`, compare.py's "ok"): "ok" for
 * meta.json's "exit 0", for "running" (the leader never finished) "ended unseen" where meta.json
 * says why its end could pass unseen (end_unseen: a Go program's raw exit_group, a seccomp
 * filter) and "killed" otherwise (SIGKILL, or an end no wrapper saw), "unknown" without a
 * status, else the shim's own words ("exit 3", "signal SIGSEGV"). Where the shim could not know
 * the end ("running", or no status: a raw exit_group, a kill, a run too short for meta.json) and
 * launcher.json has it, launcher.json's wins ("exit 0" again "ok"). Into buf; returns buf. */
const char *runmeta_status(const struct run_meta *m, char *buf, size_t size);

/* What a CPU second of the run's samples counts, from meta.json's sampling.clock: "user" for the
 * perf clock (a task-clock with exclude_kernel: an expiry in the kernel is never signalled, so
 * system time is not sampled), "user+sys" for the tick timer (the thread's CPU-time clock, which
 * counts both); NULL when unknown or sampling was off. The one place the report's "CPU s (...)"
 * headers and the pprof profile's comment take it from. */
const char *runmeta_cpu_counts(const struct run_meta *m);

/* Whether runmeta_status took launcher.json's status over the shim's. */
int runmeta_status_from_launcher(const struct run_meta *m);

#endif
