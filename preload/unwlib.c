/* unwlib.c: libunwind, loaded locally at a process's first sample (unwlib.h says why it is
 * never linked, and why not at start). The handler reads ps_unw only once unwlib_load returned 0
 * (and the writer's warm-up, sampler.c, made it ready). Two of libunwind's relocated slots point
 * here: __tls_get_addr (its thread-local data in the shim's own static TLS, never glibc's dtv)
 * and open (none while the shim is inside libunwind). Those two functions run in the handler;
 * nothing else here does. */
#include "unwlib.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "interpose.h"
#include "log.h"
#include "objspan.h"
#include "sampler.h"
#include "shim.h"
#include "shimload.h"

#ifndef PS_LIBUNWIND_SONAME
#error "PS_LIBUNWIND_SONAME: the soname of the libunwind the shim is built against (Makefile)"
#endif

#define UNWLIB_STR2(x) #x
#define UNWLIB_STR(x) UNWLIB_STR2(x) /* the symbol a libunwind.h name stands for */

/* glibc keeps the values of the first 32 pthread keys in the thread's descriptor; a key past
 * them has its value in a block of 32 that pthread_setspecific callocs on the thread's first
 * use of that block. */
#define UNWLIB_KEYS_INLINE 32

/* The argument of __tls_get_addr (the x86-64 and most ABIs' tls_index). */
typedef struct {
    unsigned long module, offset;
} ps_tls_index;
extern void *__tls_get_addr(ps_tls_index *ti);

/* The room for libunwind's thread-local data on every thread: the shim's own TLS, which is
 * static (initial-exec), so glibc made it with the thread, zero-filled, before any handler ran.
 * Debian's libunwind has 16 bytes of it (the fast tracer's cache pointer and a flag), all zero
 * at start; a libunwind with more than this, or aligned more strictly, is not used (logged). */
#define UNWLIB_TLS_ROOM 64
static __thread unsigned char tls_storage[UNWLIB_TLS_ROOM] __attribute__((aligned(UNWLIB_TLS_ROOM)));
static __thread int tls_storage_set; /* its initial image copied (libunwind's .tdata, if any) */

struct ps_unwlib ps_unw;
static int loaded;                /* 0 not tried, 1 loaded, -1 failed (for good) */
static size_t tls_module;         /* libunwind's TLS module id; 0: it has none */
static const void *tls_image;     /* its TLS initial image (PT_TLS) */
static size_t tls_filesz, tls_memsz, tls_align;
static int tls_private;           /* its calls to __tls_get_addr reach tls_get_addr_private */
static _Atomic uintptr_t text_lo, text_hi; /* read by wrappers on any thread (unwlib_has_pc) */
static uintptr_t relro_lo, relro_hi;
static pthread_key_t kept_key;    /* a low key slot held for the fast tracer's key, until it is made */
static int key_kept;

/* libunwind's thread-local data (the fast tracer's cache pointer) is dynamic TLS, reached
 * through __tls_get_addr. glibc's __tls_get_addr allocates a thread's block with malloc on its
 * first access, and first brings the calling thread's dtv up to the loader's TLS generation,
 * which every dlopen or dlclose of a library with TLS moves on: it frees the blocks of
 * libraries unloaded since, and grows the dtv with realloc. In the handler, over a thread
 * interrupted inside malloc, either waited for good on the arena's lock. So libunwind's own
 * slot for __tls_get_addr points here, and its block on every thread is tls_storage: made with
 * the thread, never moved, and reached without the loader. */
#if defined(__x86_64__)
__attribute__((force_align_arg_pointer))
#endif
static void *tls_get_addr_private(ps_tls_index *ti)
{
    if (ti->module != tls_module)
        return __tls_get_addr(ti); /* not libunwind's: never asked, in practice */
    if (!tls_storage_set) {
        if (tls_filesz)
            memcpy(tls_storage, tls_image, tls_filesz);
        tls_storage_set = 1;
    }
    return tls_storage + ti->offset;
}

static int find_spans(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    uintptr_t pc = *(uintptr_t *)data, lo, hi;
    objspan_exec(info, &lo, &hi);
    if (pc < lo || pc >= hi)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_GNU_RELRO) {
            relro_lo = info->dlpi_addr + ph->p_vaddr;
            relro_hi = relro_lo + ph->p_memsz;
        } else if (ph->p_type == PT_TLS) {
            tls_image = (const void *)(info->dlpi_addr + ph->p_vaddr); /* its .tdata, as mapped */
            tls_filesz = ph->p_filesz;
            tls_memsz = ph->p_memsz;
            tls_align = ph->p_align;
        }
    }
    atomic_store(&text_lo, lo);
    atomic_store(&text_hi, hi);
    return 1;
}

int unwlib_has_pc(uintptr_t pc)
{
    return pc >= atomic_load_explicit(&text_lo, memory_order_relaxed) &&
           pc < atomic_load_explicit(&text_hi, memory_order_relaxed);
}

#if defined(__x86_64__)
#define UNWLIB_R_JUMP_SLOT R_X86_64_JUMP_SLOT
#define UNWLIB_R_GLOB_DAT R_X86_64_GLOB_DAT
#endif

