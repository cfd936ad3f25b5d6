/* symtab.h: the resolved code of a run, shared by every table and export: modules (mapped files
 * and pseudo regions), functions (demangled name, mangled name, definition file:line) and
 * locations (one code address of one module, with its inline chain as lines, innermost first).
 * Modules are keyed by (path, inode) and share one dwarf.c handle per build id, so the same
 * library in many processes is opened once; locations are keyed by (module, file offset), so an
 * address is resolved once however many processes and samples hold it.
 *
 * Naming rules (docs/symbolize.md):
 *   - a file's address that no function covers is "<module>!0x<file offset>", never the nearest
 *     symbol; so is every address of a file that cannot be trusted (missing, deleted, replaced or
 *     modified since the run: see enum sym_status) - it is flagged, never silently misnamed;
 *   - return addresses (frames after the first) are looked up at address - 1;
 *   - [vdso], [heap], [stack], [anon] (anonymous memory), [unknown] (no mapping) are one function
 *     each; JIT code is named from the process's perf map.
 * Never aborts: out of memory sets `oom` and returns id 0 (a valid "[unknown]" location). */
#ifndef PERFSCOPE_SYMTAB_H
#define PERFSCOPE_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

#include "hmap.h"

struct dw_file;
struct dwprefetch;

/* The basename of the shim's library: a module of this name is the profiler's own code. */
#define SYM_SHIM_FILE "libperfscope.so"

enum sym_kind { SYM_FILE, SYM_PSEUDO, SYM_JIT };

enum sym_status {
    SYM_UNOPENED,   /* not looked at yet */
    SYM_OK,         /* symbolized from the file */
    SYM_MISSING,    /* no such file now */
    SYM_DELETED,    /* the maps said "(deleted)": the run's file is gone */
    SYM_REPLACED,   /* a different file now (inode or build id differs) */
    SYM_MODIFIED,   /* same inode, changed after the run started (mtime) */
    SYM_UNREADABLE, /* not a regular file, not ELF, unreadable */
};

struct sym_module {
    uint32_t path;          /* strpool id: the path as mapped (without " (deleted)"), or "[vdso]" */
    uint32_t name;          /* basename, what tables show */
    uint64_t inode;         /* from the maps (0: unknown) */
    int kind;
    int status;
    int checked_mtime;      /* the run's start time was known, so mtime was compared */
    int shim;               /* the profiler's own library (SYM_SHIM_FILE): its frames are
                             * left out of every stack (docs/symbolize.md) */
    char why[200];          /* what is wrong, for non-OK status */
    char build_id[129];
    struct dw_file *dw;     /* NULL when not symbolized */
    int owns_dw;            /* 0: dw belongs to the module with the same build id */
    uint64_t max_off;       /* 1 + the highest file offset seen (pprof mapping limit) */
};

struct sym_function {
    uint32_t name;          /* demangled */
    uint32_t system_name;   /* as the file spells it (mangled) */
    uint32_t file;          /* where it is defined, as DWARF spells it, 0 unknown */
    int line;
    uint32_t module;
    uint32_t path;          /* file made absolute (symtab_abs_path), 0 unknown */
};

struct sym_line {
    uint32_t func;
    uint32_t file;          /* source file of this frame's current line, 0 unknown */
    int line;
    uint32_t path;          /* file made absolute (symtab_abs_path), 0 unknown */
};

struct sym_loc {
    uint32_t module;
    uint32_t first;         /* index into lines */
    uint32_t nlines;        /* >= 1, innermost first */
    uint64_t addr;          /* file offset for files, the address itself otherwise */
};

struct symtab {
    struct strpool str;
    struct sym_module *mods;
    size_t nmods, capmods;
    struct sym_function *funcs;
    size_t nfuncs, capfuncs;
    struct sym_line *lines;
    size_t nlines, caplines;
    struct sym_loc *locs;
    size_t nlocs, caplocs;
    struct hmap mod_idx;    /* (path, inode, deleted) -> module */
    struct hmap pseudo_idx; /* name -> module */
    struct hmap build_idx;  /* build id string -> module owning the dw */
    struct hmap func_idx;   /* (module, system name, decl file) -> function */
    struct hmap loc_idx;    /* (module, offset, return?) -> location */
    /* Memos keyed by the addresses of dwarf.c's strings (they live until dw_close, and one
     * address is one string), so a function or file met again is not hashed by its text. */
    struct hmap func_memo;  /* (module, name pointer, decl file pointer) -> function */
    struct hmap file_memo;  /* (file name, compilation dir) pointers -> string ids */
    /* what the file checks compare against (set before the first lookup) */
    double run_start_wall;  /* wall-clock seconds the run started, < 0 unknown */
    const char *exe_path;   /* the run's executable and its build id (meta.json), or NULL */
    const char *exe_build_id;
    int trust_modified;     /* symbolize SYM_MODIFIED files anyway (still flagged) */
    const char *symfs;      /* a folder holding copies of the mapped files (their paths under it)
                             * looked at first (a container's, docs/symbolize.md), or NULL */
    struct dwprefetch *prefetch; /* files opened ahead (dwprefetch.h), taken before opening */
    int oom;
};

int symtab_init(struct symtab *st);
void symtab_free(struct symtab *st);

/* Module ids. path may end in " (deleted)" as /proc/PID/maps writes it. */
uint32_t symtab_file_module(struct symtab *st, const char *path, uint64_t inode);
uint32_t symtab_pseudo_module(struct symtab *st, const char *name, int kind);

/* Location ids. ret: the address is a return address (looked up at - 1). */
uint32_t symtab_file_loc(struct symtab *st, uint32_t module, uint64_t file_off, int ret);
uint32_t symtab_pseudo_loc(struct symtab *st, uint32_t module);
uint32_t symtab_jit_loc(struct symtab *st, uint32_t module, const char *name, uint64_t start);

/* The innermost function of a location. */
static inline uint32_t symtab_leaf_func(const struct symtab *st, uint32_t loc)
{
    return st->lines[st->locs[loc].first].func;
}

static inline const char *symtab_str(const struct symtab *st, uint32_t id)
{
    return strpool_str(&st->str, id);
}

/* A DWARF file name as an absolute path: kept when it is one, else joined to the unit's
 * compilation directory (a leading "./" dropped), else kept as it is. Into buf; returns buf. */
const char *symtab_abs_path(const char *file, const char *comp_dir, char *buf, size_t len);

/* "ok", "missing", ... for a status. */
const char *symtab_status_name(int status);

#endif
