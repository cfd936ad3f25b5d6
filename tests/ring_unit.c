/* tests/ring_unit.c: drives preload/ring.c (built from the shim's source) for t_shim_ring.
 * Single-threaded: a ring fills to exactly its slot count, a full ring refuses (the handler
 * drops and counts), and frees a slot the moment the consumer releases one even though the
 * producer last read the tail when it was full; records come out in order with their contents
 * across many wraps. Two threads: a producer racing a consumer over a small ring, every record
 * seen once, in order, never torn, none lost but those refused. The registry: per-thread
 * counters added with thread_count are summed by threads_sample_totals, an exited thread's
 * slot reused by a new thread keeps what it counted. Prints one "FAIL ..." line per broken rule
 * and exits 1, else "ok N" (the checks run). It must never test timing. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"
#include "unitcheck.h"


#define FRAMES 4

static void fill(struct ps_slot_rec *r, uint64_t seq)
{
    r->time_ns = seq;
    r->tid = (uint32_t)seq;
    r->nframes = FRAMES;
    for (int i = 0; i < FRAMES; i++)
        r->frames[i] = seq * 10 + (uint64_t)i;
}

static int intact(const struct ps_slot_rec *r, uint64_t seq)
{
    if (r->time_ns != seq || r->tid != (uint32_t)seq || r->nframes != FRAMES)
        return 0;
    for (int i = 0; i < FRAMES; i++)
        if (r->frames[i] != seq * 10 + (uint64_t)i)
            return 0;
    return 1;
}

static void single(void)
{
    struct ps_ring *r = ring_new(8, FRAMES);
    CHECK(r != NULL, "ring_new(8) failed");
    if (!r)
        return;
    uint64_t put = 0, got = 0;
    for (int i = 0; i < 8; i++) {
        struct ps_slot_rec *s = ring_reserve(r);
        CHECK(s != NULL, "slot %d of 8 refused in an empty ring", i);
        if (!s)
            return;
        fill(s, put++);
        ring_commit(r);
    }
    CHECK(ring_reserve(r) == NULL, "a ninth slot given in a full ring of 8");
    CHECK(ring_reserve(r) == NULL, "a full ring asked again gave a slot");
    struct ps_slot_rec *c = ring_peek(r);
    CHECK(c && intact(c, got), "the oldest record is not the first one put");
    ring_release(r);
    got++;
    struct ps_slot_rec *s = ring_reserve(r);
    CHECK(s != NULL, "no slot after the consumer released one (the producer's tail was read when full)");
    if (s) {
        fill(s, put++);
        ring_commit(r);
    }
    CHECK(ring_reserve(r) == NULL, "full again after one put, yet a slot given");
    /* many wraps: consume 3, produce until refused, check order and contents */
    for (int round = 0; round < 1000; round++) {
        for (int k = 0; k < 3; k++) {
            c = ring_peek(r);
            if (!c || !intact(c, got)) {
                CHECK(0, "round %d: record %llu missing or wrong", round, (unsigned long long)got);
                return;
            }
            ring_release(r);
            got++;
        }
        int n = 0;
        while ((s = ring_reserve(r)) != NULL) {
            fill(s, put++);
            ring_commit(r);
            n++;
        }
        if (n != 3) {
            CHECK(0, "round %d: %d slots freed by 3 releases", round, n);
            return;
        }
    }
    while ((c = ring_peek(r)) != NULL) {
        if (!intact(c, got)) {
            CHECK(0, "drain: record %llu wrong", (unsigned long long)got);
            return;
        }
        ring_release(r);
        got++;
    }
    CHECK(got == put, "put %llu, got %llu", (unsigned long long)put, (unsigned long long)got);
    ring_free(r);
}

#define RACE_N 2000000
static struct ps_ring *race_ring;
static _Atomic int race_done;
static uint64_t race_refused, race_bad, race_got;

static void *consumer(void *arg)
{
    (void)arg;
    uint64_t want = 0;
    for (;;) {
        struct ps_slot_rec *c = ring_peek(race_ring);
        if (!c) {
            if (atomic_load(&race_done) && !ring_peek(race_ring))
                break;
            continue;
        }
        /* records refused by a full ring are skipped by the producer's count: sequence
         * numbers only increase */
        if (c->time_ns < want || !intact(c, c->time_ns))
            race_bad++;
        want = c->time_ns + 1;
        race_got++;
        ring_release(race_ring);
    }
    return NULL;
}

static void race(void)
{
    race_ring = ring_new(16, FRAMES);
    CHECK(race_ring != NULL, "ring_new(16) failed");
    if (!race_ring)
        return;
    pthread_t th;
    if (pthread_create(&th, NULL, consumer, NULL) != 0) {
        CHECK(0, "pthread_create failed");
        return;
    }
    for (uint64_t seq = 0; seq < RACE_N; seq++) {
        struct ps_slot_rec *s = ring_reserve(race_ring);
        if (!s) {
            race_refused++;
            continue;
        }
        fill(s, seq);
        ring_commit(race_ring);
    }
    atomic_store(&race_done, 1);
    pthread_join(th, NULL);
    CHECK(race_bad == 0, "race: %llu records out of order or torn", (unsigned long long)race_bad);
    CHECK(race_got + race_refused == RACE_N, "race: %llu got + %llu refused != %d put",
          (unsigned long long)race_got, (unsigned long long)race_refused, RACE_N);
    CHECK(race_got > 0, "race: nothing got through");
    ring_free(race_ring);
}

static void registry(void)
{
    struct ps_thread *a = thread_claim(101), *b = thread_claim(102);
    CHECK(a && b && a != b, "two claims did not give two slots");
    if (!a || !b)
        return;
    thread_count(&a->taken, 3);
    thread_count(&a->signals, 1);
    thread_count(&b->taken, 5);
    thread_count(&b->signals, 2);
    thread_count(&b->no_libunwind, 4);
    uint64_t t, s, n;
    threads_sample_totals(&t, &s, &n);
    CHECK(t == 8 && s == 3 && n == 4, "totals %llu/%llu/%llu, want 8/3/4", (unsigned long long)t,
          (unsigned long long)s, (unsigned long long)n);
    atomic_store(&a->state, PS_T_FREE); /* a exits, its slot is handed back */
    struct ps_thread *c = thread_claim(103);
    CHECK(c == a, "the freed slot was not reused");
    thread_count(&c->taken, 1);
    thread_count(&c->signals, 1);
    threads_sample_totals(&t, &s, &n);
    CHECK(t == 9 && s == 4 && n == 4, "after a slot's reuse totals %llu/%llu/%llu, want 9/4/4 (the exited "
          "thread's counts kept)", (unsigned long long)t, (unsigned long long)s, (unsigned long long)n);
}

int main(void)
{
    single();
    race();
    registry();
    return unit_done();
}
