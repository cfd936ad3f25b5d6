/* runjson.c: run.json of a run model (docs/report.md): the reference harness's keys (status,
 * perturbed, machine_before, throughput.<group>.tokens_per_s, memory.gpu.peak_above_baseline_
 * total_mib and _max_device_mib, memory.host.anon_peak_mib, groups.<group>.wall_s,
 * energy.<group>_j_per_token) so its compare.py reads it unchanged, and the rest of what the
 * report knows beside them. It must never write a number the run did not give: a value that is
 * unknown is absent, and where energy is unavailable the reason is written instead. */
#include "runmodel.h"

#include <stdio.h>
#include <string.h>

static void add_num(cJSON *o, const char *key, double v)
{
    cJSON_AddNumberToObject(o, key, v);
}

static cJSON *genergy_json(const struct genergy *e, long long tokens)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    if (!e->available) {
        cJSON_AddStringToObject(o, "unavailable", e->why);
        return o;
    }
    add_num(o, "j", e->j);
    if (e->wall_s > 0)
        add_num(o, "mean_w", e->j / e->wall_s);
    if (tokens > 0)
        add_num(o, "j_per_token", e->j / (double)tokens);
    if (e->flag[0])
        cJSON_AddStringToObject(o, "flag", e->flag);
    if (e->have_marginal) {
        add_num(o, "marginal_j", e->marginal_j);
        add_num(o, "marginal_w", e->marginal_w);
        add_num(o, "idle_w", e->idle_w);
        add_num(o, "idle_sd_w", e->idle_sd_w);
        if (tokens > 0)
            add_num(o, "marginal_j_per_token", e->marginal_j / (double)tokens);
        if (e->have_ratio) {
            add_num(o, "ratio", e->ratio);
            cJSON_AddStringToObject(o, "verdict", e->verdict);
        }
    }
    if (e->marginal_why[0])
        cJSON_AddStringToObject(o, "marginal_note", e->marginal_why);
    return o;
}

/* The first rows of a hot-function table, for scripts: name, share, CPU s, serial. */
static void hot_rows(cJSON *hot, const char *key, const struct hot_row *r, size_t n, double wall_s)
{
    cJSON *arr = cJSON_AddArrayToObject(hot, key);
    for (size_t i = 0; arr && i < n && i < 5; i++) {
        cJSON *o = cJSON_CreateObject();
        if (!o)
            return;
        cJSON_AddItemToArray(arr, o);
        cJSON_AddStringToObject(o, "name", r[i].name);
        add_num(o, "share", r[i].share);
        if (r[i].cpu_s >= 0)
            add_num(o, "cpu_s", r[i].cpu_s);
        if (run_row_pct_wall(&r[i], wall_s) >= 0)
            cJSON_AddBoolToObject(o, "serial", run_row_serial(&r[i], wall_s) == 1);
        if (r[i].source[0])
            cJSON_AddStringToObject(o, "source", r[i].source);
    }
}

