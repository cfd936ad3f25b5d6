/* dump.h: `perfscope-report dump samples|maps|phases|run ...`: what the readers make of the run
 * folder's files, one fact a line, for tests and for looking inside a file (dump.c; `dump run`
 * in dump_run.c). Nothing under dump/ may write a file or judge what it prints. */
#ifndef PERFSCOPE_REPORT_DUMP_H
#define PERFSCOPE_REPORT_DUMP_H

/* perfscope-report dump samples|maps|phases FILE [...] | run DIR (argv after "dump"). */
int cmd_dump(int argc, char **argv);

/* perfscope-report dump run OUT: what the run recorded, section by section (run/summary.h). */
int dump_run(const char *dir);

#endif
