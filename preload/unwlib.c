/* unwlib.c: libunwind, loaded locally at install (unwlib.h says why it is never linked). The
 * handler reads ps_unw only on a thread whose entry says unwlib_thread_ready, which comes after
 * unwlib_load returned 0; nothing here runs in a handler. */
#include "unwlib.h"

#include <dlfcn.h>
#include <link.h>

#include "interpose.h"
#include "log.h"
#include "objspan.h"

#ifndef PS_LIBUNWIND_SONAME
#error "PS_LIBUNWIND_SONAME: the soname of the libunwind the shim is built against (Makefile)"
#endif

#define UNWLIB_STR2(x) #x
#define UNWLIB_STR(x) UNWLIB_STR2(x) /* the symbol a libunwind.h name stands for */

/* The argument of __tls_get_addr (the x86-64 and most ABIs' tls_index). */
typedef struct {
    unsigned long module, offset;
} ps_tls_index;
extern void *__tls_get_addr(ps_tls_index *ti);

struct ps_unwlib ps_unw;
static int loaded;
static size_t tls_module; /* libunwind's TLS module id; 0: it has none */
static uintptr_t text_lo, text_hi;

static int find_text(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    uintptr_t pc = *(uintptr_t *)data, lo, hi;
    objspan_exec(info, &lo, &hi);
    if (pc < lo || pc >= hi)
        return 0;
    text_lo = lo;
    text_hi = hi;
    return 1;
}

int unwlib_has_pc(uintptr_t pc)
{
    return pc >= text_lo && pc < text_hi;
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

int unwlib_load(void)
{
    if (loaded)
        return loaded > 0 ? 0 : -1;
    loaded = -1;
    void *h = dlopen(PS_LIBUNWIND_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
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
    ps_unw = got;
    uintptr_t pc = (uintptr_t)got.backtrace;
    ps_real_dl_iterate_phdr(find_text, &pc);
    loaded = 1;
    return 0;
}

int unwlib_thread_ready(void)
{
    if (loaded <= 0)
        return 0;
    if (tls_module) {
        ps_tls_index ti = { tls_module, 0 };
        if (!__tls_get_addr(&ti))
            return 0;
    }
    return 1;
}
