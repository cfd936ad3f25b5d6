/* html_run.c: OUT/report.html of one run (run_html, runmodel.h), drawn by report/html/ from the
 * run model: the figures per phase group (the same columns, units and decimals as the terminal
 * report), a timeline of the phases and the run's processes, power per energy domain and memory
 * over time (one point per counters.jsonl reading, the phases shaded), a flame graph per phase
 * group (from flame.json) with its busiest thread and hot-function tables, the unsampled CPU and
 * the log, in render.c's words (its run_* sentences and rules). It must only read the model and never
 * work out a figure the model does not hold: power between two readings is the difference of
 * the model's cumulative energy over their interval, memory the readings themselves. */
#include "runmodel.h"
#include "html/page.h"
#include "html/flametree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct span {
    uint64_t t0, t1;
};

static void widen(struct span *s, uint64_t t)
{
    if (!t)
        return;
    if (!s->t0 || t < s->t0)
        s->t0 = t;
    if (t > s->t1)
        s->t1 = t;
}

/* The run's time axis: from its start (meta.json's t0_ns, or the first thing seen) to the last. */
static struct span run_span(const struct run_model *m)
{
    struct span s = {0, 0};
    widen(&s, m->s.meta.t0_ns);
    widen(&s, m->s.meta.end_ns);
    widen(&s, m->s.first_sample_ns);
    widen(&s, m->s.last_sample_ns);
    if (m->rd->n) {
        widen(&s, m->rd->t[0]);
        widen(&s, m->rd->t[m->rd->n - 1]);
    }
    for (size_t i = 0; m->s.phases && i < m->s.phases->n; i++) {
        widen(&s, m->s.phases->v[i].start_ns);
        widen(&s, m->s.phases->v[i].end_ns);
    }
    return s;
}

static double rel(const struct span *s, uint64_t t)
{
    return t > s->t0 ? (double)(t - s->t0) * 1e-9 : 0;
}

static double r4(double x) { return round(x * 1e4) / 1e4; }

