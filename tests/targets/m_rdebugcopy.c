/* m_rdebugcopy.c: a program that uses the loader's _r_debug itself (as in-process debuggers and
 * crash reporters do), so that the executable holds a copy of it (a copy relocation) that the
 * loader never updates, its r_state left as it was while objects were still being added. The
 * shim must read the loader's own r_debug (the main program's DT_DEBUG), or its handler would
 * take the loader as forever changing its list and never walk with libunwind
 * (tests/t_shim_dllock.sh). Prints the copy's r_version and r_state and the CLOCK_MONOTONIC time
 * (ns) at which its burn ended, burns 0.4 s of CPU, exits 0. */
#define _GNU_SOURCE
#include "burn.h"
#include <link.h>
#include <stdio.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_with_copy)

int main(void)
{
    int version = _r_debug.r_version, state = _r_debug.r_state;
    burn_with_copy(0.4);
    printf("%d %d %llu\n", version, state, (unsigned long long)mono_ns());
    return 0;
}
