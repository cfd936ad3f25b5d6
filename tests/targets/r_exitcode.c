/* r_exitcode ret|exit256: return -1 from main (status 255) or exit(256) (status 0: the parent
 * sees the low 8 bits). */
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "exit256") == 0)
        exit(256);
    return -1;
}
