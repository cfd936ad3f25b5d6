/* r_nohdr: what the SIGPROF handler opens and allocates while the thread runs in a library
 * without .eh_frame_hdr (r_nohdr_lib.so, linked at build time). The program exports open and
 * malloc & co. (libunwind's and libc's calls bind to them) and counts the calls made on its
 * alternate signal stack, where only a handler with SA_ONSTACK (the shim's) runs. Spins 1 s of
 * CPU in the library; prints "opens in the handler: O; heap calls in the handler: H" (0 and 0
 * without the shim) and exits 0. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <time.h>

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
unsigned nohdr_spin(unsigned x, int rounds);

#define ALT_SIZE (256 * 1024)
static char alt[ALT_SIZE];
static _Atomic int alt_on;
static _Atomic long heap, opens;

static int on_alt(void)
{
    char here;
    return atomic_load(&alt_on) && &here >= alt && &here < alt + ALT_SIZE;
}
void *malloc(size_t n) { if (on_alt()) heap++; return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { if (on_alt()) heap++; return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { if (on_alt()) heap++; return __libc_realloc(p, n); }
void free(void *p) { if (on_alt()) heap++; __libc_free(p); }

int open(const char *path, int flags, ...)
{
    static int (*_Atomic real)(const char *, int, ...);
    int (*f)(const char *, int, ...) = atomic_load(&real);
    if (!f) {
        f = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
        atomic_store(&real, f);
    }
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = va_arg(ap, mode_t);
        va_end(ap);
    }
    if (on_alt())
        opens++;
    return f(path, flags, mode);
}

int main(void)
{
    stack_t ss = { .ss_sp = alt, .ss_size = ALT_SIZE, .ss_flags = 0 };
    if (sigaltstack(&ss, NULL) != 0)
        abort();
    atomic_store(&alt_on, 1);
    struct timespec a, b;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
    unsigned x = 1;
    do {
        x = nohdr_spin(x, 100000);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    } while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < 1.0);
    printf("opens in the handler: %ld; heap calls in the handler: %ld\n", atomic_load(&opens), atomic_load(&heap));
    return (int)(x & 0);
}
