/* t_suid SHIM [any]: for the setuid test. Unless "any" is given, exits 3 printing "not secure"
 * when the kernel did not mark this exec secure (getauxval(AT_SECURE) == 0). Then loads SHIM
 * with dlopen (its constructor runs as it would under LD_PRELOAD), burns 0.3 s of CPU and prints
 *   "secure S sigprof dfl|set"
 * where sigprof says whether anything installed a SIGPROF handler. */
#define _GNU_SOURCE
#include "burn.h"
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_suid)

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: t_suid SHIM [any]\n");
        return 2;
    }
    unsigned long secure = getauxval(AT_SECURE);
    if (!secure && !(argc > 2 && strcmp(argv[2], "any") == 0)) {
        printf("not secure\n");
        return 3;
    }
    if (!dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL)) {
        printf("dlopen: %s\n", dlerror());
        return 4;
    }
    burn_suid(0.3);
    struct sigaction sa;
    sigaction(SIGPROF, NULL, &sa);
    printf("secure %lu sigprof %s\n", secure, sa.sa_handler == SIG_DFL ? "dfl" : "set");
    return 0;
}
