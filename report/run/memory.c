/* memory.c: GPU and host memory peaks (memory.h). It must never mix the per-process and the
 * whole-device measure within one device, and never report a peak no reading gave. */
#include "memory.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double dev_value(const struct readings *r, const struct gpu_dev_mem *d, size_t k)
{
    return d->series < 0 ? NAN : r->s[d->series].v[k];
}

/* Sum over devices at reading k; NAN unless every device has a value there. */
static double gpu_sum(const struct memory *m, const struct readings *r, size_t k)
{
    double sum = 0;
    for (size_t i = 0; i < m->ndev; i++) {
        double v = dev_value(r, &m->dev[i], k);
        if (isnan(v))
            return NAN;
        sum += v;
    }
    return m->ndev ? sum : NAN;
}

int memory_build(const struct readings *r, struct memory *m)
{
    memset(m, 0, sizeof *m);
    m->rss_series = readings_find(r, SK_RSS, "");
    size_t ngpu = 0;
    for (size_t i = 0; i < r->ns; i++)
        ngpu += r->s[i].kind == SK_GPU_USED_MEM;
    m->dev = calloc(ngpu ? ngpu : 1, sizeof *m->dev);
    if (!m->dev)
        return -1;
    for (size_t i = 0; i < r->ns; i++) {
        if (r->s[i].kind != SK_GPU_USED_MEM)
            continue;
        struct gpu_dev_mem *d = &m->dev[m->ndev++];
        snprintf(d->key, sizeof d->key, "%s", r->s[i].key);
        int run = readings_find(r, SK_GPU_RUN_MEM, d->key);
        int listed = readings_find(r, SK_GPU_LISTED, d->key);
        int refused = 0;
        for (size_t k = 0; listed >= 0 && k < r->n; k++)
            refused |= r->s[listed].v[k] == 0.0;
        d->fallback = refused || run < 0 || r->s[run].nvalid == 0;
        d->series = d->fallback ? (int)i : run;
        m->any_fallback |= d->fallback;
        for (size_t k = 0; k < r->n; k++) {
            double v = dev_value(r, d, k);
            if (isnan(v))
                continue;
            if (!d->have)
                d->base = d->peak = v;
            d->peak = fmax(d->peak, v);
            d->have = 1;
        }
        if (d->have)
            m->max_device_above = fmax(m->max_device_above, d->peak - d->base);
    }
    for (size_t k = 0; k < r->n; k++) {
        double s = gpu_sum(m, r, k);
        if (isnan(s))
            continue;
        if (!m->have_gpu_total)
            m->total_base = m->total_peak = s;
        m->total_peak = fmax(m->total_peak, s);
        m->have_gpu_total = 1;
    }
    for (size_t k = 0; m->rss_series >= 0 && k < r->n; k++) {
        double v = r->s[m->rss_series].v[k];
        if (isnan(v))
            continue;
        m->host_peak_kib = m->have_host ? fmax(m->host_peak_kib, v) : v;
        m->have_host = 1;
    }
    return 0;
}

void memory_free(struct memory *m)
{
    free(m->dev);
    memset(m, 0, sizeof *m);
}

void memory_window(const struct memory *m, const struct readings *r, uint64_t t0, uint64_t t1,
                   double *gpu_above, int *have_gpu, double *host_kib, int *have_host, int *periodic_host)
{
    for (size_t k = readings_lower(r, t0); k < r->n && r->t[k] <= t1; k++) {
        double s = m->have_gpu_total ? gpu_sum(m, r, k) : NAN;
        if (!isnan(s)) {
            double above = s - m->total_base;
            *gpu_above = *have_gpu ? fmax(*gpu_above, above) : above;
            (*have_gpu)++;
        }
        double h = m->rss_series >= 0 ? r->s[m->rss_series].v[k] : NAN;
        if (!isnan(h)) {
            *host_kib = *have_host ? fmax(*host_kib, h) : h;
            (*have_host)++;
            *periodic_host += r->periodic[k] != 0;
        }
    }
}
