/* symsort.h: a module's function symbols, and the one order dwarf.c looks them up in: by start
 * address, then rank (global before weak before local: which alias names shared code), then
 * name. Nothing here reads a file. */
#ifndef PERFSCOPE_SYMSORT_H
#define PERFSCOPE_SYMSORT_H

#include <stddef.h>
#include <stdint.h>

/* A function symbol with an extent, in dwfl addresses. */
struct dw_sym {
    uint64_t start, size;
    const char *name;
    int rank;              /* 0 global, 1 weak, 2 local */
};

/* The order: negative, 0 or positive as a sorts before, with or after b. */
int sym_order(const struct dw_sym *a, const struct dw_sym *b);

/* Sorts v[0..n) in that order. */
void sym_sort(struct dw_sym *v, size_t n);

#endif
