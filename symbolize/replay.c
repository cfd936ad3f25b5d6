/* replay.c: the samples of a collected profile again, in file order (see replay.h), from the
 * spill or the sample files. It must
 * never write into the profile and never return more samples of a file than collecting counted. */
#include "replay.h"
#include "samples.h"

#include <stdlib.h>
#include <string.h>

/* Records are taken PROF_FIND_BATCH at a time, their frames copied out of the reader's block
 * (which the next read refills), and their stacks looked up together (prof_stack_find_batch). */
struct replay_batch {
    struct sample s[PROF_FIND_BATCH];
    uint32_t node[PROF_FIND_BATCH];
    uint64_t frames[PROF_FIND_BATCH][SAMPLEFILE_MAX_FRAMES];
};

/* From the spill (spill.h): the same samples, 16 bytes each, nothing looked up but the node of
 * a stack cache entry. 0, 1 (fn stopped it), or -1 when the spill cannot be read (nothing was
 * passed to fn then: the caller reads the sample files). */
static int from_spill(const struct profile *p, int with_phase,
                      int (*fn)(void *arg, const struct replay_sample *s), void *arg)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < p->nimg; i++)
        if (p->img[i].usable)
            total += p->img[i].samples;
    if (!p->spill.ok || p->spill.n != total)
        return -1;
    struct spill_rec *r = malloc(SPILL_BATCH * sizeof *r);
    if (!r)
        return -1;
    /* The first batch read before any sample is handed out, so a spill that cannot be read at
     * all falls back whole; one that fails later cannot (fn has seen samples): -1 then too,
     * which the callers take as "not every sample" (as a file that changed). */
    int rc = 0;
    uint64_t at = 0;
    size_t phase_hint = 0;
    for (uint32_t i = 0; i < p->nimg && rc == 0; i++) {
        const struct prof_image *img = &p->img[i];
        if (!img->usable)
            continue;
        for (uint64_t k = 0; k < img->samples && rc == 0;) {
            size_t n = img->samples - k < SPILL_BATCH ? (size_t)(img->samples - k) : SPILL_BATCH;
            if (spill_read(&p->spill, at, n, r) != 0) {
                rc = -1;
                break;
            }
            for (size_t j = 0; j < n && rc == 0; j++) {
                uint32_t ref = r[j].ref;
                struct replay_sample s = {.image = i, .thread = r[j].thread, .time_ns = r[j].time_ns};
                if (ref & SPILL_NODE)
                    s.node = ref & ~SPILL_NODE;
                else if ((size_t)ref - 1 + 2 < p->sc.used)
                    s.node = (uint32_t)p->sc.words[ref - 1 + 2];
                else
                    s.node = UINT32_MAX;
                if (s.thread >= p->nthr || s.node >= p->nnodes) {
                    rc = -1;
                    break;
                }
                s.phase = with_phase && p->phases ? phases_at_hint(p->phases, s.time_ns, &phase_hint)
                                                  : -1;
                if (fn(arg, &s))
                    rc = 1;
            }
            k += n;
            at += n;
        }
    }
    free(r);
    return rc;
}

int prof_replay(const struct profile *p, int with_phase,
                int (*fn)(void *arg, const struct replay_sample *s), void *arg)
{
    if (p->spill.ok && p->spill.n) {
        struct spill_rec probe;
        if (spill_read(&p->spill, 0, 1, &probe) == 0)
            return from_spill(p, with_phase, fn, arg);
    }
    struct replay_batch *b = malloc(sizeof *b);
    if (!b)
        return -1;
    int rc = 0;
    size_t phase_hint = 0;
    for (uint32_t i = 0; i < p->nimg && rc == 0; i++) {
        const struct prof_image *img = &p->img[i];
        if (!img->usable || !img->samples)
            continue;
        struct samples_file sf;
        char err[512];
        if (samples_open(&sf, img->bin_path, err, sizeof err) != 0) {
            rc = -1;
            break;
        }
        uint64_t seen = 0, limit = img->samples + img->empty;
        int more = 1;
        while (rc == 0 && more) {
            size_t nb = 0;
            while (nb < PROF_FIND_BATCH && seen < limit &&
                   (more = samples_next(&sf, &b->s[nb], err, sizeof err) == 1)) {
                seen++;
                if (b->s[nb].nframes == 0)
                    continue;
                memcpy(b->frames[nb], b->s[nb].frames, b->s[nb].nframes * sizeof b->frames[nb][0]);
                b->s[nb].frames = b->frames[nb];
                nb++;
            }
            if (seen >= limit)
                more = 0;
            prof_stack_find_batch(p, i, b->s, nb, b->node);
            for (size_t k = 0; k < nb && rc == 0; k++) {
                struct replay_sample r = {.image = i, .time_ns = b->s[k].time_ns, .node = b->node[k]};
                r.thread = prof_thread_find(p, i, b->s[k].tid);
                if (r.thread == UINT32_MAX || r.node == UINT32_MAX) {
                    rc = -1;
                    break;
                }
                r.phase = with_phase && p->phases
                              ? phases_at_hint(p->phases, b->s[k].time_ns, &phase_hint)
                              : -1;
                if (fn(arg, &r))
                    rc = 1;
            }
        }
        samples_close(&sf);
        if (rc == 0 && seen < limit)
            rc = -1;
    }
    free(b);
    return rc;
}
