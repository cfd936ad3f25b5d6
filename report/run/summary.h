/* summary.h: the run summary's data, gathered whole before anything is printed, so a bad file
 * gives exit 2 and one line, never half a report. Each section has a loader and a printer, in a
 * file of its own: summary_meta.c (meta.json, perfscope.log), summary_phases.c,
 * summary_samples.c, summary_counters.c. The run model (runmodel.h) is built on the loaders;
 * `perfscope-report dump run` (dump/dump_run.c) prints every section. A loader must never
 * print, a printer never read a file its loader did not accept. */
#ifndef PERFSCOPE_SUMMARY_H
#define PERFSCOPE_SUMMARY_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>

#include "runlog.h"
#include "phases.h"
#include "runmeta.h"
#include "runprocs.h"
#include "samples.h"

#define SUMMARY_MAX_THREADS 4096 /* per sample file; more distinct tids are lumped together */

struct thread_count {
    uint32_t tid;
    char comm[17];           /* the latest name seen */
    uint64_t samples;
};

struct file_summary {
    char path[PATH_MAX];
    const char *name;        /* basename inside path */
    long pid;
    unsigned gen;
    struct samples_header hdr;
    uint64_t records;
    uint64_t empty_stacks;   /* records with no frame */
    char note[512];          /* samples_note() */
    struct thread_count *threads;
    size_t nthreads;
    int *slots;              /* tid hash: index into threads, -1 empty */
    uint64_t other_samples;  /* samples of tids past SUMMARY_MAX_THREADS */
    int has_maps;
    size_t maps_snapshots, maps_bad_lines;
};

struct counters_summary {
    int present;
    size_t lines, objects, bad;
    cJSON *first;            /* first object, kept for its zones and GPUs */
    int have_rss;
    double peak_rss_anon_kib;
    int have_t;
    unsigned long long first_t_ns, last_t_ns;
};

#define LOG_LINES_SHOWN 200 /* perfscope.log lines dump run shows */

/* One phase group (or "(none)", the last). */
struct group_stat {
    uint64_t samples;
    double cpu_s;            /* samples / hz, per file's hz */
    unsigned times;          /* occurrences */
    double wall_s;           /* summed over occurrences */
    long long tokens;        /* summed tokens=, -1 if no occurrence had any */
};

struct run_summary {
    const char *dir;
    struct run_meta meta;          /* meta.doc NULL: no meta.json */
    struct run_procs procs;        /* procs.jsonl (loaded with meta.json; unknown when unreadable) */
    struct phases *phases;         /* NULL: no phases.jsonl */
    struct file_summary *files;
    size_t nfiles;
    struct group_stat *groups;     /* [ngroups + 1]: the last is "(none)" */
    int cpu_s_unknown;             /* a file with hz 0 */
    uint64_t total_samples, first_sample_ns, last_sample_ns;
    struct counters_summary counters;
    struct run_log log;
};

void run_summary_free(struct run_summary *r);

/* Loaders: 0, or -1 with the message in err. Missing optional files are not errors. */
int load_meta(struct run_summary *r, char *err, size_t errlen);
int load_phases(struct run_summary *r, char *err, size_t errlen);
int load_samples(struct run_summary *r, char *err, size_t errlen);
int load_counters(struct run_summary *r, char *err, size_t errlen);
int load_log(struct run_summary *r, size_t keep, char *err, size_t errlen);

void print_meta(const struct run_summary *r);
void print_samples(const struct run_summary *r);
void print_groups(const struct run_summary *r);
void print_boundaries(const struct run_summary *r);
void print_counters(const struct run_summary *r);
void print_log(const struct run_summary *r);

void free_samples(struct run_summary *r);

#endif
