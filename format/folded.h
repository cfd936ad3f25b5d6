/* folded.h: the reader of a run folder's stacks.folded (written by the symbolizer,
 * symbolize/export_folded.c; docs/symbolize.md): one "group;root;...;leaf COUNT" line per
 * distinct (phase group, stack), frames outermost first, counts in samples. It hands each line
 * to the caller; it must never keep the file in memory and never accept a line it cannot read
 * whole: a line cut at FOLDED_MAX_LINE, without a count, with a NUL byte or with an empty frame
 * refuses the file with one line ("<path>: line N: <what>"). */
#ifndef PERFSCOPE_FOLDED_H
#define PERFSCOPE_FOLDED_H

#include <stddef.h>
#include <stdint.h>

#define FOLDED_MAX_LINE (1u << 20)
#define FOLDED_MAX_FRAMES 4096

/* One line: group (NUL-terminated), frames[0..nframes) (outermost first, NUL-terminated, inside
 * the line's buffer), count. The callback returns 0 to go on, -1 to stop (its own error, e.g.
 * out of memory, said by the caller). */
typedef int (*folded_line_fn)(void *ctx, const char *group, char *const *frames, size_t nframes,
                              uint64_t count);

/* Reads path: 0; 1 when the file does not exist; -1 with one line in err (or when fn stopped:
 * "<path>: stopped at line N" unless fn's caller says more). */
int folded_read(const char *path, folded_line_fn fn, void *ctx, char *err, size_t errlen);

#endif
