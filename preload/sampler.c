/* sampler.c: the SIGPROF handler and nothing else. It takes one stack sample of the thread it
 * interrupts into that thread's ring. Async-signal-safe throughout: no malloc, no locks, no
 * stdio, errno preserved; a full ring drops and counts, never waits. Signals that are not ours
 * go to the target's own SIGPROF disposition, exactly as if the shim were not there. */
#include "sampler.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <link.h>
#include <sys/auxv.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <sys/ioctl.h>

#include "clock.h"
#include "config.h"
#include "credsync.h"
#include "dlbusy.h"
#include "fdgate.h"
#include "fds.h"
#include "interpose.h"
#include "lifetime.h"
#include "log.h"
#include "meta.h"
#include "ring.h"
#include "objspan.h"
#include "shim.h"
#include "sigmask.h"
#include "unwlib.h"
#include "writer.h"

#ifndef TRAP_PERF
#define TRAP_PERF 6 /* perf event with sigtrap=1 (Linux 5.13) */
#endif

__thread int ps_guard_depth;
__thread int ps_in_unwind;
_Atomic uint64_t ps_samples_orphan;
_Atomic uint64_t ps_signals_chained;
int ps_timer_cookie;

static struct sigaction target_action; /* what the target asked for SIGPROF */
static enum ps_unwind unwinder;         /* in force: PERFSCOPE_UNWIND, or fp under valgrind */
static int pc_only;                     /* under valgrind: the interrupted PC alone */
static uintptr_t loader_lo, loader_hi;  /* the dynamic loader's code: no libunwind there */
static _Atomic int installed;
/* libunwind is loaded, initialised and its fast tracer warmed up outside any handler, on a
 * thread of its own that the writer starts once this image has taken a sample (the warm-up,
 * below): until then samples walk frame pointers, as in the guarded cases below. */
static _Atomic int libunwind_ready;
static _Atomic int libunwind_failed; /* it could not be loaded (logged): frame pointers for good */
static int libunwind_fast; /* the fast tracer may be used: set before libunwind_ready */
/* One warm-up at a time (the loader thread, or a thread before a seccomp filter), and no fork in
 * the middle of one: a child would copy the loader's or libunwind's state half-changed, and
 * its locks held by a thread it does not have. warm_began_ns: a warm-up under way since then
 * (0: none); nothing waits for one past PS_WARM_WAIT_NS from its start, for its dlopen may wait
 * for the loader's lock as long as a target's dlopen holds it (a library's constructor). */
#define PS_WARM_WAIT_NS 50000000ull /* 50 ms */
static pthread_mutex_t warm_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint64_t warm_began_ns;
static _Atomic int warm_thread_started;
static __thread int warm_locked_for_fork; /* this forking thread holds warm_lock */
/* The record has ended (sampler_close): a signal now is not a sample of it. */
static _Atomic int sampling_closed;

static int is_our_signal(int sig, const siginfo_t *si)
{
    if (sig == SIGTRAP)
        return si->si_code == TRAP_PERF;
    if (si->si_code == SI_TIMER)
        return si->si_value.sival_ptr == &ps_timer_cookie;
    if (si->si_code == POLL_IN || si->si_code == POLL_HUP || si->si_code == POLL_MSG ||
        si->si_code == POLL_ERR || si->si_code == POLL_PRI || si->si_code == POLL_OUT) {
        return fds_is_ours(si->si_fd);
    }
    return 0;
}

/* A frame-pointer walk bounded by the thread's stack, so a bad frame pointer ends the walk
 * instead of faulting. Without known bounds only the interrupted PC is taken. */
static uint32_t unwind_fp(const ucontext_t *uc, const struct ps_thread *t, uint64_t *frames, uint32_t max)
{
    uint32_t n = 0;
    frames[n++] = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    uintptr_t lo = t->stack_lo, hi = t->stack_hi;
    if (!hi)
        return n;
    uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
    uintptr_t fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
    if (sp > lo && sp < hi)
        lo = sp;
    while (n < max) {
        if (fp < lo || fp + 16 > hi || (fp & 7))
            break;
        uintptr_t next = ((const uintptr_t *)fp)[0];
        uintptr_t ret = ((const uintptr_t *)fp)[1];
        if (ret < 4096)
            break;
        frames[n++] = ret;
        if (next <= fp)
            break;
        fp = next;
    }
    return n;
}

