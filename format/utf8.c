/* utf8.c: UTF-8 and control byte cleaning (see utf8.h). It must never read past the string's
 * terminating NUL, whatever the bytes before it. */
#include "utf8.h"

#include <string.h>

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when s starts an invalid one or (unless
 * controls_ok) a control byte. */
static size_t seq_len_of(const unsigned char *s, int controls_ok)
{
    unsigned char c = s[0];
    if ((c < 0x20 || c == 0x7f) && !controls_ok)
        return 0;
    if (c < 0x80)
        return 1;
    size_t n;
    unsigned char lo = 0x80, hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        if (c == 0xe0)
            lo = 0xa0; /* overlong */
        if (c == 0xed)
            hi = 0x9f; /* surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        if (c == 0xf0)
            lo = 0x90;
        if (c == 0xf4)
            hi = 0x8f;
    } else
        return 0;
    if (s[1] < lo || s[1] > hi)
        return 0; /* also stops at the NUL */
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return n;
}

static size_t seq_len(const unsigned char *s)
{
    return seq_len_of(s, 0);
}

void utf8_fix_text(char *s)
{
    unsigned char *p = (unsigned char *)s;
    while (*p) {
        size_t n = seq_len_of(p, 1);
        if (n == 0) {
            *p++ = '?';
            continue;
        }
        p += n;
    }
}

void utf8_sanitize(char *s)
{
    unsigned char *p = (unsigned char *)s;
    while (*p) {
        size_t n = seq_len(p);
        if (n == 0) {
            *p++ = '?';
            continue;
        }
        p += n;
    }
}

const char *utf8_clean(const char *s, char *buf, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        size_t n = seq_len(p);
        if (n == 0)
            break;
        p += n;
    }
    if (!*p || !len)
        return s;
    size_t l = strlen(s);
    if (l >= len)
        l = len - 1;
    memcpy(buf, s, l);
    buf[l] = '\0';
    utf8_sanitize(buf); /* a sequence cut at the end becomes '?' too */
    return buf;
}
