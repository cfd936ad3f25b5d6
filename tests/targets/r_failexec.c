/* r_failexec: an execv that fails (no such file), then 0.5 s of CPU in burn_after. */
#include "burn.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_after)

int main(void)
{
    char *av[] = {"nope", NULL};
    execv("/nonexistent/perfscope-no-such-program", av);
    printf("execv failed: %s\n", strerror(errno));
    fflush(stdout);
    burn_after(0.5);
    return 0;
}
