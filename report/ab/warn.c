/* warn.c: the warnings beside the verdict (warn.h). The rules: a metric is judged on its own
 * runs (a run without the value does not count for it), so the too-few-runs line is per run
 * count; a run is usable as compare.py's diff says (judge_usable); a run has throughput when
 * compare.py's getter finds prefill or decode tokens_per_s. It must never alter what it is
 * given. */
#include "warn.h"
#include "jsondoc.h"
#include "pyfmt.h"
#include "stats.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void warn_add(struct warnings *w, const char *fmt, ...)
{
    if (w->n == WARN_MAX)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->line[w->n], WARN_LEN, fmt, ap);
    va_end(ap);
    w->n++;
}

size_t warn_runs_needed(void)
{
    size_t n = 1;
    while (stats_min_p(n, n) >= WARN_P)
        n++;
    return n;
}

void warn_few_runs(struct warnings *w, const struct diff_result *d)
{
    for (int m = 0; m < JUDGE_NMETRICS; m++) {
        const struct judge_result *r = &d->metrics[m];
        if (r->verdict == JUDGE_MISSING || stats_min_p(r->na, r->nb) < WARN_P)
            continue;
        int first = 1;
        for (int j = 0; j < m && first; j++)
            first = !(d->metrics[j].verdict != JUDGE_MISSING && d->metrics[j].na == r->na &&
                      d->metrics[j].nb == r->nb);
        if (!first)
            continue;
        char p[PYFMT_BUF], names[400] = "";
        size_t len = 0;
        for (int k = m; k < JUDGE_NMETRICS; k++) {
            const struct judge_result *x = &d->metrics[k];
            if (x->verdict == JUDGE_MISSING || x->na != r->na || x->nb != r->nb)
                continue;
            int n = snprintf(names + len, sizeof names - len, "%s %s", len ? "," : "",
                             judge_metrics[k].name);
            if (n > 0 && (size_t)n < sizeof names - len)
                len += (size_t)n;
        }
        warn_add(w, "too few runs: %zu A against %zu B cannot reach p < 0.05 (the smallest "
                    "possible p is %s):%s; at least %zu runs a side are needed",
                 r->na, r->nb, py_repr(py_round(stats_min_p(r->na, r->nb), 4), p, sizeof p), names,
                 warn_runs_needed());
    }
}

/* Why the runs of one side were dropped, counted: "2 sampled (perturbed), 1 status timeout".
 * Usable runs are not counted: the other side may be the one with none. */
static void dropped_reasons(const cJSON *const *runs, size_t n, char *buf, size_t size)
{
    size_t perturbed = 0, len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (judge_usable(runs[i]))
            continue;
        const cJSON *st = json_get(runs[i], "status");
        int ok = cJSON_IsString(st) && strcmp(st->valuestring, "ok") == 0;
        if (ok) { /* status ok, not usable: sampled */
            perturbed++;
            continue;
        }
        /* each distinct status once, with its count, in the order first seen */
        const char *word = cJSON_IsString(st) ? st->valuestring : "missing";
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++) {
            const cJSON *sj = json_get(runs[j], "status");
            const char *wj = cJSON_IsString(sj) ? sj->valuestring : "missing";
            seen = !(cJSON_IsString(sj) && strcmp(sj->valuestring, "ok") == 0) && strcmp(wj, word) == 0;
        }
        if (seen)
            continue;
        size_t count = 0;
        for (size_t j = i; j < n; j++) {
            const cJSON *sj = json_get(runs[j], "status");
            const char *wj = cJSON_IsString(sj) ? sj->valuestring : "missing";
            count += !(cJSON_IsString(sj) && strcmp(sj->valuestring, "ok") == 0) && strcmp(wj, word) == 0;
        }
        int k = snprintf(buf + len, size - len, "%s%zu with status \"%.60s\"", len ? ", " : "",
                         count, word);
        if (k > 0 && (size_t)k < size - len)
            len += (size_t)k;
    }
    if (perturbed)
        snprintf(buf + len, size - len, "%s%zu sampled (perturbed)", len ? ", " : "", perturbed);
}

