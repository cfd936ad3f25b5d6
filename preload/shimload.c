/* shimload.c: the shim's own dlopens, held apart from the target's descriptor-number calls
 * (shimload.h, fdgate.h). It must never change errno or dlerror() for anyone. */
#include "shimload.h"

#include <dlfcn.h>

#include "fdgate.h"

void *shimload_open(const char *name, int flags)
{
    /* One allocation for the whole load (the loader opens, maps and closes the files itself),
     * on any thread but one inside a target's number call, which would wait for itself. */
    int gated = !fdgate_in_target_call();
    if (gated)
        fdgate_alloc_begin();
    void *h = dlopen(name, flags);
    if (gated)
        fdgate_alloc_end();
    return h;
}
