/* phases.h: THE reader of phases.jsonl (docs/formats.md): marker boundaries into phase intervals,
 * shared by the symbolizer and the report. Never fatal on a bad line; never crashes on any input.
 *
 * A line: {"t_ns":N, "name":"prefill", "event":"begin"|"end", "source":"file"|"api",
 *          "attrs":{"tokens":"512", ...}, "counters":{...}}
 * t_ns and tokens may be JSON numbers or decimal strings.
 *
 * Rules chosen here:
 *   - boundaries are taken in time order (ties in file order); names must follow the markers'
 *     rule ([A-Za-z0-9_.-], 1..64 bytes), or the line is counted bad and skipped;
 *   - an end closes the most recent open phase of that name (so overlapping phases work too); an
 *     end with nothing open of its name is skipped and counted in unmatched_ends;
 *   - the innermost phase at time T is the most recently begun phase still open at T; a phase
 *     owns [begin, end); outside every phase the group is "(none)";
 *   - a phase begun and never ended is `open`: its end is the run's end, the last boundary by
 *     default, later if phases_close_open() is given a later time (the last sample's);
 *   - tokens of a phase: its end's tokens= attribute, else its begin's, else -1;
 *   - refused (phases_load returns -1): missing, unreadable or not a regular file, and a file
 *     whose non-blank lines are all bad (not a phases file). An empty file is a run without
 *     markers: zero phases. */
#ifndef PERFSCOPE_PHASES_H
#define PERFSCOPE_PHASES_H

#include <stddef.h>
#include <stdint.h>

#define PHASE_NAME_MAX 64
#define PHASES_NONE "(none)"
#define PHASE_ATTRS_MAX 16
#define PHASE_ATTR_BYTES 200

struct phase_boundary {
    uint64_t t_ns;
    char name[PHASE_NAME_MAX + 1];
    int begin;             /* 1: begin, 0: end */
    int matched;           /* an end that closed a phase (always 1 for a begin) */
    char source[8];        /* "file", "api", or "" when absent or unknown */
    long long tokens;      /* -1: none */
    size_t lineno;         /* line in phases.jsonl, to go back for its counters */
    char *attrs;           /* its attributes as "key=value\n" lines (PHASE_ATTRS_MAX at most,
                            * each cut to PHASE_ATTR_BYTES; a key with '=' or a control byte is
                            * left out, a value's control bytes become '?'), NULL: none */
};

struct phase {
    char name[PHASE_NAME_MAX + 1];
    int group;             /* index into phases.groups */
    uint64_t start_ns, end_ns;
    long long tokens;      /* -1: none */
    int open;              /* never ended: end_ns is the run's end */
    int parent;            /* the innermost phase open at its begin, -1 none */
    int depth;             /* phases open around it at its begin */
    const char *attrs;     /* its begin line's attributes (phase_boundary.attrs), NULL: none */
};

/* From start_ns until the next span's start, `phase` (an index, -1: none) is innermost. */
struct phase_span {
    uint64_t start_ns;
    int phase;
};

struct phases {
    struct phase_boundary *b;   /* sorted by time */
    size_t nb;
    struct phase *v;            /* in begin order */
    size_t n;
    struct phase_span *spans;
    size_t nspans;
    char (*groups)[PHASE_NAME_MAX + 1]; /* distinct names, in order of first begin */
    size_t ngroups;
    int *group_sorted;          /* private: group indexes in name order */
    size_t lines;               /* lines read */
    size_t bad_lines;           /* not JSON, not a boundary, bad name or event */
    size_t first_bad_line;
    size_t unmatched_ends;
    size_t unclosed;            /* phases begun and never ended */
};

/* Reads path into a new struct phases. Returns 0, or -1 with "<path>: <what>" in err. */
int phases_load(const char *path, struct phases **out, char *err, size_t errlen);

void phases_free(struct phases *p);

/* Moves the end of every open phase to end_ns when that is later (the run's last sample). */
void phases_close_open(struct phases *p, uint64_t end_ns);

/* Index of the innermost phase at t_ns, or -1 outside every phase. */
int phases_at(const struct phases *p, uint64_t t_ns);
/* The same, from where the last call with *hint found its answer (start *hint at 0): a time in
 * that span or the next is answered without a search, as samples in time order mostly are. */
int phases_at_hint(const struct phases *p, uint64_t t_ns, size_t *hint);

/* Name of the innermost phase's group at t_ns, or PHASES_NONE. */
const char *phases_group_at(const struct phases *p, uint64_t t_ns);

/* Index of the group named name, or -1. */
int phases_group_index(const struct phases *p, const char *name);

#endif
