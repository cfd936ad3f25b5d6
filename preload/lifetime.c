/* lifetime.c: the shim's threads never keep a process alive (lifetime.h). glibc ends a process
 * whose main thread left through pthread_exit when its last thread ends, counting every thread,
 * the shim's writer and watcher too, which never end on their own and block every signal: the
 * process would live on, SIGTERM pending. So each shim thread, at each pass, asks whether the
 * target is gone: the main thread a zombie (/proc/self/stat) and no thread left but the shim's
 * (/proc/self/status's Threads). Then the run is finished with the main thread's own status
 * (the stat file's exit_code) and the shim's threads end: when the main thread left through
 * pthread_exit they return, and glibc's own count ends the process with exit(0) (atexit
 * handlers run, stdio flushed); when it left by a raw exit (SYS_exit, the one exit seccomp
 * strict mode allows) they end by the same raw exit, since the kernel gives the process the
 * status of its last thread to end (returning, the last shim thread gave 0): with the main
 * thread's code, or 0 where a thread of the target was still there when the main thread was
 * first seen gone (it ends last; through the C library, with 0; the code of one ending by a raw
 * exit of its own is not known, and a thread that ended in the second before the main thread
 * was seen gone counts as before it: docs/shim.md, Known limits). Both reads only over-count
 * while a thread is starting or ending, so the target is never declared gone too early. Never
 * on the target's threads except the two notes from wrappers. */
#include "lifetime.h"

#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fatal.h"
#include "fdcache.h"
#include "fds.h"
#include "leader.h"
#include "shim.h"
#include "writer.h"

#define SLOW_CHECK_NS 1000000000ull /* the main thread's state, while nothing says it ended */
#define CLOSE_FOR_NS 1000000000ull  /* checks every 10 ms for this long after a note */
#define ENDING_FOR_NS 50000000ull   /* and every 2 ms for this long after a thread ended */

static _Atomic int main_ended;   /* the main thread left, or is leaving (seen or noted) */
static _Atomic int main_pthread_exit; /* it left through pthread_exit (its wrapper said so) */
static _Atomic int raw_exit_code = -1; /* the run finished after a raw exit of the main thread: the code to end with */
static _Atomic int others_at_gone; /* threads of the target's still there when the main thread was first seen gone */
static _Atomic int closely;      /* it may end unseen (strict mode) */
static _Atomic uint64_t noted_ns; /* the last note that the target may be ending */
static _Atomic uint64_t ending_ns; /* the last thread of the target's seen ending */
static _Atomic int shim_threads;  /* the shim's threads running now */
static _Atomic uint64_t last_check_ns;

static void note(void)
{
    atomic_store(&noted_ns, ps_now_ns());
    writer_wake();
    leader_wake();
}

void lifetime_main_exiting(void)
{
    if (!ps_active || getpid() != ps_pid)
        return;
    atomic_store(&main_ended, 1);
    atomic_store(&main_pthread_exit, 1);
    atomic_store(&ending_ns, ps_now_ns()); /* the main thread itself is gone within microseconds */
    note();
}

void lifetime_thread_ending(void)
{
    if (atomic_load(&main_ended) || atomic_load(&closely)) {
        atomic_store(&ending_ns, ps_now_ns());
        note();
    }
}

void lifetime_watch_closely(void)
{
    atomic_store(&closely, 1);
    atomic_store(&noted_ns, ps_now_ns());
}

void lifetime_shim_thread(int delta)
{
    atomic_fetch_add(&shim_threads, delta);
    int code = atomic_load(&raw_exit_code);
    if (delta < 0 && code >= 0)
        syscall(SYS_exit, code); /* whichever shim thread ends last gives the process its status */
}

long lifetime_period_ms(long normal)
{
    if (!atomic_load(&main_ended) && !atomic_load(&closely))
        return normal;
    uint64_t now = ps_now_ns();
    if (now - atomic_load(&ending_ns) < ENDING_FOR_NS)
        return normal < 2 ? normal : 2; /* it is gone within microseconds of its destructor */
    if (now - atomic_load(&noted_ns) < CLOSE_FOR_NS)
        return normal < 10 ? normal : 10;
    return normal;
}

