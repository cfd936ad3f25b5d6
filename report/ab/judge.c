/* judge.c: compare.py's judge, diff and render_diff in C (see judge.h). Every rule here is the
 * reference's, including its corners: a zero mean of A gives no ratio and a floor of only the
 * absolute floor; arms that touch are not separated; a run counts as dirty only when it is
 * usable. It must never judge on values the reference would not (dropped runs, None), never
 * round before comparing, and never reorder metrics or keys. */
#include "judge.h"
#include "jsondoc.h"
#include "pyfmt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const struct judge_metric judge_metrics[JUDGE_NMETRICS] = {
    {"prefill_tps", {"throughput", "prefill", "tokens_per_s", NULL}, +1, 0.003, 0.0},
    {"decode_tps", {"throughput", "decode", "tokens_per_s", NULL}, +1, 0.003, 0.0},
    {"gpu_peak_mib", {"memory", "gpu", "peak_above_baseline_total_mib", NULL}, -1, 0.002, 16.0},
    {"gpu_peak_max_device_mib", {"memory", "gpu", "peak_above_baseline_max_device_mib", NULL}, -1,
     0.002, 16.0},
    {"host_anon_peak_mib", {"memory", "host", "anon_peak_mib", NULL}, -1, 0.02, 64.0},
    {"load_s", {"groups", "load", "wall_s", NULL}, -1, 0.05, 0.5},
    {"prefill_j_per_token", {"energy", "prefill_j_per_token", NULL}, -1, 0.05, 0.0},
    {"decode_j_per_token", {"energy", "decode_j_per_token", NULL}, -1, 0.03, 0.0},
};

const char *judge_verdict_word(enum judge_verdict v)
{
    switch (v) {
    case JUDGE_SAME: return "same";
    case JUDGE_BETTER: return "better";
    case JUDGE_WORSE: return "worse";
    default: return "missing";
    }
}

/* Python's sum() of floats before 3.12: left to right from 0. Integers from JSON are exact in
 * a double, so a sum of integers is exact too, as Python's int sum is (below 2^53). */
static double py_sum(const double *v, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    return s;
}

static double *keep_present(const double *v, size_t n, size_t *kept)
{
    double *out = malloc((n ? n : 1) * sizeof *out);
    *kept = 0;
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (!isnan(v[i]))
            out[(*kept)++] = v[i];
    return out;
}

int judge_metric(int metric, const double *a, size_t na, const double *b, size_t nb,
                 double noise, struct judge_result *out)
{
    memset(out, 0, sizeof *out);
    out->verdict = JUDGE_MISSING;
    const struct judge_metric *m = &judge_metrics[metric];
    out->a_runs = keep_present(a, na, &out->na);
    out->b_runs = keep_present(b, nb, &out->nb);
    if (!out->a_runs || !out->b_runs) {
        free(out->a_runs);
        free(out->b_runs);
        memset(out, 0, sizeof *out);
        return -1;
    }
    if (out->na == 0 || out->nb == 0)
        return 0;
    double a_mean = py_sum(out->a_runs, out->na) / (double)out->na;
    double b_mean = py_sum(out->b_runs, out->nb) / (double)out->nb;
    double ratio = 0;
    out->has_ratio = a_mean != 0;
    if (out->has_ratio)
        ratio = b_mean / a_mean;
    /* floor = max(max(relative, noise) * |mean A|, absolute); Python's max keeps the first of
     * equals, which cannot change a comparison. */
    double rel = noise > m->rel_floor ? noise : m->rel_floor;
    double floor = rel * fabs(a_mean);
    if (m->abs_floor > floor)
        floor = m->abs_floor;
    double difference = (b_mean - a_mean) * (double)m->direction; /* positive: B is better */
    double a_min = out->a_runs[0], a_max = out->a_runs[0];
    double b_min = out->b_runs[0], b_max = out->b_runs[0];
    for (size_t i = 1; i < out->na; i++) {
        if (out->a_runs[i] < a_min) a_min = out->a_runs[i];
        if (out->a_runs[i] > a_max) a_max = out->a_runs[i];
    }
    for (size_t i = 1; i < out->nb; i++) {
        if (out->b_runs[i] < b_min) b_min = out->b_runs[i];
        if (out->b_runs[i] > b_max) b_max = out->b_runs[i];
    }
    int separated = b_min > a_max || b_max < a_min;
    out->verdict = JUDGE_SAME;
    if (fabs(difference) > floor && separated)
        out->verdict = difference > 0 ? JUDGE_BETTER : JUDGE_WORSE;
    out->a_mean = a_mean;
    out->b_mean = b_mean;
    out->a = py_round(a_mean, 4);
    out->b = py_round(b_mean, 4);
    out->ratio = out->has_ratio ? py_round(ratio, 4) : 0;
    return 0;
}

