/* f_exitgroup CODE: prints one line, burns a little CPU, then ends with a raw exit_group
 * syscall (no atexit, no destructor: the shim never sees the end), status CODE. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int code = argc > 1 ? atoi(argv[1]) : 5;
    printf("exit_group %d\n", code);
    fflush(stdout);
    volatile double x = 0;
    for (long i = 0; i < 20000000; i++)
        x += (double)i * 1e-9;
    syscall(SYS_exit_group, code);
    return 0;
}
