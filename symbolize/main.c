/* main.c: perfscope-symbolize's entry point: one call to symbolize_cmd (cmd.c), nothing else. */
#include "symbolize.h"

int main(int argc, char **argv)
{
    return symbolize_cmd("perfscope-symbolize", argc - 1, argv + 1);
}
