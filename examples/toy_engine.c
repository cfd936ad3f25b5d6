/* toy_engine.c: a toy inference engine for trying perfscope: it "loads weights" (fills ~80 MB
 * of matrices), runs prefill as a batched matrix product on named worker threads, then decode
 * as token-by-token matrix-vector products on other named threads, and marks its phases through
 * include/perfscope.h (no-ops without the shim). What a user copies from: it must stay
 * deterministic (same arguments, same stdout, whatever the thread count) and must never depend
 * on the shim being loaded.
 *
 *   toy-engine [--threads N] [--prompt N] [--gen N] [--scale F] [--no-api] [--progress]
 *
 * --scale multiplies weight memory and work (the model width goes with its square root);
 * --no-api leaves phase marking to an outside script (examples/drive.py); --progress prints
 * "stage <name> begin|end t=<CLOCK_MONOTONIC ns> [tokens=N]" lines on stderr for such a script.
 * stdout gets one line: the checksum of the hidden states and the generated tokens. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np: the Makefile defines it, a bare cc line may not */
#endif
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perfscope.h"

#define LAYERS 16
#define VOCAB 4096
#define MAX_THREADS 64
#define BLOCK 64 /* weight rows per block: 64 rows of 1024 floats stay in L2 */

struct model {
    int dim;
    float *w[LAYERS]; /* dim x dim each, row-major: out[j] = sum_k w[j][k] * in[k] */
    float *embed;     /* VOCAB x dim */
};

struct options {
    int threads, prompt, gen, no_api, progress;
    double scale;
};

static struct options opt = {.threads = 2, .prompt = 128, .gen = 32, .scale = 1.0};

/* ---- phase marking: the API, or progress lines for a driving script, or both ---- */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void stage_begin(const char *name)
{
    if (!opt.no_api)
        perfscope_begin(name);
    if (opt.progress) {
        fprintf(stderr, "stage %s begin t=%llu\n", name, (unsigned long long)now_ns());
        fflush(stderr);
    }
}

static void stage_end(const char *name, long long tokens)
{
    uint64_t t = now_ns(); /* before the API call, so the script's boundary matches ours */
    if (!opt.no_api)
        perfscope_end(name, tokens);
    if (opt.progress) {
        if (tokens >= 0)
            fprintf(stderr, "stage %s end t=%llu tokens=%lld\n", name, (unsigned long long)t,
                    tokens);
        else
            fprintf(stderr, "stage %s end t=%llu\n", name, (unsigned long long)t);
        fflush(stderr);
    }
}

/* ---- weights ---- */

/* A fixed pseudo-random stream (xorshift64*), so every run computes the same numbers. */
static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

static float rand_weight(uint64_t *s, float amplitude)
{
    return amplitude * ((float)(next_rand(s) >> 40) / (float)(1 << 24) * 2.0f - 1.0f);
}

static int load_weights(struct model *m)
{
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    size_t n = (size_t)m->dim * (size_t)m->dim;
    /* Uniform in +-sqrt(3/dim) keeps each layer's output on the scale of its input. */
    float amp = sqrtf(3.0f / (float)m->dim);
    for (int l = 0; l < LAYERS; l++) {
        m->w[l] = malloc(n * sizeof(float));
        if (!m->w[l])
            return -1;
        for (size_t i = 0; i < n; i++)
            m->w[l][i] = rand_weight(&seed, amp);
    }
    m->embed = malloc((size_t)VOCAB * (size_t)m->dim * sizeof(float));
    if (!m->embed)
        return -1;
    for (size_t i = 0; i < (size_t)VOCAB * (size_t)m->dim; i++)
        m->embed[i] = rand_weight(&seed, 1.0f);
    return 0;
}

/* ---- the work: each output element is computed by one thread in a fixed order, so results
 * do not depend on the thread count ---- */

static float dot(const float *a, const float *b, int n)
{
    float s = 0;
    for (int k = 0; k < n; k++)
        s += a[k] * b[k];
    return s;
}

