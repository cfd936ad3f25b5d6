/* sbuf.c: growing text buffer (sbuf.h). It must never write past its allocation and never lose
 * track of an allocation failure. */
#include "sbuf.h"
#include "utf8.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int reserve(struct sbuf *b, size_t more)
{
    if (b->oom)
        return -1;
    if (b->len + more + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more + 1)
        cap *= 2;
    char *p = realloc(b->buf, cap);
    if (!p) {
        b->oom = 1;
        return -1;
    }
    b->buf = p;
    b->cap = cap;
    return 0;
}

void sbuf_printf(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || reserve(b, (size_t)n) != 0)
        return;
    va_start(ap, fmt);
    vsnprintf(b->buf + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void sbuf_clean(struct sbuf *b, const char *s, int table_cell)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (reserve(b, 2) != 0)
            return;
        if (c < 0x20 || c == 0x7f)
            c = '?';
        if (table_cell && c == '|')
            b->buf[b->len++] = '\\';
        b->buf[b->len++] = (char)c;
        b->buf[b->len] = '\0';
    }
}

char *sbuf_take(struct sbuf *b)
{
    if (b->oom || reserve(b, 0) != 0) {
        sbuf_free(b);
        return NULL;
    }
    char *p = b->buf;
    p[b->len] = '\0';
    utf8_fix_text(p); /* names from the run folder may hold any bytes: the text is UTF-8 */
    memset(b, 0, sizeof *b);
    return p;
}

char *sbuf_take_for(struct sbuf *scratch, struct sbuf *into)
{
    char *p = sbuf_take(scratch);
    if (!p)
        into->oom = 1;
    return p;
}

void sbuf_free(struct sbuf *b)
{
    free(b->buf);
    memset(b, 0, sizeof *b);
}
