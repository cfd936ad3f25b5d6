/* t_mapfile FILE: burns 0.1 s of CPU (so the process has sample files), waits for a line on
 * stdin, then maps FILE (read-only, a plain mmap: no dlopen for the shim's load counters to
 * see) and burns 0.1 s more, then waits, reading stdin, until end of file; exits 0. For the
 * writer's check of the mappings between library loads. */
#include "burn.h"
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_mapfile)

int main(int argc, char **argv)
{
    char buf[256];
    if (argc != 2)
        return 2;
    burn_mapfile(0.1);
    if (read(0, buf, sizeof buf) <= 0)
        return 2;
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0 || mmap(NULL, 65536, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED)
        return 3;
    burn_mapfile(0.1);
    while (read(0, buf, sizeof buf) > 0)
        ;
    return 0;
}
