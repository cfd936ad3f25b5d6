/* t_exit MODE CODE: writes known text to stdout and stderr (stdio, some of it unflushed until
 * exit, a 100 KiB block, a last line without newline), burns 0.1 s of CPU in burn_exit, then ends
 * by MODE: "exit" exit(CODE), "return" return CODE from main, "_exit" _exit(CODE) after
 * fflush, "abort" abort() after fflush. */
#define _GNU_SOURCE
#include "burn.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_exit)

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: t_exit exit|return|_exit|abort CODE\n");
        return 2;
    }
    const char *mode = argv[1];
    int code = atoi(argv[2]);
    for (int i = 0; i < 200; i++) {
        printf("stdout line %d of mode %s\n", i, mode);
        if (i % 20 == 0)
            fprintf(stderr, "stderr line %d\n", i);
    }
    static char block[100 * 1024];
    for (size_t i = 0; i < sizeof block; i++)
        block[i] = (char)('a' + i % 26);
    block[sizeof block - 1] = '\n';
    fwrite(block, 1, sizeof block, stdout);
    burn_exit(0.1);
    printf("last line without newline, code %d", code);
    fprintf(stderr, "stderr end");
    if (strcmp(mode, "exit") == 0)
        exit(code);
    if (strcmp(mode, "_exit") == 0) {
        fflush(NULL);
        _exit(code);
    }
    if (strcmp(mode, "abort") == 0) {
        fflush(NULL);
        abort();
    }
    return code;
}
