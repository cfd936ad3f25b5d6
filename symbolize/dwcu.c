/* dwcu.c: the per-compilation-unit function index (see dwcu.h). It must never recurse on the
 * DIE tree (an explicit stack, capped), never walk more parents than there are nodes, and never
 * keep anything but pointers into libdw's own data for names and files. */
#include "dwcu.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DIE_DEPTH 512

struct node {
    int32_t parent;           /* enclosing function-like node, -1 none */
    int is_inline;
    const char *name;
    const char *decl_file;
    int decl_line;
    const char *call_file;    /* inlined calls: where the call is */
    int call_line;
    uint32_t first_range, nranges; /* into by_node */
};

struct range {
    Dwarf_Addr low, high;
    uint32_t node;
    uint32_t depth;
};

struct dwcu {
    struct node *nodes;
    size_t nnodes, capnodes;
    struct range *ranges;     /* sorted by low, then depth */
    size_t nranges, capranges;
    struct range *by_node;    /* the same ranges grouped by node, for containment */
};

static const char *die_name(Dwarf_Die *die)
{
    Dwarf_Attribute a;
    const char *s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
    if (!s)
        s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
    if (!s)
        s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
    return s ? s : "??";
}

static int grow(void **v, size_t *cap, size_t n, size_t sz)
{
    if (n < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 64;
    void *nv = realloc(*v, ncap * sz);
    if (!nv)
        return -1;
    *v = nv;
    *cap = ncap;
    return 0;
}

/* Adds a function-like DIE with code: its node and ranges. -1: out of memory; 0: no code. */
static int add_node(struct dwcu *cu, Dwarf_Die *d, int32_t parent, uint32_t depth,
                    Dwarf_Files *files, size_t nfiles, int32_t *id)
{
    size_t first = cu->nranges;
    Dwarf_Addr base, start, end;
    ptrdiff_t off = 0;
    int n = 0;
    while ((off = dwarf_ranges(d, off, &base, &start, &end)) > 0 && n < 4096) {
        if (end <= start)
            continue;
        if (grow((void **)&cu->ranges, &cu->capranges, cu->nranges, sizeof *cu->ranges) != 0)
            return -1;
        cu->ranges[cu->nranges++] = (struct range){start, end, (uint32_t)cu->nnodes, depth};
        n++;
    }
    if (n == 0) {
        *id = parent; /* a declaration or an abstract instance: not code */
        return 0;
    }
    if (grow((void **)&cu->nodes, &cu->capnodes, cu->nnodes, sizeof *cu->nodes) != 0)
        return -1;
    struct node *nd = &cu->nodes[cu->nnodes];
    memset(nd, 0, sizeof *nd);
    nd->parent = parent;
    nd->is_inline = dwarf_tag(d) == DW_TAG_inlined_subroutine;
    nd->name = die_name(d);
    nd->decl_file = dwarf_decl_file(d);
    if (dwarf_decl_line(d, &nd->decl_line) != 0 || nd->decl_line < 0)
        nd->decl_line = 0;
    if (nd->is_inline) {
        Dwarf_Attribute a;
        Dwarf_Word v;
        if (files && dwarf_formudata(dwarf_attr(d, DW_AT_call_file, &a), &v) == 0 && v < nfiles)
            nd->call_file = dwarf_filesrc(files, v, NULL, NULL);
        if (dwarf_formudata(dwarf_attr(d, DW_AT_call_line, &a), &v) == 0 && v <= 0x7fffffff)
            nd->call_line = (int)v;
    }
    nd->first_range = (uint32_t)first;
    nd->nranges = (uint32_t)n;
    *id = (int32_t)cu->nnodes++;
    return 0;
}

static int by_low_depth(const void *a, const void *b)
{
    const struct range *x = a, *y = b;
    if (x->low != y->low)
        return x->low < y->low ? -1 : 1;
    return x->depth < y->depth ? -1 : x->depth > y->depth;
}

struct frame {
    Dwarf_Die die;
    int32_t parent;
    uint32_t depth;
};

struct dwcu *dwcu_build(Dwarf_Die *cudie)
{
    struct dwcu *cu = calloc(1, sizeof *cu);
    struct frame *stack = malloc(MAX_DIE_DEPTH * sizeof *stack);
    if (!cu || !stack) {
        free(cu);
        free(stack);
        return NULL;
    }
    Dwarf_Files *files = NULL;
    size_t nfiles = 0;
    if (dwarf_getsrcfiles(cudie, &files, &nfiles) != 0)
        files = NULL;
    size_t top = 0;
    int oom = 0;
    if (dwarf_child(cudie, &stack[0].die) == 0) {
        stack[0].parent = -1;
        stack[0].depth = 1;
        top = 1;
    }
    /* Each stack entry is the next DIE to visit at its level: visit it, replace it by its
     * sibling, and push its first child above it. */
    while (top > 0 && !oom) {
        struct frame *fr = &stack[top - 1];
        Dwarf_Die die = fr->die;
        int32_t parent = fr->parent, me = parent;
        uint32_t depth = fr->depth;
        int tag = dwarf_tag(&die);
        if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine || tag == DW_TAG_entry_point)
            oom = add_node(cu, &die, parent, depth, files, nfiles, &me) != 0;
        if (dwarf_siblingof(&die, &fr->die) != 0)
            top--; /* this level is done */
        Dwarf_Die child;
        if (!oom && dwarf_haschildren(&die) && top < MAX_DIE_DEPTH && dwarf_child(&die, &child) == 0)
            stack[top++] = (struct frame){child, me, depth + 1};
    }
    free(stack);
    cu->by_node = malloc((cu->nranges ? cu->nranges : 1) * sizeof *cu->by_node);
    if (oom || !cu->by_node) {
        dwcu_free(cu);
        return NULL;
    }
    if (cu->nranges) {
        memcpy(cu->by_node, cu->ranges, cu->nranges * sizeof *cu->ranges);
        qsort(cu->ranges, cu->nranges, sizeof *cu->ranges, by_low_depth);
    }
    return cu;
}

