/* safefmt.h: text built without stdio or allocation, for the ways out that may run in a signal
 * handler (_exit, fatal signals: procs.jsonl's exit line, meta.json's exit figures). Appends to
 * a caller's buffer; a text that does not fit is marked, never cut silently. Async-signal-safe;
 * must never call anything but memcpy and strlen. */
#ifndef PERFSCOPE_SAFEFMT_H
#define PERFSCOPE_SAFEFMT_H

#include <stddef.h>
#include <stdint.h>

struct safefmt {
    char *buf;
    size_t cap, len;
    int overflow; /* something did not fit: the text is not to be used */
};

void safefmt_init(struct safefmt *f, char *buf, size_t cap);
void safefmt_str(struct safefmt *f, const char *s);
void safefmt_mem(struct safefmt *f, const char *s, size_t n);
void safefmt_u64(struct safefmt *f, uint64_t v);
void safefmt_i64(struct safefmt *f, int64_t v);
/* A non-negative number with `decimals` digits after the point (JSON); negative or not finite
 * writes 0. */
void safefmt_fixed(struct safefmt *f, double v, int decimals);
/* s as a JSON string, quoted and escaped as cJSON escapes it. */
void safefmt_json_str(struct safefmt *f, const char *s);
/* dst = a, b and c (b and c may be NULL) joined, cut short to fit as snprintf("%s%s%s") cuts:
 * the one exception to "never cut silently", for the copies every image's start makes (its
 * configuration, the run id), where snprintf's first call faulted its code in. */
void safefmt_join(char *dst, size_t size, const char *a, const char *b, const char *c);

#endif
