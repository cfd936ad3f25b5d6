/* symtab.c: modules, functions and locations of a run (see symtab.h). It must never name an
 * address from a file it cannot trust, never open the same build id twice, and never resolve
 * the same (module, offset) twice. */
#include "symtab.h"
#include "dwsym.h"
#include "dwprefetch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* libstdc++'s demangler (the Makefile links -lstdc++). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

static const char deleted_suffix[] = " (deleted)";

const char *symtab_status_name(int s)
{
    switch (s) {
    case SYM_OK: return "ok";
    case SYM_MISSING: return "missing";
    case SYM_DELETED: return "deleted";
    case SYM_REPLACED: return "replaced";
    case SYM_MODIFIED: return "modified";
    case SYM_UNREADABLE: return "unreadable";
    default: return "unopened";
    }
}

/* Grows *v (n used, *cap allocated) by one element of size sz; NULL (and st->oom) when out of
 * memory. */
static void *push(struct symtab *st, void **v, size_t *n, size_t *cap, size_t sz)
{
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 64;
        void *nv = realloc(*v, ncap * sz);
        if (!nv) {
            st->oom = 1;
            return NULL;
        }
        *v = nv;
        *cap = ncap;
    }
    return (char *)*v + (*n)++ * sz;
}

/* The id kept under key in idx: 1 with *id when key is there; 0 when it was not (it is now, to
 * be given its id by remember() once the thing is made); -1 (st->oom) when out of memory. *id
 * is 0 unless found. */
static int lookup(struct symtab *st, struct hmap *idx, const uint64_t *key, uint32_t *id)
{
    int is_new;
    uint64_t *slot = hmap_get(idx, key, &is_new);
    *id = 0;
    if (!slot) {
        st->oom = 1;
        return -1;
    }
    if (is_new)
        return 0;
    *id = (uint32_t)*slot;
    return 1;
}

/* Gives key, inserted by lookup(), its id (found again: a slot pointer is valid only until the
 * next insertion); returns id. */
static uint32_t remember(struct hmap *idx, const uint64_t *key, uint32_t id)
{
    uint64_t *slot = hmap_find(idx, key);
    if (slot)
        *slot = id;
    return id;
}

static uint32_t sid(struct symtab *st, const char *s)
{
    uint32_t id = strpool_id(&st->str, s);
    if (id == UINT32_MAX) {
        st->oom = 1;
        return 0;
    }
    return id;
}

static uint32_t new_module(struct symtab *st, const char *path, const char *name, int kind)
{
    struct sym_module *m = push(st, (void **)&st->mods, &st->nmods, &st->capmods, sizeof *m);
    if (!m)
        return 0;
    memset(m, 0, sizeof *m);
    m->path = sid(st, path);
    m->name = sid(st, name);
    m->kind = kind;
    m->status = kind == SYM_FILE ? SYM_UNOPENED : SYM_OK;
    return (uint32_t)(st->nmods - 1);
}

static char *demangle(const char *s)
{
    if (s[0] != '_' || s[1] != 'Z')
        return NULL;
    int status = 0;
    char *d = __cxa_demangle(s, NULL, NULL, &status);
    if (status != 0) {
        free(d);
        return NULL;
    }
    return d;
}

/* elf: the name comes from an ELF file, where "memcpy@@GLIBC_2.14" carries a symbol version
 * that is not part of the name (a JIT's names are kept whole). */
const char *symtab_abs_path(const char *file, const char *comp_dir, char *buf, size_t len)
{
    if (!file || !*file) {
        snprintf(buf, len, "%s", "");
        return buf;
    }
    if (file[0] == '/' || !comp_dir || comp_dir[0] != '/') {
        snprintf(buf, len, "%s", file);
        return buf;
    }
    while (file[0] == '.' && file[1] == '/')
        file += 2;
    size_t n = strlen(comp_dir);
    while (n > 1 && comp_dir[n - 1] == '/')
        n--;
    snprintf(buf, len, "%.*s/%s", (int)n, comp_dir, file);
    return buf;
}

static uint32_t abs_id(struct symtab *st, const char *file, const char *comp_dir)
{
    char buf[4096];
    return sid(st, symtab_abs_path(file, comp_dir, buf, sizeof buf));
}

