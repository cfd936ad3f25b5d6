/* sym_target TRUTH DL_LIB STRIPPED_LIB: burns known CPU in known functions, phase by phase, for
 * the symbolizer's end-to-end test (tests/t_symbolize.sh). Phases are marked through the
 * perfscope API (a no-op without the shim). Each function's CPU time is measured around its call
 * (the calling thread's CPU clock) and written to TRUTH as JSON:
 *   {"phases": {"compute": {"c_plain": s, "hot_inline": s, "tmpl_burn<int>": s}, ...}}
 *
 *   compute  c_plain 0.20 s; inline_outer 0.15 s, whose loop is the always_inline hot_inline
 *            (samples land in hot_inline's inlined code); tmpl_burn<int> 0.15 s
 *   libs     dl_burn 0.15 s from DL_LIB (dlopen'd); 0.15 s in a static function of the stripped
 *            STRIPPED_LIB (entered through its only exported symbol, stripped_entry); tmpl_burn<double> 0.10 s
 *   threads  two threads, each c_worker 0.20 s
 * Lines marked "@sym:<tag>" are found by the test with grep: keep the markers on their lines. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "perfscope.h"

extern "C" {
#include "sym_burn.h"
SYM_BURN(c_plain)
SYM_BURN(c_worker)
}

static volatile uint64_t sink;

static inline __attribute__((always_inline)) uint64_t hot_inline(uint64_t x) /* @sym:hot_inline_decl */
{
    for (int i = 0; i < SYM_SPIN; i++) {                   /* @sym:hot_begin */
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        __asm__ volatile("" : "+r"(x));
    }                                                      /* @sym:hot_end */
    return x;
}

extern "C" __attribute__((noinline)) uint64_t inline_outer(double seconds)
{
    uint64_t until = sym_thread_cpu_ns() + (uint64_t)(seconds * 1e9), x = 1;
    while (sym_thread_cpu_ns() < until)
        x = hot_inline(x);
    sink += x;
    return x;
}

template <typename T> __attribute__((noinline)) uint64_t tmpl_burn(double seconds)
{
    uint64_t until = sym_thread_cpu_ns() + (uint64_t)(seconds * 1e9);
    T x = (T)1;
    for (;;) {
        for (int i = 0; i < SYM_SPIN / 4; i++) { /* through memory: about 4 times slower */
            x = x * (T)3 + (T)1;
            __asm__ volatile("" : "+m"(x));
        }
        if (sym_thread_cpu_ns() >= until)
            break;
    }
    sink += (uint64_t)x;
    return (uint64_t)x;
}

static double timed(uint64_t (*fn)(double), double s)
{
    uint64_t t0 = sym_thread_cpu_ns();
    fn(s);
    return (double)(sym_thread_cpu_ns() - t0) * 1e-9;
}

static void *worker(void *arg)
{
    *(double *)arg = timed(c_worker, 0.20);
    return NULL;
}

static void *must_dlsym(void *h, const char *name)
{
    void *p = dlsym(h, name);
    if (!p) {
        fprintf(stderr, "dlsym %s: %s\n", name, dlerror());
        exit(1);
    }
    return p;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: sym_target TRUTH DL_LIB STRIPPED_LIB\n");
        return 2;
    }
    double plain, inl, tint, dl, strip, tdbl, w[2];

    perfscope_begin("compute");
    plain = timed(c_plain, 0.20);
    inl = timed(inline_outer, 0.15);
    tint = timed(tmpl_burn<int>, 0.15);
    perfscope_end("compute", 3);

    void *hd = dlopen(argv[2], RTLD_NOW);
    if (!hd) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    void *hs = dlopen(argv[3], RTLD_NOW);
    if (!hs) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    uint64_t (*dl_burn)(double) = (uint64_t(*)(double))must_dlsym(hd, "dl_burn");
    uint64_t (*stripped_entry)(double) = (uint64_t(*)(double))must_dlsym(hs, "stripped_entry");
    perfscope_begin("libs");
    dl = timed(dl_burn, 0.15);
    strip = timed(stripped_entry, 0.15);
    tdbl = timed(tmpl_burn<double>, 0.10);
    perfscope_end("libs", -1);

    perfscope_begin("threads");
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, &w[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    perfscope_end("threads", -1);

    FILE *f = fopen(argv[1], "w");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    fprintf(f, "{\"phases\": {\"compute\": {\"c_plain\": %.6f, \"hot_inline\": %.6f, \"tmpl_burn<int>\": %.6f},"
               " \"libs\": {\"dl_burn\": %.6f, \"stripped\": %.6f, \"tmpl_burn<double>\": %.6f},"
               " \"threads\": {\"c_worker\": %.6f}},"
               " \"addr\": {\"stripped_entry\": \"%p\", \"dl_burn\": \"%p\"}}\n",
            plain, inl, tint, dl, strip, tdbl, w[0] + w[1], (void *)stripped_entry, (void *)dl_burn);
    fclose(f);
    return 0;
}
