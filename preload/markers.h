/* markers.h: marker lines and phase boundaries (docs/formats.md). A bad line is logged and skipped:
 * nothing here may stop the target; never called from the signal handler. */
#ifndef PERFSCOPE_MARKERS_H
#define PERFSCOPE_MARKERS_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "markerline.h"

/* One line of the markers file (without its newline; parsed by markerline.c). read_ns: when
 * the leader read it. A t= that is not on the run's clock (ps_marker_t_on_run_clock) is logged
 * and the boundary taken at read_ns. Returns 1 for a boundary, 0 for a blank or comment line,
 * -1 for a bad line (logged). */
int markers_parse_line(const char *line, size_t len, long line_no, uint64_t read_ns);
/* Appends one boundary to phases.jsonl; takes ownership of attrs (the user's key=value pairs
 * only). t_from: "marker" (the line's t=), "read" (when the leader read it) or "api". */
void markers_record(uint64_t t_ns, const char *name, const char *event, cJSON *attrs,
                    const char *source, const char *t_from, long line_no, int with_counters);
/* In a fork child: the lock a parent thread may have held is free again. */
void markers_after_fork(void);
/* Appends obj as one line to <out>/<file>. */
void markers_append_jsonl(const char *file, cJSON *obj);
/* Appends text (one whole line, newline included, or a batch of whole lines) to the run's file
 * `file` in one write. */
void markers_append_line(const char *file, const char *text);

#endif
