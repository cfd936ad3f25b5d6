/* writer.c: the sample files (docs/formats.md) and the thread that fills them. It drains every
 * thread's ring into cpuprof.<pid>[.<n>].bin, rewrites the header's count and dropped, appends
 * maps snapshots when the mappings change, and does it at least every 250 ms so a killed target
 * keeps all but its last quarter second. In the leader its passes ride on the watcher's own
 * wakeups once they are due no more often (writer_host_pass), so one wakeup serves both. The
 * sample file's descriptor is kept from the first drain (bin_open): each open by path takes the
 * lowest free number for a moment, which a target thread opening a file then would not get
 * (t_shim_review_fds' fdnum: 5 in 200 runs before), and the writer drains up to every 10 ms
 * while a process is young. It sits above the target's numbers, marked as the shim's (the
 * target's close, close_range and dup2 go around it, fds.c), and its identity is checked before
 * every write, so a target that closes or replaces it past the wrappers can never make us write
 * into its files. The maps file and /proc are opened by path when read or appended (seldom).
 * The files are made with the first record
 * to write (a process that takes no sample makes none), and the writer warms libunwind up then.
 * writer_flush() is also called from exit, exec and fatal-signal paths; writer_flush(1), the
 * fatal path's, allocates nothing. */
#include "writer.h"

#include <dirent.h>
#include <link.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "credsync.h"
#include "dlbusy.h"
#include "fdcache.h"
#include "fdgate.h"
#include "fdheld.h"
#include "fds.h"
#include "interpose.h"
#include "kchain.h"
#include "leader.h"
#include "lifetime.h"
#include "log.h"
#include "meta.h"
#include "ring.h"
#include "safefmt.h"
#include "samplefile.h"
#include "sampler.h"
#include "shim.h"
#include "shimopen.h"
#include "sigmask.h"
#include "threads.h"
#include "unsampled.h"

/* While samples arrive the writer drains the rings every FLUSH_MS (so a run killed by SIGKILL
 * keeps all but its last quarter second), or sooner when a thread sampled at the asked rate
 * would fill half its ring by then (a ring holds PS_RING_SLOTS samples: at 997 Hz half of it
 * is 128 ms), but never more often than every BUSY_MS. A pass costs its wakeup and the file's
 * open and write, whatever it carries: fewer, larger passes are what makes the writer cheap. */
#define FLUSH_MS 250
#define BUSY_MS 100
/* A process whose threads took no sample since the last pass (nothing to write): the writer
 * sleeps this long, woken early by the next sample. */
#define IDLE_MS 1000

char ps_bin_path[PATH_MAX];
char ps_maps_path[PATH_MAX];
static uint64_t records_written;   /* records in the file (weight expanded) */
static uint64_t dropped_retired;   /* drops of rings already freed */
static int files_ok;

static _Atomic int io_lock;
static _Atomic pid_t io_owner; /* the thread that holds io_lock, 0 when none */
static _Atomic int stop_requested;
static _Atomic int wake_pending;
/* The writer sleeps on this futex word, so a stop (exit, exec) wakes it at once instead of
 * after a period (the target's exit must not wait for us), and so can the first sample after
 * an idle stretch: waking it is one system call, async-signal-safe. */
static _Atomic uint32_t wake_seq;
/* Set while the writer sleeps its long idle period: the first sample taken then wakes it
 * (writer_note_sample), so a sample still reaches the file within a normal period. */
static _Atomic int writer_idle;
/* Set while the writer sleeps hosted: the leader's watcher runs its passes (writer_host_pass). */
static _Atomic int hosted;
static _Atomic uint64_t writer_passes;
static pthread_t writer_thread;
static _Atomic int writer_running; /* read by writer_wake_for_unwinder in the handler */

/* The io lock is a spin flag with a deadline, not a mutex: the fatal-signal path takes it, and
 * must give up rather than hang if the thread it interrupted already holds it. When that thread
 * is this one (a handler, the target's, that runs exit or exec on top of the shim's own code
 * holding the lock), waiting cannot help: given up at once. */
int writer_lock_for(int ms)
{
    uint64_t deadline = ps_now_ns() + (uint64_t)ms * 1000000ull;
    pid_t self = ps_gettid();
    for (;;) {
        int expected = 0;
        if (atomic_compare_exchange_weak(&io_lock, &expected, 1)) {
            atomic_store(&io_owner, self);
            return 1;
        }
        if (atomic_load(&io_owner) == self)
            return 0;
        if (ms >= 0 && ps_now_ns() > deadline)
            return 0;
        struct timespec ts = { 0, 200000 };
        nanosleep(&ts, NULL);
    }
}

void writer_unlock(void)
{
    atomic_store(&io_owner, 0);
    atomic_store(&io_lock, 0);
}

/* held: fd is that kept descriptor's, and each pwrite is bracketed (fdheld.h): one the target's
 * dup2 made us forget meanwhile is not made, and the dup2 waits for one under way. */
static int write_held_at(struct fds_held *held, int fd, const void *buf, size_t len, off_t off)
{
    const char *p = buf;
    while (len) {
        if (held && !fds_held_begin(held, fd)) {
            errno = EBADF;
            return -1;
        }
        ssize_t n = pwrite(fd, p, len, off);
        int err = errno;
        if (held)
            fds_held_end(held);
        errno = err;
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
        off += n;
    }
    return 0;
}

static size_t file_rec_size(void)
{
    return samplefile_record_bytes((uint64_t)ps_cfg.max_frames);
}

