/* r_daemon PIDFILE: 0.2 s of CPU, then daemon(1, 1) (a fork inside libc: the shim's fork wrapper
 * is not called), the child writes its pid to PIDFILE, burns 0.5 s of CPU in burn_child and
 * prints one line (stdout is kept: noclose) with the errno daemon() left: it sets none where it
 * succeeds, so the line says the value set before the call. */
#include "burn.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_parent)
DEFINE_BURN(burn_child)

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    burn_parent(0.2);
    errno = 1234;
    if (daemon(1, 1) != 0) {
        perror("daemon");
        return 1;
    }
    int kept = errno;
    FILE *f = fopen(argv[1], "w");
    if (!f)
        return 1;
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
    burn_child(0.5);
    printf("daemon child done, errno %d\n", kept);
    return 0;
}
