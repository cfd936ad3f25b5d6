/* leader.c: the run's leader. One process of a process tree holds an flock on <out>/.leader;
 * it alone watches the markers file (inotify) and reads the whole-device counters, at every
 * boundary and every PERFSCOPE_COUNTER_MS. When it exits the lock is released and a follower's
 * writer thread takes over, resuming the markers file where the old leader stopped (the
 * offset is kept in .leader). At its wakeups it also runs the writer's pass when one is due before
 * its next (writer.c), so the two threads share wakeups. Must never block the target: everything
 * runs on its own thread. */
#include "leader.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "clock.h"
#include "config.h"
#include "credsync.h"
#include "counterlog.h"
#include "counters/counters.h"
#include "fds.h"
#include "interpose.h"
#include "lifetime.h"
#include "log.h"
#include "markers.h"
#include "meta.h"
#include "procs.h"
#include "runid.h"
#include "sampler.h"
#include "safefmt.h"
#include "shim.h"
#include "shimopen.h"
#include "sigmask.h"
#include "writer.h"
#include "runfolder.h"

static int lock_fd = -1;    /* <out>/.leader, flocked while we lead */
static int inotify_fd = -1;
static int markers_watched; /* an inotify watch on the markers file is in place */
static _Atomic uint64_t watcher_passes;
static _Atomic int is_leader; /* whether this process is the run's leader now */
static int owns_meta; /* this process started the run: it writes meta.json's status at exit */

static int wake_fd = -1; /* eventfd: leader_stop wakes the watcher out of poll at once */
static _Atomic long watcher_period_ms; /* how often it wakes while nothing happens; 0: not running */
static pthread_t watcher;
static int watcher_running;
static _Atomic int watcher_stop;

/* What a leader hands to the next one: how far the markers file has been read, and which run
 * this is (its id, PERFSCOPE_RUN_ID, and its start on CLOCK_MONOTONIC, the first process's).
 * One text line in .leader: "pid=P offset=O line=L t0=T run=ID". */
struct leader_state {
    long first_pid;
    long long offset;
    long line_no;
    unsigned long long t0;
    char run_id[RUNID_MAX];
};

/* The number after `key` at *p, and *p moved past it; 0 when the text there is not key and a
 * number. Without stdio: every image reads .leader at its start (runid.c), and sscanf's first
 * call faulted its code in. */
static int state_field(const char **p, const char *key, long long *out)
{
    while (**p == ' ')
        (*p)++;
    size_t n = strlen(key);
    if (strncmp(*p, key, n) != 0)
        return 0;
    char *end;
    *out = strtoll(*p + n, &end, 10);
    if (end == *p + n)
        return 0;
    *p = end;
    return 1;
}

static void state_parse(const char *buf, struct leader_state *s)
{
    memset(s, 0, sizeof *s);
    const char *at = buf;
    long long pid, line;
    if (!state_field(&at, "pid=", &pid) || !state_field(&at, "offset=", &s->offset) ||
        !state_field(&at, "line=", &line)) {
        memset(s, 0, sizeof *s);
        return;
    }
    s->first_pid = (long)pid;
    s->line_no = (long)line;
    const char *t0 = strstr(at, " t0=");
    if (t0)
        s->t0 = strtoull(t0 + 4, NULL, 10);
    const char *run = strstr(at, " run=");
    if (run) {
        size_t n = strcspn(run + 5, " \n");
        if (n < sizeof s->run_id && !(n == 1 && run[5] == '-')) { /* "-": none */
            memcpy(s->run_id, run + 5, n);
            s->run_id[n] = 0;
        }
    }
}

