/* render.c: the run report as markdown (runmodel.h), printed by `perfscope-report OUT` and
 * written to OUT/report.md: the same text for both. It must only read the model, clean every
 * name that came from a file (control bytes, '|' in table cells), and say why a number is
 * missing instead of printing 0. */
#include "runmodel.h"
#include "sbuf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *run_num_fmt(double v)
{
    double a = fabs(v);
    return a >= 1000 ? "%.0f" : a >= 100 ? "%.1f" : a >= 10 ? "%.2f" : a >= 1 || a == 0 ? "%.3f" : "%.4g";
}

static void num(struct sbuf *b, double v)
{
    sbuf_printf(b, run_num_fmt(v), v);
}

static const char *meta_str(const struct run_model *m, const char *obj, const char *key)
{
    const cJSON *o = m->s.meta.doc;
    if (o && obj)
        o = cJSON_GetObjectItemCaseSensitive(o, obj);
    const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
    return cJSON_IsString(v) && v->valuestring ? v->valuestring : NULL;
}

/* meta.json obj.key as a finite number >= 0, else -1 (the file is hostile). */
static double meta_nonneg(const struct run_model *m, const char *obj, const char *key)
{
    const cJSON *o = m->s.meta.doc ? cJSON_GetObjectItemCaseSensitive(m->s.meta.doc, obj) : NULL;
    const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
    return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e15 ? v->valuedouble : -1;
}

/* The command line as meta.json has it; 0 when it has none. */
int run_command_text(struct sbuf *b, const struct run_model *m)
{
    const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(m->s.meta.doc, "command");
    if (!cJSON_IsArray(cmd))
        return 0;
    const cJSON *a;
    int n = 0;
    cJSON_ArrayForEach(a, cmd)
    {
        if (n++ == 32) {
            sbuf_printf(b, " ...");
            break;
        }
        if (cJSON_IsString(a) && a->valuestring)
            sbuf_printf(b, " %s", a->valuestring);
    }
    return 1;
}

/* What the counter reads cost, as meta.json's counter_reads says: how many, the CPU per read of
 * each source, and the setting that sets how often they come (docs/shim.md, "Counters on a GPU
 * machine": an NVML energy read took 3-4 ms of CPU on an H100). */
static void counter_cost(struct sbuf *b, const struct run_model *m)
{
    double reads = meta_nonneg(m, "counter_reads", "reads");
    double cpu = meta_nonneg(m, "counter_reads", "cpu_s");
    if (reads <= 0 || cpu < 0)
        return;
    sbuf_printf(b, "; counter reads: %.0f", reads);
    double ms = meta_nonneg(m, "config", "counter_ms");
    if (ms > 0)
        sbuf_printf(b, " (every %.0f ms, PERFSCOPE_COUNTER_MS, and at each boundary)", ms);
    sbuf_printf(b, ", %.3f CPU s in all; a read took", cpu);
    /* A source with nothing to read still has its read's bookkeeping charged: said as such, so
     * that its milliseconds are not taken for a reading's. RAPL zones that are there but never
     * gave a value (unreadable without privilege since Linux 5.10) are not a reading either. */
    int rapl = 0, rapl_ok = 0, nvml = m->mem.ndev > 0;
    for (size_t i = 0; i < m->en.nd; i++) {
        rapl |= m->en.d[i].kind != DK_GPU;
        rapl_ok |= m->en.d[i].kind != DK_GPU && m->en.d[i].state == DS_OK;
        nvml |= m->en.d[i].kind == DK_GPU;
    }
    static const char *const key[] = {"rapl_cpu_s", "nvml_cpu_s", "memory_cpu_s"};
    static const char *const name[] = {"RAPL", "NVML", "memory"};
    const char *const mark[] = {!rapl ? " (none here)" : !rapl_ok ? " (no zone readable here)" : "",
                                nvml ? "" : " (none here)", ""};
    for (int k = 0; k < 3; k++) {
        double s = meta_nonneg(m, "counter_reads", key[k]);
        sbuf_printf(b, "%s %s %.3f ms%s", k ? "," : "", name[k], s > 0 ? 1e3 * s / reads : 0.0, mark[k]);
    }
}

/* Below this much sampled CPU the shim's threads are not put as a share of it: a target that
 * sleeps (perfscope record -- sleep 20) sampled about 2 ms of CPU, and the shim's threads' own
 * 2-3 ms came to "137%" of it, a true figure that reads as a fault. */
#define SHIM_SHARE_MIN_CPU_S 0.1

/* What the shim's own threads cost: over every process image of the run (procs.jsonl's exit and
 * exec lines, summed as the delivered rate is), against those images' sampled CPU, then the
 * leader's own figures from meta.json (its threads also read the counters and the markers);
 * and its counter reads. One sentence, no markup; nothing when no figure is there. The one
 * wording of it, for this report and report.html. The leader's threads against the whole run's
 * CPU, or the run's against the leader's, would be a share of nothing in particular: a shell
 * script's leader samples milliseconds while its children sample seconds. */
