/* record.h: the front door's own subcommands, `perfscope record` (record.c) and `perfscope
 * mark` (mark.c) (docs/record.md). Each takes argv after its name and returns the exit status;
 * neither may print on stdout (stdout is the recorded command's, or the caller's script's). */
#ifndef PERFSCOPE_REPORT_RECORD_H
#define PERFSCOPE_REPORT_RECORD_H

#define RECORD_USAGE "record [-o OUT] [-F HZ] [--clock perf|timer|auto] [--unwind libunwind|fp|kernel] " \
                     "[--no-report] -- CMD [ARG...]"
#define MARK_USAGE "mark NAME begin|end [key=value...] [--file F]"

/* The markers file a script names: LLMPERFSCOPE_MARKERS, else PERFSCOPE_MARKERS (the same
 * variable, the older name winning when both are set); NULL when neither is set or empty. */
const char *record_markers_env(void);

int cmd_record(int argc, char **argv);
int cmd_mark(int argc, char **argv);

#endif
