/* r_fdnum: after 0.1 s of CPU (so the profiler has sampled, and libunwind set itself up), the
 * first two open() calls in main return the lowest free numbers, 3 and 4. */
#include "burn.h"
#include <fcntl.h>
#include <stdio.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_first)

int main(void)
{
    burn_first(0.1);
    int a = open("/dev/null", O_RDONLY);
    int b = open("/dev/null", O_RDONLY);
    printf("first open() in main returned %d, second %d\n", a, b);
    return 0;
}