static uint32_t unwind_libunwind(ucontext_t *uc, uint64_t *frames, uint32_t max)
{
    unw_cursor_t cursor;
    uint32_t n = 0;
    if (ps_unw.init_local2(&cursor, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) < 0) {
        frames[n++] = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
        return n;
    }
    do {
        unw_word_t ip = 0;
        if (ps_unw.get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0)
            break;
        frames[n++] = ip;
    } while (n < max && ps_unw.step(&cursor) > 0);
    if (n == 0)
        frames[n++] = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    return n;
}

/* libunwind's fast tracer (unw_backtrace) caches each return address's frame layout, so a
 * repeated stack costs a few table lookups a frame instead of a CFI evaluation. It starts from
 * the handler, so it writes straight into the ring slot (which has room for the handler's own
 * frames past max_frames) and the frames above the interrupted PC are then dropped. Anything
 * unexpected falls back to the step-by-step walk. */
static uint32_t unwind_libunwind_fast(ucontext_t *uc, uint64_t *frames, uint32_t max)
{
    uint64_t rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    int n = ps_unw.backtrace((void **)frames, (int)(max + PS_HANDLER_FRAMES));
    for (int i = 0; i < n && i < PS_HANDLER_FRAMES; i++) {
        if (frames[i] != rip)
            continue;
        uint32_t k = (uint32_t)(n - i) < max ? (uint32_t)(n - i) : max;
        memmove(frames, frames + i, 8 * (size_t)k);
        return k;
    }
    return unwind_libunwind(uc, frames, max);
}

/* libunwind needs ~10 KB of stack below the handler. A thread on a small stack (a goroutine
 * under cgo, a fibre, a 32 KB pthread) or on a small alternate signal stack gets frame
 * pointers, which need none, rather than a fault. */
#define PS_UNWIND_STACK_NEED (16 * 1024)
static int stack_room_for_libunwind(const struct ps_thread *t)
{
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    if (t->stack_hi && here > t->stack_lo && here < t->stack_hi)
        return here - t->stack_lo >= PS_UNWIND_STACK_NEED;
    stack_t ss;
    if (sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK)) {
        uintptr_t lo = (uintptr_t)ss.ss_sp;
        return here > lo && here - lo >= PS_UNWIND_STACK_NEED;
    }
    return 0; /* a stack we know nothing of */
}

/* A SIGPROF that is not ours on a thread whose target asked for SIGPROF blocked (the shim hid
 * it: sigmask.c): the target would not have received it yet. It is blocked for real on this
 * thread from the handler's return (the mask sigreturn restores) and sent again, so it waits,
 * as it would have, for this thread to unblock it, or goes to a thread of the process that does
 * not block it. Sent to ourselves, any si_code is allowed for this thread; a process-directed
 * signal keeps its siginfo where the kernel allows it (from the main thread), else it is sent
 * again as a plain kill. */
static void defer(int sig, siginfo_t *si, ucontext_t *uc)
{
    sigaddset(&uc->uc_sigmask, sig);
    ps_prof_hidden = 0;
    pid_t pid = getpid();
    if (si->si_code == SI_TKILL) {
        syscall(SYS_rt_tgsigqueueinfo, pid, (pid_t)syscall(SYS_gettid), sig, si);
        return;
    }
    if (syscall(SYS_rt_sigqueueinfo, pid, sig, si) != 0)
        kill(pid, sig);
}

#define PS_SIGCANCEL 32 /* glibc's SIGCANCEL: __SIGRTMIN, below the SIGRTMIN it lets programs use */

/* The target's disposition for a SIGPROF that is not ours: its handler, or what the kernel
 * would have done (SIG_DFL terminates; SIG_IGN nothing). */