/* The text of a /proc/self file, NUL-terminated; -1 when it cannot be read. */
static ssize_t read_self(const char *path, char *buf, size_t size)
{
    if (fds_may_open()) {
        ssize_t n = fdcache_read(path, buf, size); /* kept: no low number taken each check */
        return n > 0 ? n : -1;
    }
    int fd = fds_run_open(path, O_RDONLY | O_CLOEXEC, 0); /* a seccomp filter's kept file */
    if (fd < 0)
        return -1;
    ssize_t n = pread(fd, buf, size - 1, 0);
    fds_run_close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    return n;
}

/* The main thread's state letter and exit code (waitpid's form), from /proc/self/stat. */
static int main_state(char *state, int *exit_code)
{
    char buf[1024];
    if (read_self("/proc/self/stat", buf, sizeof buf) < 0)
        return -1;
    char *p = strrchr(buf, ')'); /* the command name may hold anything, but not past this */
    if (!p || p[1] != ' ')
        return -1;
    *state = p[2];
    /* Field 52 (exit_code); fields from 3, the state, each after one space. */
    int field = 3;
    for (p += 2; *p && field < 52; p++)
        if (*p == ' ')
            field++;
    *exit_code = field == 52 ? atoi(p) : 0;
    return 0;
}

static int threads_now(void)
{
    char buf[4096];
    if (read_self("/proc/self/status", buf, sizeof buf) < 0)
        return -1;
    char *p = strstr(buf, "\nThreads:");
    return p ? atoi(p + 9) : -1;
}

int lifetime_check(void)
{
    /* At most every 1.5 ms between the shim's threads while the target may be ending (each
     * pass then), else once a second: a raw exit of the main thread has no wrapper to say so.
     * The time first: the shim's threads ask at every wakeup, and getpid is a system call. */
    uint64_t now = ps_now_ns(), last = atomic_load(&last_check_ns);
    uint64_t gap = atomic_load(&main_ended) || atomic_load(&closely) ? 1500000ull : SLOW_CHECK_NS;
    if (now - last < gap || !ps_active || getpid() != ps_pid)
        return 0;
    if (!atomic_compare_exchange_strong(&last_check_ns, &last, now))
        return 0;
    char state = 0;
    int code = 0;
    if (main_state(&state, &code) != 0 || (state != 'Z' && state != 'X'))
        return 0;
    int first_seen = !atomic_exchange(&main_ended, 1);
    if (first_seen) /* however it ended: watch closely from now on */
        atomic_store(&noted_ns, now);
    int n = threads_now();
    if (first_seen && n > 1 + atomic_load(&shim_threads))
        atomic_store(&others_at_gone, 1); /* one of them will be the last thread to end */
    /* The zombie main thread is still counted, and so are the shim's running threads. */
    if (n < 0 || n > 1 + atomic_load(&shim_threads))
        return 0;
    int raw = !atomic_load(&main_pthread_exit) && WIFEXITED(code);
    if (raw && atomic_load(&others_at_gone))
        code = 0; /* the process's status is its last thread's: one of the target's, after the main thread */
    char status[48] = "ok";
    if (WIFSIGNALED(code))
        snprintf(status, sizeof status, "signal %s", fatal_signal_name(WTERMSIG(code)));
    else if (WEXITSTATUS(code) != 0)
        snprintf(status, sizeof status, "exit %d", WEXITSTATUS(code));
    if (raw)
        atomic_store(&raw_exit_code, WEXITSTATUS(code)); /* before any shim thread ends (shim_finish stops the others) */
    shim_finish(status);
    return 1;
}

void lifetime_after_fork(void)
{
    atomic_store(&main_ended, 0);
    atomic_store(&main_pthread_exit, 0);
    atomic_store(&raw_exit_code, -1);
    atomic_store(&others_at_gone, 0);
    atomic_store(&closely, 0);
    atomic_store(&shim_threads, 0);
    atomic_store(&last_check_ns, 0);
}