static void state_read(struct leader_state *s)
{
    memset(s, 0, sizeof *s);
    char buf[256];
    ssize_t n = pread(lock_fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return;
    buf[n] = 0;
    state_parse(buf, s);
}

static void state_write(const struct leader_state *s)
{
    char buf[256];
    int n = snprintf(buf, sizeof buf, "pid=%ld offset=%lld line=%ld t0=%llu run=%s\n", s->first_pid, s->offset,
                     s->line_no, s->t0, s->run_id[0] ? s->run_id : "-");
    if (n > 0 && n < (int)sizeof buf && pwrite(lock_fd, buf, (size_t)n, 0) == n)
        (void)!ftruncate(lock_fd, n);
}

static struct leader_state state;
static long long state_written_offset = -1, state_written_line = -1; /* what .leader says now */

/* ---- the markers file ---- */

static char partial[PS_MARKER_LINE_MAX + 1];
static size_t partial_len;
static long long line_start; /* file offset where the line being read began */
static int partial_overlong;

/* data starts at file offset `at`. */
static void feed(const char *data, size_t len, long long at, uint64_t now)
{
    for (size_t i = 0; i < len; i++) {
        char c = data[i];
        if (c == '\n') {
            state.line_no++;
            markers_parse_line(partial, partial_len + (size_t)partial_overlong, state.line_no, now);
            partial_len = 0;
            partial_overlong = 0;
            line_start = at + (long long)i + 1;
            continue;
        }
        if (partial_len < PS_MARKER_LINE_MAX)
            partial[partial_len++] = c;
        else
            partial_overlong = 1; /* markers_parse_line cuts and logs what is over 4 KiB */
    }
}

static void read_markers(void)
{
    if (!ps_cfg.markers[0])
        return;
    int fd = fds_open_high(ps_cfg.markers, O_RDONLY, 0);
    if (fd < 0)
        return;
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size < state.offset) {
        ps_log("markers file %s shrank (truncated or replaced): reading it again from the start", ps_cfg.markers);
        state.offset = 0;
        state.line_no = 0;
        partial_len = 0;
        line_start = 0;
    }
    char buf[8192];
    for (;;) {
        ssize_t n = pread(fd, buf, sizeof buf, state.offset);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        uint64_t now = ps_now_ns();
        /* Only whole lines count as read: a partial line is kept in memory, and the offset
         * handed to a successor stops at the last newline. */
        feed(buf, (size_t)n, state.offset, now);
        state.offset += n;
    }
    ps_real_close(fd);
    struct leader_state saved = state;
    saved.offset = line_start; /* a successor re-reads the unfinished line whole, however long */
    if (saved.offset != state_written_offset || saved.line_no != state_written_line) {
        state_write(&saved); /* only when it moved: the watcher reads at every wakeup */
        state_written_offset = saved.offset;
        state_written_line = saved.line_no;
    }
}

static void watch_markers(void)
{
    if (!ps_cfg.markers[0])
        return;
    int fd = open(ps_cfg.markers, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        ps_log("cannot create the markers file %s: %s; no phases from the file", ps_cfg.markers, strerror(errno));
        return;
    }
    ps_real_close(fd);
    if (inotify_fd < 0) {
        int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (in < 0) {
            ps_log("inotify unavailable (%s): markers polled every 2 ms", strerror(errno));
            return;
        }
        inotify_fd = clock_move_fd_high(in);
        if (inotify_fd < 0) {
            ps_log("inotify's descriptor was taken by the target: markers polled every 2 ms");
            return;
        }
        fds_mark(inotify_fd, 1);
    }
    if (inotify_add_watch(inotify_fd, ps_cfg.markers, IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB) < 0)
        ps_log("cannot watch %s: %s; markers polled", ps_cfg.markers, strerror(errno));
    else
        markers_watched = 1;
}

static void write_counters_line(void)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return;
    uint64_t t = ps_now_ns();
    cJSON_AddNumberToObject(o, "t_ns", (double)t);
    pid_t pids[256];
    int n = ps_run_pids(pids, 256);
    counters_add_json(o, pids, n);
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!text)
        return;
    counterlog_add(text, t); /* written with the next lines, in one append (counterlog.c) */
    cJSON_free(text);
}

/* The watcher's last reads (the markers written up to now, a last counters line): once, when
 * it is stopped, on the watcher itself. */
static _Atomic int watcher_final_done;

static void watcher_final(void)
{
    if (atomic_exchange(&watcher_final_done, 1))
        return;
    if (!fds_io_enter()) {
        counterlog_flush_signal_safe(); /* the lines read before the filter, to the kept file */
        return; /* a filter on every thread may forbid the opens these need */
    }
    read_markers();
    if (ps_cfg.counter_ms > 0)
        write_counters_line();
    counterlog_flush();
    fds_io_leave();
}

