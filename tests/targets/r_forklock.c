/* r_forklock: a fork made while another thread's SIGPROF handler holds libunwind's locks. The
 * program exports dl_iterate_phdr, which libunwind calls (under its cache lock) to look up a
 * return address it has not seen; called on the worker's alternate signal stack (where only the
 * shim's SA_ONSTACK handler runs), it asks the main thread to fork and waits up to 50 ms for
 * the fork to be done, then goes on. The child spins 0.3 s of CPU in code never walked before
 * (so it is sampled and walked with libunwind) and exits 0. Prints "child exited 0" or, when
 * the child is still running 10 s later (killed then), "child hung"; "no walk seen" when no
 * handler called dl_iterate_phdr within ARGV[1] seconds (default 20; then exits 3). Without a
 * profiler: "no walk seen".
 * Usage: r_forklock [WAIT_S] */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ALT (256 * 1024)
static char alt[ALT];
static __thread int alt_on;
static _Atomic int want_fork, fork_done, stop, asked;

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int on_alt(void)
{
    char c;
    return alt_on && &c >= alt && &c < alt + ALT;
}

int dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
    static int (*real)(int (*)(struct dl_phdr_info *, size_t, void *), void *);
    if (!real) {
        void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
        real = (int (*)(int (*)(struct dl_phdr_info *, size_t, void *), void *))dlsym(libc, "dl_iterate_phdr");
    }
    if (on_alt() && !atomic_exchange(&asked, 1)) {
        atomic_store(&want_fork, 1);
        for (double end = mono() + 0.05; !atomic_load(&fork_done) && mono() < end;)
            ;
    }
    return real(cb, data);
}

__attribute__((noinline)) static unsigned spin(unsigned x, int rounds)
{
    for (int i = 0; i < rounds; i++)
        x = x * 2654435761u + 7;
    return x;
}

static void *worker(void *arg)
{
    (void)arg;
    stack_t ss = { .ss_sp = alt, .ss_size = ALT };
    if (sigaltstack(&ss, NULL) != 0)
        abort();
    alt_on = 1;
    unsigned x = 1;
    while (!atomic_load(&stop))
        x = spin(x, 10000);
    return (void *)(long)(x & 1);
}

__attribute__((noinline)) static unsigned child_spin(unsigned x, int rounds)
{
    for (int i = 0; i < rounds; i++)
        x = x * 2246822519u + 13;
    return x;
}

static void child(void)
{
    struct timespec a, b;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
    unsigned x = 1;
    do {
        x = child_spin(x, 10000);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    } while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < 0.3);
    _exit((int)(x & 0));
}

int main(int argc, char **argv)
{
    double wait = argc > 1 ? atof(argv[1]) : 20;
    pthread_t w;
    pthread_create(&w, NULL, worker, NULL);
    double until = mono() + wait;
    while (!atomic_load(&want_fork) && mono() < until)
        usleep(200);
    if (!atomic_load(&want_fork)) {
        atomic_store(&stop, 1);
        pthread_join(w, NULL);
        printf("no walk seen\n");
        return 3;
    }
    pid_t p = fork();
    if (p == 0)
        child();
    atomic_store(&fork_done, 1);
    int st = 0, hung = 1;
    for (double end = mono() + 10; mono() < end;) {
        if (waitpid(p, &st, WNOHANG) == p) {
            hung = 0;
            break;
        }
        usleep(2000);
    }
    if (hung) {
        kill(p, SIGKILL);
        waitpid(p, &st, 0);
        printf("child hung\n");
    } else {
        printf("child exited %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    }
    atomic_store(&stop, 1);
    pthread_join(w, NULL);
    return 0;
}