static void put_header(unsigned char *h, uint64_t count, uint64_t dropped)
{
    /* x86_64 and aarch64 are little endian, as the format is */
    uint64_t magic = SAMPLEFILE_MAGIC, max_frames = (uint64_t)ps_cfg.max_frames, hz = (uint64_t)ps_cfg.hz;
    memcpy(h + SAMPLEFILE_OFF_MAGIC, &magic, 8);
    memcpy(h + SAMPLEFILE_OFF_COUNT, &count, 8);
    memcpy(h + SAMPLEFILE_OFF_DROPPED, &dropped, 8);
    memcpy(h + SAMPLEFILE_OFF_MAX_FRAMES, &max_frames, 8);
    memcpy(h + SAMPLEFILE_OFF_HZ, &hz, 8);
}

/* This image's file names: the first cpuprof.<pid>[.<n>].bin no earlier image of this pid left
 * (an image that took no sample left none, so its name is free again). Nothing is created here:
 * creating two files is most of what a short process would pay the shim (ext4 inode allocation),
 * so they are made at the first write (files_create), and a process that never takes a sample
 * leaves none. */
static int files_made; /* this image's .bin and .maps exist (created by files_create) */

static int name_files(int from)
{
    pid_t pid = ps_pid; /* set before any naming: the start, a fork child, or checked */
    for (int n = from; n < 10000; n++) {
        /* No stdio: this runs in every fork child, where snprintf's first call would fault its
         * code in (14 us here), and on the fatal path (files_create from a signal handler). */
        struct safefmt bin, maps;
        safefmt_init(&bin, ps_bin_path, sizeof ps_bin_path);
        safefmt_str(&bin, ps_cfg.file_prefix);
        safefmt_str(&bin, ".");
        safefmt_i64(&bin, (int64_t)pid);
        if (n > 0) {
            safefmt_str(&bin, ".");
            safefmt_i64(&bin, (int64_t)n);
        }
        size_t stem = bin.len;
        safefmt_str(&bin, ".bin");
        safefmt_init(&maps, ps_maps_path, sizeof ps_maps_path);
        safefmt_mem(&maps, ps_bin_path, stem);
        safefmt_str(&maps, ".maps");
        if (bin.overflow || maps.overflow) {
            ps_bin_path[0] = ps_maps_path[0] = 0;
            return -1; /* a prefix too long for a path: no files */
        }
        if (access(ps_bin_path, F_OK) == 0)
            continue; /* an earlier image of this pid (before an exec): never overwritten */
        return n;
    }
    return -1;
}

int writer_open_files(void)
{
    if (name_files(0) < 0) {
        ps_log("cannot name this image's sample files after %s (a path too long, or 10000 images of pid %d): "
               "stack samples are off", ps_cfg.file_prefix, (int)ps_pid);
        return -1;
    }
    records_written = 0;
    files_made = 0;
    files_ok = 1;
    return 0;
}

/* ---- maps snapshots ---- */

static char *maps_last;      /* the last snapshot written (writer side, under the io lock) */
static size_t maps_last_len;
static uint64_t maps_last_t; /* the time it is in force from */

static char *read_self_maps(size_t *len)
{
    if (!fds_may_open()) {
        ps_log_once("maps-sealed", "a seccomp filter may forbid opening files: no more maps snapshots "
                    "(code loaded from now on may not symbolize)");
        return NULL;
    }
    int fd = fds_run_open("/proc/self/maps", O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return NULL;
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n == cap) {
            char *bigger = realloc(buf, cap * 2);
            if (!bigger) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    ps_real_close(fd);
    *len = n;
    return buf;
}

/* Appends a snapshot when the mappings differ from the last one written. t_ns is the time from
 * which the new snapshot is in force. Takes the io lock itself. */
static int objects_changed(void);

/* Appends `now` (len bytes) to the maps file unless it is the last snapshot written; takes
 * `now` over. Caller holds the io lock. A snapshot read later is never in force before the
 * last one written: a pass stamps a change with its previous pass's time, which may come
 * before a snapshot the dlclose wrapper stamped with its own (the reader orders snapshots by
 * time, a tie to the later one, and would put the newer mappings in force over the older). */
static void maps_append_locked(char *now, size_t len, uint64_t t_ns)
{
    if (maps_last && len == maps_last_len && memcmp(now, maps_last, len) == 0) {
        free(now);
        return;
    }
    if (maps_last && t_ns < maps_last_t)
        t_ns = maps_last_t;
    int fd = fds_run_open(ps_maps_path, O_WRONLY | O_APPEND | O_CLOEXEC, 0);
    if (fd >= 0) {
        if (maps_last) {
            char line[64];
            int n = snprintf(line, sizeof line, "# t=%llu\n", (unsigned long long)t_ns);
            if (write(fd, line, (size_t)n) < 0)
                ps_log_once("maps-write", "cannot append to %s: %s", ps_maps_path, strerror(errno));
        }
        size_t off = 0;
        while (off < len) {
            ssize_t w = write(fd, now + off, len - off);
            if (w <= 0)
                break;
            off += (size_t)w;
        }
        fds_run_close(fd);
    }
    free(maps_last);
    maps_last = now;
    maps_last_len = len;
    maps_last_t = t_ns;
}

void writer_maps_snapshot(uint64_t t_ns)
{
    /* Before the files exist there is nothing to snapshot for: the first snapshot is taken
     * when they are made, with the first samples. */
    if (!files_ok || !files_made)
        return;
    /* The load counters as of this snapshot: a load after it is what the writer looks for. */
    objects_changed();
    size_t len = 0;
    char *now = read_self_maps(&len);
    if (!now)
        return;
    if (!writer_lock_for(2000)) {
        free(now);
        return;
    }
    maps_append_locked(now, len, t_ns);
    writer_unlock();
}

/* A snapshot on the fatal-signal path and the way out: /proc/self/maps copied through a buffer
 * on the stack, nothing allocated (nothing is compared with it later: the image is ending),
 * after a '# t=' line when one is given (t_ns > 0: not the file's first snapshot). */
static _Atomic int way_out;

void writer_way_out(void)
{
    atomic_store(&way_out, 1);
}

static void maps_copy_signal_safe_at(uint64_t t_ns)
{
    int in = fds_run_open("/proc/self/maps", O_RDONLY | O_CLOEXEC, 0);
    if (in < 0)
        return;
    int out = fds_run_open(ps_maps_path, O_WRONLY | O_APPEND | O_CLOEXEC, 0);
    if (out >= 0) {
        char buf[2048];
        if (t_ns > 0) {
            struct safefmt f;
            safefmt_init(&f, buf, sizeof buf);
            safefmt_str(&f, "# t=");
            safefmt_u64(&f, t_ns);
            safefmt_str(&f, "\n");
            if (write(out, buf, f.len) != (ssize_t)f.len) {
                fds_run_close(out);
                fds_run_close(in);
                return;
            }
        }
        for (;;) {
            ssize_t r = read(in, buf, sizeof buf);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0 || write(out, buf, (size_t)r) != r)
                break;
        }
        fds_run_close(out);
    }
    fds_run_close(in);
}