static void chain(int sig, siginfo_t *si, void *uc)
{
    atomic_fetch_add_explicit(&ps_signals_chained, 1, memory_order_relaxed);
    struct sigaction a = target_action;
    int ignored = !(a.sa_flags & SA_SIGINFO) && a.sa_handler == SIG_IGN;
    if (ps_prof_hidden && !ignored && sig == SIGPROF && getpid() == ps_pid) {
        defer(sig, si, uc);
        return;
    }
    int is_function = (a.sa_flags & SA_SIGINFO) ? a.sa_sigaction != NULL
                                                : a.sa_handler != SIG_DFL && a.sa_handler != SIG_IGN;
    if (!is_function) {
        if (!(a.sa_flags & SA_SIGINFO) && a.sa_handler == SIG_DFL) {
            struct sigaction dfl;
            memset(&dfl, 0, sizeof dfl);
            dfl.sa_handler = SIG_DFL;
            ps_real_sigaction(sig, &dfl, NULL);
            syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
        }
        return;
    }
    /* What the kernel would have done for the target's own handler: its one-shot reset, its
     * mask while it runs, and SIGPROF left open under SA_NODEFER. */
    if (a.sa_flags & SA_RESETHAND) {
        memset(&target_action, 0, sizeof target_action);
        target_action.sa_handler = SIG_DFL;
    }
    sigset_t mask = a.sa_mask, before;
    ps_real_pthread_sigmask(SIG_BLOCK, &mask, &before);
    if (a.sa_flags & SA_NODEFER) {
        sigset_t prof;
        sigemptyset(&prof);
        sigaddset(&prof, sig);
        ps_real_pthread_sigmask(SIG_UNBLOCK, &prof, NULL);
    }
    /* Open to the C library's cancellation signal, which our handler's mask blocks
     * (set_handler_in_kernel) and the kernel would not have blocked for the target's handler:
     * a thread in asynchronous cancellation is cancelled inside its own handler, as without
     * the shim. (The C library's mask calls leave that signal alone: the raw call.) */
    uint64_t cancel_bit = 1ull << (PS_SIGCANCEL - 1);
    syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &cancel_bit, NULL, sizeof cancel_bit);
    if (a.sa_flags & SA_SIGINFO)
        a.sa_sigaction(sig, si, uc);
    else
        a.sa_handler(sig);
    ps_real_pthread_sigmask(SIG_SETMASK, &before, NULL);
}

/* The target's SIGPROF disposition is the default (nothing of its own to deliver to). */
int sampler_target_prof_default(void)
{
    return !(target_action.sa_flags & SA_SIGINFO) && target_action.sa_handler == SIG_DFL;
}

/* Every way out of a signal of ours that reached a registered thread: a refresh-mode perf
 * event is re-armed whether or not a sample was taken (a full ring, a closed record: a failed
 * exec reopens it, and an event not re-armed would never fire on this thread again), the
 * interrupted handler's stamp is put back, and errno with it. */
static inline void leave_handler(struct ps_thread *t, int sig, const siginfo_t *si, uint64_t outer, int saved_errno)
{
    if (ps_perf_delivery == PS_PERF_REFRESH && sig == SIGPROF && si->si_code != SI_TIMER && t->perf_fd >= 0)
        ioctl(t->perf_fd, PERF_EVENT_IOC_REFRESH, 1);
    atomic_store_explicit(&t->in_handler, outer, memory_order_release);
    errno = saved_errno;
}

