/* matrix.c: `perfscope-report matrix` (matrix.h): options, then per case its arms in the order
 * given, the judgement of compare.py's diff, and matrix.json and table.md rewritten (temporary
 * name, then rename) after every case. It must refuse bad options and a bad cases or noise file
 * before any arm runs, go on after a failed or timed-out arm, and on SIGINT or SIGTERM stop the
 * running arm and leave the finished cases as they were last written. */
#include "matrix.h"
#include "outfile.h"
#include "files.h"
#include "jsondoc.h"
#include "jsonl.h"
#include "judge.h"
#include "noise.h"
#include "pyfmt.h"
#include "report.h"
#include "warn.h"
#include "fdiff.h"
#include "container/container.h"

#include <errno.h>
#include <limits.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MATRIX_INTERRUPTED 130

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static int usage(void)
{
    report_fail("usage: perfscope-report matrix CASES.json --a NAME=DIR --b NAME=DIR [--order ABBA] "
                "[--timeout S] [--precheck wait|skip|off] [--only REGEX] [--noise FILE] [--out DIR] "
                "[--a-env K=V]... [--b-env K=V]... [--a-args \"...\"] [--b-args \"...\"] "
                "[--profile N]");
    return REPORT_BAD_INPUT;
}

static int side_arg(const char *arg, const char **name, const char **dir)
{
    static char buf[2][4096];
    static int k;
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || !eq[1] || (size_t)(eq - arg) >= 256 || strlen(arg) >= sizeof buf[0])
        return -1;
    char *b = buf[k++ & 1];
    strcpy(b, arg);
    b[eq - arg] = '\0';
    for (const char *p = b; *p; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || *p == '.' || *p == '-'))
            return -1;
    *name = b;
    *dir = b + (eq - arg) + 1;
    return 0;
}

/* --a-args/--b-args "...": split on blanks (spaces, tabs, newlines), no quoting: a word that
 * holds a blank belongs in the cases file's args. Appended in the order given. */
static int side_words(struct matrix_opts *o, int s, const char *opt, const char *v)
{
    const char *p = v;
    for (;;) {
        p += strspn(p, " \t\n");
        if (!*p)
            return 0;
        size_t n = strcspn(p, " \t\n");
        if (o->nside_args[s] == MATRIX_MAX_SIDE_ENV) {
            report_fail("%s: more than %d words in all", opt, MATRIX_MAX_SIDE_ENV);
            return -1;
        }
        if (!(o->side_args[s][o->nside_args[s]++] = strndup(p, n))) {
            report_fail("out of memory");
            return -1;
        }
        p += n;
    }
}

/* Without --order: the unit, repeated until each side has MATRIX_MIN_RUNS runs. */
static void default_order(struct matrix_opts *o)
{
    size_t unit = strlen(MATRIX_ORDER_UNIT), n = 0, per[2] = {0, 0};
    while ((per[0] < MATRIX_MIN_RUNS || per[1] < MATRIX_MIN_RUNS) && n + unit <= MATRIX_MAX_ORDER) {
        memcpy(o->order_buf + n, MATRIX_ORDER_UNIT, unit);
        for (size_t i = 0; i < unit; i++)
            per[MATRIX_ORDER_UNIT[i] == 'B']++;
        n += unit;
    }
    o->order_buf[n] = '\0';
    o->order = o->order_buf;
}

static void opts_free(struct matrix_opts *o)
{
    for (int s = 0; s < 2; s++) {
        for (size_t i = 0; i < o->nside_env[s]; i++) {
            free(o->side_env[s][i].key);
            free(o->side_env[s][i].value);
        }
        for (size_t i = 0; i < o->nside_args[s]; i++)
            free(o->side_args[s][i]);
        o->nside_env[s] = o->nside_args[s] = 0;
    }
}

