/* unwlib.h: libunwind, loaded with dlopen(RTLD_LOCAL) at a process's first sample, never
 * linked. Linked, it sat in the program's global scope, and libunwind exports the whole C++
 * unwinder ABI (_Unwind_RaiseException, _Unwind_GetIPInfo, ...): where the program's own
 * libraries lack libgcc_s (a C program, Python loading a C++ extension), libgcc_s's and
 * libstdc++'s calls reached libunwind's, and one unwind ran half in each (a pthread_exit or
 * pthread_cancel crashed or skipped the destructors on the way). Loaded locally, nothing of it
 * answers the program. Loaded at the first sample rather than at start: mapping it and its
 * liblzma cost every process 0.2 ms, and most processes of a build or a shell script never take
 * a sample. Its thread-local data lives in the shim's own static TLS on every thread, reached
 * through the shim, never through glibc's dtv, which allocates (unwlib.c says why). Never loaded
 * in a handler. */
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

/* Once, at install (the constructor: the program has started no thread of its own yet): holds
 * a low pthread key for the fast tracer (unwlib_warm_fast), and loads libunwind at once where
 * the program has it mapped already (linked with it). 0, or -1 when that load failed. */
int unwlib_prepare(void);
/* Outside any handler, never two at a time (sampler.c's warm-up lock): loads the libunwind the
 * shim was built against, by soname, and resolves ps_unw. 0 when loaded; -1 when it cannot be
 * (said once in perfscope.log: samples then walk frame pointers), then and for good. */
int unwlib_load(void);
/* Once, on the writer, outside any handler, before the handler may use unw_backtrace: makes
 * the fast tracer's key and this thread's cache. 1 when the handler may use the fast tracer: it
 * then neither allocates nor reads the dtv there; 0 when not (said once in perfscope.log: the
 * handler then walks step by step, which touches neither). */
int unwlib_warm_fast(void);
/* Whether pc lies in libunwind's code (0 before it is loaded). */
int unwlib_has_pc(uintptr_t pc);

#endif
