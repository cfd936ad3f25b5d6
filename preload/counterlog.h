/* counterlog.h: counters.jsonl's lines on their way to the file, written in batches (counterlog.c).
 * Only the leader's watcher adds lines; counterlog_flush_signal_safe is the way out's. */
#ifndef PERFSCOPE_COUNTERLOG_H
#define PERFSCOPE_COUNTERLOG_H

#include <stdint.h>

/* One line (its text without the newline), read at read_ns: kept, and the batch written when it
 * is due (the first line at once, then every COUNTERLOG_WRITE_MS), full, or the line too big. */
void counterlog_add(const char *line, uint64_t read_ns);
/* Writes the lines kept so far (the watcher, when it stops). */
void counterlog_flush(void);
/* The same from the way out that may be a signal handler (_exit, fatal signals): no allocation,
 * no lock; a batch the watcher is touching at that moment is left (at most its last 250 ms). */
void counterlog_flush_signal_safe(void);
/* The target is about to dup2 onto fd (fds.c): the kept descriptor of counters.jsonl, if it is
 * that number, is forgotten first (the next batch opens the file again). */
void counterlog_forget_fd(int fd);
/* In a fork child: the parent's lines are the parent's. */
void counterlog_after_fork(void);

#endif
