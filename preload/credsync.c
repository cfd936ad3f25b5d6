/* credsync.c: the shim's threads keep the credentials of the target's (credsync.h).
 *
 * The C library's setuid family (setresuid, setresgid, setgroups...) changes every thread's
 * credentials, a signal to each, and aborts the process when the call succeeded on one thread
 * and failed on another (nptl's setxid_error). capset and prctl's PR_SET_KEEPCAPS and
 * PR_SET_SECUREBITS change the calling thread's only: `setpriv --reuid --regid` keeps its
 * capabilities across setresuid (PR_SET_KEEPCAPS), raises them again with capset on its own
 * thread, then calls setresgid, which the shim's threads, their capabilities gone, were refused:
 * setpriv died of SIGABRT, as did `capsh --keep=1 --uid --caps --gid`.
 *
 * So after such a call succeeded on a target's thread, that thread's resulting state (its
 * securebits, keep-capabilities flag and capability sets) goes into a mailbox, and each of the
 * shim's serving threads (the writer, the watcher, libunwind's warm-up) puts itself in that
 * state: securebits first (setting them needs CAP_SETPCAP, which the capset may drop), then the
 * flag, then the capabilities. A state, not a replay of the call: a thread that missed a request
 * (started by a shim thread that had not served it yet, or woken late) converges all the same.
 * The threads are woken (a futex, the watcher's eventfd) and waited for, at most
 * CREDSYNC_WAIT_MS; one inside the loader (shimload.c) at most CREDSYNC_LOADER_WAIT_MS, since a
 * caller in a library's constructor holds the loader's lock it waits for. A serving thread that
 * ends is no longer counted, but the C library's next broadcast may still reach it until it is
 * gone: its tid is kept in an ending slot, and the caller also waits until the kernel no longer
 * knows it (tgkill with signal 0: ESRCH).
 *
 * Invariants: the caller's side is async-signal-safe (libcap's psx makes these calls from a
 * signal handler on every thread at once): atomics, futex, nanosleep, getters and the wake-ups;
 * no allocation, no lock, every wait bounded. A handler that interrupts its own thread's request
 * does not wait for it. Never in a vfork child (the threads are the parent's) nor on a shim
 * thread. */
#include "credsync.h"

#include <errno.h>
#include <linux/capability.h>
#include <linux/futex.h>
#include <linux/securebits.h>
#include <signal.h>
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
#include "shimload.h"
#include "writer.h"

#define CREDSYNC_WAIT_MS 500
#define CREDSYNC_LOADER_WAIT_MS 20
#define ENDING_SLOTS 4

static _Atomic int serving;            /* shim threads that serve requests now */
static _Atomic pid_t ending[ENDING_SLOTS]; /* serving threads on their way out, until gone */
static _Atomic pid_t owner;            /* the thread whose request is in the mailbox; 0 none */
static _Atomic unsigned gen;           /* the request's number, from 1 */
static _Atomic uint32_t acks;          /* futex word: threads done with request `gen` */

/* The mailbox: the state to take. */
static long want_securebits, want_keepcaps;
static struct __user_cap_data_struct want_caps[2];

/* On a serving thread, its own `seen`: a thread it creates (the writer starts libunwind's
 * warm-up) starts in its state. */
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

/* The calling thread's state; 0, or -1 when it cannot be read. */
static int read_state(long *securebits, long *keepcaps, struct __user_cap_data_struct caps[2])
{
    struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
    *securebits = syscall(SYS_prctl, PR_GET_SECUREBITS, 0, 0, 0, 0);
    *keepcaps = syscall(SYS_prctl, PR_GET_KEEPCAPS, 0, 0, 0, 0);
    memset(caps, 0, 2 * sizeof caps[0]);
    if (*securebits < 0 || *keepcaps < 0 || syscall(SYS_capget, &hdr, caps) != 0)
        return -1;
    return 0;
}

/* Until the serving threads that ended are gone from the kernel (and so from the C library's
 * broadcast), at most until `until`. */
