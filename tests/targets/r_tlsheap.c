/* r_tlsheap: what the SIGPROF handler allocates or frees on the target's threads. The program
 * exports malloc, calloc, realloc and free (so libc and the loader call them) and counts the
 * calls each of its threads makes while on its alternate signal stack: nothing of the program
 * runs there, only a handler with SA_ONSTACK (the shim's). The same for __tls_get_addr. Each
 * part prints one line, "heap calls in the handler: N; __tls_get_addr calls in the handler: M"
 * (0 and 0 without the shim), and exits 0.
 * Usage: r_tlsheap PART [DIR]
 * - dtv DIR: libraries with TLS loaded and unloaded while sampled. A worker dlopens DIR/tls_N.so
 *   (N = 0..39, copies of r_tlsheap_lib.so), touches its TLS, has the main thread touch it too,
 *   and dlcloses every other one. Each load or unload moves the loader's TLS generation on, so
 *   each thread's next __tls_get_addr brings its dtv up to date: frees the blocks of unloaded
 *   libraries, grows the dtv.
 * - keys: 40 pthread keys made before the first samples, then 8 threads one after the other,
 *   each 0.2 s on the CPU: a key past the first 32 has its value in a block of slots that
 *   pthread_setspecific callocs on each thread's first use.
 * - hang DIR: the main thread mallocs and frees in a loop (the arena's lock held much of the
 *   time) while a worker 20 times dlopens DIR/tls_N.so, has the main thread touch its 64 KiB TLS
 *   block, and dlcloses it: a free of that block in the handler, over main interrupted in
 *   malloc, waits for good. Prints the count when done. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

#define ALT_SIZE (256 * 1024)
#define ALT_MAX 16
static char alt_stacks[ALT_MAX][ALT_SIZE];
static _Atomic int alt_used;
static __thread char *alt_lo;
static _Atomic long in_handler, tls_in_handler;

static void alt_setup(void)
{
    int i = atomic_fetch_add(&alt_used, 1);
    if (i >= ALT_MAX)
        abort();
    stack_t ss = { .ss_sp = alt_stacks[i], .ss_size = ALT_SIZE, .ss_flags = 0 };
    if (sigaltstack(&ss, NULL) != 0)
        abort();
    alt_lo = alt_stacks[i];
}

static int on_alt_stack(void)
{
    char here;
    return alt_lo && &here >= alt_lo && &here < alt_lo + ALT_SIZE;
}
static void note(void)
{
    if (on_alt_stack())
        atomic_fetch_add(&in_handler, 1);
}
void *malloc(size_t n) { note(); return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { note(); return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { note(); return __libc_realloc(p, n); }
void free(void *p) { note(); __libc_free(p); }

/* __tls_get_addr too (the libraries' calls to it bind to the program's, as for malloc): on a
 * stale dtv it is what reaches free and realloc, so a call in the handler is the hazard itself,
 * whether or not that run's timing makes it allocate. */
typedef struct {
    unsigned long module, offset;
} tls_index;
void *__tls_get_addr(tls_index *ti)
{
    static void *(*_Atomic real)(tls_index *);
    void *(*f)(tls_index *) = atomic_load(&real);
    if (!f) {
        f = (void *(*)(tls_index *))dlsym(RTLD_NEXT, "__tls_get_addr");
        atomic_store(&real, f);
    }
    if (on_alt_stack())
        atomic_fetch_add(&tls_in_handler, 1);
    return f(ti);
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static unsigned spin(unsigned x, int rounds)
{
    for (int i = 0; i < rounds; i++)
        x = x * 2654435761u + 7;
    return x;
}

static unsigned spin_for(double seconds)
{
    unsigned x = 1;
    for (double end = cpu_now() + seconds; cpu_now() < end;)
        x = spin(x, 10000);
    return x;
}

static const char *dir;
static void *volatile handle;
static _Atomic int want_touch, done;

static void *open_nth(int i)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/tls_%d.so", dir, i);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "%s\n", dlerror());
        _exit(3);
    }
    return h;
}

static void touch(void *h)
{
    ((void (*)(void))dlsym(h, "touch"))();
}

static void *dtv_worker(void *arg)
{
    (void)arg;
    alt_setup();
    for (int i = 0; i < 40; i++) {
        void *h = open_nth(i);
        touch(h);
        handle = h;
        atomic_store(&want_touch, 1);
        while (atomic_load(&want_touch))
            spin(1, 1000);
        usleep(20000);
        if (i % 2)
            dlclose(h);
        usleep(20000);
    }
    atomic_store(&done, 1);
    return NULL;
}

static void *hang_worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 20; i++) {
        handle = open_nth(i);
        atomic_store(&want_touch, 1);
        while (atomic_load(&want_touch))
            usleep(100);
        dlclose(handle);
        usleep(30000);
    }
    atomic_store(&done, 1);
    return NULL;
}

static void *keys_thread(void *arg)
{
    alt_setup();
    return (void *)(long)(spin_for(0.2) & (unsigned)(long)arg);
}

int main(int argc, char **argv)
{
    const char *part = argc > 1 ? argv[1] : "";
    dir = argc > 2 ? argv[2] : ".";
    alt_setup();
    pthread_t w;
    if (strcmp(part, "dtv") == 0) {
        pthread_create(&w, NULL, dtv_worker, NULL);
        unsigned x = 1;
        while (!atomic_load(&done)) {
            if (atomic_load(&want_touch)) {
                touch(handle);
                atomic_store(&want_touch, 0);
            }
            x = spin(x, 100000);
        }
        pthread_join(w, NULL);
    } else if (strcmp(part, "keys") == 0) {
        pthread_key_t k;
        for (int i = 0; i < 40; i++)
            pthread_key_create(&k, NULL);
        spin_for(0.2); /* the first samples come, and the shim's first use of libunwind */
        for (long i = 0; i < 8; i++) {
            pthread_create(&w, NULL, keys_thread, (void *)i);
            pthread_join(w, NULL);
        }
    } else if (strcmp(part, "hang") == 0) {
        pthread_create(&w, NULL, hang_worker, NULL);
        void *volatile keep[8] = { 0 };
        for (unsigned long n = 0; !atomic_load(&done); n++) {
            if (atomic_load(&want_touch)) {
                touch(handle);
                atomic_store(&want_touch, 0);
            }
            free(keep[n % 8]);
            keep[n % 8] = malloc(4000 + (n % 64) * 16);
        }
        pthread_join(w, NULL);
    } else {
        fprintf(stderr, "usage: r_tlsheap dtv|keys|hang [DIR]\n");
        return 2;
    }
    printf("heap calls in the handler: %ld; __tls_get_addr calls in the handler: %ld\n",
           atomic_load(&in_handler), atomic_load(&tls_in_handler));
    return 0;
}
