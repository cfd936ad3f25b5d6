/* dwarf.c: address -> frames for one ELF file with libdwfl (see dwsym.h). One Dwfl per file,
 * kept open for the whole run; the callers cache results per address. It must never return the
 * nearest symbol for an address outside that symbol's extent, and never open a non-regular file. */
#include "dwsym.h"
#include "debugcache.h"
#include "debuginfod_gate.h"
#include "dwcu.h"
#include "hmap.h"
#include "symsort.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct dw_seg {
    uint64_t off, vaddr, filesz;
};

#define SYM_SCAN 256       /* symbols examined below an address, at most */

/* One address range of a compilation unit, in dwfl addresses. */
struct cu_span {
    uint64_t low, high;
    Dwarf_Die *cu;         /* libdwfl's, lives until dwfl_end */
    Dwarf_Addr bias;
};

#define SPAN_SCAN 16       /* spans examined below an address, at most (CUs rarely overlap) */
#define CU_RANGES_MAX 65536 /* ranges kept per CU, at most */

struct dw_file {
    Dwfl *dwfl;
    Dwfl_Module *mod;
    GElf_Addr bias;        /* dwfl address = ELF vaddr + bias */
    struct dw_seg *segs;
    size_t nsegs;
    int dwarf_state;       /* 0 untried, 1 present, -1 absent */
    char build_id[129];
    /* The symbol table sorted once: libdwfl's own address lookup scans every symbol on each
     * call (measured: 60% of the time on libc with its debug symbols). */
    struct dw_sym *syms;
    size_t nsyms;
    int syms_loaded;
    uint64_t max_size;
    /* DWARF: one function index per compilation unit, built on its first address. */
    struct hmap cu_idx;    /* CU DIE offset -> index + 1 into cus (0: being built / failed) */
    struct dwcu **cus;
    size_t ncus, capcus;
    /* Every CU's address ranges, sorted, built the first time libdwfl's CU for an address
     * does not hold it (see cu_at). */
    struct cu_span *spans;
    size_t nspans;
    int spans_loaded;
};

static char *debuginfo_path; /* NULL: libdwfl's default, ":.debug:/usr/lib/debug" */

static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = debugcache_find_debuginfo, /* dwfl_standard_find_debuginfo's, kept inflated */
    .debuginfo_path = &debuginfo_path,
};

static void set_why(char *why, size_t len, const char *msg)
{
    if (why && len)
        snprintf(why, len, "%s", msg ? msg : "unknown error");
}

static int read_segments(struct dw_file *f, char *why, size_t whylen)
{
    Elf *elf = dwfl_module_getelf(f->mod, &f->bias);
    if (!elf) {
        set_why(why, whylen, dwfl_errmsg(-1));
        return -1;
    }
    size_t n;
    if (elf_getphdrnum(elf, &n) != 0) {
        set_why(why, whylen, elf_errmsg(-1));
        return -1;
    }
    f->segs = calloc(n ? n : 1, sizeof *f->segs);
    if (!f->segs) {
        set_why(why, whylen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
            continue;
        f->segs[f->nsegs++] = (struct dw_seg){ph.p_offset, ph.p_vaddr, ph.p_filesz};
    }
    if (f->nsegs == 0) {
        set_why(why, whylen, "no loadable segment (not an executable or shared library)");
        return -1;
    }
    return 0;
}

int dw_open(const char *path, struct dw_file **out, char *why, size_t whylen)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        set_why(why, whylen, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        set_why(why, whylen, "not a regular file");
        return -1;
    }
    /* Only an ELF file goes to libdwfl: given a sysfs file that merely calls itself regular
     * (/sys/kernel/notes, named by a hostile maps line), dwfl_report_elf refused it and leaked
     * 6 MiB (a reader fuzz, under LeakSanitizer). */
    unsigned char magic[SELFMAG];
    if (pread(fd, magic, SELFMAG, 0) != SELFMAG || memcmp(magic, ELFMAG, SELFMAG) != 0) {
        close(fd);
        set_why(why, whylen, "not an ELF file");
        return -1;
    }
    struct dw_file *f = calloc(1, sizeof *f);
    if (!f) {
        close(fd);
        set_why(why, whylen, "out of memory");
        return -1;
    }
    hmap_init(&f->cu_idx, 1);
    debuginfod_gate_arm(); /* before libdwfl may want libdebuginfod */
    f->dwfl = dwfl_begin(&callbacks);
    if (!f->dwfl) {
        close(fd);
        free(f);
        set_why(why, whylen, dwfl_errmsg(-1));
        return -1;
    }
    dwfl_report_begin(f->dwfl);
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    /* ET_DYN placed at its own p_vaddr (bias 0), ET_EXEC where it says: dwfl addresses are then
     * the file's virtual addresses. On success the fd belongs to libdwfl. */
    f->mod = dwfl_report_elf(f->dwfl, base, path, fd, 0, true);
    if (!f->mod) {
        set_why(why, whylen, dwfl_errmsg(-1));
        close(fd);
        dwfl_end(f->dwfl);
        free(f);
        return -1;
    }
    dwfl_report_end(f->dwfl, NULL, NULL);
    if (read_segments(f, why, whylen) != 0) {
        dw_close(f);
        return -1;
    }
    const unsigned char *bits;
    GElf_Addr idaddr;
    int nb = dwfl_module_build_id(f->mod, &bits, &idaddr);
    for (int i = 0; i < nb && i < 64; i++)
        snprintf(f->build_id + 2 * i, 3, "%02x", bits[i]);
    *out = f;
    return 0;
}

