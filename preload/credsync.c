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
 * converges all the same. Each serving thread has a slot, taken by its creator before the
 * thread exists (a creator that is a serving thread first takes the latest state, which the new
 * thread inherits), holding the last request it applied. The caller wakes the threads (a futex,
 * the watcher's eventfd) and waits, at most CREDSYNC_WAIT_MS, until no creation is under way and
 * every slot holds its request, or belongs to a thread that ended and that the kernel no longer
 * knows (tgkill with signal 0: ESRCH; the C library's broadcast reaches a thread until then).
 * Two versions before this one were broken by reviews (docs/shim.md).
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
#include "writer.h"

#define CREDSYNC_WAIT_MS 500
#define SLOTS 8

/* A serving thread's slot: taken by its creator before the thread exists, so no thread the C
 * library can reach is ever missing from the caller's wait. */
enum { SLOT_FREE, SLOT_LIVE, SLOT_ENDING };
static struct slot {
    _Atomic int state;
    _Atomic pid_t tid;        /* set by the thread at its first serve; 0 before */
    _Atomic unsigned applied; /* the last request whose state the thread holds */
} slots[SLOTS];
static _Atomic int creating;       /* creators between taking a slot and pthread_create's return */
static _Atomic pid_t owner;        /* the thread whose request is in the mailbox; 0 none */
static _Atomic unsigned gen;       /* the request's number, from 1 */
static _Atomic uint32_t progress;  /* futex word: bumped when a thread has served */

/* The mailbox: the state to take. */
static long want_securebits, want_keepcaps;
static struct __user_cap_data_struct want_caps[2];

/* On a serving thread, its slot: a thread it creates starts in its state. */
static __thread int self_slot = -1;
/* On a target's thread: a signal handler changed its credentials while its own request was
 * under way (the nested call does not wait for itself): the request is made again. */
static __thread volatile sig_atomic_t nested_change;

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

/* An ending slot whose thread the kernel no longer knows is free again; 1 while it is there. */
static int ending_still_there(struct slot *sl)
{
    pid_t tid = atomic_load(&sl->tid);
    if (tid && syscall(SYS_tgkill, getpid(), tid, 0) == 0)
        return 1;
    int ending = SLOT_ENDING;
    atomic_compare_exchange_strong(&sl->state, &ending, SLOT_FREE);
    return 0;
}

/* Whether every thread the C library may reach holds request g's state. */
static int all_hold(unsigned g)
{
    if (atomic_load(&creating) > 0)
        return 0;
    for (int i = 0; i < SLOTS; i++) {
        int st = atomic_load(&slots[i].state);
        if (st == SLOT_LIVE && (int)(atomic_load(&slots[i].applied) - g) < 0)
            return 0;
        if (st == SLOT_ENDING && ending_still_there(&slots[i]))
            return 0;
    }
    return 1;
}

static int any_slot(void)
{
    if (atomic_load(&creating) > 0)
        return 1;
    for (int i = 0; i < SLOTS; i++)
        if (atomic_load(&slots[i].state) != SLOT_FREE)
            return 1;
    return 0;
}

static int same_state(long securebits, long keepcaps, const struct __user_cap_data_struct caps[2])
{
    return securebits == want_securebits && keepcaps == want_keepcaps && memcmp(caps, want_caps, sizeof want_caps) == 0;
}

void credsync_after(void)
{
    if (ps_shim_thread || !ps_active || getpid() != ps_pid || !any_slot())
        return;
    int saved = errno;
    pid_t me = (pid_t)ps_gettid();
    long until = now_ms() + CREDSYNC_WAIT_MS;
    int passes = 0;
again:;
    pid_t free_ = 0;
    while (!atomic_compare_exchange_strong(&owner, &free_, me)) {
        if (free_ == me) {
            nested_change = 1; /* a handler on the thread whose request is under way */
            goto out;
        }
        if (now_ms() >= until)
            goto out; /* one stuck */
        struct timespec pause = { 0, 50000 };
        nanosleep(&pause, NULL);
        free_ = 0;
    }
    nested_change = 0;
    /* The state the threads must hold, read again after each wait: a handler of this thread's
     * may have changed it meanwhile. Always asked the first time, even when it equals the last
     * one asked: a setuid call since (every thread's) may have changed what the threads hold. */
    for (int round = 0; round < 2; round++) {
        long securebits, keepcaps;
        struct __user_cap_data_struct caps[2];
        if (read_state(&securebits, &keepcaps, caps) != 0)
            break;
        if (round > 0 && same_state(securebits, keepcaps, caps))
            break;
        want_securebits = securebits;
        want_keepcaps = keepcaps;
        memcpy(want_caps, caps, sizeof want_caps);
        unsigned g = atomic_fetch_add(&gen, 1) + 1;
        writer_poke();
        leader_poke();
        for (;;) {
            uint32_t seen = atomic_load(&progress);
            long left = until - now_ms();
            if (all_hold(g) || left <= 0)
                break;
            struct timespec wait = { 0, (left < 2 ? left : 2) * 1000000L };
            syscall(SYS_futex, (uint32_t *)&progress, FUTEX_WAIT_PRIVATE, seen, &wait, NULL, 0);
        }
        if (now_ms() >= until)
            break;
    }
    atomic_store(&owner, 0);
    if (nested_change && ++passes < 2 && now_ms() < until)
        goto again; /* a handler's change came after the last read (once: not a chase) */
out:
    errno = saved;
}

void credsync_serve(int *slot)
{
    if (*slot < 0)
        return;
    struct slot *sl = &slots[*slot];
    self_slot = *slot;
    if (!atomic_load(&sl->tid))
        atomic_store(&sl->tid, (pid_t)ps_gettid());
    unsigned g = atomic_load(&gen);
    if (atomic_load(&sl->applied) == g)
        return;
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
    atomic_store(&sl->applied, g);
    atomic_fetch_add(&progress, 1);
    syscall(SYS_futex, (uint32_t *)&progress, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    errno = saved;
}

void credsync_thread_start(int *slot)
{
    atomic_fetch_add(&creating, 1);
    *slot = -1;
    /* It starts with its creator's credentials: a serving thread first takes the latest state,
     * a target's thread holds it. */
    unsigned applied = atomic_load(&gen);
    if (ps_shim_thread && self_slot >= 0) {
        int mine = self_slot;
        credsync_serve(&mine);
        applied = atomic_load(&slots[mine].applied);
    }
    for (int i = 0; i < SLOTS && *slot < 0; i++) {
        int st = atomic_load(&slots[i].state);
        if (st == SLOT_ENDING && ending_still_there(&slots[i]))
            continue;
        int free_ = SLOT_FREE;
        if (atomic_compare_exchange_strong(&slots[i].state, &free_, SLOT_LIVE)) {
            atomic_store(&slots[i].tid, 0);
            atomic_store(&slots[i].applied, applied);
            *slot = i; /* (none free: eight serving threads at once; that thread does not serve) */
        }
    }
}

void credsync_thread_created(int *slot, int ok)
{
    if (!ok && *slot >= 0) {
        atomic_store(&slots[*slot].state, SLOT_FREE);
        *slot = -1;
    }
    atomic_fetch_sub(&creating, 1);
}

void credsync_thread_end(int *slot)
{
    if (*slot < 0)
        return;
    credsync_serve(slot);
    atomic_store(&slots[*slot].state, SLOT_ENDING); /* waited for until the kernel lets it go */
    self_slot = -1;
}

void credsync_after_fork(void)
{
    /* The parent's threads are not here; a fork child has only the forking thread. */
    for (int i = 0; i < SLOTS; i++) {
        atomic_store(&slots[i].state, SLOT_FREE);
        atomic_store(&slots[i].tid, 0);
    }
    atomic_store(&creating, 0);
    atomic_store(&owner, 0);
    self_slot = -1;
}
