/* runprocs.h: the run's processes as procs.jsonl tells them (docs/formats.md), for the tools:
 * how many the shim saw, and the images it did not load in. An exec line of a pid with no start
 * line after it (the new image did not load the shim: ld.so refused it, a static or setuid
 * executable, an environment without LD_PRELOAD) and no exit line (an exec that failed carries
 * on and ends in the old image) is such an image: what it did is not in the run, and its end
 * was never recorded. Lines are read by procline.c; a line that is no process line is counted
 * and skipped, never fatal. The first RUN_PROCS_SPANS processes also keep their start and exit
 * times and executable's basename, for report.html's timeline. */
#ifndef PERFSCOPE_RUNPROCS_H
#define PERFSCOPE_RUNPROCS_H

#include <stddef.h>

#include "runmeta.h"

#define RUN_PROCS_SPANS 256

/* A process's life as procs.jsonl says it: start_ns its first start line (0 unknown), end_ns
 * its exit line (0: none, it ran to the run's end); exe the basename of its latest image. */
struct run_proc_span {
    long pid;
    unsigned long long start_ns, end_ns;
    char exe[64];
};

struct run_procs {
    int present;              /* procs.jsonl exists */
    size_t processes;         /* distinct pids */
    long *unloaded;           /* pids whose last image the shim did not load in, in the order of
                               * their exec lines */
    size_t nunloaded;
    size_t bad;               /* lines that are no process line */
    struct run_proc_span span[RUN_PROCS_SPANS];
    size_t nspans;            /* the first RUN_PROCS_SPANS pids seen */
    /* The run's sampling, summed over every exit and exec line with figures (each image's
     * own): images counted, samples, distinct samples (signals), the CPU seconds they sample
     * (the clock's base: user with the perf clock, user+sys with the tick timer), the shim's
     * threads' and the unsampled CPU s; of the samples, those walked by frame pointers where
     * libunwind was to walk them (over the images whose lines say: fp_images of them). An image
     * without such a line (killed, a raw exit_group, still running) is not in the sums. */
    struct run_sampling {
        size_t images, fp_images;
        double samples, distinct_samples, sampled_cpu_s, shim_threads_cpu_s, unsampled_cpu_s;
        double fp_samples, fp_of_samples; /* the frame-pointer ones, and the samples they are of */
    } sampling;
};

/* The run's delivered rate, distinct samples per sampled CPU second, and the weighted one
 * (samples, overrun copies included): < 0 when under 0.05 sampled CPU s (too little to mean
 * anything; meta.json's rule). */
double run_sampling_hz_delivered(const struct run_sampling *s);
double run_sampling_hz_weighted(const struct run_sampling *s);

/* Reads dir/procs.jsonl into *p: 0, also when there is none; -1 with one line in err when it
 * cannot be read at all (or out of memory). */
int run_procs_load(const char *dir, struct run_procs *p, char *err, size_t errlen);
void run_procs_free(struct run_procs *p);

/* Whether pid's last image is one the shim did not load in. */
int run_procs_unloaded(const struct run_procs *p, long pid);

/* THE run's status when procs.jsonl is known too: runmeta_status, except that a run whose first
 * process (meta.json's pid) went on in an image the shim did not load in is "unknown" (its end
 * was never recorded), not "killed". Into buf; returns buf. */
const char *run_status(const struct run_meta *m, const struct run_procs *p, char *buf, size_t size);

#endif