static void wait_ending(long until)
{
    pid_t pid = getpid();
    for (int i = 0; i < ENDING_SLOTS; i++) {
        pid_t tid = atomic_load(&ending[i]);
        while (tid && syscall(SYS_tgkill, pid, tid, 0) == 0 && now_ms() < until) {
            struct timespec pause = { 0, 100000 };
            nanosleep(&pause, NULL);
        }
        if (tid)
            atomic_compare_exchange_strong(&ending[i], &tid, 0);
    }
}

void credsync_after(long nr, const long a[6])
{
    (void)nr;
    (void)a;
    if (ps_shim_thread || !ps_active || getpid() != ps_pid)
        return;
    int n = atomic_load(&serving);
    int any_ending = 0;
    for (int i = 0; i < ENDING_SLOTS; i++)
        any_ending |= atomic_load(&ending[i]) != 0;
    if (n <= 0 && !any_ending)
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
    if (read_state(&want_securebits, &want_keepcaps, want_caps) != 0) {
        atomic_store(&owner, 0);
        goto out;
    }
    n = atomic_load(&serving);
    atomic_store(&acks, 0);
    atomic_fetch_add(&gen, 1);
    writer_poke();
    leader_poke();
    for (;;) {
        uint32_t done = atomic_load(&acks);
        long left = until - now_ms();
        if ((int)done >= n || left <= 0)
            break;
        if ((int)done >= n - shimload_threads_loading() && now_ms() - posted >= CREDSYNC_LOADER_WAIT_MS)
            break;
        struct timespec wait = { 0, (left < 10 ? left : 10) * 1000000L };
        syscall(SYS_futex, (uint32_t *)&acks, FUTEX_WAIT_PRIVATE, done, &wait, NULL, 0);
    }
    wait_ending(until);
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
    long securebits, keepcaps;
    struct __user_cap_data_struct caps[2];
    if (read_state(&securebits, &keepcaps, caps) == 0) {
        /* (the keep-capabilities bit is set below without the privilege this one needs) */
        if ((securebits ^ want_securebits) & ~(long)SECBIT_KEEP_CAPS)
            syscall(SYS_prctl, PR_SET_SECUREBITS, want_securebits, 0, 0, 0);
        if (keepcaps != want_keepcaps)
            syscall(SYS_prctl, PR_SET_KEEPCAPS, want_keepcaps, 0, 0, 0);
        if (memcmp(caps, want_caps, sizeof caps) != 0) {
            struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
            struct __user_cap_data_struct set[2];
            memcpy(set, want_caps, sizeof set);
            syscall(SYS_capset, &hdr, set);
        }
    }
    if (atomic_load(&gen) == g) {
        atomic_fetch_add(&acks, 1);
        syscall(SYS_futex, (uint32_t *)&acks, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    }
    errno = saved;
}

void credsync_thread_start(unsigned *seen)
{
    /* It starts with its creator's credentials: a target's thread is in the state of every
     * request before; a serving thread in the state of the requests it has served. */
    *seen = self_seen ? *self_seen : atomic_load(&gen);
    atomic_fetch_add(&serving, 1);
}

void credsync_thread_cancel(void)
{
    atomic_fetch_sub(&serving, 1);
}

void credsync_thread_end(unsigned *seen)
{
    pid_t tid = (pid_t)ps_gettid();
    for (int i = 0; i < ENDING_SLOTS; i++) {
        pid_t none = 0;
        if (atomic_compare_exchange_strong(&ending[i], &none, tid))
            break; /* (no slot free: four threads ending at once; not waited for) */
    }
    credsync_serve(seen);
    atomic_fetch_sub(&serving, 1);
    credsync_serve(seen); /* posted between the two, with this thread counted: answered */
}

void credsync_after_fork(void)
{
    atomic_store(&serving, 0); /* the parent's threads are not here */
    for (int i = 0; i < ENDING_SLOTS; i++)
        atomic_store(&ending[i], 0);
    atomic_store(&owner, 0);
    atomic_store(&acks, 0);
}
