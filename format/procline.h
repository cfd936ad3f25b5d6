/* procline.h: THE reading of one procs.jsonl line (docs/formats.md), the run's process tree as
 * every process of the run appends it: {"pid","ppid","event":"start"|"exec"|"exit","t_ns",
 * "exe","samples","status","sampling"}. The shim's leader (which of the run's processes still live), the
 * symbolizer (which executable wrote which sample file) and the report (the images the shim did
 * not load in, runprocs.c) read lines here. Pure: no I/O,
 * no allocation, so the shim can use it; it must never accept a line without a whole pid and
 * an event. */
#ifndef PERFSCOPE_PROCLINE_H
#define PERFSCOPE_PROCLINE_H

#include <cjson/cJSON.h>

/* exec: the image is replaced (a later image that loaded the shim writes a start). */
enum proc_event { PROC_START, PROC_EXIT, PROC_EXEC, PROC_OTHER };

struct proc_line {
    long pid;                /* 1..INT_MAX */
    long ppid;               /* 0 unknown */
    enum proc_event event;
    const char *exe;         /* into the object, or NULL */
    const char *samples;     /* the sample file's name, or NULL */
    const char *status;      /* at exit, or NULL */
    /* exit and exec lines: the image's own sampling figures ("sampling": the same definitions as
     * meta.json's), each a finite number >= 0; have_figures 0 when absent or malformed. */
    int have_figures;
    double n_samples, distinct_samples, sampled_cpu_s, shim_threads_cpu_s, unsampled_cpu_s;
    /* of n_samples, those walked by frame pointers where libunwind was to walk them (not
     * loaded yet, or not usable for that sample; 0 with PERFSCOPE_UNWIND=fp, where none was
     * to); -1 where the line has no such figure (an older shim) */
    double samples_without_libunwind;
};

/* 0, or -1 when the object is no process line (no whole pid in 1..INT_MAX, no event string). */
int procline_read(const cJSON *o, struct proc_line *l);

#endif