static int parse(int argc, char **argv, struct matrix_opts *o)
{
    memset(o, 0, sizeof *o);
    default_order(o);
    o->timeout_s = MATRIX_DEFAULT_TIMEOUT_S;
    o->precheck = PRECHECK_WAIT;
    o->out = "perfscope-matrix";
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (a[0] != '-' && !o->cases_path) {
            o->cases_path = a;
            continue;
        }
        if (!v)
            return -1;
        i++;
        if (strcmp(a, "--a") == 0 || strcmp(a, "--b") == 0) {
            int s = a[2] == 'b';
            if (side_arg(v, &o->name[s], &o->dir[s]) != 0) {
                report_fail("%s %s: want NAME=DIR (NAME of letters, digits, '_', '.', '-')", a, v);
                return -2;
            }
        } else if (strcmp(a, "--order") == 0) {
            if (!*v || strlen(v) > MATRIX_MAX_ORDER || strspn(v, "AB") != strlen(v)) {
                report_fail("--order %s: want A and B only (ABBA), at most %d", v, MATRIX_MAX_ORDER);
                return -2;
            }
            o->order = v;
            o->order_given = 1;
        } else if (strcmp(a, "--a-env") == 0 || strcmp(a, "--b-env") == 0) {
            int s = a[2] == 'b';
            const char *eq = strchr(v, '=');
            if (!eq || eq == v || o->nside_env[s] == MATRIX_MAX_SIDE_ENV) {
                report_fail("%s %s: want KEY=VALUE (at most %d)", a, v, MATRIX_MAX_SIDE_ENV);
                return -2;
            }
            struct kv *kv = &o->side_env[s][o->nside_env[s]++];
            kv->key = strndup(v, (size_t)(eq - v));
            kv->value = strdup(eq + 1);
            if (!kv->key || !kv->value) {
                report_fail("out of memory");
                return -2;
            }
        } else if (strcmp(a, "--a-args") == 0 || strcmp(a, "--b-args") == 0) {
            if (side_words(o, a[2] == 'b', a, v) != 0)
                return -2;
        } else if (strcmp(a, "--profile") == 0) {
            char *end;
            long n = strtol(v, &end, 10);
            if (end == v || *end || n < 0 || n > MATRIX_MAX_PROFILE) {
                report_fail("--profile %s: want a number of sampled runs a side, 0 to %d", v,
                            MATRIX_MAX_PROFILE);
                return -2;
            }
            o->profile = (int)n;
        } else if (strcmp(a, "--timeout") == 0) {
            char *end;
            o->timeout_s = strtod(v, &end);
            if (end == v || *end || !(o->timeout_s > 0) || o->timeout_s > 1e7) {
                report_fail("--timeout %s: want seconds, more than 0", v);
                return -2;
            }
        } else if (strcmp(a, "--precheck") == 0) {
            o->precheck = strcmp(v, "wait") == 0   ? PRECHECK_WAIT
                          : strcmp(v, "skip") == 0 ? PRECHECK_SKIP
                          : strcmp(v, "off") == 0  ? PRECHECK_OFF
                                                   : (enum precheck)-1;
            if ((int)o->precheck < 0) {
                report_fail("--precheck %s: want wait, skip or off", v);
                return -2;
            }
        } else if (strcmp(a, "--only") == 0) {
            o->only = v;
        } else if (strcmp(a, "--noise") == 0) {
            o->noise_path = v;
        } else if (strcmp(a, "--out") == 0) {
            o->out = v;
        } else {
            return -1;
        }
    }
    return o->cases_path && o->name[0] && o->name[1] ? 0 : -1;
}

/* compare.py's _tag: each run of characters outside [A-Za-z0-9_.-] becomes one '_'. */
static int tag_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '-';
}

static void tag(const char *label, char *out, size_t size)
{
    size_t n = 0;
    for (const char *p = label; *p && n + 1 < size; p++) {
        if (tag_char(*p))
            out[n++] = *p;
        else if (p == label || tag_char(p[-1]))
            out[n++] = '_';
    }
    out[n] = '\0';
    if (!n || strcmp(out, ".") == 0 || strcmp(out, "..") == 0)
        snprintf(out, size, "case");
}