static cJSON *phase_list(const struct run_model *m, const struct span *s)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && m->s.phases && i < m->s.phases->n; i++) {
        const struct phase *p = &m->s.phases->v[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", p->name);
        cJSON_AddNumberToObject(o, "g", p->group);
        cJSON_AddNumberToObject(o, "depth", p->depth);
        cJSON_AddNumberToObject(o, "t0", r4(rel(s, p->start_ns)));
        cJSON_AddNumberToObject(o, "t1", r4(rel(s, p->end_ns)));
        if (p->open)
            cJSON_AddNumberToObject(o, "open", 1);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

/* ---- the figures ---- */

/* One of the run's sentences (run_shim_cost, run_memory_few_readings), escaped, between the
 * markup before and after; nothing when it says nothing. */
static void sentence(struct sbuf *b, void (*say)(struct sbuf *, const struct run_model *),
                     const struct run_model *m, const char *before, const char *after)
{
    struct sbuf t = {0};
    say(&t, m);
    char *s = sbuf_take_for(&t, b);
    if (s && *s) {
        sbuf_printf(b, "%s", before);
        html_text(b, s);
        sbuf_printf(b, "%s", after);
    }
    free(s);
}

static void cell(struct sbuf *b, int have, const char *fmt, double v)
{
    sbuf_printf(b, "<td class=\"num\">");
    if (have)
        sbuf_printf(b, fmt, v);
    else
        sbuf_printf(b, "-");
    sbuf_printf(b, "</td>");
}

static void fact_item(struct sbuf *b, const char *line)
{
    sbuf_printf(b, "<li>");
    html_text(b, line);
    sbuf_printf(b, "</li>\n");
}

static void header(struct html_page *p, const struct run_model *m)
{
    struct sbuf *b = &p->b;
    sbuf_printf(b, "<ul class=\"ps-meta\">\n");
    struct sbuf cmd = {0};
    if (run_command_text(&cmd, m)) {
        char *text = sbuf_take(&cmd);
        sbuf_printf(b, "<li>command: <code>");
        if (text)
            html_text(b, text);
        sbuf_printf(b, "</code></li>\n");
        free(text);
    }
    run_header_facts(b, m, fact_item);
    sbuf_printf(b, "<li>the same run as text: report.md; as data: run.json</li>\n</ul>\n");
}

static void figures(struct html_page *p, const struct run_model *m)
{
    struct sbuf *b = &p->b;
    html_h2(p, "Phases");
    if (!m->ngr) {
        sbuf_printf(b, "<p>No phases: the run wrote no markers.%s</p>\n",
                    m->samples ? " All samples are outside any phase." : "");
        return;
    }
    sbuf_printf(b, "<table class=\"ps-phases\">\n<tr><th>group</th><th>times</th><th>wall s</th><th>");
    html_text(b, run_cpu_header(m));
    sbuf_printf(b, "</th><th>cores</th><th>tokens</th><th>tokens/s</th><th>energy J</th><th>J/token</th>"
                   "<th>GPU peak MiB</th><th>host anon peak MiB</th><th>samples</th></tr>\n");
    for (size_t i = 0; i < m->ngr; i++) {
        const struct group_result *g = &m->gr[i];
        sbuf_printf(b, "<tr><td>");
        html_text(b, g->name);
        sbuf_printf(b, "</td><td class=\"num\">%zu</td>", g->b.occurrences);
        cell(b, 1, "%.3f", g->b.wall_s);
        cell(b, g->cpu_known, "%.3f", g->cpu_s);
        cell(b, g->cpu_known && g->b.wall_s > 0, "%.2f", g->cores);
        cell(b, g->b.tokens >= 0, "%.0f", (double)g->b.tokens);
        cell(b, g->b.tokens_per_s >= 0, "%.1f", g->b.tokens_per_s);
        int e = g->have_total && g->total.available;
        cell(b, e, run_num_fmt(g->total.j), g->total.j);
        double jt = g->b.tokens > 0 ? g->total.j / (double)g->b.tokens : 0;
        cell(b, e && g->b.tokens > 0, run_num_fmt(jt), jt);
        cell(b, g->have_gpu, "%.0f", g->gpu_above_mib);
        cell(b, g->have_host, "%.1f", g->host_kib / 1024);
        sbuf_printf(b, "<td class=\"num\">%llu</td></tr>\n", (unsigned long long)g->samples);
    }
    if (m->none_samples)
        sbuf_printf(b, "<tr><td>(none)</td><td></td><td></td><td class=\"num\">%.3f</td><td></td><td></td><td></td>"
                       "<td></td><td></td><td></td><td></td><td class=\"num\">%llu</td></tr>\n",
                    m->none_cpu_s, (unsigned long long)m->none_samples);
    sbuf_printf(b, "</table>\n");
    if (m->groups_hidden)
        sbuf_printf(b, "<p class=\"ps-note\">%zu more groups are not shown.</p>\n", m->groups_hidden);
    sentence(b, run_memory_few_readings, m, "<p class=\"ps-note\">", ".</p>\n");
    sentence(b, run_cpu_few_samples, m, "<p class=\"ps-note\">", ".</p>\n");
    sentence(b, run_nested_groups, m, "<p class=\"ps-note\">", ".</p>\n");
    if (m->en.total.n)
        sbuf_printf(b, "<p class=\"ps-note\">Energy and J/token are over: "), html_text(b, m->en.total_over),
            sbuf_printf(b, ".</p>\n");
}

/* ---- pictures over time ---- */

static void timeline(struct html_page *p, const struct run_model *m, const struct span *s)
{
    cJSON *t = cJSON_CreateObject();
    cJSON_AddNumberToObject(t, "t1", r4(rel(s, s->t1)));
    cJSON_AddItemToObject(t, "phases", phase_list(m, s));
    cJSON *procs = cJSON_AddArrayToObject(t, "procs");
    for (size_t i = 0; procs && i < m->s.procs.nspans; i++) {
        const struct run_proc_span *ps = &m->s.procs.span[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "pid", (double)ps->pid);
        cJSON_AddStringToObject(o, "exe", ps->exe);
        cJSON_AddNumberToObject(o, "t0", r4(rel(s, ps->start_ns ? ps->start_ns : s->t0)));
        cJSON_AddNumberToObject(o, "t1", r4(rel(s, ps->end_ns ? ps->end_ns : s->t1)));
        cJSON_AddItemToArray(procs, o);
    }
    html_h2(p, "Timeline");
    html_timeline(p, "phases and processes", t);
    cJSON_Delete(t);
}

static cJSON *new_series(cJSON *chart, const char *name, cJSON **tv, cJSON **vv)
{
    cJSON *se = cJSON_CreateObject();
    cJSON_AddStringToObject(se, "name", name);
    *tv = cJSON_AddArrayToObject(se, "t");
    *vv = cJSON_AddArrayToObject(se, "v");
    cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(chart, "series"), se);
    return se;
}

static cJSON *new_chart(const struct run_model *m, const struct span *s, const char *unit)
{
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "unit", unit);
    cJSON_AddNumberToObject(c, "t1", r4(rel(s, s->t1)));
    cJSON_AddNumberToObject(c, "lines", (double)m->rd->counters_lines);
    cJSON_AddArrayToObject(c, "series");
    cJSON_AddItemToObject(c, "phases", phase_list(m, s));
    return c;
}

