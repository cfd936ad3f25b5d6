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
                "[--timeout S] [--precheck wait|skip|off] [--only REGEX] [--noise FILE] [--out DIR]");
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

static int parse(int argc, char **argv, struct matrix_opts *o)
{
    memset(o, 0, sizeof *o);
    o->order = "ABBA";
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

/* mkdir -p */
static int make_dirs(const char *path)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return -1;
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(buf, 0755) != 0 && errno != EEXIST ? -1 : 0;
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
    const char *shim = getenv("PERFSCOPE_SHIM");
    if (shim && *shim)
        snprintf(o->shim, sizeof o->shim, "%s", shim);
    else if (path_beside_self("libperfscope.so", o->shim, sizeof o->shim) != 0)
        o->shim[0] = '\0';
    if (!o->shim[0] || access(o->shim, R_OK) != 0) {
        report_fail("%s: the shim is not there (make, or set PERFSCOPE_SHIM)",
                    o->shim[0] ? o->shim : "libperfscope.so");
        return -1;
    }
    if (make_dirs(o->out) != 0 || !realpath(o->out, o->out_abs)) {
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
    size_t nr[2] = {0, 0};
    cJSON *arms = cJSON_CreateArray();
    int rc = arms && make_dirs(case_dir) == 0 ? 0 : -2;
    if (rc != 0)
        report_fail("%s: cannot make the case folder: %s", case_dir, strerror(errno));
    for (size_t i = 0; rc == 0 && i < n; i++) {
        int side = o->order[i] == 'B';
        printf("%s: arm %zu/%zu (%s)\n", c->label, i + 1, n, o->name[side]);
        fflush(stdout);
        cJSON *run = NULL, *record = NULL;
        int r = matrix_arm(o, c, case_dir, (int)i, side, &stop_flag, &run, &record);
        if (r < 0) {
            rc = -1;
            break;
        }
        cJSON_AddItemToArray(arms, record);
        if (r == 1) {
            printf("  refused: %s\n", cJSON_GetObjectItemCaseSensitive(record, "refused")->valuestring);
            continue;
        }
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(run, "status");
        if (!cJSON_IsString(st) || strcmp(st->valuestring, "ok") != 0)
            printf("  arm ended with status %s\n", cJSON_IsString(st) ? st->valuestring : "failed");
        runs[side][nr[side]++] = run;
    }
    if (rc == 0) {
        double floors[JUDGE_NMETRICS] = {0};
        struct diff_result d;
        if (noise)
            noise_for_case(noise, c->label, floors, err, sizeof err); /* checked in setup */
        if (judge_diff((const cJSON *const *)runs[0], nr[0], (const cJSON *const *)runs[1], nr[1],
                       floors, &d) != 0) {
            report_fail("out of memory");
            rc = -2;
        } else {
            *entry = diff_to_json(&d);
            if (*entry) {
                cJSON_AddStringToObject(*entry, "label", c->label);
                cJSON_AddItemToObject(*entry, "arms", arms);
                arms = NULL;
                say_result(&d);
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
    return rc;
}

static int missing_model(const char *model)
{
    struct stat st;
    return model && stat(model, &st) != 0;
}

int cmd_matrix(int argc, char **argv)
{
    struct matrix_opts o;
    int p = parse(argc, argv, &o);
    if (p == -1)
        return usage();
    if (p != 0)
        return REPORT_BAD_INPUT;
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
        !cJSON_AddStringToObject(table, "order", o.order) ||
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
out:
    cJSON_Delete(table);
    cJSON_Delete(noise);
    cases_free(&cases);
    if (have_only)
        regfree(&only);
    return rc;
}
