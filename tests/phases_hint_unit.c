/* phases_hint_unit DIR: format/phases.c's phases_at_hint (the innermost phase at a time, from
 * the span the last call found) against a plain scan of the spans, on a phases.jsonl with
 * nested, repeated and back-to-back phases written into DIR: times in order, in order with
 * repeats, jumping back, before the first boundary and after the last, one hint carried through
 * all of them; hints out of range, and no spans at all. Prints one line per failure and "ok N times"; exit 1 on any failure. */
#include <stdio.h>
#include <stdlib.h>

#include "phases.h"

static int scan(const struct phases *p, uint64_t t)
{
    size_t k = 0;
    while (k < p->nspans && p->spans[k].start_ns <= t)
        k++;
    return k ? p->spans[k - 1].phase : -1;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/phases.jsonl", argv[1]);
    FILE *f = fopen(path, "w");
    if (!f)
        return 2;
    static const char *const lines[] = {
        "load begin", "load end", "prefill begin", "inner begin", "inner end", "prefill end",
        "decode begin", "decode end", "decode begin", "x begin", "decode end", "x end", "idle begin"};
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        char name[32], ev[16];
        sscanf(lines[i], "%31s %15s", name, ev);
        fprintf(f, "{\"t_ns\":%zu,\"name\":\"%s\",\"event\":\"%s\",\"t_from\":\"marker\"}\n",
                1000 + 100 * i, name, ev);
    }
    fclose(f);
    struct phases *p;
    if (phases_load(path, &p, err, sizeof err) != 0) {
        printf("FAIL: %s\n", err);
        return 1;
    }
    phases_close_open(p, 5000);
    int fails = 0, n = 0;
    size_t hint = 0;
    uint64_t t = 0;
    srand(7);
    for (int i = 0; i < 20000; i++, n++) {
        switch (rand() % 10) {
        case 0: t = (uint64_t)(rand() % 3000); break;     /* anywhere, back or forth */
        case 1: break;                                    /* the same time again */
        default: t += (uint64_t)(rand() % 40); break;     /* on, in order */
        }
        if (t > 4000)
            t = (uint64_t)(rand() % 900);
        int got = phases_at_hint(p, t, &hint), want = scan(p, t);
        if (got != want || phases_at(p, t) != want) {
            if (fails++ < 10)
                printf("FAIL: t %llu: hinted %d, fresh %d, scan %d\n", (unsigned long long)t, got,
                       phases_at(p, t), want);
        }
    }
    /* A hint out of range (a caller's stale or garbage one) and no spans at all. */
    const size_t bad_hints[] = {p->nspans, p->nspans + 1, p->nspans + 100, (size_t)-1};
    for (size_t i = 0; i < sizeof bad_hints / sizeof *bad_hints; i++)
        for (uint64_t t = 0; t < 5000; t += 37, n++) {
            size_t h = bad_hints[i];
            if (phases_at_hint(p, t, &h) != scan(p, t) && fails++ < 10)
                printf("FAIL: hint %zu, t %llu\n", bad_hints[i], (unsigned long long)t);
        }
    struct phases none = {0};
    for (size_t h = 0; h < 3; h++, n++) {
        size_t hh = h == 2 ? (size_t)-1 : h;
        if (phases_at_hint(&none, 1234, &hh) != -1 && fails++ < 10)
            printf("FAIL: no spans, hint %zu\n", h);
    }
    phases_free(p);
    if (fails) {
        printf("%d of %d times wrong\n", fails, n);
        return 1;
    }
    printf("ok %d times\n", n);
    return 0;
}
