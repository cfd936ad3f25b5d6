/* writer.h: sample files, maps snapshots and the writer thread. The sample file's descriptor
 * is kept (high, marked as the shim's, its identity checked before every write); the other
 * files are opened by path for each write. writer_flush(1), the fatal path's, allocates nothing
 * and waits a bounded time. */
#ifndef PERFSCOPE_WRITER_H
#define PERFSCOPE_WRITER_H

#include <limits.h>
#include <stdint.h>

extern char ps_bin_path[PATH_MAX];
extern char ps_maps_path[PATH_MAX];

/* Names this image's cpuprof.<pid>[.<n>].bin (never an existing name) and its .maps; they are
 * created at the first write of a sample (a process that takes none leaves no file). */
int writer_open_files(void);
/* Creates them now, samples or not (before a seccomp filter forbids it later). */
void writer_make_files(void);
int writer_files_made(void);
/* Appends a '# t=' snapshot of /proc/self/maps if the mappings changed (once the files exist). */
void writer_maps_snapshot(uint64_t t_ns);
/* Drains all rings into the file now. from_signal: bounded wait, no /proc reads. */
void writer_flush(int from_signal);
/* The way out's last flush (exit, exec, _exit, a fatal signal): the same, then nothing more is
 * taken from the kernel's call-chain buffers (kchain_stop), so that the exit line and meta.json,
 * written after it, count what the file holds. */
void writer_flush_last(int from_signal);
/* A snapshot for a library loaded since the writer's last pass (exit, exec, before dlclose). */
void writer_maps_catch_up(void);
/* The way out (exit, exec) has begun, after the writer stopped: the maps snapshots from here on
 * (the catch-up, the files made by the last flush) are copied through the stack, nothing
 * allocated. An exec may come from a signal handler that interrupted malloc (execve is
 * async-signal-safe), where a malloc on this thread waits forever for its own lock. */
void writer_way_out(void);
int writer_start(void);
/* Stops the writer thread; 1 when it was joined (0: none, this is the writer itself, or it did
 * not end within 2 s: then it is left running, asked to stop). */
int writer_stop(void);
/* A pass now, not at the end of the period (never from a signal handler). */
void writer_wake(void);
/* Wakes the writer from its wait, no pass asked (credsync.c). Async-signal-safe. */
void writer_poke(void);
void writer_forget_after_fork(void);
/* The target is about to dup2 onto fd (fds.c): if it is the sample file's kept descriptor, it is
 * forgotten first (the writer opens the file again by path), never written after. */
void writer_forget_fd(int fd);
/* From the SIGPROF handler after each sample: wakes a writer sleeping its idle period. */
void writer_note_sample(void);
/* From the SIGPROF handler, once an image: a sample had to walk frame pointers because libunwind
 * is not loaded yet; the writer passes now, which starts the load. Async-signal-safe. */
void writer_wake_for_unwinder(void);
/* The writer's passes so far on its own thread (its wakeups: meta.json's shim cost). */
uint64_t writer_pass_count(void);
/* Passes the leader's watcher ran for the writer at its own wakeups (no wakeup of their own). */
uint64_t writer_hosted_pass_count(void);
/* From the leader's watcher at each of its wakeups; period_ms: how long until its next one. Runs
 * the writer's pass when it is due before then and the writer sleeps hosted (writer.c). */
void writer_host_pass(long period_ms);
/* The watcher stops running the writer's passes: the writer goes back to its own timer. */
void writer_rehost(void);
int writer_lock_for(int ms);
/* At a thread's end, after its last sample and while its slot is still its own (threads.c): its
 * ring, when empty, goes back for the next thread at once instead of at the next pass; left to
 * the pass when a drain is under way. Not from a signal handler. */
struct ps_thread;
void writer_ring_handback(struct ps_thread *t);
void writer_unlock(void);
uint64_t writer_records(void);
int writer_files_ok(void);

#endif