/* In the handler (and the writer's warm-up), libunwind looks for the unwind tables of code
 * without .eh_frame_hdr in its file's .debug_frame: it open()s the file (at the lowest free
 * descriptor, without O_CLOEXEC: a number the program's next open would have had) and then
 * mallocs its tables, on nearly every sample of such code (488 opens in 1 s at 997 Hz). So its
 * open fails there, as for a file that is not there: libunwind then walks that code without
 * it. A program linked with libunwind that shares this copy opens as it did. */
int __real_open(const char *path, int flags, ...);

static int open_private(const char *path, int flags, ...)
{
    if (ps_in_unwind > 0) {
        errno = ENOENT;
        return -1;
    }
    mode_t mode = 0;
    if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) { /* O_TMPFILE holds O_DIRECTORY */
        va_list ap;
        va_start(ap, flags);
        mode = va_arg(ap, mode_t);
        va_end(ap);
    }
    /* The shim's open (shimopen.h): announced like the shim's own, also for a program that
     * shares this copy of libunwind (its close then skips the target's side of the gate). */
    return open(path, flags, mode);
}

/* Points each of libunwind's relocated slots for the function `name` (its PLT's, or its GOT's
 * where built without a PLT) from `bound` to `to`. The number of slots changed; 0 where there
 * are none (a TLS descriptor ABI for __tls_get_addr, or an architecture this does not know) or
 * one is bound to something else (then none is changed). */
static int redirect(void *h, const char *name, void *bound, void *to)
{
#ifdef UNWLIB_R_JUMP_SLOT
    struct link_map *lm;
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || !lm->l_ld)
        return 0;
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const ElfW(Rela) *tables[2] = { NULL, NULL };
    size_t sizes[2] = { 0, 0 };
    for (const ElfW(Dyn) *d = lm->l_ld; d->d_tag != DT_NULL; d++) {
        /* glibc relocates the dynamic section's addresses in place on this port; the test
         * keeps this right where a loader leaves them as linked. */
        uintptr_t p = d->d_un.d_ptr < lm->l_addr ? d->d_un.d_ptr + lm->l_addr : d->d_un.d_ptr;
        switch (d->d_tag) {
        case DT_SYMTAB: symtab = (const ElfW(Sym) *)p; break;
        case DT_STRTAB: strtab = (const char *)p; break;
        case DT_JMPREL: tables[0] = (const ElfW(Rela) *)p; break;
        case DT_PLTRELSZ: sizes[0] = d->d_un.d_val; break;
        case DT_RELA: tables[1] = (const ElfW(Rela) *)p; break;
        case DT_RELASZ: sizes[1] = d->d_un.d_val; break;
        case DT_PLTREL:
            if (d->d_un.d_val != DT_RELA)
                return 0;
            break;
        }
    }
    if (!symtab || !strtab)
        return 0;
    void **slots[8];
    int n = 0;
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; tables[k] && i < sizes[k] / sizeof(ElfW(Rela)); i++) {
            const ElfW(Rela) *r = &tables[k][i];
            unsigned long type = ELF64_R_TYPE(r->r_info), sym = ELF64_R_SYM(r->r_info);
            if ((type != UNWLIB_R_JUMP_SLOT && type != UNWLIB_R_GLOB_DAT) || sym == 0 ||
                strcmp(strtab + symtab[sym].st_name, name) != 0)
                continue;
            void **slot = (void **)(lm->l_addr + r->r_offset);
            /* Bound as the shim's own reference is, or not bound yet (a lazy PLT slot points
             * back into the library's own code: a program linked with libunwind loaded it
             * lazily before the shim's dlopen found it there). Anything else: left as it is. */
            uintptr_t now = (uintptr_t)*slot;
            if ((now != (uintptr_t)bound && !unwlib_has_pc(now)) || n == 8)
                return 0;
            slots[n++] = slot;
        }
    }
    long page = sysconf(_SC_PAGESIZE);
    for (int i = 0; i < n; i++) {
        uintptr_t at = (uintptr_t)slots[i], pg = at & ~(uintptr_t)(page - 1);
        int relro = at >= relro_lo && at < relro_hi;
        if (relro && mprotect((void *)pg, (size_t)page, PROT_READ | PROT_WRITE) != 0)
            return i;
        __atomic_store_n(slots[i], to, __ATOMIC_RELEASE);
        if (relro)
            mprotect((void *)pg, (size_t)page, PROT_READ);
    }
    return n;
#else
    (void)h, (void)name, (void)bound, (void)to;
    return 0;
#endif
}

