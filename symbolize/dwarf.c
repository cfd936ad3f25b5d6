/* dwarf.c: address -> frames for one ELF file with libdwfl (see dwsym.h). One Dwfl per file,
 * kept open for the whole run; the callers cache results per address. It must never return the
 * nearest symbol for an address outside that symbol's extent, and never open a non-regular file. */
#include "dwsym.h"

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

struct dw_file {
    Dwfl *dwfl;
    Dwfl_Module *mod;
    GElf_Addr bias;        /* dwfl address = ELF vaddr + bias */
    struct dw_seg *segs;
    size_t nsegs;
    int dwarf_state;       /* 0 untried, 1 present, -1 absent */
    char build_id[129];
};

static char *debuginfo_path; /* NULL: libdwfl's default, ":.debug:/usr/lib/debug" */

static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
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
    struct dw_file *f = calloc(1, sizeof *f);
    if (!f) {
        close(fd);
        set_why(why, whylen, "out of memory");
        return -1;
    }
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

/* The function name a DIE carries, following abstract_origin and specification. */
static const char *die_name(Dwarf_Die *die)
{
    Dwarf_Attribute a;
    const char *s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
    if (!s)
        s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
    if (!s)
        s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
    return s;
}

static int is_function(Dwarf_Die *die)
{
    int tag = dwarf_tag(die);
    return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
           tag == DW_TAG_entry_point;
}

/* The inline chain at pc (a DWARF address) of the CU: frames innermost first, with the line
 * table's location for the innermost and each inlined call site for the one around it. */
static int inline_chain(Dwarf_Die *cu, Dwarf_Addr pc, const char *file, int line,
                        struct dw_frame *out, int max)
{
    Dwarf_Die *scopes = NULL;
    int ns = dwarf_getscopes(cu, pc, &scopes);
    if (ns <= 0) {
        free(scopes);
        return 0;
    }
    /* dwarf_getscopes continues into abstract definitions; the concrete nesting of the
     * innermost scope comes from dwarf_getscopes_die. */
    Dwarf_Die inner = scopes[0];
    free(scopes);
    Dwarf_Die *chain = NULL;
    int nc = dwarf_getscopes_die(&inner, &chain);
    if (nc <= 0) {
        free(chain);
        return 0;
    }
    Dwarf_Files *files = NULL;
    size_t nfiles = 0;
    if (dwarf_getsrcfiles(cu, &files, &nfiles) != 0)
        files = NULL;
    int n = 0;
    for (int i = 0; i < nc && n < max; i++) {
        Dwarf_Die *d = &chain[i];
        if (!is_function(d))
            continue;
        const char *name = die_name(d);
        int decl_line = 0;
        if (dwarf_decl_line(d, &decl_line) != 0)
            decl_line = 0;
        out[n++] = (struct dw_frame){
            .name = name ? name : "??",
            .file = file,
            .line = line,
            .decl_file = dwarf_decl_file(d),
            .decl_line = decl_line,
        };
        if (dwarf_tag(d) != DW_TAG_inlined_subroutine)
            break;
        Dwarf_Attribute a;
        Dwarf_Word v;
        file = NULL;
        line = 0;
        if (files && dwarf_formudata(dwarf_attr(d, DW_AT_call_file, &a), &v) == 0 && v < nfiles)
            file = dwarf_filesrc(files, v, NULL, NULL);
        if (dwarf_formudata(dwarf_attr(d, DW_AT_call_line, &a), &v) == 0 && v <= 0x7fffffff)
            line = (int)v;
    }
    free(chain);
    return n;
}

static int is_code_symbol(const GElf_Sym *s)
{
    int t = GELF_ST_TYPE(s->st_info);
    return t == STT_FUNC || t == STT_GNU_IFUNC || t == STT_NOTYPE;
}

int dw_lookup(struct dw_file *f, uint64_t vaddr, struct dw_frame *out, int max)
{
    if (max <= 0)
        return 0;
    Dwarf_Addr a = vaddr + f->bias;
    GElf_Off off = 0;
    GElf_Sym sym;
    const char *sname = dwfl_module_addrinfo(f->mod, a, &off, &sym, NULL, NULL, NULL);
    /* Only an address inside a symbol's extent gets its name: libdwfl may answer with the
     * nearest symbol below, or a sizeless one. */
    int in_sym = sname && *sname && is_code_symbol(&sym) && sym.st_size > 0 && off < sym.st_size;

    const char *file = NULL;
    int line = 0;
    Dwfl_Line *l = dw_has_dwarf(f) ? dwfl_module_getsrc(f->mod, a) : NULL;
    if (l) {
        file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
        if (!file)
            line = 0;
    }
    int n = 0;
    if (f->dwarf_state > 0) {
        Dwarf_Addr cubias;
        Dwarf_Die *cu = dwfl_module_addrdie(f->mod, a, &cubias);
        if (cu)
            n = inline_chain(cu, a - cubias, file, line, out, max);
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
    out[0] = (struct dw_frame){.name = sname, .file = file, .line = line};
    return 1;
}