static void maps_copy_signal_safe(void)
{
    maps_copy_signal_safe_at(0);
}

/* Makes this image's .bin (header, no record yet) and .maps (the mappings now, in force from
 * the image's start: every sample still in a ring was taken under them, and a library unloaded
 * before this point was snapshotted by the dlclose wrapper, writer_maps_catch_up). Caller holds
 * the io lock. 0, or -1 (said once) when they cannot be made: the samples are then lost. */
static int files_create(int from_signal)
{
    if (files_made)
        return 0;
    if (!fds_may_open()) {
        ps_log_once("bin-sealed", "a seccomp filter may forbid creating %s: samples are being lost", ps_bin_path);
        return -1;
    }
    unsigned char header[SAMPLEFILE_HEADER_BYTES];
    put_header(header, 0, 0);
    int fd = -1;
    for (int n = 0; fd < 0; n++) {
        fd = fds_run_open(ps_bin_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        /* Taken since the name was chosen (nothing else of this pid can run meanwhile; a folder
         * shared with another run): the next free name, which procs.jsonl's start line does not
         * give, so the symbolizer reads it without the executable's path. */
        if (fd < 0 && (errno != EEXIST || n > 0 || name_files(1) < 0)) {
            ps_log_once("bin-create", "cannot create %s: %s; samples are being lost",
                        ps_bin_path[0] ? ps_bin_path : ps_cfg.file_prefix, strerror(errno));
            files_ok = 0;
            return -1;
        }
    }
    int rc = write_held_at(NULL, fd, header, sizeof header, 0);
    fds_run_close(fd);
    if (rc < 0) {
        ps_log_once("bin-create", "cannot write %s: %s; samples are being lost", ps_bin_path, strerror(errno));
        files_ok = 0;
        return -1;
    }
    fd = fds_run_open(ps_maps_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0)
        fds_run_close(fd);
    files_made = 1;
    if (from_signal || atomic_load(&way_out)) {
        maps_copy_signal_safe();
        return 0;
    }
    objects_changed();
    size_t len = 0;
    char *now = read_self_maps(&len);
    if (now)
        maps_append_locked(now, len, 0);
    return 0;
}

/* The files now, samples or not (before a seccomp filter: nothing may be created after it). */
void writer_make_files(void)
{
    if (!files_ok || files_made || !writer_lock_for(2000))
        return;
    files_create(0);
    writer_unlock();
}

/* dl_iterate_phdr's counters of objects loaded and unloaded so far: when they move, the maps
 * changed. */
static int read_load_counts(struct dl_phdr_info *info, size_t size, void *data)
{
    unsigned long long *c = data;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        c[0] = info->dlpi_adds;
        c[1] = info->dlpi_subs;
    }
    return 1;
}

static int objects_changed(void)
{
    static unsigned long long last[2];
    unsigned long long now[2] = { 0, 0 };
    ps_real_dl_iterate_phdr(read_load_counts, now);
    int changed = now[0] != last[0] || now[1] != last[1];
    last[0] = now[0];
    last[1] = now[1];
    return changed;
}

/* ---- draining rings ---- */

static unsigned char batch[256 * 1024];

static void refresh_comm(struct ps_thread *t, uint64_t now, int allow_io)
{
    if (!allow_io || now - t->comm_checked_ns < 1000000000ull || !fds_may_open())
        return;
    t->comm_checked_ns = now;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)t->tid);
    char name[18] = { 0 };
    ssize_t n = fdcache_read(path, name, sizeof name); /* kept until the thread is handed back */
    if (n <= 0)
        return;
    if (name[n - 1] == '\n')
        n--;
    if (n > (ssize_t)sizeof t->comm)
        n = (ssize_t)sizeof t->comm;
    memset(t->comm, 0, sizeof t->comm);
    memcpy(t->comm, name, (size_t)n);
}

/* Drains every ring into the file. Caller holds the io lock. allow_io: may read thread names
 * from /proc (not on the fatal-signal path). */
static uint64_t dropped_in_header; /* the dropped count last written */

/* The sample file's kept descriptor (fds.h; under the io lock, or in a fork child before its
 * threads). */
static struct fds_held bin_held = FDS_HELD_NONE;

static int bin_via_held; /* this drain's descriptor is bin_held's (under the io lock) */

