/* cmd_run.c: `perfscope-report [--markdown] OUT` (cmd_run) and its quiet form for the other subcommands,
 * run_summarize (run.h): the run model (runmodel.h) printed as the report, and written as
 * OUT/run.json, OUT/report.md and OUT/report.html. It must write only through a temporary name and a rename
 * (format/outfile.c), and never print before the whole model has been read and worked out. */
#include "run.h"
#include "runmodel.h"
#include "outfile.h"
#include "runfolder.h"
#include "jsonl.h"
#include "report.h"
#include "textfile.h"
#include "termfmt.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int write_outputs(const struct run_model *m, const char *markdown, char *err, size_t errlen)
{
    char path[PATH_MAX];
    cJSON *j = run_json(m);
    if (!j) {
        reader_error(err, errlen, m->dir, "out of memory");
        return -1;
    }
    int rc = -1;
    if (runfolder_path(path, sizeof path, m->dir, RUN_JSON, NULL, 0) != 0) {
        reader_error(err, errlen, m->dir, "path too long");
    } else {
        /* A matrix arm's run.json holds the runner's facts, which the run folder does not:
         * they are kept when the run is summarized again. */
        cJSON *old = NULL;
        char ignored[REPORT_ERR_MAX];
        if (json_file_load(path, JSON_FILE_MAX_BYTES, 1, &old, ignored, sizeof ignored) == 0) {
            cJSON *runner = cJSON_DetachItemFromObjectCaseSensitive(old, "runner");
            if (cJSON_IsObject(runner))
                cJSON_AddItemToObject(j, "runner", runner);
            else
                cJSON_Delete(runner);
        }
        cJSON_Delete(old);
        if (outfile_write_json(path, j, err, errlen) == 0)
            rc = 0;
    }
    cJSON_Delete(j);
    if (rc != 0 || !markdown)
        return rc;
    if (runfolder_path(path, sizeof path, m->dir, RUN_REPORT_MD, NULL, 0) != 0) {
        reader_error(err, errlen, m->dir, "path too long");
        return -1;
    }
    if (outfile_write_all(path, markdown, strlen(markdown), err, errlen) != 0)
        return -1;
    /* report.html goes with report.md: the same model, as a page. */
    char *html = run_html(m);
    if (!html) {
        reader_error(err, errlen, m->dir, "out of memory");
        return -1;
    }
    rc = runfolder_path(path, sizeof path, m->dir, RUN_REPORT_HTML, NULL, 0) != 0 ? -1 : 0;
    if (rc != 0)
        reader_error(err, errlen, m->dir, "path too long");
    else
        rc = outfile_write_all(path, html, strlen(html), err, errlen);
    free(html);
    return rc;
}

int run_summarize(const char *dir, char *err, size_t errlen)
{
    struct run_model m;
    int rc = run_model_load(dir, 0, &m, err, errlen);
    if (rc == 0)
        rc = write_outputs(&m, NULL, err, errlen);
    run_model_free(&m);
    return rc;
}

/* The last line on stderr once the report's files are written: where report.html is, which
 * nothing else on the screen says. `who` names the command ("perfscope record"). */
static void say_written(FILE *f, const char *who, const char *dir)
{
    static const char *const names[] = { RUN_REPORT_HTML, RUN_REPORT_MD, RUN_JSON };
    fprintf(f, "%s: wrote ", who);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        fputs(i ? ", " : "", f);
        put_clean(f, dir);
        fprintf(f, "/%s", names[i]);
    }
    fputc('\n', f);
}

/* What goes on a stream: on a terminal (term_width > 0) the terminal layout of the markdown,
 * else the markdown itself (docs/report.md, "On a terminal"). NULL when out of memory. */
static char *for_stream(const char *md, int fd, int markdown)
{
    int w = markdown ? 0 : term_width(fd);
    return w > 0 ? term_layout(md, w) : strdup(md);
}

int run_record_summary(const char *dir, int report, FILE *f, char *err, size_t errlen)
{
    struct run_model m;
    int rc = run_model_load(dir, report, &m, err, errlen);
    char *md = NULL, *brief = NULL;
    if (rc == 0 && report) {
        md = run_markdown(&m);
        char *short_md = run_markdown_short(&m);
        brief = short_md ? for_stream(short_md, fileno(f), 0) : NULL;
        free(short_md);
        if (!md || !brief) {
            reader_error(err, errlen, dir, "out of memory");
            rc = -1;
        }
    }
    if (rc == 0)
        rc = write_outputs(&m, md, err, errlen);
    if (rc == 0) {
        size_t ph = m.s.phases ? m.s.phases->n : 0;
        fprintf(f, "perfscope record: %llu samples, %zu process%s, %zu phase%s -> ",
                (unsigned long long)m.samples, m.s.procs.processes,
                m.s.procs.processes == 1 ? "" : "es", ph, ph == 1 ? "" : "s");
        put_clean(f, dir);
        fputc('\n', f);
        if (brief) {
            fputc('\n', f);
            fputs(brief, f);
            fputc('\n', f);
            say_written(f, "perfscope record", dir);
        }
        fflush(f);
    }
    free(md);
    free(brief);
    run_model_free(&m);
    return rc;
}

int cmd_run(const char *dir, int markdown)
{
    char err[REPORT_ERR_MAX] = "";
    struct run_model m;
    int rc = run_model_load(dir, 1, &m, err, sizeof err);
    char *md = NULL;
    if (rc == 0) {
        md = run_markdown(&m);
        if (!md) {
            reader_error(err, sizeof err, dir, "out of memory");
            rc = -1;
        }
    }
    if (rc == 0) {
        /* The report is printed even when OUT cannot be written (a folder that is not ours):
         * the write failure is then the one line on stderr, and the exit status 2. */
        char *shown = for_stream(md, STDOUT_FILENO, markdown);
        fputs(shown ? shown : md, stdout);
        free(shown);
        fflush(stdout);
        rc = write_outputs(&m, md, err, sizeof err);
        if (rc == 0)
            say_written(stderr, report_prog, dir);
    }
    free(md);
    run_model_free(&m);
    if (rc != 0) {
        report_fail("%s", err);
        return REPORT_BAD_INPUT;
    }
    return 0;
}
