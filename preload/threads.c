/* threads.c: the target's threads as the sampler sees them (threads.h): a thread started
 * through the pthread_create wrapper registers itself (ring, stack bounds, clock) and is
 * handed back by its thread-specific-data destructor; threads that existed before the shim
 * are adopted from /proc/self/task and reaped when they are gone. Never called from the signal handler; never on a vfork
 * child's borrowed memory (getpid() is checked against the process the state belongs to). */
#include "threads.h"

#include <fcntl.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "dlbusy.h"
#include "fdgate.h"
#include "fds.h"
#include "interpose.h"
#include "lifetime.h"
#include "log.h"
#include "ring.h"
#include "sampler.h"
#include "shim.h"
#include "sigmask.h"
#include "unsampled.h"
#include "writer.h"

static pthread_key_t thread_key;

static void thread_key_destructor(void *v)
{
    struct ps_thread *t = v;
    /* The slot must still be this thread's: in a fork child that did not register its thread
     * again (no sample files, a seccomp filter) the key still names the parent's slot, which
     * another thread may have claimed since. */
    if (!t || getpid() != ps_pid || atomic_load(&t->tid) != ps_gettid())
        return;
    /* Not a cancellation point of the thread's: its clock's close would be one, and a thread
     * that returned with a cancellation pending was reported to pthread_join as cancelled. */
    int cancel_state = PTHREAD_CANCEL_ENABLE;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
    fdgate_thread_exit(); /* a thread cancelled inside a close */
    if (dlbusy_thread_exit() > 0) /* a thread unwound out of the handler's walk */
        ps_log_once("walk-exit", "thread %d ended inside the SIGPROF handler's stack walk (a thread in asynchronous "
                    "cancellation): its walk is uncounted", (int)ps_gettid());
    /* No SIGPROF may run on this thread once its ring is handed back. */
    unsampled_thread_end(t);
    sigmask_thread_end();
    clock_disarm(t);
    thread_set_self(NULL);
    /* A short thread's ring is mostly empty at its end: reused by the next thread at once, not
     * kept until the writer's next pass while thousands of threads start (r_threadchurn). While
     * the slot is still this thread's: once it says EXITED, a pass may hand it to a new thread. */
    writer_ring_handback(t);
    atomic_store(&t->state, PS_T_EXITED);
    lifetime_thread_ending();
    pthread_setcancelstate(cancel_state, NULL);
}

/* In a fork child: the forking thread's stack bounds, as its parent knew them (the child runs
 * on the same stack). 0,0 when the parent had no record of that thread. */
static uintptr_t inherited_lo, inherited_hi;

/* The initial thread's stack without /proc/self/maps (which pthread_getattr_np reads and parses
 * for it: a third of what a short process paid the shim at start). The kernel puts the
 * executable's name (AT_EXECFN) last on that stack, just below its top, and the stack may grow
 * to RLIMIT_STACK below the top: the bounds pthread_getattr_np gives, less its check of the
 * mapping below (with no limit, 8 MiB are taken). -1 when the auxiliary vector does not say, or
 * the calling thread is not on that stack. */
static int initial_stack_bounds(struct ps_thread *t)
{
    extern void *__libc_stack_end;
    const char *fn = (const char *)getauxval(AT_EXECFN);
    struct rlimit rl;
    uintptr_t page = (uintptr_t)getpagesize(), end = (uintptr_t)__libc_stack_end;
    if (!fn || getrlimit(RLIMIT_STACK, &rl) != 0)
        return -1;
    uintptr_t top = ((uintptr_t)fn + strlen(fn) + 1 + sizeof(void *) + page - 1) & ~(page - 1);
    uintptr_t size = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > ((rlim_t)1 << 40) ? (uintptr_t)8 << 20 : (uintptr_t)rl.rlim_cur;
    /* As glibc: from the page above __libc_stack_end (the frames lie below it, in the same
     * mapping as the name) down to RLIMIT_STACK below the mapping's top. */
    uintptr_t hi = (end & ~(page - 1)) + page, here = (uintptr_t)__builtin_frame_address(0);
    if (!end || hi > top || size < page || size > top || top - size >= hi)
        return -1;
    if (here >= hi || here < top - size)
        return -1; /* not on that stack (a fork child of another thread, a stack of its own) */
    t->stack_lo = top - size;
    t->stack_hi = hi;
    return 0;
}

static void stack_bounds(struct ps_thread *t)
{
    if (inherited_hi) {
        uintptr_t lo = inherited_lo, hi = inherited_hi, here = (uintptr_t)__builtin_frame_address(0);
        inherited_lo = inherited_hi = 0; /* the forking thread's alone, used once */
        if (here > lo && here < hi) {
            t->stack_lo = lo;
            t->stack_hi = hi;
            return;
        }
    }
    if (ps_gettid() == getpid() && initial_stack_bounds(t) == 0)
        return;
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return;
    void *addr;
    size_t size;
    if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
        t->stack_lo = (uintptr_t)addr;
        t->stack_hi = (uintptr_t)addr + size;
    }
    pthread_attr_destroy(&attr);
}

/* The registry's slot of a thread that ended comes back at the writer's next pass (its samples
 * drained first, its end seen by the unsampled check): a program that starts threads faster
 * than that, thousands in a pass's 250 ms, filled it, and later threads went unsampled until
 * the pass ("more than 4096 threads" with four alive at a time). Past three quarters full, a
 * pass is asked for at once, at most every 10 ms. */
static void registry_pressure(void)
{
    static _Atomic uint64_t asked_ns;
    uint64_t now = ps_now_ns(), last = atomic_load(&asked_ns);
    if (now - last >= 10000000ull && atomic_compare_exchange_strong(&asked_ns, &last, now))
        writer_wake();
}