void run_shim_cost(struct sbuf *b, const struct run_model *m)
{
    const struct run_sampling *rs = &m->s.procs.sampling;
    double own = meta_nonneg(m, "sampling", "shim_threads_cpu_s");
    double wakeups = meta_nonneg(m, "sampling", "shim_threads_wakeups");
    if (rs->images > 0) {
        sbuf_printf(b, "perfscope's own threads: %.3f CPU s in %zu process image%s", rs->shim_threads_cpu_s,
                    rs->images, rs->images == 1 ? "" : "s");
        if (rs->sampled_cpu_s >= SHIM_SHARE_MIN_CPU_S)
            sbuf_printf(b, " (%.2f%% of their %.3f sampled CPU s)", 100.0 * rs->shim_threads_cpu_s / rs->sampled_cpu_s,
                        rs->sampled_cpu_s);
        else if (rs->sampled_cpu_s >= 0)
            sbuf_printf(b, " (their sampled CPU, %.3f s, is too little for a share)", rs->sampled_cpu_s);
        if (own >= 0) {
            sbuf_printf(b, "; the leader process's %.3f CPU s", own);
            if (wakeups >= 0)
                sbuf_printf(b, ", %.0f wakeups", wakeups);
        }
    } else {
        if (own < 0)
            return;
        double cpu = meta_nonneg(m, "sampling", "sampled_cpu_s");
        sbuf_printf(b, "perfscope's own threads: %.3f CPU s in the leader process", own);
        if (cpu >= SHIM_SHARE_MIN_CPU_S)
            sbuf_printf(b, " (%.2f%% of its %.3f sampled CPU s)", 100.0 * own / cpu, cpu);
        else if (cpu >= 0)
            sbuf_printf(b, " (its sampled CPU, %.3f s, is too little for a share)", cpu);
        if (wakeups >= 0)
            sbuf_printf(b, ", %.0f wakeups", wakeups);
    }
    sbuf_printf(b, " (the signal handler's time is in the target's own)");
    counter_cost(b, m);
}

void run_memory_few_readings(struct sbuf *b, const struct run_model *m)
{
    size_t n = 0;
    for (size_t i = 0; i < m->ngr; i++) {
        const struct group_result *g = &m->gr[i];
        if (!g->have_host || g->b.occurrences == 0 ||
            (double)g->host_periodic / (double)g->b.occurrences >= MEMORY_FEW_READINGS)
            continue;
        sbuf_printf(b, "%s", n++ ? ", " : "host anon peak from few readings: ");
        sbuf_clean(b, g->name, 0);
        sbuf_printf(b, " (%d in %zu occurrence%s, %d of them periodic)", g->have_host, g->b.occurrences,
                    g->b.occurrences == 1 ? "" : "s", g->host_periodic);
    }
    if (n)
        sbuf_printf(b, ". The memory is read at each boundary and every counter period (PERFSCOPE_COUNTER_MS): "
                       "a phase that lasts a few periods or less shows the run's memory at those instants, "
                       "which may miss its own peak (the run's peak is under Memory)");
}

void run_cpu_few_samples(struct sbuf *b, const struct run_model *m)
{
    size_t n = 0;
    for (size_t i = 0; i < m->ngr; i++) {
        const struct group_result *g = &m->gr[i];
        /* No sample at all is named too where the group's wall holds under CPU_FEW_SAMPLES
         * periods: its 0 CPU s is then no measure (a 15 ms burn under load took none). */
        double periods = m->hz > 0 ? g->b.wall_s * m->hz : -1;
        if (!g->cpu_known || g->samples >= CPU_FEW_SAMPLES ||
            (g->samples == 0 && !(periods >= 0 && periods < CPU_FEW_SAMPLES)))
            continue;
        sbuf_printf(b, "%s", n++ ? ", " : "CPU from few samples: ");
        sbuf_clean(b, g->name, 0);
        if (g->samples)
            sbuf_printf(b, " (%llu, about %.0f%%)", (unsigned long long)g->samples, 100.0 / sqrt((double)g->samples));
        else
            sbuf_printf(b, " (0 in %.1f periods of its wall)", periods);
    }
    if (n)
        sbuf_printf(b, ". A phase's CPU is its samples over the rate, uncertain by about one over the square root "
                       "of their count: its cores may even exceed the threads that ran it (a higher -F, or a longer "
                       "phase, gives more)");
}

