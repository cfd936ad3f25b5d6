/* clock.c: what makes SIGPROF fire on each thread's own CPU time. Two clocks (docs/shim.md):
 * a perf_event task-clock per thread, whose overflow is signalled to that thread through a
 * read-only (overwrite) ring buffer so the clock never stops, and a POSIX CPU-time timer per
 * thread, which is nearly free but fires only on the scheduler tick. `auto` takes the timer
 * when the asked rate is within the tick rate and perf events above it.
 * Never called from the signal handler. Every descriptor is close-on-exec and kept high, away
 * from the numbers the target expects to get. */
#include "clock.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "config.h"
#include "fds.h"
#include "kchain.h"
#include "log.h"
#include "sampler.h"
#include "shim.h"
#include "shimload.h"
#include "shimopen.h"

enum ps_clock ps_clock_in_use = PS_CLOCK_TIMER;
enum ps_perf_delivery ps_perf_delivery = PS_PERF_RING;
int ps_kernel_hz = 250;
char ps_kernel_hz_source[64] = "assumed";
char ps_clock_reason[160] = "";

static long page_size;
/* The perf clock counts user time only (docs/shim.md). Counting kernel time too was tried: it
 * attributes system time, but an expiry inside a system call then queues the signal while the
 * thread is still in the kernel, and calls that are never restarted (epoll_wait, poll, select)
 * returned EINTR to the target: 2-7 in 1500 epoll_wait calls at 997 Hz. Never worth that. */
int ps_perf_counts_kernel = 0;

static int hz_from_config_line(const char *line)
{
    if (strncmp(line, "CONFIG_HZ=", 10) == 0)
        return atoi(line + 10);
    return 0;
}

/* The coarse clocks advance once a tick: their resolution is the kernel's tick period
 * (TICK_NSEC, 1e9/CONFIG_HZ rounded), read in the vDSO at no cost. Reading the kernel's config
 * instead (gunzipping /proc/config.gz where /boot has none) cost every process 0.2 ms. */
static int hz_from_coarse_clock(void)
{
    struct timespec r;
    if (clock_getres(CLOCK_MONOTONIC_COARSE, &r) != 0 || r.tv_sec != 0 || r.tv_nsec < 500000 || r.tv_nsec > 50000000)
        return 0; /* not a tick period between 20 and 2000 Hz */
    return (int)((1000000000L + r.tv_nsec / 2) / r.tv_nsec);
}

#ifndef PS_ZLIB_SONAME
#error "PS_ZLIB_SONAME: the soname of the zlib the shim is built against (Makefile)"
#endif

/* /proc/config.gz through zlib, loaded for this alone: the coarse clock tells the tick rate on
 * every kernel met so far, and zlib linked cost every process 0.1 ms of the loader's time for a
 * fallback behind a fallback. Left loaded (RTLD_LOCAL): the shim's dlclose is its own wrapper. */
static int hz_from_config_gz(char *line, int size)
{
    void *z = shimload_open(PS_ZLIB_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!z)
        return 0;
    __typeof__(&gzopen) open_gz;
    __typeof__(&gzgets) gets_gz;
    __typeof__(&gzclose) close_gz;
    *(void **)&open_gz = dlsym(z, "gzopen");
    *(void **)&gets_gz = dlsym(z, "gzgets");
    *(void **)&close_gz = dlsym(z, "gzclose");
    int begun = shimopen_begin(); /* announced until zlib closes its descriptor */
    gzFile gz = open_gz && gets_gz && close_gz ? open_gz("/proc/config.gz", "rb") : NULL;
    int hz = 0;
    if (gz) {
        while (!hz && gets_gz(gz, line, size))
            hz = hz_from_config_line(line);
        close_gz(gz);
    }
    shimopen_end(begun);
    return hz;
}

