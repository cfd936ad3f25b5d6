/* run_groups.c: a profiled run's per-group figures for the function-level diff (run.h): read
 * from the run model (runmodel.h), never worked out again here. It must never print. */
#include "run.h"
#include "runmodel.h"
#include "textfile.h"

#include <stdlib.h>
#include <string.h>

int run_groups_load(const char *dir, struct run_groups *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    struct run_model m;
    if (run_model_load(dir, 1, &m, err, errlen) != 0) {
        run_model_free(&m);
        return -1;
    }
    out->g = calloc(m.ngr ? m.ngr : 1, sizeof *out->g);
    if (!out->g) {
        run_model_free(&m);
        reader_error(err, errlen, dir, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < m.ngr; i++) {
        struct run_group_fig *f = &out->g[out->n++];
        snprintf(f->name, sizeof f->name, "%s", m.gr[i].name);
        f->wall_s = m.gr[i].b.wall_s;
        f->tokens = m.gr[i].b.tokens;
        f->samples = m.gr[i].samples;
    }
    out->samples = m.samples;
    out->period_s = m.prof && m.prof->period_s > 0 ? m.prof->period_s : -1;
    snprintf(out->note, sizeof out->note, "%s", m.prof ? "" : m.prof_note[0] ? m.prof_note
                                                                              : "no profile");
    run_model_free(&m);
    return 0;
}

void run_groups_free(struct run_groups *g)
{
    free(g->g);
    memset(g, 0, sizeof *g);
}
