/* matrix_arm.c: one arm of a matrix (matrix.h): its run folder, the machine check, the process
 * under the shim with stack sampling off (on for a profiled arm, which is never judged), then
 * its run.json. It must never reuse a run folder,
 * never let the case's environment turn sampling back on or move the output, and never hand the
 * judgement a run that claims "ok" when the process failed or ran out of time. */
#include "matrix.h"
#include "outfile.h"
#include "runfolder.h"
#include "files.h"
#include "strv.h"
#include "jsondoc.h"
#include "jsonl.h"
#include "judge.h"
#include "machine.h"
#include "container/container.h"
#include "proc/runner.h"
#include "run/run.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* Sets KEY=value in an environment list, replacing an earlier KEY; value NULL removes it. */
static void env_set(struct strv *e, const char *key, const char *value)
{
    size_t klen = strlen(key);
    for (size_t i = 0; i < e->n; i++)
        if (strncmp(e->v[i], key, klen) == 0 && e->v[i][klen] == '=') {
            free(e->v[i]);
            memmove(&e->v[i], &e->v[i + 1], (e->n - i) * sizeof *e->v);
            e->n--;
            break;
        }
    if (!value)
        return;
    char *kv;
    if (asprintf(&kv, "%s=%s", key, value) < 0) {
        e->oom = 1;
        return;
    }
    strv_push(e, kv);
    free(kv);
}

static const char *env_get(const struct strv *e, const char *key)
{
    size_t klen = strlen(key);
    for (size_t i = 0; i < e->n; i++)
        if (strncmp(e->v[i], key, klen) == 0 && e->v[i][klen] == '=')
            return e->v[i] + klen + 1;
    return NULL;
}

static void build_env(struct strv *e, const struct matrix_opts *o, const struct mcase *c,
                      const char *dir, int side, int profiled)
{
    for (char **p = environ; p && *p; p++)
        strv_push(e, *p);
    for (size_t i = 0; i < c->nenv; i++)
        env_set(e, c->env[i].key, c->env[i].value);
    for (size_t i = 0; i < o->nside_env[side]; i++) /* run_matrix's env.update(a_env or b_env) */
        env_set(e, o->side_env[side][i].key, o->side_env[side][i].value);
    if (c->gpus)
        env_set(e, "CUDA_VISIBLE_DEVICES", c->gpus);
    const char *pre = env_get(e, "LD_PRELOAD");
    char *preload;
    if (asprintf(&preload, "%s%s%s", o->shim, pre && *pre ? ":" : "", pre ? pre : "") < 0) {
        e->oom = 1;
        return;
    }
    env_set(e, "LD_PRELOAD", preload);
    free(preload);
    char markers[PATH_MAX];
    snprintf(markers, sizeof markers, "%s/markers", dir);
    env_set(e, "PERFSCOPE_OUT", dir);
    /* A judged arm is never sampled; a profiled one always is, at the caller's rate or ours. */
    const char *hz = getenv("PERFSCOPE_HZ");
    env_set(e, "PERFSCOPE_HZ", !profiled ? "0" : hz && atoi(hz) > 0 ? hz : MATRIX_PROFILE_HZ);
    env_set(e, "LLMPERFSCOPE_MARKERS", markers);
    env_set(e, "LLMPERFSCOPE_CPUPROF_OUT", NULL);
    env_set(e, "LLMPERFSCOPE_CPUPROF_HZ", NULL);
}

static void build_argv(struct strv *a, const struct matrix_opts *o, const struct mcase *c, int side)
{
    for (size_t i = 0; i < c->nprefix; i++)
        strv_push(a, c->prefix[i]);
    char *bin;
    if (asprintf(&bin, "%s/%s", o->dir[side], c->binary) < 0) {
        a->oom = 1;
        return;
    }
    strv_push(a, bin);
    free(bin);
    if (c->model) {
        strv_push(a, "-m");
        strv_push(a, c->model);
    }
    for (size_t i = 0; i < c->nargs; i++)
        strv_push(a, c->args[i]);
    for (size_t i = 0; i < o->nside_args[side]; i++)
        strv_push(a, o->side_args[side][i]);
}

/* "<case_dir>/<i>_<side>_<name>" (a profiled arm: "profile_<i>_..."), or with ".2", ".3"...
 * when taken by an earlier matrix. */
static int make_arm_dir(char *dir, size_t size, const char *case_dir, const char *prefix,
                        int index, char side, const char *name)
{
    for (int n = 1; n < 1000; n++) {
        int k = n == 1 ? snprintf(dir, size, "%s/%s%d_%c_%s", case_dir, prefix, index, side, name)
                       : snprintf(dir, size, "%s/%s%d_%c_%s.%d", case_dir, prefix, index, side,
                                  name, n);
        if (k < 0 || (size_t)k >= size)
            return -1;
        if (mkdir(dir, 0755) == 0)
            return 0;
        if (errno != EEXIST)
            return -1;
    }
    return -1;
}

