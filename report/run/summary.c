/* summary.c: the run summary as a whole (summary.h): what its sections' loaders took, freed in
 * one place. It must never read or print: the sections (summary_*.c) do. */
#include "summary.h"

void run_summary_free(struct run_summary *r)
{
    runmeta_free(&r->meta);
    run_procs_free(&r->procs);
    phases_free(r->phases);
    free_samples(r);
    cJSON_Delete(r->counters.first);
    runlog_free(&r->log);
}