static void detect_kernel_hz(void)
{
    int coarse = hz_from_coarse_clock();
    if (coarse > 0) {
        ps_kernel_hz = coarse;
        snprintf(ps_kernel_hz_source, sizeof ps_kernel_hz_source, "CLOCK_MONOTONIC_COARSE resolution");
        return;
    }
    struct utsname u;
    char path[PATH_MAX], line[256];
    if (uname(&u) == 0) {
        snprintf(path, sizeof path, "/boot/config-%s", u.release);
        FILE *f = fopen(path, "re");
        if (f) {
            int hz = 0;
            while (!hz && fgets(line, sizeof line, f))
                hz = hz_from_config_line(line);
            fclose(f);
            if (hz > 0) {
                ps_kernel_hz = hz;
                snprintf(ps_kernel_hz_source, sizeof ps_kernel_hz_source, "%s", path);
                return;
            }
        }
    }
    int hz = hz_from_config_gz(line, (int)sizeof line);
    if (hz > 0) {
        ps_kernel_hz = hz;
        snprintf(ps_kernel_hz_source, sizeof ps_kernel_hz_source, "/proc/config.gz");
        return;
    }
    ps_log("kernel tick rate unknown (no kernel config readable); assuming CONFIG_HZ=%d", ps_kernel_hz);
}

static _Atomic int perf_fds_open; /* ours, for all threads */

static int fd_base(void)
{
    struct rlimit rl;
    int base = 512;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur / 2 < (rlim_t)base)
        base = (int)(rl.rlim_cur / 2);
    return base;
}

/* The base as last read: the shim's threads open and move a file at most passes a second, and
 * each system call counts there (docs/shim.md, "What a wakeup costs"). A limit lowered since
 * makes the move fail with EINVAL: the base is then read again. */
static _Atomic int cached_base;

/* Low descriptor a against b, duplicated from it: the same open file (kcmp, one system call;
 * where it is refused, the same inode) or not, and whether a still has our close-on-exec flag,
 * which a target's dup2 onto the number clears. MOVE_OURS: the same file, ours; MOVE_LOST: the
 * same file without the flag, a target's dup2 landed before the duplicate and both are the
 * target's file (ours is gone); MOVE_TAKEN: different files, the dup2 landed after it (b is
 * ours, a the target's). */
enum { MOVE_OURS, MOVE_LOST, MOVE_TAKEN };
static int compare_moved(int a, int b)
{
    pid_t self = ps_pid > 0 ? ps_pid : getpid();
    long r = syscall(SYS_kcmp, self, self, 0 /* KCMP_FILE */, a, b);
    if (r < 0) {
        struct stat sa, sb;
        r = fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino &&
                    sa.st_rdev == sb.st_rdev ? 0 : 1;
    }
    if (r != 0)
        return MOVE_TAKEN;
    return fcntl(a, F_GETFD) & FD_CLOEXEC ? MOVE_OURS : MOVE_LOST;
}

/* Low numbers being moved (clock_move_fd_high): a target's dup2 onto one waits for the move
 * (fds.c's make_room), so it lands on a free number instead of on ours half-moved. */
#define TRANSIT_SLOTS 16
static _Atomic int transit[TRANSIT_SLOTS] = { [0 ... TRANSIT_SLOTS - 1] = -1 };

static int transit_enter(int fd)
{
    for (int i = 0; i < TRANSIT_SLOTS; i++) {
        int expected = -1;
        if (atomic_compare_exchange_strong(&transit[i], &expected, fd))
            return i;
    }
    return -1;
}

static void transit_leave(int slot)
{
    if (slot >= 0)
        atomic_store(&transit[slot], -1);
}

void clock_transit_after_fork_child(void)
{
    for (int i = 0; i < TRANSIT_SLOTS; i++)
        atomic_store(&transit[i], -1);
}

int clock_fd_in_transit(int fd)
{
    for (int i = 0; i < TRANSIT_SLOTS; i++)
        if (atomic_load(&transit[i]) == fd)
            return 1;
    return 0;
}

int clock_fd_base(void)
{
    int base = atomic_load(&cached_base);
    if (base <= 0) {
        base = fd_base();
        atomic_store(&cached_base, base);
    }
    return base;
}

