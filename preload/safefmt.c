/* safefmt.c: text without stdio or allocation (safefmt.h), for the signal-safe ways out. */
#include "safefmt.h"

#include <string.h>

void safefmt_init(struct safefmt *f, char *buf, size_t cap)
{
    f->buf = buf;
    f->cap = cap;
    f->len = 0;
    f->overflow = cap == 0;
    if (cap)
        buf[0] = 0;
}

void safefmt_mem(struct safefmt *f, const char *s, size_t n)
{
    if (f->overflow || f->len + n + 1 > f->cap) {
        f->overflow = 1;
        return;
    }
    memcpy(f->buf + f->len, s, n);
    f->len += n;
    f->buf[f->len] = 0;
}

void safefmt_str(struct safefmt *f, const char *s)
{
    safefmt_mem(f, s, strlen(s));
}

void safefmt_u64(struct safefmt *f, uint64_t v)
{
    char rev[24];
    int k = 0;
    do {
        rev[k++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    char out[24];
    for (int i = 0; i < k; i++)
        out[i] = rev[k - 1 - i];
    safefmt_mem(f, out, (size_t)k);
}

void safefmt_i64(struct safefmt *f, int64_t v)
{
    if (v < 0) {
        safefmt_mem(f, "-", 1);
        safefmt_u64(f, (uint64_t)0 - (uint64_t)v);
    } else {
        safefmt_u64(f, (uint64_t)v);
    }
}

void safefmt_fixed(struct safefmt *f, double v, int decimals)
{
    if (!(v >= 0) || v > 1e18)
        v = 0;
    uint64_t scale = 1;
    for (int i = 0; i < decimals; i++)
        scale *= 10;
    uint64_t whole = (uint64_t)v;
    uint64_t frac = (uint64_t)((v - (double)whole) * (double)scale + 0.5);
    if (frac >= scale) {
        whole++;
        frac -= scale;
    }
    safefmt_u64(f, whole);
    if (decimals <= 0)
        return;
    char digits[24];
    for (int i = decimals - 1; i >= 0; i--) {
        digits[i] = (char)('0' + frac % 10);
        frac /= 10;
    }
    safefmt_mem(f, ".", 1);
    safefmt_mem(f, digits, (size_t)decimals);
}

void safefmt_json_str(struct safefmt *f, const char *s)
{
    /* cJSON's escapes: the quote, the backslash and control characters; other bytes as they are. */
    static const char hex[] = "0123456789abcdef";
    safefmt_mem(f, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        const char *esc = NULL;
        switch (*p) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\b': esc = "\\b"; break;
        case '\f': esc = "\\f"; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        default: break;
        }
        if (esc) {
            safefmt_str(f, esc);
        } else if (*p < 0x20) {
            char u[6] = { '\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15] };
            safefmt_mem(f, u, sizeof u);
        } else {
            safefmt_mem(f, (const char *)p, 1);
        }
    }
    safefmt_mem(f, "\"", 1);
}

void safefmt_join(char *dst, size_t size, const char *a, const char *b, const char *c)
{
    if (!size)
        return;
    const char *parts[3] = {a, b, c};
    size_t n = 0;
    for (int i = 0; i < 3; i++)
        for (const char *p = parts[i]; p && *p && n + 1 < size; p++)
            dst[n++] = *p;
    dst[n] = 0;
}