void run_nested_groups(struct sbuf *b, const struct run_model *m)
{
    const struct phases *p = m->s.phases;
    unsigned char *named = p && p->ngroups ? calloc(p->ngroups, 1) : NULL;
    if (!named)
        return;
    size_t n = 0;
    for (size_t i = 0; i < m->ngr; i++) {
        const struct group_result *g = &m->gr[i];
        memset(named, 0, p->ngroups);
        size_t inner = 0;
        for (size_t k = 0; k < p->n; k++) {
            int up = p->v[k].parent, in = p->v[k].group;
            /* Held: begun inside it and ended no later (phases of two threads may only overlap). */
            if (up < 0 || (size_t)up >= p->n || p->v[up].group != g->g || in < 0 || (size_t)in >= p->ngroups ||
                in == g->g || named[in] || p->v[k].end_ns > p->v[up].end_ns)
                continue;
            named[in] = 1;
            if (inner == 0) {
                sbuf_printf(b, "%s", n++ ? "; " : "phases inside phases: ");
                sbuf_clean(b, g->name, 0);
                sbuf_printf(b, " holds ");
            }
            if (inner < 4) {
                sbuf_printf(b, "%s", inner ? ", " : "");
                sbuf_clean(b, p->groups[in], 0);
            } else if (inner == 4) {
                sbuf_printf(b, " and more");
            }
            inner++;
        }
    }
    free(named);
    if (n)
        sbuf_printf(b, ". A sample counts in the innermost phase open at its time: an outer group's CPU s and cores "
                       "are its own time outside the phases it holds, its wall the whole");
}

/* One of the run's sentences (run_shim_cost, run_memory_few_readings) between before and after;
 * nothing when it says nothing. */
static void sentence(struct sbuf *b, void (*say)(struct sbuf *, const struct run_model *),
                     const struct run_model *m, const char *before, const char *after)
{
    struct sbuf t = {0};
    say(&t, m);
    char *s = sbuf_take_for(&t, b);
    if (s && *s)
        sbuf_printf(b, "%s%s%s", before, s, after);
    free(s);
}

static void header_facts_text(struct sbuf *b, const struct run_model *m)
{
    const struct run_procs *pr = &m->s.procs;
    int first_unloaded = m->s.meta.pid > 0 && run_procs_unloaded(pr, m->s.meta.pid);
    sbuf_printf(b, "status: ");
    sbuf_clean(b, m->status, 0);
    sbuf_printf(b, "%s",
                strcmp(m->status, "killed") == 0
                    ? " (meta.json still said running: the run's leader never recorded its exit)"
                : first_unloaded && strcmp(m->status, "unknown") == 0
                    ? " (the run's first process went on, after exec, in an image the shim did not load in: "
                      "its end was never recorded)"
                : runmeta_status_from_launcher(&m->s.meta)
                    ? " (as perfscope record's wait4 saw it, launcher.json: the shim never recorded the end)"
                    : "");
    if (strcmp(m->status, "ended unseen") == 0 && m->s.meta.end_unseen) {
        sbuf_printf(b, " (meta.json still said running, and the shim knew why its end could pass unseen: ");
        sbuf_clean(b, m->s.meta.end_unseen, 0);
        sbuf_printf(b, "; the exit status is known only to its parent)");
    }
    sbuf_printf(b, "\n");
    if (pr->nunloaded) {
        /* One line: which images, and the usual reasons. */
        sbuf_printf(b, "not measured: %zu image%s the shim did not load in, after exec (pid", pr->nunloaded,
                    pr->nunloaded == 1 ? "" : "s");
        for (size_t i = 0; i < pr->nunloaded && i < 8; i++)
            sbuf_printf(b, "%s %ld", i ? "," : "", pr->unloaded[i]);
        sbuf_printf(b, "%s): ld.so refused the shim (a relative LD_PRELOAD after a cd?), or a static or setuid "
                       "executable, or an environment without LD_PRELOAD; what they did is not in this run\n",
                    pr->nunloaded > 8 ? ", ..." : "");
    }
    if (m->hz == 0)
        sbuf_printf(b, "stack sampling: off (PERFSCOPE_HZ=0): not perturbed\n");
    else {
        sbuf_printf(b, "stack sampling: ");
        if (m->hz > 0)
            sbuf_printf(b, "%d Hz, ", m->hz);
        const char *clock = meta_str(m, "sampling", "clock");
        if (clock) {
            sbuf_clean(b, clock, 0);
            sbuf_printf(b, " clock, ");
        }
        double share = m->samples + m->dropped ? 100.0 * (double)m->dropped /
                                                      (double)(m->samples + m->dropped)
                                                : 0;
        const char *counts = runmeta_cpu_counts(&m->s.meta);
        if (counts)
            sbuf_printf(b, "CPU s count %s time, ", strcmp(counts, "user") == 0 ? "user" : "user and system");
        sbuf_printf(b, "%llu samples, %llu dropped (%.1f%%)%s\n", (unsigned long long)m->samples,
                    (unsigned long long)m->dropped, share,
                    m->perturbed ? ": perturbed (timings include the sampler's cost)" : "");
        /* The rate the clock delivered, over every image of the run (procs.jsonl's figures). */
        const struct run_sampling *rs = &m->s.procs.sampling;
        double hz = run_sampling_hz_delivered(rs);
        if (hz >= 0)
            sbuf_printf(b, "delivered: %.0f distinct samples per sampled CPU s (%.0f weighted), over %zu process image%s "
                           "and %.3f sampled CPU s\n",
                        hz, run_sampling_hz_weighted(rs), rs->images, rs->images == 1 ? "" : "s", rs->sampled_cpu_s);
        /* Stacks libunwind was to walk but frame pointers did (its load comes with a process's
         * first sample): in code without frame pointers they stop short. */
        if (rs->fp_samples > 0 && rs->fp_of_samples > 0)
            sbuf_printf(b, "stacks by frame pointers: %.0f of %.0f samples (%.1f%%) were walked before libunwind was "
                           "loaded in their process, or where it could not be used: in code without frame pointers "
                           "such a stack stops short, so an outer function's inclusive share may read low by up to "
                           "that much\n",
                        rs->fp_samples, rs->fp_of_samples, 100 * rs->fp_samples / rs->fp_of_samples);
    }
    sentence(b, run_shim_cost, m, "", "\n");
    if (m->un.cpu_s > 0)
        sbuf_printf(b, "unsampled: %.3f CPU s of %zu thread%s ran with SIGPROF blocked: no sample stands for it "
                       "(Unsampled CPU, in report.md)\n",
                    m->un.cpu_s, m->un.nthreads + (m->un.other_lines > 0), m->un.nthreads == 1 && !m->un.other_lines ? "" : "s");
    const cJSON *mb = cJSON_GetObjectItemCaseSensitive(m->s.meta.doc, "machine_before");
    const cJSON *clean = mb ? cJSON_GetObjectItemCaseSensitive(mb, "clean") : NULL;
    if (cJSON_IsBool(clean)) {
        const char *why = meta_str(m, "machine_before", "why_not");
        sbuf_printf(b, "machine before: %s", cJSON_IsTrue(clean) ? "clean" : "not clean");
        if (!cJSON_IsTrue(clean) && why) {
            sbuf_printf(b, " (");
            sbuf_clean(b, why, 0);
            sbuf_printf(b, ")");
        }
        sbuf_printf(b, "\n");
    }
}


