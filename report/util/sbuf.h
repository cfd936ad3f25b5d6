/* sbuf.h: a growing text buffer for the renderers (report, table.md). Out of memory is sticky:
 * later appends do nothing and sbuf_take returns NULL. It must never print or write a file. */
#ifndef PERFSCOPE_REPORT_SBUF_H
#define PERFSCOPE_REPORT_SBUF_H

#include <stddef.h>

struct sbuf {
    char *buf;
    size_t len, cap;
    int oom;
};

void sbuf_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s with control bytes as '?' and, in a markdown table cell, '|' as "\|" and '`' kept. */
void sbuf_clean(struct sbuf *b, const char *s, int table_cell);
/* The text (caller frees), or NULL after out of memory; the buffer is empty again. Bytes that
 * are not part of valid UTF-8 are '?' in it (utf8_fix_text): every rendered text is UTF-8. */
char *sbuf_take(struct sbuf *b);
/* sbuf_take of a scratch buffer whose text goes into `into`: NULL marks `into` out of memory
 * too, so a page or table built from such pieces is never written short. */
char *sbuf_take_for(struct sbuf *scratch, struct sbuf *into);
void sbuf_free(struct sbuf *b);

#endif
