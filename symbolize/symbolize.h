/* symbolize.h: the symbolizer as a library call, for perfscope-symbolize and perfscope-report
 * (which symbolizes a run folder when it has no profile.json yet). docs/symbolize.md.
 *
 * symbolize_run reads OUT (every cpuprof.*.bin with its .maps, phases.jsonl, meta.json,
 * procs.jsonl, counters.jsonl) and writes into OUT, each through a temporary name and a rename:
 *   profile.json    per phase group: samples, cpu_s, modules, self and inclusive rows, threads,
 *                   busiest_threads (the reference harness's table, and more: docs/symbolize.md)
 *   stacks.folded   "phase;root;...;leaf count" lines
 *   profile.pb.gz   pprof, with phase/pid/tid/thread labels
 *   trace.json      Chrome trace events: phases as spans, power and memory as counters
 * It never crashes on hostile input and never leaves a partial file under a real name. */
#ifndef PERFSCOPE_SYMBOLIZE_H
#define PERFSCOPE_SYMBOLIZE_H

#include <stddef.h>
#include <stdio.h>

#define SYMBOLIZE_OK 0
#define SYMBOLIZE_FAILED_WRITE 1 /* the input was fine, an output could not be written */
#define SYMBOLIZE_BAD_INPUT 2    /* nothing usable in the folder: err says what */

struct symbolize_opts {
    int top;            /* rows per self/inclusive table (0: 50) */
    int trust_modified; /* symbolize files modified since the run started (still flagged) */
    const char *symfs;  /* copies of the mapped files, looked at first (NULL: OUT/symfs if any) */
    FILE *log;          /* warnings, one line each (NULL: stderr) */
    const char *prog;   /* prefix of those lines (NULL: "perfscope-symbolize") */
    int progress_fd;    /* > 0: the progress line there when it is a terminal (progress.h) */
    int exiting;        /* the process ends right after: what the run holds (its tables, libdw's
                         * modules) is left to the exit, which takes it back at once (freeing
                         * it one block at a time was 0.8-1.0 ms, 4% of a 200k-sample run);
                         * ignored under AddressSanitizer, whose leak check must see it freed
                         * (valgrind's, or LeakSanitizer alone, would report it as left) */
};

/* What was done, for a caller that prints a summary. */
struct symbolize_result {
    unsigned long long samples, dropped, empty;
    size_t groups, images, modules, warnings;
    double seconds;     /* wall time spent */
};

/* Returns SYMBOLIZE_OK, or another SYMBOLIZE_* with a one-line message in err. res may be NULL. */
int symbolize_run(const char *dir, const struct symbolize_opts *opts, struct symbolize_result *res,
                  char *err, size_t errlen);

/* The command line (cmd.c): argv after the program's (or subcommand's) name; prog names the tool
 * in its lines ("perfscope-symbolize", "perfscope symbolize"). Returns the exit status. */
int symbolize_cmd(const char *prog, int argc, char **argv);

#endif
