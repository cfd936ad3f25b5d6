/* r_unwabi LIB PART [SECONDS]: the C++ unwinder ABI (_Unwind_*) works in a program as it does without the shim. A
 * preloaded library that brings another unwinder's _Unwind_* symbols into the global scope
 * (libunwind exports the whole ABI) splits one unwind between two implementations: glibc's
 * pthread_exit and pthread_cancel unwind through libgcc_s, whose personality routines then call
 * the other library's accessors on libgcc_s's context, and clean-ups are skipped.
 *   exit-in-callback: a thread ends with pthread_exit inside a dl_iterate_phdr callback; glibc
 *     releases the loader's lock in that frame's clean-up. Then dl_iterate_phdr again (it hangs
 *     when the clean-up was skipped).
 *   raii-exit, raii-cancel, throw: LIB, a C++ library (r_unwabi_lib.cc) loaded with dlopen:
 *     the destructors of a thread that calls pthread_exit, of one cancelled in a blocking read,
 *     and of three frames a C++ exception goes through.
 *   owner: which loaded object answers _Unwind_RaiseException and _Unwind_GetIPInfo for the
 *     program (dladdr of dlsym(RTLD_DEFAULT)): none without the shim, libgcc_s not being loaded.
 * SECONDS: first spin that long on the CPU (so the shim has taken samples, and loaded libunwind,
 * before the PART runs).
 * Built without -fexceptions, so libgcc_s is not among the program's own libraries (as in
 * Python): it comes in only with the C++ library or pthread_exit. One line, the PART's; exit 0. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int exit_in_callback(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)info, (void)size, (void)data;
    pthread_exit(NULL);
    return 0;
}

static int first_only(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)info, (void)size, (void)data;
    return 1;
}

static void *iterate_and_exit(void *arg)
{
    (void)arg;
    dl_iterate_phdr(exit_in_callback, NULL);
    return NULL;
}

static const char *owner(const char *sym)
{
    void *p = dlsym(RTLD_DEFAULT, sym);
    Dl_info di;
    if (!p || !dladdr(p, &di) || !di.dli_fname)
        return "none";
    const char *slash = strrchr(di.dli_fname, '/');
    return slash ? slash + 1 : di.dli_fname;
}

static volatile unsigned long spun;

static void spin(double seconds)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        for (int i = 0; i < 100000; i++)
            spun++;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 1;
    if (argc > 3)
        spin(atof(argv[3]));
    const char *part = argv[2];
    if (!strcmp(part, "exit-in-callback")) {
        pthread_t t;
        pthread_create(&t, NULL, iterate_and_exit, NULL);
        pthread_join(t, NULL);
        printf("exit-in-callback: %d\n", dl_iterate_phdr(first_only, NULL));
        return 0;
    }
    if (!strcmp(part, "owner")) {
        printf("owner: _Unwind_RaiseException %s, _Unwind_GetIPInfo %s\n", owner("_Unwind_RaiseException"),
               owner("_Unwind_GetIPInfo"));
        return 0;
    }
    void *lib = dlopen(argv[1], RTLD_NOW);
    if (!lib) {
        printf("dlopen: %s\n", dlerror());
        return 1;
    }
    char name[64];
    snprintf(name, sizeof name, "lib_%s", part);
    for (char *c = name; *c; c++)
        if (*c == '-')
            *c = '_';
    int (*call)(void) = (int (*)(void))dlsym(lib, name);
    if (!call)
        return 1;
    printf("%s: %d\n", part, call());
    return 0;
}