static void group_json(cJSON *groups, cJSON *energy, const struct run_model *m,
                       const struct group_result *g)
{
    cJSON *o = cJSON_AddObjectToObject(groups, g->name);
    if (!o)
        return;
    cJSON_AddNumberToObject(o, "occurrences", (double)g->b.occurrences);
    if (g->b.open)
        cJSON_AddNumberToObject(o, "never_ended", (double)g->b.open);
    add_num(o, "wall_s", g->b.wall_s);
    if (g->cpu_known) {
        add_num(o, "cpu_s", g->cpu_s);
        if (g->b.wall_s > 0)
            add_num(o, "cores_busy", g->cores);
        cJSON_AddNumberToObject(o, "samples", (double)g->samples);
    }
    if (g->b.tokens >= 0)
        cJSON_AddNumberToObject(o, "tokens", (double)g->b.tokens);
    if (g->b.tokens_per_s >= 0)
        add_num(o, "tokens_per_s", g->b.tokens_per_s);
    if (g->have_gpu)
        add_num(o, "gpu_peak_above_baseline_total_mib", g->gpu_above_mib);
    if (g->have_host)
        add_num(o, "host_anon_peak_mib", g->host_kib / 1024);
    if (g->busiest_share >= 0) {
        add_num(o, "busiest_thread_share_of_wall", g->busiest_share);
        if (g->busiest_cpu_share >= 0)
            add_num(o, "busiest_thread_share_of_cpu", g->busiest_cpu_share);
        cJSON_AddBoolToObject(o, "serial", g->serial == 1);
    }
    if (g->prof && (g->prof->nself || g->prof->nincl)) {
        cJSON *hot = cJSON_AddObjectToObject(o, "hot");
        if (hot) {
            hot_rows(hot, "self", g->prof->self, g->prof->nself, g->b.wall_s);
            hot_rows(hot, "inclusive", g->prof->incl, g->prof->nincl, g->b.wall_s);
        }
    }
    cJSON *e = cJSON_AddObjectToObject(o, "energy");
    if (!e)
        return;
    char key[PHASE_NAME_MAX + 40];
    if (!g->have_total) {
        cJSON_AddStringToObject(e, "unavailable", m->en.nd ? "no package, dram or GPU counter "
                                                             "could be used"
                                                           : "no energy counter recorded");
        snprintf(key, sizeof key, "%s_unavailable", g->name);
        cJSON_AddStringToObject(energy, key, "no usable energy counter");
    } else {
        cJSON_AddItemToObject(e, "total", genergy_json(&g->total, g->b.tokens));
        if (g->total.available) {
            snprintf(key, sizeof key, "%s_j", g->name);
            add_num(energy, key, g->total.j);
            if (g->b.tokens > 0) {
                snprintf(key, sizeof key, "%s_j_per_token", g->name);
                add_num(energy, key, g->total.j / (double)g->b.tokens);
            }
            if (g->total.have_marginal && g->b.tokens > 0) {
                snprintf(key, sizeof key, "%s_marginal_j_per_token", g->name);
                add_num(energy, key, g->total.marginal_j / (double)g->b.tokens);
            }
            if (g->total.verdict) {
                snprintf(key, sizeof key, "%s_verdict", g->name);
                cJSON_AddStringToObject(energy, key, g->total.verdict);
            }
        } else {
            snprintf(key, sizeof key, "%s_unavailable", g->name);
            cJSON_AddStringToObject(energy, key, g->total.why);
        }
    }
    cJSON *doms = cJSON_AddObjectToObject(e, "domains");
    for (size_t d = 0; doms && d < m->en.nd; d++) {
        const struct edomain *ed = &m->en.d[d];
        if (ed->state == DS_OK)
            cJSON_AddItemToObject(doms, ed->name, genergy_json(&g->dom[d], g->b.tokens));
        else {
            cJSON *x = cJSON_AddObjectToObject(doms, ed->name);
            if (x)
                cJSON_AddStringToObject(x, "unavailable", ed->why);
        }
    }
}

static void domains_json(cJSON *energy, const struct run_model *m)
{
    cJSON *arr = cJSON_AddArrayToObject(energy, "domains");
    cJSON *over = cJSON_AddArrayToObject(energy, "total_over");
    for (size_t i = 0; arr && over && i < m->en.nd; i++) {
        const struct edomain *d = &m->en.d[i];
        cJSON *o = cJSON_CreateObject();
        if (!o)
            return;
        cJSON_AddItemToArray(arr, o);
        cJSON_AddStringToObject(o, "name", d->name);
        cJSON_AddStringToObject(o, "label", d->label);
        cJSON_AddStringToObject(o, "kind", dom_kind_name(d->kind));
        cJSON_AddBoolToObject(o, "added", d->added);
        cJSON_AddStringToObject(o, "state", d->state == DS_OK ? "ok"
                                            : d->state == DS_DEAD ? "dead" : "unavailable");
        if (d->why[0])
            cJSON_AddStringToObject(o, d->state == DS_OK ? "note" : "why", d->why);
        if (d->wraps)
            cJSON_AddNumberToObject(o, "wraps", (double)d->wraps);
        if (d->added)
            cJSON_AddItemToArray(over, cJSON_CreateString(d->name));
    }
}

