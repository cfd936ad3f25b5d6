/* dump_run.c: `perfscope-report dump run OUT`, the first report: what the run recorded, section
 * by section (meta, samples per file and thread, samples per phase group, boundaries, counters,
 * the shim's log), through the run summary's loaders and printers (run/summary.h). It must
 * never print before every input has been read and accepted, and never write into OUT. */
#include "dump.h"
#include "report.h"
#include "run/summary.h"
#include "runfolder.h"

int dump_run(const char *dir)
{
    char err[REPORT_ERR_MAX] = "";
    struct run_summary r = {.dir = dir};
    /* Phases before samples: each sample is counted in the phase open at its time. */
    int ok = runfolder_check_run(dir, err, sizeof err) == 0 && load_meta(&r, err, sizeof err) == 0 &&
             load_phases(&r, err, sizeof err) == 0 && load_samples(&r, err, sizeof err) == 0 &&
             load_counters(&r, err, sizeof err) == 0 && load_log(&r, LOG_LINES_SHOWN, err, sizeof err) == 0;
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
