/* summary_phases.c: the summary's phase boundaries, read once through format/phases.c (the one
 * phases.jsonl reader). It must never print a boundary the reader did not accept. */
#include "report.h"
#include "runfolder.h"
#include "files.h"
#include "summary.h"

#include <inttypes.h>

#define BOUNDARIES_SHOWN 200

int load_phases(struct run_summary *r, char *err, size_t errlen)
{
    char path[PATH_MAX];
    int there = runfolder_optional(path, sizeof path, r->dir, RUN_PHASES, err, errlen);
    if (there <= 0)
        return there; /* 0: a run without markers */
    return phases_load(path, &r->phases, err, errlen);
}

void print_boundaries(const struct run_summary *r)
{
    const struct phases *p = r->phases;
    if (!p) {
        printf("\nboundaries: none (no phases.jsonl)\n");
        return;
    }
    printf("\nboundaries: %zu (time from the first)\n", p->nb);
    for (size_t i = 0; i < p->nb && i < BOUNDARIES_SHOWN; i++) {
        const struct phase_boundary *b = &p->b[i];
        printf("  %+12.6f s  %-20s %-5s", (double)(b->t_ns - p->b[0].t_ns) / 1e9, b->name,
               b->begin ? "begin" : "end");
        if (b->tokens >= 0)
            printf("  tokens=%lld", b->tokens);
        if (b->source[0])
            printf("  (%s)", b->source);
        if (!b->matched)
            printf("  [no open phase of that name: skipped]");
        printf("\n");
    }
    if (p->nb > BOUNDARIES_SHOWN)
        printf("  ... %zu more\n", p->nb - BOUNDARIES_SHOWN);
    if (p->bad_lines)
        printf("  note: %zu bad lines skipped (first at line %zu)\n", p->bad_lines,
               p->first_bad_line);
    if (p->unclosed)
        printf("  note: %zu phase%s never ended: counted to the run's end\n", p->unclosed,
               p->unclosed == 1 ? "" : "s");
}