static void memory_json(cJSON *root, const struct run_model *m)
{
    const struct memory *mem = &m->mem;
    cJSON *o = cJSON_AddObjectToObject(root, "memory");
    cJSON *gpu = o ? cJSON_AddObjectToObject(o, "gpu") : NULL;
    cJSON *host = o ? cJSON_AddObjectToObject(o, "host") : NULL;
    if (!gpu || !host)
        return;
    if (mem->have_gpu_total) {
        add_num(gpu, "peak_above_baseline_total_mib", mem->total_peak - mem->total_base);
        add_num(gpu, "peak_above_baseline_max_device_mib", mem->max_device_above);
        add_num(gpu, "baseline_total_mib", mem->total_base);
        cJSON_AddStringToObject(gpu, "source", mem->any_fallback
                                ? "device memory used minus its value at start (NVML could not "
                                  "list processes)"
                                : "the run's processes (NVML usedGpuMemory)");
        cJSON *devs = cJSON_AddArrayToObject(gpu, "devices");
        for (size_t i = 0; devs && i < mem->ndev; i++) {
            const struct gpu_dev_mem *d = &mem->dev[i];
            cJSON *x = cJSON_CreateObject();
            if (!x)
                break;
            cJSON_AddItemToArray(devs, x);
            cJSON_AddStringToObject(x, "index", d->key);
            cJSON_AddBoolToObject(x, "processes_listed", !d->fallback);
            if (d->have) {
                add_num(x, "baseline_mib", d->base);
                add_num(x, "peak_mib", d->peak);
            }
        }
    } else {
        cJSON_AddStringToObject(gpu, "unavailable", mem->ndev ? "NVML gave no memory figure"
                                                              : "no GPU counters");
    }
    if (mem->have_host)
        add_num(host, "anon_peak_mib", mem->host_peak_kib / 1024);
    else
        cJSON_AddStringToObject(host, "unavailable", "no RssAnon reading");
}

static void throughput_json(cJSON *root, const struct run_model *m)
{
    cJSON *tp = cJSON_AddObjectToObject(root, "throughput");
    if (!tp)
        return;
    for (size_t i = 0; i < m->ngr; i++) {
        const struct group_result *g = &m->gr[i];
        if (g->b.tokens_per_s < 0)
            continue;
        cJSON *o = cJSON_AddObjectToObject(tp, g->name);
        if (!o)
            return;
        cJSON_AddNumberToObject(o, "tokens", (double)g->b.tokens);
        add_num(o, "wall_s", g->b.wall_s);
        add_num(o, "tokens_per_s", g->b.tokens_per_s);
        cJSON_AddStringToObject(o, "source", "markers");
    }
    if (!m->have_lb)
        return;
    const char *names[2] = {"prefill", "decode"};
    int idx[2] = {m->lb.pp, m->lb.tg};
    for (int k = 0; k < 2; k++) {
        if (idx[k] < 0 || cJSON_GetObjectItemCaseSensitive(tp, names[k]))
            continue;
        const struct lb_test *t = &m->lb.t[idx[k]];
        cJSON *o = cJSON_AddObjectToObject(tp, names[k]);
        if (!o)
            return;
        cJSON_AddNumberToObject(o, "tokens", (double)(k ? t->n_gen : t->n_prompt));
        add_num(o, "tokens_per_s", t->avg_ts);
        add_num(o, "stddev_ts", t->stddev_ts);
        cJSON_AddStringToObject(o, "source", "llama-bench");
    }
    cJSON *arr = cJSON_AddArrayToObject(root, "llama_bench");
    for (size_t i = 0; arr && i < m->lb.n; i++) {
        cJSON *o = cJSON_CreateObject();
        if (!o)
            return;
        cJSON_AddItemToArray(arr, o);
        cJSON_AddNumberToObject(o, "n_prompt", (double)m->lb.t[i].n_prompt);
        cJSON_AddNumberToObject(o, "n_gen", (double)m->lb.t[i].n_gen);
        add_num(o, "avg_ts", m->lb.t[i].avg_ts);
        add_num(o, "stddev_ts", m->lb.t[i].stddev_ts);
        cJSON_AddNumberToObject(o, "repetitions", (double)m->lb.t[i].nsamples);
    }
}

/* unsampled.jsonl's CPU time: in all, per thread and per phase group (only when the run has
 * the file). */