static const cJSON *metric_node(const cJSON *run, int metric)
{
    const cJSON *node = run;
    for (const char *const *k = judge_metrics[metric].path; *k; k++) {
        node = json_get(node, *k); /* NULL when node is not an object or has no such key */
        if (!node)
            return NULL;
    }
    return node;
}

double judge_value(const cJSON *run, int metric)
{
    const cJSON *v = metric_node(run, metric);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

int judge_usable(const cJSON *run)
{
    const cJSON *status = json_get(run, "status");
    return cJSON_IsString(status) && strcmp(status->valuestring, "ok") == 0 &&
           !json_truthy(json_get(run, "perturbed"));
}

/* (r.get("machine_before") or {"clean": True}).get("clean", True) is false. */
static int dirty(const cJSON *run)
{
    const cJSON *mb = json_get(run, "machine_before");
    if (!json_truthy(mb))
        return 0;
    const cJSON *clean = json_get(mb, "clean");
    return clean ? !json_truthy(clean) : 0;
}

int judge_check_run(const cJSON *run, char *err, size_t errlen)
{
    if (!cJSON_IsObject(run)) {
        snprintf(err, errlen, "not a JSON object (a run.json holds one object)");
        return -1;
    }
    if (!judge_usable(run))
        return 0; /* compare.py never reads anything else of a dropped run */
    const cJSON *mb = json_get(run, "machine_before");
    if (json_truthy(mb) && !cJSON_IsObject(mb)) {
        snprintf(err, errlen, "machine_before is neither an object nor empty");
        return -1;
    }
    for (int m = 0; m < JUDGE_NMETRICS; m++) {
        const cJSON *v = metric_node(run, m);
        if (v && !cJSON_IsNull(v) && !cJSON_IsNumber(v)) {
            char keys[256] = "";
            for (const char *const *k = judge_metrics[m].path; *k; k++)
                snprintf(keys + strlen(keys), sizeof keys - strlen(keys), "%s%s",
                         k == judge_metrics[m].path ? "" : ".", *k);
            snprintf(err, errlen, "%s is not a number", keys);
            return -1;
        }
    }
    return 0;
}

void diff_free(struct diff_result *d)
{
    for (int m = 0; m < JUDGE_NMETRICS; m++) {
        free(d->metrics[m].a_runs);
        free(d->metrics[m].b_runs);
    }
    memset(d, 0, sizeof *d);
}

int judge_diff(const cJSON *const *runs_a, size_t na, const cJSON *const *runs_b, size_t nb,
               const double *noise, struct diff_result *out)
{
    memset(out, 0, sizeof *out);
    const cJSON **ua = malloc((na ? na : 1) * sizeof *ua);
    const cJSON **ub = malloc((nb ? nb : 1) * sizeof *ub);
    double *va = malloc((na ? na : 1) * sizeof *va);
    double *vb = malloc((nb ? nb : 1) * sizeof *vb);
    int rc = -1;
    if (!ua || !ub || !va || !vb)
        goto done;
    for (size_t i = 0; i < na; i++)
        if (judge_usable(runs_a[i]))
            ua[out->usable_a++] = runs_a[i];
    for (size_t i = 0; i < nb; i++)
        if (judge_usable(runs_b[i]))
            ub[out->usable_b++] = runs_b[i];
    out->dropped_runs = (na - out->usable_a) + (nb - out->usable_b);
    for (size_t i = 0; i < out->usable_a; i++)
        out->dirty_runs += (size_t)dirty(ua[i]);
    for (size_t i = 0; i < out->usable_b; i++)
        out->dirty_runs += (size_t)dirty(ub[i]);
    int worse = 0, better = 0;
    for (int m = 0; m < JUDGE_NMETRICS; m++) {
        for (size_t i = 0; i < out->usable_a; i++)
            va[i] = judge_value(ua[i], m);
        for (size_t i = 0; i < out->usable_b; i++)
            vb[i] = judge_value(ub[i], m);
        if (judge_metric(m, va, out->usable_a, vb, out->usable_b, noise ? noise[m] : 0.0,
                         &out->metrics[m]) != 0) {
            diff_free(out);
            goto done;
        }
        worse += out->metrics[m].verdict == JUDGE_WORSE;
        better += out->metrics[m].verdict == JUDGE_BETTER;
    }
    if (worse && better)
        out->verdict = "tradeoff";
    else
        out->verdict = worse ? "regression" : better ? "improvement" : "neutral";
    rc = 0;
done:
    free(ua);
    free(ub);
    free(va);
    free(vb);
    return rc;
}

static cJSON *number_array(const double *v, size_t n)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; arr && i < n; i++) {
        cJSON *x = json_number(v[i]);
        if (!x || !cJSON_AddItemToArray(arr, x)) {
            cJSON_Delete(x);
            cJSON_Delete(arr);
            return NULL;
        }
    }
    return arr;
}

