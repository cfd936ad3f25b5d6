/* r_altstk: an 8 KiB alternate signal stack from mmap with a guard page below (as Rust's runtime
 * sets one up), 0.2 s of CPU, then SIGTERM to itself: dies by SIGTERM. */
#include "burn.h"
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_alt)

int main(void)
{
    size_t sz = 8192;
    char *m = mmap(NULL, 4096 + sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return 2;
    mprotect(m, 4096, PROT_NONE); /* guard page */
    stack_t ss = {.ss_sp = m + 4096, .ss_size = sz, .ss_flags = 0};
    if (sigaltstack(&ss, NULL) != 0)
        return 2;
    burn_alt(0.2);
    printf("sending SIGTERM\n");
    fflush(stdout);
    kill(getpid(), SIGTERM);
    pause();
    return 0;
}