static int move_high(int fd, int opened_cloexec)
{
    int base = atomic_load(&cached_base);
    if (base <= 0) {
        base = fd_base();
        atomic_store(&cached_base, base);
    }
    if (fd >= base)
        return fd;
    /* From here a target's dup2 through the wrapper onto fd waits until it is moved. */
    int slot = transit_enter(fd);
    int high = fcntl(fd, F_DUPFD_CLOEXEC, base);
    if (high < 0 && errno == EINVAL) { /* the limit was lowered under the base */
        base = fd_base();
        atomic_store(&cached_base, base);
        if (fd >= base) {
            transit_leave(slot);
            return fd;
        }
        high = fcntl(fd, F_DUPFD_CLOEXEC, base);
    }
    if (high < 0) {
        transit_leave(slot);
        return fd;
    }
    /* Between our open() and now a target thread may have dup2()ed its own file onto this low
     * number past the wrapper (or before the transit mark): that closed ours, the number is the
     * target's, and closing it would close the target's descriptor. Closed only while it is
     * still our file. A dup2 before the duplicate leaves the copy the target's file too: ours
     * is gone (where we opened it close-on-exec, the flag tells), and the copy is closed. A
     * dup2 landing between this check and the close is still possible (one system call wide,
     * past the wrapper only); see docs/shim.md. */
    int how = compare_moved(fd, high);
    if (how == MOVE_OURS || (how == MOVE_LOST && !opened_cloexec)) {
        ps_real_close(fd);
    } else if (how == MOVE_LOST) {
        ps_real_close(high); /* our duplicate of the target's file */
        high = -1;
        errno = EBADF;
    }
    transit_leave(slot);
    return high;
}

/* The low number is let go of either way (shimopen.h): closed once moved, else the target's or
 * kept where it is knowingly. */
int clock_move_fd_high(int fd)
{
    int high = move_high(fd, 1);
    shimopen_released(fd);
    return high;
}

int clock_move_fd_high_any(int fd)
{
    int high = move_high(fd, 0);
    shimopen_released(fd);
    return high;
}

/* The sampling period, and the first one of a thread's clock: a random point of the period
 * (from FIRST_FLOOR_NS below), not a whole period. A clock that first fires after a whole period of the thread's CPU time never
 * samples a thread (or a process) that uses less than that, and leaves every thread's first
 * period unseen: a pool of short tasks, a thread per request, the short processes of a build
 * would be missing from the profile, or under-weighted, whatever their share of the CPU. From a
 * uniformly random first expiry every thread's expected samples are its CPU time over the
 * period, however short its life (Go's runtime starts its per-thread timers the same way). */
static uint64_t period_ns(void)
{
    return 1000000000ull / (unsigned)ps_cfg.hz;
}

/* Never less than this, though: perf events whose first period was a few microseconds (the
 * kernel's own floor is 10 us) stalled threads for seconds at a time in a loop creating threads
 * of 20 us each (PERFSCOPE_CLOCK=perf, 199 Hz: single rounds of 1-13 s against 10 ms, in 7 of
 * 12 runs of 8,000 rounds), where 100 us never did (0 of 15). A thread that uses less CPU than
 * this is still never sampled: a bias of at most 100 us a thread, against a whole period (5 ms
 * at 199 Hz) before. */
#define FIRST_FLOOR_NS 100000ull

static uint64_t first_period_ns(pid_t tid)
{
    /* splitmix64 of the time and the thread: no state, no system call, never from a handler */
    uint64_t x = ps_now_ns() ^ ((uint64_t)(uint32_t)tid << 32) ^ (uint64_t)(uintptr_t)&tid;
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    x ^= x >> 31;
    uint64_t period = period_ns(), least = period < FIRST_FLOOR_NS ? period : FIRST_FLOOR_NS;
    return least + x % (period - least + 1);
}

void clock_first_overflow(struct ps_thread *t)
{
    int saved = errno;
    uint64_t period = period_ns();
    t->perf_first = 0;
    if (t->perf_fd >= 0)
        ioctl(t->perf_fd, PERF_EVENT_IOC_PERIOD, &period);
    errno = saved;
}