void threads_started(void)
{
    if (!ps_active || ps_cfg.hz <= 0 || !sampler_installed() || getpid() != ps_pid)
        return;
    ps_guard_enter();
    struct ps_thread *t = thread_claim(ps_gettid());
    if (!t || t - ps_threads >= PS_MAX_THREADS * 3 / 4)
        registry_pressure();
    if (t) {
        t->ring = ring_new(PS_RING_SLOTS, (uint32_t)ps_cfg.max_frames + PS_HANDLER_FRAMES);
        stack_bounds(t);
        t->unw_ok = 1; /* its stack's bounds are known: room for libunwind is checked */
        if (!t->ring) {
            atomic_store(&t->state, PS_T_FREE);
        } else {
            /* Its name now, without /proc: a process may end (an _exit) before the writer's
             * first pass, whose drain on the way out reads no /proc. */
            char name[17] = { 0 };
            if (ps_real_prctl(PR_GET_NAME, (unsigned long)name, 0, 0, 0) == 0) {
                memcpy(t->comm, name, 16);
                t->comm_checked_ns = ps_now_ns();
            }
            /* Its unsampled baseline before it is LIVE: a pass may check it from then on. */
            unsampled_thread_start(t, 1);
            atomic_store(&t->state, PS_T_LIVE);
            thread_set_self(t);
            pthread_setspecific(thread_key, t);
            sigmask_thread_start();
            clock_arm(t, 1);
        }
    } else {
        ps_log_once("threads", "more than %d threads: later threads are not sampled", PS_MAX_THREADS);
    }
    ps_guard_leave();
}

void threads_named(pthread_t thread, const char *name)
{
    if (!ps_active || !name)
        return;
    pid_t tid = 0;
    if (pthread_equal(thread, pthread_self()))
        tid = ps_gettid();
    else
        return; /* another thread's name is picked up from /proc by the writer */
    struct ps_thread *t = thread_self();
    if (t && t->tid == tid) {
        char buf[16] = { 0 };
        strncpy(buf, name, 15);
        memcpy(t->comm, buf, 16);
        t->comm_checked_ns = ps_now_ns();
    }
}

long threads_in_process(void)
{
    /* /proc/self/task's link count is 2 and one per thread (procfs). */
    struct stat st;
    if (stat("/proc/self/task", &st) != 0 || st.st_nlink < 3)
        return -1;
    return (long)st.st_nlink - 2;
}

/* Threads already running when the shim starts (a library constructor started them). Listed
 * with getdents64 into a buffer on the stack: opendir's 32 KiB buffer was often the first
 * allocation of a short process. */
void threads_adopt_existing(void)
{
    /* A process whose only thread is this one, as nearly every process is at its start, is
     * told by one stat (1.4 us here) without reading the folder (14-24 us). Any other count,
     * or none, reads it. */
    if (threads_in_process() == 1)
        return;
    int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return;
    pid_t self = ps_gettid();
    char buf[4096];
    long n;
    int full = 0;
    while (!full && (n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
        for (long off = 0; off < n;) {
            struct linux_dirent64_ps {
                uint64_t d_ino;
                int64_t d_off;
                unsigned short d_reclen;
                unsigned char d_type;
                char d_name[];
            } *e = (void *)(buf + off);
            off += e->d_reclen;
            pid_t tid = (pid_t)atoi(e->d_name);
            if (tid <= 0 || tid == self)
                continue;
            struct ps_thread *t = thread_claim(tid);
            if (!t) {
                full = 1;
                break;
            }
            t->foreign = 1;
            t->ring = ring_new(PS_RING_SLOTS, (uint32_t)ps_cfg.max_frames + PS_HANDLER_FRAMES);
            if (!t->ring) {
                atomic_store(&t->state, PS_T_FREE);
                continue;
            }
            unsampled_thread_start(t, 0);
            atomic_store(&t->state, PS_T_LIVE);
            clock_arm(t, 0);
        }
    }
    ps_real_close(fd);
}

/* Threads that existed before the shim (no exit hook of ours): closed when they are gone. */
void threads_reap_foreign(void)
{
    pid_t pid = getpid();
    int nthreads = atomic_load(&ps_threads_used);
    for (int i = 0; i < nthreads; i++) {
        struct ps_thread *t = &ps_threads[i];
        if (atomic_load(&t->state) != PS_T_LIVE || !t->foreign)
            continue;
        if (syscall(SYS_tgkill, pid, t->tid, 0) < 0 && errno == ESRCH) {
            clock_disarm(t);
            atomic_store(&t->state, PS_T_EXITED);
        }
    }
}

void threads_setup(void)
{
    pthread_key_create(&thread_key, thread_key_destructor);
}

/* In a fork child: the parent's threads are not here; our copies of their clocks and rings go. */
void threads_forget_after_fork(void)
{
    struct ps_thread *self = thread_self();
    inherited_lo = self ? self->stack_lo : 0;
    inherited_hi = self ? self->stack_hi : 0;
    thread_set_self(NULL);
    int used = atomic_load(&ps_threads_used);
    for (int i = 0; i < used; i++) {
        struct ps_thread *t = &ps_threads[i];
        atomic_store(&t->taken, 0);
        atomic_store(&t->signals, 0);
        atomic_store(&t->no_libunwind, 0);
        atomic_store(&t->in_handler, 0); /* a thread that is not here was inside one */
        if (atomic_load(&t->state) == PS_T_FREE)
            continue;
        clock_forget_inherited(t);
        ring_free(t->ring); /* cached: the child's own thread takes one back at once */
        t->ring = NULL;
        atomic_store(&t->state, PS_T_FREE);
    }
    atomic_store(&ps_threads_used, 0);
}