static uint32_t function_id(struct symtab *st, uint32_t module, const char *sysname,
                            const char *decl_file, int decl_line, int elf, const char *comp_dir)
{
    char plain[1024];
    const char *at = elf ? strchr(sysname, '@') : NULL;
    if (at && at > sysname && (size_t)(at - sysname) < sizeof plain) {
        memcpy(plain, sysname, (size_t)(at - sysname));
        plain[at - sysname] = '\0';
        sysname = plain;
    }
    uint32_t sys = sid(st, sysname), file = sid(st, decl_file ? decl_file : "");
    uint64_t key[3] = {module, sys, file};
    uint32_t id;
    if (lookup(st, &st->func_idx, key, &id) != 0)
        return id;
    struct sym_function *f = push(st, (void **)&st->funcs, &st->nfuncs, &st->capfuncs, sizeof *f);
    if (!f)
        return 0;
    char *d = demangle(sysname);
    f->name = d ? sid(st, d) : sys;
    free(d);
    f->system_name = sys;
    f->file = file;
    f->path = abs_id(st, decl_file, comp_dir);
    f->line = decl_line > 0 ? decl_line : 0;
    f->module = module;
    return remember(&st->func_idx, key, (uint32_t)(st->nfuncs - 1));
}

/* function_id() of a dwarf.c frame, memoized by its strings' addresses. */
static uint32_t dw_function_id(struct symtab *st, uint32_t module, const struct dw_frame *fr)
{
    uint64_t key[3] = {module, (uint64_t)(uintptr_t)fr->name, (uint64_t)(uintptr_t)fr->decl_file};
    uint32_t id;
    if (lookup(st, &st->func_memo, key, &id) != 0)
        return id;
    return remember(&st->func_memo, key,
                    function_id(st, module, fr->name, fr->decl_file, fr->decl_line, 1,
                                fr->comp_dir));
}

/* The string ids of a dwarf.c file name as spelled (low half) and made absolute against the
 * unit's compilation directory (high half; NULL file: both ""), memoized by the two strings'
 * addresses. */
static uint64_t dw_file_ids(struct symtab *st, const char *file, const char *comp_dir)
{
    if (!file)
        return 0;
    uint64_t key[2] = {(uint64_t)(uintptr_t)file, (uint64_t)(uintptr_t)comp_dir};
    int is_new;
    uint64_t *slot = hmap_get(&st->file_memo, key, &is_new);
    if (slot && !is_new)
        return *slot;
    uint64_t ids = (uint64_t)sid(st, file) | (uint64_t)abs_id(st, file, comp_dir) << 32;
    if (!slot)
        st->oom = 1;
    else if ((slot = hmap_find(&st->file_memo, key)) != NULL)
        *slot = ids;
    return ids;
}

static uint32_t new_loc(struct symtab *st, uint32_t module, uint64_t addr,
                        const struct sym_line *lines, uint32_t n)
{
    struct sym_loc *l = push(st, (void **)&st->locs, &st->nlocs, &st->caplocs, sizeof *l);
    if (!l)
        return 0;
    l->module = module;
    l->addr = addr;
    l->first = (uint32_t)st->nlines;
    l->nlines = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct sym_line *d = push(st, (void **)&st->lines, &st->nlines, &st->caplines, sizeof *d);
        if (!d)
            break;
        *d = lines[i];
        l->nlines++;
    }
    if (l->nlines == 0) { /* out of memory: point at the "[unknown]" line */
        l->first = 0;
        l->nlines = 1;
    }
    return (uint32_t)(st->nlocs - 1);
}

int symtab_init(struct symtab *st)
{
    memset(st, 0, sizeof *st);
    st->run_start_wall = -1;
    hmap_init(&st->mod_idx, 3);
    hmap_init(&st->pseudo_idx, 1);
    hmap_init(&st->build_idx, 1);
    hmap_init(&st->func_idx, 3);
    hmap_init(&st->loc_idx, 3);
    hmap_init(&st->func_memo, 3);
    hmap_init(&st->file_memo, 2);
    if (strpool_init(&st->str) != 0)
        return -1;
    /* Module, function, line and location 0: "[unknown]" (also what out of memory gives). */
    uint32_t m = symtab_pseudo_module(st, "[unknown]", SYM_PSEUDO);
    symtab_pseudo_loc(st, m);
    return st->oom ? -1 : 0;
}

void symtab_free(struct symtab *st)
{
    for (size_t i = 0; i < st->nmods; i++)
        if (st->mods[i].owns_dw)
            dw_close(st->mods[i].dw);
    free(st->mods);
    free(st->funcs);
    free(st->lines);
    free(st->locs);
    hmap_free(&st->mod_idx);
    hmap_free(&st->pseudo_idx);
    hmap_free(&st->build_idx);
    hmap_free(&st->func_idx);
    hmap_free(&st->loc_idx);
    hmap_free(&st->func_memo);
    hmap_free(&st->file_memo);
    strpool_free(&st->str);
    memset(st, 0, sizeof *st);
}

