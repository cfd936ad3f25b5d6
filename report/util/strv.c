/* strv.c: a growing NULL-terminated list of strings (strv.h). It must never hand out a list
 * that is not NULL-terminated, and never lose a push silently: oom says one failed. */
#include "strv.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void strv_push(struct strv *s, const char *text)
{
    if (s->oom)
        return;
    if (s->n + 2 > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        char **v = realloc(s->v, cap * sizeof *v);
        if (!v) {
            s->oom = 1;
            return;
        }
        s->v = v;
        s->cap = cap;
    }
    if (!(s->v[s->n] = strdup(text))) {
        s->oom = 1;
        return;
    }
    s->v[++s->n] = NULL;
}

void strv_pushf(struct strv *s, const char *fmt, ...)
{
    char *t;
    va_list ap;
    va_start(ap, fmt);
    int r = vasprintf(&t, fmt, ap);
    va_end(ap);
    if (r < 0) {
        s->oom = 1;
        return;
    }
    strv_push(s, t);
    free(t);
}

void strv_free_v(char **v)
{
    for (char **p = v; p && *p; p++)
        free(*p);
    free(v);
}

void strv_free(struct strv *s)
{
    strv_free_v(s->v);
    memset(s, 0, sizeof *s);
}
