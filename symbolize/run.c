/* run.c: symbolize_run (symbolize.h), the one place that decides what the symbolizer does with a
 * run folder: gather (collect.c), then write profile.json, stacks.folded, profile.pb.gz,
 * trace.json and flame.json. It must never print except through the log it is given, and never leave a
 * partial output behind (each writer renames into place only when complete). */
#include "symbolize.h"
#include "profile.h"
#include "tables.h"
#include "progress.h"
#include "runfolder.h"

#include <sys/stat.h>

#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

/* The writers only read the profile, so they run side by side (stacks.folded and
 * profile.pb.gz are the big ones). */
struct job {
    int (*fn)(const struct profile *p, char *err, size_t errlen);
    const struct profile *p;
    int rc;
    char err[1024];
};

static void *run_job(void *arg)
{
    struct job *j = arg;
    j->rc = j->fn(j->p, j->err, sizeof j->err);
    return NULL;
}

static int write_tables(const struct profile *p, char *err, size_t errlen);
static int write_tables_top;

static int write_outputs(const struct profile *p, int top, char *err, size_t errlen)
{
    write_tables_top = top;
    enum { NJOBS = 5 };
    struct job jobs[NJOBS] = {
        {.fn = export_folded, .p = p}, {.fn = export_pprof, .p = p},
        {.fn = write_tables, .p = p}, {.fn = export_trace, .p = p}, {.fn = export_flame, .p = p},
    };
    /* trace.json (which replays the samples: the longest job) and profile.pb.gz on their own
     * threads, the others here: the longest job is alone on its thread. */
    static const int threaded[2] = {3, 1};
    pthread_t th[2];
    int started[NJOBS] = {0};
    for (int i = 0; i < 2; i++)
        started[threaded[i]] = pthread_create(&th[i], NULL, run_job, &jobs[threaded[i]]) == 0;
    for (int i = 0; i < NJOBS; i++)
        if (!started[i])
            run_job(&jobs[i]); /* in this thread: the others, and any that could not start */
    for (int i = 0; i < 2; i++)
        if (started[threaded[i]])
            pthread_join(th[i], NULL);
    for (int i = 0; i < NJOBS; i++)
        if (jobs[i].rc != 0) {
            snprintf(err, errlen, "%s", jobs[i].err);
            return -1;
        }
    return 0;
}

static int write_tables(const struct profile *p, char *err, size_t errlen)
{
    return tables_write(p, write_tables_top, err, errlen);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int symbolize_run(const char *dir, const struct symbolize_opts *opts, struct symbolize_result *res,
                  char *err, size_t errlen)
{
    static const struct symbolize_opts defaults = {0};
    if (!opts)
        opts = &defaults;
    double t0 = now_s();
    struct profile *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return SYMBOLIZE_BAD_INPUT;
    }
    p->log = opts->log ? opts->log : stderr;
    p->prog = opts->prog;
    p->trust_modified = opts->trust_modified;
    struct stat sb;
    char own_symfs[4096];
    snprintf(own_symfs, sizeof own_symfs, "%s/" RUN_SYMFS, dir);
    if (opts->symfs && *opts->symfs)
        snprintf(p->symfs, sizeof p->symfs, "%s", opts->symfs);
    else if (stat(own_symfs, &sb) == 0 && S_ISDIR(sb.st_mode))
        snprintf(p->symfs, sizeof p->symfs, "%s", own_symfs);
    progress_begin(opts->progress_fd, 0);
    int rc = prof_collect(p, dir, err, errlen);
    progress_stage("writing profile.json, stacks.folded, profile.pb.gz, trace.json");
    if (rc == 0) {
        /* Module problems, one line each. */
        for (size_t i = 0; i < p->st.nmods; i++) {
            const struct sym_module *m = &p->st.mods[i];
            if (m->kind == SYM_FILE && *m->why)
                prof_warn(p, "%s: %s", symtab_str(&p->st, m->path), m->why);
        }
        if (write_outputs(p, opts->top, err, errlen) != 0)
            rc = SYMBOLIZE_FAILED_WRITE;
        progress_end();
        const char *prog = opts->prog ? opts->prog : "perfscope-symbolize";
        const cJSON *w;
        cJSON_ArrayForEach(w, p->warnings)
            fprintf(p->log, "%s: %s\n", prog, w->valuestring);
        if (p->nwarnings > (size_t)cJSON_GetArraySize(p->warnings))
            fprintf(p->log, "%s: ... and %zu more warnings\n", prog,
                    p->nwarnings - (size_t)cJSON_GetArraySize(p->warnings));
    }
    progress_end();
    if (res) {
        memset(res, 0, sizeof *res);
        res->samples = p->samples;
        res->dropped = p->dropped;
        res->empty = p->empty;
        res->groups = p->ngroups;
        res->images = p->nimg;
        res->modules = p->st.nmods;
        res->warnings = p->nwarnings;
        res->seconds = now_s() - t0;
    }
#ifndef __SANITIZE_ADDRESS__
    if (opts->exiting)
        return rc;
#endif
    prof_free(p);
    free(p);
    return rc;
}
