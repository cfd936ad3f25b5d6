/* dwcu.h: an index of one DWARF compilation unit's functions and inlined calls by address, built
 * in one pass over the unit's DIEs the first time one of its addresses is looked up. A lookup is
 * then a binary search and a short walk up the enclosing functions, where dwarf_getscopes and
 * dwarf_getscopes_die walk the unit's DIE tree again for every address (measured: 35 us an
 * address on libc with its debug info, most of the symbolizer's time).
 *
 * Rules: function-like DIEs (subprogram, inlined_subroutine, entry_point) with code ranges
 * (low/high pc or DW_AT_ranges) are indexed with the nearest function-like DIE around them;
 * the innermost one whose ranges hold an address starts the chain; an inlined call adds the
 * function around it, at the call's file:line, until an out-of-line function. Malformed DWARF
 * (ranges that do not nest, cycles, absurd depth) gives a shorter or empty chain, never a crash
 * or an endless walk. Never demangles. */
#ifndef PERFSCOPE_DWCU_H
#define PERFSCOPE_DWCU_H

#include <elfutils/libdw.h>

#include "dwsym.h"

struct dwcu;

/* NULL when out of memory (the caller treats the unit as having no functions). */
struct dwcu *dwcu_build(Dwarf_Die *cudie);
void dwcu_free(struct dwcu *cu);

/* Frames at pc (a DWARF address of the unit), innermost first; file:line is the line table's for
 * the innermost. Returns the number of frames, 0 when no function of the unit holds pc. */
int dwcu_chain(const struct dwcu *cu, Dwarf_Addr pc, const char *file, int line,
               struct dw_frame *out, int max);

#endif
