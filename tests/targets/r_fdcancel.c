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
 *     "inhandler rounds=4 handler_closes_over_30ms=N max_ms=F"
 *   busystart: 8 threads dup and close high numbers in a loop while 200 threads are started one
 *     after another (creation to first instruction):
 *     "busystart starts=200 starts_over_40ms=N mean_ms=F"
 *   longjmp: a thread's SIGALRM handler siglongjmps out of its close of a lingering socket; the
 *     thread then ends by pthread_exit, and another by cancellation at a later point:
 *     "longjmp exit=joined cancel=canceled" when both ended as asked
 *   latecancel: 20 threads cancelled while they run with cancellation disabled, which return 5
 *     without passing a cancellation point after enabling it again (a cancellation never acted
 *     upon): "latecancel returned=N canceled=N" (pthread_join's values)
 *   dup2cancel: the same with 20 threads that call only dup2 (no cancellation point) 100,000
 *     times each with cancellation enabled and pending, while 3 threads start threads:
 *     "dup2cancel returned=N canceled=N"
 *   spincancel: the same with 8 threads that compute 0.3 s each, calling nothing, with the
 *     cancellation enabled and pending: "spincancel returned=N canceled=N"
 *   holdstart: number 0 closed; a thread opens a file (on number 0), reads and closes it, then
 *     computes 2 ms, in a loop, while 30 threads are started one after another:
 *     "holdstart starts=30 starts_over_20ms=N mean_ms=F files=N not_on_0=N"
 *   asynccancel: 400 threads in asynchronous cancellation, each cancelled after 2-4 ms of
 *     computing at the leaf of a 40-deep call chain, then 20 dlopen and dlclose pairs timed:
 *     "asynccancel canceled=N dl_ms=F"
 *   ownhandler: the program's own SIGPROF handler (ITIMER_PROF) never returns on a thread in
 *     asynchronous cancellation; the thread is cancelled there: "ownhandler canceled=yes|no
 *     ms=F" (no: not within 3 s)
 *   ownlongjmp: a thread leaves its own SIGPROF handler by longjmp (a CPU-time limit's way),
 *     opens SIGPROF again and sleeps; it is cancelled there: "ownlongjmp canceled=yes|no"
 *   reopen: 20,000 times close(0) then open("/dev/null"), 5 us apart, which must get 0 (the
 *     caller appends marker lines meanwhile from another process, so that a profiler's watcher
 *     opens its files often): "reopen rounds=20000 not_on_0=N" */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
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

/* n threads started one after another, gap_us apart (creation to first instruction): how many
 * took over over_s; their mean in ms into *mean_ms. */
static int time_starts(int n, double over_s, useconds_t gap_us, double *mean_ms)
{
    int slow = 0;
    double sum = 0;
    for (int i = 0; i < n; i++) {
        pthread_t t;
        double t0 = now_s();
        pthread_create(&t, NULL, note_start, NULL);
        pthread_join(t, NULL);
        double d = first_instruction_at - t0;
        sum += d;
        slow += d > over_s;
        if (gap_us)
            usleep(gap_us);
    }
    *mean_ms = sum / n * 1e3;
    return slow;
}

/* Threads started and joined one after another until churning is 0: arg, their function. */
static volatile int churning = 1;

static void *churn_threads(void *arg)
{
    while (churning) {
        pthread_t t;
        if (pthread_create(&t, NULL, (void *(*)(void *))arg, NULL) == 0)
            pthread_join(t, NULL);
    }
    return NULL;
}

/* Cancels t and joins it within 3 s: "yes" when it ended cancelled, "no" otherwise (a
 * cancellation lost or never acted on; the thread is then left running). */
static const char *cancel_within_3s(pthread_t t)
{
    pthread_cancel(t);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 3;
    void *ret = NULL;
    int rc = pthread_timedjoin_np(t, &ret, &until);
    return rc == 0 && ret == PTHREAD_CANCELED ? "yes" : "no";
}

static int in_close(void)
{
    pthread_t t;
    pthread_create(&t, NULL, dup_close_loop, NULL);
    usleep(20000);
    pthread_cancel(t);
    pthread_join(t, NULL);
    double mean_ms;
    int slow_starts = time_starts(50, 0.040, 0, &mean_ms);
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
    pthread_create(&s, NULL, churn_threads, (void *)short_sleep);
    int slow = 0;
    for (int i = 0; i < 200; i++) {
        int fd = open("/dev/null", O_RDONLY);
        double a = now_s();
        close(fd);
        if (now_s() - a > 0.040)
            slow++;
        usleep(1000);
    }
    churning = 0;
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

/* ---- busystart */

static volatile int closing = 1;

static void *close_high_numbers(void *arg)
{
    while (closing) {
        int fd = fcntl(0, F_DUPFD, 200 + (int)(long)arg);
        close(fd);
    }
    return NULL;
}

static int busy_start(void)
{
    pthread_t closers[8];
    for (long i = 0; i < 8; i++)
        pthread_create(&closers[i], NULL, close_high_numbers, (void *)i);
    usleep(50000);
    double mean_ms;
    int slow = time_starts(200, 0.040, 0, &mean_ms);
    closing = 0;
    for (int i = 0; i < 8; i++)
        pthread_join(closers[i], NULL);
    printf("busystart starts=200 starts_over_40ms=%d mean_ms=%.2f\n", slow, mean_ms);
    return 0;
}

/* ---- longjmp */

static sigjmp_buf out_of_close;

static void jump_out(int sig)
{
    (void)sig;
    siglongjmp(out_of_close, 1);
}

/* Stack use after the jump, over what the close's frames were. */
static void scribble(int depth)
{
    volatile char buf[2048];
    memset((char *)buf, 0x5a, sizeof buf);
    if (depth)
        scribble(depth - 1);
}

static void *close_then_leave(void *arg)
{
    int how = (int)(long)arg; /* 0: pthread_exit, 1: cancelled */
    sigset_t alrm;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
    int peer = -1, listener = -1;
    int fd = lingering_socket(&peer, &listener);
    if (fd >= 0 && sigsetjmp(out_of_close, 1) == 0) {
        struct itimerval it = { { 0, 0 }, { 0, 200000 } };
        setitimer(ITIMER_REAL, &it, NULL);
        close(fd); /* lingers; the alarm's handler jumps out */
    }
    scribble(8);
    if (how == 0)
        pthread_exit(NULL);
    pthread_cancel(pthread_self());
    pthread_testcancel();
    return NULL;
}

static int long_jump(void)
{
    signal(SIGALRM, jump_out);
    sigset_t alrm;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &alrm, NULL); /* the alarm goes to the closing thread */
    void *ret[2];
    for (long how = 0; how < 2; how++) {
        pthread_t t;
        pthread_create(&t, NULL, close_then_leave, (void *)how);
        pthread_join(t, &ret[how]);
    }
    printf("longjmp exit=%s cancel=%s\n", ret[0] == NULL ? "joined" : "other",
           ret[1] == PTHREAD_CANCELED ? "canceled" : "other");
    return 0;
}

/* ---- latecancel */

static volatile int may_go;

static void *cancel_held_off(void *arg)
{
    (void)arg;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
    while (!may_go)
        ;
    pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
    return (void *)5; /* no cancellation point after: the pending cancellation is never acted upon */
}

static int late_cancel(void)
{
    int returned = 0, canceled = 0;
    for (int i = 0; i < 20; i++) {
        pthread_t t;
        may_go = 0;
        pthread_create(&t, NULL, cancel_held_off, NULL);
        usleep(2000);
        pthread_cancel(t);
        may_go = 1;
        void *ret;
        pthread_join(t, &ret);
        returned += ret == (void *)5;
        canceled += ret == PTHREAD_CANCELED;
    }
    printf("latecancel returned=%d canceled=%d\n", returned, canceled);
    return 0;
}

/* ---- dup2cancel, spincancel */

static _Atomic int pending_ready, pending_go;

/* Cancellation disabled until every thread is cancelled, then enabled (pending, deferred) for
 * work that passes no cancellation point, then disabled before the return. */
static void *pending_worker(void *arg)
{
    long spin = (long)arg;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
    atomic_fetch_add(&pending_ready, 1);
    while (!atomic_load(&pending_go))
        ;
    pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
    if (spin) {
        volatile unsigned long x = 0;
        for (double t0 = now_s(); now_s() - t0 < 0.3;)
            for (int i = 0; i < 100000; i++)
                x += (unsigned long)i;
    } else {
        for (int i = 0; i < 100000; i++)
            dup2(0, 300);
    }
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
    return (void *)7;
}

static int pending_cancel(const char *mode, int n, long spin, int churners)
{
    pthread_t w[20], c[3];
    for (int i = 0; i < churners; i++)
        pthread_create(&c[i], NULL, churn_threads, (void *)note_start);
    for (int i = 0; i < n; i++)
        pthread_create(&w[i], NULL, pending_worker, (void *)spin);
    while (atomic_load(&pending_ready) < n)
        ;
    for (int i = 0; i < n; i++)
        pthread_cancel(w[i]);
    atomic_store(&pending_go, 1);
    int returned = 0, canceled = 0;
    for (int i = 0; i < n; i++) {
        void *ret;
        pthread_join(w[i], &ret);
        returned += ret == (void *)7;
        canceled += ret == PTHREAD_CANCELED;
    }
    churning = 0;
    for (int i = 0; i < churners; i++)
        pthread_join(c[i], NULL);
    printf("%s returned=%d canceled=%d\n", mode, returned, canceled);
    return 0;
}

/* ---- holdstart */

static volatile int filing = 1;
static _Atomic long files, not_on_0;

static void *file_loop(void *arg)
{
    (void)arg;
    char buf[256];
    while (filing) {
        int fd = open("/proc/self/stat", O_RDONLY);
        if (fd != 0)
            atomic_fetch_add(&not_on_0, 1);
        if (read(fd, buf, sizeof buf) < 0) { /* counted by its number only */ }
        close(fd);
        atomic_fetch_add(&files, 1);
        for (double t0 = now_s(); now_s() - t0 < 0.002;)
            ;
    }
    return NULL;
}

static int hold_start(void)
{
    close(0);
    pthread_t f;
    pthread_create(&f, NULL, file_loop, NULL);
    usleep(100000);
    double mean_ms;
    int slow = time_starts(30, 0.020, 1000, &mean_ms);
    filing = 0;
    pthread_join(f, NULL);
    printf("holdstart starts=30 starts_over_20ms=%d mean_ms=%.2f files=%ld not_on_0=%ld\n", slow, mean_ms,
           (long)files, (long)not_on_0);
    return 0;
}

/* ---- asynccancel */

static volatile unsigned long deep_sink;

__attribute__((noinline)) static void deep(int n)
{
    if (n) {
        deep(n - 1);
        deep_sink++;
    } else {
        for (int i = 0; i < 1000; i++)
            deep_sink += (unsigned long)i;
    }
}

static void *compute_async(void *arg)
{
    (void)arg;
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
    for (;;)
        deep(40);
    return NULL;
}

static int async_cancel(void)
{
    int canceled = 0;
    for (int i = 0; i < 400; i++) {
        pthread_t t;
        pthread_create(&t, NULL, compute_async, NULL);
        struct timespec d = { 0, 2000000 + (i % 7) * 300000 };
        nanosleep(&d, NULL);
        pthread_cancel(t);
        void *ret;
        pthread_join(t, &ret);
        canceled += ret == PTHREAD_CANCELED;
    }
    double t0 = now_s();
    for (int i = 0; i < 20; i++) {
        void *h = dlopen("libz.so.1", RTLD_NOW);
        if (h)
            dlclose(h);
    }
    printf("asynccancel canceled=%d dl_ms=%.1f\n", canceled, (now_s() - t0) * 1e3);
    return 0;
}

/* ---- ownhandler */

static volatile int in_own_handler;

static void own_prof_handler(int sig)
{
    (void)sig;
    in_own_handler = 1;
    for (;;)
        ; /* only a cancellation ends it */
}

static void *spin_async(void *arg)
{
    (void)arg;
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
    for (;;)
        deep_sink++;
    return NULL;
}

static int own_handler(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = own_prof_handler;
    sigaction(SIGPROF, &sa, NULL);
    pthread_t t;
    pthread_create(&t, NULL, spin_async, NULL);
    sigset_t prof;
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    pthread_sigmask(SIG_BLOCK, &prof, NULL); /* the timer's signals go to the spinning thread */
    struct itimerval it = { { 0, 10000 }, { 0, 10000 } };
    setitimer(ITIMER_PROF, &it, NULL);
    while (!in_own_handler)
        usleep(1000);
    double t0 = now_s();
    const char *canceled = cancel_within_3s(t);
    printf("ownhandler canceled=%s ms=%.1f\n", canceled, (now_s() - t0) * 1e3);
    return 0;
}

/* ---- ownlongjmp */

static jmp_buf cpu_limit;

static void cpu_limit_reached(int sig)
{
    (void)sig;
    longjmp(cpu_limit, 1); /* the mask inside the handler stays */
}

static void *compute_until_limit(void *arg)
{
    (void)arg;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = cpu_limit_reached;
    sigaction(SIGPROF, &sa, NULL);
    if (!setjmp(cpu_limit)) {
        struct itimerval it = { { 0, 0 }, { 0, 20000 } };
        setitimer(ITIMER_PROF, &it, NULL);
        for (;;)
            deep_sink++;
    }
    sigset_t prof;
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    pthread_sigmask(SIG_UNBLOCK, &prof, NULL);
    sleep(100); /* a cancellation point, where the cancellation comes */
    return NULL;
}

static int own_longjmp(void)
{
    pthread_t t;
    pthread_create(&t, NULL, compute_until_limit, NULL);
    sleep(1);
    printf("ownlongjmp canceled=%s\n", cancel_within_3s(t));
    return 0;
}

/* ---- reopen */

static int reopen(void)
{
    int lost = 0;
    for (int i = 0; i < 20000; i++) {
        close(0);
        int fd = open("/dev/null", O_RDONLY);
        if (fd != 0) {
            lost++;
            if (fd >= 0) {
                dup2(fd, 0);
                close(fd);
            }
        }
        struct timespec d = { 0, 5000 };
        nanosleep(&d, NULL);
    }
    printf("reopen rounds=20000 not_on_0=%d\n", lost);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int rc = strcmp(mode, "inclose") == 0 ? in_close()
             : strcmp(mode, "atstart") == 0 ? at_start()
             : strcmp(mode, "inhandler") == 0 ? in_handler()
             : strcmp(mode, "busystart") == 0 ? busy_start()
             : strcmp(mode, "longjmp") == 0 ? long_jump()
             : strcmp(mode, "latecancel") == 0 ? late_cancel()
             : strcmp(mode, "dup2cancel") == 0 ? pending_cancel(mode, 20, 0, 3)
             : strcmp(mode, "spincancel") == 0 ? pending_cancel(mode, 8, 1, 0)
             : strcmp(mode, "holdstart") == 0 ? hold_start()
             : strcmp(mode, "reopen") == 0 ? reopen()
             : strcmp(mode, "asynccancel") == 0 ? async_cancel()
             : strcmp(mode, "ownhandler") == 0 ? own_handler()
             : strcmp(mode, "ownlongjmp") == 0 ? own_longjmp()
             : (fprintf(stderr, "usage: r_fdcancel inclose|atstart|inhandler|busystart|longjmp|latecancel|"
                        "dup2cancel|spincancel|holdstart|reopen|asynccancel|ownhandler|ownlongjmp\n"), 2);
    fflush(stdout);
    _exit(rc); /* the threads still waiting stay out of the way of exit */
}
