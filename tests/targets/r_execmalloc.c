/* r_execmalloc: an exec from a signal handler that interrupted malloc (execve is
 * async-signal-safe; a crash handler that execs its reporter after a fault in a corrupted heap
 * does this). The program's own malloc wraps the C library's and, once armed, raises SIGUSR1
 * from inside itself, as if the signal had come there; the handler execs `echo`. A malloc
 * entered again meanwhile (by anything on the way to the exec: the thread would wait forever on
 * the C library's arena lock) says so and ends with status 3 instead of hanging. First 0.1 s of
 * CPU (samples to write) and a dlopen (a library loaded since the last maps snapshot). Without
 * the shim: "exec from the handler ran". */
#define _GNU_SOURCE
#include "burn.h"
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern char **environ;

DEFINE_BURN_SINK
DEFINE_BURN(burn_execmalloc)

static __thread volatile sig_atomic_t armed, inside; /* this thread's: other threads allocate as they like */

static void reentered(void)
{
    static const char m[] = "malloc entered again inside the interrupted malloc\n";
    if (write(2, m, sizeof m - 1) < 0) { /* nothing to do */ }
    _exit(3);
}

static void enter(void)
{
    if (inside)
        reentered();
    inside = 1;
    if (armed) {
        armed = 0;
        raise(SIGUSR1);
    }
}

void *malloc(size_t n)
{
    enter();
    void *p = __libc_malloc(n);
    inside = 0;
    return p;
}

void *calloc(size_t a, size_t b)
{
    enter();
    void *p = __libc_calloc(a, b);
    inside = 0;
    return p;
}

void *realloc(void *q, size_t n)
{
    enter();
    void *p = __libc_realloc(q, n);
    inside = 0;
    return p;
}

void free(void *q)
{
    enter();
    __libc_free(q);
    inside = 0;
}

static void on_usr1(int sig)
{
    (void)sig;
    char *argv[] = { "echo", "exec from the handler ran", NULL };
    execve("/bin/echo", argv, environ);
    _exit(4);
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    burn_execmalloc(0.1);
    usleep(50000); /* the writer's pass: the sample file and its first maps snapshot made */
    void *h = dlopen("libz.so.1", RTLD_NOW);
    if (!h)
        h = dlopen("libm.so.6", RTLD_NOW);
    armed = 1;
    void *volatile p = malloc(100); /* volatile: not optimised away */
    free(p);
    (void)h;
    return 5; /* never: the handler execs */
}
