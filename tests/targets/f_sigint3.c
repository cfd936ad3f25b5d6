/* f_sigint3 READY: catches SIGINT, writes "ready" to the file READY, waits for SIGINT, then exits
 * 3 (the command decides what a forwarded signal means). Bounded: gives up after 60 s (exit 9). */
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t got;

static void on_int(int sig)
{
    (void)sig;
    got = 1;
}

int main(int argc, char **argv)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_int;
    sigaction(SIGINT, &sa, NULL);
    if (argc > 1) {
        int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            (void)!write(fd, "ready\n", 6);
            close(fd);
        }
    }
    for (int i = 0; i < 6000 && !got; i++)
        usleep(10000);
    return got ? 3 : 9;
}
