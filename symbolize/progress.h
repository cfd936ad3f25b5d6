/* progress.h: the symbolizer's progress line on a terminal: "symbolizing: 400k/1.0M samples",
 * rewritten in place with '\r', then "symbolizing: writing the outputs", erased at the end. Shown
 * only on a terminal (the caller gives a descriptor that is one, or none) and only once the work
 * has taken PROGRESS_AFTER_MS (PERFSCOPE_PROGRESS_AFTER_MS, a whole number of ms, overrides it:
 * for tests); at most one rewrite every 200 ms. It must never write anything but that one line,
 * and never write at all where fd is not a terminal. */
#ifndef PERFSCOPE_SYMBOLIZE_PROGRESS_H
#define PERFSCOPE_SYMBOLIZE_PROGRESS_H

#include <stdint.h>

#define PROGRESS_AFTER_MS 1000

/* fd <= 0 or not a terminal: every call below does nothing. total: the samples to come (0
 * unknown). */
void progress_begin(int fd, uint64_t total);
/* Whether a line may be shown (a terminal was given): worth counting the total for. */
int progress_active(void);
/* The total, once known. */
void progress_total(uint64_t n);
/* done samples so far; cheap enough to call for every sample. */
void progress_samples(uint64_t done);
/* A stage after the samples ("writing the outputs"). */
void progress_stage(const char *what);
/* Erases the line if one was shown. */
void progress_end(void);

#endif
