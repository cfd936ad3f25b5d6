/* f_exitgroup CODE: prints one line, burns a little CPU, then ends with a raw exit_group
 * syscall made by its own instruction, as Go's runtime does (no atexit, no destructor, not even
 * the C library's syscall(), which the shim wraps: the shim never sees the end), status CODE. */
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
#if defined(__x86_64__)
    __asm__ volatile("syscall" : : "a"((long)SYS_exit_group), "D"((long)code) : "rcx", "r11", "memory");
#elif defined(__aarch64__)
    register long x8 __asm__("x8") = SYS_exit_group, x0 __asm__("x0") = code;
    __asm__ volatile("svc #0" : "+r"(x0) : "r"(x8) : "memory");
#endif
    syscall(SYS_exit_group, code);
    return 0;
}
