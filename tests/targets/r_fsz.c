/* r_fsz FILE: writes 32 KiB to its own FILE, half before and half after 0.5 s of CPU, and prints
 * one line. The test runs it under an RLIMIT_FSIZE of 64 KiB: enough for the target's file. */
#include "burn.h"
#include <stdio.h>
#include <string.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_fsz)

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    FILE *f = fopen(argv[1], "w");
    if (!f)
        return 1;
    char block[4096];
    memset(block, 'x', sizeof block);
    for (int i = 0; i < 4; i++)
        fwrite(block, 1, sizeof block, f);
    fflush(f);
    burn_fsz(0.5);
    for (int i = 0; i < 4; i++)
        fwrite(block, 1, sizeof block, f);
    if (fclose(f) != 0)
        return 1;
    printf("wrote 32768 bytes\n");
    return 0;
}