static int perf_open(pid_t tid, uint64_t first)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = first; /* then the whole period, from the first overflow on */
    a.sample_type = 0;
    a.wakeup_events = 1;
    a.disabled = 1;
    a.exclude_kernel = ps_perf_counts_kernel ? 0 : 1;
    a.exclude_hv = 1;
    if (ps_perf_delivery == PS_PERF_CALLCHAIN) {
        /* The kernel walks the user stack at each overflow (frame pointers) and writes it with
         * the time into the thread's buffer, which the writer drains before it is half full
         * (kchain_pass_ms). */
        a.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
        a.exclude_callchain_kernel = 1;
        a.sample_max_stack = (uint16_t)kchain_max_stack;
        a.use_clockid = 1;
        a.clockid = CLOCK_MONOTONIC; /* ps_now_ns's clock: the samples' and markers' times */
        /* A wakeup once a buffer's worth is written (irq_work, no signal: no owner is set),
         * never one a record. */
        a.wakeup_events = 0;
        a.watermark = 1;
        a.wakeup_watermark = (uint32_t)kchain_data_bytes();
    }
    if (ps_perf_delivery == PS_PERF_SIGTRAP) {
        /* Synchronous SIGTRAP to the overflowing thread (Linux 5.13+); the kernel insists
         * that such an event is removed on exec. */
        a.sigtrap = 1;
        a.remove_on_exec = 1;
        a.sig_data = (uint64_t)(uintptr_t)&ps_timer_cookie;
    }
    int begun = shimopen_begin(); /* held until moved above the target's numbers */
    return shimopen_opened(begun, (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC));
}

/* At most half of the numbers above the base: the rest stays the target's. */
static int perf_fd_budget(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (1u << 20))
        return 1 << 19;
    return (int)(rl.rlim_cur - (rlim_t)fd_base()) / 2;
}

