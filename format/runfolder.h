/* runfolder.h: the run folder as one thing (docs/formats.md): the names of the files in it, the
 * path of one of them, and the three questions every tool asks of a folder before reading it:
 * is it a folder, does it hold a run, is each file a reader will open a regular file (a FIFO
 * would block the open, a device never end). Every tool asks them here, so the answers agree.
 * It must never open a run file for reading: that is the readers' work. The shim includes this
 * header for the names alone (its macros only; runfolder.c is the tools'). */
#ifndef PERFSCOPE_RUNFOLDER_H
#define PERFSCOPE_RUNFOLDER_H

#include <stddef.h>

/* What the shim writes. Sample files are RUN_SAMPLES_PREFIX.<pid>[.<n>].bin with their .maps. */
#define RUN_META "meta.json"
#define RUN_PHASES "phases.jsonl"
#define RUN_COUNTERS "counters.jsonl"
#define RUN_PROCS "procs.jsonl"
#define RUN_UNSAMPLED "unsampled.jsonl"
#define RUN_LOG "perfscope.log"
#define RUN_LEADER_LOCK ".leader"
#define RUN_SAMPLES_PREFIX "cpuprof"
/* What the tools write (and read back). */
#define RUN_PROFILE "profile.json"
#define RUN_FOLDED "stacks.folded"
#define RUN_PPROF "profile.pb.gz"
#define RUN_TRACE "trace.json"
#define RUN_FLAME "flame.json"     /* the call trees report.html draws */
#define RUN_REPORT_HTML "report.html"
#define RUN_JSON "run.json"
#define RUN_REPORT_MD "report.md"
#define RUN_LAUNCHER "launcher.json" /* perfscope record: what only the parent knows */
#define RUN_CONTAINER "container.json" /* a container target: what the host saw of it */
#define RUN_HOSTPIDS "container.pids" /* "<pid> <host pid>" lines, kept by perfscope on the host */
#define RUN_SYMFS "symfs"             /* a container's mapped files, copied out after it stopped */
/* What the matrix runner keeps of an arm's own output. */
#define RUN_TARGET_STDOUT "target.stdout"
#define RUN_TARGET_STDERR "target.stderr"

/* "<dir>/<name>" into buf: 0, or -1 with "<dir>: path too long" in err (err may be NULL). */
int runfolder_path(char *buf, size_t size, const char *dir, const char *name, char *err,
                   size_t errlen);

/* runfolder_path for an optional file: 1 when it is there (or cannot be looked at: its reader
 * will say why), 0 when it does not exist, -1 when the path is too long. */
int runfolder_optional(char *buf, size_t size, const char *dir, const char *name, char *err,
                       size_t errlen);

/* 0 when dir is a folder; -1 with "<dir>: cannot open: <why>" or "<dir>: not a folder". */
int runfolder_check_dir(const char *dir, char *err, size_t errlen);

/* 1 when dir holds what the shim writes (meta.json, phases.jsonl, counters.jsonl,
 * perfscope.log, or a sample file), else 0. THE test of "is this a run folder". */
int runfolder_holds_run(const char *dir);

/* 0 when every run file of dir that a reader opens is a regular file (or absent); -1 with
 * "<path>: not a regular file" (or "<dir>: cannot list: <why>") in err. */
int runfolder_check_inputs(const char *dir, char *err, size_t errlen);

/* runfolder_check_dir, then runfolder_holds_run: 0, or -1 with "<dir>: <why>" in err ("no
 * perfscope output here (...)" for a folder that holds no run). */
int runfolder_check_run(const char *dir, char *err, size_t errlen);

#endif
