/* strv.h: a growing NULL-terminated list of strings (an argv or an environment being built).
 * Every string is a copy the list owns; on out of memory the list sets oom and ignores further
 * pushes, so callers check once at the end. It must never hand out a list that is not
 * NULL-terminated. */
#ifndef PERFSCOPE_STRV_H
#define PERFSCOPE_STRV_H

#include <stddef.h>

struct strv {
    char **v;
    size_t n, cap;
    int oom;
};

void strv_push(struct strv *s, const char *text);
void strv_pushf(struct strv *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Frees the strings and the list, and empties s. */
void strv_free(struct strv *s);
/* Frees a list taken out of a strv (s.v): each string, then the array. */
void strv_free_v(char **v);

#endif
