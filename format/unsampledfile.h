/* unsampledfile.h: THE reader of unsampled.jsonl (docs/formats.md): the CPU time of threads that ran
 * with SIGPROF blocked where the shim could not keep it open, so that no sample stands for it.
 * The report states it per thread and per phase group; it must never be lost silently.
 *
 * A line: {"pid":N, "tid":N, "comm":"xz", "t0_ns":N, "t1_ns":N, "cpu_ns":N}: thread tid of
 * process pid ran cpu_ns of CPU time between t0_ns and t1_ns that no sample stands for.
 *
 * Rules chosen here:
 *   - pid, tid, t0_ns, t1_ns and cpu_ns must be whole non-negative numbers, t1_ns >= t0_ns;
 *     comm is optional; anything else makes the line bad: counted and skipped, never fatal
 *     (the shim appends the file while it runs and a kill may cut the last line);
 *   - a stretch's CPU time is shared out over the phases by time, at an even rate over
 *     [t0_ns, t1_ns], each part to the innermost phase open then (the samples' rule), the rest
 *     to "(none)"; a stretch of no length goes whole to the phase open at t0_ns;
 *   - threads are told apart by (pid, tid), at most UNSAMPLED_MAX_THREADS; more are summed
 *     together. It never keeps more than one line in memory. */
#ifndef PERFSCOPE_UNSAMPLEDFILE_H
#define PERFSCOPE_UNSAMPLEDFILE_H

#include <stddef.h>

#include "phases.h"

#define UNSAMPLED_MAX_THREADS 4096

struct unsampled_thread {
    long pid, tid;
    char comm[17];           /* the latest name given, "" if none */
    double cpu_s;
};

struct unsampled {
    int present;             /* unsampled.jsonl exists */
    double cpu_s;            /* all of it */
    struct unsampled_thread *thread; /* [nthreads], in order of first appearance (NULL: none) */
    size_t nthreads;
    size_t other_lines;      /* lines of threads past UNSAMPLED_MAX_THREADS */
    double other_cpu_s;      /* and their CPU time */
    double *group_cpu_s;     /* [ngroups + 1]: per phase group, the last "(none)" */
    size_t ngroups;
    size_t lines, bad, first_bad_line;
};

/* Reads dir/unsampled.jsonl, sharing its CPU time out over the phase groups of ph (NULL: all
 * of it to "(none)"). 0, also when there is none (present 0); -1 with "<path>: <why>" in err
 * when it cannot be read at all. */
int unsampled_load(const char *dir, const struct phases *ph, struct unsampled *u, char *err, size_t errlen);

/* The same for the file at path, which must be there. */
int unsampled_read(const char *path, const struct phases *ph, struct unsampled *u, char *err, size_t errlen);

void unsampled_free(struct unsampled *u);

#endif
