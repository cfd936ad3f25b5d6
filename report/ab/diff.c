/* diff.c: `perfscope-report diff` (see diff.h). Each argument is a run.json file, a run folder
 * holding run.json, a raw run folder (shim output without run.json: summarized first, through
 * run_summarize of run.c), or a folder of such run folders (its subfolders in version order).
 * Prints compare.py's render_diff table, or with --json the object its diff returns, then what
 * the reference lacks: permutation p-values, bootstrap intervals, a too-few-runs warning. It
 * must never print before every input has been read and accepted, and never write into a run
 * folder itself (only run_summarize does, in a raw one). */
#include "diff.h"
#include "fdiff.h"
#include "outfile.h"
#include "runfolder.h"
#include "jsondoc.h"
#include "jsonl.h"
#include "judge.h"
#include "noise.h"
#include "pyfmt.h"
#include "report.h"
#include "run/run.h"
#include "samples.h"
#include "stats.h"
#include "warn.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct run_entry {
    char *path;              /* the run.json read, or the raw folder that was not summarized */
    cJSON *run;
    char *note;              /* why a raw folder was not summarized, or NULL */
};

struct side {
    struct run_entry *v;
    size_t n, cap;
};

struct diff_opts {
    int json;
    const char *noise_file, *noise_case;
};

static int side_push(struct side *s, const char *path, cJSON *run, char *err, size_t errlen)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        struct run_entry *v = realloc(s->v, cap * sizeof *v);
        if (!v) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        s->v = v;
        s->cap = cap;
    }
    char *p = strdup(path);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    s->v[s->n].path = p;
    s->v[s->n].run = run;
    s->v[s->n].note = NULL;
    s->n++;
    return 0;
}

static void side_free(struct side *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->v[i].path);
        free(s->v[i].note);
        cJSON_Delete(s->v[i].run);
    }
    free(s->v);
}

static int exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

/* Reads one run.json and checks it as compare.py would use it. */
static int load_run_file(struct side *s, const char *path, char *err, size_t errlen)
{
    cJSON *run;
    if (json_file_load(path, JSON_FILE_MAX_BYTES, 0, &run, err, errlen) != 0)
        return -1;
    char what[REPORT_ERR_MAX];
    if (judge_check_run(run, what, sizeof what) != 0) {
        snprintf(err, errlen, "%s: %s", path, what);
        cJSON_Delete(run);
        return -1;
    }
    if (side_push(s, path, run, err, errlen) != 0) {
        cJSON_Delete(run);
        return -1;
    }
    return 0;
}

