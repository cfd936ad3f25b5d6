/* llamabench.h: throughput from llama-bench's own output (`-o json`: one array of test objects;
 * `-o jsonl`: one object a line; without -o, its markdown table: the "test" column's pp512,
 * tg128, pp512+tg128 and the "t/s" column's "AVG ± STDDEV", read only when the output holds no
 * JSON test), for targets that write no markers. A test with n_prompt > 0
 * and n_gen == 0 is prefill (pp), n_gen > 0 and n_prompt == 0 is decode (tg); avg_ts is its
 * tokens per second, samples_ts the per-repetition values. The first test of each kind gives the
 * run's prefill and decode throughput; every test is kept for run.json. Text around the JSON
 * (llama-bench's logs, when stderr was merged) is skipped. Never fatal: a file without a
 * llama-bench test is simply not one. */
#ifndef PERFSCOPE_REPORT_LLAMABENCH_H
#define PERFSCOPE_REPORT_LLAMABENCH_H

#include <stddef.h>

#define LLAMABENCH_MAX_TESTS 64
#define LLAMABENCH_MAX_BYTES (16u << 20)

struct lb_test {
    long long n_prompt, n_gen;
    double avg_ts, stddev_ts;
    size_t nsamples;
};

struct llamabench {
    size_t n;
    struct lb_test t[LLAMABENCH_MAX_TESTS];
    int pp, tg;            /* index of the first prefill / decode test, -1 none */
};

/* 1 when path holds at least one llama-bench test, 0 when not (or unreadable). */
int llamabench_parse(const char *path, struct llamabench *lb);

#endif
