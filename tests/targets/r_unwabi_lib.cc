// r_unwabi_lib: the C++ half of r_unwabi (loaded with dlopen by a C program, as Python loads an
// extension): libstdc++ and libgcc_s come in after everything the program and a preload need.
// Each call returns how many destructors ran, or a negative number when the call went wrong.
#include <atomic>
#include <pthread.h>
#include <unistd.h>
#include <stdexcept>

static int destroyed;

struct Guard {
    int *flag;
    explicit Guard(int *f) : flag(f) {}
    ~Guard() { (*flag)++; }
};

static void *raii_exit(void *)
{
    Guard g(&destroyed);
    pthread_exit(nullptr);
    return nullptr;
}

static int cancel_pipe[2];
static std::atomic<int> cancel_ready; // the guard is made: the cancel finds it on the stack

static void *raii_cancel(void *)
{
    Guard g(&destroyed);
    cancel_ready = 1;
    char c;
    while (read(cancel_pipe[0], &c, 1) > 0) // a cancellation point that blocks for good
        ;
    return nullptr;
}

__attribute__((noinline)) static void thrower(int depth)
{
    Guard g(&destroyed);
    if (depth == 0)
        throw std::runtime_error("deep");
    thrower(depth - 1);
}

extern "C" int lib_raii_exit(void)
{
    destroyed = 0;
    pthread_t t;
    if (pthread_create(&t, nullptr, raii_exit, nullptr) != 0)
        return -1;
    pthread_join(t, nullptr);
    return destroyed;
}

extern "C" int lib_raii_cancel(void)
{
    destroyed = 0;
    if (pipe(cancel_pipe) != 0)
        return -1;
    pthread_t t;
    cancel_ready = 0;
    if (pthread_create(&t, nullptr, raii_cancel, nullptr) != 0)
        return -1;
    // Until the thread has made its guard (a loaded machine may not run it for 20 ms), then a
    // little longer so that it blocks in read.
    for (int i = 0; i < 10000 && !cancel_ready; i++)
        usleep(1000);
    usleep(20000);
    pthread_cancel(t);
    void *ret = nullptr;
    pthread_join(t, &ret);
    return ret == PTHREAD_CANCELED ? destroyed : -2;
}

extern "C" int lib_throw(void)
{
    destroyed = 0;
    try {
        thrower(2);
    } catch (const std::exception &) {
        return destroyed;
    }
    return -1;
}
