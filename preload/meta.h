/* meta.h: meta.json (docs/formats.md). The /proc scan runs on the watcher thread, never on the
 * target's; only meta_rewrite_status may be called from a signal handler. */
#ifndef PERFSCOPE_META_H
#define PERFSCOPE_META_H

void meta_write_start(void);
int meta_written(void);
/* sampled_cpu_s: the process's CPU time the clock samples (user, or user and system); the shim's
 * own threads' part of it (meta_own_thread_cpu) is taken out. */
void meta_write_exit(const char *status, double sampled_cpu_s);
/* From the shim's own threads (0: writer, 1: watcher), as they go and at their end: their CPU
 * time so far, which no sample stands for and which is the shim's cost, not the target's. */
enum { META_OWN_WRITER, META_OWN_WATCHER, META_OWN_THREADS };
void meta_own_thread_cpu(int which);
/* Async-signal-safe: the last rendered meta.json with its status replaced. */
void meta_rewrite_status(const char *status);

#endif
