/* x_quick_exit [MODE]: ends at once, before the shim's threads have done anything: _exit(3)
 * (MODE _exit, the default: dash's `exit 3`), exit(3) (exit), return 3 (ret), exit_group(3)
 * through the C library's syscall() (syscall), or 30 ms of CPU and then _exit(3) (burn: its
 * samples are all taken before the writer's first pass). */
#include "burn.h"
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_quick)

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "_exit";
    if (strcmp(mode, "exit") == 0)
        exit(3);
    if (strcmp(mode, "ret") == 0)
        return 3;
    if (strcmp(mode, "syscall") == 0)
        syscall(SYS_exit_group, 3);
    if (strcmp(mode, "burn") == 0)
        burn_quick(0.03);
    _exit(3);
}