static int add(cJSON *obj, const char *key, cJSON *item)
{
    if (!item)
        return -1;
    if (!cJSON_AddItemToObject(obj, key, item)) {
        cJSON_Delete(item);
        return -1;
    }
    return 0;
}

cJSON *diff_to_json(const struct diff_result *d)
{
    cJSON *out = cJSON_CreateObject();
    cJSON *metrics = cJSON_CreateObject();
    cJSON *worse = cJSON_CreateArray(), *better = cJSON_CreateArray();
    int bad = !out || add(out, "metrics", metrics) != 0;
    for (int m = 0; !bad && m < JUDGE_NMETRICS; m++) {
        const struct judge_result *r = &d->metrics[m];
        if (r->verdict == JUDGE_MISSING)
            continue;
        cJSON *o = cJSON_CreateObject();
        bad |= add(metrics, judge_metrics[m].name, o);
        if (bad)
            break;
        bad |= add(o, "a", json_number(r->a));
        bad |= add(o, "b", json_number(r->b));
        bad |= add(o, "ratio", r->has_ratio ? json_number(r->ratio) : cJSON_CreateNull());
        bad |= add(o, "verdict", cJSON_CreateString(judge_verdict_word(r->verdict)));
        bad |= add(o, "a_runs", number_array(r->a_runs, r->na));
        bad |= add(o, "b_runs", number_array(r->b_runs, r->nb));
        if (r->verdict == JUDGE_WORSE)
            bad |= !cJSON_AddItemToArray(worse, cJSON_CreateString(judge_metrics[m].name));
        if (r->verdict == JUDGE_BETTER)
            bad |= !cJSON_AddItemToArray(better, cJSON_CreateString(judge_metrics[m].name));
    }
    if (!bad)
        bad |= add(out, "dropped_runs", json_number((double)d->dropped_runs));
    if (!bad && d->dirty_runs)
        bad |= add(out, "dirty_runs", json_number((double)d->dirty_runs));
    if (!bad) {
        bad |= add(out, "worse", worse);
        worse = NULL;
        bad |= add(out, "better", better);
        better = NULL;
        bad |= add(out, "verdict", cJSON_CreateString(d->verdict));
    }
    cJSON_Delete(worse);
    cJSON_Delete(better);
    if (bad) {
        cJSON_Delete(out);
        return NULL;
    }
    return out;
}

void render_diff(FILE *f, const struct diff_result *d, const char *a_label, const char *b_label)
{
    fprintf(f, "| metric | %s | %s | ratio | |\n|---|---:|---:|---:|---|\n", a_label, b_label);
    for (int m = 0; m < JUDGE_NMETRICS; m++) {
        const struct judge_result *r = &d->metrics[m];
        if (r->verdict == JUDGE_MISSING)
            continue;
        char a[PYFMT_BUF + 32], b[PYFMT_BUF + 32], ratio[PYFMT_BUF];
        const char *mark = r->verdict == JUDGE_BETTER ? "better"
                           : r->verdict == JUDGE_WORSE ? "**worse**" : "";
        if (r->has_ratio)
            py_repr(r->ratio, ratio, sizeof ratio);
        else
            snprintf(ratio, sizeof ratio, "None");
        fprintf(f, "| %s | %s | %s | %s | %s |\n", judge_metrics[m].name,
                py_format_comma(r->a, a, sizeof a), py_format_comma(r->b, b, sizeof b), ratio, mark);
    }
    fprintf(f, "\nVerdict: **%s**\n", d->verdict);
    if (d->dropped_runs)
        fprintf(f, "%zu failed or traced runs were left out.\n", d->dropped_runs);
    if (d->dirty_runs)
        fprintf(f, "%zu runs started on a machine that was not clean.\n", d->dirty_runs);
}
