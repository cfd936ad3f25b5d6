/* run.c: one run folder into a run_model (runmodel.h); its outputs are cmd_run.c's. It must
 * read and check every input before anything is printed or written, never write, and never
 * fail on a part the run does not have (no samples, no counters, no markers): those are said in
 * the report instead. */
#include "runmodel.h"
#include "symbolize_call.h"
#include "runfolder.h"
#include "files.h"
#include "jsonl.h"
#include "report.h"
#include "textfile.h"
#include "html/flametree.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>


static void set_status(struct run_model *m)
{
    run_status(&m->s.meta, &m->s.procs, m->status, sizeof m->status);
    m->hz = m->s.meta.hz;
    m->perturbed = m->hz > 0 || (m->hz < 0 && m->s.total_samples > 0);
}

/* The run's end for phases that never ended: the last sample or counter reading. */
static long long newest_input(const struct run_model *m)
{
    long long newest = 0;
    char path[PATH_MAX];
    for (size_t i = 0; i < m->s.nfiles; i++) {
        long long t = file_mtime_ns(m->s.files[i].path);
        newest = t > newest ? t : newest;
    }
    if (runfolder_path(path, sizeof path, m->dir, RUN_PHASES, NULL, 0) == 0) {
        long long t = file_mtime_ns(path);
        newest = t > newest ? t : newest;
    }
    return newest;
}

/* flame.json, written with profile.json by the symbolizer: for report.html only (the report
 * paths that symbolize). Missing (a symbolizer older than the flame graphs): a note. */
static int load_flame(struct run_model *m, char *err, size_t errlen)
{
    char path[PATH_MAX];
    if (runfolder_path(path, sizeof path, m->dir, RUN_FLAME, NULL, 0) != 0) {
        reader_error(err, errlen, m->dir, "path too long");
        return -1;
    }
    int rc = flame_load(path, &m->flame, err, errlen);
    if (rc == 1)
        snprintf(m->flame_note, sizeof m->flame_note, "no flame.json (run perfscope-symbolize OUT again)");
    return rc < 0 ? -1 : 0;
}

static int load_profile(struct run_model *m, int symbolize, char *err, size_t errlen)
{
    char path[PATH_MAX];
    if (m->s.total_samples == 0) {
        snprintf(m->prof_note, sizeof m->prof_note, "no stack samples in this run%s",
                 m->hz == 0 ? " (PERFSCOPE_HZ=0)" : "");
        return 0;
    }
    if (runfolder_path(path, sizeof path, m->dir, RUN_PROFILE, NULL, 0) != 0) {
        reader_error(err, errlen, m->dir, "path too long");
        return -1;
    }
    long long newest = newest_input(m);
    if (symbolize) {
        profile_ensure(m->dir, newest, m->prof_note, sizeof m->prof_note);
    } else if (file_mtime_ns(path) == 0) {
        snprintf(m->prof_note, sizeof m->prof_note, "no profile.json (run perfscope-report OUT)");
    }
    long long have = file_mtime_ns(path);
    if (!have)
        return 0;
    if (have < newest && !m->prof_note[0])
        snprintf(m->prof_note, sizeof m->prof_note, "profile.json is older than the samples");
    if (hot_profile_load(path, &m->prof, err, errlen) != 0)
        return -1;
    return symbolize ? load_flame(m, err, errlen) : 0;
}

int run_serial(double wall_share, double cpu_share)
{
    if (wall_share < 0 || cpu_share < 0)
        return -1;
    return wall_share >= SERIAL_SHARE && cpu_share >= SERIAL_SHARE;
}

double run_row_pct_wall(const struct hot_row *r, double wall_s)
{
    if (r->pct_wall >= 0)
        return r->pct_wall;
    return r->busiest_s >= 0 && wall_s > 0 ? 100 * r->busiest_s / wall_s : -1;
}

int run_row_serial(const struct hot_row *r, double wall_s)
{
    double pct = run_row_pct_wall(r, wall_s);
    double one_s = r->busiest_s >= 0 ? r->busiest_s : pct >= 0 && wall_s > 0 ? pct / 100 * wall_s : -1;
    double cpu_share = one_s >= 0 && r->cpu_s > 0 ? one_s / r->cpu_s : -1;
    if (pct >= 0 && pct < 100 * SERIAL_SHARE)
        return 0; /* the wall share alone rules it out */
    return run_serial(pct >= 0 ? pct / 100 : -1, cpu_share);
}

