/* runprocs.c: procs.jsonl's processes and the images the shim did not load in (runprocs.h). It
 * must never parse a line by hand (procline.c does) and never keep more than a word per pid
 * (beyond the spans of the first RUN_PROCS_SPANS processes). */
#include "runprocs.h"
#include "hmap.h"
#include "jsonl.h"
#include "procline.h"
#include "runfolder.h"
#include "textfile.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct reading {
    struct run_procs *p;
    struct hmap last;         /* pid -> (line number << 2) | 1 start, 2 exec, 3 exit */
    size_t noproc;            /* objects that are no process line */
    int oom;
    struct run_sampling sampling;
};

/* The span of pl's process: its first start, its exit, its latest image's name. */
static void span_note(struct run_procs *p, const cJSON *o, const struct proc_line *pl)
{
    size_t i = 0;
    while (i < p->nspans && p->span[i].pid != pl->pid)
        i++;
    if (i == p->nspans) {
        if (p->nspans == RUN_PROCS_SPANS)
            return;
        memset(&p->span[i], 0, sizeof p->span[i]);
        p->span[i].pid = pl->pid;
        p->nspans++;
    }
    struct run_proc_span *s = &p->span[i];
    unsigned long long t = 0;
    int have_t = json_u64(o, "t_ns", &t) == 0;
    if (pl->event == PROC_START && have_t && !s->start_ns)
        s->start_ns = t;
    if (pl->event == PROC_EXIT && have_t)
        s->end_ns = t;
    if (pl->exe && pl->event != PROC_EXIT) {
        const char *b = strrchr(pl->exe, '/');
        snprintf(s->exe, sizeof s->exe, "%s", b ? b + 1 : pl->exe);
    }
}

static int take(cJSON *o, size_t lineno, void *arg)
{
    struct reading *r = arg;
    struct proc_line pl;
    if (procline_read(o, &pl) != 0) {
        r->noproc++;
        return 0;
    }
    if (pl.event == PROC_OTHER)
        return 0;
    if (pl.have_figures) {
        struct run_sampling *s = &r->sampling;
        s->images++;
        s->samples += pl.n_samples;
        s->distinct_samples += pl.distinct_samples;
        s->sampled_cpu_s += pl.sampled_cpu_s;
        s->shim_threads_cpu_s += pl.shim_threads_cpu_s;
        s->unsampled_cpu_s += pl.unsampled_cpu_s;
        if (pl.samples_without_libunwind >= 0) {
            s->fp_images++;
            s->fp_samples += pl.samples_without_libunwind;
            s->fp_of_samples += pl.n_samples;
        }
    }
    uint64_t key[1] = {(uint64_t)pl.pid};
    uint64_t *v = hmap_get(&r->last, key, NULL);
    if (!v) {
        r->oom = 1;
        return 1;
    }
    *v = ((uint64_t)lineno << 2) | (pl.event == PROC_START ? 1u : pl.event == PROC_EXEC ? 2u : 3u);
    span_note(r->p, o, &pl);
    return 0;
}

struct unloaded_at {
    size_t line;
    long pid;
};

static int by_line(const void *a, const void *b)
{
    const struct unloaded_at *x = a, *y = b;
    return x->line < y->line ? -1 : x->line > y->line;
}

double run_sampling_hz_delivered(const struct run_sampling *s)
{
    return s->sampled_cpu_s > 0.05 ? s->distinct_samples / s->sampled_cpu_s : -1;
}

double run_sampling_hz_weighted(const struct run_sampling *s)
{
    return s->sampled_cpu_s > 0.05 ? s->samples / s->sampled_cpu_s : -1;
}

int run_procs_load(const char *dir, struct run_procs *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    char path[PATH_MAX];
    struct stat st;
    if (runfolder_path(path, sizeof path, dir, RUN_PROCS, err, errlen) != 0)
        return -1;
    if (stat(path, &st) != 0 && errno == ENOENT)
        return 0;
    struct reading r = {.p = p, .noproc = 0, .oom = 0};
    hmap_init(&r.last, 1);
    struct jsonl_stats js;
    int rc = jsonl_foreach(path, take, &r, &js, err, errlen);
    if (rc == 0 && r.oom) {
        reader_error(err, errlen, path, "out of memory");
        rc = -1;
    }
    struct unloaded_at *u = NULL;
    size_t nu = 0;
    if (rc == 0 && r.last.n) {
        u = malloc(r.last.n * sizeof *u);
        if (!u) {
            reader_error(err, errlen, path, "out of memory");
            rc = -1;
        }
    }
    if (rc == 0) {
        p->present = 1;
        p->processes = r.last.n;
        p->sampling = r.sampling;
        p->bad = js.bad + r.noproc;
        for (size_t i = 0; i < r.last.cap; i++)
            if (r.last.used[i] && (r.last.vals[i] & 3u) == 2u)
                u[nu++] = (struct unloaded_at){(size_t)(r.last.vals[i] >> 2), (long)hmap_key(&r.last, i)[0]};
        if (nu) {
            qsort(u, nu, sizeof *u, by_line);
            p->unloaded = malloc(nu * sizeof *p->unloaded);
            if (!p->unloaded) {
                reader_error(err, errlen, path, "out of memory");
                rc = -1;
            } else {
                for (size_t i = 0; i < nu; i++)
                    p->unloaded[i] = u[i].pid;
                p->nunloaded = nu;
            }
        }
    }
    free(u);
    hmap_free(&r.last);
    if (rc != 0)
        run_procs_free(p);
    return rc;
}

void run_procs_free(struct run_procs *p)
{
    free(p->unloaded);
    memset(p, 0, sizeof *p);
}

int run_procs_unloaded(const struct run_procs *p, long pid)
{
    for (size_t i = 0; i < p->nunloaded; i++)
        if (p->unloaded[i] == pid)
            return 1;
    return 0;
}

const char *run_status(const struct run_meta *m, const struct run_procs *p, char *buf, size_t size)
{
    runmeta_status(m, buf, size);
    if (strcmp(buf, "killed") == 0 && m->pid > 0 && run_procs_unloaded(p, m->pid))
        snprintf(buf, size, "unknown");
    return buf;
}