static int arm_perf(struct ps_thread *t)
{
    if (atomic_load(&perf_fds_open) >= perf_fd_budget()) {
        errno = EMFILE;
        return -1;
    }
    /* Kernel call chains: no handler to set the whole period after a short first one, so the
     * first sample comes after a whole period (as perf record's do; docs/shim.md). */
    uint64_t first = ps_perf_delivery == PS_PERF_CALLCHAIN ? period_ns() : first_period_ns(t->tid);
    int fd = perf_open(t->tid, first);
    if (fd < 0)
        return -1;
    fd = clock_move_fd_high(fd);
    if (fd < 0)
        return -1; /* a target's dup2 took the number before the move: this event is gone */
    /* Still a perf event: a dup2 and a close and an open of the target's, all between our
     * open and the move, leave the copy a file of the target's that compares as ours (a
     * mapping of it would raise SIGBUS; r_fdrace, about 1 run in 100 under load). */
    uint64_t id;
    if (ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0) {
        if (fd >= fd_base())
            ps_real_close(fd); /* our copy of the target's file */
        errno = EBADF;
        return -1;
    }
    if (fd < fd_base()) {
        /* No room above the target's numbers: a low descriptor per thread would use up the
         * target's own limit. This thread gets the tick timer instead. */
        ps_real_close(fd);
        errno = EMFILE;
        return -1;
    }
    fds_mark(fd, 1);
    void *rb = NULL;
    /* Set before the event runs: a first period shorter than the handler's own time (the
     * kernel's floor is 10 us) would otherwise interrupt this thread again and again before it
     * got past the enable to say so, and the handler could never set the whole period. */
    t->perf_fd = fd;
    t->perf_rb = NULL;
    t->perf_first = first != period_ns();
    atomic_signal_fence(memory_order_seq_cst);
    if (ps_perf_delivery == PS_PERF_SIGTRAP) {
        if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
            goto fail;
        atomic_fetch_add(&perf_fds_open, 1);
        return 0;
    }
    if (ps_perf_delivery == PS_PERF_CALLCHAIN) {
        /* Read-write: the writer moves the tail, so the kernel never overwrites a record not
         * yet read (a full buffer loses the new ones, counted in a LOST record). Locked memory:
         * beyond perf_event_mlock_kb a user without CAP_IPC_LOCK is refused, and this thread
         * falls back to the tick timer (logged once). */
        size_t len = kchain_map_len(), tried = len;
        rb = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        /* Refused the locked memory (a buffer sized for a high rate): a smaller one first, passed
         * more often, before this thread falls back to the timer. */
        while (rb == MAP_FAILED && errno == EPERM && (len = kchain_map_len_smaller(tried)) != 0) {
            tried = len;
            rb = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        }
        if (rb == MAP_FAILED) {
            ps_log_once("kchain-map", "no call-chain buffer for thread %d (%s: %zu KiB a thread at the least, "
                        "locked memory beyond kernel.perf_event_mlock_kb and RLIMIT_MEMLOCK)", (int)t->tid,
                        strerror(errno), tried / 1024);
            goto fail;
        }
        if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
            munmap(rb, len); /* not published yet: no drain can be reading it */
            goto fail;
        }
        kchain_mapped(len);
        /* Published once running: the writer's next drain takes its records from here on. */
        t->perf_rb = rb;
        t->perf_rb_len = len;
        t->chain_tail = 0;
        t->perf_first = 0;
        t->chain_sampled = 1;
        __atomic_store_n(&t->kchain, 1, __ATOMIC_RELEASE);
        atomic_fetch_add(&perf_fds_open, 1);
        return 0;
    }
    if (ps_perf_delivery == PS_PERF_RING) {
        /* Read-only mapping: the kernel overwrites old records, so the buffer never fills
         * and every overflow wakes us without stopping the clock for a re-arm. */
        rb = mmap(NULL, 2 * page_size, PROT_READ, MAP_SHARED, fd, 0);
        if (rb == MAP_FAILED)
            goto fail;
        t->perf_rb_len = 2 * (size_t)page_size;
    }
    struct f_owner_ex owner = { .type = F_OWNER_TID, .pid = t->tid };
    /* Refresh mode: the event stops after each overflow until the handler re-arms it. */
    unsigned long start = ps_perf_delivery == PS_PERF_REFRESH ? PERF_EVENT_IOC_REFRESH : PERF_EVENT_IOC_ENABLE;
    t->perf_rb = rb;
    if (fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK) < 0 || fcntl(fd, F_SETSIG, SIGPROF) < 0 ||
        fcntl(fd, F_SETOWN_EX, &owner) < 0 || ioctl(fd, start, 1) < 0) {
        if (rb)
            munmap(rb, t->perf_rb_len);
        goto fail;
    }
    atomic_fetch_add(&perf_fds_open, 1);
    return 0;
fail:
    t->perf_fd = -1;
    t->perf_rb = NULL;
    t->perf_first = 0;
    fds_mark(fd, 0);
    ps_real_close(fd);
    return -1;
}

/* Another thread's CPU clock: the kernel's encoding of a per-thread CPUCLOCK_SCHED. */
clockid_t clock_of_thread(pid_t tid)
{
    return (clockid_t)((~(unsigned)tid << 3) | 6);
}

static int arm_timer(struct ps_thread *t, int self)
{
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGPROF;
    sev._sigev_un._tid = t->tid;
    sev.sigev_value.sival_ptr = &ps_timer_cookie;
    clockid_t cid = self ? CLOCK_THREAD_CPUTIME_ID : clock_of_thread(t->tid);
    if (timer_create(cid, &sev, &t->timer) != 0)
        return -1;
    long period = (long)period_ns(), first = (long)first_period_ns(t->tid);
    struct itimerspec its = { { period / 1000000000L, period % 1000000000L },
                              { first / 1000000000L, first % 1000000000L } };
    if (timer_settime(t->timer, 0, &its, NULL) != 0) {
        timer_delete(t->timer);
        return -1;
    }
    t->has_timer = 1;
    return 0;
}