static int setup(struct matrix_opts *o, regex_t *only, int *have_only, cJSON **noise,
                 struct cases *cases)
{
    char err[REPORT_ERR_MAX];
    if (cases_load(o->cases_path, cases, err, sizeof err) != 0) {
        report_fail("%s", err);
        return -1;
    }
    /* A container case's DIR is a folder inside its image: only a host case needs it here. */
    int host_case = 0;
    for (size_t i = 0; i < cases->n; i++)
        host_case |= !cases->v[i].prefix || container_run_index(cases->v[i].prefix) < 0;
    for (int s = 0; s < 2 && host_case; s++) {
        struct stat st;
        if (stat(o->dir[s], &st) != 0 || !S_ISDIR(st.st_mode)) {
            report_fail("--%c %s=%s: not a folder", s ? 'b' : 'a', o->name[s], o->dir[s]);
            return -1;
        }
    }
    if (o->only) {
        int rc = regcomp(only, o->only, REG_EXTENDED | REG_NOSUB);
        if (rc != 0) {
            regerror(rc, only, err, sizeof err);
            report_fail("--only %s: %s", o->only, err);
            return -1;
        }
        *have_only = 1;
    }
    if (o->noise_path) {
        if (json_file_load(o->noise_path, JSON_FILE_MAX_BYTES, 0, noise, err, sizeof err) != 0) {
            report_fail("%s", err);
            return -1;
        }
        double floors[JUDGE_NMETRICS];
        for (size_t i = 0; i < cases->n; i++)
            if (noise_for_case(*noise, cases->v[i].label, floors, err, sizeof err) != 0) {
                report_fail("%s: %s", o->noise_path, err);
                return -1;
            }
    }
    int found = shim_path(o->shim, sizeof o->shim);
    if (found != 0) {
        if (found == -1)
            report_fail("PERFSCOPE_SHIM=%.200s is not an absolute path to a readable file",
                        getenv("PERFSCOPE_SHIM"));
        else
            report_fail("%s: the shim is not there, beside this program nor in ../lib/perfscope/ "
                        "(make, or set PERFSCOPE_SHIM)", SHIM_FILE_NAME);
        return -1;
    }
    if (outfile_make_dirs(o->out, 0755) != 0 || !realpath(o->out, o->out_abs)) {
        report_fail("%s: cannot make the output folder: %s", o->out, strerror(errno));
        return -1;
    }
    return 0;
}

static int write_files(const struct matrix_opts *o, const cJSON *table)
{
    char path[PATH_MAX], err[REPORT_ERR_MAX];
    snprintf(path, sizeof path, "%s/matrix.json", o->out_abs);
    if (outfile_write_json(path, table, err, sizeof err) != 0) {
        report_fail("%s", err);
        return -1;
    }
    char *md = matrix_table(table);
    snprintf(path, sizeof path, "%s/table.md", o->out_abs);
    int rc = md ? outfile_write_all(path, md, strlen(md), err, sizeof err) : -1;
    if (rc != 0)
        report_fail("%s", md ? err : "out of memory");
    free(md);
    return rc;
}

static void say_result(const struct diff_result *d)
{
    printf("  -> %s:", d->verdict);
    int n = 0;
    for (int m = 0; m < JUDGE_NMETRICS; m++) {
        const char *name = judge_metrics[m].name;
        if (d->metrics[m].verdict == JUDGE_MISSING ||
            (strcmp(name, "prefill_tps") != 0 && strcmp(name, "decode_tps") != 0))
            continue;
        char r[PYFMT_BUF] = "None";
        if (d->metrics[m].has_ratio)
            py_repr(d->metrics[m].ratio, r, sizeof r);
        printf("%s %s %s", n++ ? "," : "", name, r);
    }
    printf("\n");
    fflush(stdout);
}