/* The sample file's descriptor for one drain (bin_close after it); the io lock held. */
static int bin_open(void)
{
    int fd = atomic_load(&bin_held.fd);
    if (fd >= 0) {
        if (fds_held_fd(&bin_held) >= 0) {
            bin_via_held = 1;
            return fd;
        }
        ps_log_once("bin-lost", "the descriptor of %s was closed or replaced behind the shim's wrappers: opened again by path",
                    ps_bin_path);
    }
    bin_via_held = 0;
    struct stat before;
    int keep = fds_may_open() && stat(ps_bin_path, &before) == 0; /* the file it must be */
    fd = fds_run_open(ps_bin_path, O_WRONLY | O_CLOEXEC, 0);
    if (fd < 0) {
        ps_log_once("bin-open", "cannot reopen %s: %s; samples are being lost", ps_bin_path, strerror(errno));
        return fd;
    }
    int held = keep ? fds_hold(&bin_held, fd, &before) : 0;
    if (held < 0) {
        ps_real_close(fd); /* our copy of a file that is not the sample file */
        errno = EBADF;
        return -1;
    }
    bin_via_held = held;
    return fd;
}

/* A write of the drain's, bracketed when through the kept descriptor. */
static int bin_write_at(int fd, const void *buf, size_t len, off_t off)
{
    return write_held_at(bin_via_held ? &bin_held : NULL, fd, buf, len, off);
}

static void bin_close(int fd)
{
    if (!bin_via_held)
        fds_run_close(fd); /* a kept one stays, or was forgotten: the number is not ours to close */
}

void writer_forget_fd(int fd)
{
    if (fd < 0 || fd != atomic_load(&bin_held.fd))
        return;
    /* Not while a drain writes through it: the target's dup2 comes after. The drain on a
     * target's thread (the way out) runs with signals blocked, so no handler of this thread
     * waits here for its own drain; the bound is for a drain that hangs on a slow disk: then
     * the write under way is waited for (fds_held_forget_for_dup2) and no other begins. */
    int locked = writer_lock_for(5000);
    fds_held_forget_for_dup2(&bin_held, fd);
    if (locked)
        writer_unlock();
}

/* Registry slot i when the writer has work on it (a live thread's ring to drain, or a thread
 * that exited: its ring, if it still has one, to drain, and its slot to hand back), with its
 * state in *st; else NULL. */
static struct ps_thread *drainable(int i, int *st)
{
    struct ps_thread *t = &ps_threads[i];
    *st = atomic_load(&t->state);
    return (*st == PS_T_LIVE && t->ring) || *st == PS_T_EXITED ? t : NULL;
}

/* Whether a drain has anything to do: records in a ring, or a thread's slot to hand back. The
 * io lock held: a drain elsewhere (the way out's, or a pass on the other shim thread) may hand
 * rings back, and unmap them. */
static int drain_needed_locked(void)
{
    uint64_t dropped = dropped_retired + atomic_load(&ps_samples_orphan);
    int nthreads = atomic_load(&ps_threads_used);
    for (int i = 0; i < nthreads; i++) {
        int st;
        struct ps_thread *t = drainable(i, &st);
        if (!t)
            continue;
        struct ps_ring *r = t->ring;
        if ((st == PS_T_EXITED && unsampled_thread_retired(t)) || (r && ring_peek(r) != NULL))
            return 1;
        if (kchain_pending(t)) /* the kernel's records to move */
            return 1;
        if (r)
            dropped += atomic_load(&r->dropped);
    }
    return dropped != dropped_in_header;
}

/* The same from outside a drain: 1 when a drain under way holds the lock (the caller's pass
 * then finds out). */
static int drain_needed(void)
{
    if (!writer_lock_for(0))
        return 1;
    int needed = drain_needed_locked();
    writer_unlock();
    return needed;
}

/* t's ring leaves its slot (under the io lock): its drops kept in the count, the ring cached or
 * unmapped. The slot forgets it first: a fork in between must not leave the child a slot whose
 * ring is cached too. */
static void ring_retire(struct ps_thread *t)
{
    struct ps_ring *r = t->ring;
    dropped_retired += atomic_load(&r->dropped);
    t->ring = NULL;
    ring_free(r);
}

/* An exited thread's slot comes back once the unsampled check has seen its end, with its ring
 * if it still has one (under the io lock). */
static void slot_release(struct ps_thread *t, int allow_io)
{
    if (allow_io)
        fdcache_forget_thread(t->tid); /* its comm and status, if kept */
    if (t->ring)
        ring_retire(t);
    atomic_store(&t->state, PS_T_FREE);
}

void writer_ring_handback(struct ps_thread *t)
{
    /* Every signal blocked: this thread's last sample may not land between the look and the
     * hand-back, nor a handler of the target's run (an exit, a dup2) while the lock is held. */
    sigset_t old;
    sigmask_block_all(&old);
    if (writer_lock_for(0)) { /* else a drain under way: the pass hands it back */
        if (t->ring && ring_peek(t->ring) == NULL && !t->kchain) /* (the kernel's records need it) */
            ring_retire(t);
        writer_unlock();
    }
    sigmask_restore(&old);
}