int clock_arm(struct ps_thread *t, int self)
{
    if (ps_cfg.hz <= 0)
        return 0;
    t->chain_sampled = 0; /* until a call-chain event runs for it again (arm_perf) */
    if (t->kchain) {
        /* An earlier call-chain buffer of this slot not drained (a failed exec whose last
         * drain could not run): a clock now would give its ring a second producer. */
        ps_log_once("kchain-busy", "thread %d: its earlier call-chain buffer is not drained yet; it is not sampled",
                    (int)t->tid);
        return -1;
    }
    if (ps_clock_in_use == PS_CLOCK_PERF) {
        if (arm_perf(t) == 0)
            return 0;
        ps_log_once("perf-thread", "perf event for thread %d refused (%s); that thread and later ones that fail use the tick timer",
                    (int)t->tid, strerror(errno));
    }
    if (arm_timer(t, self) == 0)
        return 0;
    ps_log_once("timer-thread", "no CPU-time timer for thread %d (%s): it is not sampled", (int)t->tid, strerror(errno));
    return -1;
}

/* Our copy of t's perf event: unmapped, unmarked and closed. A call-chain buffer stays mapped
 * for the writer to drain and unmap (kchain_retire_if_done); in a fork child (`child`) the
 * buffers are not there at all (the kernel maps them VM_DONTCOPY), so nothing is unmapped. */
static void close_perf(struct ps_thread *t, int child)
{
    /* Taken once: the thread's own end and a target's dup2 onto its number (clock_relocate_fd)
     * may both come here. The writer reads perf_fd -1 as "closed": a call-chain buffer (kept
     * below) may go once it is empty. */
    int fd = __atomic_exchange_n(&t->perf_fd, -1, __ATOMIC_ACQ_REL);
    if (fd < 0)
        return;
    atomic_fetch_sub(&perf_fds_open, 1);
    fds_mark(fd, 0);
    if (t->perf_rb && !t->kchain && !child)
        munmap(t->perf_rb, t->perf_rb_len);
    if (!t->kchain || child) {
        t->perf_rb = NULL;
        t->kchain = 0;
    }
    ps_real_close(fd);
    t->perf_first = 0;
}

void clock_disarm(struct ps_thread *t)
{
    if (t->has_timer) {
        timer_delete(t->timer);
        t->has_timer = 0;
    }
    if (t->perf_fd >= 0)
        ioctl(t->perf_fd, PERF_EVENT_IOC_DISABLE, 0);
    close_perf(t, 0);
}

void clock_forget_inherited(struct ps_thread *t)
{
    /* In a fork child: the parent's events are the parent's (no disable: that would stop
     * them for the parent too); drop our copies only. Timers are not inherited, and neither
     * are perf buffers (the kernel maps them VM_DONTCOPY): a call-chain buffer its parent's
     * writer had still to drain is simply not there. */
    close_perf(t, 1);
    t->perf_rb = NULL;
    t->kchain = 0;
    t->chain_sampled = 0;
    t->has_timer = 0;
}

int clock_relocate_fd(struct ps_thread *t)
{
    /* The target wants our descriptor number (dup2 onto it): take another one, then point
     * the signal's si_fd at it by registering O_ASYNC again. */
    int fd = fcntl(t->perf_fd, F_DUPFD_CLOEXEC, t->perf_fd + 1);
    if (fd < 0) {
        /* No number above it is free (a target that dup2s onto every number up to its limit):
         * the thread's clock goes, and its number with it, rather than our event stay marked
         * on a number the dup2 gives the target (its close refused, our ioctls and close
         * reaching its file). The thread is not sampled from here on. */
        int was = t->perf_fd;
        clock_disarm(t);
        ps_log("the target's dup2 onto descriptor %d found no free number above it to move thread %d's "
               "perf event to: that thread is no longer sampled", was, (int)t->tid);
        return -1;
    }
    fds_mark(fd, 1);
    fcntl(fd, F_SETFL, O_NONBLOCK);
    fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK);
    int old = t->perf_fd;
    t->perf_fd = fd;
    fds_mark(old, 0);
    return old;
}