/* tanh keeps values bounded across layers, like a real activation would. */
static void layer_rows(const struct model *m, int l, const float *in, float *out, int rows,
                       int j0, int j1)
{
    int d = m->dim;
    for (int jb = j0; jb < j1; jb += BLOCK) {
        int je = jb + BLOCK < j1 ? jb + BLOCK : j1;
        for (int i = 0; i < rows; i++)
            for (int j = jb; j < je; j++)
                out[(size_t)i * d + j] = tanhf(dot(&m->w[l][(size_t)j * d], &in[(size_t)i * d], d));
    }
}

/* The decode step's normalization statistics over one thread's slice of the activations. Their
 * result is only observed, never used, so the output is the same whatever TOY_NORM_REPS is: the
 * worked example of docs/diff.md builds a B with more repetitions (a slower kernel) and lets
 * `perfscope diff --profiles` find it (examples/fdiff_example.sh). */
#ifndef TOY_NORM_REPS
#define TOY_NORM_REPS 1
#endif
static volatile float norm_sink;

__attribute__((noinline)) static void decode_norm(const float *y, int j0, int j1)
{
    float s = 0;
    for (int r = 0; r < TOY_NORM_REPS; r++)
        for (int j = j0; j < j1; j++)
            s += y[j] * y[j] * (1.0f + (float)r * 1e-7f);
    norm_sink = s;
}

struct pool {
    const struct model *m;
    pthread_barrier_t barrier;
    float *x, *y;  /* rows x dim activations, swapped after each layer */
    int rows;      /* tokens in flight: the prompt for prefill, 1 for decode */
    int steps;     /* decode tokens to generate; 0 for prefill */
    int *tokens;   /* generated token ids (decode) */
    int nthreads;
};

struct worker {
    struct pool *pool;
    int index;
    const char *role;
};

static int argmax(const float *v, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (v[i] > v[best])
            best = i;
    return best;
}

/* Runs all layers on the pool's rows; each thread owns a slice of output columns. */
static void forward(struct pool *p, int index)
{
    int d = p->m->dim;
    int j0 = (int)((long)d * index / p->nthreads), j1 = (int)((long)d * (index + 1) / p->nthreads);
    for (int l = 0; l < LAYERS; l++) {
        layer_rows(p->m, l, p->x, p->y, p->rows, j0, j1);
        if (p->steps > 0)
            decode_norm(p->y, j0, j1);
        pthread_barrier_wait(&p->barrier);
        if (index == 0) {
            float *t = p->x;
            p->x = p->y;
            p->y = t;
        }
        pthread_barrier_wait(&p->barrier);
    }
}

/* The next token's embedding: the last row's argmax over the first VOCAB features, folded. */
static void next_input(struct pool *p, int step)
{
    int d = p->m->dim;
    const float *last = &p->x[(size_t)(p->rows - 1) * d];
    int token = (argmax(last, d) * 31 + step) % VOCAB;
    p->tokens[step] = token;
    memcpy(p->x, &p->m->embed[(size_t)token * d], (size_t)d * sizeof(float));
}

static void *run_worker(void *arg)
{
    struct worker *w = arg;
    struct pool *p = w->pool;
    char name[16];
    snprintf(name, sizeof name, "%s-%d", w->role, w->index);
    pthread_setname_np(pthread_self(), name);
    if (p->steps == 0) {
        forward(p, w->index);
        return NULL;
    }
    for (int step = 0; step < p->steps; step++) {
        forward(p, w->index);
        if (w->index == 0)
            next_input(p, step);
        pthread_barrier_wait(&p->barrier);
    }
    return NULL;
}

static void run_pool(struct pool *p, const char *role)
{
    pthread_t tid[MAX_THREADS];
    struct worker w[MAX_THREADS];
    pthread_barrier_init(&p->barrier, NULL, (unsigned)p->nthreads);
    for (int i = 0; i < p->nthreads; i++) {
        w[i] = (struct worker){.pool = p, .index = i, .role = role};
        if (pthread_create(&tid[i], NULL, run_worker, &w[i]) != 0) {
            /* The barrier would wait forever for the missing thread: give up at once. */
            fprintf(stderr, "toy-engine: cannot start %d %s threads\n", p->nthreads, role);
            exit(1);
        }
    }
    for (int i = 0; i < p->nthreads; i++)
        pthread_join(tid[i], NULL);
    pthread_barrier_destroy(&p->barrier);
}

/* ---- command line ---- */