uint32_t symtab_file_module(struct symtab *st, const char *path, uint64_t inode)
{
    size_t len = strlen(path), sl = sizeof deleted_suffix - 1;
    int deleted = len > sl && strcmp(path + len - sl, deleted_suffix) == 0;
    char clean[4096 + 16];
    snprintf(clean, sizeof clean, "%.*s", (int)(deleted ? len - sl : len), path);
    uint64_t key[3] = {sid(st, clean), inode, (uint64_t)deleted};
    uint32_t m;
    if (lookup(st, &st->mod_idx, key, &m) != 0)
        return m;
    const char *base = strrchr(clean, '/');
    base = base && base[1] ? base + 1 : clean;
    m = new_module(st, clean, base, SYM_FILE);
    st->mods[m].inode = inode;
    st->mods[m].shim = strcmp(base, SYM_SHIM_FILE) == 0;
    if (deleted) {
        st->mods[m].status = SYM_DELETED;
        snprintf(st->mods[m].why, sizeof st->mods[m].why,
                 "deleted while the run had it mapped: not symbolized");
    }
    return remember(&st->mod_idx, key, m);
}

uint32_t symtab_pseudo_module(struct symtab *st, const char *name, int kind)
{
    uint64_t key[1] = {sid(st, name)};
    uint32_t m;
    if (lookup(st, &st->pseudo_idx, key, &m) != 0)
        return m;
    return remember(&st->pseudo_idx, key, new_module(st, name, name, kind));
}

/* Where a mapped file is read from: its copy under st->symfs when there is one (a container's
 * file, copied out after the run: the copy's inode and mtime are its own, so neither is
 * compared; *copied set), else the path as mapped. With a symfs, a host file is trusted only
 * where a build id recorded by the run matches (the executable's, in meta.json). */
static const char *module_file(const struct symtab *st, const char *mapped, char *buf, size_t size,
                               int *copied)
{
    struct stat sb;
    *copied = 0;
    if (!st->symfs || snprintf(buf, size, "%s%s", st->symfs, mapped) >= (int)size || lstat(buf, &sb) != 0)
        return mapped;
    *copied = 1;
    return buf;
}

/* Decides whether the module's file can be trusted, and opens it (once). */
static void open_module(struct symtab *st, struct sym_module *m)
{
    if (m->status != SYM_UNOPENED)
        return;
    char copy[8192];
    int copied;
    const char *mapped = symtab_str(st, m->path);
    const char *path = module_file(st, mapped, copy, sizeof copy, &copied);
    int exe_path = st->exe_path && strcmp(st->exe_path, mapped) == 0;
    struct stat sb;
    m->status = SYM_UNREADABLE;
    if (st->symfs && !copied && !(exe_path && st->exe_build_id && *st->exe_build_id)) {
        m->status = SYM_MISSING;
        snprintf(m->why, sizeof m->why, "not under %.100s, and no build id of the run's to check the "
                 "host's file against: not symbolized", st->symfs);
        return;
    }
    if (stat(path, &sb) != 0) {
        m->status = errno == ENOENT || errno == ENOTDIR ? SYM_MISSING : SYM_UNREADABLE;
        snprintf(m->why, sizeof m->why, "%s: not symbolized", strerror(errno));
        return;
    }
    if (!S_ISREG(sb.st_mode)) {
        snprintf(m->why, sizeof m->why, "not a regular file: not symbolized");
        return;
    }
    if (!copied && m->inode && (uint64_t)sb.st_ino != m->inode) {
        m->status = SYM_REPLACED;
        snprintf(m->why, sizeof m->why,
                 "replaced since the run (inode %llu then, %llu now): not symbolized",
                 (unsigned long long)m->inode, (unsigned long long)sb.st_ino);
        return;
    }
    char why[160];
    struct dw_file *dw = st->prefetch ? dwprefetch_take(st->prefetch, path, m->inode) : NULL;
    if (!dw && dw_open(path, &dw, why, sizeof why) != 0) {
        snprintf(m->why, sizeof m->why, "%s: not symbolized", why);
        return;
    }
    snprintf(m->build_id, sizeof m->build_id, "%s", dw_build_id(dw));
    int exe = exe_path && st->exe_build_id && *st->exe_build_id;
    if (exe && strcmp(st->exe_build_id, m->build_id) != 0) {
        dw_close(dw);
        m->status = SYM_REPLACED;
        snprintf(m->why, sizeof m->why,
                 "build id %.40s now, the run recorded %.40s: not symbolized",
                 *m->build_id ? m->build_id : "(none)", st->exe_build_id);
        return;
    }
    double mtime = (double)sb.st_mtim.tv_sec + (double)sb.st_mtim.tv_nsec * 1e-9;
    m->checked_mtime = st->run_start_wall >= 0;
    if (!exe && !copied && m->checked_mtime && mtime > st->run_start_wall) {
        snprintf(m->why, sizeof m->why, "modified %.1f s after the run started%s",
                 mtime - st->run_start_wall,
                 st->trust_modified ? ": symbolized anyway (--trust-modified)"
                                    : ": not symbolized (--trust-modified to use it)");
        if (!st->trust_modified) {
            dw_close(dw);
            m->status = SYM_MODIFIED;
            return;
        }
    }
    m->status = SYM_OK;
    if (*m->build_id) {
        uint64_t key[1] = {sid(st, m->build_id)};
        int is_new;
        uint64_t *slot = hmap_get(&st->build_idx, key, &is_new);
        if (slot && !is_new) {
            dw_close(dw);
            m->dw = st->mods[*slot].dw;
            return;
        }
        if (slot)
            *slot = (uint64_t)(m - st->mods);
    }
    m->dw = dw;
    m->owns_dw = 1;
}

