/* debuginfod_gate.c: the tools' own dlopen, which refuses libdwfl's dlopen of libdebuginfod when
 * DEBUGINFOD_URLS names no server, and passes every other call to the C library's.
 *
 * Why: libdwfl (elfutils 0.188, Debian 12) dlopens libdebuginfod, and with it libcurl and its
 * TLS libraries, at the first module whose debug file is not on this machine, whatever the
 * environment says. A client made then answers every question with ENOSYS at once when
 * DEBUGINFOD_URLS is unset or empty, without touching its cache (debuginfod-client.c: "Is there
 * any server we can query? If not, don't do any work"), so with no server the load buys
 * nothing; it cost 3 ms of the symbolizer's 34 ms wall (9 ms of CPU: relocations, and every
 * CPU's TLB flushed for the mprotects while the reading runs beside it) on the bench's 200k-sample
 * file. libdwfl answers a failed dlopen as a library not installed: no debuginfod, the local
 * search only, which is what the client would have given. With a server named the gate stays
 * open and libdwfl asks it as always.
 *
 * The executable's definition of dlopen is the one libdw binds to (the linker exports a symbol a
 * linked shared library needs), and every other dlopen in the tools' processes goes through it.
 * What a passed call loads differs in one way: the C library takes the caller's object from the
 * return address, for its RUNPATH and $ORIGIN, and that is now the executable's. The tools and
 * the libraries they link (libdw, libelf, cJSON, zlib) have no RUNPATH, and libdw's one dlopen
 * names a bare soname, so the search is the same; the shim itself never wraps dlopen for this
 * reason (preload/interpose.c), where the callers are the target's. A refusal leaves dlerror()
 * as it was (libdwfl does not ask it). It must never refuse anything but that one file, never
 * decide before debuginfod_gate_arm has read the environment, and never load another file than
 * the C library's dlopen would have for libdw. */
#include "debuginfod_gate.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define DEBUGINFOD_SONAME "libdebuginfod.so.1" /* the name libdwfl asks for */

static pthread_once_t arm_once = PTHREAD_ONCE_INIT;
static int gate_closed;

static void arm(void)
{
    const char *urls = getenv("DEBUGINFOD_URLS");
    __atomic_store_n(&gate_closed, urls == NULL || urls[0] == '\0', __ATOMIC_RELEASE);
}

void debuginfod_gate_arm(void)
{
    pthread_once(&arm_once, arm);
}

typedef void *(*dlopen_fn)(const char *, int);

void *dlopen(const char *file, int mode)
{
    static dlopen_fn next;
    if (file && __atomic_load_n(&gate_closed, __ATOMIC_ACQUIRE) && strcmp(file, DEBUGINFOD_SONAME) == 0)
        return NULL;
    dlopen_fn fn = __atomic_load_n(&next, __ATOMIC_ACQUIRE);
    if (!fn) {
        fn = (dlopen_fn)dlsym(RTLD_NEXT, "dlopen");
        if (!fn)
            return NULL;
        __atomic_store_n(&next, fn, __ATOMIC_RELEASE);
    }
    return fn(file, mode);
}