/* The case's warnings: into its entry ("warnings") and on stderr, as they come. */
static int add_warnings(cJSON *entry, const char *label, const struct warnings *w)
{
    cJSON *arr = cJSON_AddArrayToObject(entry, "warnings");
    if (!arr)
        return -1;
    for (size_t i = 0; i < w->n; i++) {
        report_fail("matrix: %s: warning: %s", label, w->line[i]);
        if (!cJSON_AddItemToArray(arr, cJSON_CreateString(w->line[i])))
            return -1;
    }
    return 0;
}

/* The profiled arms of a case (--profile N: A and B alternating, N each), never judged, then
 * which functions changed: <case>/functions.md, functions.json and functions.html. Their records go into
 * *records; the headline lines of functions.md to stdout. 0, -1 when interrupted, -2 on an
 * error. */
static int profile_case(const struct matrix_opts *o, const struct mcase *c, const char *case_dir,
                        cJSON *records, struct warnings *w)
{
    struct fd_set fs;
    memset(&fs, 0, sizeof fs);
    fs.floor_pp = FDIFF_FLOOR_PP;
    char err[REPORT_ERR_MAX];
    int rc = 0;
    for (int i = 0; rc == 0 && i < 2 * o->profile; i++) {
        int side = i & 1;
        printf("%s: profiled arm %d/%d (%s)\n", c->label, i + 1, 2 * o->profile, o->name[side]);
        fflush(stdout);
        cJSON *run = NULL, *record = NULL;
        int r = matrix_arm(o, c, case_dir, i, side, 1, &stop_flag, &run, &record);
        if (r < 0) {
            rc = -1;
            break;
        }
        cJSON_AddItemToArray(records, record);
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(run, "status");
        const cJSON *dir = cJSON_GetObjectItemCaseSensitive(record, "dir");
        if (r == 0 && cJSON_IsString(st) && strcmp(st->valuestring, "ok") == 0 && cJSON_IsString(dir) &&
            fd_add_run(&fs, side, dir->valuestring, err, sizeof err) != 0)
            warn_add(w, "profiled arm %d left out of the function-level diff: %s", i, err);
        cJSON_Delete(run);
    }
    struct fd_result fr;
    memset(&fr, 0, sizeof fr);
    if (rc == 0 && (!fs.n[0] || !fs.n[1])) {
        warn_add(w, "no function-level diff: no usable profiled run on side %s",
                 !fs.n[0] ? "A" : "B");
    } else if (rc == 0 && fd_compute(&fs, &fr, err, sizeof err) != 0) {
        report_fail("%s", err);
        rc = -2;
    } else if (rc == 0) {
        char *text = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&text, &len);
        cJSON *json = fd_json(&fs, &fr);
        char path[PATH_MAX], *page = NULL;
        if (mem) {
            fd_render(mem, &fs, &fr);
            fclose(mem);
        }
        snprintf(path, sizeof path, "%s/functions.md", case_dir);
        if (!text || !json || outfile_write_all(path, text, len, err, sizeof err) != 0 ||
            (snprintf(path, sizeof path, "%s/functions.json", case_dir),
             outfile_write_json(path, json, err, sizeof err) != 0) ||
            (snprintf(path, sizeof path, "%s/functions.html", case_dir),
             !(page = fd_html(&fs, &fr)) || outfile_write_all(path, page, strlen(page), err, sizeof err) != 0)) {
            report_fail("%s", text && json && (page || !strstr(path, ".html")) ? err : "out of memory");
            rc = -2;
        } else {
            /* the headlines: "decode +8.1%: f +6.2 pp of it (p 0.008)", after a blank line */
            int blank = 0;
            for (char *line = text, *next; line && *line; line = next) {
                next = strchr(line, '\n');
                if (next)
                    *next++ = '\0';
                if (blank && line[0] != '|' && strstr(line, "%: "))
                    printf("  %s\n", line);
                blank = !line[0];
            }
            printf("  functions: %s/functions.md\n", case_dir);
        }
        free(text);
        free(page);
        cJSON_Delete(json);
    }
    fd_result_free(&fr);
    fd_set_free(&fs);
    return rc;
}