static void nap_s(double s)
{
    struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* The arm's process (proc/runner.h): stdin /dev/null, its stdout and stderr kept in its run
 * folder (target.stdout, where llama-bench's JSON is read from, and target.stderr). A `docker
 * run` or `podman run` command is a container target (container/container.h): the timeout or
 * an interrupt stops the container itself, and it is gone when this returns. */
static void arm_run(char *const *argv, char *const *envp, const char *dir, const char *shim,
                    double timeout_s, volatile sig_atomic_t *stop, struct proc_outcome *out)
{
    static struct container ct; /* large: the pid map; one arm at a time */
    char **cargv = NULL, **cenv = NULL;
    char abs[PATH_MAX];
    int in_container = container_run_index(argv) >= 0;
    if (in_container) {
        char err[512];
        snprintf(err, sizeof err, "%s: %s", dir, strerror(ENOENT));
        if (!realpath(dir, abs) ||
            container_prepare(&ct, argv, abs, shim, envp, &cargv, &cenv, err, sizeof err) != 0) {
            memset(out, 0, sizeof *out);
            snprintf(out->error, sizeof out->error, "%s", err);
            return;
        }
        ct.stop_s = CONTAINER_TIMEOUT_STOP_S;
        argv = cargv;
        envp = cenv;
    }
    char out_path[PATH_MAX], err_path[PATH_MAX];
    if (runfolder_path(out_path, sizeof out_path, dir, RUN_TARGET_STDOUT, NULL, 0) != 0 ||
        runfolder_path(err_path, sizeof err_path, dir, RUN_TARGET_STDERR, NULL, 0) != 0) {
        memset(out, 0, sizeof *out);
        snprintf(out->error, sizeof out->error, "%s: path too long", dir);
        return;
    }
    struct proc_cmd cmd = {
        .argv = argv,
        .envp = envp,
        .stdin_path = "/dev/null",
        .stdout_path = out_path,
        .stderr_path = err_path,
        .who = "perfscope-report matrix",
        .before_kill = in_container ? container_stop : NULL,
        .before_kill_arg = &ct,
    };
    if (in_container)
        container_follow(&ct);
    proc_run(&cmd, timeout_s, stop, out);
    if (in_container) {
        /* A detached client ends at once: the container has what is left of the limit. */
        double left = timeout_s > 0 ? timeout_s - out->wall_s : 0;
        container_finish(&ct, out->timed_out || out->interrupted, stop, timeout_s > 0 && left < 0.1 ? 0.1 : left,
                         "perfscope-report matrix");
    }
    strv_free_v(cargv);
    strv_free_v(cenv);
}

static void runner_status(const struct proc_outcome *a, char *buf, size_t size)
{
    if (a->timed_out)
        snprintf(buf, size, "timeout");
    else if (!a->started)
        snprintf(buf, size, "failed");
    else if (a->exited && a->code == 0)
        snprintf(buf, size, "ok");
    else if (a->exited)
        snprintf(buf, size, "exit %d", a->code);
    else if (a->signaled)
        snprintf(buf, size, "signal SIG%s", sigabbrev_np(a->sig) ? sigabbrev_np(a->sig) : "?");
    else
        snprintf(buf, size, "failed");
}

static void set_status(cJSON *run, const char *status)
{
    cJSON *s = cJSON_CreateString(status);
    if (!s)
        return;
    if (cJSON_GetObjectItemCaseSensitive(run, "status"))
        cJSON_ReplaceItemInObjectCaseSensitive(run, "status", s);
    else
        cJSON_AddItemToObject(run, "status", s);
}

/* The run object of a finished arm: its run.json with the runner's facts, or a stand-in. */
static cJSON *arm_run_object(const char *dir, const struct proc_outcome *a, const char *rstatus,
                             cJSON *runner, char *note, size_t notelen)
{
    char err[1024], path[PATH_MAX];
    cJSON *run = NULL;
    note[0] = '\0';
    runfolder_path(path, sizeof path, dir, RUN_JSON, NULL, 0);
    if (run_summarize(dir, err, sizeof err) == 0)
        json_file_load(path, JSON_FILE_MAX_BYTES, 0, &run, err, sizeof err);
    if (run && judge_check_run(run, note, notelen) != 0) {
        cJSON_Delete(run);
        run = NULL;
    }
    if (!run) {
        if (!note[0])
            snprintf(note, notelen, "%s", err);
        run = cJSON_CreateObject();
        if (!run)
            return NULL;
        cJSON_AddStringToObject(run, "error", note);
    }
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(run, "status");
    const char *shim = cJSON_IsString(st) ? st->valuestring : NULL;
    /* The runner saw how the process ended; the shim's word is kept where it says more
     * ("signal SIGSEGV", "exit 3") and never where it claims "ok" for a failed process. */
    const char *status = NULL;
    if (a->timed_out || !a->started)
        status = rstatus;
    else if (!shim || strcmp(shim, "unknown") == 0)
        status = proc_never_ran(a) ? "failed" : rstatus;
    else if (strcmp(shim, "ok") == 0 && strcmp(rstatus, "ok") != 0)
        status = rstatus;
    if (status)
        set_status(run, status);
    cJSON_AddItemToObject(run, "runner", runner);
    if (cJSON_GetObjectItemCaseSensitive(run, "schema"))
        outfile_write_json(path, run, err, sizeof err); /* keep run.json in step */
    return run;
}

int matrix_arm(const struct matrix_opts *o, const struct mcase *c, const char *case_dir, int index,
               int side, int profiled, volatile sig_atomic_t *stop, cJSON **run, cJSON **record)
{
    char dir[PATH_MAX], rstatus[64], note[1024];
    char letter = side ? 'B' : 'A';
    *run = *record = NULL;
    cJSON *rec = cJSON_CreateObject();
    if (!rec)
        return -1;
    cJSON_AddNumberToObject(rec, "index", index);
    cJSON_AddStringToObject(rec, "side", side ? "B" : "A");
    cJSON_AddStringToObject(rec, "name", o->name[side]);
    if (profiled)
        cJSON_AddBoolToObject(rec, "profiled", 1);
    if (make_arm_dir(dir, sizeof dir, case_dir, profiled ? "profile_" : "", index, letter,
                     o->name[side]) != 0) {
        snprintf(note, sizeof note, "cannot make a run folder under %s: %s", case_dir,
                 strerror(errno));
        cJSON_AddStringToObject(rec, "status", "failed");
        cJSON_AddStringToObject(rec, "error", note);
        *record = rec;
        *run = cJSON_CreateObject();
        if (*run)
            cJSON_AddStringToObject(*run, "status", "failed");
        return 0;
    }
    cJSON_AddStringToObject(rec, "dir", dir);
    struct machine_state ms;
    machine_check(&ms);
    double waited = 0;
    if (o->precheck == PRECHECK_WAIT && !ms.clean && !*stop) {
        /* Said, or a wait of minutes looks like a hang (a newcomer's run waited 5 minutes an arm
         * on a busy machine with nothing on the screen). */
        printf("  machine busy (%s): waiting for it to settle, at most %.0f s (--precheck off runs at once)\n",
               ms.why, MATRIX_WAIT_MAX_S);
        fflush(stdout);
    }
    while (o->precheck == PRECHECK_WAIT && !ms.clean && waited < MATRIX_WAIT_MAX_S && !*stop) {
        nap_s(1.0);
        waited += 1.0;
        machine_check(&ms);
    }
    if (waited > 0 && !*stop) {
        printf("  %s after %.0f s\n", ms.clean ? "settled" : "still busy, run anyway", waited);
        fflush(stdout);
    }
    if (*stop) {
        cJSON_Delete(rec);
        return -1;
    }
    cJSON_AddItemToObject(rec, "machine_before", machine_json(&ms));
    if (waited > 0)
        cJSON_AddNumberToObject(rec, "waited_s", waited);
    if (o->precheck == PRECHECK_SKIP && !ms.clean) {
        snprintf(note, sizeof note, "machine busy: %s", ms.why);
        cJSON_AddStringToObject(rec, "refused", note);
        *record = rec;
        return 1;
    }
    struct strv argv = {0}, envp = {0};
    build_argv(&argv, o, c, side);
    build_env(&envp, o, c, dir, side, profiled);
    if (argv.oom || envp.oom || !argv.n) {
        strv_free(&argv);
        strv_free(&envp);
        cJSON_Delete(rec);
        return -1;
    }
    struct proc_outcome a;
    arm_run(argv.v, envp.v, dir, o->shim, o->timeout_s, stop, &a);
    cJSON *cmd = cJSON_CreateStringArray((const char *const *)argv.v, (int)argv.n);
    strv_free(&argv);
    strv_free(&envp);
    if (a.interrupted) {
        cJSON_Delete(cmd);
        cJSON_Delete(rec);
        return -1;
    }
    runner_status(&a, rstatus, sizeof rstatus);
    cJSON *runner = cJSON_CreateObject();
    if (runner) {
        cJSON_AddItemToObject(runner, "command", cmd);
        cJSON_AddStringToObject(runner, "status", rstatus);
        if (a.exited)
            cJSON_AddNumberToObject(runner, "exit", a.code);
        if (a.signaled)
            cJSON_AddNumberToObject(runner, "signal", a.sig);
        cJSON_AddBoolToObject(runner, "timed_out", a.timed_out);
        cJSON_AddNumberToObject(runner, "wall_s", a.wall_s);
        cJSON_AddItemToObject(runner, "machine_before", machine_json(&ms));
        if (a.error[0])
            cJSON_AddStringToObject(runner, "error", a.error);
    } else {
        cJSON_Delete(cmd);
    }
    *run = arm_run_object(dir, &a, rstatus, runner, note, sizeof note);
    if (!*run) {
        cJSON_Delete(rec);
        return -1;
    }
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(*run, "status");
    cJSON_AddStringToObject(rec, "status", cJSON_IsString(st) ? st->valuestring : "failed");
    cJSON_AddNumberToObject(rec, "wall_s", a.wall_s);
    if (a.timed_out)
        cJSON_AddBoolToObject(rec, "timed_out", 1);
    if (note[0])
        cJSON_AddStringToObject(rec, "note", note);
    *record = rec;
    return 0;
}
