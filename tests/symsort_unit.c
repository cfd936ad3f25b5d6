/* symsort_unit.c: symbolize/symsort.c's radix sort against qsort with the one comparator
 * (sym_order), on random symbol tables: sizes 0 to 50,000; starts in a module's few low bytes
 * above a large bias, across all 64 bits, and all alike; aliases sharing a start with every
 * rank and repeated names. The result must hold the same symbols in exactly sym_order's order.
 * Prints one line per failure and "ok N cases"; exit 1 on any failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symsort.h"

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static const char *names[] = {"a", "b", "main", "memcpy", "__memcpy_avx", "_Z3foov", "z", ""};

static int by_order(const void *a, const void *b)
{
    return sym_order(a, b);
}

static int one(size_t n, int kind, int alias_pct)
{
    struct dw_sym *v = malloc((n ? n : 1) * sizeof *v), *w = malloc((n ? n : 1) * sizeof *w);
    if (!v || !w)
        return 1;
    for (size_t i = 0; i < n; i++) {
        uint64_t s;
        switch (kind) {
        case 0: s = 0x7f0000000000ULL + (next() & 0xffffff); break;   /* a module above its bias */
        case 1: s = next(); break;                                    /* any 64 bits */
        default: s = 0x401000; break;                                 /* all alike */
        }
        if (i > 0 && (int)(next() % 100) < alias_pct)
            s = v[next() % i].start;                                  /* an alias of an earlier one */
        v[i] = (struct dw_sym){s, next() % 4096, names[next() % 8], (int)(next() % 3)};
    }
    memcpy(w, v, n * sizeof *v);
    sym_sort(v, n);
    qsort(w, n, sizeof *w, by_order);
    int bad = 0;
    for (size_t i = 0; i < n && !bad; i++) {
        if (i > 0 && sym_order(&v[i - 1], &v[i]) > 0) {
            printf("FAIL: n %zu kind %d aliases %d%%: out of order at %zu\n", n, kind, alias_pct, i);
            bad = 1;
        } else if (sym_order(&v[i], &w[i]) != 0) {
            printf("FAIL: n %zu kind %d aliases %d%%: at %zu %llx/%d/%s, qsort has %llx/%d/%s\n", n,
                   kind, alias_pct, i, (unsigned long long)v[i].start, v[i].rank, v[i].name,
                   (unsigned long long)w[i].start, w[i].rank, w[i].name);
            bad = 1;
        }
    }
    /* The same symbols: sizes summed per key match (qsort is not stable, so compare sums). */
    unsigned long long sv = 0, sw = 0;
    for (size_t i = 0; i < n; i++) {
        sv += v[i].size * (v[i].start | 1);
        sw += w[i].size * (w[i].start | 1);
    }
    if (!bad && sv != sw) {
        printf("FAIL: n %zu kind %d: not the same symbols\n", n, kind);
        bad = 1;
    }
    free(v);
    free(w);
    return bad;
}

int main(void)
{
    static const size_t sizes[] = {0, 1, 2, 3, 17, 256, 257, 1000, 6817, 50000};
    static const int aliases[] = {0, 5, 50, 100};
    int fails = 0, cases = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (int kind = 0; kind < 3; kind++)
            for (size_t a = 0; a < sizeof aliases / sizeof *aliases; a++, cases++)
                fails += one(sizes[s], kind, aliases[a]);
    if (fails) {
        printf("%d of %d cases failed\n", fails, cases);
        return 1;
    }
    printf("ok %d cases\n", cases);
    return 0;
}