uint32_t symtab_file_loc(struct symtab *st, uint32_t module, uint64_t file_off, int ret)
{
    if (module >= st->nmods)
        return 0;
    uint64_t key[3] = {module, file_off, (uint64_t)(ret != 0)};
    uint32_t loc;
    if (lookup(st, &st->loc_idx, key, &loc) != 0)
        return loc;
    struct sym_module *m = &st->mods[module];
    open_module(st, m);
    if (file_off + 1 > m->max_off)
        m->max_off = file_off + 1;
    struct dw_frame fr[DW_MAX_INLINE];
    struct sym_line lines[DW_MAX_INLINE];
    int n = 0;
    uint64_t vaddr;
    if (m->dw && dw_off_to_vaddr(m->dw, file_off, &vaddr) == 0 && vaddr >= (uint64_t)(ret != 0))
        n = dw_lookup(m->dw, vaddr - (ret != 0), fr, DW_MAX_INLINE);
    for (int i = 0; i < n; i++) {
        lines[i].func = dw_function_id(st, module, &fr[i]);
        uint64_t ids = dw_file_ids(st, fr[i].file, fr[i].comp_dir);
        lines[i].file = (uint32_t)ids;
        lines[i].path = (uint32_t)(ids >> 32);
        lines[i].line = fr[i].line > 0 ? fr[i].line : 0;
    }
    if (n == 0) {
        char name[300];
        snprintf(name, sizeof name, "%.200s!0x%llx", symtab_str(st, m->name),
                 (unsigned long long)file_off);
        lines[0] = (struct sym_line){function_id(st, module, name, NULL, 0, 0, NULL), 0, 0, 0};
        n = 1;
    }
    return remember(&st->loc_idx, key, new_loc(st, module, file_off, lines, (uint32_t)n));
}

uint32_t symtab_pseudo_loc(struct symtab *st, uint32_t module)
{
    if (module >= st->nmods)
        return 0;
    uint64_t key[3] = {module, 0, 2};
    uint32_t loc;
    if (lookup(st, &st->loc_idx, key, &loc) != 0)
        return loc;
    struct sym_line line = {
        function_id(st, module, symtab_str(st, st->mods[module].name), NULL, 0, 0, NULL), 0, 0, 0};
    return remember(&st->loc_idx, key, new_loc(st, module, 0, &line, 1));
}

uint32_t symtab_jit_loc(struct symtab *st, uint32_t module, const char *name, uint64_t start)
{
    if (module >= st->nmods)
        return 0;
    uint64_t key[3] = {module, start, 3 + ((uint64_t)sid(st, name) << 2)};
    uint32_t loc;
    if (lookup(st, &st->loc_idx, key, &loc) != 0)
        return loc;
    struct sym_line line = {function_id(st, module, name, NULL, 0, 0, NULL), 0, 0, 0};
    return remember(&st->loc_idx, key, new_loc(st, module, start, &line, 1));
}