/* Runs one case; its matrix.json entry into *entry. 0, -1 when interrupted, -2 on an error
 * (said on stderr). */
static int run_case(const struct matrix_opts *o, const struct mcase *c, const cJSON *noise,
                    cJSON **entry)
{
    char t[256], case_dir[PATH_MAX], err[REPORT_ERR_MAX];
    tag(c->label, t, sizeof t);
    snprintf(case_dir, sizeof case_dir, "%s/%s", o->out_abs, t);
    size_t n = strlen(o->order);
    cJSON *runs[2][MATRIX_MAX_ORDER];
    char *dirs[2][MATRIX_MAX_ORDER];
    size_t nr[2] = {0, 0}, refused[2] = {0, 0};
    static struct warnings w;
    memset(&w, 0, sizeof w);
    cJSON *arms = cJSON_CreateArray(), *profiles = cJSON_CreateArray();
    int rc = arms && profiles && outfile_make_dirs(case_dir, 0755) == 0 ? 0 : -2;
    if (rc != 0)
        report_fail("%s: cannot make the case folder: %s", case_dir, strerror(errno));
    for (size_t i = 0; rc == 0 && i < n; i++) {
        int side = o->order[i] == 'B';
        printf("%s: arm %zu/%zu (%s)\n", c->label, i + 1, n, o->name[side]);
        fflush(stdout);
        cJSON *run = NULL, *record = NULL;
        int r = matrix_arm(o, c, case_dir, (int)i, side, 0, &stop_flag, &run, &record);
        if (r < 0) {
            rc = -1;
            break;
        }
        cJSON_AddItemToArray(arms, record);
        if (r == 1) {
            printf("  refused: %s\n", cJSON_GetObjectItemCaseSensitive(record, "refused")->valuestring);
            refused[side]++;
            continue;
        }
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(run, "status");
        if (!cJSON_IsString(st) || strcmp(st->valuestring, "ok") != 0)
            printf("  arm ended with status %s\n", cJSON_IsString(st) ? st->valuestring : "failed");
        const cJSON *dir = cJSON_GetObjectItemCaseSensitive(record, "dir");
        dirs[side][nr[side]] = cJSON_IsString(dir) ? dir->valuestring : "(no folder)";
        runs[side][nr[side]++] = run;
    }
    /* A side left without runs by refusals: why it has none (its no-verdict line says "no run"). */
    for (int s = 0; rc == 0 && s < 2; s++)
        if (!nr[s] && refused[s])
            warn_add(&w, "no run on side %s: its %zu arm%s refused (--precheck skip, the machine busy)",
                     s ? "B" : "A", refused[s], refused[s] == 1 ? " was" : "s were");
    if (rc == 0 && o->profile > 0)
        rc = profile_case(o, c, case_dir, profiles, &w);
    if (rc == 0) {
        double floors[JUDGE_NMETRICS] = {0};
        struct diff_result d;
        if (noise) {
            noise_for_case(noise, c->label, floors, err, sizeof err); /* checked in setup */
            if (!cJSON_GetObjectItemCaseSensitive(noise, c->label))
                warn_add(&w, "--noise %s has no floors for this case: judged with the fixed "
                             "floors only", o->noise_path);
            else
                warn_noise_metrics(&w, o->noise_path, c->label,
                                   cJSON_GetObjectItemCaseSensitive(noise, c->label));
        }
        if (judge_diff((const cJSON *const *)runs[0], nr[0], (const cJSON *const *)runs[1], nr[1],
                       floors, &d) != 0) {
            report_fail("out of memory");
            rc = -2;
        } else {
            struct warnings front;
            memset(&front, 0, sizeof front);
            warn_few_runs(&front, &d);
            int no_verdict = warn_no_verdict(&front, &d, (const cJSON *const *)runs[0], nr[0],
                                             (const cJSON *const *)runs[1], nr[1]);
            warn_no_throughput(&front, (const cJSON *const *)runs[0], nr[0], "A",
                               (const char *const *)dirs[0]);
            warn_no_throughput(&front, (const cJSON *const *)runs[1], nr[1], "B",
                               (const char *const *)dirs[1]);
            for (size_t i = 0; i < w.n; i++)
                warn_add(&front, "%s", w.line[i]);
            *entry = diff_to_json(&d);
            if (*entry) {
                cJSON_AddStringToObject(*entry, "label", c->label);
                cJSON_AddItemToObject(*entry, "arms", arms);
                arms = NULL;
                if (o->profile > 0) {
                    cJSON_AddItemToObject(*entry, "profiled_arms", profiles);
                    profiles = NULL;
                }
                say_result(&d);
                /* compare.py's log line above reads as a verdict where there is none. */
                if (no_verdict)
                    printf("  no verdict: no usable run on side %s (table.md says why)\n",
                           !d.usable_a && !d.usable_b ? "A and B" : !d.usable_a ? "A" : "B");
                if (add_warnings(*entry, c->label, &front) != 0) {
                    report_fail("out of memory");
                    rc = -2;
                }
            } else {
                report_fail("out of memory");
                rc = -2;
            }
            diff_free(&d);
        }
    }
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; i < nr[s]; i++)
            cJSON_Delete(runs[s][i]);
    cJSON_Delete(arms);
    cJSON_Delete(profiles);
    return rc;
}

