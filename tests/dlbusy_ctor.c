/* tests/dlbusy_ctor.c: a library that runs preload/dlbusy.c's search from its constructor, as a
 * shim that is dlopen'd would: inside dlopen the loader's load lock is held throughout, so the
 * search must tell it from the write lock (dlbusy_unit.c reads the answer). */
#include <link.h>

#include "dlbusy.h"

__attribute__((visibility("default"))) int dlbusy_ctor_rc = -2;
__attribute__((visibility("default"))) char dlbusy_ctor_why[256];

__attribute__((constructor)) static void search_in_dlopen(void)
{
    dlbusy_ctor_rc = dlbusy_find_loader_lock(dl_iterate_phdr, dlbusy_ctor_why, sizeof dlbusy_ctor_why);
}