void run_header_facts(struct sbuf *b, const struct run_model *m, void (*emit)(struct sbuf *b, const char *line))
{
    struct sbuf facts = {0};
    header_facts_text(&facts, m);
    char *text = sbuf_take(&facts);
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        else
            next = line + strlen(line);
        emit(b, line);
    }
    free(text);
}

static void fact_item(struct sbuf *b, const char *line)
{
    sbuf_printf(b, "- %s\n", line);
}

static void header(struct sbuf *b, const struct run_model *m)
{
    sbuf_printf(b, "# perfscope report: ");
    sbuf_clean(b, m->dir, 0);
    sbuf_printf(b, "\n\n");
    struct sbuf cmd = {0};
    if (run_command_text(&cmd, m)) {
        char *text = sbuf_take(&cmd);
        sbuf_printf(b, "- command:");
        if (text)
            sbuf_clean(b, text, 0);
        sbuf_printf(b, "\n");
        free(text);
    }
    run_header_facts(b, m, fact_item);
}

static void cell_num(struct sbuf *b, int have, double v)
{
    sbuf_printf(b, " ");
    if (have)
        num(b, v);
    else
        sbuf_printf(b, "-");
    sbuf_printf(b, " |");
}

/* A table cell with a fixed number of decimals, or "-". */
static void cell_fix(struct sbuf *b, int have, double v, int decimals)
{
    if (have)
        sbuf_printf(b, " %.*f |", decimals, v);
    else
        sbuf_printf(b, " - |");
}

const char *run_cpu_header(const struct run_model *m)
{
    const char *c = runmeta_cpu_counts(&m->s.meta);
    return !c ? "CPU s" : strcmp(c, "user") == 0 ? "CPU s (user)" : "CPU s (user+sys)";
}

