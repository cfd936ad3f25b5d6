/* credsync.c: the shim's threads keep the credentials of the target's (credsync.h).
 *
 * The C library's setuid family (setresuid, setresgid, setgroups...) changes every thread's
 * credentials, a signal to each, and aborts the process when the call succeeded on one thread
 * and failed on another (nptl's setxid_error). capset and prctl's PR_SET_KEEPCAPS and
 * PR_SET_SECUREBITS change the calling thread's only: `setpriv --reuid --regid` keeps its
 * capabilities across setresuid (PR_SET_KEEPCAPS), raises them again with capset on its own
 * thread, then calls setresgid, which the shim's threads, their capabilities gone, were refused:
 * setpriv died of SIGABRT, as did `capsh --keep=1 --uid --caps --gid`. So, as the C library
 * does for the setuid family, such a call that succeeded on a target's thread is made again by
 * each of the shim's serving threads (the writer, the watcher) on itself: one request at a time
 * in a mailbox, the threads woken (a futex, an eventfd) and waited for, at most
 * CREDSYNC_WAIT_MS. Threads that hold the same credentials before the same call hold the same
 * after it.
 *
 * Invariants: the caller's side is async-signal-safe (libcap's psx makes these calls from a
 * signal handler on every thread at once): atomics, futex, nanosleep and the wake-ups only; no
 * allocation, no lock, every wait bounded. A handler that interrupts its own thread's request
 * does not wait for it (its call is not repeated: the threads may then lag one call). Never in a
 * vfork child (the threads are the parent's) nor on a shim thread. libunwind's warm-up thread,
 * which lives a few milliseconds after a process's first sample, serves as it ends (setpriv,
 * the run's leader at 997 Hz, met it in the middle of its calls). */
#include "credsync.h"

#include <errno.h>
#include <linux/capability.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fds.h"
#include "leader.h"
#include "ring.h"
#include "shim.h"
#include "writer.h"

#define CREDSYNC_WAIT_MS 500
/* A thread inside the loader (credsync_loading) is waited for this long only: a caller in a
 * library's constructor holds the loader's lock it waits for (0.5 s a call was waited out). A
 * dlopen of the shim's own otherwise takes a millisecond or two, and the thread answers after
 * it: one left behind would meet the next setuid call with the old credentials. */
#define CREDSYNC_LOADER_WAIT_MS 20

static _Atomic int serving;       /* shim threads that serve requests now */
static _Atomic int loading;       /* of them, inside the loader (credsync_loading) */
static _Atomic pid_t owner;       /* the thread whose request is in the mailbox; 0 none */
static _Atomic unsigned gen;      /* the request's number, from 1 */
static _Atomic uint32_t acks;     /* futex word: threads done with request `gen` */
static long req_nr, req_a[6];
static struct __user_cap_header_struct req_hdr;
static struct __user_cap_data_struct req_data[2];
/* On a serving thread, its own `seen`: a thread it creates (the writer starts libunwind's
 * warm-up) holds its credentials, which may lag the last request by one, not the caller's. */
static __thread unsigned *self_seen;

int credsync_wanted(long nr, const long a[6])
{
    if (nr == SYS_prctl)
        return a[0] == PR_SET_KEEPCAPS || a[0] == PR_SET_SECUREBITS;
    if (nr != SYS_capset || !a[0])
        return 0;
    int pid = ((const struct __user_cap_header_struct *)a[0])->pid;
    return pid == 0 || pid == (int)ps_gettid();
}

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The request copied into the mailbox: the caller's memory is not read by the other threads. */
static void post(long nr, const long a[6])
{
    req_nr = nr;
    memcpy(req_a, a, sizeof req_a);
    if (nr == SYS_capset) {
        memcpy(&req_hdr, (const void *)a[0], sizeof req_hdr);
        req_hdr.pid = 0; /* the serving thread itself */
        int words = req_hdr.version == _LINUX_CAPABILITY_VERSION_1 ? 1 : 2;
        memset(req_data, 0, sizeof req_data);
        memcpy(req_data, (const void *)a[1], (size_t)words * sizeof req_data[0]);
    }
}

void credsync_after(long nr, const long a[6])
{
    if (ps_shim_thread || !ps_active || getpid() != ps_pid)
        return;
    int n = atomic_load(&serving);
    if (n <= 0)
        return;
    int saved = errno;
    pid_t me = (pid_t)ps_gettid();
    long posted = now_ms(), until = posted + CREDSYNC_WAIT_MS;
    pid_t free_ = 0;
    while (!atomic_compare_exchange_strong(&owner, &free_, me)) {
        if (free_ == me || now_ms() >= until)
            goto out; /* a handler on the thread whose request is under way; or one stuck */
        struct timespec pause = { 0, 50000 };
        nanosleep(&pause, NULL);
        free_ = 0;
    }
    post(nr, a);
    atomic_store(&acks, 0);
    atomic_fetch_add(&gen, 1);
    writer_poke();
    leader_poke();
    for (;;) {
        uint32_t done = atomic_load(&acks);
        long left = until - now_ms();
        if ((int)done >= n || left <= 0)
            break;
        if ((int)done >= n - atomic_load(&loading) && now_ms() - posted >= CREDSYNC_LOADER_WAIT_MS)
            break;
        struct timespec wait = { 0, (left < 10 ? left : 10) * 1000000L };
        syscall(SYS_futex, (uint32_t *)&acks, FUTEX_WAIT_PRIVATE, done, &wait, NULL, 0);
    }
    atomic_store(&owner, 0);
out:
    errno = saved;
}

void credsync_serve(unsigned *seen)
{
    self_seen = seen;
    unsigned g = atomic_load(&gen);
    if (g == *seen)
        return;
    *seen = g;
    int saved = errno;
    if (req_nr == SYS_capset)
        syscall(SYS_capset, &req_hdr, req_data);
    else
        syscall(req_nr, req_a[0], req_a[1], req_a[2], req_a[3], req_a[4]);
    if (atomic_load(&gen) == g) {
        atomic_fetch_add(&acks, 1);
        syscall(SYS_futex, (uint32_t *)&acks, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    }
    errno = saved;
}

void credsync_thread_start(unsigned *seen)
{
    /* It starts with its creator's credentials: a target's thread holds those of every request
     * before; a serving thread those of the requests it has served. */
    *seen = self_seen ? *self_seen : atomic_load(&gen);
    atomic_fetch_add(&serving, 1);
}

void credsync_thread_cancel(void)
{
    atomic_fetch_sub(&serving, 1);
}

void credsync_thread_end(unsigned *seen)
{
    credsync_serve(seen);
    atomic_fetch_sub(&serving, 1);
    credsync_serve(seen); /* posted between the two, with this thread counted: answered */
}

void credsync_loading(int delta)
{
    if (ps_shim_thread)
        atomic_fetch_add(&loading, delta);
}

void credsync_after_fork(void)
{
    atomic_store(&loading, 0);
    atomic_store(&serving, 0); /* the parent's threads are not here */
    atomic_store(&owner, 0);
    atomic_store(&acks, 0);
}
