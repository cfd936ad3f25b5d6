/* t_malloc_storm [ITERS]: 8 threads allocate, fill, check and free blocks of pseudo-random
 * sizes (malloc, calloc, realloc, free) from a fixed seed each; every thread's checksum and the
 * total go to stdout, in thread order, so the output is the same on every run. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 8
#define SLOTS 64

static long iters = 60000;

struct job {
    int id;
    uint64_t sum;
    int bad;
};

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void *storm(void *arg)
{
    struct job *j = arg;
    char name[16];
    snprintf(name, sizeof name, "storm-%d", j->id);
    pthread_setname_np(pthread_self(), name);
    uint64_t s = 0x9E3779B97F4A7C15ull * (uint64_t)(j->id + 1);
    unsigned char *slot[SLOTS] = {0};
    size_t len[SLOTS] = {0};
    for (long i = 0; i < iters; i++) {
        int k = (int)(next(&s) % SLOTS);
        if (slot[k]) {
            for (size_t b = 0; b < len[k]; b += 61)
                if (slot[k][b] != (unsigned char)(len[k] + b))
                    j->bad++;
            j->sum = j->sum * 31 + len[k];
            if (next(&s) % 4 == 0) {
                size_t n = 1 + next(&s) % 8192;
                unsigned char *p = realloc(slot[k], n);
                if (!p) {
                    j->bad++;
                    continue;
                }
                slot[k] = p;
                len[k] = n;
                for (size_t b = 0; b < n; b += 61)
                    p[b] = (unsigned char)(n + b);
                continue;
            }
            free(slot[k]);
            slot[k] = NULL;
        }
        size_t n = 1 + next(&s) % (next(&s) % 16 == 0 ? 200000 : 4096);
        unsigned char *p = (next(&s) & 1) ? malloc(n) : calloc(1, n);
        if (!p) {
            j->bad++;
            continue;
        }
        for (size_t b = 0; b < n; b += 61)
            p[b] = (unsigned char)(n + b);
        slot[k] = p;
        len[k] = n;
    }
    for (int k = 0; k < SLOTS; k++)
        free(slot[k]);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        iters = atol(argv[1]);
    pthread_t th[THREADS];
    struct job jobs[THREADS];
    for (int i = 0; i < THREADS; i++) {
        jobs[i] = (struct job){i, 0, 0};
        if (pthread_create(&th[i], NULL, storm, &jobs[i]) != 0) {
            perror("pthread_create");
            return 1;
        }
    }
    uint64_t total = 0;
    int bad = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        printf("thread %d checksum %016llx\n", i, (unsigned long long)jobs[i].sum);
        total ^= jobs[i].sum;
        bad += jobs[i].bad;
    }
    printf("total %016llx bad %d\n", (unsigned long long)total, bad);
    return bad != 0;
}
