// t_exceptions LIBBURN [THROWS]: 4 threads each throw and catch THROWS C++ exceptions through
// a few frames, while another thread dlopens and dlcloses LIBBURN in a loop until they finish.
// Prints the counts (always the same for a given THROWS); exit 0 when every throw was caught.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <pthread.h>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

static std::atomic<int> running{0};

__attribute__((noinline)) static void thrower(int depth, long i)
{
    if (depth == 0)
        throw std::runtime_error("boom " + std::to_string(i));
    thrower(depth - 1, i);
    asm volatile("");
}

static void work(int id, long throws, long *caught)
{
    char name[16];
    std::snprintf(name, sizeof name, "throw-%d", id);
    pthread_setname_np(pthread_self(), name);
    long n = 0;
    for (long i = 0; i < throws; i++) {
        try {
            thrower(3 + (int)(i % 4), i);
        } catch (const std::runtime_error &e) {
            if (e.what()[0] == 'b')
                n++;
        }
    }
    *caught = n;
    running--;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: t_exceptions LIBBURN [THROWS]\n");
        return 2;
    }
    long throws = argc > 2 ? std::atol(argv[2]) : 12000;
    const char *lib = argv[1];
    long caught[4] = {0, 0, 0, 0};
    long loops = 0;
    int dl_errors = 0;
    running = 4;
    std::thread dl([&] {
        pthread_setname_np(pthread_self(), "dl-loop");
        while (running > 0) {
            void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
            if (!h || !dlsym(h, "lib_burn"))
                dl_errors++;
            if (h)
                dlclose(h);
            loops++;
        }
    });
    std::vector<std::thread> ts;
    for (int i = 0; i < 4; i++)
        ts.emplace_back(work, i, throws, &caught[i]);
    for (auto &t : ts)
        t.join();
    dl.join();
    long total = 0;
    for (int i = 0; i < 4; i++) {
        std::printf("thread %d caught %ld of %ld\n", i, caught[i], throws);
        total += caught[i];
    }
    std::printf("dlopen loop %s\n", loops > 0 && dl_errors == 0 ? "ok" : "FAILED");
    return total == 4 * throws && dl_errors == 0 ? 0 : 1;
}
