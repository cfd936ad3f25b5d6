/* x_rawexit [SECONDS]: burns SECONDS of CPU (default 0.08) and ends with a raw exit_group(0)
 * system call made by its own instruction, as every Go program's runtime does: no exit(), no
 * _exit(), not even the C library's syscall(), no destructor runs, so no wrapper of the shim
 * sees the end. Status 0. */
#include "burn.h"
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_unseen)

int main(int argc, char **argv)
{
    burn_unseen(argc > 1 ? atof(argv[1]) : 0.08);
#if defined(__x86_64__)
    __asm__ volatile("syscall" : : "a"((long)SYS_exit_group), "D"(0L) : "rcx", "r11", "memory");
#elif defined(__aarch64__)
    register long x8 __asm__("x8") = SYS_exit_group, x0 __asm__("x0") = 0;
    __asm__ volatile("svc #0" : "+r"(x0) : "r"(x8) : "memory");
#else
    syscall(SYS_exit_group, 0);
#endif
    return 1;
}