static void unsampled_json(cJSON *root, const struct run_model *m)
{
    const struct unsampled *u = &m->un;
    if (!u->present)
        return;
    cJSON *o = cJSON_AddObjectToObject(root, "unsampled");
    if (!o)
        return;
    cJSON_AddNumberToObject(o, "cpu_s", u->cpu_s);
    cJSON *threads = cJSON_AddArrayToObject(o, "threads");
    for (size_t i = 0; threads && i < u->nthreads; i++) {
        cJSON *t = cJSON_CreateObject();
        if (!t)
            break;
        cJSON_AddNumberToObject(t, "pid", (double)u->thread[i].pid);
        cJSON_AddNumberToObject(t, "tid", (double)u->thread[i].tid);
        cJSON_AddStringToObject(t, "comm", u->thread[i].comm);
        cJSON_AddNumberToObject(t, "cpu_s", u->thread[i].cpu_s);
        cJSON_AddItemToArray(threads, t);
    }
    if (u->other_lines)
        cJSON_AddNumberToObject(o, "other_threads_cpu_s", u->other_cpu_s);
    cJSON *groups = cJSON_AddObjectToObject(o, "groups");
    for (size_t g = 0; groups && g <= u->ngroups; g++)
        if (u->group_cpu_s[g] > 0)
            cJSON_AddNumberToObject(groups, g < u->ngroups ? m->s.phases->groups[g] : PHASES_NONE, u->group_cpu_s[g]);
    if (u->bad)
        cJSON_AddNumberToObject(o, "bad_lines", (double)u->bad);
}

cJSON *run_json(const struct run_model *m)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    cJSON_AddStringToObject(root, "schema", "perfscope-run/1");
    cJSON_AddStringToObject(root, "status", m->status);
    cJSON_AddBoolToObject(root, "perturbed", m->perturbed);
    const cJSON *mb = cJSON_GetObjectItemCaseSensitive(m->s.meta.doc, "machine_before");
    if (cJSON_IsObject(mb))
        cJSON_AddItemToObject(root, "machine_before", cJSON_Duplicate(mb, 1));
    const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(m->s.meta.doc, "command");
    if (cJSON_IsArray(cmd))
        cJSON_AddItemToObject(root, "command", cJSON_Duplicate(cmd, 1));
    if (m->s.meta.container_image[0]) { /* which image ran: the record of which code this was */
        cJSON_AddStringToObject(root, "container_image", m->s.meta.container_image);
        cJSON_AddStringToObject(root, "container_image_id", m->s.meta.container_image_id);
    }
    cJSON *s = cJSON_AddObjectToObject(root, "sampling");
    if (s) {
        if (m->hz >= 0)
            cJSON_AddNumberToObject(s, "hz", m->hz);
        cJSON_AddNumberToObject(s, "samples", (double)m->samples);
        cJSON_AddNumberToObject(s, "dropped", (double)m->dropped);
        const char *counts = runmeta_cpu_counts(&m->s.meta);
        if (counts)
            cJSON_AddStringToObject(s, "cpu_counts", counts);
        /* Every image's own figures, summed (procs.jsonl's exit and exec lines). */
        const struct run_sampling *rs = &m->s.procs.sampling;
        if (rs->images) {
            cJSON_AddNumberToObject(s, "images_with_figures", (double)rs->images);
            cJSON_AddNumberToObject(s, "distinct_samples", rs->distinct_samples);
            add_num(s, "sampled_cpu_s", rs->sampled_cpu_s);
            add_num(s, "shim_threads_cpu_s", rs->shim_threads_cpu_s);
            add_num(s, "unsampled_cpu_s", rs->unsampled_cpu_s);
            if (rs->fp_images)
                cJSON_AddNumberToObject(s, "samples_without_libunwind", rs->fp_samples);
            if (run_sampling_hz_delivered(rs) >= 0) {
                add_num(s, "hz_delivered", run_sampling_hz_delivered(rs));
                add_num(s, "hz_weighted", run_sampling_hz_weighted(rs));
            }
        }
    }
    unsampled_json(root, m);
    throughput_json(root, m);
    memory_json(root, m);
    cJSON *groups = cJSON_AddObjectToObject(root, "groups");
    cJSON *energy = cJSON_AddObjectToObject(root, "energy");
    if (groups && energy) {
        for (size_t i = 0; i < m->ngr; i++)
            group_json(groups, energy, m, &m->gr[i]);
        domains_json(energy, m);
    }
    if (m->groups_hidden)
        cJSON_AddNumberToObject(root, "groups_not_shown", (double)m->groups_hidden);
    if (m->prof_note[0])
        cJSON_AddStringToObject(root, "hot_functions_note", m->prof_note);
    cJSON *log = cJSON_AddArrayToObject(root, "log");
    for (size_t i = 0; log && i < m->s.log.n; i++)
        cJSON_AddItemToArray(log, cJSON_CreateString(m->s.log.line[i]));
    return root;
}