static int parse_int(const char *s, int lo, int hi, int *v)
{
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (errno || end == s || *end || x < lo || x > hi)
        return -1;
    *v = (int)x;
    return 0;
}

static int parse_args(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--no-api") == 0) {
            opt.no_api = 1;
        } else if (strcmp(a, "--progress") == 0) {
            opt.progress = 1;
        } else if (v && strcmp(a, "--threads") == 0) {
            if (parse_int(v, 1, MAX_THREADS, &opt.threads))
                return -1;
            i++;
        } else if (v && strcmp(a, "--prompt") == 0) {
            if (parse_int(v, 1, 1 << 16, &opt.prompt))
                return -1;
            i++;
        } else if (v && strcmp(a, "--gen") == 0) {
            if (parse_int(v, 0, 1 << 20, &opt.gen))
                return -1;
            i++;
        } else if (v && strcmp(a, "--scale") == 0) {
            char *end;
            opt.scale = strtod(v, &end);
            if (end == v || *end || !(opt.scale >= 0.001 && opt.scale <= 16))
                return -1;
            i++;
        } else {
            return -1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (parse_args(argc, argv) != 0) {
        fprintf(stderr, "usage: toy-engine [--threads 1..%d] [--prompt N] [--gen N] "
                        "[--scale 0.001..16] [--no-api] [--progress]\n", MAX_THREADS);
        return 2;
    }
    struct model m = {0};
    /* Width a multiple of 16, at least 16: 1024 at scale 1 (64 MB of layers, 16 MB embed). */
    m.dim = (int)(1024.0 * sqrt(opt.scale) / 16.0 + 0.5) * 16;
    if (m.dim < 16)
        m.dim = 16;

    stage_begin("load");
    if (load_weights(&m) != 0) {
        fprintf(stderr, "toy-engine: out of memory for the weights\n");
        return 1;
    }
    stage_end("load", -1);

    int rows = opt.prompt;
    float *x = malloc((size_t)rows * m.dim * sizeof(float));
    float *y = malloc((size_t)rows * m.dim * sizeof(float));
    int *tokens = calloc((size_t)opt.gen + 1, sizeof(int));
    if (!x || !y || !tokens) {
        fprintf(stderr, "toy-engine: out of memory for the activations\n");
        return 1;
    }
    uint64_t seed = 42;
    for (int i = 0; i < rows; i++) {
        int token = (int)(next_rand(&seed) % VOCAB);
        memcpy(&x[(size_t)i * m.dim], &m.embed[(size_t)token * m.dim], m.dim * sizeof(float));
    }

    stage_begin("prefill");
    struct pool p = {.m = &m, .x = x, .y = y, .rows = rows, .nthreads = opt.threads,
                     .tokens = tokens};
    run_pool(&p, "prefill");
    stage_end("prefill", opt.prompt);

    /* Checksum of the prompt's final hidden states, in a fixed order. */
    double checksum = 0;
    for (size_t i = 0; i < (size_t)rows * m.dim; i++)
        checksum += p.x[i] * (double)((i % 7) + 1);

    if (opt.gen > 0) {
        /* Decode starts from the prompt's last row, moved to row 0. */
        memmove(p.x, &p.x[(size_t)(rows - 1) * m.dim], m.dim * sizeof(float));
        p.rows = 1;
        next_input(&p, 0);
        stage_begin("decode");
        /* Step 0's token came from prefill; decode produces steps 1..gen. */
        p.tokens = tokens + 1;
        p.steps = opt.gen;
        run_pool(&p, "decode");
        stage_end("decode", opt.gen);
    }

    uint64_t token_hash = 1469598103934665603ull;
    for (int i = 0; i <= opt.gen; i++)
        token_hash = (token_hash ^ (uint64_t)tokens[i]) * 1099511628211ull;
    printf("toy-engine: dim=%d layers=%d prompt=%d gen=%d checksum=%.6f tokens=%016llx\n", m.dim,
           LAYERS, opt.prompt, opt.gen, checksum, (unsigned long long)token_hash);

    for (int l = 0; l < LAYERS; l++)
        free(m.w[l]);
    free(m.embed);
    free(p.x);
    free(p.y);
    free(tokens);
    return 0;
}
