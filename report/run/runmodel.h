/* runmodel.h: one run folder, read whole and worked out, before anything is printed or written:
 * the run's facts (meta, phases, samples, counter readings, log), the energy domains, the memory
 * peaks, and one result per phase group. run.c builds it; render.c, runjson.c and cmd_run.c
 * only read it, and must never work out a figure of their own. */
#ifndef PERFSCOPE_REPORT_RUNMODEL_H
#define PERFSCOPE_REPORT_RUNMODEL_H

#include <stddef.h>
#include <stdint.h>

#include "energy.h"
#include "phasegroups.h"
#include "llamabench.h"
#include "marginal.h"
#include "memory.h"
#include "hot.h"
#include "readings.h"
#include "summary.h"
#include "unsampledfile.h"

struct flame_set;

#define RUN_LOG_LINES 40
/* The serial mark's one rule (run_serial, run.c): one thread holds at least this share of the
 * group's wall AND at least this share of the CPU time (the group's, or a function's in it). */
#define SERIAL_SHARE 0.8

struct group_result {
    int g;                     /* group index in the phases */
    const char *name;
    struct group_basic b;
    uint64_t samples;
    double cpu_s, cores;       /* cpu_known only */
    int cpu_known;
    struct genergy *dom;       /* [energy.nd] */
    struct genergy total;      /* over the added domains; valid when have_total */
    int have_total;
    double gpu_above_mib, host_kib;
    int have_gpu, have_host;   /* the readings that gave each peak, over the occurrences; 0: none */
    int host_periodic;         /* of have_host, the periodic ones (inside, not at a boundary) */
    const struct hot_group *prof;
    double busiest_share;      /* busiest thread's CPU over the wall, < 0 unknown */
    double busiest_cpu_share;  /* busiest thread's CPU over the group's CPU, < 0 unknown */
    int serial;                /* run_serial of the busiest thread: 1, 0, -1 unknown */
};

struct run_model {
    const char *dir;
    struct run_summary s;      /* meta, phases, sample files, log (summary.h loaders) */
    struct readings *rd;
    struct energy en;
    struct memory mem;
    struct group_index gi;
    struct group_result *gr;
    size_t ngr, groups_hidden;
    uint64_t none_samples;     /* samples outside every phase */
    double none_cpu_s;
    struct hot_profile *prof;
    char prof_note[600];       /* why there are no hot functions, or a caveat */
    struct flame_set *flame;   /* flame.json (report/html/flametree.h); NULL: none */
    char flame_note[300];      /* why there is none */
    struct llamabench lb;
    int have_lb;
    struct unsampled un;       /* CPU time no sample stands for (unsampled.jsonl) */
    char status[96];
    int perturbed;
    int hz;                    /* asked sampling rate, -1 unknown */
    uint64_t samples, dropped;
};

/* The serial rule: one thread's share of the group's wall and its share of the CPU time (the
 * group's, or a function's in it), 0..1: 1 when both are at least SERIAL_SHARE, 0 when not, -1
 * when either is unknown (negative). */
int run_serial(double wall_share, double cpu_share);
/* A hot-function row's busiest thread as a percentage of the group's wall (the symbolizer's
 * pct_of_wall_on_busiest_thread, else busiest_thread_s over wall_s), < 0 unknown; and its
 * serial mark (run_serial, the CPU share over the row's own CPU s; -1 unknown). */
double run_row_pct_wall(const struct hot_row *r, double wall_s);
int run_row_serial(const struct hot_row *r, double wall_s);

/* Reads and works out dir. symbolize: run perfscope-symbolize when profile.json is missing or
 * stale. 0, or -1 with one line ("<file>: <what>") in err. */
int run_model_load(const char *dir, int symbolize, struct run_model *m, char *err, size_t errlen);
void run_model_free(struct run_model *m);

/* run.json of the model (runjson.c); NULL when out of memory. */
struct cJSON;
struct cJSON *run_json(const struct run_model *m);

/* The report as markdown (render.c), in a new buffer; NULL when out of memory. */
char *run_markdown(const struct run_model *m);
/* The shim's own threads' cost as one plain sentence (render.c), appended to b; nothing when
 * meta.json has no figure. */