int warn_no_verdict(struct warnings *w, const struct diff_result *d,
                    const cJSON *const *runs_a, size_t na, const cJSON *const *runs_b, size_t nb)
{
    if (d->usable_a && d->usable_b)
        return 0;
    char why[2][300];
    dropped_reasons(runs_a, na, why[0], sizeof why[0]);
    dropped_reasons(runs_b, nb, why[1], sizeof why[1]);
    const char *sides = !d->usable_a && !d->usable_b ? "A and B" : !d->usable_a ? "A" : "B";
    int sampled = strstr(why[0], "sampled") || strstr(why[1], "sampled");
    /* Per side: "2 of 3 dropped: ...", or "no run" (a matrix's refused arms are none). */
    char side[2][400];
    const size_t n[2] = {na, nb}, usable[2] = {d->usable_a, d->usable_b};
    for (int s = 0; s < 2; s++) {
        if (!n[s])
            snprintf(side[s], sizeof side[s], "no run");
        else
            snprintf(side[s], sizeof side[s], "%zu of %zu dropped%s%.300s", n[s] - usable[s], n[s],
                     why[s][0] ? ": " : "", why[s]);
    }
    warn_add(w, WARN_NO_VERDICT "no usable run on side %s, so nothing was judged (A: %s; B: %s)%s", sides,
             side[0], side[1],
             sampled ? "; a sampled run is never judged: perfscope diff --profiles compares the "
                       "functions of such runs" : "");
    return 1;
}

static int has_throughput(const cJSON *run)
{
    for (int m = 0; m < JUDGE_NMETRICS; m++)
        if ((strcmp(judge_metrics[m].name, "prefill_tps") == 0 ||
             strcmp(judge_metrics[m].name, "decode_tps") == 0) &&
            !isnan(judge_value(run, m)))
            return 1;
    return 0;
}

void warn_no_throughput(struct warnings *w, const cJSON *const *runs, size_t n, const char *side,
                        const char *const *names)
{
    size_t usable = 0, without = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
        if (!judge_usable(runs[i]))
            continue;
        usable++;
        if (!has_throughput(runs[i]) && without++ == 0)
            first = i;
    }
    if (!without)
        return;
    warn_add(w, "no throughput: %zu of %zu usable %s run%s found no tokens per second%s%s%s "
                "(a run needs phase markers with tokens=, or llama-bench's output on its stdout: "
                "its markdown table or -o json): prefill_tps and decode_tps are not judged%s",
             without, usable, side, usable == 1 ? "" : "s", names ? " (first: " : "",
             names ? names[first] : "", names ? ")" : "",
             without < usable ? " on those runs" : "");
}

void warn_noise_labels(struct warnings *w, const char *file, const cJSON *noise_doc,
                       const char *const *labels, size_t nlabels)
{
    if (!cJSON_IsObject(noise_doc))
        return;
    for (const cJSON *c = noise_doc->child; c; c = c->next) {
        if (!c->string || !json_first_of_name(c))
            continue;
        int found = 0;
        for (size_t i = 0; i < nlabels && !found; i++)
            found = strcmp(labels[i], c->string) == 0;
        if (!found)
            warn_add(w, "--noise %.200s: \"%.120s\" matches no case of the cases file: its floors "
                        "are not used (a case's label must be the same, byte for byte)",
                     file, c->string);
    }
}

void warn_noise_metrics(struct warnings *w, const char *file, const char *label,
                        const cJSON *floors)
{
    if (!cJSON_IsObject(floors))
        return;
    for (const cJSON *c = floors->child; c; c = c->next) {
        int found = 0;
        for (int m = 0; m < JUDGE_NMETRICS && !found; m++)
            found = c->string && strcmp(c->string, judge_metrics[m].name) == 0;
        if (!found)
            warn_add(w, "--noise %.200s%s%.120s%s: \"%.80s\" is no metric of the judgement: "
                        "ignored (prefill_tps, decode_tps, gpu_peak_mib, ...)",
                     file, label ? ", case \"" : "", label ? label : "", label ? "\"" : "",
                     c->string ? c->string : "");
    }
}