static int watcher_cred_slot = -1; /* credsync.c: the watcher's slot */
static _Atomic int watcher_pausing; /* stopped to be started again: no last reads (leader_stop) */

static void *watcher_main(void *arg)
{
    (void)arg; /* every signal blocked from the start (ps_start_shim_thread) */
    ps_guard_enter();
    ps_shim_thread = 1;
    lifetime_shim_thread(1);
    credsync_serve(&watcher_cred_slot); /* before the /proc scan, which may take a while */
    /* meta.json's machine scan reads all of /proc: on this thread, not the target's. Under a
     * seccomp filter on every thread the markers and counters stop (they open files): the
     * watcher then only waits to end with the run. */
    if (fds_io_enter()) {
        if (owns_meta)
            meta_complete();
        counters_open();
        watch_markers();
        read_markers();
        fds_io_leave();
    }
    uint64_t next_counters = ps_now_ns(), markers_read_ns = ps_now_ns();
    while (!atomic_load(&watcher_stop)) {
        credsync_serve(&watcher_cred_slot); /* one posted before this thread ran */
        /* Nothing to wait for but the markers file: inotify wakes us when it changes (a
         * second's timeout is the backstop); without a watch on it (the file does not exist
         * yet) it is read every 250 ms. The counters' own period, a user setting, comes on top. */
        int timeout = ps_cfg.markers[0] && !markers_watched ? 250 : 1000;
        int io = fds_io_enter();
        int period = timeout;
        if (ps_cfg.counter_ms > 0 && io) {
            uint64_t now = ps_now_ns();
            if (now >= next_counters) {
                write_counters_line();
                next_counters = now + (uint64_t)ps_cfg.counter_ms * 1000000ull;
            }
            int left = (int)((next_counters - now) / 1000000ull);
            if (left < timeout)
                timeout = left < 1 ? 1 : left;
            if (ps_cfg.counter_ms < period)
                period = ps_cfg.counter_ms;
        }
        if (ps_cfg.markers[0] && inotify_fd < 0 && io)
            timeout = period = 2; /* no inotify: poll the file */
        if (io)
            fds_io_leave(); /* never held across the wait */
        /* The writer's pass when it is due before this thread's next wakeup (writer.c). */
        atomic_store(&watcher_period_ms, period);
        writer_host_pass(timeout);
        timeout = (int)lifetime_period_ms(timeout);
        struct pollfd p[2] = { { .fd = wake_fd, .events = POLLIN }, { .fd = inotify_fd, .events = POLLIN } };
        shimopen_settle(); /* no number of the shim's held across the wait */
        int r = poll(p, inotify_fd >= 0 ? 2 : 1, timeout);
        credsync_serve(&watcher_cred_slot); /* a credential call of the target's, made here too */
        int event = 0;
        if (r > 0 && (p[0].revents & POLLIN)) {
            uint64_t v;
            if (read(wake_fd, &v, sizeof v) < 0) { /* a wake-up: nothing to read */ }
            event = 1;
        }
        if (r > 0 && (p[1].revents & POLLIN)) {
            char ev[4096];
            while (read(inotify_fd, ev, sizeof ev) > 0)
                ;
            event = 1;
        }
        /* The markers file when inotify says it changed (or a wake asks), when it is not
         * watched, and once a second all the same (a file replaced under its watch): not at
         * every counter read, which would open it ten times a second for nothing. */
        uint64_t now = ps_now_ns();
        if (ps_cfg.markers[0] && (event || !markers_watched || now - markers_read_ns >= 1000000000ull) && fds_io_enter()) {
            read_markers();
            markers_read_ns = now;
            fds_io_leave();
        }
        atomic_fetch_add(&watcher_passes, 1);
        meta_own_thread_cpu_due(META_OWN_WATCHER);
        if (lifetime_check())
            break; /* the target's threads are all gone and the run is finished */
    }
    atomic_store(&watcher_period_ms, 0);
    credsync_thread_end(&watcher_cred_slot);
    writer_rehost(); /* the writer's passes go back to its own timer */
    if (!atomic_load(&watcher_pausing))
        watcher_final();
    meta_own_thread_ended(META_OWN_WATCHER);
    lifetime_shim_thread(-1);
    return NULL;
}

