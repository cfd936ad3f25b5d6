/* t_short WAY SECONDS: a short process for the shim's lazy start (t_shim_lazy). Burns SECONDS
 * of CPU in short_burn (0: none), then ends by WAY: "return" from main, "_exit" (the shim's
 * signal-safe way out), or "term" (SIGTERM raised with its default action: the fatal path).
 * Prints nothing; the exit status is 0 but for "term". */
#define _GNU_SOURCE
#include "burn.h"
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(short_burn)

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    double seconds = atof(argv[2]);
    if (seconds > 0)
        short_burn(seconds);
    if (strcmp(argv[1], "_exit") == 0)
        _exit(0);
    if (strcmp(argv[1], "term") == 0)
        raise(SIGTERM);
    return 0;
}
