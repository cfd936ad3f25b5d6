/* shimload.c: the shim's own dlopens, held apart from the target's descriptor-number calls
 * (shimload.h, fdgate.h). It must never change errno or dlerror() for anyone. */
#include "shimload.h"

#include <dlfcn.h>

#include "fdgate.h"

void *shimload_open(const char *name, int flags)
{
    fdgate_alloc_begin();
    void *h = dlopen(name, flags);
    fdgate_alloc_end();
    return h;
}
