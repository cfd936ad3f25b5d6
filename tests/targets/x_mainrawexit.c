/* x_mainrawexit: the main thread starts a worker and ends by a raw exit(2) of code 6 (no
 * exit_group: the process lives on); the worker burns 0.2 s of CPU, writes one line and
 * returns, through the C library's thread end (an exit(2) of code 0). The kernel gives the
 * process the status of its last thread to end: without the shim "worker done", status 0. */
#include "burn.h"
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_mainrawexit)

static void *worker(void *arg)
{
    burn_mainrawexit(0.2);
    static const char msg[] = "worker done\n";
    if (write(1, msg, sizeof msg - 1) < 0)
        return arg;
    return arg;
}

int main(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0)
        return 2;
    syscall(SYS_exit, 6);
    return 2;
}