/* Wakes the watcher from its wait, running or about to (credsync.c). Async-signal-safe. */
void leader_poke(void)
{
    if (wake_fd >= 0) {
        int saved = errno;
        uint64_t one = 1;
        if (write(wake_fd, &one, sizeof one) < 0) { /* it wakes on its timeout instead */ }
        errno = saved;
    }
}

/* Wakes the watcher for a pass now (lifetime.c). The eventfd write is async-signal-safe. */
void leader_wake(void)
{
    if (watcher_running && wake_fd >= 0) {
        uint64_t one = 1;
        if (write(wake_fd, &one, sizeof one) < 0) { /* it wakes on its timeout instead */ }
    }
}

static void become_leader(void)
{
    atomic_store(&is_leader, 1);
    if (wake_fd < 0) {
        int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (fd >= 0) {
            wake_fd = clock_move_fd_high(fd);
            if (wake_fd >= 0)
                fds_mark(wake_fd, 1);
        }
    }
    atomic_store(&watcher_stop, 0);
    atomic_store(&watcher_final_done, 0);
    credsync_thread_start(&watcher_cred_slot);
    int rc = ps_start_shim_thread(&watcher, watcher_main);
    credsync_thread_created(&watcher_cred_slot, rc == 0);
    if (rc == 0) {
        watcher_running = 1;
    } else {
        ps_log("cannot start the markers watcher thread: no phases from the markers file");
    }
}

/* takeover: a process of this run taking over from a leader that exited; it always resumes
 * where that leader stopped. Only the process that starts the run (runid.c's verdict) begins
 * the state anew. */
static int lock_leader(int takeover)
{
    if (flock(lock_fd, LOCK_EX | LOCK_NB) != 0)
        return 0;
    state_read(&state);
    if (state.first_pid == (long)getpid()) {
        owns_meta = 1; /* our own earlier image, before an exec: carry on */
    } else if (!takeover && runid_is_new()) {
        /* A new run: start from the top of the markers file. */
        memset(&state, 0, sizeof state);
        state.first_pid = getpid();
        state.t0 = ps_start_ns;
        owns_meta = 1;
    }
    if (!state.run_id[0])
        snprintf(state.run_id, sizeof state.run_id, "%s", runid_get());
    state_write(&state);
    state_written_offset = state_written_line = -1; /* the next read writes it again */
    line_start = state.offset;
    return 1;
}

uint64_t leader_run_start_ns(void)
{
    return state.t0 ? state.t0 : ps_start_ns;
}

int leader_folder_state(char *run_id, size_t size, int *lock_held)
{
    char path[PATH_MAX], buf[256];
    ps_path(path, sizeof path, RUN_LEADER_LOCK);
    *lock_held = 0;
    if (size)
        run_id[0] = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
    if (fd < 0)
        return 0;
    /* A shared lock is refused while the leader holds its exclusive one; ours is dropped at once. */
    if (flock(fd, LOCK_SH | LOCK_NB) != 0)
        *lock_held = errno == EWOULDBLOCK;
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    ps_real_close(fd);
    if (n > 0) {
        buf[n] = 0;
        struct leader_state s;
        state_parse(buf, &s);
        safefmt_join(run_id, size, s.run_id, NULL, NULL);
    }
    return 1;
}

int leader_start(void)
{
    char path[PATH_MAX];
    ps_path(path, sizeof path, RUN_LEADER_LOCK);
    int fd = fds_run_plain_file(open(path, O_RDWR | O_CREAT | O_CLOEXEC | fds_run_shared_flags(), 0644));
    fds_run_share_fd(fd, 0644);
    if (fd < 0) {
        ps_log("cannot open %s: %s; this process will not lead", path, strerror(errno));
        return 0;
    }
    lock_fd = clock_move_fd_high(fd);
    if (lock_fd < 0) {
        ps_log("the descriptor of %s was taken by the target: this process will not lead", path);
        return 0;
    }
    fds_mark(lock_fd, 1);
    if (!lock_leader(0))
        return 0;
    /* meta.json at once, on this thread: the process may end before the watcher runs. */
    if (owns_meta)
        meta_write_start();
    become_leader();
    return 1;
}