void dw_close(struct dw_file *f)
{
    if (!f)
        return;
    if (f->dwfl)
        dwfl_end(f->dwfl);
    free(f->segs);
    free(f->syms);
    for (size_t i = 0; i < f->ncus; i++)
        dwcu_free(f->cus[i]);
    free(f->cus);
    free(f->spans);
    hmap_free(&f->cu_idx);
    free(f);
}

const char *dw_build_id(const struct dw_file *f)
{
    return f->build_id;
}

int dw_has_dwarf(struct dw_file *f)
{
    if (f->dwarf_state == 0) {
        Dwarf_Addr b;
        f->dwarf_state = dwfl_module_getdwarf(f->mod, &b) ? 1 : -1;
    }
    return f->dwarf_state > 0;
}

int dw_off_to_vaddr(const struct dw_file *f, uint64_t off, uint64_t *vaddr)
{
    for (size_t i = 0; i < f->nsegs; i++) {
        const struct dw_seg *s = &f->segs[i];
        if (off >= s->off && off - s->off < s->filesz) {
            *vaddr = off - s->off + s->vaddr;
            return 0;
        }
    }
    return -1;
}

static int is_code_symbol(const GElf_Sym *s)
{
    int t = GELF_ST_TYPE(s->st_info);
    return t == STT_FUNC || t == STT_GNU_IFUNC || t == STT_NOTYPE;
}

/* The module's function symbols with a size (the symbol table libdwfl chose: .symtab of the
 * file or of its debug file, else .dynsym), sorted by address. */
static void load_symbols(struct dw_file *f)
{
    f->syms_loaded = 1;
    int n = dwfl_module_getsymtab(f->mod);
    if (n <= 1)
        return;
    f->syms = malloc((size_t)n * sizeof *f->syms);
    if (!f->syms)
        return;
    for (int i = 1; i < n; i++) {
        GElf_Sym sym;
        GElf_Addr addr;
        GElf_Word shndx;
        const char *name = dwfl_module_getsym_info(f->mod, i, &sym, &addr, &shndx, NULL, NULL);
        if (!name || !*name || !is_code_symbol(&sym) || sym.st_size == 0 || shndx == SHN_UNDEF)
            continue;
        int bind = GELF_ST_BIND(sym.st_info);
        f->syms[f->nsyms++] = (struct dw_sym){
            addr, sym.st_size, name, bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2};
        if (sym.st_size > f->max_size)
            f->max_size = sym.st_size;
    }
    sym_sort(f->syms, f->nsyms);
}

void dw_prepare(struct dw_file *f)
{
    if (!f->syms_loaded)
        load_symbols(f);
    dw_has_dwarf(f);
}

/* The symbol whose extent holds a (the closest start; a global name before a weak or local
 * alias), or NULL: never the nearest symbol below a when a is past its end. */
static const char *symbol_at(struct dw_file *f, uint64_t a)
{
    if (!f->syms_loaded)
        load_symbols(f);
    size_t lo = 0, hi = f->nsyms;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->syms[mid].start <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    const struct dw_sym *best = NULL;
    for (size_t i = lo, k = 0; i-- > 0 && k < SYM_SCAN; k++) {
        const struct dw_sym *s = &f->syms[i];
        if (a - s->start >= f->max_size)
            break; /* no symbol starting this far below can reach a */
        if (best && s->start != best->start)
            break;
        if (a - s->start < s->size)
            best = s; /* same start, scanned backwards: ends on the best rank */
    }
    return best ? best->name : NULL;
}

/* The function index of a compilation unit, built on first use; NULL if it cannot be. */
static const struct dwcu *cu_index(struct dw_file *f, Dwarf_Die *cudie)
{
    uint64_t key[1] = {dwarf_dieoffset(cudie)};
    int is_new;
    uint64_t *slot = hmap_get(&f->cu_idx, key, &is_new);
    if (!slot)
        return NULL;
    if (!is_new)
        return *slot ? f->cus[*slot - 1] : NULL;
    if (f->ncus == f->capcus) {
        size_t cap = f->capcus ? f->capcus * 2 : 16;
        struct dwcu **v = realloc(f->cus, cap * sizeof *v);
        if (!v)
            return NULL;
        f->cus = v;
        f->capcus = cap;
    }
    struct dwcu *cu = dwcu_build(cudie);
    if (!cu)
        return NULL; /* stays 0: not retried */
    f->cus[f->ncus++] = cu;
    slot = hmap_find(&f->cu_idx, key);
    if (slot)
        *slot = f->ncus;
    return cu;
}

static int by_span_low(const void *a, const void *b)
{
    const struct cu_span *x = a, *y = b;
    return x->low < y->low ? -1 : x->low > y->low;
}