/* One sample of ours, on_sigprof's (below). */
static void take_sample(int sig, siginfo_t *si, void *ucv, int saved_errno)
{
    uint32_t weight = 1;
    if (si->si_code == SI_TIMER && si->si_overrun > 0)
        weight += (uint32_t)si->si_overrun;
    struct ps_thread *t = thread_self();
    if (t && t->perf_first && si->si_code != SI_TIMER)
        clock_first_overflow(t); /* the whole period from now on, whatever becomes of this one */
    if (!t || !t->ring) {
        atomic_fetch_add_explicit(&ps_samples_orphan, weight, memory_order_relaxed);
        errno = saved_errno;
        return;
    }
    /* Announced before the check, both sequentially consistent: either sampler_close sees
     * this handler running and waits for it, or this handler sees the record closed. The
     * stamp interrupted (a fatal signal's path never returns here) is put back on the way out. */
    uint64_t now = ps_now_ns(), began = now | 1, outer = atomic_exchange(&t->in_handler, began);
    if (atomic_load(&sampling_closed)) {
        leave_handler(t, sig, si, outer, saved_errno);
        return;
    }
    thread_count(&t->arrived, weight);
    struct ps_slot_rec *rec = ring_reserve(t->ring);
    if (!rec) {
        atomic_fetch_add_explicit(&t->ring->dropped, weight, memory_order_relaxed);
        leave_handler(t, sig, si, outer, saved_errno);
        return;
    }
    ucontext_t *uc = ucv;
    uint32_t max = (uint32_t)ps_cfg.max_frames;
    rec->time_ns = now;
    rec->tid = (uint32_t)t->tid;
    rec->weight = weight;
    rec->flags = 0;
    uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    int load_wanted = 0;
    if (pc_only) {
        rec->frames[0] = pc;
        rec->nframes = 1;
    } else if (ps_guard_depth > 0 || (pc >= loader_lo && pc < loader_hi) ||
        (unwinder != PS_UNWIND_FP && (!atomic_load_explicit(&libunwind_ready, memory_order_acquire) ||
                                      !t->unw_ok || !stack_room_for_libunwind(t) || !dlbusy_handler_enter()))) {
        rec->flags |= PS_REC_NO_LIBUNWIND;
        rec->nframes = unwind_fp(uc, t, rec->frames, max);
        if (unwinder != PS_UNWIND_FP) { /* with fp asked for, every stack is walked so: none is counted */
            thread_count(&t->no_libunwind, weight);
            load_wanted = !atomic_load_explicit(&libunwind_ready, memory_order_relaxed);
        }
    } else if (unwinder == PS_UNWIND_FP) {
        rec->nframes = unwind_fp(uc, t, rec->frames, max);
    } else {
        ps_guard_depth++;
        ps_in_unwind++;
        rec->nframes = libunwind_fast ? unwind_libunwind_fast(uc, rec->frames, max) : unwind_libunwind(uc, rec->frames, max);
        ps_in_unwind--;
        ps_guard_depth--;
        dlbusy_handler_leave(); /* entered in the test above */
    }
    ring_commit(t->ring);
    writer_note_sample();
    if (load_wanted)
        writer_wake_for_unwinder(); /* once an image: the pass it wakes sees this sample and starts the load */
    thread_count(&t->taken, weight);
    thread_count(&t->signals, 1);
    leave_handler(t, sig, si, outer, saved_errno);
}

/* Cancellation is held off for the whole of a sample: libunwind checks addresses with write,
 * read and msync, cancellation points of the C library's, and a thread with a cancellation
 * pending that it may never act upon (it computes, or returns without passing one) was cancelled
 * inside this handler; a thread in asynchronous cancellation was cancelled mid-sample, leaving
 * the handler's marks up (dlclose then waited for a walk that was over). The thread's state
 * comes back as the handler's last step: an asynchronous cancellation that came meanwhile acts
 * there, with nothing of the shim's half done. */
static void on_sigprof(int sig, siginfo_t *si, void *ucv)
{
    int saved_errno = errno;
    if (!is_our_signal(sig, si)) {
        chain(sig, si, ucv);
        errno = saved_errno;
        return;
    }
    int cancel_state = PTHREAD_CANCEL_ENABLE;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
    take_sample(sig, si, ucv, saved_errno);
    pthread_setcancelstate(cancel_state, NULL); /* (leaves errno alone) */
}

/* The other threads sample until the kernel ends them: one of their samples committed after
 * the last flush would be counted by the exit line and meta.json and be in no file. So the
 * record is closed first, and the handlers already past the check are waited for, each only
 * while it began less than 100 ms ago (a handler takes tens of microseconds: one older is
 * descheduled or stopped, or its stamp was left by a target's handler that longjmp'd out of
 * ours). This thread's own, if it was interrupted inside one, cannot go on until we return. */
