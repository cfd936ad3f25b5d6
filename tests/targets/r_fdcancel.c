/* r_fdcancel: threads that end where a profiler's descriptor bookkeeping may be under way, and
 * what the program's later calls then cost. Three modes (argv[1]); each prints one line of
 * figures and exits 0; it must never depend on a profiler being there.
 *   inclose: a thread that loops dup(0)+close() is cancelled (close is its only cancellation
 *     point, so it dies inside one); then 50 thread starts (creation to the new thread's first
 *     instruction) and 2 s of open+close on the main thread are timed:
 *     "inclose starts_over_40ms=N starts=50 closes_over_40ms=N closes=N"
 *   atstart: 100 threads cancelled as soon as created (before their first cancellation point),
 *     then the lowest free number, then 200 closes 1 ms apart while another thread starts
 *     threads: "atstart next_fd=N closes_over_40ms=N closes=200"
 *   inhandler: a close under way on one thread for about a second (a loopback socket with
 *     SO_LINGER and unread data), a new thread started meanwhile, and a signal whose handler, on
 *     that new thread, closes a descriptor; 4 rounds:
 *     "inhandler rounds=4 handler_closes_over_30ms=N max_ms=F" */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---- inclose */

static void *dup_close_loop(void *arg)
{
    (void)arg;
    for (;;) {
        int fd = dup(0);
        close(fd);
    }
    return NULL;
}

static volatile double first_instruction_at;

static void *note_start(void *arg)
{
    (void)arg;
    first_instruction_at = now_s();
    return NULL;
}

static int in_close(void)
{
    pthread_t t;
    pthread_create(&t, NULL, dup_close_loop, NULL);
    usleep(20000);
    pthread_cancel(t);
    pthread_join(t, NULL);
    int slow_starts = 0;
    for (int i = 0; i < 50; i++) {
        double t0 = now_s();
        pthread_create(&t, NULL, note_start, NULL);
        pthread_join(t, NULL);
        if (first_instruction_at - t0 > 0.040)
            slow_starts++;
    }
    long closes = 0;
    int slow_closes = 0;
    for (double t0 = now_s(); now_s() - t0 < 2.0;) {
        int fd = open("/dev/null", O_RDONLY);
        double a = now_s();
        close(fd);
        if (now_s() - a > 0.040)
            slow_closes++;
        closes++;
    }
    printf("inclose starts_over_40ms=%d starts=50 closes_over_40ms=%d closes=%ld\n", slow_starts, slow_closes,
           closes);
    return 0;
}

/* ---- atstart */

static void *wait_forever(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

static void *short_sleep(void *arg)
{
    (void)arg;
    usleep(1000);
    return NULL;
}

static volatile int spawning = 1;

static void *spawner(void *arg)
{
    (void)arg;
    while (spawning) {
        pthread_t t;
        if (pthread_create(&t, NULL, short_sleep, NULL) == 0)
            pthread_join(t, NULL);
    }
    return NULL;
}

static int at_start(void)
{
    for (int i = 0; i < 100; i++) {
        pthread_t t;
        pthread_create(&t, NULL, wait_forever, NULL);
        pthread_cancel(t);
        pthread_join(t, NULL);
    }
    int next = open("/dev/null", O_RDONLY);
    close(next);
    pthread_t s;
    pthread_create(&s, NULL, spawner, NULL);
    int slow = 0;
    for (int i = 0; i < 200; i++) {
        int fd = open("/dev/null", O_RDONLY);
        double a = now_s();
        close(fd);
        if (now_s() - a > 0.040)
            slow++;
        usleep(1000);
    }
    spawning = 0;
    pthread_join(s, NULL);
    printf("atstart next_fd=%d closes_over_40ms=%d closes=200\n", next, slow);
    return 0;
}

/* ---- inhandler */

static volatile double handler_ms;

static void close_in_handler(int sig)
{
    (void)sig;
    int fd = dup(0);
    double a = now_s();
    close(fd);
    handler_ms = (now_s() - a) * 1e3;
}

static void *sleep_30ms(void *arg)
{
    (void)arg;
    usleep(30000);
    return NULL;
}

/* A socket whose close lingers (up to its 1 s): connected over loopback, its send buffer full
 * and the peer never reading. -1 when it cannot be made. */
static int lingering_socket(int *peer, int *listener)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof sa;
    int l = socket(AF_INET, SOCK_STREAM, 0);
    if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(l, 1) != 0 ||
        getsockname(l, (struct sockaddr *)&sa, &len) != 0)
        return -1;
    int c = socket(AF_INET, SOCK_STREAM, 0);
    if (c < 0 || connect(c, (struct sockaddr *)&sa, sizeof sa) != 0)
        return -1;
    *peer = accept(l, NULL, NULL);
    *listener = l;
    static char buf[65536];
    memset(buf, 'x', sizeof buf);
    fcntl(c, F_SETFL, O_NONBLOCK);
    while (write(c, buf, sizeof buf) > 0)
        ;
    fcntl(c, F_SETFL, 0);
    struct linger lg = { 1, 1 };
    setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    return c;
}

static int slow_fd;

static void *close_slowly(void *arg)
{
    (void)arg;
    close(slow_fd);
    return NULL;
}

static int in_handler(void)
{
    signal(SIGUSR1, close_in_handler);
    int slow = 0;
    double max_ms = 0;
    for (int r = 0; r < 4; r++) {
        int peer = -1, listener = -1;
        slow_fd = lingering_socket(&peer, &listener);
        if (slow_fd < 0) {
            printf("inhandler no loopback socket\n");
            return 0;
        }
        pthread_t closer, t;
        pthread_create(&closer, NULL, close_slowly, NULL);
        usleep(20000); /* the close is under way */
        handler_ms = -1;
        pthread_create(&t, NULL, sleep_30ms, NULL);
        usleep(5000);
        pthread_kill(t, SIGUSR1);
        pthread_join(t, NULL);
        pthread_join(closer, NULL);
        close(peer);
        close(listener);
        if (handler_ms > 30)
            slow++;
        if (handler_ms > max_ms)
            max_ms = handler_ms;
    }
    printf("inhandler rounds=4 handler_closes_over_30ms=%d max_ms=%.1f\n", slow, max_ms);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int rc = strcmp(mode, "inclose") == 0 ? in_close()
             : strcmp(mode, "atstart") == 0 ? at_start()
             : strcmp(mode, "inhandler") == 0 ? in_handler()
             : (fprintf(stderr, "usage: r_fdcancel inclose|atstart|inhandler\n"), 2);
    fflush(stdout);
    _exit(rc); /* the threads still waiting stay out of the way of exit */
}
