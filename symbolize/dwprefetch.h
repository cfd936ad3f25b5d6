/* dwprefetch.h: opens the files that samples were taken in (dwarf.c: symbols and DWARF, which
 * for a library with compressed separate debug info means inflating all of it) on a thread of
 * its own while the sample files are still being read, so that cost overlaps the reading. Only
 * files some sampled frame lies in are asked for (collect.c asks as it meets new stacks);
 * symtab.c takes an opened file instead of opening it again, after its own checks (waiting for
 * one being opened, opening itself one not started yet), and what nobody took is closed.
 *
 * It must never touch anything but the dw_files it opens (no symtab, no profile), never open a
 * file whose inode differs from the one mapped or that the maps said was deleted, and never
 * leave its thread running past dwprefetch_finish(). */
#ifndef PERFSCOPE_DWPREFETCH_H
#define PERFSCOPE_DWPREFETCH_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct dw_file;

struct dwp_item {
    char *path;
    uint64_t inode;
    struct dw_file *dw;    /* NULL: not opened (yet, or it could not be) */
    int state;             /* DWP_QUEUED, DWP_OPENING (the thread has it), DWP_DONE */
};

enum { DWP_QUEUED, DWP_OPENING, DWP_DONE };

struct dwprefetch {
    pthread_mutex_t mu;
    pthread_cond_t cv;      /* the thread waits here for work */
    pthread_cond_t done_cv; /* dwprefetch_take waits here for a file being opened */
    pthread_t th;
    int started, stop;
    struct dwp_item *items; /* asked for, in order; [0, next) taken by the thread */
    size_t n, cap, next;
    size_t opened;          /* files the thread opened (a debug figure for the tests) */
};

/* Starts the thread; 0, or -1 (nothing is prefetched then: symtab.c opens files as before). */
int dwprefetch_start(struct dwprefetch *d);

/* Asks for path (as mapped, inode from the maps; 0 unknown) unless already asked for. */
void dwprefetch_want(struct dwprefetch *d, const char *path, uint64_t inode);

/* Waits for the thread to open everything asked for and ends it. Idempotent. */
void dwprefetch_finish(struct dwprefetch *d);

/* The opened file of (path, inode), handed over (NULL if none: the caller opens it). Before
 * finish as well: a file the thread is opening is waited for; one it has not started on is left
 * to the caller (and never opened by the thread), so the caller and the thread open different
 * files side by side. */
struct dw_file *dwprefetch_take(struct dwprefetch *d, const char *path, uint64_t inode);

/* Closes what was not taken, frees everything. */
void dwprefetch_free(struct dwprefetch *d);

#endif