#define PS_CLOSE_WAIT_NS (100 * 1000 * 1000)
static void wait_handlers_in_flight(void)
{
    struct ps_thread *self = thread_self();
    int used = atomic_load(&ps_threads_used);
    for (int i = 0; i < used; i++) {
        struct ps_thread *t = &ps_threads[i];
        uint64_t began;
        while (t != self && (began = atomic_load(&t->in_handler)) != 0 && ps_now_ns() - began < PS_CLOSE_WAIT_NS)
            sched_yield();
    }
}

void sampler_close(void)
{
    atomic_store(&sampling_closed, 1);
    wait_handlers_in_flight();
}

void sampler_libunwind_off(const char *why)
{
    if (atomic_exchange(&libunwind_failed, 1) && !atomic_load(&libunwind_ready))
        return;
    atomic_store(&libunwind_ready, 0); /* after failed: warm_locked's order is the other way round */
    wait_handlers_in_flight(); /* a walk that began before this one may still be in libunwind */
    ps_log("%s: libunwind is off from now on (stacks by frame pointers)", why);
    meta_note_unwind();
}

void sampler_reopen(void)
{
    atomic_store(&sampling_closed, 0);
}

int sampler_installed(void)
{
    return atomic_load(&installed);
}

void sampler_get_target_action(struct sigaction *old)
{
    *old = target_action;
}

void sampler_set_target_action(const struct sigaction *act)
{
    target_action = *act;
}

/* The loader (AT_BASE) and its executable segments. */
static int find_loader(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    uintptr_t base = *(uintptr_t *)data;
    if (!base || info->dlpi_addr != base)
        return 0;
    objspan_exec(info, &loader_lo, &loader_hi);
    return 1;
}

/* valgrind maps its vgpreload_core object into every program it runs. */
static int find_valgrind(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    const char *name = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    if (name && strncmp(name + 1, "vgpreload_core", 14) == 0)
        *(int *)data = 1;
    return *(int *)data;
}

/* Under valgrind, libunwind cannot be used without changing what the target sees: it checks
 * the stack addresses it reads by write()ing each one (from the start of its page, below the
 * stack pointer or over uninitialised bytes) into a pipe of its own, and memcheck reports each
 * such write as an error of the target (2 at start, more with each new stack shape), so
 * `valgrind --error-exitcode` changed the target's exit status. A frame-pointer walk is no
 * better there: in code built without frame pointers (libc's) rbp holds whatever the code put
 * in it, and memcheck reports the walk's comparisons on undefined values, and their bytes
 * written to the sample file, as the target's errors too (1 run in 12 at start, more with
 * every sample landing in such code). So under valgrind a sample is the interrupted PC alone
 * (always defined), libunwind is never called, and the log and meta.json say so. */
static void choose_unwinder(void)
{
    /* Kernel call chains: the handler samples only a thread whose perf event or buffer was
     * refused (the tick timer instead, logged), by frame pointers as the kernel would. */
    unwinder = ps_cfg.unwind == PS_UNWIND_KERNEL ? PS_UNWIND_FP : ps_cfg.unwind;
    int valgrind = 0;
    ps_real_dl_iterate_phdr(find_valgrind, &valgrind);
    if (valgrind) {
        unwinder = PS_UNWIND_FP;
        pc_only = 1;
        ps_log("running under valgrind: each sample is the interrupted instruction alone, no stack (libunwind's memory checks and a frame-pointer walk through code without frame pointers would be reported as the target's errors)");
    }
}

const char *sampler_unwind_name(void)
{
    if (clock_kernel_chains())
        return "kernel";
    return pc_only ? "pc" : unwinder == PS_UNWIND_FP || atomic_load(&libunwind_failed) ? "fp" : "libunwind";
}