/* Power of one domain at each counters.jsonl reading: its energy over the interval from the
 * reading before (the first reading: the interval to the next one), over that interval. */
static void power_series(cJSON *chart, const struct edomain *d, const struct span *s)
{
    const struct cumseries *c = &d->c;
    cJSON *tv, *vv;
    new_series(chart, d->label, &tv, &vv);
    size_t prev = SIZE_MAX;
    for (size_t k = 0; k < c->n; k++) {
        if (!c->periodic[k])
            continue;
        size_t a = prev, z = k;
        if (prev == SIZE_MAX) { /* the first reading: the interval to the next one */
            size_t n = k + 1;
            while (n < c->n && !c->periodic[n])
                n++;
            if (n >= c->n)
                break;
            a = k, z = n;
        }
        double dt = (double)(c->t[z] - c->t[a]) * 1e-9;
        if (dt > 0) {
            cJSON_AddItemToArray(tv, cJSON_CreateNumber(r4(rel(s, c->t[k]))));
            cJSON_AddItemToArray(vv, cJSON_CreateNumber(r4((c->cum[z] - c->cum[a]) / dt)));
        }
        prev = k;
    }
}

static void energy_chart(struct html_page *p, const struct run_model *m, const struct span *s)
{
    int any = 0;
    for (size_t i = 0; i < m->en.nd; i++)
        any |= m->en.d[i].state == DS_OK;
    if (!any) {
        sbuf_printf(&p->b, "<p class=\"ps-note\">Power: no energy counter could be read in this run (see the log).</p>\n");
        return;
    }
    cJSON *c = new_chart(m, s, "W");
    for (size_t i = 0; i < m->en.nd; i++)
        if (m->en.d[i].state == DS_OK)
            power_series(c, &m->en.d[i], s);
    html_lines(p, "power per energy domain (W)", c);
    cJSON_Delete(c);
}

/* One series of readings: its value at each counters.jsonl reading that has one, times scale. */
static void reading_series(cJSON *chart, const struct run_model *m, const struct span *s, int series,
                           const char *name, double scale, double base)
{
    cJSON *tv, *vv;
    new_series(chart, name, &tv, &vv);
    const struct readings *r = m->rd;
    for (size_t k = 0; k < r->n; k++) {
        double v = r->s[series].v[k];
        if (!r->periodic[k] || isnan(v))
            continue;
        cJSON_AddItemToArray(tv, cJSON_CreateNumber(r4(rel(s, r->t[k]))));
        cJSON_AddItemToArray(vv, cJSON_CreateNumber(r4(v * scale - base)));
    }
}

static void memory_chart(struct html_page *p, const struct run_model *m, const struct span *s)
{
    const struct memory *mem = &m->mem;
    int any = mem->rss_series >= 0;
    for (size_t i = 0; i < mem->ndev; i++)
        any |= mem->dev[i].series >= 0;
    if (!any) {
        sbuf_printf(&p->b, "<p class=\"ps-note\">Memory: no reading in this run.</p>\n");
        return;
    }
    cJSON *c = new_chart(m, s, "MiB");
    if (mem->rss_series >= 0)
        reading_series(c, m, s, mem->rss_series, "host RssAnon (the run's processes)", 1.0 / 1024, 0);
    for (size_t i = 0; i < mem->ndev; i++) {
        const struct gpu_dev_mem *d = &mem->dev[i];
        if (d->series < 0)
            continue;
        char name[160];
        snprintf(name, sizeof name, "GPU %s above its baseline%s", d->key, d->fallback ? " (device memory used)" : "");
        reading_series(c, m, s, d->series, name, 1, d->base);
    }
    html_lines(p, "memory (MiB)", c);
    cJSON_Delete(c);
}

/* ---- per group: the flame graph and the hot functions ---- */