struct sbuf;
/* The run's command as meta.json gives it: each of its first 32 words after a space, " ..."
 * past them; raw, for the caller to clean or escape (render.c). 0 when meta.json has none. */
int run_command_text(struct sbuf *b, const struct run_model *m);
void run_shim_cost(struct sbuf *b, const struct run_model *m);
/* The run's facts under its title and command, each line handed to emit (no newline, no
 * markup): its status, what was not measured, the sampling, the rate delivered, the shim's own
 * cost (run_shim_cost), the unsampled CPU and the machine before it. The one wording of them,
 * for this report's list and report.html's header. */
void run_header_facts(struct sbuf *b, const struct run_model *m, void (*emit)(struct sbuf *b, const char *line));
/* The CPU column's head: "CPU s (user)" with the perf clock, "CPU s (user+sys)" with the tick
 * timer, which time the samples stand for (runmeta_cpu_counts); "CPU s" when unknown. */
const char *run_cpu_header(const struct run_model *m);
/* The groups whose host memory peak rests on under MEMORY_FEW_READINGS periodic readings an
 * occurrence (those at its boundaries come before the work allocates or after it frees),
 * and what that peak then is: one sentence, no markup; nothing when there are none. The one
 * wording of it, for this report and report.html. */
#define MEMORY_FEW_READINGS 3
void run_memory_few_readings(struct sbuf *b, const struct run_model *m);
/* The groups whose CPU rests on under CPU_FEW_SAMPLES samples: a group's CPU is its samples over
 * the rate, uncertain by about one over the square root of their count (50% at 4), so its cores
 * may even exceed the threads that ran it. One sentence, no markup; nothing when there are none.
 * The one wording of it, for this report and report.html. */
#define CPU_FEW_SAMPLES 10
void run_cpu_few_samples(struct sbuf *b, const struct run_model *m);
/* The groups that hold phases of other groups inside them, and which: a sample counts in the
 * innermost phase open at its time, so an outer group's CPU is only its own time outside them
 * ("request 2.0 s wall, 0.00 cores" around a busy prefill and decode). One sentence, no markup;
 * nothing when no phase is nested. The one wording of it, for this report and report.html. */
void run_nested_groups(struct sbuf *b, const struct run_model *m);
/* The printf format of a figure with precision to suit its size ("%.3f" from 1 to 10): the one
 * rule for the report's numbers, in the text and report.html. */
const char *run_num_fmt(double v);
/* A group's busiest thread: "Busiest thread: TID (NAME), X CPU s, Y% of the wall, Z% of the
 * group's CPU[: the group is serial on it]"; no markup; nothing when unknown. */
void run_busiest_line(struct sbuf *b, const struct group_result *g);
/* The Unsampled CPU section's parts, for this report and report.html: its opening sentence; the
 * threads shown (at most cap, the busiest first: their indices in order, their CPU summed into
 * shown_s) and the "N more threads" of the rest (nothing when none); the bad-lines sentence. */
#define RUN_UNSAMPLED_SHOWN 32
void run_unsampled_intro(struct sbuf *b, const struct run_model *m);
size_t run_unsampled_top(const struct unsampled *u, size_t *order, size_t cap, double *shown_s);
void run_unsampled_more(struct sbuf *b, const struct unsampled *u, size_t shown);
void run_unsampled_bad(struct sbuf *b, const struct unsampled *u);
/* perfscope.log's lines as the Log section shows them, each handed to emit (no newline, no
 * markup; control bytes cleaned): " [cut]" after a line cut short, "... N more lines" last. */
void run_log_lines(struct sbuf *b, const struct run_model *m, void (*emit)(struct sbuf *b, const char *line));
/* The legend of the hot tables' "serial" mark (SERIAL_SHARE), one sentence, no markup. */
void run_serial_legend(struct sbuf *b);
/* What the Log section says when perfscope.log has no line ("Empty.", or that there is none),
 * NULL when it has lines. */
const char *run_log_none(const struct run_model *m);
/* The report as one self-contained HTML page (html_run.c), in a new buffer; NULL when out of
 * memory. */
char *run_html(const struct run_model *m);
/* Its short form (the header and the phases table), for `perfscope record`. */
char *run_markdown_short(const struct run_model *m);

#endif
