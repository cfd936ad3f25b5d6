/* runlog.c: perfscope.log read once, bounded (runlog.h). It must never print and never keep
 * more than `keep` lines. */
#include "runlog.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "runfolder.h"
#include "textfile.h"

int runlog_load(const char *dir, size_t keep, struct run_log *log, char *err, size_t errlen)
{
    memset(log, 0, sizeof *log);
    char path[PATH_MAX];
    int there = runfolder_optional(path, sizeof path, dir, RUN_LOG, err, errlen);
    if (there <= 0)
        return there;
    struct textfile tf;
    if (textfile_open(&tf, path, RUNLOG_LINE_CAP, err, errlen) != 0)
        return -1;
    log->present = 1;
    log->line = calloc(keep ? keep : 1, sizeof *log->line);
    log->cut = calloc(keep ? keep : 1, 1);
    int oom = !log->line || !log->cut;
    char *line;
    while (!oom && (line = textfile_next(&tf, NULL)) != NULL) {
        if (!line[strspn(line, " \t\r")])
            continue;
        if (log->n == keep) {
            log->more++;
            continue;
        }
        if (!(log->line[log->n] = strdup(line))) {
            oom = 1;
            break;
        }
        log->cut[log->n++] = (unsigned char)tf.too_long;
    }
    if (textfile_finish(&tf, path, oom, err, errlen) != 0) {
        runlog_free(log);
        return -1;
    }
    return 0;
}

void runlog_free(struct run_log *log)
{
    for (size_t i = 0; log->line && i < log->n; i++)
        free(log->line[i]);
    free(log->line);
    free(log->cut);
    memset(log, 0, sizeof *log);
}