/* dlsym into a typed pointer, checked against libunwind.h's declaration at compile time. */
#define UNWLIB_RESOLVE(field, name)                                                                \
    do {                                                                                           \
        _Static_assert(__builtin_types_compatible_p(__typeof__(&name), __typeof__(ps_unw.field)), \
                       #name);                                                                     \
        *(void **)&got.field = dlsym(h, UNWLIB_STR(name));                                         \
        if (!got.field)                                                                            \
            missing = UNWLIB_STR(name);                                                            \
    } while (0)

/* The libunwind the shim is built against is mapped already (a program linked with it): it is
 * taken at once, before the program's threads use it with glibc's blocks. */
static int is_libunwind(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    const char *name = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    if (name && strcmp(name + 1, PS_LIBUNWIND_SONAME) == 0)
        *(int *)data = 1;
    return *(int *)data;
}

int unwlib_prepare(void)
{
    /* The fast tracer makes its key on first use, after the program may have made 32: a slot
     * among the first 32 is held for it now, before the program's own code runs. */
    if (pthread_key_create(&kept_key, NULL) == 0) {
        key_kept = kept_key < UNWLIB_KEYS_INLINE;
        if (!key_kept)
            pthread_key_delete(kept_key);
    }
    int mapped = 0;
    ps_real_dl_iterate_phdr(is_libunwind, &mapped);
    return mapped ? unwlib_load() : 0;
}

int unwlib_load(void)
{
    if (loaded)
        return loaded > 0 ? 0 : -1;
    loaded = -1;
    /* Its descriptors are numbers the target did not open (shimload.h). */
    void *h = shimload_open(PS_LIBUNWIND_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!h) {
        const char *why = dlerror();
        ps_log("cannot load %s (%s): stacks are walked by frame pointers", PS_LIBUNWIND_SONAME,
               why ? why : "no reason given");
        return -1;
    }
    struct ps_unwlib got;
    const char *missing = NULL;
    UNWLIB_RESOLVE(getcontext, unw_tdep_getcontext);
    UNWLIB_RESOLVE(init_local, unw_init_local);
    UNWLIB_RESOLVE(init_local2, unw_init_local2);
    UNWLIB_RESOLVE(get_reg, unw_get_reg);
    UNWLIB_RESOLVE(step, unw_step);
    UNWLIB_RESOLVE(backtrace, unw_backtrace);
    if (missing || dlinfo(h, RTLD_DI_TLS_MODID, &tls_module) != 0) {
        ps_log("%s: %s: stacks are walked by frame pointers", PS_LIBUNWIND_SONAME,
               missing ? missing : "no TLS module id");
        return -1; /* left loaded (RTLD_NODELETE) */
    }
    uintptr_t pc = (uintptr_t)got.backtrace;
    ps_real_dl_iterate_phdr(find_spans, &pc);
    if (tls_module && (tls_memsz > UNWLIB_TLS_ROOM || tls_align > UNWLIB_TLS_ROOM || tls_filesz > tls_memsz)) {
        ps_log("%s has %zu bytes of thread-local data aligned to %zu, more than the shim keeps for it (%d): "
               "stacks are walked by frame pointers", PS_LIBUNWIND_SONAME, tls_memsz, tls_align, UNWLIB_TLS_ROOM);
        return -1;
    }
    /* Where the slot cannot be pointed here (a TLS descriptor ABI), the fast tracer, the one
     * user of the TLS, stays off (unwlib_warm_fast). */
    tls_private = !tls_module || redirect(h, "__tls_get_addr", (void *)&__tls_get_addr,
                                          (void *)&tls_get_addr_private) > 0;
    /* The C library's open as libunwind's slot holds it: the shim's own name for it is the
     * linker's __real_open (shimopen.h: the shim's `open` is routed to __wrap_open). */
    redirect(h, "open", (void *)&__real_open, (void *)&open_private); /* where it cannot: as before */
    ps_unw = got;
    loaded = 1;
    return 0;
}

int unwlib_warm_fast(void)
{
    void *warm[8];
    if (!key_kept) {
        ps_log("32 pthread keys were in use when the shim started: libunwind's fast tracer would "
               "allocate in the handler, so stacks are walked step by step");
        return 0;
    }
    /* The fast tracer's key is whichever of the first 32 gets a value on this thread in its
     * first call (the writer sets none of its own): usually the slot kept, but a program linked
     * with libunwind that used the tracer before this made its key then, and another low one is
     * as good. Key 0 never counts: where its pthread_key_create failed (every key taken), the
     * tracer uses key 0, someone else's (the shim's own, or the program's). */
    void *before[UNWLIB_KEYS_INLINE];
    for (pthread_key_t k = 0; k < UNWLIB_KEYS_INLINE; k++)
        before[k] = pthread_getspecific(k);
    key_kept = 0;
    pthread_key_delete(kept_key); /* the fast tracer's own key takes this slot, the lowest free */
    ps_unw.backtrace(warm, 8);
    int low = 0;
    for (pthread_key_t k = 1; k < UNWLIB_KEYS_INLINE; k++)
        low |= !before[k] && pthread_getspecific(k);
    if (!low) {
        ps_log("libunwind's fast tracer's pthread key is not among the first 32: it would "
               "allocate in the handler, so stacks are walked step by step");
        return 0;
    }
    if (!tls_private) {
        ps_log("libunwind's calls to __tls_get_addr could not be pointed at the shim's: its fast "
               "tracer would update the dtv in the handler, so stacks are walked step by step");
        return 0;
    }
    return 1;
}
