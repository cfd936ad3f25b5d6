/* m_phdrdefer.c: a preload library, loaded after the shim (LD_PRELOAD=shim:this), whose
 * dl_iterate_phdr runs the caller's callbacks only after the C library's has returned, on
 * copies of what it listed: the loader's lock is no longer held in the callbacks, as with a
 * wrapper that some other tool or a C library built otherwise might put there. The shim's
 * search for the loader's write lock (preload/dlbusy.c) then finds nothing, and the shim must
 * fall back to frame-pointer walks and say so (tests/t_shim_dllock.sh). It must not change
 * anything else: what the callbacks see is what the C library listed, in its order, and the
 * first nonzero answer of a callback ends the walk and is returned. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stddef.h>

#define MAX_OBJECTS 256

struct listing {
    int n;
    struct dl_phdr_info info[MAX_OBJECTS];
};

static int copy_one(struct dl_phdr_info *info, size_t size, void *data)
{
    struct listing *l = data;
    if (l->n == MAX_OBJECTS)
        return 1;
    struct dl_phdr_info *c = &l->info[l->n++];
    *c = (struct dl_phdr_info){0};
    __builtin_memcpy(c, info, size < sizeof *c ? size : sizeof *c);
    return 0;
}

__attribute__((visibility("default"))) int dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *),
                                                           void *data)
{
    static int (*real)(int (*)(struct dl_phdr_info *, size_t, void *), void *);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "dl_iterate_phdr");
    if (!real)
        return 0;
    struct listing l; /* 16 KiB of stack */
    l.n = 0;
    real(copy_one, &l);
    for (int i = 0; i < l.n; i++) {
        int rc = cb(&l.info[i], sizeof l.info[i], data);
        if (rc)
            return rc;
    }
    return 0;
}