static int missing_model(const char *model)
{
    struct stat st;
    return model && stat(model, &st) != 0;
}

/* {"K": "V", ...} of one side's --a-env/--b-env, and [...] of its --a-args/--b-args. */
static int add_side_settings(cJSON *table, const struct matrix_opts *o)
{
    static const char *const env_key[2] = {"a_env", "b_env"}, *const args_key[2] = {"a_args", "b_args"};
    for (int s = 0; s < 2; s++) {
        cJSON *env = cJSON_AddObjectToObject(table, env_key[s]);
        if (!env)
            return -1;
        for (size_t i = 0; i < o->nside_env[s]; i++) {
            cJSON_DeleteItemFromObjectCaseSensitive(env, o->side_env[s][i].key); /* the last wins */
            if (!cJSON_AddStringToObject(env, o->side_env[s][i].key, o->side_env[s][i].value))
                return -1;
        }
        cJSON *args = o->nside_args[s]
                          ? cJSON_CreateStringArray((const char *const *)o->side_args[s],
                                                    (int)o->nside_args[s])
                          : cJSON_CreateArray();
        if (!args || !cJSON_AddItemToObject(table, args_key[s], args)) {
            cJSON_Delete(args);
            return -1;
        }
    }
    return 0;
}

/* The matrix's own warnings (matrix.json "warnings", on stderr): --noise labels that match no
 * case of the cases file. */
static int add_file_warnings(cJSON *table, const struct matrix_opts *o, const cJSON *noise,
                             const struct cases *cases)
{
    static struct warnings w;
    memset(&w, 0, sizeof w);
    if (noise) {
        const char **labels = malloc((cases->n ? cases->n : 1) * sizeof *labels);
        if (!labels)
            return -1;
        for (size_t i = 0; i < cases->n; i++)
            labels[i] = cases->v[i].label;
        warn_noise_labels(&w, o->noise_path, noise, labels, cases->n);
        free(labels);
    }
    cJSON *arr = cJSON_AddArrayToObject(table, "warnings");
    if (!arr)
        return -1;
    for (size_t i = 0; i < w.n; i++) {
        report_fail("matrix: warning: %s", w.line[i]);
        if (!cJSON_AddItemToArray(arr, cJSON_CreateString(w.line[i])))
            return -1;
    }
    return 0;
}

