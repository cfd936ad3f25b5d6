/* r_fdrace: a target that closes and reuses low descriptor numbers, as a shell's redirections do,
 * while other threads come and go (so a profiler's own threads open files often: sample and comm
 * files of new threads, counters). Each round: dup2(file, 7) must succeed (never EBUSY), number 7
 * must then still be that file (fstat identity) after a yield, and after close(7) the next open()
 * must get 7 again (the lowest free number). Prints the counts of each kind of failure and exits
 * 0; must never depend on a profiler being there. Argument: the rounds (default 20000). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static _Atomic int stop;

static void *short_thread(void *arg)
{
    (void)arg;
    volatile unsigned x = 0;
    for (int i = 0; i < 20000; i++)
        x += (unsigned)i;
    return NULL;
}

static void *churn(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        pthread_t t;
        if (pthread_create(&t, NULL, short_thread, NULL) == 0)
            pthread_join(t, NULL);
    }
    return NULL;
}

static int same_file(int fd, const struct stat *want)
{
    struct stat st;
    return fstat(fd, &st) == 0 && st.st_dev == want->st_dev && st.st_ino == want->st_ino;
}

/* dup2, again while it answers EBUSY (a profiler's open holding the number half-made). */
static int retry_dup2(int from, int to)
{
    for (int i = 0; i < 1000; i++) {
        int rc = dup2(from, to);
        if (rc >= 0 || errno != EBUSY)
            return rc;
        sched_yield();
    }
    return -1;
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 20000;
    /* 0..6 in use, 7 the lowest free number: the shim's transient opens land there. */
    int null = open("/dev/null", O_RDONLY);
    for (int fd = 0; fd < 7; fd++)
        if (fd != null && (fd > 2 || fcntl(fd, F_GETFD) < 0) && retry_dup2(null, fd) != fd) {
            printf("setup: cannot fill descriptor %d\n", fd);
            return 1;
        }
    if (null > 6)
        close(null);
    char path[] = "/tmp/r_fdrace.XXXXXX";
    int file = mkstemp(path);
    if (file < 0) {
        printf("setup: mkstemp: %d\n", errno);
        return 1;
    }
    unlink(path);
    file = fcntl(file, F_DUPFD, 100);
    struct stat want;
    fstat(file, &want);
    pthread_t c[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&c[i], NULL, churn, NULL);
    long ebusy = 0, replaced = 0, wrongnum = 0, other = 0;
    for (long r = 0; r < rounds; r++) {
        int rc = dup2(file, 7);
        if (rc != 7) {
            if (rc < 0 && errno == EBUSY)
                ebusy++;
            else
                other++;
            continue;
        }
        for (int i = 0; i < 20; i++)
            sched_yield();
        if (!same_file(7, &want))
            replaced++;
        close(7);
        int n = open("/dev/null", O_RDONLY);
        if (n != 7)
            wrongnum++;
        if (n >= 0)
            close(n);
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < 2; i++)
        pthread_join(c[i], NULL);
    printf("rounds %ld ebusy %ld replaced %ld wrongnum %ld other %ld\n", rounds, ebusy, replaced, wrongnum,
           other);
    return 0;
}
