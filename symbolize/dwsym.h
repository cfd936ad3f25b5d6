/* dwsym.h (the interface of dwarf.c; not named dwarf.h, which is libdw's): one ELF file, opened once through elfutils libdwfl, answering "what code is at this
 * address": the function (DWARF or symbol table), its inline chain as frames of their own, and
 * source file:line. Separate debug info is found by build id, .gnu_debuglink and /usr/lib/debug
 * (dwfl_standard_find_debuginfo, through debugcache.c's copies kept inflated). Addresses here
 * are ELF virtual addresses of the file (what objdump and addr2line use); dw_off_to_vaddr turns
 * a mapped file offset into one.
 *
 * It must never name an address with the nearest symbol before it: an address outside every
 * function symbol's extent and every DWARF subprogram gives no frame at all (the caller names
 * it module!0xOFFSET). It never opens anything but a regular file (a maps file may name a FIFO
 * or a device), and never demangles (names are as the file spells them). */
#ifndef PERFSCOPE_DWSYM_H
#define PERFSCOPE_DWSYM_H

#include <stddef.h>
#include <stdint.h>

#define DW_MAX_INLINE 32 /* deepest inline chain kept per address */

struct dw_file;

/* One logical frame; strings belong to the dw_file and live until dw_close. */
struct dw_frame {
    const char *name;       /* linkage (mangled) name or plain name, never NULL */
    const char *file;       /* source file of this frame's current line, NULL if unknown */
    int line;               /* 0 if unknown */
    const char *decl_file;  /* where the function is defined, NULL if unknown */
    int decl_line;
    const char *comp_dir;   /* the unit's DW_AT_comp_dir, which relative file names are
                             * relative to (NULL if unknown) */
};

/* Opens path. Returns 0, or -1 with why (no path in it) filled: "not a regular file",
 * libdwfl's message for a file that is not ELF, ... */
int dw_open(const char *path, struct dw_file **out, char *why, size_t whylen);
void dw_close(struct dw_file *f);

/* Lowercase hex build id, "" when the file has none. */
const char *dw_build_id(const struct dw_file *f);

/* Loads now what the first lookup would: the sorted symbol table and the DWARF (for a file with
 * compressed separate debug info, libdw inflates all of it here). */
void dw_prepare(struct dw_file *f);

/* Whether DWARF (in the file or found separately) is available. Loads it on first call. */
int dw_has_dwarf(struct dw_file *f);

/* File offset -> ELF virtual address through the PT_LOAD segments: 0, or -1 when the offset
 * is in no loaded segment. */
int dw_off_to_vaddr(const struct dw_file *f, uint64_t off, uint64_t *vaddr);

/* The frames at vaddr, innermost first (out[0] is the innermost inlined function, the last the
 * out-of-line function holding it). Returns their number (0: no function covers vaddr). */
int dw_lookup(struct dw_file *f, uint64_t vaddr, struct dw_frame *out, int max);

#endif