static void hot_rows(struct sbuf *b, const struct run_model *m, const char *title, const struct hot_row *r, size_t n,
                     double wall_s)
{
    if (!n)
        return;
    sbuf_printf(b, "<table class=\"ps-hot\">\n<tr><th>%s</th><th>share</th><th>", title);
    html_text(b, run_cpu_header(m));
    sbuf_printf(b, "</th><th>threads</th><th>busiest thread s</th><th>%% of wall</th><th></th><th>source</th></tr>\n");
    for (size_t i = 0; i < n; i++) {
        double pct = run_row_pct_wall(&r[i], wall_s);
        sbuf_printf(b, "<tr><td>");
        html_text(b, r[i].name);
        sbuf_printf(b, "</td><td class=\"num\">%.1f%%</td>", 100 * r[i].share);
        cell(b, r[i].cpu_s >= 0, run_num_fmt(r[i].cpu_s), r[i].cpu_s);
        cell(b, r[i].threads >= 0, "%.0f", r[i].threads);
        cell(b, r[i].busiest_s >= 0, run_num_fmt(r[i].busiest_s), r[i].busiest_s);
        cell(b, pct >= 0, "%.1f", pct);
        sbuf_printf(b, "<td>%s</td><td>", run_row_serial(&r[i], wall_s) == 1 ? "serial" : "");
        html_text(b, r[i].source);
        sbuf_printf(b, "</td></tr>\n");
    }
    sbuf_printf(b, "</table>\n");
}

/* The page's frames, shared out over the groups by their samples: at most about this many
 * (each is some 100 bytes of the page), so that a long run's page stays a few MB and opens in a
 * second; a group gets at least HTML_FRAMES_MIN. */
#define HTML_FRAMES 12000
#define HTML_FRAMES_MIN 300

static void legend(struct sbuf *b, const struct run_model *m)
{
    (void)m;
    run_serial_legend(b);
}

/* g: the phase group (its busiest thread), NULL for samples outside every phase. */
static int group_flame(struct html_page *p, const struct run_model *m, const struct group_result *g, const char *name,
                       const struct hot_group *hg, double wall_s, const char *caption, uint64_t samples)
{
    int oom = 0;
    size_t budget = m->samples ? (size_t)((double)HTML_FRAMES * (double)samples / (double)m->samples) : HTML_FRAMES;
    cJSON *tree = flame_tree(m->flame, name, budget < HTML_FRAMES_MIN ? HTML_FRAMES_MIN : budget, &oom);
    if (oom)
        return -1;
    char note[300] = "";
    if (!m->flame)
        snprintf(note, sizeof note, "%s", m->flame_note[0] ? m->flame_note : "no flame.json: no stack samples");
    if (tree || m->flame) {
        sbuf_printf(&p->b, "<section class=\"ps-group\" data-group=\"");
        html_text(&p->b, name);
        sbuf_printf(&p->b, "\">\n");
        html_flame(p, caption, tree, note);
        if (g) {
            struct sbuf line = {0};
            run_busiest_line(&line, g);
            char *text = sbuf_take_for(&line, &p->b);
            if (text && *text) {
                sbuf_printf(&p->b, "<p class=\"ps-busiest\">");
                html_text(&p->b, text);
                sbuf_printf(&p->b, "</p>\n");
            }
            free(text);
        }
        if (hg) {
            hot_rows(&p->b, m, "self", hg->self, hg->nself, wall_s);
            hot_rows(&p->b, m, "inclusive", hg->incl, hg->nincl, wall_s);
        }
        sbuf_printf(&p->b, "</section>\n");
    }
    cJSON_Delete(tree);
    return 0;
}

static int groups(struct html_page *p, const struct run_model *m)
{
    html_h2(p, "Flame graphs and hot functions, per phase group");
    if (!m->flame) {
        sbuf_printf(&p->b, "<p class=\"ps-note\">");
        html_text(&p->b, m->flame_note[0] ? m->flame_note : m->prof_note[0] ? m->prof_note : "no stack samples");
        sbuf_printf(&p->b, "</p>\n");
        return 0;
    }
    sbuf_printf(&p->b, "<p class=\"ps-note\">Width is samples; click a frame to zoom, hover for its details. Hatched: "
                       "inlined into its caller; grey, cross-hatched: a stack cut at the sampler's max frames.</p>\n");
    sentence(&p->b, legend, m, "<p class=\"ps-note\">", ".</p>\n");
    for (size_t i = 0; i < m->ngr; i++)
        if (group_flame(p, m, &m->gr[i], m->gr[i].name, m->gr[i].prof, m->gr[i].b.wall_s, m->gr[i].name, m->gr[i].samples) != 0)
            return -1;
    if (m->none_samples &&
        group_flame(p, m, NULL, PHASES_NONE, hot_profile_group(m->prof, PHASES_NONE), 0, "(none): outside every phase",
                    m->none_samples) != 0)
        return -1;
    return 0;
}

