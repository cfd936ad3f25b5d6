/* replay.h: the samples of a collected profile again, one at a time in each file's order (so in
 * time order per thread), each with its call tree node, thread and phase: for the writers that
 * need more than the (group, thread, stack) counters - trace.json's per-thread sample slices,
 * pprof's per-occurrence phase labels. It reads collecting's spill (spill.h: the counted samples,
 * 16 bytes each) when there is one, else the sample files a second time through format/samples.c,
 * and only looks up what collecting built (prof_stack_find_batch): it never changes the profile,
 * so writers may replay side by side. A file gives at most the records collecting counted from
 * it, so a file still growing gives the same samples. */
#ifndef PERFSCOPE_REPLAY_H
#define PERFSCOPE_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

struct replay_sample {
    uint32_t image, thread, node;
    uint64_t time_ns;
    int phase;            /* innermost phase occurrence (index into p->phases->v), -1: none (or
                           * not asked for) */
};

/* Calls fn for every counted sample; fn returns nonzero to stop. with_phase: 1 to have each
 * sample's phase looked up, 0 when fn does not use it (phase -1: a lookup a sample saved).
 * Returns 0 when every sample was found as collecting counted it, -1 when one was not (a file
 * changed since: the caller falls back to the counters), 1 when fn stopped it. */
int prof_replay(const struct profile *p, int with_phase,
                int (*fn)(void *arg, const struct replay_sample *s), void *arg);

#endif