static int set_handler_in_kernel(struct sigaction *old)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigprof;
    /* SA_ONSTACK: a thread with an alternate signal stack (every Go thread) takes the sample
     * there, never on a goroutine's small stack. */
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    /* The C library's cancellation signal (its first real-time signal, 32) waits for the
     * sample to end: a thread in asynchronous cancellation cancelled while the handler runs
     * would otherwise be unwound out of it mid-sample (its walk's marks left up: every later
     * dlclose waited for a walk that was over), where without the shim it is cancelled at the
     * instruction it was at, as it now is once the handler returns. sigaddset refuses the C
     * library's own signals, so the bit is set directly (bit n-1 for signal n, as the kernel
     * reads the mask). */
    sa.sa_mask.__val[0] |= 1ul << (PS_SIGCANCEL - 1);
    if (ps_real_sigaction(SIGPROF, &sa, old) != 0)
        return -1;
    if (ps_clock_in_use == PS_CLOCK_PERF && ps_perf_delivery == PS_PERF_SIGTRAP)
        ps_real_sigaction(SIGTRAP, &sa, NULL);
    return 0;
}

int sampler_ignore_for_child(void)
{
    if (!atomic_load(&installed) || (target_action.sa_flags & SA_SIGINFO) || target_action.sa_handler != SIG_IGN)
        return 0;
    int saved = errno;
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    int switched = ps_real_sigaction(SIGPROF, &ign, NULL) == 0;
    errno = saved;
    return switched;
}

void sampler_handler_back(int switched)
{
    if (!switched)
        return;
    int saved = errno;
    set_handler_in_kernel(NULL);
    errno = saved;
}

int sampler_install(void)
{
    if (atomic_load(&installed))
        return 0;
    uintptr_t base = (uintptr_t)getauxval(AT_BASE);
    ps_real_dl_iterate_phdr(find_loader, &base);
    choose_unwinder();
    char why[256];
    if (unwinder != PS_UNWIND_FP && !pc_only && dlbusy_find_loader_lock(ps_real_dl_iterate_phdr, why, sizeof why) != 0) {
        ps_log("the dynamic loader's write lock was not found (%s): every stack is walked by frame pointers, "
               "since a libunwind walk in the handler could wait on that lock for good (preload/dlbusy.h)", why);
        unwinder = PS_UNWIND_FP;
    }
    if (unwinder != PS_UNWIND_FP && !pc_only && unwlib_prepare() != 0)
        unwinder = PS_UNWIND_FP; /* said in perfscope.log */
    /* libunwind is loaded here only where the program has it mapped already: its loading (0.2
     * ms) and its first use (its lock, its memory-validation pipe, the fast tracer's 256 KiB
     * cache written whole, the start-up stack walked: 0.5 ms) would cost every process's start,
     * sampled or not. A thread the writer starts does both once a sample has come. */
    struct sigaction old;
    if (set_handler_in_kernel(&old) != 0)
        return -1;
    target_action = old;
    atomic_store(&installed, 1);
    return 0;
}

/* With warm_lock held, signals blocked, outside any handler: libunwind is loaded, it
 * initialises itself on its first use (and may allocate), the fast tracer makes its thread key
 * (pthread_once) and this thread's cache. From then on the handler takes libunwind. A fork
 * child inherits it ready; an exec'd image starts without. */
static void warm_locked(void)
{
    if (atomic_load(&libunwind_ready) || atomic_load(&libunwind_failed))
        return;
    atomic_store(&warm_began_ns, ps_now_ns());
    if (unwlib_load() != 0) {
        atomic_store(&libunwind_failed, 1); /* said in perfscope.log */
        meta_note_unwind();
    } else {
        unw_context_t ctx;
        unw_cursor_t cursor;
        ps_in_unwind++;
        if (ps_unw.getcontext(&ctx) == 0 && ps_unw.init_local(&cursor, &ctx) == 0)
            while (ps_unw.step(&cursor) > 0)
                ;
        if (ps_cfg.unwind_fast)
            libunwind_fast = unwlib_warm_fast();
        ps_in_unwind--;
        /* Ready, unless it was turned off meanwhile (sampler_libunwind_off: a target's dup2 took
         * the number of the pipe this warm-up made): stored, then checked, as the off side sets
         * failed, then clears ready, so one of them sees the other. Before, the warm-up set it
         * ready after the off, and the handler's libunwind read the target's file on that
         * number, closed it and made its pipe again there (r_dup2all: 1 run in 30). */
        atomic_store(&libunwind_ready, 1);
        if (atomic_load(&libunwind_failed)) {
            atomic_store(&libunwind_ready, 0);
            wait_handlers_in_flight();
        }
    }
    atomic_store(&warm_began_ns, 0);
}