static void drain_locked(int allow_io)
{
    if (clock_kernel_chains())
        kchain_retire_done(); /* a closed event's empty buffer needs no file to go */
    if (!files_ok || !drain_needed_locked())
        return; /* nothing new: the file is not opened (the writer passes often early on) */
    if (files_create(!allow_io) != 0)
        return;
    int fd = bin_open();
    if (fd < 0)
        return;
    size_t rs = file_rec_size();
    size_t used = 0;
    uint64_t now = ps_now_ns();
    uint64_t dropped = dropped_retired + atomic_load(&ps_samples_orphan);
    off_t base = SAMPLEFILE_HEADER_BYTES + (off_t)(records_written * rs);
    uint64_t pending = 0;
    int failed = 0;
    int nthreads = atomic_load(&ps_threads_used);
    for (int i = 0; i < nthreads; i++) {
        int st;
        struct ps_thread *t = drainable(i, &st);
        if (!t)
            continue;
        /* (no ring: it went back at the thread's end, empty, writer_ring_handback) */
        struct ps_slot_rec *r;
        if (t->ring)
            refresh_comm(t, now, allow_io);
        /* The kernel's records (kchain.h) come into the ring a ringful at a time. */
        int more;
        do {
            more = kchain_pump(t);
            while (t->ring && (r = ring_peek(t->ring)) != NULL) {
                uint32_t nf = r->nframes > (uint32_t)ps_cfg.max_frames ? (uint32_t)ps_cfg.max_frames : r->nframes;
                for (uint32_t w = 0; w < r->weight; w++) {
                    if (used + rs > sizeof batch) {
                        off_t at = base + (off_t)(pending - used / rs) * (off_t)rs;
                        if (!failed && bin_write_at(fd, batch, used, at) < 0)
                            failed = 1;
                        used = 0;
                    }
                    unsigned char *out = batch + used;
                    size_t fb = 8 * (size_t)nf;
                    memcpy(out + SAMPLEFILE_REC_TIME, &r->time_ns, 8);
                    memcpy(out + SAMPLEFILE_REC_TID, &r->tid, 4);
                    memcpy(out + SAMPLEFILE_REC_NFRAMES, &nf, 4);
                    memcpy(out + SAMPLEFILE_REC_COMM, t->comm, SAMPLEFILE_COMM_BYTES);
                    memcpy(out + SAMPLEFILE_REC_FRAMES, r->frames, fb);
                    memset(out + SAMPLEFILE_REC_FRAMES + fb, 0, rs - SAMPLEFILE_REC_FRAMES - fb);
                    used += rs;
                    pending++;
                }
                ring_release(t->ring);
            }
        } while (more);
        kchain_retire_if_done(t);
        if (t->ring)
            dropped += atomic_load(&t->ring->dropped);
        /* An exit after this pass's unsampled check: kept until the next check has seen it
         * (and until the kernel's last records are in). */
        if (st == PS_T_EXITED && unsampled_thread_retired(t) && !t->kchain)
            slot_release(t, allow_io);
    }
    if (used && !failed && bin_write_at(fd, batch, used, base + (off_t)(pending - used / rs) * (off_t)rs) < 0)
        failed = 1;
    if (failed) {
        ps_log_once("bin-write", "cannot write samples to %s: %s; samples are being lost", ps_bin_path, strerror(errno));
        dropped += pending;
        pending = 0;
    }
    records_written += pending;
    unsigned char header[SAMPLEFILE_HEADER_BYTES];
    put_header(header, records_written, dropped);
    if (bin_write_at(fd, header, sizeof header, 0) == 0)
        dropped_in_header = dropped;
    bin_close(fd);
}

static void flush(int from_signal, int last)
{
    /* On a target's thread (the way out) no handler of the target's may run mid-drain: a dup2
     * from one onto the kept descriptor would wait for this very drain (writer_forget_fd). */
    sigset_t old;
    int masked = !from_signal && !ps_shim_thread;
    if (masked)
        sigmask_block_all(&old);
    if (writer_lock_for(from_signal ? 300 : masked ? 5000 : -1)) { /* masked: SIGTERM waits on it */
        drain_locked(!from_signal);
        if (last)
            kchain_stop(); /* under the lock: no pass after this one moves or counts a record */
        writer_unlock();
    } else if (last) {
        kchain_stop();
    }
    if (masked)
        sigmask_restore(&old);
}

void writer_flush(int from_signal)
{
    flush(from_signal, 0);
}

void writer_flush_last(int from_signal)
{
    flush(from_signal, 1);
}

/* How long the writer sleeps between passes. A process may end without any wrapper seeing it
 * (a raw exit_group: every Go program; a seccomp kill), losing what was sampled since the last
 * pass: while it is young the writer passes more often, a quarter of its age but at least every
 * 10 ms, so such an end loses at most a fifth of a short life. A pass with nothing new opens
 * nothing. */
static uint64_t writer_started_ns;

static long pass_ms(uint64_t now, int idle)
{
    /* A follower checks every 250 ms whether it takes over as the run's leader. */
    long slow = leader_is_us() ? IDLE_MS : 250;
    if (!files_ok)
        return lifetime_period_ms(slow);
    uint64_t age_ms = (now - writer_started_ns) / 1000000ull;
    long ms = (long)(age_ms / 4);
    if (ms < 10)
        ms = 10;
    /* Half a ring at the asked rate (a thread gets at most one signal per period). */
    long half_ms = ps_cfg.hz > 0 ? (long)(PS_RING_SLOTS / 2) * 1000L / ps_cfg.hz : FLUSH_MS;
    long busy = half_ms < BUSY_MS ? BUSY_MS : half_ms < FLUSH_MS ? half_ms : FLUSH_MS;
    if (busy > slow)
        busy = slow; /* a follower still looks for a leader to take over from every 250 ms */
    if (clock_kernel_chains()) {
        /* Nothing tells the writer that the kernel wrote: it passes before any thread's buffer
         * can be half full, idle or not (docs/shim.md, "Kernel call chains"). */
        long chain = kchain_pass_ms();
        if (busy > chain)
            busy = chain;
        idle = 0;
    }
    if (ms > busy)
        ms = idle ? slow : busy;
    return lifetime_period_ms(ms);
}

static long futex_word(_Atomic uint32_t *w, int op, uint32_t val, const struct timespec *abs_until)
{
    return syscall(SYS_futex, (uint32_t *)w, op, val, abs_until, NULL, FUTEX_BITSET_MATCH_ANY);
}

/* Sleeps until `until` (CLOCK_MONOTONIC) or a wake (stop, writer_wake, a sample after idle, the
 * watcher handing the passes back) since wake_seq read seq: the caller reads it before it plans,
 * so a wake between its plan and the wait is never missed. 1 when woken or not asleep at all, 0
 * when the time ran out. */