/* Every CU's ranges (DW_AT_low_pc/high_pc or DW_AT_ranges), sorted by start. */
static void load_cu_spans(struct dw_file *f)
{
    f->spans_loaded = 1;
    size_t cap = 0;
    Dwarf_Die *cu = NULL;
    Dwarf_Addr bias;
    while ((cu = dwfl_module_nextcu(f->mod, cu, &bias)) != NULL) {
        Dwarf_Addr base, start, end;
        ptrdiff_t off = 0;
        int n = 0;
        while ((off = dwarf_ranges(cu, off, &base, &start, &end)) > 0 && n < CU_RANGES_MAX) {
            if (end <= start)
                continue;
            if (f->nspans == cap) {
                size_t ncap = cap ? cap * 2 : 256;
                struct cu_span *v = realloc(f->spans, ncap * sizeof *v);
                if (!v)
                    goto done;
                f->spans = v;
                cap = ncap;
            }
            f->spans[f->nspans++] = (struct cu_span){start + bias, end + bias, cu, bias};
            n++;
        }
    }
done:
    if (f->nspans)
        qsort(f->spans, f->nspans, sizeof *f->spans, by_span_low);
}

/* The CU whose own ranges hold dwfl address a, or NULL. */
static Dwarf_Die *cu_at(struct dw_file *f, Dwarf_Addr a, Dwarf_Addr *bias)
{
    if (!f->spans_loaded)
        load_cu_spans(f);
    size_t lo = 0, hi = f->nspans;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->spans[mid].low <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo, k = 0; i-- > 0 && k < SPAN_SCAN; k++)
        if (a < f->spans[i].high) {
            *bias = f->spans[i].bias;
            return f->spans[i].cu;
        }
    return NULL;
}

/* Whether the CU says which addresses it holds (DW_AT_low_pc/high_pc or DW_AT_ranges). */
static int cu_has_ranges(Dwarf_Die *cu)
{
    Dwarf_Addr base, start, end;
    return dwarf_ranges(cu, 0, &base, &start, &end) > 0;
}

/* The compilation unit holding dwfl address a, and its line there. libdwfl finds a CU through
 * .debug_aranges when the file has one, taking the nearest entry below the address; a file
 * whose .debug_aranges lists only some of its CUs gets a wrong CU so, and a line from that CU's
 * table (a cgo-linked Go binary: the linker lists only the C units, and every Go function got
 * /_/runtime/cgo/gcc_mmap.c:37). So libdwfl's CU is kept only when its own ranges hold the
 * address; otherwise the CU is the one whose ranges do, and the line comes from that CU's
 * table. A CU that gives no ranges at all is taken as libdwfl found it. */
static Dwarf_Die *cu_and_line(struct dw_file *f, Dwarf_Addr a, Dwarf_Addr *cubias, const char **file,
                              int *line)
{
    *file = NULL;
    *line = 0;
    Dwarf_Die *cu = dwfl_module_addrdie(f->mod, a, cubias);
    if (!cu || (dwarf_haspc(cu, a - *cubias) <= 0 && cu_has_ranges(cu))) {
        cu = cu_at(f, a, cubias);
        if (!cu)
            return NULL;
        Dwarf_Line *l = dwarf_getsrc_die(cu, a - *cubias);
        if (l && (*file = dwarf_linesrc(l, NULL, NULL)) != NULL && dwarf_lineno(l, line) != 0)
            *line = 0;
        if (!*file)
            *line = 0;
        return cu;
    }
    Dwfl_Line *l = dwfl_module_getsrc(f->mod, a);
    if (l) {
        *file = dwfl_lineinfo(l, NULL, line, NULL, NULL, NULL);
        if (!*file)
            *line = 0;
    }
    return cu;
}

int dw_lookup(struct dw_file *f, uint64_t vaddr, struct dw_frame *out, int max)
{
    if (max <= 0)
        return 0;
    Dwarf_Addr a = vaddr + f->bias;
    /* Only an address inside a symbol's extent gets its name. */
    const char *sname = symbol_at(f, a);
    int in_sym = sname != NULL;

    const char *file = NULL, *comp_dir = NULL;
    int line = 0;
    int n = 0;
    if (dw_has_dwarf(f)) {
        Dwarf_Addr cubias;
        Dwarf_Die *cu = cu_and_line(f, a, &cubias, &file, &line);
        const struct dwcu *idx = cu ? cu_index(f, cu) : NULL;
        if (idx)
            n = dwcu_chain(idx, a - cubias, file, line, out, max);
        Dwarf_Attribute at;
        comp_dir = cu ? dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &at)) : NULL;
        for (int i = 0; i < n; i++)
            out[i].comp_dir = comp_dir;
    }
    if (n > 0) {
        /* The out-of-line frame is named as the symbol table names the code there (a
         * "foo.cold" part, a clone), which DWARF may not. */
        if (in_sym)
            out[n - 1].name = sname;
        return n;
    }
    if (!in_sym)
        return 0;
    out[0] = (struct dw_frame){.name = sname, .file = file, .line = line, .comp_dir = comp_dir};
    return 1;
}
