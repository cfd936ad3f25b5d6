/* objspan.h: the span of an object's code, from its program headers as dl_iterate_phdr gives
 * them: used to tell whose code an address is in (the loader's, libunwind's) without a lock or a
 * lookup. Reads only what it is handed. */
#ifndef PERFSCOPE_OBJSPAN_H
#define PERFSCOPE_OBJSPAN_H

#include <link.h>
#include <stdint.h>

/* [lo, hi): from the lowest to the highest address of the object's executable segments. */
static inline void objspan_exec(const struct dl_phdr_info *info, uintptr_t *lo, uintptr_t *hi)
{
    *lo = *hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t l = info->dlpi_addr + ph->p_vaddr, h = l + ph->p_memsz;
        if (!*lo || l < *lo)
            *lo = l;
        if (h > *hi)
            *hi = h;
    }
}

#endif
