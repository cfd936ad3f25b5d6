/* meta.h: meta.json (docs/formats.md). The /proc scan runs on the watcher thread, never on the
 * target's; only meta_rewrite_status may be called from a signal handler. */
#ifndef PERFSCOPE_META_H
#define PERFSCOPE_META_H

void meta_write_start(void);
int meta_written(void);
void meta_write_exit(const char *status, double sampled_cpu_s);
/* Async-signal-safe: the last rendered meta.json with its status replaced. */
void meta_rewrite_status(const char *status);

#endif
