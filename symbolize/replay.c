/* replay.c: the samples of a collected profile again, in file order (see replay.h). It must
 * never write into the profile and never return more samples of a file than collecting counted. */
#include "replay.h"
#include "samples.h"

int prof_replay(const struct profile *p, int (*fn)(void *arg, const struct replay_sample *s),
                void *arg)
{
    for (uint32_t i = 0; i < p->nimg; i++) {
        const struct prof_image *img = &p->img[i];
        if (!img->usable || !img->samples)
            continue;
        struct samples_file sf;
        char err[512];
        if (samples_open(&sf, img->bin_path, err, sizeof err) != 0)
            return -1;
        struct sample s;
        uint64_t seen = 0, limit = img->samples + img->empty;
        int rc = 0;
        while (rc == 0 && seen < limit && samples_next(&sf, &s, err, sizeof err) == 1) {
            seen++;
            if (s.nframes == 0)
                continue;
            struct replay_sample r = {.image = i, .time_ns = s.time_ns};
            r.thread = prof_thread_find(p, i, s.tid);
            r.node = prof_stack_find(p, i, s.time_ns, s.frames, s.nframes);
            if (r.thread == UINT32_MAX || r.node == UINT32_MAX) {
                rc = -1;
                break;
            }
            r.phase = p->phases ? phases_at(p->phases, s.time_ns) : -1;
            if (fn(arg, &r))
                rc = 1;
        }
        samples_close(&sf);
        if (rc)
            return rc;
        if (seen < limit)
            return -1;
    }
    return 0;
}
