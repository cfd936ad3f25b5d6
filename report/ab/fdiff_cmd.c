/* fdiff_cmd.c: `perfscope-report diff --profiles [--json] [--html FILE] [--min-pp X] A... -- B...` (fdiff.h):
 * each argument a profiled run folder or a folder of them (its subfolders that hold a run, in
 * version order, as diff takes them); --html FILE also writes the page (fdiff_html.c) through
 * format/outfile.c. It must never print before every run is read: bad input
 * is one line on stderr and exit 2. */
#include "fdiff.h"
#include "outfile.h"
#include "report.h"
#include "runfolder.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int usage(void)
{
    report_fail("usage: perfscope-report diff --profiles [--json] [--html FILE] [--min-pp X] A... -- B...");
    return REPORT_BAD_INPUT;
}

static int skip_dot(const struct dirent *e)
{
    return e->d_name[0] != '.';
}

static int add_arg(struct fd_set *s, int side, const char *arg, char *err, size_t errlen)
{
    struct stat st;
    if (stat(arg, &st) != 0) {
        snprintf(err, errlen, "%s: cannot open: %s", arg, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: not a run folder (diff --profiles takes profiled run folders)", arg);
        return -1;
    }
    if (runfolder_holds_run(arg))
        return fd_add_run(s, side, arg, err, errlen);
    struct dirent **names = NULL;
    int n = scandir(arg, &names, skip_dot, versionsort);
    if (n < 0) {
        snprintf(err, errlen, "%s: cannot list: %s", arg, strerror(errno));
        return -1;
    }
    size_t before = s->n[side];
    int rc = 0;
    for (int i = 0; i < n; i++) {
        char path[PATH_MAX];
        if (rc == 0 && runfolder_path(path, sizeof path, arg, names[i]->d_name, err, errlen) != 0)
            rc = -1;
        if (rc == 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode) && runfolder_holds_run(path))
            rc = fd_add_run(s, side, path, err, errlen);
        free(names[i]);
    }
    free(names);
    if (rc == 0 && s->n[side] == before) {
        snprintf(err, errlen, "%s: not a run folder, and no run folders inside", arg);
        rc = -1;
    }
    return rc;
}

int cmd_fdiff(int argc, char **argv)
{
    int json = 0, sep = -1, nargs[2] = {0, 0};
    const char *html = NULL;
    struct fd_set s;
    memset(&s, 0, sizeof s);
    s.floor_pp = FDIFF_FLOOR_PP;
    for (int i = 0; i < argc; i++) {
        if (sep < 0 && strcmp(argv[i], "--") == 0) {
            sep = i;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--profiles") == 0) {
            continue;
        } else if (strcmp(argv[i], "--html") == 0) {
            if (i + 1 >= argc || !argv[i + 1][0])
                return usage();
            html = argv[++i];
        } else if (strcmp(argv[i], "--min-pp") == 0) {
            char *end;
            if (i + 1 >= argc)
                return usage();
            s.floor_pp = strtod(argv[++i], &end);
            if (end == argv[i] || *end || !(s.floor_pp >= 0) || s.floor_pp > 100) {
                report_fail("--min-pp %s: want percentage points, 0 to 100", argv[i]);
                return REPORT_BAD_INPUT;
            }
        } else if (argv[i][0] == '-' && argv[i][1]) {
            report_fail("diff --profiles: unknown option %s", argv[i]);
            return REPORT_BAD_INPUT;
        } else {
            nargs[sep >= 0]++;
        }
    }
    if (sep < 0 || !nargs[0] || !nargs[1])
        return usage();
    char err[REPORT_ERR_MAX] = "";
    int rc = 0;
    for (int i = 0, side = 0; rc == 0 && i < argc; i++) {
        if (i == sep)
            side = 1;
        else if (strcmp(argv[i], "--min-pp") == 0 || strcmp(argv[i], "--html") == 0)
            i++;
        else if (argv[i][0] != '-' || !argv[i][1])
            rc = add_arg(&s, side, argv[i], err, sizeof err);
    }
    struct fd_result r;
    memset(&r, 0, sizeof r);
    if (rc == 0)
        rc = fd_compute(&s, &r, err, sizeof err);
    if (rc != 0) {
        report_fail("%s", err);
        fd_set_free(&s);
        return REPORT_BAD_INPUT;
    }
    if (html) {
        char *page = fd_html(&s, &r);
        if (!page || outfile_write_all(html, page, strlen(page), err, sizeof err) != 0) {
            report_fail("%s", page ? err : "diff --profiles --html: out of memory");
            free(page);
            fd_result_free(&r);
            fd_set_free(&s);
            return REPORT_BAD_INPUT;
        }
        free(page);
    }
    if (json) {
        cJSON *o = fd_json(&s, &r);
        char *text = o ? outfile_json_text(o) : NULL;
        cJSON_Delete(o);
        if (!text) {
            report_fail("diff --profiles: out of memory");
            rc = REPORT_BAD_INPUT;
        } else {
            printf("%s\n", text);
            free(text);
        }
    } else {
        fd_render(stdout, &s, &r);
    }
    fd_result_free(&r);
    fd_set_free(&s);
    return rc;
}
