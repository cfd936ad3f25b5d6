/* threads.c: the target's threads as the sampler sees them (threads.h): a thread started
 * through the pthread_create wrapper registers itself (ring, stack bounds, clock) and is
 * handed back by its thread-specific-data destructor; threads that existed before the shim
 * are adopted from /proc/self/task and reaped when they are gone. Never called from the signal handler; never on a vfork
 * child's borrowed memory (getpid() is checked against the process the state belongs to). */
#include "threads.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "interpose.h"
#include "lifetime.h"
#include "log.h"
#include "ring.h"
#include "sampler.h"
#include "shim.h"
#include "sigmask.h"
#include "unsampled.h"

static pthread_key_t thread_key;

static void thread_key_destructor(void *v)
{
    struct ps_thread *t = v;
    if (!t || getpid() != ps_pid)
        return;
    /* No SIGPROF may run on this thread once its ring is handed back. */
    unsampled_thread_end(t);
    sigmask_thread_end();
    clock_disarm(t);
    thread_set_self(NULL);
    atomic_store(&t->state, PS_T_EXITED);
    lifetime_thread_ending();
}

static void stack_bounds(struct ps_thread *t)
{
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

void threads_started(void)
{
    if (!ps_active || ps_cfg.hz <= 0 || !sampler_installed() || getpid() != ps_pid)
        return;
    ps_guard_enter();
    struct ps_thread *t = thread_claim(ps_gettid());
    if (t) {
        t->ring = ring_new(PS_RING_SLOTS, (uint32_t)ps_cfg.max_frames + PS_HANDLER_FRAMES);
        stack_bounds(t);
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
            atomic_store(&t->state, PS_T_LIVE);
            thread_set_self(t);
            pthread_setspecific(thread_key, t);
            sigmask_thread_start();
            unsampled_thread_start(t, 1);
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

/* Threads already running when the shim starts (a library constructor started them). */
void threads_adopt_existing(void)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task");
    DIR *d = opendir(path);
    if (!d)
        return;
    struct dirent *e;
    pid_t self = ps_gettid();
    while ((e = readdir(d)) != NULL) {
        pid_t tid = (pid_t)atoi(e->d_name);
        if (tid <= 0 || tid == self)
            continue;
        struct ps_thread *t = thread_claim(tid);
        if (!t)
            break;
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
    closedir(d);
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
    thread_set_self(NULL);
    int used = atomic_load(&ps_threads_used);
    for (int i = 0; i < used; i++) {
        struct ps_thread *t = &ps_threads[i];
        atomic_store(&t->taken, 0);
        atomic_store(&t->signals, 0);
        atomic_store(&t->no_libunwind, 0);
        if (atomic_load(&t->state) == PS_T_FREE)
            continue;
        clock_forget_inherited(t);
        ring_free(t->ring);
        t->ring = NULL;
        atomic_store(&t->state, PS_T_FREE);
    }
    atomic_store(&ps_threads_used, 0);
}
