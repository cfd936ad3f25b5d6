/* r_forktransit [N]: a thread loads and unloads zlib in a loop (the shim's dlopen wrapper moves
 * the loader's descriptors above the target's numbers, marking each number while it moves)
 * while the main thread forks N children; each child dup2s onto 3..15 at once and reports how
 * long that took. A fork child must not inherit a number marked by a move of its parent's other
 * thread (it is never finished there: each dup2 onto it waited its whole 0.1-1.2 s). Prints the
 * count of children whose dup2s took over 80 ms (0 without the shim; 12 dup2s take 0.1 ms). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile int stop;

static void *loader(void *arg)
{
    (void)arg;
    while (!stop) {
        void *h = dlopen("libz.so.1", RTLD_NOW);
        if (h)
            dlclose(h);
    }
    return NULL;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 600, slow = 0;
    pthread_t t;
    if (pthread_create(&t, NULL, loader, NULL) != 0)
        return 1;
    for (int i = 0; i < n; i++) {
        int p[2];
        if (pipe(p) != 0)
            return 1;
        pid_t c = fork();
        if (c < 0)
            return 1;
        if (c == 0) {
            double t0 = now();
            for (int fd = 3; fd < 16; fd++)
                if (fd != p[1])
                    dup2(0, fd);
            double dt = now() - t0;
            if (write(p[1], &dt, sizeof dt) != sizeof dt)
                _exit(1);
            _exit(0);
        }
        close(p[1]);
        double dt = 0;
        if (read(p[0], &dt, sizeof dt) != sizeof dt)
            dt = 1e9;
        close(p[0]);
        waitpid(c, NULL, 0);
        if (dt > 0.08)
            slow++;
    }
    stop = 1;
    pthread_join(t, NULL);
    printf("children whose dup2s took over 80 ms: %d of %d\n", slow, n);
    return 0;
}