static int writer_sleep(uint32_t seq, const struct timespec *until, int idle)
{
    if (idle) {
        atomic_store(&writer_idle, 1);
        atomic_thread_fence(memory_order_seq_cst);
        if (drain_needed()) { /* a sample landed between the pass and now */
            atomic_store(&writer_idle, 0);
            return 1;
        }
    }
    int woken = 1;
    if (atomic_load(&stop_requested))
        return 1;
    if (atomic_load(&wake_pending)) {
        woken = 1; /* a pass asked for: wake_pending stays set for the caller */
    } else if (futex_word(&wake_seq, FUTEX_WAIT_BITSET_PRIVATE, seq, until) < 0 && errno == ETIMEDOUT) {
        woken = 0;
    }
    if (!woken || !atomic_load(&hosted))
        atomic_store(&wake_pending, 0);
    atomic_store(&writer_idle, 0);
    return woken;
}

/* From the SIGPROF handler, after a sample is in its ring: wakes a writer sleeping its idle
 * period (one futex call per idle stretch; nothing otherwise). Async-signal-safe. */
void writer_note_sample(void)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&writer_idle, memory_order_relaxed) && atomic_exchange(&writer_idle, 0)) {
        int saved = errno;
        atomic_fetch_add(&wake_seq, 1);
        futex_word(&wake_seq, FUTEX_WAKE_PRIVATE, 1, NULL);
        errno = saved;
    }
}

/* When the writer's last pass began: a library loaded since is in force from then. */
static _Atomic uint64_t last_pass_ns;

/* A library loaded since the writer last looked gets its snapshot now, in force from the
 * writer's last pass: on the way out (exit, exec; not from a signal) before the last drain, and
 * before a dlclose unmaps it, or a burst in it between two passes would not symbolize. */
void writer_maps_catch_up(void)
{
    if (!files_ok || !fds_may_open())
        return;
    if (!files_made) {
        /* Samples still in a ring were taken under the mappings now: the files and their first
         * snapshot are made before a library goes (none is needed without a sample). */
        if (writer_lock_for(2000)) {
            if (drain_needed_locked())
                files_create(0);
            writer_unlock();
        }
        return;
    }
    if (!objects_changed())
        return;
    if (!atomic_load(&way_out)) {
        writer_maps_snapshot(atomic_load(&last_pass_ns));
        return;
    }
    if (writer_lock_for(2000)) {
        uint64_t t = atomic_load(&last_pass_ns);
        maps_copy_signal_safe_at(maps_last && t < maps_last_t ? maps_last_t : t > 0 ? t : 1);
        writer_unlock();
    }
}

/* One pass: the drain, the maps check, the reaping of threads that are gone, the unsampled check
 * and (a follower) the leader takeover check. Run by the writer thread, or by the leader's
 * watcher at one of its own wakeups while the writer sleeps (writer_host_pass): one pass at a
 * time, under pass_lock. */
static pthread_mutex_t pass_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t last_maps, last_reap, last_leader, records_seen;
static int pass_idle; /* the last pass wrote nothing new */

/* The process's virtual size (/proc/self/stat's vsize), 0 when it cannot be read. */
static uint64_t self_vsize(void)
{
    char buf[1024];
    ssize_t n;
    if (fds_may_open()) {
        n = fdcache_read("/proc/self/stat", buf, sizeof buf); /* kept: no low number taken */
    } else {
        int fd = fds_run_open("/proc/self/stat", O_RDONLY | O_CLOEXEC, 0); /* a seccomp filter's kept file */
        if (fd < 0)
            return 0;
        n = pread(fd, buf, sizeof buf - 1, 0);
        fds_run_close(fd);
    }
    if (n <= 0)
        return 0;
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    if (!p)
        return 0;
    /* Field 23 (vsize); fields from 3, the state, each after one space. */
    int field = 2;
    for (; *p && field < 23; p++)
        if (*p == ' ')
            field++;
    return field == 23 ? strtoull(p, NULL, 10) : 0;
}

/* Whether the mappings may differ from the last snapshot, besides a library loaded or unloaded
 * (objects_changed): once a second the process's virtual size is read (a /proc/self/stat read, a
 * small fraction of the cost of reading and comparing all of /proc/self/maps), and the maps are
 * read again when it moved; a change that keeps the size (an mprotect, a remap in place) is seen
 * by the full read every MAPS_FULL_NS all the same. */
#define MAPS_CHECK_NS 1000000000ull
#define MAPS_FULL_NS 10000000000ull
static uint64_t last_vsize, last_vsize_check;

static int maps_may_have_changed(uint64_t now)
{
    if (now - last_vsize_check < MAPS_CHECK_NS)
        return 0;
    last_vsize_check = now;
    uint64_t v = self_vsize();
    int changed = v == 0 || v != last_vsize || now - last_maps >= MAPS_FULL_NS;
    last_vsize = v;
    return changed;
}

