/* m_valgrind: a small target for valgrind memcheck under the shim: main and one thread each burn
 * 0.2 s of their own CPU time in burn_vg, then main exits with status 3, so a test can tell the
 * target's status from valgrind's --error-exitcode. Clean under memcheck without the shim. */
#include "burn.h"
#include <pthread.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_vg)

static void *run(void *arg)
{
    (void)arg;
    burn_vg(0.2);
    return NULL;
}

int main(void)
{
    pthread_t th;
    pthread_create(&th, NULL, run, NULL);
    burn_vg(0.2);
    pthread_join(th, NULL);
    return 3;
}