static int warm_wanted(void)
{
    return unwinder != PS_UNWIND_FP && !pc_only && !atomic_load(&libunwind_ready) && !atomic_load(&libunwind_failed);
}

/* warm_lock, waiting for a warm-up under way no longer than PS_WARM_WAIT_NS from its start. */
static int warm_lock_bounded(void)
{
    uint64_t began = atomic_load(&warm_began_ns), until = (began ? began : ps_now_ns()) + PS_WARM_WAIT_NS;
    struct timespec ts = { (time_t)(until / 1000000000ull), (long)(until % 1000000000ull) };
    return pthread_mutex_clocklock(&warm_lock, CLOCK_MONOTONIC, &ts) == 0;
}

/* The warm-up's own thread: nothing the target does waits for it (an exit, an exec: the writer
 * is never held by the loader's lock), and it is left to the kernel if the process ends first. */
static int warm_cred_slot = -1; /* credsync.c: it follows the target's credential calls too */

static void *warm_main(void *arg)
{
    (void)arg; /* every signal blocked from the start (ps_start_shim_thread) */
    ps_guard_enter();
    ps_shim_thread = 1;
    lifetime_shim_thread(1);
    credsync_serve(&warm_cred_slot); /* a request since its creator's */
    pthread_mutex_lock(&warm_lock);
    warm_locked();
    pthread_mutex_unlock(&warm_lock);
    credsync_thread_end(&warm_cred_slot);
    meta_own_thread_ended(META_OWN_LOADER);
    lifetime_shim_thread(-1);
    return NULL;
}

void sampler_warm_libunwind_soon(void)
{
    if (!warm_wanted() || atomic_exchange(&warm_thread_started, 1))
        return;
    pthread_t t;
    credsync_thread_start(&warm_cred_slot);
    int rc = ps_start_shim_thread(&t, warm_main);
    credsync_thread_created(&warm_cred_slot, rc == 0);
    if (rc != 0) {
        atomic_store(&libunwind_failed, 1);
        ps_log("cannot start a thread to load libunwind: stacks are walked by frame pointers");
        meta_note_unwind();
        return;
    }
    pthread_detach(t);
}

/* On a thread about to install a seccomp filter, which may forbid the files and the pipe later:
 * at once, on this thread. Signals are held off meanwhile: a handler of the target's that forks
 * would wait for this very warm-up (sampler_fork_prepare). */
void sampler_warm_libunwind_now(void)
{
    if (!warm_wanted())
        return;
    sigset_t old;
    sigmask_block_all(&old);
    if (warm_lock_bounded()) {
        warm_locked();
        pthread_mutex_unlock(&warm_lock);
    }
    sigmask_restore(&old);
}

/* pthread_atfork's prepare handler: a warm-up under way finishes first (its dlopen, libunwind's
 * first use), and none starts until the child is made; one that has gone on PS_WARM_WAIT_NS is
 * not waited for (its dlopen waits for the loader's lock: a target's dlopen under way, which
 * glibc's fork does not wait for either), and the child then walks frame pointers. */
void sampler_fork_prepare(void)
{
    warm_locked_for_fork = warm_lock_bounded();
}

void sampler_fork_parent(void)
{
    if (warm_locked_for_fork)
        pthread_mutex_unlock(&warm_lock);
    warm_locked_for_fork = 0;
}

void sampler_fork_child(void)
{
    pthread_mutex_init(&warm_lock, NULL); /* its only thread: held for the fork, or by a thread it has not */
    fdgate_after_fork_child();
    if (!warm_locked_for_fork && atomic_load(&warm_began_ns) && !atomic_load(&libunwind_ready) &&
        !atomic_load(&libunwind_failed)) {
        atomic_store(&libunwind_failed, 1);
        ps_log("forked while libunwind was being loaded in the parent: stacks are walked by frame pointers");
    }
    atomic_store(&warm_began_ns, 0);
    atomic_store(&warm_thread_started, 0); /* the parent's loader thread is not here */
    warm_locked_for_fork = 0;
}