static void pass_locked(void)
{
    uint64_t now = ps_now_ns(), last_pass = atomic_load(&last_pass_ns);
    /* Under a seccomp filter on every thread only the flush runs (kept descriptors). */
    int io = fds_io_enter();
    static int told_gate;
    int gate = fdgate_trouble() & ~told_gate;
    if (io && gate) {
        if (gate & FDGATE_TROUBLE_ALLOCS)
            ps_log("an announcement of the shim's descriptor gate stayed up for a second (a thread that ended "
                   "inside one): the target's close, dup2 and dup3 no longer wait for it");
        if (gate & FDGATE_TROUBLE_CALLS)
            ps_log("a close, dup2 or dup3 of the target's stayed under way for 25 ms (a slow close, or a thread "
                   "that ended inside one): the shim's opens only yield the CPU a few times for such calls until "
                   "none is under way");
        told_gate |= gate;
    }
    if (files_ok) {
        unsampled_pass(); /* before the drain hands back the threads that exited */
        writer_flush(0);
        if (records_written)
            sampler_warm_libunwind_soon(); /* once: a process that takes no sample never pays it */
        static int told_given_up;
        if (!told_given_up && dlbusy_given_up()) {
            told_given_up = 1;
            ps_log("a dlclose or dl_iterate_phdr waited 100 ms for the handler's stack walks: libunwind is off in "
                   "the handler from now on (stacks by frame pointers)");
        }
        /* A library loaded since the last pass is in force from the last pass: its code
         * could not run before it was loaded, and what was mapped then still is. */
        if (io && (objects_changed() || maps_may_have_changed(now))) {
            writer_maps_snapshot(last_pass);
            last_maps = now;
        }
        if (io && now - last_reap > 1000000000ull) {
            threads_reap_foreign();
            last_reap = now;
        }
    }
    atomic_store(&last_pass_ns, now);
    if (io && !leader_is_us() && now - last_leader > 250000000ull) {
        leader_try_takeover();
        last_leader = now;
    }
    /* Idle: this pass wrote nothing new (the maps check, the reaping of threads and the
     * unsampled check then ride on the long sleep's passes). */
    pass_idle = records_written == records_seen && !clock_kernel_chains();
    records_seen = records_written;
    if (io)
        fds_io_leave();
}

/* Hosting: in the leader, the watcher wakes every counter period (or at least once a second)
 * anyway. When the writer's next pass is no sooner than that period, the writer sleeps until
 * woken (a stop, writer_wake, the watcher handing the passes back) and the watcher runs the
 * pass at the wakeup of its own that comes before it is due: one wakeup serves both. */
static _Atomic uint64_t next_due_ns; /* when the next pass is due */
static _Atomic uint64_t hosted_passes;
#define HOSTED_BACKSTOP_S 10 /* a hosted writer wakes by itself after this long all the same */

/* The next pass's due time after one at now; whether it can ride on the watcher's wakeups. */
static int plan_next(uint64_t now, long *ms_out)
{
    long ms = pass_ms(now, pass_idle);
    atomic_store(&next_due_ns, now + (uint64_t)ms * 1000000ull);
    *ms_out = ms;
    long host = leader_host_period_ms();
    return host > 0 && host <= ms;
}

void writer_host_pass(long period_ms)
{
    if (!writer_running || !atomic_load(&hosted))
        return; /* (the watcher runs in its own process only: no getpid check needed) */
    uint64_t now = ps_now_ns();
    if (now + (uint64_t)period_ms * 1000000ull < atomic_load(&next_due_ns) && !(pass_idle && drain_needed()))
        return; /* not due before the watcher's next wakeup, and no sample waiting after idle */
    if (pthread_mutex_trylock(&pass_lock) != 0)
        return; /* the writer itself is passing */
    if (atomic_load(&hosted)) {
        pass_locked();
        atomic_fetch_add(&hosted_passes, 1);
        long ms;
        if (!plan_next(now, &ms))
            writer_rehost(); /* now due sooner than the watcher wakes: the writer's own timer */
    }
    pthread_mutex_unlock(&pass_lock);
}

/* The writer starts on its creator's CPU and stays there until it first wakes (10 ms after its
 * start at the earliest, or whenever it is woken): a short process (a build's compiler, a
 * shell's fork child on its way to exec) ends before that, and a thread that never ran on
 * another CPU costs it less (interpose.h). It starts no thread of its own before then. */
static struct ps_thread_pin writer_pin;
static int writer_cred_slot = -1; /* credsync.c: the writer's slot */

static void *writer_main(void *arg)
{
    (void)arg; /* every signal blocked from the start (ps_start_shim_thread) */
    ps_guard_enter();
    ps_shim_thread = 1;
    lifetime_shim_thread(1);
    last_maps = ps_now_ns();
    last_reap = last_maps;
    last_vsize_check = last_maps;
    last_vsize = 0; /* the first check, a second in, reads the maps whole */
    last_leader = 0;
    records_seen = 0;
    pass_idle = 0;
    atomic_store(&last_pass_ns, last_maps);
    while (!atomic_load(&stop_requested)) {
        /* The count first: a request posted after the serve bumps it, and the wait below sees
         * that (one posted before the serve is served here). */
        uint32_t seq = atomic_load(&wake_seq);
        credsync_serve(&writer_cred_slot);
        pthread_mutex_lock(&pass_lock);
        long ms;
        int host = plan_next(ps_now_ns(), &ms);
        atomic_store(&hosted, host);
        int idle = pass_idle;
        pthread_mutex_unlock(&pass_lock);
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        if (host)
            until.tv_sec += HOSTED_BACKSTOP_S;
        until.tv_nsec += ms * 1000000L;
        until.tv_sec += until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
        /* While hosted the first sample after an idle stretch waits for the watcher's next
         * wakeup (at most its period) rather than waking this thread. */
        shimopen_settle(); /* no number of the shim's held across the sleep */
        int woken = writer_sleep(seq, &until, !host && idle && ms >= BUSY_MS);
        credsync_serve(&writer_cred_slot); /* a credential call of the target's, made here too */
        /* Awake (a pass due or not): a process that got here is not a short one, and a thread
         * this one starts from now on (libunwind's warm-up, a takeover's watcher) must not
         * inherit the pin. */
        ps_shim_thread_unpin(&writer_pin);
        atomic_store(&hosted, 0);
        if (atomic_load(&stop_requested))
            break;
        if (host && woken && !atomic_exchange(&wake_pending, 0))
            continue; /* handed back (or a pass came due sooner): plan again */
        atomic_fetch_add(&writer_passes, 1);
        pthread_mutex_lock(&pass_lock);
        pass_locked();
        pthread_mutex_unlock(&pass_lock);
        meta_own_thread_cpu_due(META_OWN_WRITER);
        if (lifetime_check())
            break; /* the target's threads are all gone and the run is finished: end with them */
    }
    atomic_store(&hosted, 0);
    credsync_thread_end(&writer_cred_slot);
    meta_own_thread_ended(META_OWN_WRITER);
    lifetime_shim_thread(-1);
    return NULL;
}