/* PERFSCOPE_PERF_DELIVERY (bench knob): how a perf overflow reaches the thread. `ring` (the
 * default, see bench/RESULTS.md), `refresh` (PERF_EVENT_IOC_REFRESH re-armed in the handler:
 * the clock stops in between) or `sigtrap` (synchronous SIGTRAP: a debugger attached to the
 * target would stop at every sample, so never the default). */
static void read_delivery(void)
{
    const char *d = getenv("PERFSCOPE_PERF_DELIVERY");
    if (!d || !*d || strcmp(d, "ring") == 0)
        ps_perf_delivery = PS_PERF_RING;
    else if (strcmp(d, "refresh") == 0)
        ps_perf_delivery = PS_PERF_REFRESH;
    else if (strcmp(d, "sigtrap") == 0)
        ps_perf_delivery = PS_PERF_SIGTRAP;
    else
        ps_log("PERFSCOPE_PERF_DELIVERY=%s is not ring, refresh or sigtrap; using ring", d);
}

const char *clock_delivery_name(void)
{
    return ps_perf_delivery == PS_PERF_SIGTRAP     ? "sigtrap"
           : ps_perf_delivery == PS_PERF_REFRESH   ? "refresh"
           : ps_perf_delivery == PS_PERF_CALLCHAIN ? "callchain"
                                                   : "ring";
}

int clock_kernel_chains(void)
{
    return ps_cfg.hz > 0 && ps_clock_in_use == PS_CLOCK_PERF && ps_perf_delivery == PS_PERF_CALLCHAIN;
}

void clock_setup(void)
{
    page_size = sysconf(_SC_PAGESIZE);
    read_delivery();
    detect_kernel_hz();
    if (ps_cfg.hz <= 0)
        return;
    /* Only a perf event can take the kernel's call chains, at any rate. */
    int chains = ps_cfg.unwind == PS_UNWIND_KERNEL;
    int want_perf = ps_cfg.clock == PS_CLOCK_PERF ||
                    (ps_cfg.clock == PS_CLOCK_AUTO && (ps_cfg.hz > ps_kernel_hz || chains));
    if (!want_perf) {
        ps_clock_in_use = PS_CLOCK_TIMER;
        snprintf(ps_clock_reason, sizeof ps_clock_reason, "%s",
                 ps_cfg.clock == PS_CLOCK_TIMER ? "asked for" : "rate within the kernel tick rate");
        if (chains)
            ps_log("PERFSCOPE_UNWIND=kernel needs the perf clock, and PERFSCOPE_CLOCK=timer was asked for: "
                   "stacks by frame pointers in the handler instead");
        return;
    }
    if (chains) {
        ps_perf_delivery = PS_PERF_CALLCHAIN;
        kchain_setup(page_size);
    }
    int fd = perf_open(0, period_ns()); /* a probe: opened disabled, closed at once */
    if (fd < 0 && errno == EOVERFLOW && chains) {
        kchain_max_stack = 0; /* kernel.perf_event_max_stack is lower: the kernel's own limit */
        fd = perf_open(0, period_ns());
        if (fd >= 0)
            ps_log("kernel.perf_event_max_stack is below %d frames: the kernel's call chains stop at its limit",
                   ps_cfg.max_frames < 127 ? ps_cfg.max_frames : 127);
    }
    if (fd < 0) {
        ps_clock_in_use = PS_CLOCK_TIMER;
        snprintf(ps_clock_reason, sizeof ps_clock_reason, "perf_event_open refused: %s", strerror(errno));
        ps_log("perf events refused (%s): sampling on the tick timer, weighted by overruns%s", strerror(errno),
               chains ? "; stacks by frame pointers in the handler, not the kernel's call chains" : "");
        if (chains)
            ps_perf_delivery = PS_PERF_RING;
        return;
    }
    ps_real_close(fd);
    ps_clock_in_use = PS_CLOCK_PERF;
    snprintf(ps_clock_reason, sizeof ps_clock_reason, "%s",
             ps_cfg.clock == PS_CLOCK_PERF ? "asked for"
             : ps_cfg.hz > ps_kernel_hz   ? "rate above the kernel tick rate"
                                          : "the kernel's call chains (PERFSCOPE_UNWIND=kernel) need it");
}