void dwcu_free(struct dwcu *cu)
{
    if (!cu)
        return;
    free(cu->nodes);
    free(cu->ranges);
    free(cu->by_node);
    free(cu);
}

static int holds(const struct dwcu *cu, int32_t node, Dwarf_Addr pc)
{
    const struct node *n = &cu->nodes[node];
    for (uint32_t i = 0; i < n->nranges; i++) {
        const struct range *r = &cu->by_node[n->first_range + i];
        if (r->low <= pc && pc < r->high)
            return 1;
    }
    return 0;
}

int dwcu_chain(const struct dwcu *cu, Dwarf_Addr pc, const char *file, int line,
               struct dw_frame *out, int max)
{
    if (!cu || !cu->nranges)
        return 0;
    /* The range with the greatest start at or below pc (deepest on a tie); the innermost
     * function holding pc is its node or one around it. */
    size_t lo = 0, hi = cu->nranges;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cu->ranges[mid].low <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return 0;
    int32_t node = (int32_t)cu->ranges[lo - 1].node;
    size_t steps = 0;
    while (node >= 0 && !holds(cu, node, pc) && steps++ < cu->nnodes)
        node = cu->nodes[node].parent;
    int n = 0;
    steps = 0;
    while (node >= 0 && n < max && steps++ < cu->nnodes) {
        const struct node *nd = &cu->nodes[node];
        out[n++] = (struct dw_frame){
            .name = nd->name, .file = file, .line = line,
            .decl_file = nd->decl_file, .decl_line = nd->decl_line,
        };
        if (!nd->is_inline)
            break;
        file = nd->call_file;
        line = nd->call_line;
        node = nd->parent;
    }
    return n;
}