/* ---- what the text report has beside: the unsampled CPU and the log ---- */

static void unsampled(struct html_page *p, const struct run_model *m)
{
    const struct unsampled *u = &m->un;
    struct sbuf *b = &p->b;
    if (u->cpu_s <= 0 && !u->bad)
        return;
    html_h2(p, "Unsampled CPU (unsampled.jsonl)");
    if (u->cpu_s > 0) {
        sentence(b, run_unsampled_intro, m, "<p>", ".</p>\n");
        sbuf_printf(b, "<table class=\"ps-unsampled\">\n<tr><th>pid</th><th>tid</th><th>thread</th>"
                       "<th>CPU s (user+sys)</th></tr>\n");
        size_t order[RUN_UNSAMPLED_SHOWN];
        double shown_s;
        size_t n = run_unsampled_top(u, order, RUN_UNSAMPLED_SHOWN, &shown_s);
        for (size_t i = 0; i < n; i++) {
            const struct unsampled_thread *t = &u->thread[order[i]];
            sbuf_printf(b, "<tr><td class=\"num\">%ld</td><td class=\"num\">%ld</td><td>", t->pid, t->tid);
            html_text(b, t->comm[0] ? t->comm : "-");
            sbuf_printf(b, "</td><td class=\"num\">%.3f</td></tr>\n", t->cpu_s);
        }
        struct sbuf more = {0};
        run_unsampled_more(&more, u, n);
        char *text = sbuf_take_for(&more, b);
        if (text && *text) {
            sbuf_printf(b, "<tr><td></td><td></td><td>");
            html_text(b, text);
            sbuf_printf(b, "</td><td class=\"num\">%.3f</td></tr>\n", u->cpu_s - shown_s);
        }
        free(text);
        sbuf_printf(b, "</table>\n<table class=\"ps-unsampled\">\n<tr><th>group</th>"
                       "<th>unsampled CPU s (user+sys)</th></tr>\n");
        for (size_t g = 0; g <= u->ngroups; g++) {
            if (u->group_cpu_s[g] <= 0)
                continue;
            sbuf_printf(b, "<tr><td>");
            html_text(b, g < u->ngroups ? m->s.phases->groups[g] : PHASES_NONE);
            sbuf_printf(b, "</td><td class=\"num\">%.3f</td></tr>\n", u->group_cpu_s[g]);
        }
        sbuf_printf(b, "</table>\n");
    }
    if (u->bad) {
        struct sbuf bad = {0};
        run_unsampled_bad(&bad, u);
        char *text = sbuf_take_for(&bad, b);
        if (text) {
            sbuf_printf(b, "<p class=\"ps-note\">");
            html_text(b, text);
            sbuf_printf(b, ".</p>\n");
        }
        free(text);
    }
}

static void pre_line(struct sbuf *b, const char *line)
{
    html_text(b, line);
    sbuf_printf(b, "\n");
}

static void log_lines(struct html_page *p, const struct run_model *m)
{
    struct sbuf *b = &p->b;
    html_h2(p, "Log (perfscope.log)");
    if (run_log_none(m)) {
        sbuf_printf(b, "<p>%s</p>\n", run_log_none(m));
        return;
    }
    sbuf_printf(b, "<pre class=\"ps-log\">");
    run_log_lines(b, m, pre_line);
    sbuf_printf(b, "</pre>\n");
}

char *run_html(const struct run_model *m)
{
    struct html_page p;
    char title[600];
    snprintf(title, sizeof title, "perfscope report: %s", m->dir);
    html_page_begin(&p, title);
    header(&p, m);
    figures(&p, m);
    unsampled(&p, m);
    struct span s = run_span(m);
    timeline(&p, m, &s);
    html_h2(&p, "Power and memory over time");
    energy_chart(&p, m, &s);
    memory_chart(&p, m, &s);
    if (groups(&p, m) != 0) {
        sbuf_free(&p.b);
        return NULL;
    }
    log_lines(&p, m);
    return html_page_end(&p);
}
