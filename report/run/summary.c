/* summary.c: `perfscope-report dump run OUT`, the first report: what the run recorded, section by
 * section (meta, samples per file and thread, samples per phase group, boundaries, counters,
 * the shim's log). It must never print before every input has been read and accepted, and never
 * write into OUT. */
#include "report.h"
#include "summary.h"
#include "runfolder.h"
#include "textfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void run_summary_free(struct run_summary *r)
{
    runmeta_free(&r->meta);
    phases_free(r->phases);
    free_samples(r);
    cJSON_Delete(r->counters.first);
}

int cmd_summary(const char *dir)
{
    char err[REPORT_ERR_MAX] = "";
    struct run_summary r = {.dir = dir};
    /* Phases before samples: each sample is counted in the phase open at its time. */
    int ok = runfolder_check_run(dir, err, sizeof err) == 0 && load_meta(&r, err, sizeof err) == 0 &&
             load_phases(&r, err, sizeof err) == 0 && load_samples(&r, err, sizeof err) == 0 &&
             load_counters(&r, err, sizeof err) == 0 && load_log(&r, err, sizeof err) == 0;
    if (!ok) {
        report_fail("%s", err);
        run_summary_free(&r);
        return REPORT_BAD_INPUT;
    }
    printf("perfscope run: ");
    put_clean(stdout, dir);
    printf("\n");
    print_meta(&r);
    print_samples(&r);
    print_groups(&r);
    print_boundaries(&r);
    print_counters(&r);
    print_log(&r);
    run_summary_free(&r);
    return 0;
}
