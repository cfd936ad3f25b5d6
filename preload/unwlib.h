/* unwlib.h: libunwind, loaded with dlopen(RTLD_LOCAL) when the shim installs its handler, never
 * linked. Linked, it sat in the program's global scope, and libunwind exports the whole C++
 * unwinder ABI (_Unwind_RaiseException, _Unwind_GetIPInfo, ...): where the program's own
 * libraries lack libgcc_s (a C program, Python loading a C++ extension), libgcc_s's and
 * libstdc++'s calls reached libunwind's, and one unwind ran half in each (a pthread_exit or
 * pthread_cancel crashed or skipped the destructors on the way). Loaded locally, nothing of it
 * answers the program. Its thread-local data is then dynamic TLS, which glibc allocates with
 * malloc on a thread's first access: never in a handler, so each thread makes its block before
 * the handler may walk it with libunwind (unwlib_thread_ready), and libunwind reaches that block
 * through the shim, never through glibc's dtv (unwlib.c says why). Never loaded in a handler. */
#ifndef PERFSCOPE_UNWLIB_H
#define PERFSCOPE_UNWLIB_H

#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <stdint.h>

/* libunwind's entry points, set by unwlib_load before it returns 0 and never changed after. */
struct ps_unwlib {
    int (*getcontext)(unw_context_t *);
    int (*init_local)(unw_cursor_t *, unw_context_t *);
    int (*init_local2)(unw_cursor_t *, unw_context_t *, int);
    int (*get_reg)(unw_cursor_t *, unw_regnum_t, unw_word_t *);
    int (*step)(unw_cursor_t *);
    int (*backtrace)(void **, int);
};
extern struct ps_unwlib ps_unw;

/* Once, at install (the constructor: the program has started no thread of its own yet): loads
 * the libunwind the shim was built against, by soname, and resolves ps_unw. 0 when ready; -1
 * when it cannot be loaded (said once in perfscope.log: samples then walk frame pointers). */
int unwlib_load(void);
/* On the calling thread, outside any handler: makes its libunwind TLS block (a malloc). 1 when
 * the handler may walk this thread with libunwind, 0 when not (libunwind not loaded). */
int unwlib_thread_ready(void);
/* Once, on the writer, outside any handler, before the handler may use unw_backtrace: makes
 * the fast tracer's key and this thread's cache. 1 when the handler may use the fast tracer: it
 * then neither allocates nor reads the dtv there; 0 when not (said once in perfscope.log: the
 * handler then walks step by step, which touches neither). */
int unwlib_warm_fast(void);
/* Whether pc lies in libunwind's code (0 before it is loaded). */
int unwlib_has_pc(uintptr_t pc);

#endif
