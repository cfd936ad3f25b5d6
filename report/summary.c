/* summary.c: `perfscope-report dump run OUT`, the first report: what the run recorded, section by
 * section (meta, samples per file and thread, samples per phase group, boundaries, counters,
 * the shim's log). It must never print before every input has been read and accepted, and never
 * write into OUT. */
#include "report.h"
#include "summary.h"
#include "textfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int run_path(char *buf, size_t size, const char *dir, const char *name, char *err, size_t errlen)
{
    int n = snprintf(buf, size, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= size) {
        reader_error(err, errlen, dir, "path too long");
        return -1;
    }
    return 0;
}

int run_check_dir(const char *dir, char *err, size_t errlen)
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        reader_error(err, errlen, dir, "cannot open: %s", strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        reader_error(err, errlen, dir, "not a folder (want a perfscope output folder)");
        return -1;
    }
    return 0;
}

int run_check_any(const struct run_summary *r, int counters_present, char *err, size_t errlen)
{
    if (r->meta.doc || r->phases || r->nfiles || counters_present || r->has_log)
        return 0;
    reader_error(err, errlen, r->dir, "no perfscope output here (no meta.json, phases.jsonl, "
                                      "cpuprof.*.bin, counters.jsonl or perfscope.log)");
    return -1;
}

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
    int ok = run_check_dir(dir, err, sizeof err) == 0 && load_meta(&r, err, sizeof err) == 0 &&
             load_phases(&r, err, sizeof err) == 0 && load_samples(&r, err, sizeof err) == 0 &&
             load_counters(&r, err, sizeof err) == 0 && load_log(&r, err, sizeof err) == 0 &&
             run_check_any(&r, r.counters.present, err, sizeof err) == 0;
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
