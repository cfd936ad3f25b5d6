/* perfscope.h: the optional in-process phase-marker API.
 *
 * A program built against this header runs unchanged without the shim: the functions are weak
 * references, and the macros below call them only when libperfscope.so is loaded (LD_PRELOAD).
 * Without the shim every call is a no-op; it must never crash or change what the program does.
 *
 *   perfscope_begin("prefill");
 *   ...
 *   perfscope_end("prefill", 512);   // tokens < 0: none
 *
 * Names follow the markers file's rules: [A-Za-z0-9_.-], at most 64 bytes.
 *
 * Nothing to link: `cc $(pkg-config --cflags --libs perfscope)` (docs/install.md). A program
 * linked without PIE (-no-pie) has the weak references resolved to nothing at link time, so its
 * calls stay no-ops even under the shim.
 */
#ifndef PERFSCOPE_H
#define PERFSCOPE_H

#ifdef __cplusplus
extern "C" {
#endif

extern void perfscope_begin(const char *name) __attribute__((weak));
extern void perfscope_end(const char *name, long long tokens) __attribute__((weak));

#ifdef __cplusplus
}
#endif

/* A function-like macro is not expanded again inside its own expansion, so the inner call is
 * the real function: `perfscope_begin("x")` is safe whether or not the shim is loaded. */
#define perfscope_begin(name) (perfscope_begin ? perfscope_begin(name) : (void)0)
#define perfscope_end(name, tokens) (perfscope_end ? perfscope_end((name), (tokens)) : (void)0)

#endif
