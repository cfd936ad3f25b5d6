/* meta.h: meta.json (docs/formats.md): written at start on the target's thread (so every run
 * folder has one), completed with the /proc scan on the watcher thread, never the target's;
 * rewritten at exit. Only meta_rewrite_status may be called from a signal handler. */
#ifndef PERFSCOPE_META_H
#define PERFSCOPE_META_H

#include <stdint.h>

/* At start (the process that owns the run's meta): all but the machine scan, written at once. */
void meta_write_start(void);
/* On the watcher thread, once: adds machine_before (the /proc scan) and writes again. */
void meta_complete(void);
int meta_written(void);
/* The normal way out: the exit figures, end_ns and the status. The sampled CPU time the rates
 * divide by leaves out the shim's own threads' (meta_own_thread_cpu). */
void meta_write_exit(const char *status);
/* From the shim's own threads (the writer, the watcher, the thread that loads libunwind), as
 * they go and at their end: their CPU time so far, which no sample stands for and which is the
 * shim's cost, not the target's. */
enum { META_OWN_WRITER, META_OWN_WATCHER, META_OWN_LOADER, META_OWN_THREADS };
void meta_own_thread_cpu(int which);
/* As the thread of that kind ends: its time is kept beside the next one's. */
void meta_own_thread_ended(int which);
/* The same at a wakeup: at most every 250 ms (getrusage is a system call, and every one counts
 * in a wakeup: docs/shim.md); the threads publish once more when they end. */
void meta_own_thread_cpu_due(int which);
/* libunwind could not be loaded after all (it is loaded at the first sample): sampling.unwind
 * says the unwinder now in force. */
void meta_note_unwind(void);
/* Async-signal-safe: the last rendered meta.json with the exit figures and the status. */
void meta_rewrite_status(const char *status);
/* Says in meta.json why the run's end may pass unseen ("end_unseen"). */
void meta_note_end_unseen(const char *why);
/* Before a seccomp filter: the file kept open and rewritten in place from now on (fds.c). */
void meta_keep_for_filter(void);
/* In a fork child: locks another thread held are free again; the CPU time baseline is zero. */
void meta_after_fork(void);

/* This image's sampling figures (the same definition as meta.json's, for every process's
 * procs.jsonl exit and exec lines: procs.c). The CPU times are this image's: since
 * meta_image_start, so an exec'd image does not count its predecessor's. Async-signal-safe. */
struct meta_image_figures {
    uint64_t samples, distinct_samples, samples_without_libunwind;
    double sampled_cpu_s, shim_threads_cpu_s, unsampled_cpu_s;
};
void meta_image_figures(struct meta_image_figures *out);
/* At the image's start: the process's CPU time so far (the previous image's, after an exec), left
 * out of this image's figures. */
void meta_image_start(void);

#endif