/* A run folder: its run.json, made first when the folder is raw shim output. */
static int load_run_dir(struct side *s, const char *dir, char *err, size_t errlen)
{
    char path[PATH_MAX];
    if (runfolder_path(path, sizeof path, dir, RUN_JSON, err, errlen) != 0)
        return -1;
    if (!exists(path)) {
        char why[REPORT_ERR_MAX] = "";
        if (run_summarize(dir, why, sizeof why) != 0 || !exists(path)) {
            if (!why[0])
                snprintf(why, sizeof why, "no run.json was written");
            cJSON *failed = cJSON_CreateObject();
            if (!failed || !cJSON_AddStringToObject(failed, "status", "not summarized")) {
                cJSON_Delete(failed);
                snprintf(err, errlen, "out of memory");
                return -1;
            }
            if (side_push(s, dir, failed, err, errlen) != 0) {
                cJSON_Delete(failed);
                return -1;
            }
            s->v[s->n - 1].note = strdup(why); /* told once every input is read */
            return 0;
        }
    }
    return load_run_file(s, path, err, errlen);
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int skip_dot(const struct dirent *e)
{
    return e->d_name[0] != '.';
}

/* One command-line argument: a file, a run folder, or a folder of run folders. */
static int load_arg(struct side *s, const char *arg, char *err, size_t errlen)
{
    struct stat st;
    if (stat(arg, &st) != 0) {
        snprintf(err, errlen, "%s: cannot open: %s", arg, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        return load_run_file(s, arg, err, errlen);
    char path[PATH_MAX];
    if (runfolder_path(path, sizeof path, arg, RUN_JSON, err, errlen) != 0)
        return -1;
    if (exists(path) || runfolder_holds_run(arg))
        return load_run_dir(s, arg, err, errlen);
    struct dirent **names = NULL;
    int n = scandir(arg, &names, skip_dot, versionsort);
    if (n < 0) {
        snprintf(err, errlen, "%s: cannot list: %s", arg, strerror(errno));
        return -1;
    }
    size_t before = s->n;
    int rc = 0;
    for (int i = 0; i < n; i++) {
        if (rc == 0 && runfolder_path(path, sizeof path, arg, names[i]->d_name, err, errlen) != 0)
            rc = -1;
        if (rc == 0 && is_dir(path)) {
            char rj[PATH_MAX];
            if (runfolder_path(rj, sizeof rj, path, RUN_JSON, err, errlen) != 0)
                rc = -1;
            else if (exists(rj) || runfolder_holds_run(path))
                rc = load_run_dir(s, path, err, errlen);
        }
        free(names[i]);
    }
    free(names);
    if (rc == 0 && s->n == before) {
        snprintf(err, errlen, "%s: no run.json here, not a run folder, and no run folders inside",
                 arg);
        rc = -1;
    }
    return rc;
}

/* Permutation p-values, bootstrap intervals and the too-few-runs warnings, per metric judged. */
struct metric_stats {
    int have_p, have_ci;
    struct perm_result perm;
    struct boot_result boot;
    double min_p;
};

static void compute_stats(const struct diff_result *d, struct metric_stats st[JUDGE_NMETRICS])
{
    for (int m = 0; m < JUDGE_NMETRICS; m++) {
        const struct judge_result *r = &d->metrics[m];
        memset(&st[m], 0, sizeof st[m]);
        if (r->verdict == JUDGE_MISSING)
            continue;
        st[m].have_p = stats_permutation(r->a_runs, r->na, r->b_runs, r->nb, &st[m].perm) == 0;
        st[m].have_ci = stats_bootstrap_ratio(r->a_runs, r->na, r->b_runs, r->nb, STATS_SEED,
                                              &st[m].boot) == 0;
        st[m].min_p = stats_min_p(r->na, r->nb);
    }
}

static int add_num(cJSON *obj, const char *key, double v)
{
    cJSON *x = json_number(v);
    if (x && cJSON_AddItemToObject(obj, key, x))
        return 1;
    cJSON_Delete(x);
    return 0;
}

static int push_num(cJSON *arr, double v)
{
    cJSON *x = json_number(v);
    if (x && cJSON_AddItemToArray(arr, x))
        return 1;
    cJSON_Delete(x);
    return 0;
}

static cJSON *stats_json(const struct diff_result *d, const struct metric_stats *st,
                         const struct warnings *w)
{
    cJSON *out = cJSON_CreateObject();
    cJSON *metrics = cJSON_AddObjectToObject(out, "metrics");
    int bad = !metrics;
    for (int m = 0; !bad && m < JUDGE_NMETRICS; m++) {
        const struct judge_result *r = &d->metrics[m];
        if (r->verdict == JUDGE_MISSING)
            continue;
        cJSON *o = cJSON_AddObjectToObject(metrics, judge_metrics[m].name);
        bad |= !o;
        if (bad)
            break;
        if (st[m].have_p) {
            bad |= !add_num(o, "p_value", st[m].perm.p);
            bad |= !cJSON_AddStringToObject(o, "p_method", st[m].perm.exact ? "exact" : "monte-carlo");
            bad |= !add_num(o, "splits", (double)st[m].perm.splits);
        } else {
            bad |= !cJSON_AddNullToObject(o, "p_value");
        }
        bad |= !add_num(o, "min_p", st[m].min_p);
        if (st[m].have_ci) {
            cJSON *ci = cJSON_AddArrayToObject(o, "ratio_ci95");
            bad |= !ci || !push_num(ci, py_round(st[m].boot.lo, 4)) ||
                   !push_num(ci, py_round(st[m].boot.hi, 4));
            bad |= !add_num(o, "bootstrap_resamples", st[m].boot.resamples);
        } else {
            bad |= !cJSON_AddNullToObject(o, "ratio_ci95");
        }
    }
    cJSON *warnings = cJSON_AddArrayToObject(out, "warnings");
    bad |= !warnings;
    for (size_t i = 0; !bad && i < w->n; i++)
        bad |= !cJSON_AddItemToArray(warnings, cJSON_CreateString(w->line[i]));
    bad |= !add_num(out, "seed", (double)STATS_SEED);
    if (bad) {
        cJSON_Delete(out);
        return NULL;
    }
    return out;
}

/* The table of p-values and intervals, then the warnings (after the table's header even when
 * no metric was judged, so compare.py's table above stays exactly its own). */
static void render_stats(const struct diff_result *d, const struct metric_stats *st,
                         const struct warnings *w)
{
    int any = w->n > 0;
    for (int m = 0; m < JUDGE_NMETRICS; m++)
        any |= d->metrics[m].verdict != JUDGE_MISSING;
    if (!any)
        return;
    printf("\n| metric | p (permutation) | ratio 95%% interval (bootstrap) |\n|---|---:|---|\n");
    for (int m = 0; m < JUDGE_NMETRICS; m++) {
        if (d->metrics[m].verdict == JUDGE_MISSING)
            continue;
        char lo[PYFMT_BUF], hi[PYFMT_BUF];
        printf("| %s | ", judge_metrics[m].name);
        if (st[m].have_p)
            printf("%.3g (%s, %llu splits)", st[m].perm.p,
                   st[m].perm.exact ? "exact" : "Monte Carlo", (unsigned long long)st[m].perm.splits);
        else
            printf("-");
        if (st[m].have_ci)
            printf(" | %s to %s |\n", py_repr(py_round(st[m].boot.lo, 4), lo, sizeof lo),
                   py_repr(py_round(st[m].boot.hi, 4), hi, sizeof hi));
        else
            printf(" | - (A's mean is 0) |\n");
    }
    for (size_t i = 0; i < w->n; i++)
        printf("\nWarning: %s.\n", w->line[i]);
}

static int usage(void)
{
    report_fail("usage: perfscope-report diff [--noise FILE [--case LABEL]] [--json] A... -- B...");
    return REPORT_BAD_INPUT;
}

int cmd_diff(int argc, char **argv)
{
    for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--profiles") == 0)
            return cmd_fdiff(argc, argv); /* which functions changed: fdiff.h */
    struct diff_opts o = {0};
    int sep = -1, nargs[2] = {0, 0};
    for (int i = 0; i < argc; i++) {
        if (sep < 0 && strcmp(argv[i], "--") == 0) {
            sep = i;
        } else if (strcmp(argv[i], "--json") == 0) {
            o.json = 1;
        } else if (strcmp(argv[i], "--noise") == 0 || strcmp(argv[i], "--case") == 0) {
            if (i + 1 >= argc)
                return usage();
            const char **dst = argv[i][2] == 'n' ? &o.noise_file : &o.noise_case;
            *dst = argv[i + 1];
            i++;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            report_fail("diff: unknown option %s", argv[i]);
            return REPORT_BAD_INPUT;
        } else {
            nargs[sep >= 0]++;
        }
    }
    if (sep < 0 || nargs[0] == 0 || nargs[1] == 0 || (o.noise_case && !o.noise_file))
        return usage();

    char err[REPORT_ERR_MAX] = "";
    double noise[JUDGE_NMETRICS] = {0};
    static struct warnings noise_warn;
    memset(&noise_warn, 0, sizeof noise_warn);
    if (o.noise_file) {
        cJSON *doc;
        json_file_load(o.noise_file, JSON_FILE_MAX_BYTES, 0, &doc, err, sizeof err);
        char what[REPORT_ERR_MAX];
        int rc = doc ? noise_select(doc, o.noise_case, noise, what, sizeof what) : -1;
        if (rc == 0)
            warn_noise_metrics(&noise_warn, o.noise_file, o.noise_case,
                               noise_selected(doc, o.noise_case));
        cJSON_Delete(doc);
        if (rc != 0) {
            if (doc)
                report_fail("%s: %s", o.noise_file, what);
            else
                report_fail("%s", err);
            return REPORT_BAD_INPUT;
        }
    }

    struct side sides[2] = {{0}, {0}};
    int rc = 0;
    for (int i = 0, s = 0; rc == 0 && i < argc; i++) {
        if (i == sep) {
            s = 1;
        } else if (strcmp(argv[i], "--noise") == 0 || strcmp(argv[i], "--case") == 0) {
            i++;
        } else if (strcmp(argv[i], "--json") != 0) {
            rc = load_arg(&sides[s], argv[i], err, sizeof err);
        }
    }
    for (int s = 0; rc == 0 && s < 2; s++)
        for (size_t i = 0; i < sides[s].n; i++)
            if (sides[s].v[i].note)
                report_fail("%s: not summarized (%s); counted as a failed run",
                            sides[s].v[i].path, sides[s].v[i].note);
    struct diff_result d;
    static struct warnings w;
    int no_verdict = 0;
    memset(&w, 0, sizeof w);
    if (rc == 0) {
        /* judge_diff takes the runs alone, in argument order. */
        const cJSON **runs[2] = {NULL, NULL};
        const char **names[2] = {NULL, NULL};
        for (int s = 0; s < 2; s++) {
            runs[s] = malloc((sides[s].n ? sides[s].n : 1) * sizeof *runs[s]);
            names[s] = malloc((sides[s].n ? sides[s].n : 1) * sizeof *names[s]);
            for (size_t i = 0; runs[s] && names[s] && i < sides[s].n; i++) {
                runs[s][i] = sides[s].v[i].run;
                names[s][i] = sides[s].v[i].path;
            }
        }
        if (!runs[0] || !runs[1] || !names[0] || !names[1] ||
            judge_diff(runs[0], sides[0].n, runs[1], sides[1].n, noise, &d) != 0) {
            snprintf(err, sizeof err, "out of memory");
            rc = -1;
        } else {
            warn_few_runs(&w, &d);
            no_verdict = warn_no_verdict(&w, &d, runs[0], sides[0].n, runs[1], sides[1].n);
            warn_no_throughput(&w, runs[0], sides[0].n, "A", names[0]);
            warn_no_throughput(&w, runs[1], sides[1].n, "B", names[1]);
            for (size_t i = 0; i < noise_warn.n; i++)
                warn_add(&w, "%s", noise_warn.line[i]);
        }
        for (int s = 0; s < 2; s++) {
            free(runs[s]);
            free(names[s]);
        }
    }
    side_free(&sides[0]);
    side_free(&sides[1]);
    if (rc != 0) {
        report_fail("%s", err);
        return REPORT_BAD_INPUT;
    }

    struct metric_stats st[JUDGE_NMETRICS];
    compute_stats(&d, st);
    if (o.json) {
        cJSON *out = diff_to_json(&d);
        cJSON *extra = out ? stats_json(&d, st, &w) : NULL;
        char *text = NULL;
        if (extra && cJSON_AddItemToObject(out, "stats", extra))
            text = outfile_json_text(out);
        else
            cJSON_Delete(extra);
        cJSON_Delete(out);
        if (!text) {
            diff_free(&d);
            report_fail("diff: out of memory");
            return REPORT_BAD_INPUT;
        }
        printf("%s\n", text);
        free(text);
    } else {
        /* compare.py's table of dropped runs still reads "Verdict: **neutral**": the first line
         * says there is none, before anyone reads that (DESIGN 11). */
        for (size_t i = 0; no_verdict && i < w.n; i++)
            if (strncmp(w.line[i], WARN_NO_VERDICT, strlen(WARN_NO_VERDICT)) == 0)
                printf("**No verdict**: %s. The table below is compare.py's, whose words stay.\n\n",
                       w.line[i] + strlen(WARN_NO_VERDICT));
        render_diff(stdout, &d, "A", "B");
        render_stats(&d, st, &w);
    }
    fflush(stdout);
    /* On stderr: every warning under the table; with --json (where stats.warnings holds them
     * all) only the one that says there is no verdict. */
    for (size_t i = 0; i < w.n; i++)
        if (!o.json || (no_verdict && strncmp(w.line[i], WARN_NO_VERDICT, strlen(WARN_NO_VERDICT)) == 0))
            report_fail("warning: %s", w.line[i]);
    diff_free(&d);
    /* A table of dropped runs is no verdict: exit 2. The JSON keeps compare.py's object, exit 0. */
    return no_verdict && !o.json ? REPORT_BAD_INPUT : 0;
}
