/* procline.h: THE reading of one procs.jsonl line (docs/formats.md), the run's process tree as
 * every process of the run appends it: {"pid","ppid","event":"start"|"exit","t_ns",
 * "exe","samples","status"}. The shim's leader (which of the run's processes still live) and
 * the symbolizer (which executable wrote which sample file) both read lines here. Pure: no I/O,
 * no allocation, so the shim can use it; it must never accept a line without a whole pid and
 * an event. */
#ifndef PERFSCOPE_PROCLINE_H
#define PERFSCOPE_PROCLINE_H

#include <cjson/cJSON.h>

enum proc_event { PROC_START, PROC_EXIT, PROC_OTHER }; /* a later image after exec: a start */

struct proc_line {
    long pid;                /* 1..INT_MAX */
    long ppid;               /* 0 unknown */
    enum proc_event event;
    const char *exe;         /* into the object, or NULL */
    const char *samples;     /* the sample file's name, or NULL */
    const char *status;      /* at exit, or NULL */
};

/* 0, or -1 when the object is no process line (no whole pid in 1..INT_MAX, no event string). */
int procline_read(const cJSON *o, struct proc_line *l);

#endif