static void phases_table(struct sbuf *b, const struct run_model *m)
{
    sbuf_printf(b, "\n## Phases\n\n");
    if (!m->ngr) {
        sbuf_printf(b, "No phases: the run wrote no markers%s.\n",
                    m->s.phases ? "" : " (no phases.jsonl)");
        if (m->samples)
            sbuf_printf(b, "All %llu samples, %.3f CPU s, are outside any phase.\n",
                        (unsigned long long)m->none_samples, m->none_cpu_s);
        return;
    }
    sbuf_printf(b, "| group | times | wall s | %s | cores | tokens | tokens/s | energy J | "
                   "J/token | GPU peak MiB | host anon peak MiB |\n", run_cpu_header(m));
    sbuf_printf(b, 
                   "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    size_t open = 0;
    for (size_t i = 0; i < m->ngr; i++) {
        const struct group_result *g = &m->gr[i];
        open += g->b.open;
        sbuf_printf(b, "| %s | %zu |", g->name, g->b.occurrences);
        cell_fix(b, 1, g->b.wall_s, 3);
        cell_fix(b, g->cpu_known, g->cpu_s, 3);
        cell_fix(b, g->cpu_known && g->b.wall_s > 0, g->cores, 2);
        if (g->b.tokens >= 0)
            sbuf_printf(b, " %lld |", g->b.tokens);
        else
            sbuf_printf(b, " - |");
        cell_fix(b, g->b.tokens_per_s >= 0, g->b.tokens_per_s, 1);
        int e = g->have_total && g->total.available;
        cell_num(b, e, g->total.j);
        cell_num(b, e && g->b.tokens > 0, g->b.tokens > 0 ? g->total.j / (double)g->b.tokens : 0);
        cell_fix(b, g->have_gpu, g->gpu_above_mib, 0);
        cell_fix(b, g->have_host, g->host_kib / 1024, 1);
        sbuf_printf(b, "\n");
    }
    if (m->none_samples)
        sbuf_printf(b, "| (none) | | | %.3f | | | | | | | |\n", m->none_cpu_s);
    if (m->groups_hidden)
        sbuf_printf(b, "\n%zu more groups are not shown.\n", m->groups_hidden);
    sentence(b, run_memory_few_readings, m, "\n", ".\n");
    sentence(b, run_cpu_few_samples, m, "\n", ".\n");
    sentence(b, run_nested_groups, m, "\n", ".\n");
    if (open)
        sbuf_printf(b, "\n%zu phase%s never ended: counted to the run's last sample or counter "
                       "reading.\n", open, open == 1 ? "" : "s");
    if (m->s.phases && m->s.phases->bad_lines)
        sbuf_printf(b, "\nphases.jsonl: %zu bad lines skipped (first at line %zu).\n",
                    m->s.phases->bad_lines, m->s.phases->first_bad_line);
}

static void domain_lists(struct sbuf *b, const struct run_model *m)
{
    static const char *titles[] = {"added to the total", "shown, never added"};
    for (int pass = 0; pass < 2; pass++) {
        int n = 0;
        for (size_t i = 0; i < m->en.nd; i++) {
            const struct edomain *d = &m->en.d[i];
            if (d->state != DS_OK || (pass == 0) != (d->added != 0))
                continue;
            if (n++)
                sbuf_printf(b, ", ");
            else
                sbuf_printf(b, "- %s: ", titles[pass]);
            sbuf_clean(b, d->label, 0);
        }
        if (n)
            sbuf_printf(b, "\n");
    }
    for (size_t i = 0; i < m->en.nd; i++) {
        const struct edomain *d = &m->en.d[i];
        if (d->state != DS_OK) {
            sbuf_printf(b, "- ");
            sbuf_clean(b, d->label, 0);
            sbuf_printf(b, ": ");
            sbuf_clean(b, d->why, 0);
            sbuf_printf(b, "%s\n", d->addable ? " (left out of the total)" : "");
        } else if (d->why[0] || d->wraps) {
            sbuf_printf(b, "- ");
            sbuf_clean(b, d->label, 0);
            sbuf_printf(b, ":");
            if (d->wraps)
                sbuf_printf(b, " the counter wrapped %zu time%s (max_energy_range_uj), added back",
                            d->wraps, d->wraps == 1 ? "" : "s");
            if (d->why[0]) {
                sbuf_printf(b, "%s ", d->wraps ? ";" : "");
                sbuf_clean(b, d->why, 0);
            }
            sbuf_printf(b, "\n");
        }
    }
}

static void energy_row(struct sbuf *b, const struct group_result *g, const char *domain,
                       const struct genergy *e)
{
    sbuf_printf(b, "| %s | ", g->name);
    sbuf_clean(b, domain, 1);
    sbuf_printf(b, " |");
    if (!e->available) {
        sbuf_printf(b, " - | - | - | - | - | - | - | ");
        sbuf_clean(b, e->why, 1);
        sbuf_printf(b, " |\n");
        return;
    }
    cell_num(b, 1, e->j);
    cell_num(b, e->wall_s > 0, e->wall_s > 0 ? e->j / e->wall_s : 0);
    cell_num(b, g->b.tokens > 0, g->b.tokens > 0 ? e->j / (double)g->b.tokens : 0);
    cell_num(b, e->have_marginal, e->marginal_j);
    if (e->have_marginal) {
        sbuf_printf(b, " ");
        num(b, e->idle_w);
        sbuf_printf(b, " (sd ");
        num(b, e->idle_sd_w);
        sbuf_printf(b, ") |");
    } else {
        sbuf_printf(b, " - |");
    }
    cell_num(b, e->have_ratio, e->ratio);
    sbuf_printf(b, " %s | ", e->verdict ? e->verdict : "-");
    const char *sep = "";
    if (e->flag[0]) {
        sbuf_clean(b, e->flag, 1);
        sep = "; ";
    }
    if (!e->have_marginal && e->marginal_why[0] && g->b.occurrences) {
        sbuf_printf(b, "%smarginal: ", sep);
        sbuf_clean(b, e->marginal_why, 1);
    } else if (e->marginal_why[0]) {
        sbuf_printf(b, "%smarginal ", sep);
        sbuf_clean(b, e->marginal_why, 1);
    } else if (e->have_marginal && !e->have_ratio) {
        sbuf_printf(b, "%sidle power did not vary: no ratio", sep);
    }
    sbuf_printf(b, " |\n");
}

static void energy_section(struct sbuf *b, const struct run_model *m)
{
    sbuf_printf(b, "\n## Energy\n\n");
    if (!m->en.nd) {
        sbuf_printf(b, "Unavailable: the run recorded no RAPL zone and no GPU energy counter%s.\n",
                    m->rd->n ? "" : " (no counter readings at all)");
        return;
    }
    domain_lists(b, m);
    if (!m->en.total.n)
        sbuf_printf(b, "\nNo total: no package, dram or GPU counter could be used.\n");
    else
        sbuf_printf(b, "\nTotals and J/token are over: %s. Marginal energy is over the idle "
                       "phases that bracket a group (idle power x wall taken off); ratio = "
                       "marginal power / idle standard deviation.\n", m->en.total_over);
    if (!m->ngr)
        return;
    sbuf_printf(b, "\n| group | domain | J | mean W | J/token | marginal J | idle W | ratio | "
                   "verdict | note |\n|---|---|---:|---:|---:|---:|---:|---:|---|---|\n");
    for (size_t i = 0; i < m->ngr; i++) {
        const struct group_result *g = &m->gr[i];
        if (g->have_total)
            energy_row(b, g, "total", &g->total);
        for (size_t d = 0; d < m->en.nd; d++)
            if (m->en.d[d].state == DS_OK)
                energy_row(b, g, m->en.d[d].name, &g->dom[d]);
    }
}

static void memory_section(struct sbuf *b, const struct run_model *m)
{
    const struct memory *mem = &m->mem;
    sbuf_printf(b, "\n## Memory\n\n");
    if (!mem->ndev)
        sbuf_printf(b, "- GPU: unavailable: no GPU counters (NVML absent or no GPU; see the log)\n");
    else if (!mem->have_gpu_total)
        sbuf_printf(b, "- GPU: unavailable: NVML gave no memory figure\n");
    else {
        sbuf_printf(b, "- GPU: peak above baseline %.1f MiB in total, %.1f MiB on the busiest "
                       "device (baseline %.1f MiB at the start)\n",
                    mem->total_peak - mem->total_base, mem->max_device_above, mem->total_base);
        for (size_t i = 0; i < mem->ndev; i++) {
            const struct gpu_dev_mem *d = &mem->dev[i];
            sbuf_printf(b, "  - GPU %s: ", d->key);
            if (!d->have) {
                sbuf_printf(b, "no value\n");
                continue;
            }
            sbuf_printf(b, "%.1f MiB above its baseline of %.1f MiB, %s\n", d->peak - d->base, d->base,
                        d->fallback ? "from the device's memory used minus its value at start: "
                                      "NVML could not list the processes (a container, MIG), so "
                                      "other processes on the device count too"
                                    : "the run's processes (NVML per-process memory)");
        }
    }
    if (mem->have_host) {
        sbuf_printf(b, "- host: RssAnon peak %.1f MiB (the run's processes, summed)\n",
                    mem->host_peak_kib / 1024);
    } else {
        sbuf_printf(b, "- host: unavailable: no RssAnon reading\n");
    }
}

static void rows(struct sbuf *b, const struct run_model *m, const char *title, const struct hot_row *r,
                 size_t n, double wall_s)
{
    if (!n)
        return;
    sbuf_printf(b, "\n| %s | share | %s | threads | busiest thread s | %% of wall | | source |\n"
                   "|---|---:|---:|---:|---:|---:|---|---|\n", title, run_cpu_header(m));
    for (size_t i = 0; i < n; i++) {
        double pct = run_row_pct_wall(&r[i], wall_s);
        sbuf_printf(b, "| ");
        sbuf_clean(b, r[i].name, 1);
        sbuf_printf(b, " | %.1f%% |", 100 * r[i].share);
        cell_num(b, r[i].cpu_s >= 0, r[i].cpu_s);
        if (r[i].threads >= 0)
            sbuf_printf(b, " %d |", r[i].threads);
        else
            sbuf_printf(b, " - |");
        cell_num(b, r[i].busiest_s >= 0, r[i].busiest_s);
        if (pct >= 0)
            sbuf_printf(b, " %.1f |", pct);
        else
            sbuf_printf(b, " - |");
        sbuf_printf(b, " %s | ", run_row_serial(&r[i], wall_s) == 1 ? "serial" : "");
        sbuf_clean(b, r[i].source, 1);
        sbuf_printf(b, " |\n");
    }
}

void run_serial_legend(struct sbuf *b)
{
    sbuf_printf(b, "serial: one thread spent %.0f%% or more of the group's wall in it and holds %.0f%% or "
                   "more of its CPU time in the group",
                100 * SERIAL_SHARE, 100 * SERIAL_SHARE);
}

static void serial_legend(struct sbuf *b)
{
    run_serial_legend(b);
    sbuf_printf(b, ".\n");
}

void run_busiest_line(struct sbuf *b, const struct group_result *g)
{
    const struct hot_group *p = g->prof;
    if (!p || !p->have_busiest || g->busiest_share < 0)
        return;
    sbuf_printf(b, "Busiest thread: %lld (", p->busiest_tid);
    sbuf_clean(b, p->busiest_name, 0);
    sbuf_printf(b, "), %.3f CPU s, %.0f%% of the wall", p->busiest_cpu_s, 100 * g->busiest_share);
    if (g->busiest_cpu_share >= 0)
        sbuf_printf(b, ", %.0f%% of the group's CPU", 100 * g->busiest_cpu_share);
    sbuf_printf(b, "%s", g->serial == 1 ? ": the group is serial on it" : "");
}

static void hot_section(struct sbuf *b, const struct run_model *m)
{
    sbuf_printf(b, "\n## Hot functions\n\n");
    if (m->prof_note[0]) {
        sbuf_clean(b, m->prof_note, 0);
        sbuf_printf(b, "\n");
    }
    if (!m->prof)
        return;
    serial_legend(b);
    int shown = 0;
    for (size_t i = 0; i < m->ngr; i++) {
        const struct group_result *g = &m->gr[i];
        const struct hot_group *p = g->prof;
        if (!p || (!p->nself && !p->nincl))
            continue;
        shown++;
        sbuf_printf(b, "\n### %s\n", g->name);
        struct sbuf line = {0};
        run_busiest_line(&line, g);
        char *text = sbuf_take_for(&line, b);
        if (text && *text)
            sbuf_printf(b, "\n%s\n", text);
        free(text);
        rows(b, m, "self", p->self, p->nself, g->b.wall_s);
        rows(b, m, "inclusive", p->incl, p->nincl, g->b.wall_s);
    }
    const struct hot_group *none = hot_profile_group(m->prof, PHASES_NONE);
    if (none && none->nself) {
        shown++;
        sbuf_printf(b, "\n### (none): outside every phase\n");
        rows(b, m, "self", none->self, none->nself, 0);
        rows(b, m, "inclusive", none->incl, none->nincl, 0);
    }
    if (!shown)
        sbuf_printf(b, "profile.json has no rows for these groups.\n");
}

static void llama_section(struct sbuf *b, const struct run_model *m)
{
    if (!m->have_lb)
        return;
    sbuf_printf(b, "\n## llama-bench output (target.stdout)\n\n| test | n_prompt | n_gen | "
                   "tokens/s | sd | repetitions | used as |\n|---|---:|---:|---:|---:|---:|---|\n");
    for (size_t i = 0; i < m->lb.n; i++) {
        const struct lb_test *t = &m->lb.t[i];
        const char *kind = (int)i == m->lb.pp ? "prefill" : (int)i == m->lb.tg ? "decode" : "-";
        if (t->n_prompt && t->n_gen)
            sbuf_printf(b, "| pp%lld+tg%lld |", t->n_prompt, t->n_gen);
        else
            sbuf_printf(b, "| %s%lld |", t->n_gen ? "tg" : "pp", t->n_gen ? t->n_gen : t->n_prompt);
        sbuf_printf(b, " %lld | %lld |", t->n_prompt, t->n_gen);
        cell_num(b, 1, t->avg_ts);
        cell_num(b, 1, t->stddev_ts);
        sbuf_printf(b, " %zu | %s |\n", t->nsamples, kind);
    }
}

/* The threads that ran with SIGPROF blocked where the shim could not keep it open, and their CPU
 * time per phase group: the profile above does not contain it. The busiest threads first. */
static const struct unsampled *un_sorting;

static int by_cpu_desc(const void *a, const void *b)
{
    double x = un_sorting->thread[*(const size_t *)a].cpu_s, y = un_sorting->thread[*(const size_t *)b].cpu_s;
    return x < y ? 1 : x > y ? -1 : 0;
}

size_t run_unsampled_top(const struct unsampled *u, size_t *order, size_t cap, double *shown_s)
{
    size_t *all = malloc((u->nthreads ? u->nthreads : 1) * sizeof *all), n = 0;
    *shown_s = 0;
    if (!all)
        return 0;
    for (size_t i = 0; i < u->nthreads; i++)
        all[i] = i;
    un_sorting = u;
    qsort(all, u->nthreads, sizeof *all, by_cpu_desc);
    for (; n < u->nthreads && n < cap; n++) {
        order[n] = all[n];
        *shown_s += u->thread[all[n]].cpu_s;
    }
    free(all);
    return n;
}

void run_unsampled_intro(struct sbuf *b, const struct run_model *m)
{
    sbuf_printf(b, "These threads ran with SIGPROF blocked where the shim could not keep it open (the "
                   "target's own SIGPROF handler, a raw rt_sigprocmask, setcontext): %.3f CPU s that no "
                   "sample stands for, not in the CPU s, shares and hot functions of this report",
                m->un.cpu_s);
}

void run_unsampled_more(struct sbuf *b, const struct unsampled *u, size_t shown)
{
    if (shown < u->nthreads || u->other_lines)
        sbuf_printf(b, "%s%zu more thread%s", u->other_lines ? "over " : "", u->nthreads - shown,
                    u->nthreads - shown == 1 && !u->other_lines ? "" : "s");
}

void run_unsampled_bad(struct sbuf *b, const struct unsampled *u)
{
    if (u->bad)
        sbuf_printf(b, "%zu bad line%s skipped (the first: line %zu)", u->bad, u->bad == 1 ? "" : "s",
                    u->first_bad_line);
}

static void unsampled_section(struct sbuf *b, const struct run_model *m)
{
    const struct unsampled *u = &m->un;
    if (u->cpu_s <= 0 && !u->bad)
        return;
    sbuf_printf(b, "\n## Unsampled CPU (unsampled.jsonl)\n\n");
    if (u->cpu_s > 0) {
        run_unsampled_intro(b, m);
        sbuf_printf(b, ".\n\n| pid | tid | thread | CPU s (user+sys) |\n|---:|---:|---|---:|\n");
        size_t order[RUN_UNSAMPLED_SHOWN];
        double shown_s;
        size_t n = run_unsampled_top(u, order, RUN_UNSAMPLED_SHOWN, &shown_s);
        for (size_t i = 0; i < n; i++) {
            const struct unsampled_thread *t = &u->thread[order[i]];
            sbuf_printf(b, "| %ld | %ld | ", t->pid, t->tid);
            sbuf_clean(b, t->comm[0] ? t->comm : "-", 1);
            sbuf_printf(b, " | %.3f |\n", t->cpu_s);
        }
        if (n < u->nthreads || u->other_lines) {
            sbuf_printf(b, "| | | ");
            run_unsampled_more(b, u, n);
            sbuf_printf(b, " | %.3f |\n", u->cpu_s - shown_s);
        }
        sbuf_printf(b, "\n| group | unsampled CPU s (user+sys) |\n|---|---:|\n");
        for (size_t g = 0; g <= u->ngroups; g++) {
            if (u->group_cpu_s[g] <= 0)
                continue;
            sbuf_printf(b, "| ");
            sbuf_clean(b, g < u->ngroups ? m->s.phases->groups[g] : PHASES_NONE, 1);
            sbuf_printf(b, " | %.3f |\n", u->group_cpu_s[g]);
        }
    }
    if (u->bad) {
        sbuf_printf(b, "%s", u->cpu_s > 0 ? "\n" : "");
        run_unsampled_bad(b, u);
        sbuf_printf(b, ".\n");
    }
}

const char *run_log_none(const struct run_model *m)
{
    return m->s.log.n ? NULL : m->s.log.present ? "Empty." : "No perfscope.log: nothing went wrong.";
}

void run_log_lines(struct sbuf *b, const struct run_model *m, void (*emit)(struct sbuf *b, const char *line))
{
    const struct run_log *log = &m->s.log;
    for (size_t i = 0; i < log->n + (log->more > 0); i++) {
        struct sbuf line = {0};
        if (i < log->n) {
            sbuf_clean(&line, log->line[i], 0);
            sbuf_printf(&line, "%s", log->cut[i] ? " [cut]" : "");
        } else {
            sbuf_printf(&line, "... %zu more lines", log->more);
        }
        char *text = sbuf_take_for(&line, b);
        if (!text)
            return;
        emit(b, text);
        free(text);
    }
}

static void code_line(struct sbuf *b, const char *line)
{
    sbuf_printf(b, "%s\n", line);
}

static void log_section(struct sbuf *b, const struct run_model *m)
{
    sbuf_printf(b, "\n## Log (perfscope.log)\n\n");
    if (run_log_none(m)) {
        sbuf_printf(b, "%s\n", run_log_none(m));
        return;
    }
    sbuf_printf(b, "```\n");
    run_log_lines(b, m, code_line);
    sbuf_printf(b, "```\n");
}

char *run_markdown(const struct run_model *m)
{
    struct sbuf b = {0};
    header(&b, m);
    phases_table(&b, m);
    unsampled_section(&b, m);
    energy_section(&b, m);
    memory_section(&b, m);
    hot_section(&b, m);
    llama_section(&b, m);
    log_section(&b, m);
    return sbuf_take(&b);
}

/* The short summary `perfscope record` prints after a run: the header and the phases table. */
char *run_markdown_short(const struct run_model *m)
{
    struct sbuf b = {0};
    header(&b, m);
    phases_table(&b, m);
    /* A run without phases has nothing in that table: its hottest functions instead, which a
     * `perfscope record -- xz ...` user otherwise had to ask perfscope report for. */
    const struct hot_group *none = !m->ngr && m->prof ? hot_profile_group(m->prof, PHASES_NONE) : NULL;
    if (none && none->nself) {
        sbuf_printf(&b, "\n## Hot functions, the whole run (perfscope report gives the inclusive ones)\n\n");
        serial_legend(&b);
        rows(&b, m, "self", none->self, none->nself, 0);
    }
    return sbuf_take(&b);
}