static int compute_group(struct run_model *m, struct group_result *gr, int g)
{
    const struct phases *p = m->s.phases;
    gr->g = g;
    gr->name = p->groups[g];
    group_basic(p, &m->gi, g, &gr->b);
    gr->samples = m->s.groups[g].samples;
    gr->cpu_known = m->s.total_samples > 0 && !m->s.cpu_s_unknown;
    gr->cpu_s = m->s.groups[g].cpu_s;
    gr->cores = gr->b.wall_s > 0 ? gr->cpu_s / gr->b.wall_s : 0;
    gr->dom = calloc(m->en.nd ? m->en.nd : 1, sizeof *gr->dom);
    if (!gr->dom)
        return -1;
    for (size_t d = 0; d < m->en.nd; d++)
        if (m->en.d[d].state == DS_OK)
            group_energy(&m->en, (int)d, p, &m->gi, g, &gr->dom[d]);
    gr->have_total = m->en.total.n > 0;
    if (gr->have_total)
        group_energy(&m->en, -1, p, &m->gi, g, &gr->total);
    for (size_t k = m->gi.start[g]; k < m->gi.start[g + 1]; k++) {
        const struct phase *ph = &p->v[m->gi.occ[k]];
        memory_window(&m->mem, m->rd, ph->start_ns, ph->end_ns, &gr->gpu_above_mib, &gr->have_gpu,
                      &gr->host_kib, &gr->have_host, &gr->host_periodic);
    }
    gr->prof = hot_profile_group(m->prof, gr->name);
    gr->busiest_share = gr->prof && gr->prof->have_busiest && gr->b.wall_s > 0
                            ? gr->prof->busiest_cpu_s / gr->b.wall_s
                            : -1;
    /* The group's CPU on the profile's own base where it gives one (the busiest thread's
     * figure comes from the same samples), else the model's. */
    double cpu = gr->prof && gr->prof->cpu_s > 0 ? gr->prof->cpu_s : gr->cpu_known ? gr->cpu_s : -1;
    gr->busiest_cpu_share = gr->busiest_share >= 0 && cpu > 0 ? gr->prof->busiest_cpu_s / cpu : -1;
    gr->serial = run_serial(gr->busiest_share, gr->busiest_cpu_share);
    return 0;
}

static int compute_groups(struct run_model *m)
{
    size_t ng = m->s.phases ? m->s.phases->ngroups : 0;
    m->ngr = ng < GROUPS_SHOWN ? ng : GROUPS_SHOWN;
    m->groups_hidden = ng - m->ngr;
    m->gr = calloc(m->ngr ? m->ngr : 1, sizeof *m->gr);
    if (!m->gr)
        return -1;
    for (size_t g = 0; g < m->ngr; g++)
        if (compute_group(m, &m->gr[g], (int)g) != 0)
            return -1;
    m->none_samples = m->s.groups[ng].samples;
    m->none_cpu_s = m->s.groups[ng].cpu_s;
    return 0;
}

static void llama_bench(struct run_model *m)
{
    char path[PATH_MAX];
    if (runfolder_path(path, sizeof path, m->dir, RUN_TARGET_STDOUT, NULL, 0) == 0)
        m->have_lb = llamabench_parse(path, &m->lb);
}

int run_model_load(const char *dir, int symbolize, struct run_model *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    m->dir = dir;
    m->s.dir = dir;
    m->gi.idle = -1;
    if (runfolder_check_run(dir, err, errlen) != 0 || runfolder_check_inputs(dir, err, errlen) != 0 ||
        load_meta(&m->s, err, errlen) != 0 ||
        load_phases(&m->s, err, errlen) != 0 || load_samples(&m->s, err, errlen) != 0 ||
        load_log(&m->s, RUN_LOG_LINES, err, errlen) != 0 || readings_load(dir, &m->rd, err, errlen) != 0 ||
        unsampled_load(dir, m->s.phases, &m->un, err, errlen) != 0)
        return -1;
    set_status(m);
    m->samples = m->s.total_samples;
    for (size_t i = 0; i < m->s.nfiles; i++)
        m->dropped += m->s.files[i].hdr.dropped;
    if (energy_build(m->rd, &m->en, err, errlen) != 0)
        return -1;
    if (memory_build(m->rd, &m->mem) != 0 || group_index_build(m->s.phases, &m->gi) != 0) {
        reader_error(err, errlen, dir, "out of memory");
        return -1;
    }
    if (load_profile(m, symbolize, err, errlen) != 0)
        return -1;
    if (compute_groups(m) != 0) {
        reader_error(err, errlen, dir, "out of memory");
        return -1;
    }
    llama_bench(m);
    return 0;
}

void run_model_free(struct run_model *m)
{
    for (size_t g = 0; g < m->ngr; g++)
        free(m->gr[g].dom);
    free(m->gr);
    hot_profile_free(m->prof);
    flame_free(m->flame);
    unsampled_free(&m->un);
    group_index_free(&m->gi);
    memory_free(&m->mem);
    energy_free(&m->en);
    readings_free(m->rd);
    run_summary_free(&m->s);
    memset(m, 0, sizeof *m);
}
