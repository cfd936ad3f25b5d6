/* x_rawexit [SECONDS]: burns SECONDS of CPU (default 0.08) and ends with a raw exit_group(0)
 * system call, as every Go program does: no exit(), no _exit(), no destructor runs, so no
 * wrapper of the shim sees the end. Status 0. */
#include "burn.h"
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_unseen)

int main(int argc, char **argv)
{
    burn_unseen(argc > 1 ? atof(argv[1]) : 0.08);
    syscall(SYS_exit_group, 0);
    return 1;
}