void leader_try_takeover(void)
{
    if (lock_fd < 0 || atomic_load(&is_leader))
        return;
    if (lock_leader(1)) {
        ps_log("process %d takes over as the run's leader", (int)getpid());
        if (owns_meta && !meta_written())
            meta_write_start();
        become_leader();
    }
}

void leader_resume(void)
{
    if (atomic_load(&is_leader) && !watcher_running)
        become_leader();
}

int leader_stop(int pause)
{
    if (!watcher_running)
        return 0;
    atomic_store(&watcher_pausing, pause);
    atomic_store(&watcher_stop, 1);
    if (pthread_equal(watcher, pthread_self())) {
        /* The run ends on the watcher itself (the target's last thread gone, lifetime.c): its
         * last reads now, before the counters close. */
        watcher_final();
        watcher_running = 0;
        return 0;
    }
    if (wake_fd >= 0) {
        uint64_t one = 1;
        if (write(wake_fd, &one, sizeof one) < 0) { /* it wakes on its timeout instead */ }
    }
    if (!ps_join_shim_thread(watcher, "watcher"))
        return 0; /* still there, asked to stop: still running as far as a restart goes */
    watcher_running = 0;
    return 1;
}

void leader_forget_after_fork(void)
{
    /* The lock belongs to the open file description we share with the parent: closing our
     * descriptor does not release it, and keeps the child a follower. */
    if (lock_fd >= 0) {
        fds_mark(lock_fd, 0);
        ps_real_close(lock_fd);
        lock_fd = -1;
    }
    int *ours[] = { &inotify_fd, &wake_fd };
    for (size_t i = 0; i < 2; i++) {
        if (*ours[i] < 0)
            continue;
        fds_mark(*ours[i], 0);
        ps_real_close(*ours[i]);
        *ours[i] = -1;
    }
    watcher_running = 0;
    atomic_store(&watcher_period_ms, 0);
    counterlog_after_fork();
    markers_watched = 0;
    state_written_offset = state_written_line = -1;
    atomic_store(&watcher_passes, 0);
    owns_meta = 0;
    atomic_store(&is_leader, 0);
    partial_len = 0;
    partial_overlong = 0;
}

long leader_host_period_ms(void)
{
    return watcher_running && !atomic_load(&watcher_stop) ? atomic_load(&watcher_period_ms) : 0;
}

uint64_t leader_pass_count(void)
{
    return atomic_load(&watcher_passes);
}

int leader_owns_meta(void)
{
    return owns_meta;
}

int leader_is_us(void)
{
    return atomic_load(&is_leader);
}

/* The target wants fd (dup2 onto it): if it is one of ours, ours moves to another number first
 * (dup2 itself closes the old one). Where no number above it is free (a target that dup2s onto
 * every number up to its limit), ours is given up instead: the number is the target's, and
 * nothing of the shim's may read, write or close it after the dup2 (an eventfd wake-up written
 * into the target's file, the leader's state into its stdout, its close refused). What that
 * costs is said once: without the lock the leadership is no longer held (the flock goes with the
 * description the dup2 closes), without the watch or the wake-up the watcher polls on its timeout. */
void leader_relocate_fd(int fd)
{
    int *holders[] = { &lock_fd, &inotify_fd, &wake_fd };
    static const char *const what[] = { "the leader's lock (another process of the run may take the lead)",
                                        "the markers watch (the markers file is read on the watcher's timeout)",
                                        "the watcher's wake-up (it stops on its timeout)" };
    for (size_t i = 0; i < 3; i++) {
        if (*holders[i] != fd)
            continue;
        int moved = fcntl(fd, F_DUPFD_CLOEXEC, fd + 1);
        if (moved >= 0)
            fds_mark(moved, 1);
        else
            ps_log("the target's dup2 onto descriptor %d found no free number above it to move %s to: given up", fd,
                   what[i]);
        *holders[i] = moved;
        fds_mark(fd, 0);
    }
}
