/* runid.h: which run this process belongs to (docs/shim.md: a run folder is one run). The first
 * process of a run makes the run's id and exports it as PERFSCOPE_RUN_ID, so its descendants
 * (fork children, exec'd images, posix_spawn and system children, a takeover leader) know the
 * run they belong to; a process told to write into a folder that holds another run, or an
 * earlier one that is over, records nothing there. Decided once, at start, before anything is
 * written; never called from a signal handler. */
#ifndef PERFSCOPE_RUNID_H
#define PERFSCOPE_RUNID_H

#include <stddef.h>

#define RUNID_MAX 64
#define RUNID_ENV "PERFSCOPE_RUN_ID"
/* A refused process exports PERFSCOPE_RUN_ID=unrecorded:<folder>, so its descendants, refused
 * for the same folder, say nothing more: the target's stderr gets one line per process tree. */
#define RUNID_UNRECORDED "unrecorded:"

enum runid_verdict {
    RUNID_NEW,    /* the folder holds no run: this process starts one */
    RUNID_JOIN,   /* the folder holds this process's run (or one in progress it cannot tell from it) */
    RUNID_OTHER,  /* the folder holds another run, or an earlier one that is over: record nothing */
};

/* Decides for ps_cfg.out_dir (config_read first). RUNID_OTHER: why holds the one line to say
 * on stderr, "" when an ancestor has already said it. */
enum runid_verdict runid_decide(char *why, size_t size);
/* After RUNID_NEW or RUNID_JOIN: PERFSCOPE_RUN_ID into this process's environment. After
 * RUNID_OTHER: the unrecorded mark. */
void runid_export(void);
/* The folder cannot be used (it cannot be made, or written): the unrecorded mark is exported as
 * for a refusal, so the descendants, which would find it unusable too, do not say so again (a
 * transparency review: one line per exec'd image, 36 for one python3 behind a launcher script). */
void runid_unusable(void);
/* This run's id ("" before runid_decide, or when refused). */
const char *runid_get(void);
/* Whether this process started the run (a fork child did not). */
int runid_is_new(void);
/* In a fork child: it joins its parent's run. */
void runid_after_fork(void);

#endif