static int matrix_main(struct matrix_opts *o);

int cmd_matrix(int argc, char **argv)
{
    struct matrix_opts o;
    int p = parse(argc, argv, &o);
    int rc = p == -1 ? usage() : p != 0 ? REPORT_BAD_INPUT : matrix_main(&o);
    opts_free(&o);
    return rc;
}

static int matrix_main(struct matrix_opts *op)
{
    struct matrix_opts o = *op;
    struct cases cases;
    regex_t only;
    int have_only = 0, rc = 0;
    cJSON *noise = NULL, *table = NULL, *list = NULL;
    memset(&cases, 0, sizeof cases);
    if (setup(&o, &only, &have_only, &noise, &cases) != 0) {
        rc = REPORT_BAD_INPUT;
        goto out;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    table = cJSON_CreateObject();
    if (!table || !cJSON_AddStringToObject(table, "a", o.name[0]) ||
        !cJSON_AddStringToObject(table, "b", o.name[1]) ||
        !cJSON_AddStringToObject(table, "order", o.order) || add_side_settings(table, &o) != 0 ||
        add_file_warnings(table, &o, noise, &cases) != 0 ||
        !(list = cJSON_AddArrayToObject(table, "cases"))) {
        report_fail("out of memory");
        rc = REPORT_BAD_INPUT;
        goto out;
    }
    for (size_t i = 0; i < cases.n && !stop_flag; i++) {
        const struct mcase *c = &cases.v[i];
        if (have_only && regexec(&only, c->label, 0, NULL, 0) != 0)
            continue;
        cJSON *entry = NULL;
        if (missing_model(c->model)) {
            printf("%s: model missing, skipped\n", c->label);
            entry = cJSON_CreateObject();
            if (entry) {
                cJSON_AddStringToObject(entry, "label", c->label);
                cJSON_AddStringToObject(entry, "skipped", "model missing");
                cJSON_AddStringToObject(entry, "model", c->model);
            }
        } else {
            int r = run_case(&o, c, noise, &entry);
            if (r == -1)
                break;
            if (r != 0) {
                rc = REPORT_BAD_INPUT;
                goto out;
            }
        }
        if (!entry) {
            report_fail("out of memory");
            rc = REPORT_BAD_INPUT;
            goto out;
        }
        cJSON_AddItemToArray(list, entry);
        if (write_files(&o, table) != 0) {
            rc = REPORT_BAD_INPUT;
            goto out;
        }
    }
    if (stop_flag) {
        int done = cJSON_GetArraySize(list);
        if (done)
            fprintf(stderr, "perfscope-report: matrix interrupted: %d finished case%s kept in "
                            "%s/matrix.json\n", done, done == 1 ? "" : "s", o.out_abs);
        else
            fprintf(stderr, "perfscope-report: matrix interrupted before any case finished\n");
        rc = MATRIX_INTERRUPTED;
        goto out;
    }
    if (cJSON_GetArraySize(list) == 0 && write_files(&o, table) != 0) {
        rc = REPORT_BAD_INPUT;
        goto out;
    }
    printf("\nmatrix: %s/matrix.json, %s/table.md\n\n", o.out_abs, o.out_abs);
    char *md = matrix_table(table);
    if (md)
        fputs(md, stdout);
    free(md);
    fflush(stdout);
    /* A table of dropped runs is no verdict (DESIGN 11): exit 2 when no case has one. */
    if (matrix_judged_none(table)) {
        report_fail("matrix: no case has a verdict: each has a side with no usable run");
        rc = REPORT_BAD_INPUT;
    }
out:
    cJSON_Delete(table);
    cJSON_Delete(noise);
    cases_free(&cases);
    if (have_only)
        regfree(&only);
    return rc;
}
