/* markerline.h: one line of the markers file parsed (the marker protocol, docs/formats.md), and the
 * rule that tells a t= on the run's CLOCK_MONOTONIC from one that is not. Pure functions: no
 * I/O, no globals, no allocation, no locale, the line never written to; so the shim's leader
 * (markers.c) and a fuzz harness call the same code, on lines any script may write. What a
 * parsed line becomes (phases.jsonl, the log) is markers.c's. */
#ifndef PERFSCOPE_MARKERLINE_H
#define PERFSCOPE_MARKERLINE_H

#include <stddef.h>
#include <stdint.h>

#define PS_MARKER_NAME_MAX 64    /* a phase name or attribute key: 1..64 bytes of [A-Za-z0-9_.-] */
#define PS_MARKER_LINE_MAX 4096  /* longer lines are cut here (and the cut said) */
/* "k=v " is 4 bytes: a line of PS_MARKER_LINE_MAX bytes cannot hold more attributes. */
#define PS_MARKER_ATTRS_MAX (PS_MARKER_LINE_MAX / 4 + 1)
/* A t= more than this before the run started, or after the line was read, is not on the run's
 * CLOCK_MONOTONIC (a wall clock such as `date +%s%N`, or seconds): the minute of docs/formats.md. */
#define PS_MARKER_CLOCK_SLACK_NS 60000000000ull

/* Bytes of the parsed line (not NUL terminated). */
struct ps_mspan {
    const char *p;
    size_t len;
};

struct ps_marker_attr {
    struct ps_mspan key, value;
};

enum ps_marker_error {
    PS_MARKER_OK = 0,
    PS_MARKER_BAD_NAME,    /* bad: the phase name */
    PS_MARKER_BAD_EVENT,   /* bad: the name (the word after it is not begin or end) */
    PS_MARKER_BAD_ATTR,    /* bad: the word that is not key=value */
    PS_MARKER_BAD_T,       /* bad: t='s value, not a whole number of ns */
    PS_MARKER_BAD_TOKENS,  /* bad: tokens='s value, not a count */
};

struct ps_marker {
    int cut;                       /* the line was longer than PS_MARKER_LINE_MAX: its first
                                    * PS_MARKER_LINE_MAX bytes were parsed */
    struct ps_mspan name;
    int end;                       /* 1: end, 0: begin */
    int has_t;                     /* t= given (the last one counts) */
    uint64_t t;
    /* Every key=value but t=, in line order (tokens= and via= included); a key given twice
     * appears twice, the last one counts. */
    size_t nattrs;
    struct ps_marker_attr attrs[PS_MARKER_ATTRS_MAX];
    enum ps_marker_error error;    /* with a bad line */
    struct ps_mspan bad;           /* the bytes the error names */
};

/* Parses the first len bytes of line (up to the first NUL byte in them; no newline expected).
 * Returns 1 for a boundary (*m filled), 0 for a blank or comment line, -1 for a bad line
 * (m->error and m->bad say why). The line is split on spaces and tabs; spaces, tabs and '\r'
 * at its ends are ignored. m->cut is set in every case. */
int ps_marker_parse(const char *line, size_t len, struct ps_marker *m);

/* Whether s[0..len) is a phase name (or an attribute key): 1..PS_MARKER_NAME_MAX bytes of
 * [A-Za-z0-9_.-]. */
int ps_marker_valid_name(const char *s, size_t len);

/* Whether a marker's t= can be a CLOCK_MONOTONIC time of this run: at most
 * PS_MARKER_CLOCK_SLACK_NS before run_start_ns and at most that after read_ns (when the line
 * was read; a line is written before it is read, the slack only forgives a clock read in
 * another time namespace). */
int ps_marker_t_on_run_clock(uint64_t t, uint64_t run_start_ns, uint64_t read_ns);

#endif