int writer_start(void)
{
    /* A leader without samples has nothing for this thread to do. */
    if (!files_ok && leader_is_us())
        return 0;
    atomic_store(&stop_requested, 0);
    atomic_store(&way_out, 0); /* again after an exec that failed */
    writer_started_ns = ps_now_ns();
    credsync_thread_start(&writer_cred_slot);
    int rc = ps_start_shim_thread_near(&writer_thread, writer_main, &writer_pin);
    credsync_thread_created(&writer_cred_slot, rc == 0);
    if (rc != 0) {
        ps_log("cannot start the writer thread: samples are flushed only at exit");
        return -1;
    }
    writer_running = 1;
    return 0;
}

/* Stops the writer thread (exit paths, not from a signal): joins it so nothing is written
 * after the final flush. */
/* Sets flag and wakes the writer from its wait. */
static void signal_writer(_Atomic int *flag)
{
    atomic_store(flag, 1);
    atomic_fetch_add(&wake_seq, 1);
    futex_word(&wake_seq, FUTEX_WAKE_PRIVATE, 1, NULL);
}

int writer_stop(void)
{
    if (!writer_running)
        return 0;
    signal_writer(&stop_requested);
    /* The run may end on the writer itself (the target's last thread gone, lifetime.c). */
    if (pthread_equal(writer_thread, pthread_self())) {
        writer_running = 0;
        return 0;
    }
    if (!ps_join_shim_thread(writer_thread, "writer"))
        return 0; /* still there, asked to stop: still running as far as a restart goes */
    writer_running = 0;
    return 1;
}

/* The watcher stops hosting the passes (it ends, or they come due sooner than it wakes): the
 * writer plans again with its own timer. */
void writer_rehost(void)
{
    /* Whether or not the writer sleeps hosted yet: one planning now sees the new state, or its
     * wait sees this wake (writer_sleep). Rare: a hand-back, the watcher's end. */
    if (writer_running) {
        atomic_fetch_add(&wake_seq, 1);
        futex_word(&wake_seq, FUTEX_WAKE_PRIVATE, 1, NULL);
    }
}

/* From the SIGPROF handler, at an image's first sample walked by frame pointers because
 * libunwind is not loaded yet, in the run's leader only: a pass now, whose flush starts the load
 * (sampler_warm_libunwind_soon), rather than at the writer's first timed pass, 10 ms or more
 * in. Until the load, code built without frame pointers (CPython, most of a distribution's
 * libraries) cuts those stacks short: a Python driver at 997 Hz had 7-12 of its first samples
 * so, 2-5 with this. Not in the other processes: the load costs a process about 1 ms of CPU
 * (a loop of 4 ms processes at 997 Hz: +1.08 ms each, 8 of 8 rounds), which the lazy load
 * spares those that end within 10 ms; the leader pays it once a run. Async-signal-safe. */
static _Atomic int unwinder_wake_sent;

void writer_wake_for_unwinder(void)
{
    if (!leader_is_us() || !atomic_load_explicit(&writer_running, memory_order_relaxed) ||
        atomic_load_explicit(&unwinder_wake_sent, memory_order_relaxed) ||
        atomic_exchange(&unwinder_wake_sent, 1))
        return;
    int saved = errno;
    signal_writer(&wake_pending);
    errno = saved;
}

/* Wakes the writer without asking for a pass (credsync.c: a request to serve). Async-signal-safe. */
void writer_poke(void)
{
    int saved = errno; /* (a writer just created and not yet waiting sees the count changed) */
    atomic_fetch_add(&wake_seq, 1);
    futex_word(&wake_seq, FUTEX_WAKE_PRIVATE, 1, NULL);
    errno = saved;
}

/* The next pass now (lifetime.c: a thread of the target is ending). Not from a signal handler. */
void writer_wake(void)
{
    if (!writer_running)
        return;
    signal_writer(&wake_pending);
}

/* After fork, in the child: the parent's writer does not exist here. */
void writer_forget_after_fork(void)
{
    fds_held_close(&bin_held); /* our copy of the parent's sample file */
    writer_running = 0;
    atomic_store(&writer_idle, 0);
    atomic_store(&unwinder_wake_sent, 0); /* the parent's load may not have begun */
    atomic_store(&wake_pending, 0);       /* a wake the parent's writer had not taken yet */
    atomic_store(&writer_passes, 0);
    atomic_store(&hosted, 0);
    atomic_store(&hosted_passes, 0);
    pthread_mutex_init(&pass_lock, NULL);
    atomic_store(&io_owner, 0);
    atomic_store(&io_lock, 0);
    free(maps_last);
    maps_last = NULL;
    maps_last_len = 0;
    maps_last_t = 0;
    files_ok = 0;
    files_made = 0;
    dropped_retired = 0;
    records_written = 0;
}

uint64_t writer_pass_count(void)
{
    return atomic_load(&writer_passes);
}

uint64_t writer_hosted_pass_count(void)
{
    return atomic_load(&hosted_passes);
}

uint64_t writer_records(void)
{
    return records_written;
}

int writer_files_ok(void)
{
    return files_ok;
}

int writer_files_made(void)
{
    return files_made;
}
